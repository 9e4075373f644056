/*
 * slice-internal.h - the pieces of `slice`: the replay pipeline it runs
 * several times (find the violation, find the cut points, write the slice,
 * re-check the slice: trace reader -> engine (+ step log) -> TSO pass, with
 * hooks), the state of one run, and small helpers.
 *
 * The pipeline only wires modules together; it never decides what to keep.
 */
#ifndef MSR_SLICE_INTERNAL_H
#define MSR_SLICE_INTERNAL_H

#include "cmd.h"
#include "checker.h"
#include "engine.h"
#include "mem-guard-internal.h"

#include <stdio.h>

struct msr_slice_opts;

struct msr_slice_pipe {
	struct msr_config cfg;
	bool cfg_loaded;
	struct msr_trace_reader *rd;
	struct msr_steplog *log;
	struct msr_engine *eng;
	struct msr_tso *tso;
	/* set before open: decompress zstd inputs on helper threads */
	bool ahead;
	/* hooks (any may be NULL), called with `ctx` */
	void *ctx;
	void (*on_violation)(void *ctx, const struct msr_violation *v);
	void (*on_commit)(void *ctx, const struct msr_commit *c);
	/* a step-log line handed to the engine for an SSTEP of its strand */
	void (*on_step)(void *ctx, const struct msr_step *step);
	/* --max-memory, else limits.max_memory, else automatic; once open */
	struct mguard guard;
	bool guarded;
	uint64_t applied;
	const char *trace;
};

/*
 * Open trace (+ steps, image; either may be NULL) and build the pipeline
 * with the run's configuration and memory limit from `o`. The hooks in *p
 * must be set before the call.
 */
int msr_slice_pipe_open(struct msr_slice_pipe *p, const char *trace,
			const char *steps, const struct msr_slice_opts *o,
			const char *image, struct msr_error *err);

/* Read the next event into *ev without applying it: MSR_OK, MSR_END or <0. */
int msr_slice_pipe_read(struct msr_slice_pipe *p, struct msr_event *ev,
			struct msr_error *err);

/* Apply an event read by msr_slice_pipe_read; MSR_E_NOMEM when the
 * process is over its memory limit. */
int msr_slice_pipe_apply(struct msr_slice_pipe *p, const struct msr_event *ev,
			 struct msr_error *err);

/* End of input: engine leftovers (when `complete`) and the TSO pass. */
int msr_slice_pipe_finish(struct msr_slice_pipe *p, bool complete,
			  struct msr_error *err);

void msr_slice_pipe_close(struct msr_slice_pipe *p);

/* Open-addressing set of 8-byte blocks: pa8 -> last event index touching it */
struct msr_slice_blocks {
	uint64_t *key;  /* pa8 + 1; 0 = empty */
	uint64_t *last;
	size_t cap, n;
};

/* Add pa8 with event index idx (keeps the largest index per block). */
int msr_slice_blocks_put(struct msr_slice_blocks *b, uint64_t pa8, uint64_t idx);
/* Largest index recorded for pa8, UINT64_MAX when never recorded. */
uint64_t msr_slice_blocks_last(const struct msr_slice_blocks *b, uint64_t pa8);

/* Append v to the growable array *a (n used, cap allocated). */
int msr_slice_push_u64(uint64_t **a, size_t *n, size_t *cap, uint64_t v);

/*
 * The fingerprint of violation `vid` ("V3") in check's YAML report
 * `report`, into fp. MSR_E_USAGE when the report has no such violation.
 */
int msr_slice_report_lookup(const char *report, const char *vid, char fp[17],
			    struct msr_error *err);

/* ------------------------------------------------------------------------ */
/* The state of one slice run (cmd_slice.c, slice_cut.c)                     */
/* ------------------------------------------------------------------------ */

struct msr_slice_opts {
	const char *trace, *steps, *config, *image, *report, *outdir;
	const char *vid;     /* "V3" */
	char fp[17];
	bool by_fp;
	uint64_t vnum;
	uint64_t lookback;
	bool shrink;
	double shrink_time;  /* seconds */
	bool quiet;
	bool single_thread;  /* no helper threads for the passes over TRACE */
	bool no_huge_pages;  /* transparent huge pages off (msr_cli_no_huge_pages) */
	bool has_max_memory; /* --max-memory given: overrides the configuration */
	uint64_t max_memory; /* MiB, 0 = automatic */
};

#define SL_HITS 32      /* recent L1-hit loads remembered per strand */
#define SL_TAIL_MAX 20000 /* events after the end to look for answers */

