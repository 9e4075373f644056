/*
 * cmd_check.c - `msync-replay check`: decode a trace, replay it through the
 * memory-sync engine (with the ISS step log when given), run the TSO pass,
 * and write the violation report (YAML; JUnit too with --junit).
 *
 * Pipeline: trace reader -> event history + engine -> TSO pass -> report.
 * Unless --single-thread or --fail-fast, the TSO pass and the report run on
 * a second thread that gets the engine's output in order (check_pipe.c) and
 * queries the event history the replay fills (shared, so that events are
 * never copied across), and the zstd inputs are decompressed on helper
 * threads.
 * This file only parses options, wires the modules, prints at most five
 * summary lines on stderr and picks the exit code (0 clean, 1 violations,
 * 2 unusable input or usage error, 125 instead of 2 with --bisect). Once
 * the configuration is valid a report is always written, also when the
 * input turns out to be unusable or the run is interrupted (then with
 * `complete: false`). Filters only hide violations; the replay itself
 * always sees every event.
 */
#include "check-many-internal.h"
#include "check-pipe-internal.h"
#include "checker.h"
#include "cmd.h"
#include "mem-guard-internal.h"
#include "msr_version.h"
#include "report.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_MAX_IMAGES 64
#define CHECK_HISTORY_EVENTS ((size_t)1 << 12)
/* With the pipe: events the replay may run ahead of the TSO pass and the
 * report, which the shared history holds on top (64K slots, 8 MiB) */
#define CHECK_PIPE_LAG ((uint64_t)60 << 10)
#define CHECK_PROGRESS_EVERY ((uint64_t)1 << 16) /* events between clock reads */
#define CHECK_PROGRESS_SECONDS 0.5

/* Set by the SIGINT/SIGTERM handler; the replay loop stops and reports. */
static volatile sig_atomic_t check_signal;

static void on_signal(int sig)
{
	check_signal = sig;
}

struct check_opts {
	const char *trace, *steps, *config, *out, *junit;
	const char *images[CHECK_MAX_IMAGES];
	unsigned nimages;
	const char *strands, *cycles, *pa;
	bool no_tso, quiet, fail_fast, bisect;
	bool single_thread, no_huge_pages;
	int progress; /* -1 auto (stderr is a terminal), 0 off, 1 on */
	bool has_maxv, has_ctx, has_ctx_before, has_ctx_after, has_maxmem;
	uint64_t maxv, ctx, ctx_before, ctx_after, maxmem;
};

struct check_run {
	struct check_opts o;
	struct msr_config cfg;
	struct msr_trace_reader *rd;
	struct msr_steplog *log;
	struct msr_history *hist;
	struct msr_report *rep;
	struct msr_engine *eng;
	struct msr_tso *tso;
	struct cpipe *pipe; /* TSO pass and report on a second thread */
	struct mguard guard;
	uint64_t resident;  /* bytes, as the guard last read it */
	struct msr_report_summary sum;
	bool stop;      /* --fail-fast: a violation was shown */
	bool unusable;  /* the input could not be replayed to its end */
	bool report_failed;
	struct timespec t0;
};

