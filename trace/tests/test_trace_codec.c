/*
 * test_trace_codec.c - every event kind through every writer format and
 * back through the reader (with format detection), plus large streams whose
 * messages straddle source blocks.
 */
#include <criterion/criterion.h>

#include "trace_test_util.h"

static size_t write_events(const char *path, enum msr_trace_format fmt, int level,
			   const struct msr_event *evs, size_t n)
{
	struct msr_trace_writer *w;
	struct msr_error err = MSR_ERROR_INIT;

	cr_assert_eq(msr_trace_writer_open(path, fmt, level, &w, &err), MSR_OK);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(msr_trace_writer_put(w, &evs[i], &err), MSR_OK,
			     "put %zu: %s", i, err.cause[0].text);
	cr_assert_eq(msr_trace_writer_close(w, &err), MSR_OK);
	return n;
}

static void read_expect(const char *path, enum msr_trace_format fmt, bool zst,
			const struct msr_event *evs, size_t n)
{
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event ev;
	char buf[512];
	size_t i = 0;
	int rc;

	cr_assert_eq(msr_trace_reader_open(path, NULL, &r, &err), MSR_OK);
	cr_assert_eq(msr_trace_reader_format(r), fmt);
	cr_assert_eq(msr_trace_reader_compressed(r), zst);
	while ((rc = msr_trace_reader_next(r, &ev, &err)) == MSR_OK) {
		cr_assert_lt(i, n);
		cr_assert_eq(ev.index, i);
		cr_assert_eq(tt_event_cmp(&ev, &evs[i]), 0, "event %zu differs: %s", i,
			     (msr_event_format_text(&ev, buf, sizeof(buf)), buf));
		i++;
	}
	cr_assert_eq(rc, MSR_END, "%s", msr_error_format(&err, buf, sizeof(buf)));
	cr_assert_eq(i, n);
	msr_trace_reader_close(r);
}

static void roundtrip(enum msr_trace_format fmt, int level)
{
	struct msr_event evs[64];
	size_t n = tt_sample_events(evs);
	char *path = tt_tmpfile(".t");

	write_events(path, fmt, level, evs, n);
	read_expect(path, fmt, level > 0, evs, n);
	unlink(path);
	free(path);
}

Test(codec, binary) { roundtrip(MSR_FMT_BINARY, 0); }
Test(codec, binary_zstd) { roundtrip(MSR_FMT_BINARY, 3); }
Test(codec, hex) { roundtrip(MSR_FMT_HEX, 0); }
Test(codec, hex_zstd) { roundtrip(MSR_FMT_HEX, 1); }
Test(codec, text) { roundtrip(MSR_FMT_TEXT, 0); }
Test(codec, text_zstd) { roundtrip(MSR_FMT_TEXT, 19); }

/* A first EVICT of pa 0xb52ffd.... encodes as 28 b5 2f fd, a zstd magic
 * number: raw, no reader could tell the file from zstd, so the writer
 * refuses it; compressed or as hex text it reads back. */
Test(codec, raw_binary_that_would_read_as_zstd_is_refused)
{
	struct msr_event evs[2];
	struct msr_trace_writer *w;
	struct msr_error err = MSR_ERROR_INIT;
	char *path = tt_tmpfile(".t");

	memset(evs, 0, sizeof(evs));
	evs[0].code = MSR_EVICT;
	evs[0].pa = 0xb52ffd2000ull;
	evs[0].invvec = 2;
	evs[0].ts = 7;
	evs[1].code = MSR_SSTEP;
	evs[1].tnum = 1;
	evs[1].index = 1;
	cr_assert_eq(msr_trace_writer_open(path, MSR_FMT_BINARY, 0, &w, &err), MSR_OK);
	cr_assert_eq(msr_trace_writer_put(w, &evs[0], &err), MSR_OK);
	cr_assert_eq(msr_trace_writer_put(w, &evs[1], &err), MSR_OK);
	cr_assert_eq(msr_trace_writer_close(w, &err), MSR_E_USAGE);
	cr_assert(strstr(err.cause[0].text, "zstd magic"), "%s", err.cause[0].text);
	msr_error_clear(&err);
	write_events(path, MSR_FMT_BINARY, 1, evs, 2);
	read_expect(path, MSR_FMT_BINARY, true, evs, 2);
	write_events(path, MSR_FMT_HEX, 0, evs, 2);
	read_expect(path, MSR_FMT_HEX, false, evs, 2);
	/* one byte of pa different: raw is fine */
	evs[0].pa = 0xb52ffe2000ull;
	write_events(path, MSR_FMT_BINARY, 0, evs, 2);
	read_expect(path, MSR_FMT_BINARY, false, evs, 2);
	unlink(path);
	free(path);
}

