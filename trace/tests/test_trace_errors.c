/*
 * test_trace_errors.c - every decoder error path gives the exact message,
 * location and status; framing of register deltas; zstd frames.
 */
#include <criterion/criterion.h>

#include "trace_test_util.h"

/* Decode `path` to the end (decompressing ahead in a helper thread when
 * asked); return the final status and the error text. */
static int decode_all(const char *path, bool ahead, char *msg, size_t size,
		      uint64_t *nevents)
{
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event ev;
	int rc;

	*nevents = 0;
	msg[0] = '\0';
	rc = msr_trace_reader_open(path, NULL, &r, &err);
	if (rc) {
		msr_error_format(&err, msg, size);
		return rc;
	}
	if (ahead)
		msr_trace_reader_decompress_ahead(r);
	while ((rc = msr_trace_reader_next(r, &ev, &err)) == MSR_OK)
		(*nevents)++;
	if (rc < 0)
		msr_error_format(&err, msg, size);
	msr_trace_reader_close(r);
	return rc;
}

/* Write bytes to a temp file, decode, check status and message suffix; the
 * same again decompressing ahead (zstd inputs): nothing may change. */
static void expect_bytes(const void *bytes, size_t n, int status, const char *want,
			 uint64_t want_events)
{
	char *path = tt_tmpfile(".in");
	char msg[2048], full[2200];
	uint64_t nev;
	int rc;

	tt_write_file(path, bytes, n);
	if (want)
		snprintf(full, sizeof(full), "%s%s", path, want);
	else
		full[0] = '\0';
	for (int ahead = 0; ahead < 2; ahead++) {
		rc = decode_all(path, ahead, msg, sizeof(msg), &nev);
		cr_expect_eq(rc, status, "ahead %d: status %d, message: %s", ahead, rc, msg);
		cr_expect_str_eq(msg, full, "ahead %d", ahead);
		if (want_events != UINT64_MAX)
			cr_expect_eq(nev, want_events, "ahead %d: events %llu", ahead,
				     (unsigned long long)nev);
	}
	unlink(path);
	free(path);
}

static void expect_text(const char *text, int status, const char *want, uint64_t want_events)
{
	expect_bytes(text, strlen(text), status, want, want_events);
}

/* ---- binary ---- */

Test(bin_errors, unknown_code)
{
	static const uint8_t b[] = {0x02, 0x00, 0x05, 0x00};

	expect_bytes(b, sizeof(b), MSR_E_FORMAT, " offset=2: unknown message code=0x05", 1);
}

Test(bin_errors, never_sent_codes_are_unknown)
{
	static const uint8_t codes[] = {0x03, 0x10, 0x46, 0x70, 0x74, 0xfe, 0x00};

	for (size_t i = 0; i < sizeof(codes); i++) {
		char want[64];
		uint8_t b[3] = {0x02, 0x00, codes[i]};

		snprintf(want, sizeof(want), " offset=2: unknown message code=0x%02x", codes[i]);
		expect_bytes(b, 3, MSR_E_FORMAT, want, 1);
	}
}

Test(bin_errors, truncated_message)
{
	static const uint8_t b[] = {0x02, 0x01, 0x21, 1, 0, 0, 0, 0, 0, 0, 0};

	expect_bytes(b, sizeof(b), MSR_E_TRUNCATED,
		     " offset=2: truncated message code=0x21: expected 17 bytes, got 9", 1);
}

Test(bin_errors, tnum_out_of_range)
{
	static const uint8_t b[] = {0x02, 64};

	expect_bytes(b, sizeof(b), MSR_E_FORMAT,
		     " offset=0: strand out of range tnum=64 in message code=0x02 (SSTEP): "
		     "expected tnum < 64", 0);
}

Test(bin_errors, other_message_tnum_out_of_range)
{
	static const uint8_t b[] = {0x13, 200, 0, 0, 0, 1};

	expect_bytes(b, sizeof(b), MSR_E_FORMAT,
		     " offset=0: strand out of range tnum=200 in message code=0x13 (ITLBREAD): "
		     "expected tnum < 64", 0);
}

