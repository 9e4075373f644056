/*
 * test_trace_blocks.c - in-memory readers with tiny source blocks, so that
 * every message, record and line straddles block boundaries at every
 * possible split; errors must not depend on the block size either.
 */
#include <criterion/criterion.h>

#include "reader-internal.h"
#include "trace_test_util.h"

static uint8_t *encode_file(enum msr_trace_format fmt, int level, const struct msr_event *evs,
			    size_t n, size_t *len)
{
	char *path = tt_tmpfile(".blk");
	struct msr_trace_writer *w;
	struct msr_error err = MSR_ERROR_INIT;
	uint8_t *all;

	cr_assert_eq(msr_trace_writer_open(path, fmt, level, &w, &err), MSR_OK);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(msr_trace_writer_put(w, &evs[i], &err), MSR_OK);
	cr_assert_eq(msr_trace_writer_close(w, &err), MSR_OK);
	all = tt_read_file(path, len);
	unlink(path);
	free(path);
	return all;
}

static void all_splits(enum msr_trace_format fmt, int level)
{
	struct msr_event evs[64], ev;
	size_t n = tt_sample_events(evs), len = 0;
	uint8_t *bytes = encode_file(fmt, level, evs, n, &len);
	struct msr_trace_opts opts;

	msr_trace_opts_default(&opts);
	opts.format = fmt; /* a tiny first block is too short to detect from */
	for (size_t blk = 1; blk <= 23; blk++) {
		struct msr_trace_reader *r;
		struct msr_error err = MSR_ERROR_INIT;
		size_t i = 0;
		int rc;

		cr_assert_eq(msr_reader_open_mem_blocks(bytes, len, "mem", blk, &opts, &r, &err),
			     MSR_OK);
		while ((rc = msr_trace_reader_next(r, &ev, &err)) == MSR_OK) {
			cr_assert_lt(i, n);
			cr_assert_eq(tt_event_cmp(&ev, &evs[i]), 0, "block %zu event %zu", blk, i);
			i++;
		}
		cr_assert_eq(rc, MSR_END, "block %zu: %s", blk, err.cause[0].text);
		cr_assert_eq(i, n);
		msr_trace_reader_close(r);
	}
	free(bytes);
}

Test(blocks, binary) { all_splits(MSR_FMT_BINARY, 0); }
Test(blocks, binary_zstd) { all_splits(MSR_FMT_BINARY, 5); }
Test(blocks, hex) { all_splits(MSR_FMT_HEX, 0); }
Test(blocks, text) { all_splits(MSR_FMT_TEXT, 0); }

Test(blocks, truncation_error_independent_of_blocks)
{
	static const uint8_t b[] = {0x02, 0x01, 0x33, 0, 0, 0, 0, 0x40, 1, 2, 3};

	for (size_t blk = 1; blk <= 12; blk++) {
		struct msr_trace_reader *r;
		struct msr_error err = MSR_ERROR_INIT;
		struct msr_event ev;
		char msg[512];

		cr_assert_eq(msr_reader_open_mem_blocks(b, sizeof(b), "cut", blk, NULL, &r, &err),
			     MSR_OK);
		cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_OK);
		cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_E_TRUNCATED);
		cr_assert_str_eq(msr_error_format(&err, msg, sizeof(msg)),
				 "cut offset=2: truncated message code=0x33: expected 70 bytes, got 9");
		cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_E_USAGE);
		msr_trace_reader_close(r);
	}
}

Test(blocks, public_open_mem_detects_format)
{
	static const char text[] = "# msync-text 1\nSSTEP tnum=4\n";
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event ev;

	cr_assert_eq(msr_trace_reader_open_mem(text, strlen(text), "t", NULL, &r, &err), MSR_OK);
	cr_assert_eq(msr_trace_reader_format(r), MSR_FMT_TEXT);
	cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_OK);
	cr_assert_eq(ev.code, MSR_SSTEP);
	cr_assert_eq(ev.tnum, 4);
	cr_assert_eq(ev.line, 2);
	cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_END);
	msr_trace_reader_close(r);
	cr_assert_eq(msr_trace_reader_open_mem(NULL, 0, "empty", NULL, &r, &err), MSR_OK);
	cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_END);
	msr_trace_reader_close(r);
}
