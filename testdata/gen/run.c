/*
 * run.c - lifetime and cycle loop of the msync-gen model, the system-level
 * events (L2 evictions, DMA writes, back-door slams, memory checks), and the
 * small services fault episodes use to steer strands.
 *
 * The loop order inside a cycle is fixed (faults, system, banks, response
 * queues, store-buffer drains, strands) so a seed fixes the output. It must
 * never stop with anything in flight: after the size limit it drains until
 * every buffer and queue is empty, so a correct trace has no leftovers.
 */
#include "model-internal.h"

#include <stdlib.h>
#include <string.h>

#define DRAIN_LIMIT 50000000ull /* cycles; a hang is a generator bug */

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static int alloc_memory(struct gen_model *m, struct msr_error *err)
{
	m->cbytes = m->cfg.footprint + GEN_FAULT_BYTES + GEN_SLAM_BYTES;
	m->nlines = m->cbytes / 16;
	m->mem = malloc(m->cbytes);
	m->io = malloc(GEN_IO_BYTES);
	m->dir = calloc(m->nlines, sizeof(*m->dir));
	m->l1p = calloc(m->nlines, sizeof(*m->l1p));
	m->l1d = calloc(m->nlines * m->cfg.cores, 16);
	m->l2p = malloc(m->cbytes / 64);
	m->s = calloc(m->nstrands, sizeof(*m->s));
	m->stb_pool = calloc((size_t)m->nstrands * STB_RING, sizeof(*m->stb_pool));
	m->script_pool = calloc((size_t)m->nstrands * SCRIPT_RING,
				sizeof(*m->script_pool));
	m->rq = calloc(m->cfg.cores, sizeof(*m->rq));
	if (!m->mem || !m->io || !m->dir || !m->l1p || !m->l1d || !m->l2p ||
	    !m->s || !m->rq || !m->stb_pool || !m->script_pool)
		return msr_error_set(err, MSR_E_NOMEM, "gen", NULL,
				     "out of memory for footprint=%llu cores=%u",
				     (unsigned long long)m->cfg.footprint,
				     m->cfg.cores);
	for (uint64_t i = 0; i < m->cbytes; i += 8) {
		uint64_t v = gen_rng_next(&m->vrng);

		memcpy(m->mem + i, &v, 8);
	}
	for (unsigned i = 0; i < GEN_IO_BYTES; i++)
		m->io[i] = (uint8_t)gen_rng_next(&m->vrng);
	for (uint64_t i = 0; i < m->cbytes / 64; i++)
		m->l2p[i] = !gen_rng_chance(&m->vrng, m->cfg.l2_absent);
	return MSR_OK;
}

static int alloc_queues(struct gen_model *m, struct msr_error *err)
{
	unsigned bcap = (unsigned)pow2_at_least(m->nstrands * 12 + 16);

	for (unsigned b = 0; b < 8; b++) {
		m->banks[b].cap = bcap;
		m->banks[b].q = calloc(bcap, sizeof(struct req));
		if (!m->banks[b].q)
			return msr_error_set(err, MSR_E_NOMEM, "gen", NULL,
					     "out of memory for bank queues");
	}
	for (unsigned c = 0; c < m->cfg.cores; c++) {
		m->rq[c].cap = 256;
		m->rq[c].t = calloc(256, sizeof(struct token));
		if (!m->rq[c].t)
			return msr_error_set(err, MSR_E_NOMEM, "gen", NULL,
					     "out of memory for response queues");
	}
	return MSR_OK;
}

int gen_model_create(const struct gen_config *cfg, struct gen_program *prog,
		     struct gen_faults *faults, const struct gen_sink *sink,
		     struct gen_model **out, struct msr_error *err)
{
	struct gen_model *m;
	int rc;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return msr_error_set(err, MSR_E_NOMEM, "gen", NULL, "out of memory");
	m->cfg = *cfg;
	m->prog = prog;
	m->faults = faults;
	m->sink = *sink;
	m->nstrands = cfg->cores * cfg->threads;
	gen_rng_seed(&m->rng, cfg->seed, 1);
	gen_rng_seed(&m->vrng, cfg->seed, 2);
	m->fault_next = cfg->footprint;
	rc = alloc_memory(m, err);
	if (rc == MSR_OK)
		rc = alloc_queues(m, err);
	if (rc < 0) {
		gen_model_destroy(m);
		return rc;
	}
	for (unsigned i = 0; i < m->nstrands; i++) {
		m->s[i].id = i;
		m->s[i].core = i / cfg->threads;
		m->s[i].pc = 0x100000ull * (i + 1);
		m->s[i].stb = m->stb_pool + (size_t)i * STB_RING;
		m->s[i].script = m->script_pool + (size_t)i * SCRIPT_RING;
	}
	*out = m;
	return MSR_OK;
}

