/*
 * fuzz_check.c - libFuzzer target: arbitrary bytes through the whole of
 * `msync-replay check` (decoder, engine, TSO pass, report writer).
 *
 * The input is a trace, optionally followed, in this order, by the line
 * "%%steps%%" and a step log, "%%config%%" and a YAML configuration
 * (--config), "%%image%%" and a memory image (--image), and "%%opts%%"
 * and a byte whose bits pick options from fuzz_opts (filters, context,
 * --no-tso, --fail-fast, ...); so the seeds can be readable text files and
 * the fuzzer can mutate any part. It is checked twice, with
 * --single-thread and with the default wiring (second thread,
 * decompression helpers); the properties: both exit with the same code,
 * 0, 1 or 2; both write a report that reads back
 * (msr_report_doc_load_mem), or, only when the configuration given is not
 * usable or puts an option out of range (exit 2), neither writes one; the
 * two reports are the same apart from their timings; and, unless a filter
 * or --fail-fast is picked, the report is complete exactly when the exit
 * code is not 2 and lists violations exactly when it is 1. A violated
 * property aborts, which is what libFuzzer reports.
 *
 * The configuration and the image are written as "cfg.yaml" and "img" to a
 * directory of their own, since a configuration names its memory images
 * relative to itself; a configuration holding '/' or '\\' (which YAML
 * could unescape to '/') is skipped, so that only those two files can be
 * read, never a device or a FIFO that would block.
 */
#define _GNU_SOURCE
#include "cmd.h"
#include "fuzz-check.h"
#include "report.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char fuzz_steps_sep[] = "\n%%steps%%\n";
static const char fuzz_config_sep[] = "\n%%config%%\n";
static const char fuzz_image_sep[] = "\n%%image%%\n";
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

/* The file's bytes, with the timing lines (different on every run) cut;
 * NULL when nothing was written. */
