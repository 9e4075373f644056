/*
 * test_steplog_forms.c - every spelling of a step line that the step-log
 * format allows (tabs, runs of blanks, 0x prefixes, upper-case hex, leading
 * zeros, trailing comments, CRLF) reads as the same step as its plain form.
 * The reader parses plain lines on a fast path and the others with its
 * general parser; these tests keep the two in agreement.
 */
#include "trace.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];
static int nfile;

static void setup(void)
{
	strcpy(tmpdir, "/tmp/msr-stepform-XXXXXX");
	cr_assert(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(steplog_forms, .init = setup, .fini = teardown);

/* Read the single step line `line` (after the header) of strand `tnum`. */
static void read_one(const char *line, unsigned tnum, struct msr_step *s)
{
	char path[128];
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/s%d.log", tmpdir, nfile++);
	f = fopen(path, "w");
	cr_assert(f);
	fprintf(f, "# msync-steps 1\n%s\n", line);
	fclose(f);
	cr_assert_eq(msr_steplog_open(path, 64, 0, &log, &err), MSR_OK);
	memset(s, 0xa5, sizeof(*s));
	if (msr_steplog_next(log, tnum, s, &err) != MSR_OK) {
		char msg[600];

		cr_assert_fail("line '%s': %s", line,
			       msr_error_format(&err, msg, sizeof(msg)));
	}
	msr_steplog_close(log);
}

static void assert_same(const struct msr_step *a, const struct msr_step *b,
			const char *line)
{
	cr_assert_eq(a->tnum, b->tnum, "tnum of '%s'", line);
	cr_assert_eq(a->pc, b->pc, "pc of '%s'", line);
	cr_assert_eq(a->op, b->op, "op of '%s'", line);
	cr_assert_eq(a->pa, b->pa, "pa of '%s'", line);
	cr_assert_eq(a->size, b->size, "size of '%s'", line);
	cr_assert_eq(a->mask, b->mask, "mask of '%s'", line);
	/* an explicit size= of a fixed-size op is the only field that may
	 * be present in one spelling and not the other */
	cr_assert_eq(a->has & ~MSR_STEP_HAS_SIZE, b->has & ~MSR_STEP_HAS_SIZE,
		     "fields of '%s'", line);
	cr_assert_eq(a->ld_len, b->ld_len, "ld length of '%s'", line);
	cr_assert_eq(a->st_len, b->st_len, "st length of '%s'", line);
	cr_assert_eq(memcmp(a->ld, b->ld, a->ld_len), 0, "ld of '%s'", line);
	cr_assert_eq(memcmp(a->st, b->st, a->st_len), 0, "st of '%s'", line);
}

struct form_case {
	char plain[200];
	char variants[6][200];
	unsigned tnum;
};

static const struct form_case cases[] = {
	{"7 4000a0 ld pa=1000a048 size=8 ld=0123456789abcdef",
	 {"7\t4000a0\tld\tpa=1000a048\tsize=8\tld=0123456789abcdef",
	  "  7   0x4000a0  ld  pa=0x1000a048 size=8 ld=0x0123456789ABCDEF",
	  "007 00004000a0 ld pa=001000a048 size=08 ld=0123456789abcdef",
	  "7 4000A0 ld pa=1000A048 size=8 ld=0123456789ABCDEF # comment",
	  "7 4000a0 ld size=8 ld=0123456789abcdef pa=1000a048",
	  "7 4000a0 ld pa=1000a048 size=8 ld=0123456789abcdef\r"},
	 7},
	{"63 ffffffffffffffff st pa=ffffffffff size=1 st=7f",
	 {"63 0xFFFFFFFFFFFFFFFF st pa=0xFFFFFFFFFF size=1 st=0x7F",
	  "63 ffffffffffffffff st st=7f pa=ffffffffff size=01",
	  "63\t ffffffffffffffff \t st pa=ffffffffff size=1 st=7f  ",
	  "", "", ""},
	 63},
	{"0 100000 membar mask=f",
	 {"0 100000 membar mask=0xF", "0 100000 membar mask=0000000f",
	  "0 0x100000 membar   mask=F   #x", "", "", ""},
	 0},
	{"12 c00 ldblk pa=10000040 ld=00112233445566778899aabbccddeeff"
	 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	 "00112233445566778899aabbccddeeff",
	 {"12 c00 ldblk pa=10000040 size=64 ld=00112233445566778899aabbccddeeff"
	  "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	  "00112233445566778899aabbccddeeff",
	  "", "", "", "", ""},
	 12},
	{"3 88 cas pa=10000008 size=8 ld=0000000000000001 st=0000000000000002",
	 {"3 88 cas pa=10000008 size=8 st=0000000000000002 ld=0000000000000001",
	  "3 0x88 cas pa=0x10000008 size=8 ld=0x0000000000000001 st=0x0000000000000002",
	  "", "", "", ""},
	 3},
	{"5 44 nop", {"5\t44\tnop", "5 0x44 nop # idle", "005 044 nop", "", "", ""}, 5},
};

Test(steplog_forms, variants_read_as_the_plain_line)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct msr_step plain, v;

		read_one(cases[c].plain, cases[c].tnum, &plain);
		cr_assert_eq(plain.tnum, cases[c].tnum);
		for (size_t k = 0; k < 6 && cases[c].variants[k][0]; k++) {
			read_one(cases[c].variants[k], cases[c].tnum, &v);
			assert_same(&plain, &v, cases[c].variants[k]);
		}
	}
}