Test(bin_errors, bad_itype)
{
	static const uint8_t b[] = {0x25, 1, 0, 0, 0, 0, 0, 3, 10, 0, 0, 0, 0};

	expect_bytes(b, sizeof(b), MSR_E_FORMAT,
		     " offset=0: bad itype=10 in message code=0x25 (LD_ISSUE): expected 0..9", 0);
}

Test(bin_errors, bad_dsrc)
{
	static const uint8_t b[] = {0x26, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

	expect_bytes(b, sizeof(b), MSR_E_FORMAT,
		     " offset=0: bad dsrc=0 in message code=0x26 (LD_DATA): expected 1 (STB), "
		     "2 (L1) or 3 (L2)", 0);
}

Test(bin_errors, bad_cid_and_bank)
{
	static const uint8_t c[] = {0x29, 8, 0, 0, 0, 0, 0};
	static const uint8_t b[] = {0x29, 7, 8, 0, 0, 0, 0};

	expect_bytes(c, sizeof(c), MSR_E_FORMAT,
		     " offset=0: bad cid=8 in message code=0x29 (EVICT_INV): expected cid < 8", 0);
	expect_bytes(b, sizeof(b), MSR_E_FORMAT,
		     " offset=0: bad bank=8 in message code=0x29 (EVICT_INV): expected bank < 8", 0);
}

Test(bin_errors, empty_input_is_empty_trace)
{
	expect_bytes("", 0, MSR_END, NULL, 0);
}

Test(bin_errors, missing_file)
{
	char msg[512];
	uint64_t n;

	cr_assert_eq(decode_all("/nonexistent/x.trace", false, msg, sizeof(msg), &n), MSR_E_IO);
	cr_assert_str_eq(msg, "/nonexistent/x.trace: cannot open: No such file or directory");
}

/* ---- register deltas ---- */

Test(regdelta, header_continuation_end)
{
	/* header G, continuation C (ambiguous with ASI_READ), end, then a real
	 * ASI_READ (0x43) with no delta open */
	uint8_t b[128];
	size_t n = 0;
	static const uint8_t hdr[] = {0xFF, 0x05, 0x00, 'G', 1, 7, 1, 2, 3, 4, 5, 6, 7, 8};
	static const uint8_t cont[] = {'C', 9, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01};
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event ev;
	struct msr_trace_reader_stats st;
	char *path = tt_tmpfile(".rd");

	memcpy(b + n, hdr, sizeof(hdr)); n += sizeof(hdr);
	memcpy(b + n, cont, sizeof(cont)); n += sizeof(cont);
	b[n++] = 0xFE;
	b[n++] = 0x43;
	b[n++] = 3;
	for (int i = 0; i < 17; i++)
		b[n++] = (uint8_t)i;
	tt_write_file(path, b, n);
	cr_assert_eq(msr_trace_reader_open(path, NULL, &r, &err), MSR_OK);
	cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_OK);
	cr_assert_eq(ev.code, MSR_REGDELTA);
	cr_assert_eq(ev.flags, MSR_EVF_RD_HEADER);
	cr_assert_eq(ev.rd_tid, 5);
	cr_assert_eq(ev.rd_type, 'G');
	cr_assert_eq(ev.rd_extra, 1);
	cr_assert_eq(ev.rd_reg, 7);
	cr_assert_eq(ev.data, 0x0807060504030201ull);
	cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_OK);
	cr_assert_eq(ev.code, MSR_REGDELTA);
	cr_assert_eq(ev.flags, MSR_EVF_RD_AMBIGUOUS);
	cr_assert_eq(ev.rd_type, 'C');
	cr_assert_eq(ev.rd_reg, 9);
	cr_assert_eq(ev.data, 0x0123456789abcdefull);
	cr_assert_eq(ev.offset, 14);
	cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_OK);
	cr_assert_eq(ev.code, MSR_REGDELTA_END);
	cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_OK);
	cr_assert_eq(ev.code, MSR_ASI_READ);
	cr_assert_eq(ev.tnum, 3);
	cr_assert_eq(ev.offset, 25);
	cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_END);
	msr_trace_reader_get_stats(r, &st);
	cr_assert_eq(st.regdelta_records, 2);
	cr_assert_eq(st.regdelta_ambiguous, 1);
	msr_trace_reader_close(r);
	unlink(path);
	free(path);
}

