/*
 * main.c - the msync-gen command line: parses options, wires program,
 * model, faults and outputs, and maps failures to exit codes (0 success,
 * 2 usage or I/O error). All the work is in the other files; this one must
 * stay thin and is the only place that prints or exits.
 */
#include "gen-internal.h"
#include "msr_version.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct opts {
	struct gen_config cfg;
	const char *out, *steps, *image, *expect;
	struct gen_inject inj[GEN_MAX_INJECT];
	unsigned ninj;
	int zlevel;
	bool quiet;
};

static void usage(FILE *f)
{
	fputs(
"usage: msync-gen -o TRACE[.zst] [options]\n"
"Generate a synthetic UltraSPARC T2-like memory-system trace (nas.trace),\n"
"its ISS step log, initial memory image and fault expectations.\n"
"\n"
"outputs:\n"
"  -o, --output FILE       binary trace (zstd when FILE ends in .zst; - = stdout)\n"
"      --steps FILE        ISS step log (zstd when FILE ends in .zst)\n"
"      --image FILE        initial memory image of the pre-initialised regions\n"
"      --expect FILE       YAML sidecar: what a checker must report per fault\n"
"      --zstd-level N      trace compression level (default 3)\n"
"size (default --events 100000):\n"
"      --events N          stop issuing after N events, then drain\n"
"      --instructions N    stop after N program instructions, then drain\n"
"system:\n"
"      --seed N            PRNG seed (default 1); same seed = same bytes\n"
"      --cores C           cores (default 8, max 32)\n"
"      --threads T         strands per core (default 8); cores*T <= 256\n"
"      --stb-depth D       store-buffer entries per strand (default 8)\n"
"      --l2-absent P       fraction of 64-byte lines initially not in L2 (0.05)\n"
"      --evict-rate P      L2 evictions per cycle (0.002)\n"
"      --dma-rate P        DMA writes per cycle (0.0005)\n"
"      --slam-rate P       MEM_SLAM per cycle (0.0005)\n"
"      --check-rate P      MEM_CHECK per cycle (0.001)\n"
"      --other-rate P      non-memory message after an event, register delta\n"
"                          and TLB write per instruction (0)\n"
"      --pop-rate P        squashed LD/ST issue + LD_POP/ST_POP per insn (0.01)\n"
"program:\n"
"      --program random|litmus:NAME   NAME = SB MP LB IRIW WRC 2+2W R S\n"
"      --mix OP=W,...      random mix weights (unlisted ops get 0); OPs:\n"
"                          ld ldd ldq ldblk ldio st stblk stbi cas swap ldstub\n"
"                          membar nop prefetch\n"
"      --hot-lines N       16-byte lines of the contended set (default 16)\n"
"      --hot-rate P        share of accesses to the hot lines (default 0.5)\n"
"      --footprint BYTES   cacheable pool size (default 65536, k/M suffixes)\n"
"faults:\n"
"      --inject KIND[:RATE|@N]  repeatable; KIND = stale-l1 store-order\n"
"                          bad-bypass store-data load-value lost-inv\n"
"                          atomic-break membar; RATE per instruction, @N once\n"
"                          at instruction N, bare = once at the first chance\n"
"other:\n"
"  -q, --quiet             no summary on stderr\n"
"  -h, --help / -V, --version\n", f);
}

static int bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "msync-gen: bad value for --%s: '%s': %s\n", opt, val, why);
	return -1;
}

static int parse_u64(const char *opt, const char *v, uint64_t lo, uint64_t hi,
		     uint64_t *out)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (*end == 'k' || *end == 'K')
		x <<= 10, end++;
	else if (*end == 'M')
		x <<= 20, end++;
	if (errno || end == v || *end || v[0] == '-' || x < lo || x > hi) {
		char why[96];

		snprintf(why, sizeof(why), "expected an integer in [%llu, %llu]",
			 (unsigned long long)lo, (unsigned long long)hi);
		return bad(opt, v, why);
	}
	*out = x;
	return 0;
}

static int parse_prob(const char *opt, const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	if (errno || end == v || *end || *out < 0 || *out > 1)
		return bad(opt, v, "expected a probability in [0, 1]");
	return 0;
}