/* The values of the plain line itself, so both paths are not wrong alike. */
Test(steplog_forms, plain_values)
{
	struct msr_step s;
	static const uint8_t ld[8] = {0x01, 0x23, 0x45, 0x67,
				      0x89, 0xab, 0xcd, 0xef};

	read_one(cases[0].plain, 7, &s);
	cr_assert_eq(s.pc, 0x4000a0);
	cr_assert_eq(s.op, MSR_STEP_LD);
	cr_assert_eq(s.pa, 0x1000a048);
	cr_assert_eq(s.size, 8);
	cr_assert_eq(s.ld_len, 8);
	cr_assert_eq(memcmp(s.ld, ld, 8), 0);
	read_one(cases[1].plain, 63, &s);
	cr_assert_eq(s.pc, 0xffffffffffffffffull);
	cr_assert_eq(s.pa, 0xffffffffffull);
	cr_assert_eq(s.st_len, 1);
	cr_assert_eq(s.st[0], 0x7f);
	read_one(cases[2].plain, 0, &s);
	cr_assert_eq(s.op, MSR_STEP_MEMBAR);
	cr_assert_eq(s.mask, 0xf);
	read_one(cases[3].plain, 12, &s);
	cr_assert_eq(s.size, 64);
	cr_assert_eq(s.ld_len, 64);
	cr_assert_eq(s.ld[63], 0xff);
}

/* The bytes of the hex string h (2 * n digits) into out. */
static void hex_to_bytes(const char *h, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++) {
		char pair[3] = {h[2 * i], h[2 * i + 1], 0};

		out[i] = (uint8_t)strtoul(pair, NULL, 16);
	}
}

/*
 * Every digit count of every hex field, read on the fast path (lines far
 * from the end of the block, as in a real log) and again through the
 * general parser (the same line with a comment), against the values
 * worked out here.
 */