Test(regdelta, end_push_leaves_delta_open)
{
	/* X header with regnum 0xE7, then a continuation F record, then end */
	static const uint8_t b[] = {0xFF, 1, 0, 'X', 0, 0xE7, 0, 0, 0, 0, 0, 0, 0, 0,
				    'F', 2, 1, 0, 0, 0, 0, 0, 0, 0, 0xFE};

	expect_bytes(b, sizeof(b), MSR_END, NULL, 3);
}

Test(regdelta, ff_inside_open_delta_is_unknown)
{
	static const uint8_t b[] = {0xFF, 1, 0, 'F', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF};

	expect_bytes(b, sizeof(b), MSR_E_FORMAT,
		     " offset=13: unknown message code=0xff (a register delta is open)", 1);
}

Test(regdelta, bad_header_type)
{
	static const uint8_t b[] = {0xFF, 1, 0, 'Q', 0, 0};

	expect_bytes(b, sizeof(b), MSR_E_FORMAT,
		     " offset=0: bad register-delta type=0x51 in header record: expected G, W, "
		     "X, F or C", 0);
}

Test(regdelta, truncated_records)
{
	static const uint8_t h[] = {0xFF, 1};
	static const uint8_t h2[] = {0xFF, 1, 0, 'W', 1, 2, 3};
	static const uint8_t c[] = {0xFF, 1, 0, 'F', 0, 0, 0, 0, 0, 0, 0, 0, 0, 'G', 1};

	expect_bytes(h, sizeof(h), MSR_E_TRUNCATED,
		     " offset=0: truncated register-delta header record: expected at least "
		     "4 bytes, got 2", 0);
	expect_bytes(h2, sizeof(h2), MSR_E_TRUNCATED,
		     " offset=0: truncated register-delta header record type=W: expected 14 "
		     "bytes, got 7", 0);
	expect_bytes(c, sizeof(c), MSR_E_TRUNCATED,
		     " offset=13: truncated register-delta record type=G: expected 11 bytes, "
		     "got 2", 1);
}

/* ---- zstd ---- */

static void write_zstd_events(const char *path, size_t n)
{
	struct msr_trace_writer *w;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event e = {0};

	e.code = MSR_SSTEP;
	cr_assert_eq(msr_trace_writer_open(path, MSR_FMT_BINARY, 3, &w, &err), MSR_OK);
	for (size_t i = 0; i < n; i++) {
		e.tnum = (uint8_t)(i % 64);
		cr_assert_eq(msr_trace_writer_put(w, &e, &err), MSR_OK);
	}
	cr_assert_eq(msr_trace_writer_close(w, &err), MSR_OK);
}

Test(zstd, truncated_frame)
{
	char *path = tt_tmpfile(".zst");
	uint8_t *all;
	size_t n = 0;
	char want[128];

	write_zstd_events(path, 100000);
	all = tt_read_file(path, &n);
	cr_assert_gt(n, 100);
	snprintf(want, sizeof(want),
		 ": truncated zstd frame at compressed offset=%zu: the frame that starts at "
		 "compressed offset=0 is incomplete", n - 10);
	expect_bytes(all, n - 10, MSR_E_TRUNCATED, want, UINT64_MAX);
	free(all);
	unlink(path);
	free(path);
}

Test(zstd, multi_frame_with_skippable)
{
	char *a = tt_tmpfile(".zst");
	uint8_t *fa, *buf;
	size_t na = 0, n = 0;
	static const uint8_t skip[] = {0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 'a', 'b', 'c', 'd'};

	write_zstd_events(a, 1000);
	fa = tt_read_file(a, &na);
	buf = malloc(2 * na + 2 * sizeof(skip));
	memcpy(buf + n, skip, sizeof(skip)); n += sizeof(skip);
	memcpy(buf + n, fa, na); n += na;
	memcpy(buf + n, skip, sizeof(skip)); n += sizeof(skip);
	memcpy(buf + n, fa, na); n += na;
	expect_bytes(buf, n, MSR_END, NULL, 2000);
	free(buf);
	free(fa);
	unlink(a);
	free(a);
}