static int parse_mix(const char *v, unsigned mix[GEN_MIX_COUNT])
{
	const char *p = v;

	memset(mix, 0, sizeof(unsigned) * GEN_MIX_COUNT);
	while (*p) {
		size_t n = strcspn(p, "=");
		unsigned k;
		char *end;
		unsigned long w;

		for (k = 0; k < GEN_MIX_COUNT; k++)
			if (strlen(gen_mix_name(k)) == n &&
			    !strncmp(p, gen_mix_name(k), n))
				break;
		if (k == GEN_MIX_COUNT || p[n] != '=')
			return bad("mix", v, "expected OP=WEIGHT,... with known OPs");
		errno = 0;
		w = strtoul(p + n + 1, &end, 10);
		if (errno || end == p + n + 1 || (*end && *end != ',') || w > 1000000)
			return bad("mix", v, "weights are integers <= 1000000");
		mix[k] = (unsigned)w;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int parse_program(const char *v, struct gen_config *cfg)
{
	if (!strcmp(v, "random")) {
		cfg->litmus[0] = 0;
		return 0;
	}
	if (!strncmp(v, "litmus:", 7)) {
		for (unsigned i = 0; gen_litmus_names[i]; i++)
			if (!strcmp(v + 7, gen_litmus_names[i])) {
				snprintf(cfg->litmus, sizeof(cfg->litmus), "%s", v + 7);
				return 0;
			}
	}
	return bad("program", v, "expected random or litmus:SB|MP|LB|IRIW|WRC|2+2W|R|S");
}

enum {
	O_STEPS = 256, O_IMAGE, O_EXPECT, O_ZLEVEL, O_EVENTS, O_INSNS, O_SEED,
	O_CORES, O_THREADS, O_STB, O_L2ABS, O_EVICT, O_DMA, O_SLAM, O_CHECK,
	O_OTHER, O_POP, O_PROGRAM, O_MIX, O_HOT, O_HOTRATE, O_FOOT, O_INJECT,
};

static const struct option longopts[] = {
	{"output", required_argument, NULL, 'o'},
	{"steps", required_argument, NULL, O_STEPS},
	{"image", required_argument, NULL, O_IMAGE},
	{"expect", required_argument, NULL, O_EXPECT},
	{"zstd-level", required_argument, NULL, O_ZLEVEL},
	{"events", required_argument, NULL, O_EVENTS},
	{"instructions", required_argument, NULL, O_INSNS},
	{"seed", required_argument, NULL, O_SEED},
	{"cores", required_argument, NULL, O_CORES},
	{"threads", required_argument, NULL, O_THREADS},
	{"stb-depth", required_argument, NULL, O_STB},
	{"l2-absent", required_argument, NULL, O_L2ABS},
	{"evict-rate", required_argument, NULL, O_EVICT},
	{"dma-rate", required_argument, NULL, O_DMA},
	{"slam-rate", required_argument, NULL, O_SLAM},
	{"check-rate", required_argument, NULL, O_CHECK},
	{"other-rate", required_argument, NULL, O_OTHER},
	{"pop-rate", required_argument, NULL, O_POP},
	{"program", required_argument, NULL, O_PROGRAM},
	{"mix", required_argument, NULL, O_MIX},
	{"hot-lines", required_argument, NULL, O_HOT},
	{"hot-rate", required_argument, NULL, O_HOTRATE},
	{"footprint", required_argument, NULL, O_FOOT},
	{"inject", required_argument, NULL, O_INJECT},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static int parse_num_opt(int c, const char *v, struct opts *o)
{
	struct gen_config *g = &o->cfg;
	uint64_t x = 0;
	int rc = 0;

	switch (c) {
	case O_ZLEVEL: rc = parse_u64("zstd-level", v, 0, 19, &x); o->zlevel = (int)x; break;
	case O_EVENTS: rc = parse_u64("events", v, 1, UINT64_MAX, &g->max_events); break;
	case O_INSNS: rc = parse_u64("instructions", v, 1, UINT64_MAX, &g->max_instructions); break;
	case O_SEED: rc = parse_u64("seed", v, 0, UINT64_MAX, &g->seed); break;
	case O_CORES: rc = parse_u64("cores", v, 1, 32, &x); g->cores = (unsigned)x; break;
	case O_THREADS: rc = parse_u64("threads", v, 1, 256, &x); g->threads = (unsigned)x; break;
	case O_STB: rc = parse_u64("stb-depth", v, 1, 32, &x); g->stb_depth = (unsigned)x; break;
	case O_HOT: rc = parse_u64("hot-lines", v, 0, 1u << 20, &x); g->hot_lines = (unsigned)x; break;
	case O_FOOT: rc = parse_u64("footprint", v, 1024, 64ull << 20, &g->footprint); break;
	case O_L2ABS: rc = parse_prob("l2-absent", v, &g->l2_absent); break;
	case O_EVICT: rc = parse_prob("evict-rate", v, &g->evict_rate); break;
	case O_DMA: rc = parse_prob("dma-rate", v, &g->dma_rate); break;
	case O_SLAM: rc = parse_prob("slam-rate", v, &g->slam_rate); break;
	case O_CHECK: rc = parse_prob("check-rate", v, &g->check_rate); break;
	case O_OTHER: rc = parse_prob("other-rate", v, &g->other_rate); break;
	case O_POP: rc = parse_prob("pop-rate", v, &g->pop_rate); break;
	case O_HOTRATE: rc = parse_prob("hot-rate", v, &g->hot_rate); break;
	default: rc = -1;
	}
	return rc;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	struct msr_error err = MSR_ERROR_INIT;
	char buf[512];
	int c;

	gen_config_default(&o->cfg);
	o->zlevel = 3;
	while ((c = getopt_long(argc, argv, "o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->out = optarg; break;
		case O_STEPS: o->steps = optarg; break;
		case O_IMAGE: o->image = optarg; break;
		case O_EXPECT: o->expect = optarg; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("msync-gen %s\n", MSR_VERSION); exit(0);
		case O_PROGRAM: if (parse_program(optarg, &o->cfg)) return -1; break;
		case O_MIX: if (parse_mix(optarg, o->cfg.mix)) return -1; break;
		case O_INJECT:
			if (o->ninj == GEN_MAX_INJECT)
				return bad("inject", optarg, "too many --inject options");
			if (gen_inject_parse(optarg, &o->inj[o->ninj], &err) < 0) {
				fprintf(stderr, "msync-gen: %s\n",
					msr_error_format(&err, buf, sizeof(buf)));
				return -1;
			}
			o->ninj++;
			break;
		case '?': return -1;
		default:
			if (parse_num_opt(c, optarg, o))
				return -1;
		}
	}
	if (optind < argc)
		return bad("output", argv[optind], "unexpected argument (use -o FILE)");
	if (!o->out) {
		fprintf(stderr, "msync-gen: missing -o TRACE (see --help)\n");
		return -1;
	}
	if (o->cfg.cores * o->cfg.threads > 256)
		return bad("threads", "", "cores * threads must be <= 256");
	o->cfg.footprint &= ~63ull;
	if (!o->cfg.max_events && !o->cfg.max_instructions)
		o->cfg.max_events = 100000;
	return 0;
}

/* ---------------------------------------------------------------- */
/* wiring                                                            */
/* ---------------------------------------------------------------- */

struct outs {
	struct msr_trace_writer *w;
	struct gen_textout *steps;
	char line[GEN_STEP_LINE_MAX];
};

static int sink_event(void *ctx, const struct msr_event *ev,
		      struct msr_error *err)
{
	struct outs *o = ctx;

	return msr_trace_writer_put(o->w, ev, err);
}

static int sink_step(void *ctx, const struct gen_step *st,
		     struct msr_error *err)
{
	struct outs *o = ctx;
	size_t n;

	if (!o->steps)
		return MSR_OK;
	n = gen_step_format(st, o->line, sizeof(o->line));
	return gen_textout_write(o->steps, o->line, n, err);
}

struct image_ctx {
	struct gen_textout *t;
	uint64_t next;
	unsigned col;
};

static int image_word(void *ctx, uint64_t pa, const uint8_t w[8],
		      struct msr_error *err)
{
	static const char hexd[] = "0123456789abcdef";
	struct image_ctx *ic = ctx;
	char buf[64];
	size_t n = 0;

	if (pa != ic->next) {
		n = (size_t)snprintf(buf, sizeof(buf), "%s@%010llx\n",
				     ic->col ? "\n" : "", (unsigned long long)pa);
		ic->col = 0;
	}
	for (int i = 0; i < 8; i++) {
		buf[n++] = hexd[w[i] >> 4];
		buf[n++] = hexd[w[i] & 15];
	}
	ic->col = (ic->col + 1) % 4;
	buf[n++] = ic->col ? ' ' : '\n';
	ic->next = pa + 8;
	return gen_textout_write(ic->t, buf, n, err);
}

static int write_image(const char *path, const struct gen_model *m,
		       struct msr_error *err)
{
	struct image_ctx ic = {NULL, 1, 0};
	int rc = gen_textout_open(path, &ic.t, err);

	if (rc < 0)
		return rc;
	rc = gen_textout_write(ic.t, "# msync-gen initial memory\n", 27, err);
	if (rc == MSR_OK)
		rc = gen_model_foreach_initial(m, image_word, &ic, err);
	if (rc == MSR_OK && ic.col)
		rc = gen_textout_write(ic.t, "\n", 1, err);
	if (rc < 0) {
		gen_textout_close(ic.t, NULL);
		return rc;
	}
	return gen_textout_close(ic.t, err);
}

static void summary(const struct opts *o, const struct gen_model *m,
		    const struct gen_faults *f)
{
	struct gen_model_stats st;

	gen_model_get_stats(m, &st);
	fprintf(stderr,
		"msync-gen: %llu events, %llu instructions, %llu cycles, "
		"%llu faults injected; trace: %s\n",
		(unsigned long long)st.events, (unsigned long long)st.instructions,
		(unsigned long long)st.cycles,
		(unsigned long long)(f ? gen_faults_injected(f) : 0), o->out);
	fprintf(stderr,
		"msync-gen: loads %llu (L1 hits %llu, stale hits %llu, bypasses "
		"%llu), stores %llu, atomics %llu, commits %llu, invs %llu, "
		"evicts %llu\n",
		(unsigned long long)st.loads, (unsigned long long)st.l1_hits,
		(unsigned long long)st.stale_hits,
		(unsigned long long)st.stb_bypasses, (unsigned long long)st.stores,
		(unsigned long long)st.atomics, (unsigned long long)st.commits,
		(unsigned long long)st.invs, (unsigned long long)st.evicts);
}

static int open_outputs(const struct opts *o, struct outs *out,
			struct msr_error *err)
{
	int rc;
	size_t n = strlen(o->out);
	bool z = n > 4 && !strcmp(o->out + n - 4, ".zst");

	rc = msr_trace_writer_open(o->out, MSR_FMT_BINARY, z ? (o->zlevel ? o->zlevel : 1) : 0,
				   &out->w, err);
	if (rc < 0 || !o->steps)
		return rc;
	rc = gen_textout_open(o->steps, &out->steps, err);
	if (rc == MSR_OK)
		rc = gen_textout_write(out->steps, "# msync-steps 1\n", 16, err);
	return rc;
}

static int run(const struct opts *o, struct msr_error *err)
{
	struct outs out = {NULL, NULL, {0}};
	struct gen_sink sink = {&out, sink_event, sink_step};
	struct gen_program *prog = NULL;
	struct gen_faults *faults = NULL;
	struct gen_model *m = NULL;
	int rc;

	rc = gen_program_create(&o->cfg, &prog, err);
	if (rc == MSR_OK)
		rc = gen_faults_create(o->inj, o->ninj, o->expect, &o->cfg, &faults, err);
	if (rc == MSR_OK)
		rc = gen_model_create(&o->cfg, prog, faults, &sink, &m, err);
	if (rc == MSR_OK && o->image)
		rc = write_image(o->image, m, err);
	if (rc == MSR_OK)
		rc = open_outputs(o, &out, err);
	if (rc == MSR_OK)
		rc = gen_model_run(m, err);
	if (rc == MSR_OK && !o->quiet)
		summary(o, m, faults);
	if (out.w) {
		int r2 = msr_trace_writer_close(out.w, rc == MSR_OK ? err : NULL);

		rc = rc == MSR_OK ? r2 : rc;
	}
	if (out.steps) {
		int r2 = gen_textout_close(out.steps, rc == MSR_OK ? err : NULL);

		rc = rc == MSR_OK ? r2 : rc;
	}
	{
		int r2 = gen_faults_close(faults, rc == MSR_OK ? err : NULL);

		rc = rc == MSR_OK ? r2 : rc;
	}
	gen_model_destroy(m);
	gen_program_destroy(prog);
	return rc;
}

int main(int argc, char **argv)
{
	struct msr_error err = MSR_ERROR_INIT;
	struct opts o;
	char buf[1024];

	memset(&o, 0, sizeof(o));
	if (parse_args(argc, argv, &o) < 0)
		return 2;
	if (run(&o, &err) < 0) {
		fprintf(stderr, "msync-gen: %s\n", msr_error_format(&err, buf, sizeof(buf)));
		return 2;
	}
	return 0;
}