static const char check_help[] =
	"usage: msync-replay check TRACE [options]\n"
	"       msync-replay check [-j N] [-o DIR] [--steps-suffix SUF | --steps-name NAME]\n"
	"                          [--list FILE]\n"
	"                          [options] [TRACE...]\n"
	"\n"
	"Replay an RTL memory-event trace (raw, hex-text or canonical text, plain or\n"
	"zstd; '-' = stdin) through the memory-sync model, check it against the ISS\n"
	"step log and the TSO memory model, and write a YAML violation report.\n"
	"\n"
	"options:\n"
	"  -s, --steps LOG         ISS step log (plain or zstd) to check loads/stores against\n"
	"  -c, --config CFG        YAML configuration (system, memory, report, limits,\n"
	"                          waivers)\n"
	"  -i, --image MEM         initial memory image; may be repeated (after config's)\n"
	"  -o, --output REPORT     write the report here ('-' or none = stdout)\n"
	"      --junit FILE        also write a JUnit XML report for CI ('-' = stdout):\n"
	"                          a testcase per violation kind, failing or passing\n"
	"      --no-tso            skip the TSO checker pass\n"
	"      --single-thread     everything on one thread (default: the TSO pass and\n"
	"                          the report on a second one, fed in order, and zstd\n"
	"                          inputs decompressed ahead; the report is the same)\n"
	"      --strand LIST       report only violations of these strands (e.g. 0-3,13)\n"
	"      --cycles A:B        report only violations with A <= ts <= B (A: or :B open)\n"
	"      --pa LO:HI          report only violations touching bytes LO..HI (inclusive)\n"
	"                          Filters only hide violations: every event still updates\n"
	"                          the memory state, and hidden ones are counted.\n"
	"      --max-violations N  list at most N violations in the report (all are counted)\n"
	"      --context N         events of context before and after each violation\n"
	"                          (0..64 each, default 8)\n"
	"      --context-before N  events before (up to and including its own event)\n"
	"      --context-after N   events after\n"
	"      --fail-fast         stop at the first (shown) violation\n"
	"      --max-memory MIB    stop with a partial report (exit 2) when the process\n"
	"                          holds more memory (default 0: automatic, 3/4 of the\n"
	"                          machine's or the cgroup's memory, shared by -j)\n"
	"      --no-huge-pages     keep the large tables on small pages (default: ask\n"
	"                          for transparent huge pages; see the README, Performance)\n"
	"      --bisect            exit 125 instead of 2 on unusable input (git bisect skip)\n"
	"      --progress          show a progress line on stderr\n"
	"      --no-progress       never show it (default: only when stderr is a terminal)\n"
	"  -q, --quiet             no summary on stderr (errors are still printed)\n"
	"\n"
	"several traces (each replayed in its own process, one report per trace, a\n"
	"summary table on stdout: trace, exit, violations, first kind, report):\n"
	"  -j, --jobs N            replay at most N traces at a time (default: online CPUs)\n"
	"      --list FILE         traces from FILE ('-' = stdin), one per line:\n"
	"                          TRACE [STEPS [REPORT]] (\"quoted\" fields may hold\n"
	"                          blanks; '#' comments; STEPS '-' = none)\n"
	"  -o, --output DIR        reports go to DIR/<trace basename without .zst>.yaml\n"
	"                          unless the list names them; repeated basenames\n"
	"                          keep the trace paths' directories that tell them\n"
	"                          apart (a/nas.trace.zst -> DIR/a/nas.trace.yaml)\n"
	"      --steps-suffix SUF  step log of each trace: its path up to the first '.'\n"
	"                          of its basename, then SUF (run/nas.trace.zst with\n"
	"                          .steps.zst -> run/nas.steps.zst), unless listed\n"
	"      --steps-name NAME   step log of each trace: NAME in its directory\n"
	"                          (run/nas.trace.zst with steps.log.zst ->\n"
	"                          run/steps.log.zst), unless listed\n"
	"  --steps takes a single trace; --junit FILE holds a testsuite per trace;\n"
	"  --progress shows a line as each replay ends.\n"
	"  -h, --help              this help\n"
	"\n"
	"exit codes: 0 replayed to the end, no violations; 1 violations found;\n"
	"2 unusable input or usage error (125 with --bisect). With several traces: 2\n"
	"(125 with --bisect) if any trace was unusable, else 1 if any had violations,\n"
	"else 0. A truncated or corrupt\n"
	"trace still gets a report of everything found so far, with complete: false.\n";

enum {
	OPT_NO_TSO = 256, OPT_STRAND, OPT_CYCLES, OPT_PA, OPT_MAXV, OPT_FAILFAST,
	OPT_CONTEXT, OPT_CONTEXT_BEFORE, OPT_CONTEXT_AFTER, OPT_BISECT,
	OPT_PROGRESS, OPT_NO_PROGRESS, OPT_VERSION, OPT_JUNIT, OPT_SINGLE_THREAD,
	OPT_MAX_MEMORY, OPT_NO_HUGE_PAGES,
};

