/*
 * check_many.c - `msync-replay check` on several traces: `check -j N A B ...`
 * or `check --list FILE`. Each trace is replayed by the single-trace check
 * in its own child process (at most N at a time), so engines stay
 * independent and a crash of one replay cannot take the others down. Then a
 * summary table goes to stdout, one row per trace in input order.
 *
 * This file never replays anything itself: it only plans the runs (trace,
 * step log, report path), builds each child's command line, waits for the
 * children and reads their reports back for the table (and, with --junit,
 * merges their JUnit documents into one). Exit: 2 if any trace
 * was unusable (125 with --bisect), else 1 if any had violations, else 0.
 */
#include "check-many-internal.h"
#include "many-junit-internal.h"
#include "many-list-internal.h"
#include "many-paths-internal.h"
#include "mem-guard-internal.h"
#include "cmd.h"
#include "report.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MANY_LINE_MAX 4096

/* Set by the SIGINT/SIGTERM handler of the parent. */
static volatile sig_atomic_t many_signal;

static void on_many_signal(int sig)
{
	many_signal = sig;
}

struct many_trace {
	char *trace, *steps, *report;
	unsigned line;  /* line in the --list file, 0 for a command-line trace */
	pid_t pid;
	unsigned seat;  /* on the memory board, while it runs */
	uint64_t bytes; /* trace and step log on disk: the start order */
	int status;     /* raw waitpid status */
	bool done;      /* ended (or could not be started) */
	bool failed;    /* could not be started */
	bool derived;   /* report path derived from -o DIR, not listed */
};

struct many_pass {
	const char *name, *value;
};

struct many_run {
	struct many_trace *t;
	size_t n, cap;
	unsigned jobs;
	const char *list, *outdir, *steps_suffix, *steps_name;
	const char *junit;  /* one document for every trace */
	struct mjunit *junit_parts; /* the replays' own, beside it */
	/* the replays running at once hold the automatic memory limit
	 * together; seated[i]: the running replay at seat i, NULL when free
	 * (reaping looks there, not through every trace of a long list) */
	struct mguard_board *board;
	struct many_trace **seated;
	struct many_trace **order; /* the traces in the order their replays start */
	bool bisect;
	bool quiet;
	int progress;   /* a line per ended replay: 1, 0, -1 = when stderr is a tty */
	/* options handed to every child: long name, value or NULL */
	struct many_pass *pass;
	size_t npass;
	char *prog;
};

enum {
	MANY_OPT_LIST = 512, MANY_OPT_STEPS_SUFFIX, MANY_OPT_STEPS_NAME, MANY_OPT_JUNIT,
	MANY_OPT_PASS_ARG, MANY_OPT_PASS_FLAG, MANY_OPT_BISECT, MANY_OPT_PROGRESS,
	MANY_OPT_NO_PROGRESS,
};

/* Every option of the single-trace check, so that the whole command line
 * can be understood here; most are only passed on. */