/* An L1-hit LD_DATA and the LD_FILL that brought its line. */
struct msr_slice_hit {
	uint64_t index, pa, fill_index;
	unsigned fill_strand;
};

/* A commit of a kept strand still awaiting ST_INV/ST_UPDATE answers. */
struct msr_slice_answer {
	uint64_t line;
	uint64_t commit_index;
	uint32_t await;
	uint8_t tnum;
	bool before_end; /* committed before Q: its answers go into the slice */
};

struct msr_slice_run {
	struct msr_slice_opts *o;
	/* pass 1 */
	uint64_t nviol;
	bool found;
	struct msr_violation v;
	uint64_t instr_event;       /* SSTEP of the violation's instruction */
	/* who filled each core's L1 lines, and recent L1 hits */
	struct msr_slice_blocks fills;     /* core << 48 | line -> index << 8 | strand */
	struct msr_slice_hit hits[MSR_MAX_STRANDS][SL_HITS];
	unsigned nhits[MSR_MAX_STRANDS];
	unsigned tpc;               /* threads per core */
	unsigned banks;             /* L2 banks */
	bool wide;                  /* second attempt: no --lookback limits */
	bool banned[MSR_MAX_STRANDS]; /* --shrink: strands left out on purpose */
	unsigned nbanned;
	/* everything from here on is per attempt (see reset_attempt) */
	/* involved strands and range */
	bool inv[MSR_MAX_STRANDS];
	unsigned nstrands;
	uint64_t first_rel, last_rel;
	/* pass 2 */
	struct msr_slice_blocks blk;
	uint64_t P, Q, total;       /* window of the whole slice [P, Q) */
	uint64_t Pt[MSR_MAX_STRANDS], Qt[MSR_MAX_STRANDS]; /* per kept strand */
	bool qdone[MSR_MAX_STRANDS];
	struct msr_slice_answer *ans;      /* commits of kept strands awaiting answers */
	size_t nans, capans;
	uint64_t answer_of;         /* commit the last tracked answer belongs to */
	uint64_t *tail;             /* answers after Q that the slice keeps */
	size_t ntail, captail;
	/* pass 3 */
	uint64_t cur;               /* index of the event being applied */
	uint64_t base[MSR_MAX_STRANDS];  /* SSTEPs of a strand before P */
	FILE *steps;
	bool want_slam;
	struct msr_event slam;
	uint64_t *map;              /* original index of each slice event */
	size_t nmap, capmap;
	uint64_t slams, dma_slams, inv_evicts, dropped, unknown_blocks, image_blocks;
	/* pass 4 */
	bool reproduced;
	uint64_t sviol, sviol_kind[MSR_V_COUNT];
	struct msr_violation rv;
	/* --shrink over instructions (slice_shrink.c) */
	bool shrunk, shrink_fixpoint;
	size_t shrink_events_before, shrink_units;
	uint64_t shrink_instr_removed[MSR_MAX_STRANDS], shrink_other_removed;
	uint64_t shrink_rounds;
	double shrink_seconds;
};

/* Whether block pa8 is touched by a kept strand inside the slice. */
bool msr_slice_in_window_block(const struct msr_slice_run *s, uint64_t pa8);
/* Note that [pa, pa+len) was touched at event idx. */
int msr_slice_touch_range(struct msr_slice_run *s, uint64_t pa, unsigned len,
			  uint64_t idx);
/* Whether event i of strand t lies in that strand's part of the slice. */
bool msr_slice_in_strand_window(const struct msr_slice_run *s, unsigned t, uint64_t i);
/*
 * Follow the answers to the kept strands' commits (call with every event of
 * a kept strand, in order). Sets s->answer_of to the index of the commit
 * `ev` answers (UINT64_MAX: none) and *keep when it answers a commit made
 * before its strand's end while the strand has ended.
 */
int msr_slice_track_answers(struct msr_slice_run *s, const struct msr_event *ev,
			    bool *keep);
/* Pass 2: cut points, touched blocks, answers kept after a strand's end. */
int msr_slice_pass_cut(struct msr_slice_run *s, struct msr_error *err);

/*
 * --shrink: leave whole instructions (and events of no instruction) out of
 * the slice written in s->o->outdir, until none can go without losing the
 * violation or the monotonic clock passes `end`; rewrites the slice, the
 * event map and the check results in *s.
 */
int msr_slice_shrink_instructions(struct msr_slice_run *s, double end,
				  struct msr_error *err);

/* Format one step-log line (trace-format.md section 3), newline included. */
size_t msr_slice_step_format(const struct msr_step *s, char *buf, size_t size);

#endif /* MSR_SLICE_INTERNAL_H */
