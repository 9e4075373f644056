/*
 * cmd_dump.c - msync-replay dump: print a trace as canonical text, one
 * event per line, optionally filtered and prefixed with index and offset.
 *
 * Unfiltered output without --index is exactly what `encode` reads back to
 * the original bytes. Only parses options and wires reader to writer; the
 * formats themselves live in trace/.
 */
#include "cmd-trace-internal.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char dump_help[] =
	"usage: msync-replay dump [options] TRACE\n"
	"\n"
	"Print TRACE (raw binary, hex-text variant or canonical text, plain or\n"
	"zstd-compressed, detected from its content; - = standard input) as\n"
	"canonical text: a '# msync-text 1' line, then one event per line.\n"
	"Unfiltered output without --index is read back exactly by 'encode'.\n"
	"\n"
	"options:\n"
	"  --index            prefix each event with its index and the byte offset\n"
	"                     of its first byte in the (decompressed) input:\n"
	"                     '<index> <offset>  <event>' (not re-encodable)\n"
	"  --tnum N           only events of strand N (events without a strand,\n"
	"                     such as EVICT or MEM_SLAM, are left out; register\n"
	"                     deltas count as the strand of their header tid)\n"
	"  --pa ADDR[/MASK]   only events with an address where pa & MASK equals\n"
	"                     ADDR & MASK (MASK defaults to all ones; e.g.\n"
	"                     --pa 0x102000/0xffffffffc0 selects one 64-byte line)\n"
	"  --from N           start at event index N (0-based)\n"
	"  --count M          stop after event index N+M-1\n"
	"  -o, --output FILE  write to FILE instead of standard output\n"
	"  --cores N          cores of the system (default 8): cid must be < N\n"
	"  --threads N        threads per core (default 8): tnum must be < cores*N\n"
	MSR_CLI_SINGLE_THREAD_HELP
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0 the whole trace was printed, 2 unusable input or usage\n"
	"error (the message names the file, byte offset or line, and the field).\n";

enum { OPT_INDEX = MSR_OPT_FIRST_LOCAL, OPT_TNUM, OPT_PA, OPT_FROM, OPT_COUNT };

struct dump_opts {
	const char *in;
	const char *out;
	bool index;
	bool by_tnum, by_pa;
	unsigned tnum;
	uint64_t pa, pa_mask;
	uint64_t from, count;
	bool has_count;
	unsigned cores, threads;
	bool single_thread;
};

static bool parse_pa(const char *s, struct dump_opts *o)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	o->pa_mask = UINT64_MAX;
	return msr_cli_parse_u64(buf, &o->pa) &&
	       (!slash || msr_cli_parse_u64(slash + 1, &o->pa_mask));
}