static const struct option many_longopts[] = {
	{"jobs", required_argument, NULL, 'j'},
	{"list", required_argument, NULL, MANY_OPT_LIST},
	{"steps-suffix", required_argument, NULL, MANY_OPT_STEPS_SUFFIX},
	{"steps-name", required_argument, NULL, MANY_OPT_STEPS_NAME},
	{"steps", required_argument, NULL, 's'},
	{"output", required_argument, NULL, 'o'},
	{"junit", required_argument, NULL, MANY_OPT_JUNIT},
	{"config", required_argument, NULL, 'c'},
	{"image", required_argument, NULL, 'i'},
	{"strand", required_argument, NULL, MANY_OPT_PASS_ARG},
	{"cycles", required_argument, NULL, MANY_OPT_PASS_ARG},
	{"pa", required_argument, NULL, MANY_OPT_PASS_ARG},
	{"max-violations", required_argument, NULL, MANY_OPT_PASS_ARG},
	{"max-memory", required_argument, NULL, MANY_OPT_PASS_ARG},
	{"context", required_argument, NULL, MANY_OPT_PASS_ARG},
	{"context-before", required_argument, NULL, MANY_OPT_PASS_ARG},
	{"context-after", required_argument, NULL, MANY_OPT_PASS_ARG},
	{"no-tso", no_argument, NULL, MANY_OPT_PASS_FLAG},
	{"single-thread", no_argument, NULL, MANY_OPT_PASS_FLAG},
	{"no-huge-pages", no_argument, NULL, MANY_OPT_PASS_FLAG},
	{"fail-fast", no_argument, NULL, MANY_OPT_PASS_FLAG},
	{"bisect", no_argument, NULL, MANY_OPT_BISECT},
	{"progress", no_argument, NULL, MANY_OPT_PROGRESS},
	{"no-progress", no_argument, NULL, MANY_OPT_NO_PROGRESS},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static const char many_shortopts[] = ":j:s:o:c:i:qh";

bool msr_check_many_wanted(int argc, char **argv)
{
	int positional = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			return positional + (argc - i - 1) > 1;
		if (!strcmp(a, "--jobs") ||
		    !strncmp(a, "--jobs=", 7) || !strcmp(a, "--list") ||
		    !strncmp(a, "--list=", 7) || !strcmp(a, "--steps-suffix") ||
		    !strncmp(a, "--steps-suffix=", 15) || !strcmp(a, "--steps-name") ||
		    !strncmp(a, "--steps-name=", 13))
			return true;
		if (a[0] != '-' || !strcmp(a, "-")) {
			positional++;
			continue;
		}
		/* skip the value of an option that takes one: in a cluster of
		 * short options (-qo FILE) the value starts after the first
		 * letter that takes one, or is the next argument */
		if (a[1] != '-') {
			for (const char *p = a + 1; *p; p++)
				if (*p == 'j')
					return true;
				else if (strchr("scio", *p)) {
					i += !p[1];
					break;
				}
			continue;
		}
		if (!strchr(a, '=')) {
			for (const struct option *o = many_longopts; o->name; o++)
				/* getopt takes any unambiguous prefix */
				if (!strncmp(o->name, a + 2, strlen(a + 2)) &&
				    o->has_arg == required_argument) {
					i++;
					break;
				}
		}
	}
	return positional > 1;
}

/* ------------------------------------------------------------------------ */
/* Planning                                                                  */
/* ------------------------------------------------------------------------ */

static int add_trace(struct many_run *m, const char *trace, const char *steps,
		     const char *report, unsigned line)
{
	struct many_trace *t;

	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct many_trace *grown = realloc(m->t, cap * sizeof(*grown));

		if (!grown)
			return -1;
		m->t = grown;
		m->cap = cap;
	}
	t = &m->t[m->n];
	memset(t, 0, sizeof(*t));
	t->line = line;
	t->trace = strdup(trace);
	t->steps = steps ? strdup(steps) : NULL;
	t->report = report ? strdup(report) : NULL;
	m->n++;
	if (!t->trace || (steps && !t->steps) || (report && !t->report))
		return -1;
	return 0;
}

/* The list's name in messages. */
static const char *list_name(const struct many_run *m)
{
	return strcmp(m->list, "-") ? m->list : "standard input";
}

/* One line of the list: `TRACE [STEPS [REPORT]]` (many-list-internal.h),
 * STEPS '-' = no step log. Returns -1 to go on, or the exit code. */
static int parse_list_line(struct many_run *m, char *s, unsigned line)
{
	char *f[3];
	unsigned nf, col;
	const char *why = mlist_fields(s, f, 3, &nf, &col);

	if (why)
		return msr_cli_usage_error("check", "%s:%u:%u: %s; a line is TRACE "
					   "[STEPS [REPORT]]", list_name(m), line,
					   col, why);
	if (!nf)
		return -1;
	if (!strcmp(f[0], "-"))
		return msr_cli_usage_error("check", "%s:%u: a trace in a list cannot be "
					   "standard input", list_name(m), line);
	if (add_trace(m, f[0], nf > 1 && strcmp(f[1], "-") ? f[1] : NULL,
		      nf > 2 ? f[2] : NULL, line))
		return msr_cli_usage_error("check", "out of memory");
	return -1;
}

