/*
 * cmd_slice.c - msync-replay slice: cut a small reproducer out of a big
 * dump around one violation.
 *
 * Four streaming passes over the inputs, each with the check pipeline:
 *   1. find the violation (by id Vn in the order check reports them, or by
 *      fingerprint; --report translates an id through a saved report);
 *   2. pick the strands involved (the violation's, its proof's, the stores
 *      its values came from) and the cut points: the slice starts at the
 *      last event before the first involved operation where those strands
 *      have nothing in flight, and ends once they are quiet again after the
 *      last involved operation; note every 8-byte block they touch there;
 *   3. write the slice: the involved strands' events, other strands'
 *      commits and DMA writes to touched blocks turned into MEM_SLAMs (so
 *      memory holds the same values without their protocol), the step
 *      lines of the kept instructions, and the touched blocks' memory image
 *      at the start;
 *   4. check the slice and refuse it unless it shows a violation of the same
 *      kind on the same strand and (renumbered) instruction.
 * Memory is bounded by the touched footprint and the slice itself; no pass
 * keeps the original trace. It never edits its inputs.
 */
#include "slice-internal.h"
#include "report.h"

#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char slice_help[] =
	"usage: msync-replay slice TRACE [--steps LOG] (--violation Vn | --fingerprint FP)\n"
	"                          [--report R.yaml] [--config CFG] [--image MEM] -o OUTDIR\n"
	"\n"
	"Cut a small reproducer of one violation out of TRACE. The violation is\n"
	"named by its id in check's report (V1, V2, ... in the order found) or\n"
	"its fingerprint; with --report the id is looked up in that report.\n"
	"OUTDIR receives nas.trace.zst, steps.log, image.mem (the memory the\n"
	"slice starts from) and README.txt (what was cut, from where, and the\n"
	"original index of every kept event). The slice keeps the strands\n"
	"involved in the violation, from a point where they have nothing in\n"
	"flight until they are quiet again; other strands' writes to the blocks\n"
	"they touch become MEM_SLAMs. The slice is checked again and refused\n"
	"unless it shows the same kind of violation on the same strand and\n"
	"instruction (renumbered from the slice start; README.txt says how).\n"
	"\n"
	"options:\n"
	"  --steps LOG          ISS step log of TRACE (without it the events are\n"
	"                       replayed alone, as check does; steps.log is empty)\n"
	"  --violation Vn       the n-th violation check reports\n"
	"  --fingerprint FP     the violation with this fingerprint\n"
	"  --report R.yaml      look --violation up in this report of check\n"
	"  --config CFG.yaml    system configuration (as for check)\n"
	"  --image MEM          initial memory image of TRACE\n"
	"  --lookback N         ignore stores the violation's values came from when\n"
	"                       they are more than N events older (default 1000)\n"
	"  --shrink             then leave out kept strands but the violation's\n"
	"                       own, and then whole instructions (events and step\n"
	"                       line together), until no single instruction can go\n"
	"                       without losing the violation; README.txt gives the\n"
	"                       sizes before and after\n"
	"  --shrink-time S      stop shrinking after S seconds (default 60)\n"
	"  -o, --output OUTDIR  directory for the slice (created if missing)\n"
	"  --max-memory MIB     stop (exit 2) when the process holds more than MIB\n"
	"                       MiB (default: limits.max_memory of CFG, else 3/4\n"
	"                       of the machine's or the cgroup's memory; 0 =\n"
	"                       that automatic limit)\n"
	"  --single-thread      decompress TRACE and LOG on this thread (default:\n"
	"                       helper threads decompress them ahead while the\n"
	"                       passes over TRACE replay it; the slice is the same)\n"
	"  --no-huge-pages      keep the large tables on small pages (as for check)\n"
	"  -q, --quiet          no summary on stderr\n"
	"  -h, --help           show this help\n"
	"\n"
	"Exit status: 0 slice written and reproduces the violation, 1 the slice\n"
	"does not reproduce it (refused, files left for inspection), 2 unusable\n"
	"input, usage error or no such violation.\n";

enum { OPT_STEPS = 1100, OPT_VIOL, OPT_FP, OPT_REPORT, OPT_CONFIG, OPT_IMAGE,
       OPT_LOOKBACK, OPT_SHRINK, OPT_SHRINK_TIME, OPT_SINGLE_THREAD, OPT_MAX_MEMORY,
       OPT_NO_HUGE_PAGES };

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

static bool parse_vid(const char *s, uint64_t *n)
{
	return (s[0] == 'V' || s[0] == 'v') && msr_cli_parse_u64(s + 1, n) && *n > 0;
}