static const struct option check_longopts[] = {
	{"steps", required_argument, NULL, 's'},
	{"config", required_argument, NULL, 'c'},
	{"image", required_argument, NULL, 'i'},
	{"output", required_argument, NULL, 'o'},
	{"junit", required_argument, NULL, OPT_JUNIT},
	{"no-tso", no_argument, NULL, OPT_NO_TSO},
	{"single-thread", no_argument, NULL, OPT_SINGLE_THREAD},
	{"strand", required_argument, NULL, OPT_STRAND},
	{"cycles", required_argument, NULL, OPT_CYCLES},
	{"pa", required_argument, NULL, OPT_PA},
	{"max-violations", required_argument, NULL, OPT_MAXV},
	{"fail-fast", no_argument, NULL, OPT_FAILFAST},
	{"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
	{"no-huge-pages", no_argument, NULL, OPT_NO_HUGE_PAGES},
	{"context", required_argument, NULL, OPT_CONTEXT},
	{"context-before", required_argument, NULL, OPT_CONTEXT_BEFORE},
	{"context-after", required_argument, NULL, OPT_CONTEXT_AFTER},
	{"bisect", no_argument, NULL, OPT_BISECT},
	{"progress", no_argument, NULL, OPT_PROGRESS},
	{"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{NULL, 0, NULL, 0},
};

/* Returns -1 to go on, or the exit code. */
static int parse_args(int argc, char **argv, struct check_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->progress = -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:c:i:o:qh", check_longopts, NULL)) != -1) {
		switch (c) {
		case 's': o->steps = optarg; break;
		case 'c': o->config = optarg; break;
		case 'o': o->out = optarg; break;
		case 'i':
			if (o->nimages == CHECK_MAX_IMAGES)
				return msr_cli_usage_error("check", "too many --image options "
							   "(at most %d)", CHECK_MAX_IMAGES);
			o->images[o->nimages++] = optarg;
			break;
		case OPT_NO_TSO: o->no_tso = true; break;
		case OPT_SINGLE_THREAD: o->single_thread = true; break;
		case OPT_NO_HUGE_PAGES: o->no_huge_pages = true; break;
		case OPT_STRAND: o->strands = optarg; break;
		case OPT_CYCLES: o->cycles = optarg; break;
		case OPT_PA: o->pa = optarg; break;
		case OPT_MAXV:
			if (!msr_cli_parse_u64(optarg, &o->maxv) || o->maxv > UINT32_MAX)
				return msr_cli_usage_error("check", "--max-violations=%s: "
							   "expected a number", optarg);
			o->has_maxv = true;
			break;
		case OPT_CONTEXT:
			if (!msr_cli_parse_u64(optarg, &o->ctx) || o->ctx > MSR_CONTEXT_MAX)
				return msr_cli_usage_error("check", "--context=%s: expected "
							   "0..%d", optarg, MSR_CONTEXT_MAX);
			o->has_ctx = true;
			break;
		case OPT_CONTEXT_BEFORE:
		case OPT_CONTEXT_AFTER: {
			bool before = c == OPT_CONTEXT_BEFORE;
			uint64_t *dst = before ? &o->ctx_before : &o->ctx_after;

			if (!msr_cli_parse_u64(optarg, dst) || *dst > MSR_CONTEXT_MAX)
				return msr_cli_usage_error("check", "--context-%s=%s: "
							   "expected 0..%d",
							   before ? "before" : "after",
							   optarg, MSR_CONTEXT_MAX);
			if (before)
				o->has_ctx_before = true;
			else
				o->has_ctx_after = true;
			break;
		}
		case OPT_FAILFAST: o->fail_fast = true; break;
		case OPT_MAX_MEMORY:
			if (!msr_cli_parse_u64(optarg, &o->maxmem) || o->maxmem > MSR_MAX_MEMORY_MIB)
				return msr_cli_usage_error("check", "--max-memory=%s: expected "
							   "MiB, 0..%llu (0 = automatic)", optarg,
							   (unsigned long long)MSR_MAX_MEMORY_MIB);
			o->has_maxmem = true;
			break;
		case OPT_BISECT: o->bisect = true; break;
		case OPT_JUNIT: o->junit = optarg; break;
		case OPT_PROGRESS: o->progress = 1; break;
		case OPT_NO_PROGRESS: o->progress = 0; break;
		case 'q': o->quiet = true; break;
		case 'h': fputs(check_help, stdout); return MSR_EXIT_CLEAN;
		case OPT_VERSION: printf("msync-replay %s\n", MSR_VERSION); return MSR_EXIT_CLEAN;
		case ':':
			return msr_cli_usage_error("check", "option %s needs a value",
						   argv[optind - 1]);
		default:
			return msr_cli_usage_error("check", "unknown option %s",
						   argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return msr_cli_usage_error("check", "missing TRACE argument");
	if (optind + 1 < argc)
		return msr_cli_usage_error("check", "unexpected argument '%s'", argv[optind + 1]);
	o->trace = argv[optind];
	if (o->junit && !strcmp(o->junit, "-") && (!o->out || !strcmp(o->out, "-")))
		return msr_cli_usage_error("check", "--junit - needs -o REPORT: the YAML "
					   "report already goes to standard output");
	if (o->steps && !strcmp(o->steps, "-") && !strcmp(o->trace, "-"))
		return msr_cli_usage_error("check", "the trace and the step log cannot "
					   "both be read from standard input");
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Sinks                                                                     */
/* ------------------------------------------------------------------------ */

static void on_violation(void *ctx, const struct msr_violation *v)
{
	struct check_run *run = ctx;

	if (msr_report_add(run->rep, v) && run->o.fail_fast)
		run->stop = true;
}

/* Commits and operations come only with a TSO pass (setup_pipeline). */
static void on_commit(void *ctx, const struct msr_commit *c)
{
	struct check_run *run = ctx;

	msr_tso_add_commit(run->tso, c);
}

static void on_op(void *ctx, const struct msr_op *op)
{
	struct check_run *run = ctx;

	msr_tso_add_op(run->tso, op);
}

static void on_warm(void *ctx, unsigned strand, uint64_t pa8)
{
	struct check_run *run = ctx;

	msr_tso_warm(run->tso, strand, pa8);
}

static void on_event(void *ctx, const struct msr_event *ev)
{
	struct check_run *run = ctx;

	msr_history_add(run->hist, ev);
	msr_report_observe(run->rep, ev);
}

/* With the pipe, on its thread: the replay has added the first `upto`
 * events to the shared history. Show them one at a time, as on_event
 * would, only while the report watches for after-context. */
static void on_events(void *ctx, uint64_t upto)
{
	struct check_run *run = ctx;
	struct msr_event ev;
	uint64_t q;

	while ((q = msr_history_shown(run->hist)) < upto &&
	       msr_report_watching(run->rep)) {
		msr_history_show(run->hist, q + 1);
		if (msr_history_get(run->hist, q, &ev))
			msr_report_observe(run->rep, &ev);
	}
	msr_history_show(run->hist, upto);
}

/* The engine's sink: straight to the TSO pass and the report, or through
 * the pipe to them on its thread. */
static void eng_commit(void *ctx, const struct msr_commit *c)
{
	struct check_run *run = ctx;

	if (run->pipe)
		cpipe_commit(run->pipe, c);
	else
		on_commit(ctx, c);
}

static void eng_op(void *ctx, const struct msr_op *op)
{
	struct check_run *run = ctx;

	if (run->pipe)
		cpipe_op(run->pipe, op);
	else
		on_op(ctx, op);
}

static void eng_violation(void *ctx, const struct msr_violation *v)
{
	struct check_run *run = ctx;

	if (run->pipe)
		cpipe_violation(run->pipe, v);
	else
		on_violation(ctx, v);
}

static int steps_next(void *ctx, unsigned tnum, struct msr_step *step,
		      struct msr_error *err)
{
	return msr_steplog_next(ctx, tnum, step, err);
}

static int steps_remaining(void *ctx, unsigned tnum, uint64_t *count,
			   struct msr_error *err)
{
	return msr_steplog_remaining(ctx, tnum, count, err);
}

/* ------------------------------------------------------------------------ */
/* Setup                                                                     */
/* ------------------------------------------------------------------------ */

/* Configuration, command-line overrides and filters: usage-level errors. */
static int setup_config(struct check_run *run, struct msr_report_filter *f,
			struct msr_error *err)
{
	struct check_opts *o = &run->o;
	int rc;

	msr_config_default(&run->cfg);
	if (o->config && (rc = msr_config_load(&run->cfg, o->config, err)))
		return rc;
	if (o->has_maxv)
		run->cfg.max_violations = (unsigned)o->maxv;
	if (o->has_maxmem)
		run->cfg.max_memory = (size_t)o->maxmem;
	if (o->has_ctx)
		run->cfg.context_len = run->cfg.context_after = (unsigned)o->ctx;
	if (o->has_ctx_before)
		run->cfg.context_len = (unsigned)o->ctx_before;
	if (o->has_ctx_after)
		run->cfg.context_after = (unsigned)o->ctx_after;
	if (o->nimages) {
		char **grown = realloc(run->cfg.images, (run->cfg.nimages + o->nimages) *
				       sizeof(*grown));

		if (!grown)
			return msr_error_set(err, MSR_E_NOMEM, "check", NULL, "out of memory");
		run->cfg.images = grown;
		for (unsigned i = 0; i < o->nimages; i++) {
			grown[run->cfg.nimages] = strdup(o->images[i]);
			if (!grown[run->cfg.nimages])
				return msr_error_set(err, MSR_E_NOMEM, "check", NULL,
						     "out of memory");
			run->cfg.nimages++;
		}
	}
	memset(f, 0, sizeof(*f));
	if (o->strands && !msr_report_filter_strands(f, o->strands,
						     msr_config_strands(&run->cfg)))
		return msr_error_set(err, MSR_E_USAGE, "check", NULL, "--strand=%s: "
				     "expected a list like 0-3,13 of strands below %u",
				     o->strands, msr_config_strands(&run->cfg));
	if (o->cycles && !msr_report_filter_cycles(f, o->cycles))
		return msr_error_set(err, MSR_E_USAGE, "check", NULL, "--cycles=%s: "
				     "expected A:B with A <= B", o->cycles);
	if (o->pa && !msr_report_filter_pa(f, o->pa))
		return msr_error_set(err, MSR_E_USAGE, "check", NULL, "--pa=%s: "
				     "expected LO:HI with LO <= HI", o->pa);
	return MSR_OK;
}

/* Open inputs and create the pipeline. Errors here are unusable input. */
static int setup_pipeline(struct check_run *run, struct msr_error *err)
{
	struct msr_engine_sink esink = {run, eng_commit, eng_op, eng_violation};
	struct msr_engine_sink tsink = {run, NULL, NULL, on_violation};
	struct msr_trace_opts topts;
	int rc;

	msr_trace_opts_default(&topts);
	topts.strands = msr_config_strands(&run->cfg);
	topts.cores = run->cfg.cores;
	topts.l2_banks = run->cfg.l2_banks;
	if ((rc = msr_trace_reader_open(run->o.trace, &topts, &run->rd, err)))
		return rc;
	if (run->o.steps &&
	    (rc = msr_steplog_open(run->o.steps, msr_config_strands(&run->cfg),
				   run->cfg.step_lookahead, &run->log, err)))
		return rc;
	if (!run->o.single_thread) {
		msr_trace_reader_decompress_ahead(run->rd);
		if (run->log)
			msr_steplog_decompress_ahead(run->log);
	}
	if (!run->o.no_tso && (rc = msr_tso_create(&run->cfg, &tsink, &run->tso, err)))
		return rc;
	if (!run->tso) { /* the engine then does not build what no one reads */
		esink.commit = NULL;
		esink.op = NULL;
	}
	if ((rc = msr_engine_create(&run->cfg, &esink, &run->eng, err)))
		return rc;
	if (run->log) {
		struct msr_step_source src = {run->log, steps_next, steps_remaining};

		msr_engine_set_steps(run->eng, &src);
	}
	for (unsigned i = 0; i < run->cfg.nimages; i++)
		if ((rc = msr_engine_load_image(run->eng, run->cfg.images[i], err)))
			return rc;
	return MSR_OK;
}

static int add_inputs(struct check_run *run, struct msr_error *err)
{
	int rc = msr_report_add_input(run->rep, "trace", run->o.trace, 0, err);

	if (!rc && run->o.steps)
		rc = msr_report_add_input(run->rep, "steps", run->o.steps, 0, err);
	if (!rc && run->o.config)
		rc = msr_report_add_input(run->rep, "config", run->o.config, 0, err);
	for (unsigned i = 0; !rc && i < run->cfg.nimages; i++)
		rc = msr_report_add_input(run->rep, "image", run->cfg.images[i], 0, err);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Replay                                                                    */
/* ------------------------------------------------------------------------ */

static double elapsed_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void show_progress(const struct check_run *run, bool last)
{
	struct msr_trace_reader_stats st;
	double secs = elapsed_since(&run->t0);
	double rate;

	msr_trace_reader_get_stats(run->rd, &st);
	rate = secs > 0 ? (double)st.events / secs : 0;
	fprintf(stderr, "\rmsync-replay: %llu events, %.1f MB read, %.0f events/s, %llu MiB",
		(unsigned long long)st.events, (double)st.bytes_in / 1e6, rate,
		(unsigned long long)(run->resident >> 20));
	if (st.file_size && st.bytes_in && st.bytes_in < st.file_size)
		fprintf(stderr, ", ETA %.0fs",
			secs * (double)(st.file_size - st.bytes_in) / (double)st.bytes_in);
	fputs(last ? "\n" : "   ", stderr);
}

/* Record why the run stopped short; the error chain goes into the report. */
static void note_error(struct check_run *run, const struct msr_error *err)
{
	msr_error_format(err, run->sum.error, sizeof(run->sum.error));
	if (!run->sum.error[0])
		snprintf(run->sum.error, sizeof(run->sum.error), "unknown error");
	run->sum.complete = false;
	run->unusable = true;
}

static void note_interrupted(struct check_run *run)
{
	snprintf(run->sum.stopped, sizeof(run->sum.stopped), "interrupted");
	snprintf(run->sum.error, sizeof(run->sum.error), "interrupted by signal %d",
		 (int)check_signal);
	run->sum.complete = false;
	run->unusable = true;
}

/* Over the memory limit after `n` events: stop, saying so. */
static bool memory_over(struct check_run *run, uint64_t n, struct msr_error *err)
{
	if (!mguard_over(&run->guard, &run->resident))
		return false;
	mguard_error(&run->guard, err, "check", run->o.trace, n, run->resident);
	note_error(run, err);
	snprintf(run->sum.stopped, sizeof(run->sum.stopped), "memory-limit");
	return true;
}

/* Feed every event to the history and the engine until the end or a stop. */
static void replay(struct check_run *run, struct msr_error *err)
{
	struct msr_event ev;
	bool progress = run->o.progress > 0 ||
			(run->o.progress < 0 && !run->o.quiet && isatty(STDERR_FILENO));
	bool shown = false;
	double next_show = CHECK_PROGRESS_SECONDS;
	uint64_t n = 0;
	int rc;

	for (;;) {
		if (check_signal) {
			note_interrupted(run);
			break;
		}
		rc = msr_trace_reader_next(run->rd, &ev, err);
		if (rc == MSR_END) {
			run->sum.complete = true;
			break;
		}
		if (rc < 0) {
			/* a signal during a blocking read surfaces as a read error */
			if (check_signal)
				note_interrupted(run);
			else
				note_error(run, err);
			break;
		}
		if (run->pipe) {
			cpipe_event(run->pipe);
			msr_history_add(run->hist, &ev);
		} else {
			on_event(run, &ev);
		}
		rc = msr_engine_apply(run->eng, &ev, err);
		if (rc < 0) {
			note_error(run, err);
			break;
		}
		if (run->stop) {
			snprintf(run->sum.stopped, sizeof(run->sum.stopped), "fail-fast");
			break;
		}
		if (++n % MGUARD_EVERY)
			continue;
		if (memory_over(run, n, err))
			break;
		if (progress && !(n % CHECK_PROGRESS_EVERY) &&
		    elapsed_since(&run->t0) >= next_show) {
			show_progress(run, false);
			shown = true;
			next_show = elapsed_since(&run->t0) + CHECK_PROGRESS_SECONDS;
		}
	}
	if (shown)
		show_progress(run, true);
}

static void finish(struct check_run *run, struct msr_error *err)
{
	struct msr_engine_stats es;
	struct msr_trace_reader_stats ts;

	msr_error_clear(err);
	if (msr_engine_finish(run->eng, run->sum.complete, err) < 0 && !run->unusable)
		note_error(run, err);
	cpipe_finish(run->pipe); /* the rest runs here, as without the pipe */
	run->pipe = NULL;
	if (run->tso && msr_tso_finish(run->tso, err) < 0 && !run->unusable)
		note_error(run, err);
	msr_engine_get_stats(run->eng, &es);
	msr_trace_reader_get_stats(run->rd, &ts);
	run->sum.events = ts.events;
	run->sum.steps = es.steps;
	run->sum.loads = es.loads;
	run->sum.stores = es.stores;
	run->sum.atomics = es.atomics;
	run->sum.membars = es.membars;
	run->sum.commits = es.commits;
	run->sum.other_messages = es.other_messages;
	run->sum.learned_bytes = es.learned_bytes;
}

/* ------------------------------------------------------------------------ */
/* Summary on stderr (at most five lines)                                    */
/* ------------------------------------------------------------------------ */

/* One line for what the filters hid and the waivers accepted, one for
 * waivers that matched nothing (a stale waiver hides nothing, but says the
 * configuration no longer fits the design). */
static void print_hidden(const struct check_run *run)
{
	uint64_t hidden = msr_report_filtered(run->rep);
	uint64_t waived = msr_report_waived(run->rep);
	char at[256] = "";
	size_t pos = 0;
	unsigned unused = 0;

	if (hidden)
		fprintf(stderr, "msync-replay: %llu violation%s hidden by --strand/--cycles/--pa%s",
			(unsigned long long)hidden, hidden == 1 ? "" : "s",
			waived ? ", " : "\n");
	if (waived)
		fprintf(stderr, "%s%llu%s waived by the configuration\n",
			hidden ? "" : "msync-replay: ", (unsigned long long)waived,
			hidden ? "" : waived == 1 ? " violation" : " violations");
	for (unsigned i = 0; i < run->cfg.nwaivers; i++) {
		if (msr_report_waiver_uses(run->rep, i))
			continue;
		if (unused < 4 && pos < sizeof(at) - 32)
			pos += (size_t)snprintf(at + pos, sizeof(at) - pos, "%s%u",
						unused ? ", " : "", run->cfg.waivers[i].line);
		unused++;
	}
	if (unused)
		fprintf(stderr, "msync-replay: warning: %u unused waiver%s in %s (line%s %s%s); "
			"see unused_waivers in the report\n", unused, unused == 1 ? "" : "s",
			run->cfg.waiver_file ? run->cfg.waiver_file : "the configuration",
			unused == 1 ? "" : "s", at, unused > 4 ? ", ..." : "");
}

static void print_summary(const struct check_run *run)
{
	const char *out = run->report_failed ? "not written" :
			  run->o.out && strcmp(run->o.out, "-") ? run->o.out : "stdout";
	uint64_t shown = msr_report_shown(run->rep);
	size_t first;
	const struct msr_violation *v = msr_report_first(run->rep, &first);
	char id[24] = "";
	char kinds[256] = "";
	size_t pos = 0;
	unsigned nk = 0;

	if (run->sum.error[0])
		msr_cli_print_message(run->sum.error);
	if (!shown) {
		fprintf(stderr, "msync-replay: no violations in %llu events (%llu steps)%s; "
			"report: %s\n", (unsigned long long)run->sum.events,
			(unsigned long long)run->sum.steps,
			run->sum.complete ? "" : " replayed so far", out);
		print_hidden(run);
		return;
	}
	for (unsigned k = 0; k < MSR_V_COUNT; k++) {
		uint64_t c = msr_report_kind_count(run->rep, (enum msr_vkind)k);

		if (!c || pos >= sizeof(kinds) - 64)
			continue;
		pos += (size_t)snprintf(kinds + pos, sizeof(kinds) - pos, "%s%s",
					nk ? ", " : "", msr_vkind_name((enum msr_vkind)k));
		if (c != shown)
			pos += (size_t)snprintf(kinds + pos, sizeof(kinds) - pos, " x%llu",
						(unsigned long long)c);
		nk++;
	}
	fprintf(stderr, "msync-replay: %llu violation%s (%s)", (unsigned long long)shown,
		shown == 1 ? "" : "s", kinds);
	if (v) {
		fprintf(stderr, "%s", shown == 1 ? "" : ", first");
		if (v->strand >= 0)
			fprintf(stderr, " on strand %d", v->strand);
		fprintf(stderr, " at cycle %u, event %llu", v->ts,
			(unsigned long long)v->event);
	}
	fprintf(stderr, "; report: %s\n", out);
	if (first != SIZE_MAX)
		snprintf(id, sizeof(id), "V%zu ", first + 1);
	if (v && v->message[0])
		fprintf(stderr, "msync-replay: %s%s: %s\n", id, msr_vkind_name(v->kind),
			v->message);
	print_hidden(run);
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                               */
/* ------------------------------------------------------------------------ */

static void teardown(struct check_run *run)
{
	cpipe_finish(run->pipe);
	if (run->eng)
		msr_engine_destroy(run->eng);
	if (run->tso)
		msr_tso_destroy(run->tso);
	if (run->log)
		msr_steplog_close(run->log);
	if (run->rd)
		msr_trace_reader_close(run->rd);
	if (run->rep)
		msr_report_destroy(run->rep);
	if (run->hist)
		msr_history_destroy(run->hist);
	mguard_close(&run->guard);
	msr_config_release(&run->cfg);
}

int msr_cmd_check(int argc, char **argv)
{
	if (msr_check_many_wanted(argc, argv))
		return msr_check_many(argc, argv);
	return msr_check_one(argc, argv, NULL, 0);
}

int msr_check_one(int argc, char **argv, struct mguard_board *board, unsigned seat)
{
	struct check_run run;
	struct msr_report_filter filter;
	struct msr_error err = MSR_ERROR_INIT;
	struct sigaction sa;
	int code, rc;

	memset(&run, 0, sizeof(run));
	run.guard.fd = -1;
	code = parse_args(argc, argv, &run.o);
	if (code >= 0)
		return code;
	if (run.o.no_huge_pages) /* before the first table is made */
		msr_cli_no_huge_pages("check");
	clock_gettime(CLOCK_MONOTONIC, &run.t0);
	if ((rc = setup_config(&run, &filter, &err))) {
		/* a bad command line or configuration is not a property of the
		 * revision under test: never a bisect "skip" */
		msr_cli_print_error(&err);
		code = MSR_EXIT_UNUSABLE;
		goto out;
	}
	mguard_init(&run.guard, run.cfg.max_memory, board, seat,
		    "--max-memory or limits.max_memory");
	if ((rc = msr_history_create(CHECK_HISTORY_EVENTS, &run.hist, &err)) ||
	    (rc = msr_report_create(&run.cfg, run.hist, &run.rep, &err)) ||
	    (rc = add_inputs(&run, &err))) {
		msr_cli_print_error(&err);
		code = MSR_EXIT_UNUSABLE;
		goto out;
	}
	msr_report_set_filter(run.rep, &filter);
	run.sum.tso = !run.o.no_tso;
	check_signal = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: a blocked read returns */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if ((rc = setup_pipeline(&run, &err))) {
		if (check_signal)
			note_interrupted(&run);
		else
			note_error(&run, &err);
	} else {
		if (!run.o.single_thread && !run.o.fail_fast) {
			struct cpipe_sink ps = {&run, on_events, on_commit, on_op,
						on_violation,
						run.tso ? on_warm : NULL};
			uint64_t lag = msr_history_share(run.hist, CHECK_PIPE_LAG);

			if (lag && !(run.pipe = cpipe_start(&ps, lag)))
				msr_history_share(run.hist, 0);
		}
		replay(&run, &err);
		finish(&run, &err);
	}
	run.sum.elapsed = elapsed_since(&run.t0);
	msr_report_set_summary(run.rep, &run.sum);
	if ((rc = msr_report_write_yaml(run.rep, run.o.out, &err))) {
		msr_cli_print_error(&err);
		run.unusable = true;
		run.report_failed = true;
	}
	msr_error_clear(&err);
	if (run.o.junit && (rc = msr_report_write_junit(run.rep, run.o.junit, &err))) {
		msr_cli_print_error(&err);
		run.unusable = true;
	}
	if (!run.o.quiet)
		print_summary(&run);
	else if (run.sum.error[0])
		msr_cli_print_message(run.sum.error); /* -q keeps errors only */
	if (run.unusable)
		code = run.o.bisect ? MSR_EXIT_BISECT_SKIP : MSR_EXIT_UNUSABLE;
	else
		code = msr_report_shown(run.rep) ? MSR_EXIT_VIOLATIONS : MSR_EXIT_CLEAN;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
out:
	teardown(&run);
	return code;
}