Test(steplog_forms, every_digit_count_on_both_paths)
{
	static const char digits[] = "FeDcBa9876543210aBcDeF0123456789"
				     "0123456789abcdefFEDCBA9876543210"
				     "13579bdf02468ace13579BDF02468ACE"
				     "fedcba9876543210FEDCBA9876543210"
				     "02468ace13579bdf02468ACE13579BDF";
	static const struct {
		const char *name;
		unsigned op, size;
		bool ld, st;
	} vals[] = {
		{"ld", MSR_STEP_LD, 1, true, false},
		{"ld", MSR_STEP_LD, 2, true, false},
		{"ld", MSR_STEP_LD, 4, true, false},
		{"ld", MSR_STEP_LD, 8, true, false},
		{"ldq", MSR_STEP_LDQ, 16, true, false},
		{"ldblk", MSR_STEP_LDBLK, 64, true, false},
		{"st", MSR_STEP_ST, 1, false, true},
		{"st", MSR_STEP_ST, 8, false, true},
		{"stblk", MSR_STEP_STBLK, 64, false, true},
		{"cas", MSR_STEP_CAS, 4, true, true},
		{"cas", MSR_STEP_CAS, 8, true, true},
	};
	struct msr_step want[64], a, b;
	char path[128], line[400];
	struct msr_steplog *log;
	struct msr_error err = MSR_ERROR_INIT;
	unsigned n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/digits.log", tmpdir);
	f = fopen(path, "w");
	cr_assert(f);
	fprintf(f, "# msync-steps 1\n");
	memset(want, 0, sizeof(want));
	for (unsigned d = 1; d <= 16; d++, n++) { /* pc */
		snprintf(line, sizeof(line), "%.*s", (int)d, digits);
		want[n].pc = strtoull(line, NULL, 16);
		want[n].op = MSR_STEP_NOP;
		fprintf(f, "1 %s nop\n1 %s nop # general\n", line, line);
	}
	for (unsigned d = 1; d <= 10; d++, n++) { /* pa */
		snprintf(line, sizeof(line), "%.*s", (int)d, digits + 7);
		want[n].pc = 4;
		want[n].pa = strtoull(line, NULL, 16);
		want[n].op = MSR_STEP_ST;
		want[n].size = 1;
		want[n].st_len = 1;
		want[n].st[0] = 0x5a;
		fprintf(f, "1 4 st pa=%s size=1 st=5a\n", line);
		fprintf(f, "1 4 st pa=%s size=1 st=5a # general\n", line);
	}
	for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]); v++, n++) {
		const char *ldh = digits + v, *sth = digits + 2 * v + 1;
		unsigned sz = vals[v].size;
		int len = snprintf(line, sizeof(line), "1 8 %s pa=40 size=%u",
				   vals[v].name, sz);

		if (vals[v].ld) {
			len += snprintf(line + len, sizeof(line) - (size_t)len,
					" ld=%.*s", (int)(2 * sz), ldh);
			hex_to_bytes(ldh, sz, want[n].ld);
			want[n].ld_len = (uint8_t)sz;
		}
		if (vals[v].st) {
			snprintf(line + len, sizeof(line) - (size_t)len,
				 " st=%.*s", (int)(2 * sz), sth);
			hex_to_bytes(sth, sz, want[n].st);
			want[n].st_len = (uint8_t)sz;
		}
		want[n].pc = 8;
		want[n].pa = 0x40;
		want[n].size = (uint8_t)sz;
		want[n].op = (uint8_t)vals[v].op;
		fprintf(f, "%s\n%s # general\n", line, line);
	}
	/* keep every line above far from the end of the block */
	for (unsigned i = 0; i < 300; i++)
		fprintf(f, "2 0 nop\n");
	fclose(f);
	cr_assert_eq(msr_steplog_open(path, 64, 0, &log, &err), MSR_OK);
	for (unsigned i = 0; i < n; i++) {
		cr_assert_eq(msr_steplog_next(log, 1, &a, &err), MSR_OK,
			     "step %u", i);
		cr_assert_eq(msr_steplog_next(log, 1, &b, &err), MSR_OK,
			     "step %u", i);
		snprintf(line, sizeof(line), "case %u", i);
		assert_same(&b, &a, line);
		want[i].tnum = 1;
		want[i].has = a.has;
		assert_same(&want[i], &a, line);
	}
	msr_steplog_close(log);
}