void gen_model_destroy(struct gen_model *m)
{
	if (!m)
		return;
	for (unsigned b = 0; b < 8; b++)
		free(m->banks[b].q);
	if (m->rq)
		for (unsigned c = 0; c < m->cfg.cores; c++)
			free(m->rq[c].t);
	free(m->rq);
	free(m->s);
	free(m->stb_pool);
	free(m->script_pool);
	free(m->mem);
	free(m->io);
	free(m->dir);
	free(m->l1p);
	free(m->l1d);
	free(m->l2p);
	free(m);
}

/* ---------------------------------------------------------------- */
/* system events                                                     */
/* ---------------------------------------------------------------- */

static uint64_t sys_line64(struct gen_model *m)
{
	uint64_t n = m->cfg.footprint / 64;

	if (m->cfg.hot_lines && gen_rng_chance(&m->rng, 0.5)) {
		uint64_t h = (m->cfg.hot_lines * 16ull + 63) / 64;

		n = h < n ? h : n;
	}
	return gen_rng_below(&m->rng, n) * 64;
}

/* EVICT of one 16-byte quarter, EVICT_INV tokens for its holders. */
static int evict_quarter(struct gen_model *m, uint64_t off)
{
	uint64_t line = off >> 4;
	uint32_t inv = m->dir[line];
	struct msr_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.code = MSR_EVICT;
	ev.pa = GEN_POOL_BASE + off;
	ev.invvec = inv;
	m->st.evicts++;
	m->dir[line] = 0;
	for (unsigned c = 0; c < m->cfg.cores; c++) {
		struct token t;
		int rc;

		if (!((inv >> c) & 1))
			continue;
		memset(&t, 0, sizeof(t));
		t.kind = TK_EVICT_INV;
		t.pa = ev.pa;
		t.bank = (uint8_t)((ev.pa >> 6) & 7);
		rc = model_tok_push(m, c, &t, NULL);
		if (rc < 0)
			return rc;
	}
	return model_emit(m, &ev);
}

/* L2 drops a 64-byte line: one EVICT per quarter some L1 may hold, at
 * least one. */
static int sys_evict(struct gen_model *m)
{
	uint64_t off = sys_line64(m);
	bool any = false;
	int rc = MSR_OK;

	for (unsigned q = 0; q < 4 && rc == MSR_OK; q++)
		if (m->dir[(off >> 4) + q]) {
			any = true;
			rc = evict_quarter(m, off + 16 * q);
		}
	if (rc == MSR_OK && !any)
		rc = evict_quarter(m, off + 16 * gen_rng_below(&m->rng, 4));
	m->l2p[off >> 6] = 0;
	return rc;
}

static int dma_one(struct gen_model *m, uint64_t off, uint8_t bmask,
		   unsigned total)
{
	struct msr_event ev;
	uint8_t d[8];
	int rc;

	for (unsigned b = 0; b < 8; b++) {
		d[b] = (uint8_t)gen_rng_next(&m->vrng);
		if (!(bmask & (0x80u >> b)))
			d[b] = 0;
		else
			m->mem[off + b] = d[b];
	}
	memset(&ev, 0, sizeof(ev));
	ev.code = MSR_DMA_ST;
	ev.pa = GEN_POOL_BASE + off;
	for (unsigned b = 0; b < 8; b++)
		ev.data = (ev.data << 8) | d[b];
	ev.bmask = bmask;
	ev.inv = m->dir[off >> 4] != 0;
	ev.total = (uint8_t)total;
	m->st.dmas++;
	m->l2p[off >> 6] = 1;
	rc = model_emit(m, &ev);
	if (rc == MSR_OK && ev.inv)
		rc = evict_quarter(m, off & ~15ull);
	return rc;
}

static int sys_dma(struct gen_model *m)
{
	uint64_t off = sys_line64(m);
	int rc = MSR_OK;

	if (gen_rng_chance(&m->rng, 0.5)) {
		uint8_t bm = (uint8_t)gen_rng_next(&m->vrng);

		return dma_one(m, off + 8 * gen_rng_below(&m->rng, 8),
			       bm ? bm : 0xff, 8);
	}
	for (unsigned i = 0; i < 8 && rc == MSR_OK; i++)
		rc = dma_one(m, off + 8 * i, 0xff, 64);
	return rc;
}

