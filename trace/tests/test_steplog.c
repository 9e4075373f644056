/*
 * test_steplog.c - unit tests of the ISS step-log reader: field parsing,
 * per-op rules, precise line:column errors, per-strand demultiplexing,
 * the lookahead bound and counting leftover lines.
 */
#include "trace.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

static char tmpdir[64];
static int nfile;

static void setup(void)
{
	strcpy(tmpdir, "/tmp/msr-steplog-XXXXXX");
	cr_assert(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(steplog, .init = setup, .fini = teardown);

/* Write `text` to a new file and open it as a step log. */
static int open_text(const char *text, size_t lookahead, struct msr_steplog **log,
		     struct msr_error *err, char *path)
{
	FILE *f;

	snprintf(path, 128, "%s/s%d.log", tmpdir, nfile++);
	f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
	return msr_steplog_open(path, 64, lookahead, log, err);
}

/* Parse a log whose first step line is expected to fail; return the error. */
static void expect_error(const char *body, const char *where_suffix,
			 const char *text_part)
{
	char text[512], path[128];
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_step s;
	int rc;

	snprintf(text, sizeof(text), "# msync-steps 1\n%s", body);
	cr_assert_eq(open_text(text, 0, &log, &err, path), MSR_OK);
	rc = msr_steplog_next(log, 0, &s, &err);
	cr_assert_eq(rc, MSR_E_FORMAT, "body '%s' gave rc=%d", body, rc);
	size_t wl = strlen(err.cause[0].where), sl = strlen(where_suffix);
	cr_assert(wl >= sl && !strcmp(err.cause[0].where + wl - sl, where_suffix),
		  "where '%s' does not end in '%s'", err.cause[0].where, where_suffix);
	cr_assert(strstr(err.cause[0].text, text_part), "text '%s' lacks '%s'",
		  err.cause[0].text, text_part);
	msr_steplog_close(log);
}

Test(steplog, parses_every_op)
{
	static const char text[] =
		"# msync-steps 1\n"
		"0 0x1000 nop\n"
		"0 1004 ld pa=0x102000 size=4 ld=deadbeef\n"
		"0 1008 ld pa=102008 size=8\n"
		"0 100c ldd pa=0x102010 ld=0011223344556677\n"
		"0 1010 ldq pa=0x102020 ld=00112233445566778899aabbccddeeff\n"
		"0 1014 st pa=0x102004 size=2 st=0x1234\n"
		"0 1018 stbi pa=0x103000 st=0102030405060708\n"
		"0 101c cas pa=0x104000 size=4 ld=00000000 st=00000001\n"
		"0 1020 cas pa=0x104000 size=8 ld=0000000000000001\n"
		"0 1024 swap pa=0x104008 ld=00000005 st=00000006\n"
		"0 1028 ldstub pa=0x104011 ld=00 st=ff\n"
		"0 102c membar mask=0x2\n"
		"0 1030 prefetch pa=0x105000\n";
	static const uint8_t ops[] = {
		MSR_STEP_NOP, MSR_STEP_LD, MSR_STEP_LD, MSR_STEP_LDD, MSR_STEP_LDQ,
		MSR_STEP_ST, MSR_STEP_STBI, MSR_STEP_CAS, MSR_STEP_CAS,
		MSR_STEP_SWAP, MSR_STEP_LDSTUB, MSR_STEP_MEMBAR, MSR_STEP_PREFETCH,
	};
	static const uint8_t sizes[] = {0, 4, 8, 8, 16, 2, 8, 4, 8, 4, 1, 0, 0};
	char path[128];
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_step s;
	uint64_t n;

	cr_assert_eq(open_text(text, 0, &log, &err, path), MSR_OK);
	for (size_t i = 0; i < sizeof(ops); i++) {
		cr_assert_eq(msr_steplog_next(log, 0, &s, &err), MSR_OK, "step %zu: %s",
			     i, err.cause[0].text);
		cr_assert_eq(s.op, ops[i], "step %zu op %u", i, s.op);
		cr_assert_eq(s.size, sizes[i], "step %zu size %u", i, s.size);
		cr_assert_eq(s.line, i + 2);
		cr_assert_eq(s.pc, 0x1000 + 4 * i);
	}
	cr_assert_eq(msr_steplog_next(log, 0, &s, &err), MSR_END);
	cr_assert_eq(msr_steplog_lines(log), sizeof(ops));
	cr_assert_eq(msr_steplog_remaining(log, 0, &n, &err), MSR_OK);
	cr_assert_eq(n, 0);
	msr_steplog_close(log);
}

Test(steplog, values_are_big_endian_and_flags_set)
{
	char path[128];
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_step s;
	static const uint8_t want[4] = {0xde, 0xad, 0xbe, 0xef};

	cr_assert_eq(open_text("# msync-steps 1\r\n"
			       "5 0x400 ld pa=0x102000 size=4 ld=deadbeef\r\n"
			       "5 0x404 cas pa=0x102000 size=4 ld=deadbeef\n"
			       "5 0x408 membar mask=0x0f # fence\n",
			       0, &log, &err, path), MSR_OK);
	cr_assert_eq(msr_steplog_next(log, 5, &s, &err), MSR_OK);
	cr_assert_eq(s.tnum, 5);
	cr_assert_eq(s.pa, 0x102000);
	cr_assert_eq(s.has, MSR_STEP_HAS_PA | MSR_STEP_HAS_SIZE | MSR_STEP_HAS_LD);
	cr_assert_eq(s.ld_len, 4);
	cr_assert_arr_eq(s.ld, want, 4);
	cr_assert_eq(msr_steplog_next(log, 5, &s, &err), MSR_OK);
	cr_assert_eq(s.op, MSR_STEP_CAS);
	cr_assert_not(s.has & MSR_STEP_HAS_ST, "failed cas has no st=");
	cr_assert_eq(msr_steplog_next(log, 5, &s, &err), MSR_OK);
	cr_assert_eq(s.mask, 0xf);
	cr_assert(s.has & MSR_STEP_HAS_MASK);
	msr_steplog_close(log);
}

Test(steplog, block_values_span_carry_buffer)
{
	char text[1024], path[128], hex[129];
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_step s;

	for (int i = 0; i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", i);
	snprintf(text, sizeof(text),
		 "# msync-steps 1\n# a comment\n\n  \n"
		 "1 0x10 ldblk pa=0x2000 ld=%s\n1 0x14 stblk pa=0x2040 st=%s\n",
		 hex, hex);
	cr_assert_eq(open_text(text, 0, &log, &err, path), MSR_OK);
	cr_assert_eq(msr_steplog_next(log, 1, &s, &err), MSR_OK, "%s", err.cause[0].text);
	cr_assert_eq(s.op, MSR_STEP_LDBLK);
	cr_assert_eq(s.size, 64);
	cr_assert_eq(s.line, 5);
	for (int i = 0; i < 64; i++)
		cr_assert_eq(s.ld[i], i);
	cr_assert_eq(msr_steplog_next(log, 1, &s, &err), MSR_OK, "%s", err.cause[0].text);
	cr_assert_eq(s.op, MSR_STEP_STBLK);
	cr_assert_eq(s.st[63], 63);
	msr_steplog_close(log);
}

Test(steplog, demultiplexes_strands_in_program_order)
{
	char path[128];
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_step s;
	uint64_t n;

	cr_assert_eq(open_text("# msync-steps 1\n"
			       "3 0x100 nop\n7 0x200 nop\n3 0x104 nop\n"
			       "7 0x204 nop\n7 0x208 nop\n3 0x108 nop\n9 0x300 nop\n",
			       0, &log, &err, path), MSR_OK);
	cr_assert_eq(msr_steplog_next(log, 7, &s, &err), MSR_OK);
	cr_assert_eq(s.pc, 0x200);
	cr_assert_eq(msr_steplog_next(log, 7, &s, &err), MSR_OK);
	cr_assert_eq(s.pc, 0x204);
	cr_assert_eq(msr_steplog_next(log, 3, &s, &err), MSR_OK);
	cr_assert_eq(s.pc, 0x100);
	cr_assert_eq(msr_steplog_next(log, 3, &s, &err), MSR_OK);
	cr_assert_eq(s.pc, 0x104);
	cr_assert_eq(msr_steplog_next(log, 7, &s, &err), MSR_OK);
	cr_assert_eq(s.pc, 0x208);
	cr_assert_eq(msr_steplog_next(log, 7, &s, &err), MSR_END);
	cr_assert_eq(msr_steplog_remaining(log, 3, &n, &err), MSR_OK);
	cr_assert_eq(n, 1);
	cr_assert_eq(msr_steplog_remaining(log, 9, &n, &err), MSR_OK);
	cr_assert_eq(n, 1);
	cr_assert_eq(msr_steplog_remaining(log, 7, &n, &err), MSR_OK);
	cr_assert_eq(n, 0);
	cr_assert_eq(msr_steplog_remaining(log, 0, &n, &err), MSR_OK);
	cr_assert_eq(n, 0);
	msr_steplog_close(log);
}

Test(steplog, lookahead_limit_is_a_clear_error)
{
	char path[128];
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_step s;

	cr_assert_eq(open_text("# msync-steps 1\n1 0 nop\n1 0 nop\n1 0 nop\n2 0 nop\n",
			       2, &log, &err, path), MSR_OK);
	cr_assert_eq(msr_steplog_next(log, 2, &s, &err), MSR_E_NOMEM);
	cr_assert(strstr(err.cause[0].text, "lookahead limit exceeded"), "%s",
		  err.cause[0].text);
	cr_assert(strstr(err.cause[0].where, ":4"), "%s", err.cause[0].where);
	msr_steplog_close(log);
}

Test(steplog, header_is_required)
{
	char path[128];
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_step s;

	cr_assert_eq(open_text("0 0x0 nop\n", 0, &log, &err, path), MSR_OK);
	cr_assert_eq(msr_steplog_next(log, 0, &s, &err), MSR_E_FORMAT);
	cr_assert(strstr(err.cause[0].text, "# msync-steps 1"));
	msr_steplog_close(log);
	cr_assert_eq(open_text("# msync-steps 2\n", 0, &log, &err, path), MSR_OK);
	cr_assert_eq(msr_steplog_next(log, 0, &s, &err), MSR_E_FORMAT);
	cr_assert(strstr(err.cause[0].text, "version=2"), "%s", err.cause[0].text);
	msr_steplog_close(log);
	cr_assert_eq(open_text("", 0, &log, &err, path), MSR_OK);
	cr_assert_eq(msr_steplog_next(log, 0, &s, &err), MSR_E_FORMAT);
	cr_assert(strstr(err.cause[0].text, "empty step log"));
	msr_steplog_close(log);
}

Test(steplog, missing_file_is_io_error)
{
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;

	cr_assert_eq(msr_steplog_open("/nonexistent/steps.log", 64, 0, &log, &err),
		     MSR_E_IO);
	cr_assert_null(log);
}

Test(steplog, precise_errors)
{
	expect_error("64 0x0 nop\n", ":2:1", "tnum=64 out of range");
	expect_error("x 0x0 nop\n", ":2:1", "bad decimal digit 'x'");
	expect_error("0\n", ":2:2", "missing pc");
	expect_error("0 0xg0 nop\n", ":2:5", "bad hex digit 'g'");
	expect_error("0 0x10\n", ":2:7", "missing op");
	expect_error("0 0x10 load pa=0\n", ":2:8", "unknown op 'load'");
	expect_error("0 0x10 ld size=4\n", ":2:8", "missing required field pa=");
	expect_error("0 0x10 ld pa=0x100\n", ":2:8", "missing required field size=");
	expect_error("0 0x10 st pa=0x100 size=4\n", ":2:8", "missing required field st=");
	expect_error("0 0x10 ld pa=0x100 size=3\n", ":2:20", "size=3 invalid for op=ld");
	expect_error("0 0x10 ld pa=0x102 size=4\n", ":2:11", "not aligned to size=4");
	expect_error("0 0x10 ld pa=0x100 size=4 ld=0011\n", ":2:27",
		     "ld= has 4 hex digits, expected 8 for size=4");
	expect_error("0 0x10 st pa=0x100 size=8 st=001\n", ":2:30", "even number");
	expect_error("0 0x10 ld pa=0x100 size=4 ld=0011223z\n", ":2:37",
		     "bad hex digit 'z' in ld=");
	expect_error("0 0x10 ld pa=0x100 pa=0x100 size=4\n", ":2:20", "duplicate field pa=");
	expect_error("0 0x10 ld pa=0x100 sz=4\n", ":2:20", "unknown field 'sz'");
	expect_error("0 0x10 ld pa=0x100 size\n", ":2:20", "expected key=value");
	expect_error("0 0x10 nop pa=0x100\n", ":2:12", "field pa= not allowed for op=nop");
	expect_error("0 0x10 ldd pa=0x100 size=4\n", ":2:21", "size=4 invalid for op=ldd");
	expect_error("0 0x10 ld pa=0x10000000000 size=1\n", ":2:14", "does not fit in 40 bits");
	expect_error("0 0x10 ld pa= size=1\n", ":2:14", "empty pa");
	expect_error("0 0x10 membar\n", ":2:8", "missing required field mask=");
	expect_error("0 0x10 ld pa=0x100 size=4 ld=00112233 st=00\n", ":2:39",
		     "field st= not allowed for op=ld");
}

Test(steplog, long_line_is_an_error)
{
	char *text = malloc(6000), path[128];
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_step s;

	strcpy(text, "# msync-steps 1\n0 0x0 nop ");
	memset(text + strlen(text), ' ', 5000);
	text[5026] = '\n';
	text[5027] = '\0';
	cr_assert_eq(open_text(text, 0, &log, &err, path), MSR_OK);
	cr_assert_eq(msr_steplog_next(log, 0, &s, &err), MSR_E_FORMAT);
	cr_assert(strstr(err.cause[0].text, "line longer"), "%s", err.cause[0].text);
	msr_steplog_close(log);
	free(text);
}

Test(steplog, last_line_without_newline)
{
	char path[128];
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_step s;

	cr_assert_eq(open_text("# msync-steps 1\n0 0x4 membar mask=2", 0, &log, &err,
			       path), MSR_OK);
	cr_assert_eq(msr_steplog_next(log, 0, &s, &err), MSR_OK);
	cr_assert_eq(s.mask, 2);
	cr_assert_eq(msr_steplog_next(log, 0, &s, &err), MSR_END);
	msr_steplog_close(log);
}

Test(steplog, op_names)
{
	cr_assert_str_eq(msr_step_op_name(MSR_STEP_LDSTUB), "ldstub");
	cr_assert_str_eq(msr_step_op_name(MSR_STEP_PREFETCH), "prefetch");
	cr_assert_null(msr_step_op_name(MSR_STEP_OP_COUNT));
}

Test(steplog, reads_zstd_logs)
{
	static const char text[] = "# msync-steps 1\n2 0x10 st pa=0x40 size=1 st=7f\n"
				   "1 0x20 nop\n2 0x14 ldstub pa=0x41 ld=00 st=ff\n";
	char path[128], comp[256];
	size_t n = ZSTD_compress(comp, sizeof(comp), text, sizeof(text) - 1, 3);
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_step s;
	FILE *f;

	cr_assert_not(ZSTD_isError(n));
	snprintf(path, sizeof(path), "%s/steps.zst", tmpdir);
	f = fopen(path, "wb");
	fwrite(comp, 1, n, f);
	fclose(f);
	cr_assert_eq(msr_steplog_open(path, 64, 0, &log, &err), MSR_OK);
	cr_assert_eq(msr_steplog_next(log, 2, &s, &err), MSR_OK, "%s", err.cause[0].text);
	cr_assert_eq(s.st[0], 0x7f);
	cr_assert_eq(msr_steplog_next(log, 2, &s, &err), MSR_OK);
	cr_assert_eq(s.op, MSR_STEP_LDSTUB);
	cr_assert_eq(s.line, 4);
	cr_assert_eq(msr_steplog_next(log, 1, &s, &err), MSR_OK);
	cr_assert_eq(s.op, MSR_STEP_NOP);
	msr_steplog_close(log);
}

/* Mutated logs (fixed seed): every outcome is a step, the end, or a format
 * error with a position; never a crash or another status. */
Test(steplog, mutated_logs_fail_cleanly)
{
	static const char base[] =
		"# msync-steps 1\n3 0x100 ld pa=0x102000 size=4 ld=deadbeef\n"
		"3 0x104 cas pa=0x104000 size=8 ld=0000000000000001 st=0000000000000002\n"
		"9 0x108 membar mask=0x2\n";
	static const char alphabet[] = "0123456789abcdefx =#\n\t\r-zpaldstmkqbc";
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	char text[256], path[128];

	for (int iter = 0; iter < 400; iter++) {
		struct msr_steplog *log;
		struct msr_error err = MSR_ERROR_INIT;
		struct msr_step s;
		int rc, guard = 0;

		memcpy(text, base, sizeof(base));
		for (int m = 0; m < 1 + iter % 4; m++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			text[16 + rng % (sizeof(base) - 17)] =
				alphabet[(rng >> 32) % (sizeof(alphabet) - 1)];
		}
		cr_assert_eq(open_text(text, 0, &log, &err, path), MSR_OK);
		for (unsigned t = 0; t < 64; t++) {
			while ((rc = msr_steplog_next(log, t, &s, &err)) == MSR_OK)
				cr_assert_lt(++guard, 10);
			if (rc != MSR_END)
				break;
		}
		cr_assert(rc == MSR_END || rc == MSR_E_FORMAT, "rc=%d for:\n%s", rc, text);
		if (rc == MSR_E_FORMAT)
			cr_assert(strchr(err.cause[0].where, ':'), "%s", err.cause[0].where);
		msr_steplog_close(log);
		unlink(path);
	}
}