Test(codec, encode_bin_lengths)
{
	struct msr_event evs[64];
	uint8_t out[MSR_EVENT_BIN_MAX];
	size_t n = tt_sample_events(evs);

	for (size_t i = 0; i < n; i++) {
		const struct msr_msgdef *def = msr_msgdef_get(evs[i].code);
		size_t len = msr_event_encode_bin(&evs[i], out);

		if (evs[i].code == MSR_REGDELTA) {
			size_t base = evs[i].rd_type == 'F' || evs[i].rd_type == 'C' ? 10 : 11;

			cr_assert_eq(len, base + (evs[i].flags & MSR_EVF_RD_HEADER ? 3 : 0));
		} else {
			cr_assert_eq(len, def->length, "code=0x%02x", evs[i].code);
			if (evs[i].code < 0x100)
				cr_assert_eq(out[0], evs[i].code);
		}
	}
}

Test(codec, encode_bin_bytes)
{
	struct msr_event e = {0};
	uint8_t out[MSR_EVENT_BIN_MAX];
	static const uint8_t want[21] = {0x20, 3, 0x00, 0x00, 0x10, 0x20, 0x08, 0, 0, 0, 0,
					 0xde, 0xad, 0xbe, 0xef, 0x0f, 6, 0, 0, 0x04, 0xc4};

	e.code = MSR_ST_ISSUE;
	e.tnum = 3;
	e.pa = 0x102008;
	e.data = 0xdeadbeef;
	e.bmask = 0x0f;
	e.itype = MSR_IT_STORE;
	e.ts = 1220;
	cr_assert_eq(msr_event_encode_bin(&e, out), 21);
	cr_assert_arr_eq(out, want, 21);
}

Test(codec, format_text_examples)
{
	struct msr_event e = {0};
	char buf[MSR_EVENT_TEXT_MAX];

	e.code = MSR_ST_ISSUE;
	e.tnum = 3;
	e.pa = 0x102008;
	e.data = 0xdeadbeef;
	e.bmask = 0x0f;
	e.itype = MSR_IT_STORE;
	e.ts = 1220;
	msr_event_format_text(&e, buf, sizeof(buf));
	cr_assert_str_eq(buf, "ST_ISSUE  tnum=3 pa=0x0000102008 data=0x00000000deadbeef "
			      "bmask=0x0f itype=STORE ts=1220");
	memset(&e, 0, sizeof(e));
	e.code = MSR_ST_COMMIT;
	e.tnum = 3;
	e.pa = 0x102008;
	e.bmask = 0x0f;
	e.invvec = 2;
	e.l2hit = 1;
	e.ts = 1240;
	msr_event_format_text(&e, buf, sizeof(buf));
	cr_assert_str_eq(buf, "ST_COMMIT tnum=3 pa=0x0000102008 bmask=0x0f invvec=0x00000002 "
			      "l2hit=1 ts=1240");
	memset(&e, 0, sizeof(e));
	e.code = MSR_SSTEP;
	e.tnum = 3;
	msr_event_format_text(&e, buf, sizeof(buf));
	cr_assert_str_eq(buf, "SSTEP     tnum=3");
	memset(&e, 0, sizeof(e));
	e.code = MSR_ITLBWRITE;
	e.nbytes = 6;
	e.bytes[0] = 3;
	e.bytes[4] = 0x10;
	e.bytes[5] = 0xff;
	e.tnum = 3;
	e.ts = 16;
	msr_event_format_text(&e, buf, sizeof(buf));
	cr_assert_str_eq(buf, "MSG       code=0x15 bytes=0300000010ff  # ITLBWRITE tnum=3 ts=16");
	memset(&e, 0, sizeof(e));
	e.code = MSR_REGDELTA;
	e.flags = MSR_EVF_RD_HEADER;
	e.rd_tid = 5;
	e.rd_type = 'F';
	e.rd_reg = 2;
	e.data = 0x10;
	msr_event_format_text(&e, buf, sizeof(buf));
	cr_assert_str_eq(buf, "REGDELTA  tid=5 type=F reg=2 value=0x0000000000000010");
}