/* MEM_SLAM only into the slam region and only where no L1 holds or awaits
 * the line: a back-door write under a cached copy, or under a commit still
 * in flight, would not be a memory-system behaviour. */
static int sys_slam(struct gen_model *m)
{
	uint64_t off = m->cfg.footprint + GEN_FAULT_BYTES +
		       8 * gen_rng_below(&m->rng, GEN_SLAM_BYTES / 8);
	uint64_t line = off >> 4;
	struct msr_event ev;
	uint8_t bm = (uint8_t)gen_rng_next(&m->vrng);

	if (m->dir[line] || m->l1p[line])
		return MSR_OK;
	bm = bm ? bm : 0x80;
	memset(&ev, 0, sizeof(ev));
	ev.code = MSR_MEM_SLAM;
	ev.pa = GEN_POOL_BASE + off;
	ev.bmask = bm;
	for (unsigned b = 0; b < 8; b++) {
		uint8_t v = (uint8_t)gen_rng_next(&m->vrng);

		if (!(bm & (0x80u >> b)))
			v = 0;
		else
			m->mem[off + b] = v;
		ev.data = (ev.data << 8) | v;
	}
	m->st.slams++;
	return model_emit(m, &ev);
}

static int sys_check(struct gen_model *m)
{
	uint64_t off = sys_line64(m);

	if (gen_rng_chance(&m->rng, 0.25))
		off = m->cfg.footprint + GEN_FAULT_BYTES +
		      64 * gen_rng_below(&m->rng, GEN_SLAM_BYTES / 64);
	struct msr_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.code = MSR_MEM_CHECK;
	ev.pa = GEN_POOL_BASE + off;
	memcpy(ev.bytes, m->mem + off, 64);
	ev.nbytes = 64;
	m->st.checks++;
	return model_emit(m, &ev);
}

static bool any_queue_full(const struct gen_model *m)
{
	for (unsigned c = 0; c < m->cfg.cores; c++)
		if (m->rq[c].count >= QUEUE_SOFT_LIMIT)
			return true;
	return false;
}

static int sys_tick(struct gen_model *m)
{
	int rc = MSR_OK;

	if (m->stopping || any_queue_full(m))
		return MSR_OK;
	if (gen_rng_chance(&m->rng, m->cfg.evict_rate))
		rc = sys_evict(m);
	if (rc == MSR_OK && gen_rng_chance(&m->rng, m->cfg.dma_rate))
		rc = sys_dma(m);
	if (rc == MSR_OK && gen_rng_chance(&m->rng, m->cfg.slam_rate))
		rc = sys_slam(m);
	if (rc == MSR_OK && gen_rng_chance(&m->rng, m->cfg.check_rate))
		rc = sys_check(m);
	return rc;
}

/* ---------------------------------------------------------------- */
/* cycle loop                                                        */
/* ---------------------------------------------------------------- */

static bool quiescent(const struct gen_model *m)
{
	if (m->inv_held || m->atomic_split ||
	    (m->faults && gen_faults_busy(m->faults)))
		return false;
	for (unsigned b = 0; b < 8; b++)
		if (m->banks[b].count)
			return false;
	for (unsigned c = 0; c < m->cfg.cores; c++)
		if (m->rq[c].count)
			return false;
	for (unsigned i = 0; i < m->nstrands; i++)
		if (!strand_quiet(&m->s[i]))
			return false;
	return true;
}

static int cycle_once(struct gen_model *m)
{
	int rc = MSR_OK;

	if (m->faults)
		rc = gen_faults_tick(m->faults, m, m->err);
	if (rc == MSR_OK)
		rc = sys_tick(m);
	for (unsigned b = 0; b < 8 && rc == MSR_OK; b++)
		rc = model_bank_tick(m, &m->banks[b]);
	for (unsigned c = 0; c < m->cfg.cores && rc == MSR_OK; c++)
		rc = model_queue_tick(m, c);
	for (unsigned i = 0; i < m->nstrands && rc == MSR_OK; i++) {
		struct strand *s = &m->s[i];

		/* the cheap tests inline: most strands wait most cycles */
		if (s->stb_count && !s->inflight && !s->hold_stb)
			rc = strand_drain(m, s);
	}
	for (unsigned i = 0; i < m->nstrands && rc == MSR_OK; i++)
		if (m->cycle >= m->s[i].wake && m->s[i].state != ST_LD_REQ)
			rc = strand_tick(m, &m->s[i]);
	m->cycle++;
	return rc;
}

