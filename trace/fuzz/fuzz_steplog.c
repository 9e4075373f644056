/*
 * fuzz_steplog.c - libFuzzer target: arbitrary bytes as an ISS step log.
 *
 * The log is read twice, once in one block and once in 7-byte blocks (so
 * the fast path, which parses lines away from a block end, and the general
 * parser, which sees the lines split, both get every input), handing out
 * the strands' steps in a fixed order with a small lookahead. Both runs
 * must give the same steps, the same final status and the same error text
 * (zstd input: both fail or both succeed, steps agree as far as both got).
 */
#include "fuzz-check.h"
#include "steplog-internal.h"

#include <string.h>

#define FUZZ_STRANDS 64
#define FUZZ_STEPS_MAX 4096

struct fuzz_steps {
	struct msr_step *steps;
	size_t n;
	int rc;
	char msg[1024];
	bool compressed; /* the source found a zstd (or skippable) frame */
};

static void fuzz_read(const uint8_t *data, size_t size, size_t block,
		      struct fuzz_steps *run)
{
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_source *src;
	struct msr_steplog *log;
	struct msr_step st;

	memset(run, 0, sizeof(*run));
	run->steps = calloc(FUZZ_STEPS_MAX, sizeof(*run->steps));
	FUZZ_CHECK(run->steps);
	run->rc = msr_source_open_mem(data, size, "fuzz.log", block, &src, &err);
	if (!run->rc) {
		run->compressed = msr_source_compressed(src);
		run->rc = msr_steplog_open_source(src, "fuzz.log", FUZZ_STRANDS, 64,
						  &log, &err);
	}
	if (run->rc) {
		msr_error_format(&err, run->msg, sizeof(run->msg));
		return;
	}
	for (unsigned t = 0; t < FUZZ_STRANDS && !run->rc; t++) {
		while (run->n < FUZZ_STEPS_MAX) {
			int rc = msr_steplog_next(log, t, &st, &err);

			if (rc == MSR_END)
				break;
			if (rc) {
				run->rc = rc;
				msr_error_format(&err, run->msg, sizeof(run->msg));
				break;
			}
			FUZZ_CHECK(st.tnum == t && st.op < MSR_STEP_OP_COUNT);
			FUZZ_CHECK(st.ld_len <= sizeof(st.ld) && st.st_len <= sizeof(st.st));
			run->steps[run->n++] = st;
		}
	}
	msr_steplog_close(log);
}

static bool step_same(const struct msr_step *a, const struct msr_step *b)
{
	return a->line == b->line && a->pc == b->pc && a->pa == b->pa &&
	       a->mask == b->mask && a->tnum == b->tnum && a->op == b->op &&
	       a->size == b->size && a->has == b->has &&
	       a->ld_len == b->ld_len && a->st_len == b->st_len &&
	       !memcmp(a->ld, b->ld, a->ld_len) &&
	       !memcmp(a->st, b->st, a->st_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_steps whole, split;

	if (fuzz_huge_window(data, size))
		return 0;
	fuzz_read(data, size, 0, &whole);
	fuzz_read(data, size, 7, &split);
	FUZZ_CHECK(whole.compressed == split.compressed);
	if (whole.compressed) {
		/* libzstd words corrupt data differently depending on how the
		 * frame is fed, and may notice it a block later */
		FUZZ_CHECK(!whole.rc == !split.rc);
		for (size_t i = 0; i < whole.n && i < split.n; i++)
			FUZZ_CHECK(step_same(&whole.steps[i], &split.steps[i]));
	} else {
		FUZZ_CHECK(whole.rc == split.rc);
		FUZZ_CHECK(!strcmp(whole.msg, split.msg));
		FUZZ_CHECK(whole.n == split.n);
		for (size_t i = 0; i < whole.n; i++)
			FUZZ_CHECK(step_same(&whole.steps[i], &split.steps[i]));
	}
	free(whole.steps);
	free(split.steps);
	return 0;
}
