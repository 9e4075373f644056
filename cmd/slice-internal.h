/*
 * slice-internal.h - the replay pipeline that `slice` runs several times
 * (find the violation, find the cut points, write the slice, re-check the
 * slice): trace reader -> engine (+ step log) -> TSO pass, with hooks.
 *
 * The pipeline only wires modules together; it never decides what to keep.
 */
#ifndef MSR_SLICE_INTERNAL_H
#define MSR_SLICE_INTERNAL_H

#include "cmd.h"
#include "checker.h"
#include "engine.h"

struct msr_slice_pipe {
	struct msr_config cfg;
	bool cfg_loaded;
	struct msr_trace_reader *rd;
	struct msr_steplog *log;
	struct msr_engine *eng;
	struct msr_tso *tso;
	/* hooks (any may be NULL), called with `ctx` */
	void *ctx;
	void (*on_violation)(void *ctx, const struct msr_violation *v);
	void (*on_commit)(void *ctx, const struct msr_commit *c);
	/* a step-log line handed to the engine for an SSTEP of its strand */
	void (*on_step)(void *ctx, const struct msr_step *step);
};

/*
 * Open trace (+ steps, config, image; each may be NULL) and build the
 * pipeline. The hooks in *p must be set before the call.
 */
int msr_slice_pipe_open(struct msr_slice_pipe *p, const char *trace,
			const char *steps, const char *config, const char *image,
			struct msr_error *err);

/* Read the next event into *ev without applying it: MSR_OK, MSR_END or <0. */
int msr_slice_pipe_read(struct msr_slice_pipe *p, struct msr_event *ev,
			struct msr_error *err);

/* Apply an event read by msr_slice_pipe_read. */
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

/* Format one step-log line (trace-format.md section 3), newline included. */
size_t msr_slice_step_format(const struct msr_step *s, char *buf, size_t size);

#endif /* MSR_SLICE_INTERNAL_H */