int gen_model_run(struct gen_model *m, struct msr_error *err)
{
	uint64_t stop_cycle = 0;
	int rc = MSR_OK;

	m->err = err;
	for (;;) {
		if (!m->stopping && m->cfg.max_events &&
		    m->st.events >= m->cfg.max_events)
			m->stopping = true;
		if (m->stopping && !stop_cycle)
			stop_cycle = m->cycle + 1;
		rc = cycle_once(m);
		if (rc < 0)
			break;
		if (m->stopping && quiescent(m))
			break;
		if (stop_cycle && m->cycle - stop_cycle > DRAIN_LIMIT) {
			rc = msr_error_set(err, MSR_E_INTERNAL, "gen", NULL,
					   "model did not drain cycle=%llu",
					   (unsigned long long)m->cycle);
			break;
		}
	}
	m->st.cycles = m->cycle;
	m->err = NULL;
	return rc;
}

void gen_model_get_stats(const struct gen_model *m, struct gen_model_stats *st)
{
	*st = m->st;
	st->cycles = m->cycle;
}

int gen_model_foreach_initial(const struct gen_model *m,
			      int (*fn)(void *ctx, uint64_t pa,
					const uint8_t w[8], struct msr_error *err),
			      void *ctx, struct msr_error *err)
{
	int rc = MSR_OK;

	for (uint64_t i = 0; i < m->cbytes && rc == MSR_OK; i += 8)
		rc = fn(ctx, GEN_POOL_BASE + i, m->mem + i, err);
	for (uint64_t i = 0; i < GEN_IO_BYTES && rc == MSR_OK; i += 8)
		rc = fn(ctx, GEN_IO_BASE + i, m->io + i, err);
	return rc;
}

/* ---------------------------------------------------------------- */
/* services for fault episodes                                       */
/* ---------------------------------------------------------------- */

unsigned gen_model_strands(const struct gen_model *m) { return m->nstrands; }
unsigned gen_model_threads(const struct gen_model *m) { return m->cfg.threads; }
bool gen_model_stopping(const struct gen_model *m) { return m->stopping; }
uint64_t gen_model_instructions(const struct gen_model *m) { return m->started; }
uint64_t gen_model_events(const struct gen_model *m) { return m->st.events; }
struct gen_rng *gen_model_rng(struct gen_model *m) { return &m->vrng; }
bool gen_model_inv_held(const struct gen_model *m) { return m->inv_held; }
bool gen_model_atomic_split(const struct gen_model *m) { return m->atomic_split; }

void gen_model_reserve(struct gen_model *m, unsigned strand, bool on)
{
	m->s[strand].reserved = on;
}

bool gen_model_reserved(const struct gen_model *m, unsigned strand)
{
	return m->s[strand].reserved;
}

bool gen_model_idle(const struct gen_model *m, unsigned strand)
{
	const struct strand *s = &m->s[strand];

	return s->state == ST_IDLE && !s->sc_count;
}

bool gen_model_stb_empty(const struct gen_model *m, unsigned strand)
{
	return m->s[strand].stb_count == 0;
}

int gen_model_script(struct gen_model *m, unsigned strand,
		     const struct gen_insn *in, struct msr_error *err)
{
	struct strand *s = &m->s[strand];

	if (s->sc_count == SCRIPT_RING)
		return msr_error_set(err, MSR_E_INTERNAL, "gen", NULL,
				     "script overflow strand=%u", strand);
	s->script[(s->sc_head + s->sc_count) % SCRIPT_RING] = *in;
	s->sc_count++;
	return MSR_OK;
}

void gen_model_hold_stb(struct gen_model *m, unsigned strand, bool on)
{
	m->s[strand].hold_stb = on;
}

void gen_model_release_inv(struct gen_model *m)
{
	if (!m->inv_held)
		return;
	m->inv_held = false;
	(void)model_tok_push(m, m->held_core, &m->held, NULL);
}

void gen_model_release_atomic(struct gen_model *m)
{
	struct strand *s;
	struct req r;

	if (!m->atomic_split)
		return;
	m->atomic_split = false;
	s = &m->s[m->split_strand];
	r.kind = RQ_ATOMIC_COMMIT;
	r.strand = (uint8_t)s->id;
	r.stb_idx = (uint16_t)s->stb_head;
	(void)model_bank_push(m, s->cur.pa, r);
}

uint64_t gen_model_fault_line(struct gen_model *m)
{
	uint64_t off = m->fault_next;

	if (off + 64 > m->cfg.footprint + GEN_FAULT_BYTES)
		return 0;
	m->fault_next += 64;
	return GEN_POOL_BASE + off;
}