Test(zstd, garbage_after_frame)
{
	char *a = tt_tmpfile(".zst");
	uint8_t *fa;
	size_t na = 0;
	char want[256];

	write_zstd_events(a, 10);
	fa = tt_read_file(a, &na);
	fa = realloc(fa, na + 8);
	memcpy(fa + na, "garbage!", 8);
	snprintf(want, sizeof(want), ": corrupt zstd data in the frame at compressed "
		 "offset=%zu: Unknown frame descriptor", na);
	/* every event decoded before the bad frame is handed out first */
	expect_bytes(fa, na + 8, MSR_E_FORMAT, want, 10);
	free(fa);
	unlink(a);
	free(a);
}

/* ---- hex variant ---- */

/*
 * Detection looks at the first 256 bytes, so a hex input with an error
 * early on is (rightly) taken as binary. Prefix 128 valid SSTEPs (640
 * characters) so the error is seen by the hex decoder; `want` is the
 * message after "offset=N:", `rel` the offset in the body.
 */
#define HEX_PREFIX_EVENTS 128
#define HEX_PREFIX_LEN (HEX_PREFIX_EVENTS * 5)

static void expect_hex(const char *body, int status, const char *want, unsigned long long rel,
		       uint64_t want_events)
{
	size_t n = strlen(body);
	char *s = malloc(HEX_PREFIX_LEN + n + 1);
	char w[512];

	for (int i = 0; i < HEX_PREFIX_EVENTS; i++)
		memcpy(s + 5 * i, "0201\n", 5);
	memcpy(s + HEX_PREFIX_LEN, body, n + 1);
	if (want)
		snprintf(w, sizeof(w), " offset=%llu:%s", rel + HEX_PREFIX_LEN, want);
	expect_bytes(s, HEX_PREFIX_LEN + n, status, want ? w : NULL,
		     want_events + HEX_PREFIX_EVENTS);
	free(s);
}

Test(hex, decodes_with_line_breaks)
{
	expect_text("0203\n02\r\n05\n", MSR_END, NULL, 2);
}

Test(hex, records)
{
	/* header G tid=12 extra=01 reg=07, continuation C reg=03, end push X,
	 * end, then ASI_READ written as hex (never a record in hex) */
	expect_text("ff0012G01071122334455667788\nC03000000000000ffff\nfe\n"
		    "ff0001X00999000000000000000a\nfe\n"
		    "430300010203040506070809101112131415\n0201\n",
		    MSR_END, NULL, 7);
}

Test(hex, malformed)
{
	expect_hex("02zz", MSR_E_FORMAT,
		   " malformed hex: expected a lowercase hex digit, got 'z' (0x7a)", 2, 0);
	expect_hex("0203020G", MSR_E_FORMAT,
		   " malformed hex: expected a lowercase hex digit, got 'G' (0x47)", 7, 1);
	expect_hex("02030C", MSR_E_FORMAT,
		   " malformed hex: expected a lowercase hex digit, got 'C' (0x43)", 5, 1);
	expect_hex("ff12a4G", MSR_E_FORMAT,
		   " malformed hex: expected a decimal digit, got 'a' (0x61)", 4, 0);
}

Test(hex, record_without_open_delta)
{
	expect_hex("0203F01", MSR_E_FORMAT,
		   " malformed hex: expected a hex digit (register-delta record type "
		    "letters only follow an open delta), got 'F' (0x46)", 4, 1);
}

Test(hex, truncated)
{
	expect_hex("020321010000", MSR_E_TRUNCATED,
		   " truncated message code=0x21: expected 17 bytes, got 4", 4, 1);
	expect_hex("02030", MSR_E_TRUNCATED,
		   " truncated hex byte: input ends inside the record", 4, 1);
	expect_hex("ff0012G0107112233", MSR_E_TRUNCATED,
		   " truncated register-delta header record: input ends inside the "
		    "record", 0, 0);
}