static char *report_text(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *buf, *w, *r;

	if (size == 0)
		return NULL;
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

/* The part of [*data, *data + *size) after the line `sep`, cut off the end;
 * NULL when there is no such line. */
static const uint8_t *cut_section(const uint8_t *data, size_t *size,
				  const char *sep, size_t *len)
{
	size_t n = strlen(sep);
	const uint8_t *at = memmem(data, *size, sep, n);

	if (!at)
		return NULL;
	*len = *size - (size_t)(at - data) - n;
	*size = (size_t)(at - data);
	return at + n;
}

/* An input part as a file: its fd (or -1 without it) and its path. */
struct part {
	int fd;
	char path[64];
};

static void part_open(struct part *p, const uint8_t *d, size_t n)
{
	p->fd = mem_file(d, n);
	snprintf(p->path, sizeof(p->path), "/proc/self/fd/%d", p->fd);
}

/* This process's directory for the configuration and the image. */
static char part_dir[32];

static void part_dir_remove(void)
{
	rmdir(part_dir);
}

/* `name` in part_dir, holding n bytes of d. */
static void part_file(struct part *p, const char *name, const uint8_t *d, size_t n)
{
	if (!part_dir[0]) {
		snprintf(part_dir, sizeof(part_dir), "/tmp/fuzz-check-XXXXXX");
		FUZZ_CHECK(mkdtemp(part_dir));
		atexit(part_dir_remove);
	}
	snprintf(p->path, sizeof(p->path), "%s/%s", part_dir, name);
	p->fd = open(p->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	FUZZ_CHECK(p->fd >= 0);
	FUZZ_CHECK(!n || write(p->fd, d, n) == (ssize_t)n);
}

static void part_close(struct part *p, bool remove)
{
	if (p->fd < 0)
		return;
	close(p->fd);
	if (remove)
		unlink(p->path);
}

static int run_check(const struct part *trace, const struct part *steps,
		     const struct part *config, const struct part *image,
		     unsigned opts, bool single, const struct part *out)
{
	char *argv[40];
	int argc = 0;

	argv[argc++] = "check";
	argv[argc++] = "-q";
	argv[argc++] = "--no-progress";
	argv[argc++] = "-o";
	argv[argc++] = (char *)out->path;
	if (single)
		argv[argc++] = "--single-thread";
	for (unsigned i = 0; i < 8; i++)
		for (unsigned k = 0; k < 3 && (opts >> i & 1) && fuzz_opts[i][k]; k++)
			argv[argc++] = (char *)fuzz_opts[i][k];
	if (steps->fd >= 0) {
		argv[argc++] = "--steps";
		argv[argc++] = (char *)steps->path;
	}
	if (config->fd >= 0) {
		argv[argc++] = "--config";
		argv[argc++] = (char *)config->path;
	}
	if (image->fd >= 0) {
		argv[argc++] = "--image";
		argv[argc++] = (char *)image->path;
	}
	argv[argc++] = (char *)trace->path;
	argv[argc] = NULL;
	return msr_cmd_check(argc, argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sec[4];
	size_t len[4] = {0, 0, 0, 0};
	unsigned opts = 0;
	int rc[2];
	char *text[2];
	struct msr_report_doc *doc[2] = {NULL, NULL};
	struct part trace, steps, config, image, out[2];

	/* sections from the last one back: opts, image, config, steps */
	sec[0] = cut_section(data, &size, fuzz_opts_sep, &len[0]);
	if (sec[0] && len[0])
		opts = sec[0][0];
	sec[1] = cut_section(data, &size, fuzz_image_sep, &len[1]);
	sec[2] = cut_section(data, &size, fuzz_config_sep, &len[2]);
	sec[3] = cut_section(data, &size, fuzz_steps_sep, &len[3]);
	if (fuzz_huge_window(data, size) || (sec[3] && fuzz_huge_window(sec[3], len[3])))
		return 0;
	if (sec[2] && (memchr(sec[2], '/', len[2]) || memchr(sec[2], '\\', len[2])))
		return 0;
	part_open(&trace, data, size);
	steps.fd = config.fd = image.fd = -1;
	if (sec[3])
		part_open(&steps, sec[3], len[3]);
	if (sec[2])
		part_file(&config, "cfg.yaml", sec[2], len[2]);
	if (sec[1])
		part_file(&image, "img", sec[1], len[1]);
	for (int i = 0; i < 2; i++) {
		struct msr_error err = MSR_ERROR_INIT;

		part_open(&out[i], NULL, 0);
		rc[i] = run_check(&trace, &steps, &config, &image, opts, i == 0,
				  &out[i]);
		FUZZ_CHECK(rc[i] == MSR_EXIT_CLEAN || rc[i] == MSR_EXIT_VIOLATIONS ||
			   rc[i] == MSR_EXIT_UNUSABLE);
		text[i] = report_text(out[i].fd);
		/* no report only for a configuration not usable (or options it
		 * makes out of range) */
		FUZZ_CHECK(text[i] || (rc[i] == MSR_EXIT_UNUSABLE && sec[2]));
		FUZZ_CHECK(!text[i] ||
			   msr_report_doc_load_mem("report", text[i], strlen(text[i]),
						   &doc[i], &err) == MSR_OK);
	}
	FUZZ_CHECK(rc[0] == rc[1]);
	FUZZ_CHECK(!text[0] == !text[1]);
	if (text[0]) {
		FUZZ_CHECK(strcmp(text[0], text[1]) == 0);
		FUZZ_CHECK(msr_report_doc_violations(doc[0]) ==
			   msr_report_doc_violations(doc[1]));
		if (!(opts & (OPT_FAIL_FAST | OPT_FILTERS))) {
			FUZZ_CHECK(msr_report_doc_complete(doc[0]) ==
				   (rc[0] != MSR_EXIT_UNUSABLE));
			FUZZ_CHECK(rc[0] == MSR_EXIT_UNUSABLE ||
				   (msr_report_doc_listed(doc[0]) > 0) ==
					   (rc[0] == MSR_EXIT_VIOLATIONS));
		}
	}
	for (int i = 0; i < 2; i++) {
		msr_report_doc_free(doc[i]);
		free(text[i]);
		part_close(&out[i], false);
	}
	part_close(&trace, false);
	part_close(&steps, false);
	part_close(&config, true);
	part_close(&image, true);
	return 0;
}