/* Read the whole list before any replay starts ('-' = standard input,
 * which no replay reads). */
static int read_list(struct many_run *m)
{
	char buf[MANY_LINE_MAX];
	unsigned line = 0;
	int code = -1;
	bool in = !strcmp(m->list, "-");
	FILE *f = in ? stdin : fopen(m->list, "r");

	if (!f)
		return msr_cli_usage_error("check", "--list=%s: cannot open: %s", m->list,
					   strerror(errno));
	while (code < 0 && fgets(buf, sizeof(buf), f)) {
		line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			code = msr_cli_usage_error("check", "%s:%u: line longer than %d "
						   "bytes", list_name(m), line,
						   MANY_LINE_MAX - 2);
			break;
		}
		/* a list saved by a Windows editor may start with a UTF-8 BOM */
		code = parse_list_line(m, line == 1 && !strncmp(buf, "\xEF\xBB\xBF", 3)
				       ? buf + 3 : buf, line);
	}
	if (code < 0 && ferror(f))
		code = msr_cli_usage_error("check", "%s: read error: %s",
					   list_name(m), strerror(errno));
	if (!in)
		fclose(f);
	return code;
}

static int report_cmp(const void *a, const void *b)
{
	const struct many_trace *const *x = a, *const *y = b;

	return strcmp((*x)->report, (*y)->report);
}

/* Two traces of `by` (sorted by report) that share a report, in input
 * order; false when every report is distinct. */
static bool report_clash(const struct many_trace **by, size_t n,
			 const struct many_trace **a, const struct many_trace **b)
{
	for (size_t i = 1; i < n; i++) {
		if (strcmp(by[i - 1]->report, by[i]->report))
			continue;
		*a = by[i - 1] < by[i] ? by[i - 1] : by[i];
		*b = by[i - 1] < by[i] ? by[i] : by[i - 1];
		return true;
	}
	return false;
}

/*
 * Report paths for the traces the list does not name: DIR/<basename>.yaml,
 * or, when two of them would share a report, as many trailing directories
 * of the trace paths as make every report distinct (the same depth for all,
 * so the layout is predictable). `by` has room for every trace.
 */
static int derive_reports(struct many_run *m, const struct many_trace **by)
{
	unsigned deepest = 1;
	bool derived = false;

	for (size_t i = 0; i < m->n; i++) {
		unsigned d = mpath_depth(m->t[i].trace);

		m->t[i].derived = !m->t[i].report;
		derived |= m->t[i].derived;
		if (m->t[i].derived && d > deepest)
			deepest = d;
	}
	for (unsigned depth = 1;; depth++) {
		const struct many_trace *a, *b;

		for (size_t i = 0; i < m->n; i++) {
			struct many_trace *t = &m->t[i];

			if (!t->derived)
				continue;
			free(t->report);
			if (!(t->report = mpath_report(m->outdir, t->trace, depth)))
				return msr_cli_usage_error("check", "out of memory");
		}
		for (size_t i = 0; i < m->n; i++)
			by[i] = &m->t[i];
		qsort(by, m->n, sizeof(*by), report_cmp);
		if (!report_clash(by, m->n, &a, &b))
			return -1;
		if (!derived || depth >= deepest)
			return msr_cli_usage_error("check", "%s and %s would both "
						   "write report %s; give report "
						   "paths in --list", a->trace, b->trace,
						   a->report);
	}
}