Test(hex, unknown_code)
{
	expect_hex("020305", MSR_E_FORMAT,
		   " unknown message code=0x05", 4, 1);
}

Test(hex, uppercase_digits_are_not_hex)
{
	char msg[512];
	uint64_t n;
	char *path = tt_tmpfile(".hex");

	tt_write_file(path, "02AB", 4); /* 'A' is not in the hex alphabet: binary */
	cr_assert_eq(decode_all(path, true, msg, sizeof(msg), &n), MSR_E_TRUNCATED);
	cr_assert(strstr(msg, "truncated message code=0x30") != NULL, "%s", msg);
	unlink(path);
	free(path);
}

/* ---- text ---- */

#define HDR "# msync-text 1\n"

Test(text, comments_and_blank_lines)
{
	expect_text(HDR "\n# comment\n   \nSSTEP tnum=1  # trailing\n\tSSTEP\ttnum=0x3f\r\n",
		    MSR_END, NULL, 2);
}

Test(text, fields_any_order_and_short_hex)
{
	expect_text(HDR "ST_ACK ts=7 rmo=0 tnum=2\nLD_FILL tnum=1 pa=0x40 ts=0x10\n",
		    MSR_END, NULL, 2);
}

Test(text, bad_header)
{
	expect_text("# msync-text 2\nSSTEP tnum=1\n", MSR_E_FORMAT,
		    ":1:1: bad header: expected '# msync-text 1' as the first line", 0);
}

Test(text, unknown_name)
{
	expect_text(HDR "SSTEP tnum=1\n  FOO tnum=1\n", MSR_E_FORMAT,
		    ":3:3: unknown message name 'FOO'", 1);
	expect_text(HDR "IHWTW tnum=1\n", MSR_E_FORMAT,
		    ":2:1: unknown message name 'IHWTW': write non-memory messages as MSG "
		    "code=0x.. bytes=...", 0);
}

Test(text, missing_unknown_duplicate_field)
{
	expect_text(HDR "ST_ACK tnum=1 rmo=0\n", MSR_E_FORMAT,
		    ":2:20: missing field ts in ST_ACK", 0);
	expect_text(HDR "ST_ACK tnum=1 rmo=0 ts=1 foo=2\n", MSR_E_FORMAT,
		    ":2:26: unknown field foo in ST_ACK", 0);
	expect_text(HDR "ST_ACK tnum=1 tnum=2 rmo=0 ts=1\n", MSR_E_FORMAT,
		    ":2:15: duplicate field tnum in ST_ACK", 0);
	expect_text(HDR "ST_ACK tnum=1 rmo ts=1\n", MSR_E_FORMAT,
		    ":2:15: expected key=value, got 'rmo'", 0);
}

Test(text, bad_numbers)
{
	expect_text(HDR "LD_FILL tnum=1 pa=0x4g ts=1\n", MSR_E_FORMAT,
		    ":2:19: bad number pa=0x4g: expected 0x and hex digits", 0);
	expect_text(HDR "LD_FILL tnum=1 pa=64 ts=1\n", MSR_E_FORMAT,
		    ":2:19: bad number pa=64: expected 0x and hex digits", 0);
	expect_text(HDR "LD_FILL tnum=1 pa=0x40 ts=1x\n", MSR_E_FORMAT,
		    ":2:27: bad number ts=1x: expected a decimal or 0x-hex number", 0);
	expect_text(HDR "LD_FILL tnum=1 pa=0x10000000000 ts=1\n", MSR_E_FORMAT,
		    ":2:19: number out of range pa=0x10000000000: expected at most 0xffffffffff", 0);
	expect_text(HDR "LD_FILL tnum=1 pa=0x40 ts=4294967296\n", MSR_E_FORMAT,
		    ":2:27: number out of range ts=4294967296: expected at most 0xffffffff", 0);
	expect_text(HDR "LD_FILL tnum=1 pa=0x40 ts=99999999999999999999999\n", MSR_E_FORMAT,
		    ":2:27: number out of range ts=99999999999999999999999: expected at most "
		    "0xffffffff", 0);
}

