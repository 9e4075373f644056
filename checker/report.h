/*
 * report.h - the violation report: collects what the engine and the TSO
 * pass find, and writes it as one YAML document (PRODUCT.md "The violation
 * report").
 *
 * Contract: the collector takes violations as they arrive (in the order
 * found), gives each a stable fingerprint, matches it against the
 * configuration's waivers, applies the report filters (strands, cycles,
 * addresses: filtered-out violations are counted, never shown), merges
 * repeats of a fingerprint into one entry with a count, numbers the entries
 * V1, V2, ... (waived ones W1, W2, ... in their own list), keeps at most
 * `max_violations` entries per list (all are counted) and copies its
 * context: the last N events up to the violation that touched the same
 * strand or the same 8-byte block, from the caller's msr_history, and the
 * next M such events as they arrive (msr_report_observe). The writer emits with libyaml (never printf),
 * to a temporary file in the target directory renamed into place, so no
 * half-written report is ever left behind. It never reads traces itself,
 * never exits, and keeps no global state.
 */
#ifndef MSR_REPORT_H
#define MSR_REPORT_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Fingerprint of a violation: 16 lowercase hex digits (plus NUL) derived
 * only from kind, strand, iseq and pa (never from timestamps or event
 * indices), so the same violation matches across runs and machines.
 * Definition: FNV-1a 64 over the text "<kind>:<strand>:<iseq>:<pa>" (strand
 * and iseq in decimal, strand -1 when none, pa as 0x + 10 lowercase hex
 * digits), then the murmur3 fmix64 finaliser.
 */
void msr_report_fingerprint(enum msr_vkind kind, int strand, uint64_t iseq,
			    uint64_t pa, char out[17]);

/* Violations listed when max_violations is 0 (all are still counted). */
#define MSR_REPORT_DEFAULT_CAP 10000

/* What to show. An empty filter shows everything. */
#define MSR_REPORT_MAX_RANGES 16

struct msr_report_filter {
	bool by_strand;
	uint8_t strands[MSR_MAX_STRANDS / 8]; /* bit set of shown strands */
	bool by_cycles;
	uint32_t cycle_lo, cycle_hi;          /* inclusive */
	bool by_pa;
	uint64_t pa_lo, pa_hi;                /* inclusive; overlap with [pa, pa+size) */
	/* as given on the command line, echoed in the report's config */
	char strands_text[160], cycles_text[48], pa_text[48];
};

/* Parse "0-3,7,12" into the strand set of `f`; false when malformed or a
 * strand is >= strands. */
bool msr_report_filter_strands(struct msr_report_filter *f, const char *list,
			       unsigned strands);
/* Parse "A:B" (either side may be empty = open) as a cycle or address
 * range; false when malformed or A > B. */
bool msr_report_filter_cycles(struct msr_report_filter *f, const char *range);
bool msr_report_filter_pa(struct msr_report_filter *f, const char *range);

/* Whether a violation passes the filter. */
bool msr_report_filter_match(const struct msr_report_filter *f,
			     const struct msr_violation *v);

/* Run totals for the summary section (filled by the caller at the end). */
struct msr_report_summary {
	uint64_t events;
	uint64_t steps;
	uint64_t loads;
	uint64_t stores;
	uint64_t atomics;
	uint64_t membars;
	uint64_t commits;
	uint64_t other_messages;
	uint64_t learned_bytes;
	bool complete;       /* the whole trace was replayed */
	char error[512];     /* why the run is incomplete ("" = no error) */
	char stopped[64];    /* "fail-fast", "interrupted" or "" */
	double elapsed;      /* seconds */
	bool tso;            /* the TSO pass ran */
};

struct msr_report;

/*
 * Create a collector. `cfg` supplies context_len and max_violations and is
 * copied as the report's effective configuration (images included).
 * `history` (may be NULL: no context) must outlive the collector.
 */
int msr_report_create(const struct msr_config *cfg,
		      const struct msr_history *history,
		      struct msr_report **out, struct msr_error *err);

void msr_report_set_filter(struct msr_report *r,
			   const struct msr_report_filter *f);

/* Record an input file ("trace", "steps", "config", "image"); the size is
 * taken from the file when `size` is 0 and the path is not "-". */
int msr_report_add_input(struct msr_report *r, const char *role,
			 const char *path, uint64_t size, struct msr_error *err);

/*
 * Take one violation (copied). Returns true when it was shown (passed the
 * filter and no waiver matched it), whether or not it was kept
 * (max_violations) or merged into an earlier entry of the same
 * fingerprint. Suitable as the body of a msr_engine_sink violation callback.
 */
bool msr_report_add(struct msr_report *r, const struct msr_violation *v);

/* Engine sink callback: ctx is the struct msr_report. */
void msr_report_sink_violation(void *ctx, const struct msr_violation *v);

/*
 * Every event, in stream order, once the history shows it (msr_history_add,
 * or msr_history_show when shared) and before the violations found at it:
 * completes the after-context of pending violations.
 */
void msr_report_observe(struct msr_report *r, const struct msr_event *ev);
/* Does some entry still wait for after-context (msr_report_observe has
 * something to do)? While false, events can go unobserved. */
bool msr_report_watching(const struct msr_report *r);

/* Set the run totals; also completes the after-contexts still pending
 * (the trace ended, or the run stopped). */
void msr_report_set_summary(struct msr_report *r,
			    const struct msr_report_summary *s);

/* Counts: violations shown (found, not filtered out, not waived), entries
 * kept, filtered. */