/* Fill in report and step paths; two traces may not share a report. */
static int complete_plan(struct many_run *m)
{
	const struct many_trace **by;
	int code;

	for (size_t i = 0; i < m->n; i++) {
		struct many_trace *t = &m->t[i];

		if (!t->steps && (m->steps_suffix || m->steps_name) &&
		    !(t->steps = m->steps_name ? mpath_steps_beside(t->trace, m->steps_name)
					       : mpath_steps_suffix(t->trace, m->steps_suffix)))
			return msr_cli_usage_error("check", "out of memory");
		if (!t->report && !m->outdir)
			return msr_cli_usage_error("check", "%s: no report path: several "
						   "traces need -o DIR or a REPORT column "
						   "in --list", t->trace);
		if (t->report && !strcmp(t->report, "-"))
			return msr_cli_usage_error("check", "%s: with several traces a "
						   "report cannot go to standard output",
						   t->trace);
	}
	by = malloc(m->n * sizeof(*by));
	if (!by)
		return msr_cli_usage_error("check", "out of memory");
	code = derive_reports(m, by);
	free(by);
	return code;
}

/* Create DIR and the directories under it that derived reports go to. */
static int make_report_dirs(const struct many_run *m)
{
	if (!m->outdir)
		return -1;
	if (mkdir(m->outdir, 0777) && errno != EEXIST)
		return msr_cli_usage_error("check", "-o %s: cannot create the directory: %s",
					   m->outdir, strerror(errno));
	for (size_t i = 0; i < m->n; i++) {
		char *r = m->t[i].report;

		if (!m->t[i].derived)
			continue;
		for (char *sl = strchr(r + strlen(m->outdir) + 1, '/'); sl;
		     sl = strchr(sl + 1, '/')) {
			int fail;

			*sl = '\0';
			fail = mkdir(r, 0777) && errno != EEXIST;
			if (fail) {
				int code = msr_cli_usage_error("check", "-o %s: cannot "
							       "create the directory %s: %s",
							       m->outdir, r, strerror(errno));
				*sl = '/';
				return code;
			}
			*sl = '/';
		}
	}
	return -1;
}

static void add_pass(struct many_run *m, const char *name, const char *value)
{
	m->pass[m->npass].name = name;
	m->pass[m->npass].value = value;
	m->npass++;
}

static unsigned online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1;
}

/* Replays running at once: -j, or fewer when there are fewer traces. */
static unsigned many_at_once(const struct many_run *m)
{
	return m->jobs < m->n ? m->jobs : (unsigned)m->n;
}

/* Returns -1 to go on, or the exit code. */
static int parse_many(int argc, char **argv, struct many_run *m)
{
	int c, idx = 0;
	uint64_t jobs;

	m->jobs = online_cpus();
	m->progress = -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, many_shortopts, many_longopts, &idx)) != -1) {
		switch (c) {
		case 'j':
			if (!msr_cli_parse_u64(optarg, &jobs) || !jobs || jobs > 1024)
				return msr_cli_usage_error("check", "-j %s: expected 1..1024",
							   optarg);
			m->jobs = (unsigned)jobs;
			break;
		case MANY_OPT_LIST: m->list = optarg; break;
		case MANY_OPT_STEPS_SUFFIX: m->steps_suffix = optarg; break;
		case MANY_OPT_STEPS_NAME:
			if (!*optarg || strchr(optarg, '/'))
				return msr_cli_usage_error("check", "--steps-name=%s: expected "
							   "a file name without '/'", optarg);
			m->steps_name = optarg;
			break;
		case 'o': m->outdir = optarg; break;
		case 's':
			return msr_cli_usage_error("check", "--steps cannot be shared by "
						   "several traces: use --steps-suffix, "
						   "--steps-name or a STEPS column in --list");
		case MANY_OPT_JUNIT:
			if (!strcmp(optarg, "-"))
				return msr_cli_usage_error("check", "--junit -: with several "
							   "traces standard output holds "
							   "the table; name a file");
			m->junit = optarg;
			break;
		case 'c': add_pass(m, "config", optarg); break;
		case 'i': add_pass(m, "image", optarg); break;
		case MANY_OPT_PASS_ARG: add_pass(m, many_longopts[idx].name, optarg); break;
		case MANY_OPT_PASS_FLAG: add_pass(m, many_longopts[idx].name, NULL); break;
		case MANY_OPT_BISECT: m->bisect = true; add_pass(m, "bisect", NULL); break;
		/* children never show progress and are always quiet */
		case MANY_OPT_PROGRESS: m->progress = 1; break;
		case MANY_OPT_NO_PROGRESS: m->progress = 0; break;
		case 'q': m->quiet = true; break;
		case 'h': return msr_cmd_check(2, (char *[]){m->prog, "--help", NULL});
		case 'V': return msr_cmd_check(2, (char *[]){m->prog, "--version", NULL});
		case ':':
			return msr_cli_usage_error("check", "option %s needs a value",
						   argv[optind - 1]);
		default:
			return msr_cli_usage_error("check", "unknown option %s",
						   argv[optind - 1]);
		}
	}
	if (m->steps_suffix && m->steps_name)
		return msr_cli_usage_error("check", "give --steps-suffix or --steps-name, "
					   "not both");
	if (m->list && (c = read_list(m)) >= 0)
		return c;
	for (int i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "-"))
			return msr_cli_usage_error("check", "with several traces none can "
						   "be standard input");
		if (add_trace(m, argv[i], NULL, NULL, 0))
			return msr_cli_usage_error("check", "out of memory");
	}
	if (!m->n)
		return m->list ? msr_cli_usage_error("check", "%s: no traces in the list",
						     list_name(m))
			       : msr_cli_usage_error("check", "missing TRACE argument");
	/* a replay's helper threads keep up to two cores busy: use them only
	 * while the traces replayed at once leave that many */
	if (2 * (size_t)many_at_once(m) > online_cpus())
		add_pass(m, "single-thread", NULL);
	if (m->progress < 0)
		m->progress = !m->quiet && isatty(STDERR_FILENO);
	return complete_plan(m);
}