Test(text, range_checks)
{
	expect_text(HDR "SSTEP tnum=64\n", MSR_E_FORMAT,
		    ":2:12: strand out of range tnum=64: expected tnum < 64", 0);
	expect_text(HDR "EVICT_INV cid=8 bank=0 ts=1\n", MSR_E_FORMAT,
		    ":2:15: bad cid=8: expected cid < 8", 0);
	expect_text(HDR "EVICT_INV cid=1 bank=9 ts=1\n", MSR_E_FORMAT,
		    ":2:22: bad bank=9: expected bank < 8", 0);
}

Test(text, bad_enum_names)
{
	expect_text(HDR "LD_DATA tnum=1 pa=0x0 dsrc=L3 ts=1\n", MSR_E_FORMAT,
		    ":2:28: bad dsrc=L3: expected STB, L1 or L2", 0);
	expect_text(HDR "LD_ISSUE tnum=1 pa=0x0 size=3 itype=load ts=1\n", MSR_E_FORMAT,
		    ":2:37: bad itype=load: expected NONE, LOAD, BLOCK_LOAD, DOUBLE_LOAD, "
		    "QUAD_LOAD, PREFETCH, STORE, BLOCK_STORE, ATOMIC or BLK_INIT_ST", 0);
}

Test(text, msg_errors)
{
	expect_text(HDR "MSG code=0x05 bytes=00\n", MSR_E_FORMAT,
		    ":2:10: unknown message code=0x05", 0);
	expect_text(HDR "MSG code=0x02 bytes=00\n", MSR_E_FORMAT,
		    ":2:10: message code=0x02 is a memory message: write it as SSTEP with its "
		    "fields", 0);
	expect_text(HDR "MSG code=0x13 bytes=0000\n", MSR_E_FORMAT,
		    ":2:21: bad bytes: expected 5 bytes (10 hex digits), got 4 hex digits", 0);
	expect_text(HDR "MSG code=0x13\n", MSR_E_FORMAT,
		    ":2:14: missing field bytes in MSG", 0);
	expect_text(HDR "MSG code=0x13 bytes=4000000001\n", MSR_E_FORMAT,
		    ":2:21: strand out of range tnum=64 in ITLBREAD: expected tnum < 64", 0);
	expect_text(HDR "MSG code=0x01\nMSG code=0x13 bytes=0100000001 # ITLBREAD\n",
		    MSR_END, NULL, 2);
}

Test(text, regdelta_framing)
{
	expect_text(HDR "REGDELTA type=G extra=1 reg=2 value=0x1\n", MSR_E_FORMAT,
		    ":2:1: register-delta continuation record without an open delta: give it "
		    "tid= to make it a header record", 0);
	expect_text(HDR "REGDELTA tid=1 type=F reg=2 value=0x1\nREGDELTA tid=1 type=F reg=2 "
		    "value=0x1\n", MSR_E_FORMAT,
		    ":3:1: register-delta header while a delta is open: end the delta with "
		    "REGDELTA_END first", 1);
	expect_text(HDR "REGDELTA_END\n", MSR_E_FORMAT,
		    ":2:1: REGDELTA_END without an open register delta", 0);
	expect_text(HDR "REGDELTA tid=1 type=F reg=2 value=0x1\nMSG code=0x43 bytes="
		    "000000000000000000000000000000000000\n", MSR_E_FORMAT,
		    ":3:10: message code=0x43 (ASI_READ) cannot follow an open register delta: "
		    "its code byte would be read as a register-delta record; close the delta "
		    "with REGDELTA_END first", 1);
	expect_text(HDR "REGDELTA tid=1 type=F extra=1 reg=2 value=0x1\n", MSR_E_FORMAT,
		    ":2:23: unknown field extra in REGDELTA", 0);
	expect_text(HDR "REGDELTA tid=1 type=Q reg=2 value=0x1\n", MSR_E_FORMAT,
		    ":2:21: bad type=Q: expected G, W, X, F or C", 0);
	expect_text(HDR "REGDELTA tid=1 type=F reg=2 value=0x1\nREGDELTA type=C reg=1 "
		    "value=0x0\nREGDELTA_END\nMSG code=0x43 bytes="
		    "000000000000000000000000000000000000\n", MSR_END, NULL, 4);
}

