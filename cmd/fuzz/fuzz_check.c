/*
 * fuzz_check.c - libFuzzer target: arbitrary bytes through the whole of
 * `msync-replay check` (decoder, engine, TSO pass, report writer).
 *
 * The input is a trace, optionally followed by the line "%%steps%%" and a
 * step log (so the seeds can be readable text files and the fuzzer can
 * mutate either part), and optionally by the line "%%opts%%" and a byte
 * whose bits pick options from fuzz_opts (filters, context, --no-tso,
 * --fail-fast, ...). It is checked twice, with --single-thread and with
 * the default wiring (second thread, decompression helpers); the
 * properties: both exit with the same code, 0, 1 or 2; both write a report
 * that reads back (msr_report_doc_load_mem); the two reports are the same
 * apart from their timings; and, unless a filter or --fail-fast is
 * picked, the report is complete exactly when the exit code is not 2 and
 * lists violations exactly when it is 1. A violated property aborts,
 * which is what libFuzzer reports.
 */
#define _GNU_SOURCE
#include "cmd.h"
#include "fuzz-check.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char fuzz_sep[] = "\n%%steps%%\n";
static const char fuzz_opts_sep[] = "\n%%opts%%\n";

/* Bit i of the options byte adds fuzz_opts[i]. */
#define OPT_FAIL_FAST 0x02
#define OPT_FILTERS 0xe0
static const char *const fuzz_opts[8][3] = {
	{"--no-tso"},
	{"--fail-fast"},
	{"--context", "0"},
	{"--context-before", "64", "--context-after=64"},
	{"--max-violations", "1"},
	{"--strand", "0-3,9"},
	{"--cycles", "100:"},
	{"--pa", "0x1000:0x10000fff"},
};

/* An anonymous file holding `n` bytes of `d`. */
static int mem_file(const void *d, size_t n)
{
	int fd = memfd_create("fuzz", 0);

	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(!n || write(fd, d, n) == (ssize_t)n);
	return fd;
}

/* The file's bytes, with the timing lines (different on every run) cut. */
static char *report_text(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *buf, *w, *r;

	FUZZ_CHECK(size > 0); /* a report is always written */
	buf = malloc((size_t)size + 1);
	FUZZ_CHECK(buf && pread(fd, buf, (size_t)size, 0) == size);
	buf[size] = '\0';
	for (r = w = buf; *r;) {
		char *eol = strchr(r, '\n');
		size_t n = eol ? (size_t)(eol - r) + 1 : strlen(r);

		if (strncmp(r, "  elapsed_seconds: ", 19) &&
		    strncmp(r, "  events_per_second: ", 21)) {
			memmove(w, r, n);
			w += n;
		}
		r += n;
	}
	*w = '\0';
	return buf;
}

static int run_check(const char *trace, const char *steps, unsigned opts,
		     bool single, int out)
{
	char path[64];
	char *argv[40];
	int argc = 0;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", out);
	argv[argc++] = "check";
	argv[argc++] = "-q";
	argv[argc++] = "--no-progress";
	argv[argc++] = "-o";
	argv[argc++] = path;
	if (single)
		argv[argc++] = "--single-thread";
	for (unsigned i = 0; i < 8; i++)
		for (unsigned k = 0; k < 3 && (opts >> i & 1) && fuzz_opts[i][k]; k++)
			argv[argc++] = (char *)fuzz_opts[i][k];
	if (steps) {
		argv[argc++] = "--steps";
		argv[argc++] = (char *)steps;
	}
	argv[argc++] = (char *)trace;
	argv[argc] = NULL;
	return msr_cmd_check(argc, argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *osep = memmem(data, size, fuzz_opts_sep, sizeof(fuzz_opts_sep) - 1);
	unsigned opts = 0;
	const uint8_t *sep;
	size_t tlen;
	int tfd, sfd = -1, out[2], rc[2];
	char tpath[64], spath[64];
	char *text[2];
	struct msr_report_doc *doc[2];

	if (osep) {
		const uint8_t *o = osep + sizeof(fuzz_opts_sep) - 1;

		opts = o < data + size ? *o : 0;
		size = (size_t)(osep - data);
	}
	sep = memmem(data, size, fuzz_sep, sizeof(fuzz_sep) - 1);
	tlen = sep ? (size_t)(sep - data) : size;
	if (fuzz_huge_window(data, tlen))
		return 0;
	tfd = mem_file(data, tlen);
	snprintf(tpath, sizeof(tpath), "/proc/self/fd/%d", tfd);
	if (sep) {
		const uint8_t *s = sep + sizeof(fuzz_sep) - 1;
		size_t slen = size - (size_t)(s - data);

		if (fuzz_huge_window(s, slen)) {
			close(tfd);
			return 0;
		}
		sfd = mem_file(s, slen);
		snprintf(spath, sizeof(spath), "/proc/self/fd/%d", sfd);
	}
	for (int i = 0; i < 2; i++) {
		struct msr_error err = MSR_ERROR_INIT;

		out[i] = mem_file("", 0);
		rc[i] = run_check(tpath, sep ? spath : NULL, opts, i == 0, out[i]);
		FUZZ_CHECK(rc[i] == MSR_EXIT_CLEAN || rc[i] == MSR_EXIT_VIOLATIONS ||
			   rc[i] == MSR_EXIT_UNUSABLE);
		text[i] = report_text(out[i]);
		FUZZ_CHECK(msr_report_doc_load_mem("report", text[i], strlen(text[i]),
						   &doc[i], &err) == MSR_OK);
	}
	FUZZ_CHECK(rc[0] == rc[1]);
	FUZZ_CHECK(strcmp(text[0], text[1]) == 0);
	FUZZ_CHECK(msr_report_doc_violations(doc[0]) == msr_report_doc_violations(doc[1]));
	if (!(opts & (OPT_FAIL_FAST | OPT_FILTERS))) {
		FUZZ_CHECK(msr_report_doc_complete(doc[0]) == (rc[0] != MSR_EXIT_UNUSABLE));
		FUZZ_CHECK(rc[0] == MSR_EXIT_UNUSABLE ||
			   (msr_report_doc_listed(doc[0]) > 0) == (rc[0] == MSR_EXIT_VIOLATIONS));
	}
	for (int i = 0; i < 2; i++) {
		msr_report_doc_free(doc[i]);
		free(text[i]);
		close(out[i]);
	}
	close(tfd);
	if (sfd >= 0)
		close(sfd);
	return 0;
}