/* ------------------------------------------------------------------------ */
/* Children                                                                  */
/* ------------------------------------------------------------------------ */

/* In the child: the single-trace check with this trace's paths. */
static void __attribute__((noreturn)) run_child(const struct many_run *m,
						const struct many_trace *t,
						const sigset_t *old_mask)
{
	char **av = calloc(m->npass + 12, sizeof(*av));
	int ac = 0, code;

	if (!av)
		_exit(MSR_EXIT_UNUSABLE);
	/* signals are blocked since the fork: a stop request that comes before
	 * the check installs its own handler ends the child instead of being
	 * lost in the parent's handler */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigprocmask(SIG_SETMASK, old_mask, NULL);
	av[ac++] = m->prog;
	for (size_t i = 0; i < m->npass; i++) {
		const struct many_pass *p = &m->pass[i];
		size_t len = strlen(p->name) + (p->value ? strlen(p->value) : 0) + 4;

		/* --name=value keeps a value that starts with '-' a value */
		if (!(av[ac] = malloc(len)))
			_exit(MSR_EXIT_UNUSABLE);
		snprintf(av[ac++], len, p->value ? "--%s=%s" : "--%s", p->name, p->value);
	}
	av[ac++] = "--quiet";
	av[ac++] = "--no-progress";
	av[ac++] = "--output";
	av[ac++] = t->report;
	if (t->steps) {
		av[ac++] = "--steps";
		av[ac++] = t->steps;
	}
	if (m->junit_parts) {
		av[ac++] = "--junit";
		av[ac++] = (char *)mjunit_part(m->junit_parts, (size_t)(t - m->t));
	}
	av[ac++] = "--";
	av[ac++] = t->trace;
	code = msr_check_one(ac, av, m->board, t->seat);
	for (size_t i = 0; i < m->npass; i++)
		free(av[1 + i]);
	free(av);
	fflush(stdout);
	fflush(stderr);
	_exit(code);
}

static int start_child(struct many_run *m, struct many_trace *t)
{
	pid_t pid;
	sigset_t stop, old_mask;
	unsigned seat = 0;

	/* at most many_at_once run, so a seat is free */
	while (seat + 1 < m->board->seats && m->seated[seat])
		seat++;
	t->seat = seat;

	/* the table reads this path back: a report left by an earlier run
	 * must not stand in for one this replay never wrote */
	if (unlink(t->report) && errno != ENOENT)
		return -1;
	fflush(stdout);
	fflush(stderr);
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &old_mask);
	pid = fork();
	if (!pid)
		run_child(m, t, &old_mask);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	if (pid < 0)
		return -1;
	t->pid = pid;
	m->seated[seat] = t;
	return 0;
}

