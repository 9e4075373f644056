/*
 * fuzz-common.h - the property every decoder fuzz target checks.
 *
 * One input is decoded twice, once in one block and once in tiny blocks:
 * both runs must give the same events and the same final status and error
 * text, zstd input included (libzstd is fed whole blocks either way). Every
 * event must format as text within MSR_EVENT_TEXT_MAX, and the
 * binary encoding of the decoded events must decode back to the same
 * events (for binary input: to the very input bytes; checked for inputs of
 * up to FUZZ_EVENTS_KEPT events). A violated property
 * aborts, which is what libFuzzer reports. Only for fuzzing and the
 * fuzz-regress driver: never part of the library.
 */
#ifndef MSR_FUZZ_COMMON_H
#define MSR_FUZZ_COMMON_H

#include "fuzz-check.h"
#include "reader-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Events kept per run for the comparisons. A few KiB of zstd can expand to
 * millions of events (the decoders stream them in constant memory); kept
 * whole, three runs of such an input would take gigabytes here. Past this
 * many, events are counted but not compared one by one. */
#define FUZZ_EVENTS_KEPT 65536

struct fuzz_run {
	struct msr_event *evs;
	size_t n;           /* events kept in evs */
	size_t total;       /* events decoded */
	int rc;
	char msg[1024];
	bool ambiguous_in_delta; /* hex: 0x43/0x47 message while a delta is open */
	bool compressed;
};

static int fuzz_cmp(const struct msr_event *a, const struct msr_event *b)
{
	struct msr_event x = *a, y = *b;

	x.index = y.index = x.offset = y.offset = 0;
	x.line = y.line = 0;
	if (!x.nbytes)
		memset(x.bytes, 0, sizeof(x.bytes));
	if (!y.nbytes)
		memset(y.bytes, 0, sizeof(y.bytes));
	return memcmp(&x, &y, sizeof(x));
}

static void fuzz_decode(const uint8_t *data, size_t size, enum msr_trace_format fmt,
			size_t block, struct fuzz_run *run)
{
	struct msr_trace_opts opts;
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event ev;
	size_t cap = 0;
	bool open = false;

	msr_trace_opts_default(&opts);
	opts.format = fmt;
	memset(run, 0, sizeof(*run));
	run->rc = msr_reader_open_mem_blocks(data, size, "fuzz", block, &opts, &r, &err);
	if (run->rc) {
		msr_error_format(&err, run->msg, sizeof(run->msg));
		return;
	}
	run->compressed = msr_trace_reader_compressed(r);
	while ((run->rc = msr_trace_reader_next(r, &ev, &err)) == MSR_OK) {
		char text[MSR_EVENT_TEXT_MAX];
		size_t tl = msr_event_format_text(&ev, text, sizeof(text));

		FUZZ_CHECK(tl < sizeof(text) && strlen(text) == tl);
		FUZZ_CHECK(ev.index == run->total);
		if (open && (ev.code == MSR_ASI_READ || ev.code == MSR_CSR_READ))
			run->ambiguous_in_delta = true;
		if (ev.code == MSR_REGDELTA)
			open = true;
		else if (ev.code == MSR_REGDELTA_END)
			open = false;
		run->total++;
		if (run->n == FUZZ_EVENTS_KEPT)
			continue;
		if (run->n == cap) {
			cap = cap ? 2 * cap : 64;
			run->evs = realloc(run->evs, cap * sizeof(*run->evs));
			FUZZ_CHECK(run->evs != NULL);
		}
		run->evs[run->n++] = ev;
	}
	FUZZ_CHECK(run->rc == MSR_END || run->rc < 0);
	if (run->rc < 0)
		msr_error_format(&err, run->msg, sizeof(run->msg));
	msr_trace_reader_close(r);
}

/* Binary encoding of run's events decodes back to the same events. */
static void fuzz_reencode(const uint8_t *data, const struct fuzz_run *run,
			  enum msr_trace_format fmt)
{
	uint8_t *out = malloc(run->n * MSR_EVENT_BIN_MAX + 1);
	size_t len = 0;
	struct fuzz_run again;

	FUZZ_CHECK(out != NULL);
	for (size_t i = 0; i < run->n; i++) {
		size_t k = msr_event_encode_bin(&run->evs[i], out + len);

		FUZZ_CHECK(k > 0 && k <= MSR_EVENT_BIN_MAX);
		if (fmt == MSR_FMT_BINARY && !run->compressed)
			FUZZ_CHECK(memcmp(out + len, data + run->evs[i].offset, k) == 0);
		len += k;
	}
	/* the one raw stream a reader cannot tell from zstd (it starts with a
	 * zstd magic number: an EVICT of pa 0xb52ffd....); writers refuse it */
	if (msr_source_zstd_magic(out, len)) {
		free(out);
		return;
	}
	fuzz_decode(out, len, MSR_FMT_BINARY, 0, &again);
	FUZZ_CHECK(again.rc == MSR_END);
	FUZZ_CHECK(again.total == run->n);
	for (size_t i = 0; i < run->n; i++)
		FUZZ_CHECK(fuzz_cmp(&again.evs[i], &run->evs[i]) == 0);
	free(again.evs);
	free(out);
}

static int fuzz_one(const uint8_t *data, size_t size, enum msr_trace_format fmt)
{
	struct fuzz_run whole, small;

	if (fuzz_huge_window(data, size))
		return 0;

	fuzz_decode(data, size, fmt, 0, &whole);
	fuzz_decode(data, size, fmt, 1 + size % 7, &small);
	FUZZ_CHECK(whole.rc == small.rc);
	FUZZ_CHECK(strcmp(whole.msg, small.msg) == 0);
	FUZZ_CHECK(whole.total == small.total && whole.n == small.n);
	for (size_t i = 0; i < whole.n; i++) {
		FUZZ_CHECK(fuzz_cmp(&whole.evs[i], &small.evs[i]) == 0);
		FUZZ_CHECK(whole.evs[i].offset == small.evs[i].offset);
	}
	if (!whole.ambiguous_in_delta && whole.n == whole.total)
		fuzz_reencode(data, &whole, fmt);
	free(whole.evs);
	free(small.evs);
	return 0;
}

#endif /* MSR_FUZZ_COMMON_H */