Test(text, mem_check_payload)
{
	char line[400];

	snprintf(line, sizeof(line), HDR "MEM_CHECK pa=0x40 data=0x%0128d\n", 1);
	expect_text(line, MSR_END, NULL, 1);
	snprintf(line, sizeof(line), HDR "MEM_CHECK pa=0x40 data=0x%0129d\n", 1);
	expect_text(line, MSR_E_FORMAT,
		    ":2:24: bad data: expected 64 bytes (128 hex digits), got 129 hex digits", 0);
}

Test(text, long_line)
{
	size_t n = 5000;
	char *s = malloc(n + 32);

	strcpy(s, HDR "#");
	memset(s + strlen(s), 'x', n);
	strcpy(s + strlen(HDR) + 1 + n, "\n");
	expect_text(s, MSR_E_FORMAT, ":2:1: line too long: more than 4096 bytes", 0);
	free(s);
}

Test(text, line_and_offset)
{
	char *path = tt_tmpfile(".txt");
	static const char t[] = HDR "\nSSTEP tnum=1\n  SSTEP tnum=2";
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event ev;

	tt_write_file(path, t, strlen(t));
	cr_assert_eq(msr_trace_reader_open(path, NULL, &r, &err), MSR_OK);
	cr_assert_eq(msr_trace_reader_format(r), MSR_FMT_TEXT);
	cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_OK);
	cr_assert_eq(ev.line, 3);
	cr_assert_eq(ev.offset, 16);
	cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_OK);
	cr_assert_eq(ev.line, 4);
	cr_assert_eq(ev.offset, 29);
	cr_assert_eq(ev.tnum, 2);
	cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_END);
	msr_trace_reader_close(r);
	unlink(path);
	free(path);
}

/* ---- writer ---- */

Test(writer, open_fails)
{
	struct msr_trace_writer *w;
	struct msr_error err = MSR_ERROR_INIT;
	char msg[512];

	cr_assert_eq(msr_trace_writer_open("/nonexistent/dir/out.bin", MSR_FMT_BINARY, 0, &w, &err),
		     MSR_E_IO);
	cr_assert_str_eq(msr_error_format(&err, msg, sizeof(msg)),
			 "/nonexistent/dir/out.bin: cannot open for writing: No such file or directory");
	cr_assert_eq(msr_trace_writer_open("x", MSR_FMT_AUTO, 0, &w, &err), MSR_E_USAGE);
}

Test(writer, hex_cannot_hold_large_register_numbers)
{
	char *path = tt_tmpfile(".hex");
	struct msr_trace_writer *w;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event e = {0};
	char msg[512], got[512];

	e.code = MSR_REGDELTA;
	e.flags = MSR_EVF_RD_HEADER;
	e.rd_type = 'F';
	e.rd_reg = 100;
	cr_assert_eq(msr_trace_writer_open(path, MSR_FMT_HEX, 0, &w, &err), MSR_OK);
	cr_assert_eq(msr_trace_writer_put(w, &e, &err), MSR_E_FORMAT);
	snprintf(msg, sizeof(msg), "%s: register-delta record tid=0 extra=0 reg=100 cannot be "
		 "written in the hex-text variant: it holds tid <= 9999, extra and reg <= 99", path);
	cr_assert_str_eq(msr_error_format(&err, got, sizeof(got)), msg);
	e.rd_type = 'X';
	e.rd_reg = 0xE7; /* the end push is written as 999 */
	cr_assert_eq(msr_trace_writer_put(w, &e, &err), MSR_OK);
	e.code = 0x46;
	cr_assert_eq(msr_trace_writer_put(w, &e, &err), MSR_E_USAGE);
	cr_assert_eq(msr_trace_writer_close(w, &err), MSR_OK);
	unlink(path);
	free(path);
}

Test(writer, close_null_is_ok)
{
	struct msr_error err = MSR_ERROR_INIT;

	cr_assert_eq(msr_trace_writer_close(NULL, &err), MSR_OK);
	msr_trace_reader_close(NULL);
}