/* An ended (or never started) replay's exit code as it counts, and in
 * `text` as the table shows it: "1", "signal 9", "not run". */
static int row_exit(const struct many_run *m, const struct many_trace *t, char *text,
		    size_t len)
{
	int code;

	if (!t->done || t->failed) {
		snprintf(text, len, "not run");
		return m->bisect ? MSR_EXIT_BISECT_SKIP : MSR_EXIT_UNUSABLE;
	}
	if (WIFEXITED(t->status)) {
		code = WEXITSTATUS(t->status);
		snprintf(text, len, "%d", code);
		return code;
	}
	snprintf(text, len, "signal %d", WIFSIGNALED(t->status) ? WTERMSIG(t->status) : 0);
	return m->bisect ? MSR_EXIT_BISECT_SKIP : MSR_EXIT_UNUSABLE;
}

/* Wait for one child: the trace whose replay ended in *done (NULL for a
 * child that is not one of them); false when a signal interrupted the wait. */
static bool reap_one(struct many_run *m, struct many_trace **done)
{
	int status;
	pid_t pid = waitpid(-1, &status, 0);

	*done = NULL;
	if (pid < 0)
		return errno != EINTR;
	for (unsigned seat = 0; seat < m->board->seats; seat++) {
		struct many_trace *t = m->seated[seat];

		if (t && t->pid == pid) {
			t->status = status;
			t->done = true;
			/* a replay killed by a signal left its last size there */
			mguard_board_clear(m->board, seat);
			m->seated[seat] = NULL;
			*done = t;
			return true;
		}
	}
	return true;
}

/* How far the run is, when a replay has ended (--progress). */
struct many_tally {
	size_t ended, violations, unusable;
};

static void show_progress(const struct many_run *m, struct many_tally *tally,
			  const struct many_trace *t, size_t running)
{
	char text[32], *name;
	int code;
	const char *what;

	if (!m->progress)
		return;
	code = row_exit(m, t, text, sizeof(text));
	/* quoted as in the table, so a path holding ": " reads unambiguously */
	name = mlist_quote(t->trace);
	what = code == MSR_EXIT_CLEAN ? "clean"
	       : code == MSR_EXIT_VIOLATIONS ? "violations" : "unusable";
	tally->ended++;
	tally->violations += code == MSR_EXIT_VIOLATIONS;
	tally->unusable += code != MSR_EXIT_CLEAN && code != MSR_EXIT_VIOLATIONS;
	fprintf(stderr, "msync-replay: [%zu/%zu] %s: %s (%s%s); %zu with violations, "
		"%zu unusable, %zu running\n", tally->ended, m->n,
		name ? name : t->trace, what,
		WIFEXITED(t->status) && !t->failed ? "exit " : "", text,
		tally->violations, tally->unusable, running);
	free(name);
}

/* SIGINT/SIGTERM: start nothing more, pass the signal on to the running
 * replays (each then writes its partial report), print the table. */
static void forward_signal(const struct many_run *m, int sig)
{
	for (unsigned seat = 0; seat < m->board->seats; seat++)
		if (m->seated[seat])
			kill(m->seated[seat]->pid, sig);
}

/* A regular file's size; a pipe or device counts as larger than any file
 * (its writer may be waiting for the replay to open it), a missing file as
 * 0 (its replay ends at once, saying why). */
static uint64_t file_bytes(const char *path)
{
	struct stat st;

	if (!path || stat(path, &st))
		return 0;
	return S_ISREG(st.st_mode) ? (uint64_t)st.st_size : UINT64_MAX / 2;
}

static int larger_first(const void *a, const void *b)
{
	const struct many_trace *x = *(const struct many_trace *const *)a;
	const struct many_trace *y = *(const struct many_trace *const *)b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x < y ? -1 : x > y; /* equal sizes: input order */
}

