/*
 * mem-guard-internal.h - the memory limit of the commands that replay a
 * trace (check, slice). The engine's and the TSO pass's memory grows with
 * the touched footprint, which a trace decides: a dump whose addresses run
 * wild would grow until the kernel's OOM killer ends the replay (and maybe
 * its neighbours on a farm node) with no report. The replay loop instead
 * asks mguard_over every MGUARD_EVERY events and stops with a partial
 * report when the process's resident memory is over the limit.
 *
 * The limit is explicit (MiB, for each replay) or automatic: 3/4 of the
 * smaller of the machine's memory and the memory limit of the process's
 * cgroup (v2 or v1; what Slurm and containers set). The replays a `check
 * -j` runs at once hold the automatic limit together: each publishes its
 * resident size on a board the parent maps shared before it forks them,
 * so one replay may grow past an even share while the others leave room,
 * and only once their sum is over the limit do those above an even share
 * stop. A replay's outcome then does not depend on -j unless memory really
 * runs short. Reading the resident size is one pread of /proc/self/statm
 * (getrusage's peak where there is no /proc). No global state; never
 * prints or exits. Private to cmd/.
 */
#ifndef MSR_MEM_GUARD_INTERNAL_H
#define MSR_MEM_GUARD_INTERNAL_H

#include "trace.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Events between two looks at the resident size: a replay that turns a
 * fresh page of the memory image dense (32 KiB) every 16 events grows by
 * about 32 MiB in between. */
#define MGUARD_EVERY ((uint64_t)1 << 14)

/* The resident sizes of the replays running at once, one seat each, in a
 * MAP_SHARED mapping (made before the fork, so every child sees it). */
struct mguard_board {
	unsigned seats;
	_Atomic uint64_t used[]; /* bytes; 0 = empty seat */
};

/* A board of `seats` (>= 1) empty seats; NULL when it cannot be mapped. */
struct mguard_board *mguard_board_create(unsigned seats);
void mguard_board_destroy(struct mguard_board *b);
/* Empty a seat whose replay has ended (it may have died without a word). */
void mguard_board_clear(struct mguard_board *b, unsigned seat);

struct mguard {
	uint64_t limit;     /* bytes */
	int fd;             /* /proc/self/statm, -1 when not open */
	uint64_t page;      /* bytes per page */
	const char *knob;   /* what sets the limit; NULL = automatic */
	/* the automatic limit held with other replays: NULL = alone */
	struct mguard_board *board;
	unsigned seat;
	uint64_t others;    /* the others' sum at the last look */
};

/* Limit `mib` MiB for this replay, set by `knob` (e.g. "--max-memory"), or
 * the automatic one when 0, held together with the replays on `board`
 * (NULL = alone), where this one sits at `seat`. */
void mguard_init(struct mguard *g, uint64_t mib, struct mguard_board *board,
		 unsigned seat, const char *knob);
void mguard_close(struct mguard *g);

/* True when resident memory is over the limit; *used gets it in bytes
 * (0 when it cannot be read: then never over). On a board: publishes
 * *used in its seat, and is over when *used alone is, or when the sum of
 * all seats is and *used is above an even share of the limit. */
bool mguard_over(struct mguard *g, uint64_t *used);

/* The error of a replay of `trace` that mguard_over stopped after `events`
 * with `used` bytes resident: MSR_E_NOMEM, naming both and the limit. */
int mguard_error(const struct mguard *g, struct msr_error *err, const char *module,
		 const char *trace, uint64_t events, uint64_t used);

/* The automatic limit in bytes. */
uint64_t mguard_auto(void);

/* What the automatic limit reads, for the tests. mguard_cgroup_value: a
 * memory.max or memory.limit_in_bytes file's text in bytes, UINT64_MAX for
 * "max", a v1 "unlimited" (2^62 or more) or text it does not understand.
 * mguard_cgroup_limit: the smallest limit on the way from the process's
 * cgroup (`proc_cgroup`, the text of /proc/self/cgroup) up to the root of
 * the cgroup file system mounted at `root`, UINT64_MAX when none. */
uint64_t mguard_cgroup_value(const char *text);
uint64_t mguard_cgroup_limit(const char *proc_cgroup, const char *root);

#endif /* MSR_MEM_GUARD_INTERNAL_H */