static int parse_args(int argc, char **argv, struct msr_slice_opts *o)
{
	static const struct option longopts[] = {
		{"steps", required_argument, NULL, OPT_STEPS},
		{"violation", required_argument, NULL, OPT_VIOL},
		{"fingerprint", required_argument, NULL, OPT_FP},
		{"report", required_argument, NULL, OPT_REPORT},
		{"config", required_argument, NULL, OPT_CONFIG},
		{"image", required_argument, NULL, OPT_IMAGE},
		{"lookback", required_argument, NULL, OPT_LOOKBACK},
		{"shrink", no_argument, NULL, OPT_SHRINK},
		{"shrink-time", required_argument, NULL, OPT_SHRINK_TIME},
		{"single-thread", no_argument, NULL, OPT_SINGLE_THREAD},
		{"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
		{"no-huge-pages", no_argument, NULL, OPT_NO_HUGE_PAGES},
		{"output", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:q", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(slice_help, stdout);
			return 0;
		case 'o': o->outdir = optarg; break;
		case 'q': o->quiet = true; break;
		case OPT_SINGLE_THREAD: o->single_thread = true; break;
		case OPT_NO_HUGE_PAGES: o->no_huge_pages = true; break;
		case OPT_STEPS: o->steps = optarg; break;
		case OPT_CONFIG: o->config = optarg; break;
		case OPT_IMAGE: o->image = optarg; break;
		case OPT_REPORT: o->report = optarg; break;
		case OPT_VIOL:
			if (!parse_vid(optarg, &o->vnum))
				return msr_cli_usage_error("slice", "bad --violation=%s: "
							   "expected an id like V3", optarg);
			o->vid = optarg;
			break;
		case OPT_FP:
			if (strlen(optarg) != 16 || strspn(optarg, "0123456789abcdef") != 16)
				return msr_cli_usage_error("slice", "bad --fingerprint=%s: "
							   "expected 16 lowercase hex digits",
							   optarg);
			memcpy(o->fp, optarg, 17);
			o->by_fp = true;
			break;
		case OPT_SHRINK: o->shrink = true; break;
		case OPT_SHRINK_TIME: {
			uint64_t sec;

			if (!msr_cli_parse_u64(optarg, &sec) || !sec || sec > 86400)
				return msr_cli_usage_error("slice", "bad --shrink-time=%s: expected "
							   "1 to 86400 seconds", optarg);
			o->shrink_time = (double)sec;
			break;
		}
		case OPT_MAX_MEMORY:
			if (!msr_cli_parse_u64(optarg, &o->max_memory) ||
			    o->max_memory > MSR_MAX_MEMORY_MIB)
				return msr_cli_usage_error("slice", "--max-memory=%s: expected "
							   "MiB, 0..%llu (0 = automatic)", optarg,
							   (unsigned long long)MSR_MAX_MEMORY_MIB);
			o->has_max_memory = true;
			break;
		case OPT_LOOKBACK:
			if (!msr_cli_parse_u64(optarg, &o->lookback))
				return msr_cli_usage_error("slice", "bad --lookback=%s: expected "
							   "a number of events", optarg);
			break;
		case ':':
			return msr_cli_usage_error("slice", "option %s needs a value",
						   argv[optind - 1]);
		default:
			return msr_cli_usage_error("slice", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return msr_cli_usage_error("slice", "missing TRACE argument");
	if (optind + 1 != argc)
		return msr_cli_usage_error("slice", "unexpected argument '%s'", argv[optind + 1]);
	o->trace = argv[optind];
	if (!o->outdir)
		return msr_cli_usage_error("slice", "-o OUTDIR is required");
	if (!strcmp(o->trace, "-") || (o->steps && !strcmp(o->steps, "-")))
		return msr_cli_usage_error("slice", "slice reads TRACE and LOG several "
					   "times: give files, not standard input");
	if (!!o->vid == o->by_fp)
		return msr_cli_usage_error("slice", "give exactly one of --violation and "
					   "--fingerprint");
	if (o->report && !o->vid)
		return msr_cli_usage_error("slice", "--report needs --violation");
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Pass 1: find the violation                                                */
/* ------------------------------------------------------------------------ */

static void find_violation(void *ctx, const struct msr_violation *v)
{
	struct msr_slice_run *s = ctx;
	char fp[17];

	if (s->found)
		return;
	s->nviol++;
	if (s->o->by_fp) {
		msr_report_fingerprint(v->kind, v->strand, v->iseq, v->pa, fp);
		if (strcmp(fp, s->o->fp))
			return;
	} else if (s->nviol != s->o->vnum) {
		return;
	}
	s->found = true;
	s->v = *v;
}

/* Remember fills and L1 hits, so that an L1-hit load of the slice keeps
 * the load that filled its line. */
static int observe_l1(struct msr_slice_run *s, const struct msr_event *ev)
{
	uint64_t key = (uint64_t)(ev->tnum / s->tpc) << 48 | (ev->pa & ~15ULL);

	if (ev->code == MSR_LD_FILL)
		return msr_slice_blocks_put(&s->fills, key, ev->index << 8 | ev->tnum);
	if (ev->code == MSR_LD_DATA && ev->dsrc == MSR_DSRC_L1) {
		uint64_t f = msr_slice_blocks_last(&s->fills, key);
		struct msr_slice_hit *h = &s->hits[ev->tnum][s->nhits[ev->tnum]++ % SL_HITS];

		if (f == UINT64_MAX)
			return MSR_OK;
		h->index = ev->index;
		h->pa = ev->pa;
		h->fill_index = f >> 8;
		h->fill_strand = (unsigned)(f & 0xff);
	}
	return MSR_OK;
}

static int pass_find(struct msr_slice_run *s, struct msr_error *err)
{
	struct msr_slice_pipe p = {.ahead = !s->o->single_thread, .ctx = s,
				   .on_violation = find_violation};
	struct msr_event ev;
	int rc = msr_slice_pipe_open(&p, s->o->trace, s->o->steps, s->o,
				     s->o->image, err);

	s->tpc = p.cfg.threads_per_core ? p.cfg.threads_per_core : 8;
	s->banks = p.cfg.l2_banks ? p.cfg.l2_banks : 8;
	while (!rc && !s->found && (rc = msr_slice_pipe_read(&p, &ev, err)) == MSR_OK) {
		if ((msr_event_has(&ev) & MSR_EVHAS_TNUM) && observe_l1(s, &ev))
			rc = msr_error_set(err, MSR_E_NOMEM, "slice", NULL, "out of memory");
		else
			rc = msr_slice_pipe_apply(&p, &ev, err);
	}
	if (rc == MSR_END)
		rc = msr_slice_pipe_finish(&p, true, err);
	msr_slice_pipe_close(&p);
	if (rc < 0)
		return rc;
	if (!s->found)
		return msr_error_set(err, MSR_E_USAGE, "slice", s->o->trace,
				     "no violation %s%s in the trace (it shows %llu)",
				     s->o->by_fp ? "with fingerprint=" : "id=",
				     s->o->by_fp ? s->o->fp : s->o->vid,
				     (unsigned long long)s->nviol);
	return MSR_OK;
}

/* Where the violation's instruction executed: the index of SSTEP number
 * iseq of its strand (UINT64_MAX when it never did). Decoding only. */
static int pass_locate(struct msr_slice_run *s, struct msr_error *err)
{
	struct msr_slice_pipe p = {.ahead = !s->o->single_thread};
	struct msr_event ev;
	uint64_t n = 0;
	int rc;

	s->instr_event = UINT64_MAX;
	if (s->v.strand < 0 || !s->v.iseq)
		return MSR_OK;
	rc = msr_slice_pipe_open(&p, s->o->trace, NULL, s->o, NULL, err);
	while (!rc && (rc = msr_slice_pipe_read(&p, &ev, err)) == MSR_OK) {
		if (ev.code == MSR_SSTEP && ev.tnum == s->v.strand && ++n == s->v.iseq) {
			s->instr_event = ev.index;
			break;
		}
	}
	if (rc == MSR_END)
		rc = MSR_OK;
	msr_slice_pipe_close(&p);
	return rc;
}

/* An L1 hit of strand t shortly before `event` on [pa, pa+size): keep the
 * load that filled the line (its strand, and start no later than the fill). */
static void involve_fill(struct msr_slice_run *s, unsigned t, uint64_t pa, unsigned size,
			 uint64_t event)
{
	unsigned n = s->nhits[t] < SL_HITS ? s->nhits[t] : SL_HITS;

	if (!size)
		size = 8;
	for (unsigned k = 0; k < n; k++) {
		const struct msr_slice_hit *h = &s->hits[t][k];

		if (h->index > event || h->index + 256 < event || h->pa + 8 <= pa ||
		    h->pa >= pa + size)
			continue;
		if (!s->wide && h->fill_index + s->o->lookback < h->index)
			continue; /* an old fill: try without its strand first */
		s->inv[h->fill_strand] = true;
		if (h->fill_index < s->first_rel)
			s->first_rel = h->fill_index;
	}
}

/* The strands, blocks and event range the violation involves. */
static int involve(struct msr_slice_run *s)
{
	const struct msr_violation *v = &s->v;
	const struct msr_store_ref *ref[2] = {&v->expected_from, &v->observed_from};
	unsigned len = v->size < 8 ? 8 : v->size > 64 ? 64 : v->size;

	/* a leftover is found long after its instruction: the instruction is
	 * what matters, not the point where the engine gave up on it */
	uint64_t at = v->kind == MSR_V_LEFTOVER && s->instr_event != UINT64_MAX
		      ? s->instr_event : v->event;

	s->first_rel = s->last_rel = at;
	if (s->instr_event != UINT64_MAX && s->instr_event < s->first_rel)
		s->first_rel = s->instr_event;
	if (v->strand >= 0)
		s->inv[v->strand] = true;
	if (msr_slice_touch_range(s, v->pa, len, at))
		return MSR_E_NOMEM;
	for (unsigned i = 0; i < v->nproof && i < MSR_PROOF_MAX; i++) {
		const struct msr_proof_op *op = &v->proof[i];

		s->inv[op->strand] = true;
		if (op->event < s->first_rel)
			s->first_rel = op->event;
		if (op->event > s->last_rel)
			s->last_rel = op->event;
		if (msr_slice_touch_range(s, op->pa, op->size ? op->size : 8, op->event))
			return MSR_E_NOMEM;
	}
	for (unsigned i = 0; i < v->nproof && i < MSR_PROOF_MAX; i++)
		involve_fill(s, v->proof[i].strand, v->proof[i].pa, v->proof[i].size,
			     v->proof[i].event);
	if (v->strand >= 0)
		involve_fill(s, (unsigned)v->strand, v->pa, v->size, v->event);
	for (unsigned i = 0; i < 2; i++) {
		if (!ref[i]->valid || (!s->wide && ref[i]->event + s->o->lookback < v->event))
			continue;
		s->inv[ref[i]->strand] = true;
		if (ref[i]->event < s->first_rel)
			s->first_rel = ref[i]->event;
		if (ref[i]->event > s->last_rel)
			s->last_rel = ref[i]->event;
	}
	for (unsigned t = 0; t < MSR_MAX_STRANDS; t++) {
		if (s->banned[t] && (int)t != v->strand)
			s->inv[t] = false;
		s->nstrands += s->inv[t];
	}
	return MSR_OK;
}

/* ------------------------------------------------------------------------ */
/* Pass 3: write the slice                                                   */
/* ------------------------------------------------------------------------ */

static void put_data(struct msr_event *ev, const uint8_t d[8])
{
	ev->data = 0;
	for (unsigned i = 0; i < 8; i++)
		ev->data = ev->data << 8 | d[i];
}

static void write_commit(void *ctx, const struct msr_commit *c)
{
	struct msr_slice_run *s = ctx;

	if (s->cur < s->P || s->cur >= s->Q || msr_slice_in_strand_window(s, c->strand, s->cur) ||
	    !c->mask || !msr_slice_in_window_block(s, c->pa8))
		return;
	memset(&s->slam, 0, sizeof(s->slam));
	s->slam.code = MSR_MEM_SLAM;
	s->slam.pa = c->pa8;
	s->slam.bmask = c->mask;
	s->slam.ts = c->ts;
	put_data(&s->slam, c->data);
	s->want_slam = true;
}

static void write_step(void *ctx, const struct msr_step *st)
{
	struct msr_slice_run *s = ctx;
	char line[512];

	if (!msr_slice_in_strand_window(s, st->tnum, s->cur) || !s->steps)
		return;
	msr_slice_step_format(st, line, sizeof(line));
	fputs(line, s->steps);
}

static int map_add(struct msr_slice_run *s, uint64_t orig)
{
	if (s->nmap == s->capmap) {
		size_t n = s->capmap ? 2 * s->capmap : 1024;
		uint64_t *m = realloc(s->map, n * sizeof(*m));

		if (!m)
			return MSR_E_NOMEM;
		s->map = m;
		s->capmap = n;
	}
	s->map[s->nmap++] = orig;
	return MSR_OK;
}

/* Whether an event of the window goes into the slice as it is. */
static bool keep_event(const struct msr_slice_run *s, const struct msr_event *ev, int rd_tid)
{
	unsigned has = msr_event_has(ev);

	if (s->v.strand < 0 && ev->index == s->v.event)
		return true;
	if (ev->code == MSR_REGDELTA || ev->code == MSR_REGDELTA_END)
		return rd_tid >= 0 && rd_tid < MSR_MAX_STRANDS &&
		       msr_slice_in_strand_window(s, (unsigned)rd_tid, ev->index);
	if ((ev->code == MSR_ST_INV || ev->code == MSR_ST_UPDATE) &&
	    s->answer_of != UINT64_MAX && s->answer_of < s->Pt[ev->tnum])
		return false; /* answers a commit from before the strand's start */
	if (has & MSR_EVHAS_TNUM)
		return msr_slice_in_strand_window(s, ev->tnum, ev->index);
	if (ev->code == MSR_MEM_SLAM)
		return msr_slice_in_window_block(s, ev->pa & ~7ULL);
	if (ev->code == MSR_MEM_CHECK)
		return s->v.kind == MSR_V_MEM_CHECK && ev->index == s->v.event;
	return false;
}

static int write_image(struct msr_slice_run *s, const struct msr_engine *e, const char *path,
		       struct msr_error *err)
{
	FILE *f = fopen(path, "w");
	uint64_t *keys;
	size_t n = 0;

	if (!f)
		return msr_error_set(err, MSR_E_IO, "slice", path, "cannot create: %s",
				     strerror(errno));
	keys = malloc((s->blk.n + 1) * sizeof(*keys));
	if (!keys) {
		fclose(f);
		return msr_error_set(err, MSR_E_NOMEM, "slice", NULL, "out of memory");
	}
	for (size_t i = 0; i < s->blk.cap; i++)
		if (s->blk.key[i] && s->blk.last[i] >= s->P)
			keys[n++] = s->blk.key[i] - 1;
	/* ascending addresses: a deterministic, readable image */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && keys[j - 1] > keys[j]; j--) {
			uint64_t t = keys[j];

			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	fprintf(f, "# memory of the slice's blocks at its first event\n");
	for (size_t i = 0; i < n; i++) {
		uint8_t d[8], known;

		msr_engine_mem_peek(e, keys[i], d, &known);
		if (known != 0xff) {
			s->unknown_blocks++;
			continue;
		}
		fprintf(f, "@%llx %02x%02x%02x%02x%02x%02x%02x%02x\n",
			(unsigned long long)keys[i], d[0], d[1], d[2], d[3], d[4], d[5],
			d[6], d[7]);
		s->image_blocks++;
	}
	free(keys);
	if (fclose(f))
		return msr_error_set(err, MSR_E_IO, "slice", path, "write failed");
	return MSR_OK;
}

static void out_path(const struct msr_slice_run *s, const char *name, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s", s->o->outdir, name);
}

static bool kept_core(const struct msr_slice_run *s, unsigned cid)
{
	for (unsigned t = cid * s->tpc; t < (cid + 1) * s->tpc && t < MSR_MAX_STRANDS; t++)
		if (s->inv[t])
			return true;
	return false;
}

static int window_event(struct msr_slice_run *s, struct msr_trace_writer *w,
			const struct msr_event *ev, int rd_tid, struct msr_error *err)
{
	int rc = MSR_OK;

	if (s->want_slam) {
		s->want_slam = false;
		s->slams++;
		if (!(rc = msr_trace_writer_put(w, &s->slam, err)))
			rc = map_add(s, ev->index);
	} else if (keep_event(s, ev, rd_tid)) {
		if (!(rc = msr_trace_writer_put(w, ev, err)))
			rc = map_add(s, ev->index);
	} else if (ev->code == MSR_ST_INV && kept_core(s, ev->cid) &&
		   (msr_slice_in_window_block(s, ev->pa & ~15ULL) || msr_slice_in_window_block(s, (ev->pa & ~15ULL) + 8))) {
		/* a kept core drops the line here: say so without the store */
		struct msr_event e1 = {.code = MSR_EVICT, .pa = ev->pa & ~15ULL,
				       .invvec = 1u << ev->cid, .ts = ev->ts};
		struct msr_event e2 = {.code = MSR_EVICT_INV, .cid = ev->cid,
				       .bank = (uint8_t)((ev->pa >> 6) % s->banks), .ts = ev->ts};

		s->inv_evicts++;
		if (!(rc = msr_trace_writer_put(w, &e1, err)) && !(rc = map_add(s, ev->index)) &&
		    !(rc = msr_trace_writer_put(w, &e2, err)))
			rc = map_add(s, ev->index);
	} else if (ev->code == MSR_DMA_ST && msr_slice_in_window_block(s, ev->pa & ~7ULL)) {
		struct msr_event sl = {.code = MSR_MEM_SLAM, .pa = ev->pa, .data = ev->data,
				       .bmask = ev->bmask, .ts = ev->ts};

		s->dma_slams++;
		if (!(rc = msr_trace_writer_put(w, &sl, err)))
			rc = map_add(s, ev->index);
	} else {
		s->dropped++;
	}
	if (rc == MSR_E_NOMEM)
		msr_error_set(err, rc, "slice", NULL, "out of memory");
	return rc;
}

static int pass_write(struct msr_slice_run *s, struct msr_error *err)
{
	struct msr_slice_pipe p = {.ctx = s, .on_commit = write_commit, .on_step = write_step};
	struct msr_trace_writer *w = NULL;
	struct msr_error err2 = MSR_ERROR_INIT;
	struct msr_event ev;
	char path[1024];
	size_t ti = 0;
	int rd_tid = -1, rc;

	s->nans = 0; /* follow the answers again, from the start */
	out_path(s, "steps.log", path, sizeof(path));
	if (!(s->steps = fopen(path, "w")))
		return msr_error_set(err, MSR_E_IO, "slice", path, "cannot create: %s",
				     strerror(errno));
	fputs("# msync-steps 1\n", s->steps);
	out_path(s, "nas.trace.zst", path, sizeof(path));
	rc = msr_trace_writer_open(path, MSR_FMT_BINARY, 3, &w, err);
	if (!rc)
		rc = msr_slice_pipe_open(&p, s->o->trace, s->o->steps, s->o,
					 s->o->image, err);
	if (!rc && s->P == 0) {
		out_path(s, "image.mem", path, sizeof(path));
		rc = write_image(s, p.eng, path, err);
	}
	while (!rc && (rc = msr_slice_pipe_read(&p, &ev, err)) == MSR_OK) {
		s->answer_of = UINT64_MAX;
		if ((msr_event_has(&ev) & MSR_EVHAS_TNUM) && s->inv[ev.tnum]) {
			bool unused;

			if (msr_slice_track_answers(s, &ev, &unused)) {
				rc = msr_error_set(err, MSR_E_NOMEM, "slice", NULL, "out of memory");
				break;
			}
		}
		if (ti < s->ntail && ev.index == s->tail[ti]) {
			/* past a strand's end: only answers to its earlier commits */
			ti++;
			s->cur = ev.index;
			if (s->answer_of != UINT64_MAX && s->answer_of < s->Pt[ev.tnum]) {
				rc = msr_slice_pipe_apply(&p, &ev, err);
				continue;
			}
			if (!(rc = msr_trace_writer_put(w, &ev, err)) && map_add(s, ev.index))
				rc = msr_error_set(err, MSR_E_NOMEM, "slice", NULL,
						   "out of memory");
			s->cur = ev.index;
			if (!rc && (rc = msr_slice_pipe_apply(&p, &ev, err)) < 0)
				break;
			continue;
		}
		if (ev.index >= s->Q) {
			if (ti == s->ntail)
				break;
			continue;
		}
		if (ev.index == s->P && ev.index) {
			out_path(s, "image.mem", path, sizeof(path));
			if ((rc = write_image(s, p.eng, path, err)))
				break;
		}
		if (ev.code == MSR_REGDELTA && (ev.flags & MSR_EVF_RD_HEADER))
			rd_tid = ev.rd_tid;
		if (ev.code == MSR_SSTEP && s->inv[ev.tnum] && ev.index < s->Pt[ev.tnum])
			s->base[ev.tnum]++;
		s->cur = ev.index;
		s->want_slam = false;
		if ((rc = msr_slice_pipe_apply(&p, &ev, err)) < 0)
			break;
		if (ev.index >= s->P)
			rc = window_event(s, w, &ev, rd_tid, err);
	}
	if (rc == MSR_END)
		rc = MSR_OK;
	if (w && msr_trace_writer_close(w, &err2) && !rc) {
		*err = err2;
		rc = err->status;
	}
	if (fclose(s->steps) && !rc)
		rc = msr_error_set(err, MSR_E_IO, "slice", "steps.log", "write failed");
	s->steps = NULL;
	msr_slice_pipe_close(&p);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Pass 4: does the slice reproduce it?                                      */
/* ------------------------------------------------------------------------ */

static uint64_t slice_iseq(const struct msr_slice_run *s, int strand, uint64_t iseq)
{
	return strand >= 0 && iseq > s->base[strand] ? iseq - s->base[strand] : iseq;
}

static void verify_violation(void *ctx, const struct msr_violation *v)
{
	struct msr_slice_run *s = ctx;
	const struct msr_violation *t = &s->v;

	s->sviol++;
	s->sviol_kind[v->kind]++;
	if (s->reproduced || v->kind != t->kind || v->strand != t->strand)
		return;
	if (t->strand >= 0 ? v->iseq != slice_iseq(s, t->strand, t->iseq)
			   : (v->pa & ~7ULL) != (t->pa & ~7ULL))
		return;
	s->reproduced = true;
	s->rv = *v;
}

static int pass_verify(struct msr_slice_run *s, struct msr_error *err)
{
	struct msr_slice_pipe p = {.ctx = s, .on_violation = verify_violation};
	char trace[1024], steps[1024], image[1024];
	struct msr_event ev;
	int rc;

	out_path(s, "nas.trace.zst", trace, sizeof(trace));
	out_path(s, "steps.log", steps, sizeof(steps));
	out_path(s, "image.mem", image, sizeof(image));
	rc = msr_slice_pipe_open(&p, trace, s->o->steps ? steps : NULL, s->o,
				 image, err);
	while (!rc && (rc = msr_slice_pipe_read(&p, &ev, err)) == MSR_OK)
		rc = msr_slice_pipe_apply(&p, &ev, err);
	if (rc == MSR_END)
		rc = msr_slice_pipe_finish(&p, true, err);
	msr_slice_pipe_close(&p);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* README.txt and the summary                                                */
/* ------------------------------------------------------------------------ */

static void readme_violations(const struct msr_slice_run *s, FILE *f)
{
	fprintf(f, "Check of the slice: %llu violation(s)",
		(unsigned long long)s->sviol);
	for (unsigned k = 0; k < MSR_V_COUNT; k++)
		if (s->sviol_kind[k])
			fprintf(f, ", %llu %s", (unsigned long long)s->sviol_kind[k],
				msr_vkind_name((enum msr_vkind)k));
	fprintf(f, ".\n");
	if (s->reproduced) {
		char fp[17];

		msr_report_fingerprint(s->rv.kind, s->rv.strand, s->rv.iseq, s->rv.pa, fp);
		fprintf(f, "Reproduced: %s on strand %d, slice iseq %llu, slice event %llu,\n"
			"  fingerprint in the slice %s.\n", msr_vkind_name(s->rv.kind),
			s->rv.strand, (unsigned long long)s->rv.iseq,
			(unsigned long long)s->rv.event, fp);
	} else
		fprintf(f, "NOT reproduced: no %s on strand %d at slice iseq %llu.\n",
			msr_vkind_name(s->v.kind), s->v.strand,
			(unsigned long long)slice_iseq(s, s->v.strand, s->v.iseq));
	fprintf(f, "Other violations in the slice come from the cut (for example an\n"
		"L1 hit on a line filled before the slice start) and are expected.\n\n");
}

static int write_readme(const struct msr_slice_run *s, struct msr_error *err)
{
	char path[1024], fp[17];
	FILE *f;

	out_path(s, "README.txt", path, sizeof(path));
	if (!(f = fopen(path, "w")))
		return msr_error_set(err, MSR_E_IO, "slice", path, "cannot create: %s",
				     strerror(errno));
	msr_report_fingerprint(s->v.kind, s->v.strand, s->v.iseq, s->v.pa, fp);
	fprintf(f, "Slice of %s (steps %s%s%s) around one violation.\n\n", s->o->trace,
		s->o->steps, s->o->image ? ", image " : "", s->o->image ? s->o->image : "");
	fprintf(f, "Violation: %s fingerprint %s strand %d iseq %llu pa 0x%010llx,\n"
		"  found at original event %llu: %s\n\n", msr_vkind_name(s->v.kind), fp,
		s->v.strand, (unsigned long long)s->v.iseq, (unsigned long long)s->v.pa,
		(unsigned long long)s->v.event, s->v.message);
	fprintf(f, "Kept strands (each from a point where it had nothing in flight until\n"
		"all its stores were committed and acked after the violation):\n");
	for (unsigned t = 0; t < MSR_MAX_STRANDS; t++)
		if (s->inv[t])
			fprintf(f, "  strand %u: original events %llu..%llu; slice iseq k is "
				"original iseq k+%llu\n", t, (unsigned long long)s->Pt[t],
				(unsigned long long)(s->Qt[t] ? s->Qt[t] - 1 : 0),
				(unsigned long long)s->base[t]);
	fprintf(f, "\nOf original events %llu..%llu (of %llu) the slice keeps %zu: the\n"
		"kept strands' events in their ranges, %zu later ST_INV/ST_UPDATE\n"
		"answers to their commits, %llu other commits and %llu DMA writes to\n"
		"the %zu touched blocks turned into MEM_SLAMs, the original MEM_SLAMs\n"
		"to those blocks, and %llu invalidations of a kept core's line by\n"
		"other stores as an EVICT + EVICT_INV pair. Cut: %llu events (other\n"
		"strands, evictions, MEM_CHECKs, messages of no kept strand).\n",
		(unsigned long long)s->P, (unsigned long long)(s->Q ? s->Q - 1 : 0),
		(unsigned long long)s->total, s->nmap, s->ntail, (unsigned long long)s->slams,
		(unsigned long long)s->dma_slams, s->blk.n, (unsigned long long)s->inv_evicts,
		(unsigned long long)s->dropped);
	fprintf(f, "image.mem holds %llu blocks as of original event %llu (%llu blocks\n"
		"with bytes still unknown there are left out).\n\n",
		(unsigned long long)s->image_blocks, (unsigned long long)s->P,
		(unsigned long long)s->unknown_blocks);
	if (s->nbanned) {
		fprintf(f, "--shrink left out strand(s):");
		for (unsigned t = 0; t < MSR_MAX_STRANDS; t++)
			if (s->banned[t])
				fprintf(f, " %u", t);
		fprintf(f, " (their writes are MEM_SLAMs like any other strand's).\n\n");
	}
	if (s->shrunk) {
		uint64_t ni = 0;

		for (unsigned t = 0; t < MSR_MAX_STRANDS; t++)
			ni += s->shrink_instr_removed[t];
		fprintf(f, "--shrink left out whole instructions: %zu -> %zu events (%zu\n"
			"units: instructions with their step lines, other events), %llu\n"
			"instruction(s) and %llu other unit(s) removed in %llu round(s);\n"
			"%s.\n", s->shrink_events_before, s->nmap, s->shrink_units,
			(unsigned long long)ni, (unsigned long long)s->shrink_other_removed,
			(unsigned long long)s->shrink_rounds,
			s->shrink_fixpoint ? "no single instruction can be left out any more"
					   : "stopped by --shrink-time before the fixpoint");
		for (unsigned t = 0; t < MSR_MAX_STRANDS; t++)
			if (s->shrink_instr_removed[t])
				fprintf(f, "  strand %u: %llu instruction(s) removed\n", t,
					(unsigned long long)s->shrink_instr_removed[t]);
		fprintf(f, "The iseqs are renumbered again: the event map and the check\n"
			"below are those of the shrunk slice.\n\n");
	}
	if (s->wide)
		fprintf(f, "A first cut without the stores and fills older than --lookback=%llu\n"
			"events did not reproduce the violation; this one keeps them.\n\n",
			(unsigned long long)s->o->lookback);
	readme_violations(s, f);
	fprintf(f, "Event map: slice event index -> original event index\n");
	for (size_t i = 0; i < s->nmap; i++)
		fprintf(f, "%zu %llu\n", i, (unsigned long long)s->map[i]);
	if (fclose(f))
		return msr_error_set(err, MSR_E_IO, "slice", path, "write failed");
	return MSR_OK;
}

static void reset_attempt(struct msr_slice_run *s)
{
	size_t off = offsetof(struct msr_slice_run, inv);

	free(s->blk.key);
	free(s->blk.last);
	free(s->ans);
	free(s->tail);
	free(s->map);
	memset((char *)s + off, 0, sizeof(*s) - off);
}

/* Passes 2-4 and the README for one choice of involved strands. */
static int attempt(struct msr_slice_run *s, struct msr_error *err)
{
	int rc;

	if ((rc = involve(s)))
		return msr_error_set(err, rc, "slice", NULL, "out of memory");
	if ((rc = msr_slice_pass_cut(s, err)) || (rc = pass_write(s, err)) ||
	    (rc = pass_verify(s, err)))
		return rc;
	return write_readme(s, err);
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * --shrink: leave out one kept strand at a time (never the violation's
 * own) and keep each cut that still reproduces the violation in no more
 * events; write the best slice again, then leave out whole instructions
 * (slice_shrink.c). Bounded by --shrink-time.
 */
static int shrink(struct msr_slice_run *s, struct msr_error *err)
{
	bool cand[MSR_MAX_STRANDS] = {false}, wide = s->wide;
	double end = now_seconds() + s->o->shrink_time;
	size_t best = s->nmap;
	int rc;

	memcpy(cand, s->inv, sizeof(cand));
	for (unsigned t = 0; t < MSR_MAX_STRANDS && now_seconds() < end; t++) {
		if (!cand[t] || (int)t == s->v.strand)
			continue;
		s->banned[t] = true;
		reset_attempt(s);
		s->wide = wide;
		if ((rc = attempt(s, err)))
			return rc;
		if (s->reproduced && s->nmap <= best) {
			best = s->nmap;
			s->nbanned++;
		} else {
			s->banned[t] = false;
		}
	}
	reset_attempt(s);
	s->wide = wide;
	if ((rc = attempt(s, err)) || !s->reproduced)
		return rc;
	if ((rc = msr_slice_shrink_instructions(s, end, err)))
		return rc;
	return write_readme(s, err);
}

static int run(struct msr_slice_opts *o)
{
	struct msr_slice_run *s = calloc(1, sizeof(*s));
	struct msr_error err = MSR_ERROR_INIT;
	int rc, ex = MSR_EXIT_UNUSABLE;

	if (!s) {
		fprintf(stderr, "msync-replay: slice: out of memory\n");
		return ex;
	}
	s->o = o;
	if (mkdir(o->outdir, 0777) && errno != EEXIST) {
		rc = msr_error_set(&err, MSR_E_IO, "slice", o->outdir, "cannot create "
				   "directory: %s", strerror(errno));
		goto out;
	}
	if (o->report) {
		if ((rc = msr_slice_report_lookup(o->report, o->vid, o->fp, &err)))
			goto out;
		o->by_fp = true;
	}
	if ((rc = pass_find(s, &err)) || (rc = pass_locate(s, &err)) ||
	    (rc = attempt(s, &err)))
		goto out;
	if (!s->reproduced) {
		/* retry with every dependency, however old */
		reset_attempt(s);
		s->wide = true;
		if ((rc = attempt(s, &err)))
			goto out;
	}
	if (s->reproduced && o->shrink && (rc = shrink(s, &err)))
		goto out;
	ex = s->reproduced ? MSR_EXIT_CLEAN : MSR_EXIT_VIOLATIONS;
	if (s->shrunk && !o->quiet)
		fprintf(stderr, "msync-replay: slice: --shrink: %zu -> %zu events in %.2f s%s\n",
			s->shrink_events_before, s->nmap, s->shrink_seconds,
			s->shrink_fixpoint ? "" : " (stopped by --shrink-time)");
	if (!o->quiet || !s->reproduced)
		fprintf(stderr, "msync-replay: slice: %zu of %llu events, %u strand(s), "
			"original events %llu..%llu; %s %s on strand %d iseq %llu "
			"(slice iseq %llu); see %s/README.txt\n", s->nmap,
			(unsigned long long)s->total, s->nstrands, (unsigned long long)s->P,
			(unsigned long long)(s->Q ? s->Q - 1 : 0),
			s->reproduced ? "reproduces" : "refused: does not reproduce",
			msr_vkind_name(s->v.kind), s->v.strand, (unsigned long long)s->v.iseq,
			(unsigned long long)(s->reproduced ? s->rv.iseq
					     : slice_iseq(s, s->v.strand, s->v.iseq)), o->outdir);
out:
	if (rc < 0 && ex == MSR_EXIT_UNUSABLE)
		msr_cli_print_error(&err);
	reset_attempt(s);
	free(s->fills.key);
	free(s->fills.last);
	free(s);
	return ex;
}

int msr_cmd_slice(int argc, char **argv)
{
	struct msr_slice_opts o = {.lookback = 1000, .shrink_time = 60};
	int rc = parse_args(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (o.no_huge_pages)
		msr_cli_no_huge_pages("slice");
	return run(&o);
}