static int parse_args(int argc, char **argv, struct dump_opts *o)
{
	static const struct option longopts[] = {
		{"index", no_argument, NULL, OPT_INDEX},
		{"tnum", required_argument, NULL, OPT_TNUM},
		{"pa", required_argument, NULL, OPT_PA},
		{"from", required_argument, NULL, OPT_FROM},
		{"count", required_argument, NULL, OPT_COUNT},
		{"output", required_argument, NULL, 'o'},
		{"cores", required_argument, NULL, MSR_OPT_CORES},
		{"threads", required_argument, NULL, MSR_OPT_THREADS},
		{"single-thread", no_argument, NULL, MSR_OPT_SINGLE_THREAD},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(dump_help, stdout);
			return 0;
		case 'o': o->out = optarg; break;
		case OPT_INDEX: o->index = true; break;
		case OPT_TNUM:
			if (!msr_cli_parse_u64(optarg, &v) || v > 255)
				return msr_cli_usage_error("dump", "bad --tnum=%s: expected a "
							   "strand number", optarg);
			o->by_tnum = true;
			o->tnum = (unsigned)v;
			break;
		case OPT_PA:
			if (!parse_pa(optarg, o))
				return msr_cli_usage_error("dump", "bad --pa=%s: expected "
							   "ADDR or ADDR/MASK", optarg);
			o->by_pa = true;
			break;
		case OPT_FROM:
			if (!msr_cli_parse_u64(optarg, &o->from))
				return msr_cli_usage_error("dump", "bad --from=%s: expected an "
							   "event index", optarg);
			break;
		case OPT_COUNT:
			if (!msr_cli_parse_u64(optarg, &o->count))
				return msr_cli_usage_error("dump", "bad --count=%s: expected a "
							   "number of events", optarg);
			o->has_count = true;
			break;
		case MSR_OPT_CORES:
			if (!msr_cli_trace_size("dump", "--cores", optarg, 32, &o->cores))
				return MSR_EXIT_UNUSABLE;
			break;
		case MSR_OPT_THREADS:
			if (!msr_cli_trace_size("dump", "--threads", optarg, 256, &o->threads))
				return MSR_EXIT_UNUSABLE;
			break;
		case MSR_OPT_SINGLE_THREAD: o->single_thread = true; break;
		case ':':
			return msr_cli_usage_error("dump", "option %s needs a value",
						   argv[optind - 1]);
		default:
			return msr_cli_usage_error("dump", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return msr_cli_usage_error("dump", optind == argc ? "missing TRACE argument"
								  : "too many arguments");
	o->in = argv[optind];
	return -1;
}

/* Filter state: the tid of the open register delta, for --tnum. */
static bool selected(const struct dump_opts *o, const struct msr_event *ev, int *rd_tid)
{
	unsigned has = msr_event_has(ev);

	if (ev->code == MSR_REGDELTA && (ev->flags & MSR_EVF_RD_HEADER))
		*rd_tid = ev->rd_tid;
	if (o->by_tnum) {
		if (ev->code == MSR_REGDELTA || ev->code == MSR_REGDELTA_END) {
			if (*rd_tid != (int)o->tnum)
				return false;
		} else if (!(has & MSR_EVHAS_TNUM) || ev->tnum != o->tnum) {
			return false;
		}
	}
	if (o->by_pa && (!(has & MSR_EVHAS_PA) || (ev->pa & o->pa_mask) != (o->pa & o->pa_mask)))
		return false;
	return true;
}

static int run(const struct dump_opts *o)
{
	struct msr_trace_opts topts;
	struct msr_trace_reader *r = NULL;
	struct msr_trace_writer *w = NULL;
	struct msr_error err = MSR_ERROR_INIT, err2 = MSR_ERROR_INIT;
	struct msr_event ev;
	uint64_t end = o->has_count && o->from + o->count >= o->from ? o->from + o->count
								     : UINT64_MAX;
	int rd_tid = -1;
	int rc;

	if (!msr_cli_trace_opts("dump", o->cores, o->threads, &topts))
		return MSR_EXIT_UNUSABLE;
	rc = msr_trace_reader_open(o->in, &topts, &r, &err);
	if (rc)
		goto out;
	msr_cli_reader_ahead(r, o->single_thread);
	rc = msr_trace_writer_open(o->out, MSR_FMT_TEXT, 0, &w, &err);
	if (rc)
		goto out;
	if (o->index) {
		static const char legend[] = "#  index     offset  event\n";

		rc = msr_trace_writer_raw(w, legend, sizeof(legend) - 1, &err);
	}
	while (!rc && (rc = msr_trace_reader_next(r, &ev, &err)) == MSR_OK) {
		char pre[48];
		int n;

		if (ev.index >= end)
			break;
		if (!selected(o, &ev, &rd_tid) || ev.index < o->from)
			continue;
		if (o->index) {
			n = snprintf(pre, sizeof(pre), "%8llu %10llu  ",
				     (unsigned long long)ev.index, (unsigned long long)ev.offset);
			rc = msr_trace_writer_raw(w, pre, (size_t)n, &err);
			if (rc)
				break;
		}
		rc = msr_trace_writer_put(w, &ev, &err);
	}
	if (rc == MSR_END)
		rc = MSR_OK;
out:
	/* Flush what was decoded before printing an error, so it comes last. */
	if (w && msr_trace_writer_close(w, &err2) && !rc) {
		err = err2;
		rc = err.status;
	}
	msr_trace_reader_close(r);
	if (rc < 0) {
		msr_cli_print_error(&err);
		return MSR_EXIT_UNUSABLE;
	}
	return MSR_EXIT_CLEAN;
}

int msr_cmd_dump(int argc, char **argv)
{
	struct dump_opts o = {.out = "-", .cores = 8, .threads = 8};
	int rc = parse_args(argc, argv, &o);

	return rc >= 0 ? rc : run(&o);
}