uint64_t msr_report_shown(const struct msr_report *r);
uint64_t msr_report_filtered(const struct msr_report *r);
size_t msr_report_kept(const struct msr_report *r);
uint64_t msr_report_kind_count(const struct msr_report *r, enum msr_vkind k);

/* The i-th kept violation (0-based, in the order found), its id number
 * (i + 1), fingerprint and context lines; NULL when out of range. */
const struct msr_violation *msr_report_get(const struct msr_report *r,
					   size_t i);
const char *msr_report_get_fingerprint(const struct msr_report *r, size_t i);
size_t msr_report_get_context(const struct msr_report *r, size_t i,
			      const char *const **lines);
/* The events after it, its occurrence count and its latest event. */
size_t msr_report_get_context_after(const struct msr_report *r, size_t i,
				    const char *const **lines);
uint64_t msr_report_get_count(const struct msr_report *r, size_t i);
uint64_t msr_report_get_last_event(const struct msr_report *r, size_t i);

/* The shown violation with the lowest event index (the first found of
 * those), NULL when none; *index = its entry, SIZE_MAX when not listed. */
const struct msr_violation *msr_report_first(const struct msr_report *r,
					     size_t *index);

/* Waived violations: how many (all occurrences), the listed entries, and
 * how often each configured waiver matched (0 = unused). */
uint64_t msr_report_waived(const struct msr_report *r);
size_t msr_report_waived_kept(const struct msr_report *r);
const struct msr_violation *msr_report_get_waived(const struct msr_report *r,
						  size_t i, uint64_t *count,
						  const char **reason);
uint64_t msr_report_waiver_uses(const struct msr_report *r, unsigned w);

/*
 * Write the YAML report to `path` ("-" or NULL = standard output) through
 * a temporary file in the same directory renamed into place.
 */
int msr_report_write_yaml(const struct msr_report *r, const char *path,
			  struct msr_error *err);

void msr_report_destroy(struct msr_report *r);

/* ------------------------------------------------------------------------ */
/* Reading a report back (msync-replay diff) and the JUnit writer            */
/* ------------------------------------------------------------------------ */

/*
 * One violation of a report read back: only what matching two reports
 * needs. Strings are owned by the msr_report_doc and live as long as it.
 */
struct msr_report_item {
	const char *id;        /* "V1", ... */
	const char *kind;      /* as written (may be a kind this build does not know) */
	const char *message;   /* "" when absent */
	char fingerprint[17];  /* 16 lowercase hex digits */
	uint64_t fp;           /* the fingerprint as a number */
	int strand;            /* -1 when absent */
	bool has_iseq, has_pa;
	uint64_t iseq, pa;
	uint64_t count;        /* occurrences it stands for: `count`, else 1 */
	unsigned line, column; /* 1-based position of the entry in the file */
};

struct msr_report_doc;

/*
 * Parse a YAML violation report ("-" = standard input) with libyaml. Keeps
 * the violations (id, kind, fingerprint, strand, iseq, pa, message, count)
 * and the summary's complete/violations/listed; skips everything else.
 * Errors are MSR_E_IO (unreadable) or MSR_E_FORMAT naming file:line:column
 * and the field. On success *out is owned by the caller (msr_report_doc_free).
 */
int msr_report_doc_load(const char *path, struct msr_report_doc **out,
			struct msr_error *err);
/* The same from memory; `name` is used in messages. */
int msr_report_doc_load_mem(const char *name, const void *buf, size_t len,
			    struct msr_report_doc **out, struct msr_error *err);

/* Violations in file order; NULL when out of range. */
size_t msr_report_doc_count(const struct msr_report_doc *d);
const struct msr_report_item *msr_report_doc_get(const struct msr_report_doc *d,
						 size_t i);
/* summary.complete (true when absent). */
bool msr_report_doc_complete(const struct msr_report_doc *d);
/* summary.violations and summary.listed (the sum of counts when absent):
 * listed < violations means the report was cut by max_violations. */
uint64_t msr_report_doc_violations(const struct msr_report_doc *d);
uint64_t msr_report_doc_listed(const struct msr_report_doc *d);
void msr_report_doc_free(struct msr_report_doc *d);

/*
 * Write the report as JUnit XML to `path` ("-" or NULL = standard output,
 * else a temporary file in the same directory renamed into place): one
 * testsuite for the trace, a "replay" testcase (error when the input was
 * unusable or the run interrupted) and one testcase per violation kind the
 * run could report (TSO kinds only when the TSO pass ran, step-log kinds
 * only with a step log), failing with its violations or passing.
 */
int msr_report_write_junit(const struct msr_report *r, const char *path,
			   struct msr_error *err);

/* One trace of a run over several traces, for msr_report_junit_merge. */
struct msr_junit_part {
	const char *trace;   /* the trace as given: the testsuite's name */
	const char *classname; /* its testcases' classname; NULL = as written */
	const char *file;    /* its replay's JUnit document; NULL when none */
	const char *missing; /* without a usable document: why (one sentence) */
};

/*
 * Write one JUnit document to `path` (as msr_report_write_junit) holding a
 * testsuite per part, in order, with the totals summed: the testsuite of
 * the document msr_report_write_junit wrote for the part, or, when there is
 * none (or it cannot be read or is not such a document), a suite whose
 * only testcase, "replay", is an error saying why. With `classname` every
 * testcase of the part gets that one (traces with one file name in
 * different directories must not share a class). Never changes a part.
 */
int msr_report_junit_merge(const char *path, const struct msr_junit_part *parts,
			   size_t n, struct msr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* MSR_REPORT_H */