Test(codec, format_text_small_buffer)
{
	struct msr_event e = {0};
	char buf[8];

	e.code = MSR_SSTEP;
	e.tnum = 12;
	cr_assert_eq(msr_event_format_text(&e, buf, sizeof(buf)), 7);
	cr_assert_str_eq(buf, "SSTEP  ");
}

/* Many events, so that messages straddle the 1 MiB source blocks. */
static void big_stream(enum msr_trace_format fmt, int level)
{
	struct msr_event evs[64];
	size_t n = tt_sample_events(evs);
	size_t reps = fmt == MSR_FMT_BINARY ? 4000 : 800;
	char *path = tt_tmpfile(".big");
	struct msr_trace_writer *w;
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event ev;
	uint64_t off = 0, i = 0;
	uint8_t bin[MSR_EVENT_BIN_MAX];
	int rc;

	cr_assert_eq(msr_trace_writer_open(path, fmt, level, &w, &err), MSR_OK);
	for (size_t k = 0; k < reps; k++)
		for (size_t j = 0; j + 1 < n; j++) /* not QUIT */
			cr_assert_eq(msr_trace_writer_put(w, &evs[j], &err), MSR_OK);
	cr_assert_eq(msr_trace_writer_close(w, &err), MSR_OK);
	cr_assert_eq(msr_trace_reader_open(path, NULL, &r, &err), MSR_OK);
	while ((rc = msr_trace_reader_next(r, &ev, &err)) == MSR_OK) {
		size_t j = (size_t)(i % (n - 1));

		cr_assert_eq(tt_event_cmp(&ev, &evs[j]), 0, "event %llu", (unsigned long long)i);
		if (fmt == MSR_FMT_BINARY) {
			cr_assert_eq(ev.offset, off);
			off += msr_event_encode_bin(&ev, bin);
		}
		i++;
	}
	cr_assert_eq(rc, MSR_END, "%s", err.cause[0].text);
	cr_assert_eq(i, reps * (n - 1));
	msr_trace_reader_close(r);
	unlink(path);
	free(path);
}

Test(codec, big_binary) { big_stream(MSR_FMT_BINARY, 0); }
Test(codec, big_binary_zstd) { big_stream(MSR_FMT_BINARY, 1); }
Test(codec, big_hex) { big_stream(MSR_FMT_HEX, 0); }
Test(codec, big_text) { big_stream(MSR_FMT_TEXT, 0); }

Test(codec, stats)
{
	struct msr_event evs[64];
	size_t n = tt_sample_events(evs);
	char *path = tt_tmpfile(".st");
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_trace_reader_stats st;
	struct msr_event ev;
	size_t sz;
	uint8_t *all;

	write_events(path, MSR_FMT_BINARY, 0, evs, n);
	all = tt_read_file(path, &sz);
	free(all);
	cr_assert_eq(msr_trace_reader_open(path, NULL, &r, &err), MSR_OK);
	while (msr_trace_reader_next(r, &ev, &err) == MSR_OK)
		;
	msr_trace_reader_get_stats(r, &st);
	cr_assert_eq(st.events, n);
	cr_assert_eq(st.bytes_in, sz);
	cr_assert_eq(st.bytes_out, sz);
	cr_assert_eq(st.file_size, sz);
	cr_assert_eq(st.regdelta_records, 7);
	cr_assert_eq(st.regdelta_ambiguous, 2);
	msr_trace_reader_close(r);
	unlink(path);
	free(path);
}

Test(codec, msgdef_table_consistent)
{
	unsigned known = 0;

	for (unsigned c = 0; c < MSR_CODE_LIMIT; c++) {
		const struct msr_msgdef *d = msr_msgdef_get(c);

		if (!d)
			continue;
		known++;
		cr_assert_eq(d->code, c, "code 0x%02x", c);
		cr_assert_eq(msr_msgdef_by_name(d->name, strlen(d->name)), d);
	}
	cr_assert_eq(known, 35);
	cr_assert_null(msr_msgdef_get(0x46));
	cr_assert_null(msr_msgdef_get(MSR_CODE_LIMIT));
}
