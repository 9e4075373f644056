/*
 * test_gen_cli.c - the msync-gen command line: exit codes, the binary trace
 * read back through the trace reader (plain and zstd give the same events),
 * byte-identical output for a seed, one step line per SSTEP, the image and
 * sidecar files written.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace.h"

static char dir[256];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/msync-gen-cli-%d", (int)getpid());
	cr_assert_eq(mkdir(dir, 0700) == 0 || access(dir, W_OK) == 0, 1);
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		cr_log_warn("cannot remove %s", dir);
}

static int gen(const char *args)
{
	const char *root = getenv("MSR_BUILD_ROOT");
	char cmd[1024];
	int st;

	cr_assert_not_null(root, "MSR_BUILD_ROOT not set");
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/testdata/gen/msync-gen' %s "
		 ">out.txt 2>err.txt", dir, root, args);
	st = system(cmd);
	cr_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static char *slurp(const char *name, size_t *len)
{
	char path[300];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	cr_assert_not_null(f, "missing %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Read a trace; returns the event count, hashes the canonical text. */
static uint64_t read_trace(const char *name, uint64_t *hash, uint64_t *ssteps)
{
	struct msr_trace_opts opts;
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event ev;
	char path[300], buf[MSR_EVENT_TEXT_MAX];
	uint64_t n = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	msr_trace_opts_default(&opts);
	cr_assert_eq(msr_trace_reader_open(path, &opts, &r, &err), MSR_OK, "%s",
		     msr_error_format(&err, buf, sizeof(buf)));
	*hash = 0xcbf29ce484222325ull;
	*ssteps = 0;
	while ((rc = msr_trace_reader_next(r, &ev, &err)) == MSR_OK) {
		size_t len = msr_event_format_text(&ev, buf, sizeof(buf));

		for (size_t i = 0; i < len; i++)
			*hash = (*hash ^ (uint8_t)buf[i]) * 0x100000001b3ull;
		*ssteps += ev.code == MSR_SSTEP;
		n++;
	}
	cr_assert_eq(rc, MSR_END, "%s", msr_error_format(&err, buf, sizeof(buf)));
	msr_trace_reader_close(r);
	return n;
}

TestSuite(gen_cli, .init = setup, .fini = teardown);

Test(gen_cli, exit_codes)
{
	cr_assert_eq(gen("--help"), 0);
	cr_assert_eq(gen("--version"), 0);
	cr_assert_eq(gen("--events 10"), 2, "missing -o");
	cr_assert_eq(gen("-o t --bogus"), 2);
	cr_assert_eq(gen("-o t --cores 0"), 2);
	cr_assert_eq(gen("-o t --inject nosuch"), 2);
	cr_assert_eq(gen("-o t --program litmus:XYZ"), 2);
	cr_assert_eq(gen("-o t --mix ld=1,zz=2"), 2);
	cr_assert_eq(gen("-o /nonexistent/dir/t --events 10"), 2);
}

Test(gen_cli, trace_reads_back_plain_and_zstd_alike)
{
	uint64_t h1, h2, s1, s2, n1, n2;

	cr_assert_eq(gen("-o t.trace --seed 4 --events 20000 --other-rate 0.02 -q"), 0);
	cr_assert_eq(gen("-o t.trace.zst --seed 4 --events 20000 --other-rate 0.02 -q"), 0);
	n1 = read_trace("t.trace", &h1, &s1);
	n2 = read_trace("t.trace.zst", &h2, &s2);
	cr_assert_geq(n1, 20000);
	cr_assert_eq(n1, n2);
	cr_assert_eq(h1, h2);
	cr_assert_gt(s1, 0);
}

Test(gen_cli, same_seed_same_files_and_one_step_line_per_sstep)
{
	size_t l1, l2, ls;
	char *a, *b, *steps;
	uint64_t h, ss, lines = 0;

	cr_assert_eq(gen("-o a.trace --steps a.steps --seed 8 --events 15000 -q"), 0);
	cr_assert_eq(gen("-o b.trace --steps b.steps --seed 8 --events 15000 -q"), 0);
	a = slurp("a.trace", &l1);
	b = slurp("b.trace", &l2);
	cr_assert(l1 == l2 && !memcmp(a, b, l1), "traces differ for one seed");
	free(a);
	free(b);
	a = slurp("a.steps", &l1);
	b = slurp("b.steps", &l2);
	cr_assert(l1 == l2 && !memcmp(a, b, l1), "step logs differ for one seed");
	free(b);
	steps = a;
	ls = l1;
	cr_assert_eq(strncmp(steps, "# msync-steps 1\n", 16), 0);
	for (size_t i = 16; i < ls; i++)
		lines += steps[i] == '\n';
	read_trace("a.trace", &h, &ss);
	cr_assert_eq(lines, ss, "step lines=%llu SSTEPs=%llu",
		     (unsigned long long)lines, (unsigned long long)ss);
	free(steps);
}

Test(gen_cli, image_and_sidecar_written)
{
	size_t n;
	char *img, *side;

	cr_assert_eq(gen("-o t.trace --image m.img --expect e.yaml --events 20000 "
			 "--footprint 4k --inject load-value@100 --inject membar@200 -q"), 0);
	img = slurp("m.img", &n);
	cr_assert_not_null(strstr(img, "\n@0010000000\n"));
	cr_assert_not_null(strstr(img, "\n@8000000000\n"));
	free(img);
	side = slurp("e.yaml", &n);
	cr_assert_not_null(strstr(side, "kind: load-value"));
	cr_assert_not_null(strstr(side, "kind: tso-membar"));
	cr_assert_not_null(strstr(side, "injected: 2"));
	free(side);
}
