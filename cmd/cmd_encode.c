/*
 * cmd_encode.c - msync-replay encode: canonical text (or any other input
 * the reader accepts) back to the binary message stream, its hex-text
 * variant, or either one zstd-compressed.
 *
 * Only parses options and copies events from reader to writer. A failed
 * run removes its half-written output file (never standard output).
 */
#include "cmd-trace-internal.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char encode_help[] =
	"usage: msync-replay encode [options] TEXT -o OUT\n"
	"\n"
	"Turn TEXT (canonical text as printed by 'dump'; any input 'dump' reads is\n"
	"accepted; - = standard input) into the binary message stream the\n"
	"testbench writes. 'dump' then 'encode' reproduces the original bytes.\n"
	"\n"
	"options:\n"
	"  -o, --output OUT   output file (required; - = standard output)\n"
	"  --zstd             compress with zstd (implied when OUT ends in .zst)\n"
	"  --level N          zstd compression level, 1..19 (default 3)\n"
	"  --hex              write the hex-text variant (two hex digits per byte)\n"
	"  --cores N          cores of the system (default 8): cid must be < N\n"
	"  --threads N        threads per core (default 8): tnum must be < cores*N\n"
	MSR_CLI_SINGLE_THREAD_HELP
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0 written, 2 unusable input or usage error (the message names\n"
	"the file, line and column, and the field); a failed run leaves no output.\n";

enum { OPT_ZSTD = MSR_OPT_FIRST_LOCAL, OPT_LEVEL, OPT_HEX };

struct encode_opts {
	const char *in, *out;
	bool zstd, hex;
	int level;
	unsigned cores, threads;
	bool single_thread;
};

static int parse_args(int argc, char **argv, struct encode_opts *o)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"zstd", no_argument, NULL, OPT_ZSTD},
		{"level", required_argument, NULL, OPT_LEVEL},
		{"hex", no_argument, NULL, OPT_HEX},
		{"cores", required_argument, NULL, MSR_OPT_CORES},
		{"threads", required_argument, NULL, MSR_OPT_THREADS},
		{"single-thread", no_argument, NULL, MSR_OPT_SINGLE_THREAD},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	unsigned lvl;
	size_t n;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(encode_help, stdout);
			return 0;
		case 'o': o->out = optarg; break;
		case OPT_ZSTD: o->zstd = true; break;
		case OPT_HEX: o->hex = true; break;
		case OPT_LEVEL:
			if (!msr_cli_trace_size("encode", "--level", optarg, 19, &lvl))
				return MSR_EXIT_UNUSABLE;
			o->level = (int)lvl;
			break;
		case MSR_OPT_CORES:
			if (!msr_cli_trace_size("encode", "--cores", optarg, 32, &o->cores))
				return MSR_EXIT_UNUSABLE;
			break;
		case MSR_OPT_THREADS:
			if (!msr_cli_trace_size("encode", "--threads", optarg, 256, &o->threads))
				return MSR_EXIT_UNUSABLE;
			break;
		case MSR_OPT_SINGLE_THREAD: o->single_thread = true; break;
		case ':':
			return msr_cli_usage_error("encode", "option %s needs a value",
						   argv[optind - 1]);
		default:
			return msr_cli_usage_error("encode", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return msr_cli_usage_error("encode", optind == argc ? "missing TEXT argument"
								    : "too many arguments");
	o->in = argv[optind];
	if (!o->out)
		return msr_cli_usage_error("encode", "missing -o OUT");
	n = strlen(o->out);
	if (n > 4 && !strcmp(o->out + n - 4, ".zst"))
		o->zstd = true;
	return -1;
}

static int run(const struct encode_opts *o)
{
	struct msr_trace_opts topts;
	struct msr_trace_reader *r = NULL;
	struct msr_trace_writer *w = NULL;
	struct msr_error err = MSR_ERROR_INIT, err2 = MSR_ERROR_INIT;
	struct msr_event ev;
	int rc;

	if (!msr_cli_trace_opts("encode", o->cores, o->threads, &topts))
		return MSR_EXIT_UNUSABLE;
	rc = msr_trace_reader_open(o->in, &topts, &r, &err);
	if (rc)
		goto out;
	msr_cli_reader_ahead(r, o->single_thread);
	rc = msr_trace_writer_open(o->out, o->hex ? MSR_FMT_HEX : MSR_FMT_BINARY,
				   o->zstd ? o->level : 0, &w, &err);
	if (rc)
		goto out;
	while ((rc = msr_trace_reader_next(r, &ev, &err)) == MSR_OK) {
		rc = msr_trace_writer_put(w, &ev, &err);
		if (rc)
			break;
	}
	if (rc == MSR_END)
		rc = MSR_OK;
out:
	if (w && msr_trace_writer_close(w, &err2) && !rc) {
		err = err2;
		rc = err.status;
	}
	msr_trace_reader_close(r);
	if (rc < 0) {
		if (w && strcmp(o->out, "-") != 0)
			unlink(o->out);
		msr_cli_print_error(&err);
		return MSR_EXIT_UNUSABLE;
	}
	return MSR_EXIT_CLEAN;
}

int msr_cmd_encode(int argc, char **argv)
{
	struct encode_opts o = {.level = 3, .cores = 8, .threads = 8};
	int rc = parse_args(argc, argv, &o);

	return rc >= 0 ? rc : run(&o);
}
