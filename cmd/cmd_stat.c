/*
 * cmd_stat.c - msync-replay stat: counts per message code and per strand,
 * the ts span, bytes in and out, and the decode rate of one trace.
 *
 * Output is "key: value" lines (YAML-compatible), counts in fixed code and
 * strand order so runs compare with diff; only the timing lines (elapsed,
 * rates) vary between runs. Reads the trace once, in constant memory.
 */
#include "cmd-trace-internal.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char stat_help[] =
	"usage: msync-replay stat [options] TRACE\n"
	"\n"
	"Decode TRACE (any input 'dump' reads; - = standard input) and print:\n"
	"the detected format, events per message code (by name) and per strand,\n"
	"the ts span, bytes read (compressed) and decoded, register-delta records\n"
	"and how many of them had a type byte that is also a message code\n"
	"(regdelta_ambiguous), and the decode rate. On a decode error the counts\n"
	"up to that point are printed, then the error.\n"
	"\n"
	"options:\n"
	"  --cores N          cores of the system (default 8): cid must be < N\n"
	"  --threads N        threads per core (default 8): tnum must be < cores*N\n"
	MSR_CLI_SINGLE_THREAD_HELP
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0 the whole trace decoded, 2 unusable input or usage error.\n";

struct counts {
	uint64_t code[MSR_CODE_LIMIT];
	uint64_t strand[256];
	uint32_t ts_min, ts_max;
	bool have_ts;
};

static int parse_args(int argc, char **argv, const char **in, unsigned *cores,
		      unsigned *threads, bool *single_thread)
{
	static const struct option longopts[] = {
		{"cores", required_argument, NULL, MSR_OPT_CORES},
		{"threads", required_argument, NULL, MSR_OPT_THREADS},
		{"single-thread", no_argument, NULL, MSR_OPT_SINGLE_THREAD},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(stat_help, stdout);
			return 0;
		case MSR_OPT_CORES:
			if (!msr_cli_trace_size("stat", "--cores", optarg, 32, cores))
				return MSR_EXIT_UNUSABLE;
			break;
		case MSR_OPT_THREADS:
			if (!msr_cli_trace_size("stat", "--threads", optarg, 256, threads))
				return MSR_EXIT_UNUSABLE;
			break;
		case MSR_OPT_SINGLE_THREAD: *single_thread = true; break;
		case ':':
			return msr_cli_usage_error("stat", "option %s needs a value",
						   argv[optind - 1]);
		default:
			return msr_cli_usage_error("stat", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return msr_cli_usage_error("stat", optind == argc ? "missing TRACE argument"
								  : "too many arguments");
	*in = argv[optind];
	return -1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const char *format_name(enum msr_trace_format f)
{
	switch (f) {
	case MSR_FMT_HEX: return "hex";
	case MSR_FMT_TEXT: return "text";
	default: return "binary";
	}
}

static void print_stats(const char *in, struct msr_trace_reader *r,
			const struct counts *c, double secs, unsigned strands)
{
	struct msr_trace_reader_stats st;

	msr_trace_reader_get_stats(r, &st);
	printf("file: %s\n", in);
	printf("format: %s\n", format_name(msr_trace_reader_format(r)));
	printf("compressed: %s\n", msr_trace_reader_compressed(r) ? "zstd" : "no");
	printf("events: %llu\n", (unsigned long long)st.events);
	printf("bytes_in: %llu\n", (unsigned long long)st.bytes_in);
	printf("bytes_out: %llu\n", (unsigned long long)st.bytes_out);
	if (c->have_ts) {
		printf("ts_min: %u\n", c->ts_min);
		printf("ts_max: %u\n", c->ts_max);
		printf("ts_span: %u\n", c->ts_max - c->ts_min);
	}
	printf("regdelta_records: %llu\n", (unsigned long long)st.regdelta_records);
	printf("regdelta_ambiguous: %llu\n", (unsigned long long)st.regdelta_ambiguous);
	printf("codes:\n");
	for (unsigned k = 0; k < MSR_CODE_LIMIT; k++) {
		const struct msr_msgdef *def;

		if (!c->code[k])
			continue;
		def = msr_msgdef_get(k);
		printf("  %s: %llu\n", def ? def->name : "?", (unsigned long long)c->code[k]);
	}
	printf("strands:\n");
	for (unsigned t = 0; t < strands && t < 256; t++)
		if (c->strand[t])
			printf("  %u: %llu\n", t, (unsigned long long)c->strand[t]);
	printf("elapsed_seconds: %.3f\n", secs);
	if (secs > 0) {
		printf("decode_mb_per_s: %.1f\n", (double)st.bytes_out / secs / 1e6);
		printf("events_per_s: %.0f\n", (double)st.events / secs);
	}
}

static void count(struct counts *c, const struct msr_event *ev)
{
	unsigned has = msr_event_has(ev);

	c->code[ev->code < MSR_CODE_LIMIT ? ev->code : 0]++;
	if (has & MSR_EVHAS_TNUM)
		c->strand[ev->tnum]++;
	if (has & MSR_EVHAS_TS) {
		if (!c->have_ts || ev->ts < c->ts_min)
			c->ts_min = ev->ts;
		if (!c->have_ts || ev->ts > c->ts_max)
			c->ts_max = ev->ts;
		c->have_ts = true;
	}
}

int msr_cmd_stat(int argc, char **argv)
{
	struct counts c;
	struct msr_trace_opts topts;
	struct msr_trace_reader *r = NULL;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event ev;
	const char *in = NULL;
	unsigned cores = 8, threads = 8;
	double t0;
	bool single_thread = false;
	int rc = parse_args(argc, argv, &in, &cores, &threads, &single_thread);

	if (rc >= 0)
		return rc;
	memset(&c, 0, sizeof(c));
	if (!msr_cli_trace_opts("stat", cores, threads, &topts))
		return MSR_EXIT_UNUSABLE;
	t0 = now();
	rc = msr_trace_reader_open(in, &topts, &r, &err);
	if (rc) {
		msr_cli_print_error(&err);
		return MSR_EXIT_UNUSABLE;
	}
	msr_cli_reader_ahead(r, single_thread);
	while ((rc = msr_trace_reader_next(r, &ev, &err)) == MSR_OK)
		count(&c, &ev);
	print_stats(in, r, &c, now() - t0, topts.strands);
	fflush(stdout);
	msr_trace_reader_close(r);
	if (rc < 0) {
		msr_cli_print_error(&err);
		return MSR_EXIT_UNUSABLE;
	}
	return MSR_EXIT_CLEAN;
}