/* Start the largest inputs first, so that a long replay listed last does
 * not run alone at the end while the other cores idle (longest processing
 * time first; the trace's and step log's sizes stand in for the replay's
 * length; equal sizes keep the input order). Fills m->order; false when
 * memory is short. */
static bool plan_start_order(struct many_run *m)
{
	if (!(m->order = malloc(m->n * sizeof(*m->order))))
		return false;
	for (size_t i = 0; i < m->n; i++) {
		m->t[i].bytes = file_bytes(m->t[i].trace) + file_bytes(m->t[i].steps);
		m->order[i] = &m->t[i];
	}
	qsort(m->order, m->n, sizeof(*m->order), larger_first);
	return true;
}

/* Run every trace, at most m->jobs at a time; a trace whose child cannot
 * be started counts as unusable, one never started is shown as such. */
static void run_all(struct many_run *m)
{
	size_t next = 0, running = 0;
	bool forwarded = false;
	struct many_tally tally = {0};
	struct many_trace *ended;

	for (;;) {
		if (many_signal && !forwarded) {
			forward_signal(m, many_signal);
			forwarded = true;
		}
		while (!many_signal && next < m->n && running < m->jobs) {
			struct many_trace *t = m->order[next];

			if (start_child(m, t)) {
				fprintf(stderr, "msync-replay: %s: cannot start a replay: %s\n",
					t->trace, strerror(errno));
				t->failed = true;
				t->done = true;
				show_progress(m, &tally, t, running);
			} else {
				running++;
			}
			next++;
		}
		if (!running)
			break;
		if (!reap_one(m, &ended))
			continue;
		running--;
		if (ended)
			show_progress(m, &tally, ended, running);
	}
}

/* ------------------------------------------------------------------------ */
/* Summary table                                                             */
/* ------------------------------------------------------------------------ */

/* Paths in the table are written as --list fields (quoted when they hold
 * blanks), so that a script splits its rows the way --list does. */
static int print_table(const struct many_run *m)
{
	bool unusable = false, violations = false;
	size_t w = strlen("trace");
	char **names = calloc(m->n ? m->n : 1, sizeof(*names));

	if (!names)
		return msr_cli_usage_error("check", "out of memory");
	for (size_t i = 0; i < m->n; i++) {
		if (!(names[i] = mlist_quote(m->t[i].trace))) {
			for (size_t k = 0; k < i; k++)
				free(names[k]);
			free(names);
			return msr_cli_usage_error("check", "out of memory");
		}
		if (strlen(names[i]) > w)
			w = strlen(names[i]);
	}
	printf("%-*s  %-9s  %10s  %-22s  %s\n", (int)w, "trace", "exit", "violations",
	       "first", "report");
	for (size_t i = 0; i < m->n; i++) {
		const struct many_trace *t = &m->t[i];
		struct msr_report_doc *doc = NULL;
		struct msr_error err = MSR_ERROR_INIT;
		char status[16], count[24] = "-", *report = NULL;
		const char *first = "-";
		int code = row_exit(m, t, status, sizeof(status));

		if (code == MSR_EXIT_VIOLATIONS)
			violations = true;
		else if (code != MSR_EXIT_CLEAN)
			unusable = true;
		if (!msr_report_doc_load(t->report, &doc, &err)) {
			snprintf(count, sizeof(count), "%llu",
				 (unsigned long long)msr_report_doc_violations(doc));
			if (msr_report_doc_count(doc))
				first = msr_report_doc_get(doc, 0)->kind;
			report = mlist_quote(t->report);
		}
		printf("%-*s  %-9s  %10s  %-22s  %s\n", (int)w, names[i], status, count,
		       first, report ? report : doc ? t->report : "(not written)");
		free(report);
		free(names[i]);
		msr_report_doc_free(doc);
		msr_error_clear(&err);
	}
	free(names);
	fflush(stdout);
	if (unusable)
		return m->bisect ? MSR_EXIT_BISECT_SKIP : MSR_EXIT_UNUSABLE;
	return violations ? MSR_EXIT_VIOLATIONS : MSR_EXIT_CLEAN;
}

/* ------------------------------------------------------------------------ */
/* One JUnit document                                                        */
/* ------------------------------------------------------------------------ */

/* Why a replay left no JUnit document, for its testsuite. */
static void junit_missing(const struct many_run *m, const struct many_trace *t,
			  char *why, size_t len)
{
	char text[32];

	row_exit(m, t, text, sizeof(text));
	if (t->failed)
		snprintf(why, len, "the replay could not be started");
	else if (!t->done)
		snprintf(why, len, "not run: the run was stopped before this "
			 "replay started");
	else if (WIFEXITED(t->status))
		snprintf(why, len, "the replay ended with exit status %s and wrote "
			 "no report (its error is on stderr)", text);
	else
		snprintf(why, len, "the replay was killed by %s", text);
}

/* Merge the replays' documents into --junit FILE, in input order (release
 * removes them). Returns the run's exit code, made unusable when FILE
 * cannot be written. */
static int merge_junit(const struct many_run *m, int code)
{
	const char **traces, **whyp;
	char (*why)[160];
	struct msr_error err = MSR_ERROR_INIT;
	int rc;

	if (!m->junit_parts)
		return code;
	traces = calloc(m->n, sizeof(*traces));
	why = calloc(m->n, sizeof(*why));
	whyp = calloc(m->n, sizeof(*whyp));
	if (!traces || !why || !whyp) {
		rc = msr_error_set(&err, MSR_E_NOMEM, "junit", m->junit, "out of memory");
	} else {
		for (size_t i = 0; i < m->n; i++) {
			traces[i] = m->t[i].trace;
			junit_missing(m, &m->t[i], why[i], sizeof(why[i]));
			whyp[i] = why[i];
		}
		rc = mjunit_merge(m->junit_parts, traces, whyp, &err);
	}
	if (rc != MSR_OK)
		msr_cli_print_error(&err);
	msr_error_clear(&err);
	free(traces);
	free(why);
	free(whyp);
	if (rc != MSR_OK)
		return m->bisect ? MSR_EXIT_BISECT_SKIP : MSR_EXIT_UNUSABLE;
	return code;
}

static void release(struct many_run *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->t[i].trace);
		free(m->t[i].steps);
		free(m->t[i].report);
	}
	free(m->t);
	mjunit_close(m->junit_parts);
	mguard_board_destroy(m->board);
	free(m->seated);
	free(m->order);
	free(m->pass);
}

int msr_check_many(int argc, char **argv)
{
	struct many_run m;
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int code;

	memset(&m, 0, sizeof(m));
	m.pass = calloc((size_t)argc + 1, sizeof(*m.pass));
	if (!args || !m.pass) {
		free(args);
		free(m.pass);
		return msr_cli_usage_error("check", "out of memory");
	}
	/* getopt permutes; keep the caller's argv as it was */
	memcpy(args, argv, (size_t)argc * sizeof(*args));
	m.prog = argv[0];
	code = parse_many(argc, args, &m);
	if (code < 0) {
		code = make_report_dirs(&m);
		if (code < 0 && m.junit && !(m.junit_parts = mjunit_open(m.junit, m.n)))
			code = msr_cli_usage_error("check", "--junit %s: cannot create a "
						   "working directory beside it: %s",
						   m.junit, strerror(errno));
		if (code < 0 && (!(m.board = mguard_board_create(many_at_once(&m))) ||
				 !(m.seated = calloc(m.board->seats, sizeof(*m.seated))) ||
				 !plan_start_order(&m)))
			code = msr_cli_usage_error("check", "out of memory");
		if (code < 0) {
			struct sigaction sa;

			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_many_signal; /* no SA_RESTART: waitpid returns */
			many_signal = 0;
			sigaction(SIGINT, &sa, NULL);
			sigaction(SIGTERM, &sa, NULL);
			run_all(&m);
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			code = merge_junit(&m, print_table(&m));
		}
	}
	release(&m);
	free(args);
	return code;
}
