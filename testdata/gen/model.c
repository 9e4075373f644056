/*
 * model.c - the shared half of the msync-gen memory system: memory image,
 * per-core L1 images, the L2 banks (the serialisation point: loads read,
 * stores commit, the directory computes invvec), the per-core in-order
 * response queues (L2 data, acks, ST_UPDATE, ST_INV, EVICT_INV: one queue
 * per core is what keeps TSO), system events (EVICT, DMA_ST, MEM_SLAM,
 * MEM_CHECK, other messages) and the cycle loop.
 *
 * It must never emit an event sequence outside the ones documented in
 * docs/generator.md, never keep state per event after retirement, and never
 * read the wall clock.
 */
#include "model-internal.h"

#include <stdlib.h>
#include <string.h>

unsigned model_delay(struct gen_model *m, unsigned max)
{
	return (unsigned)gen_rng_below(&m->rng, max + 1);
}

bool model_cacheable(const struct gen_model *m, uint64_t pa)
{
	return pa >= GEN_POOL_BASE && pa < GEN_POOL_BASE + m->cbytes;
}

uint64_t model_off(const struct gen_model *m, uint64_t pa)
{
	(void)m;
	return pa - GEN_POOL_BASE;
}

uint8_t *model_l1(struct gen_model *m, unsigned core, uint64_t line)
{
	return m->l1d + ((uint64_t)core * m->nlines + line) * 16;
}

bool gen_model_l1_present(const struct gen_model *m, unsigned core,
			  uint64_t pa)
{
	if (!model_cacheable(m, pa))
		return false;
	return (m->l1p[model_off(m, pa) >> 4] >> core) & 1;
}

/* ---------------------------------------------------------------- */
/* emission                                                          */
/* ---------------------------------------------------------------- */

static void put_be(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static const uint16_t other_codes[] = {
	MSR_IHWTW, MSR_DHWTW, MSR_ITLBREAD, MSR_DTLBREAD, MSR_TLBLOOKUP,
	MSR_DTLBREAD_POP, MSR_INT_INTP, MSR_ASR_WRITE, MSR_ASI_WRITE,
	MSR_ASI_READ, MSR_CMP_WRITE, MSR_ASR_READ, MSR_CSR_READ, MSR_PIO_READ,
};

static int sink_event(struct gen_model *m, struct msr_event *ev)
{
	ev->index = m->st.events;
	m->st.events++;
	m->st.by_code[ev->code < MSR_CODE_LIMIT ? ev->code : 0]++;
	return m->sink.event(m->sink.ctx, ev, m->err);
}

/* A non-memory message with a random payload (tnum and ts kept valid). */
static int emit_other(struct gen_model *m, unsigned code, unsigned tnum)
{
	const struct msr_msgdef *d = msr_msgdef_get(code);
	struct msr_event ev;

	if (!d)
		return msr_error_set(m->err, MSR_E_INTERNAL, "gen", NULL,
				     "no layout for code=0x%02x", code);
	memset(&ev, 0, sizeof(ev));
	ev.code = (uint16_t)code;
	ev.nbytes = (uint8_t)(d->length - 1);
	for (unsigned i = 0; i < ev.nbytes; i++)
		ev.bytes[i] = (uint8_t)gen_rng_next(&m->vrng);
	if (d->other_tnum_at) {
		ev.tnum = (uint8_t)tnum;
		ev.bytes[d->other_tnum_at - 1] = ev.tnum;
	}
	if (d->other_ts_at) {
		ev.ts = (uint32_t)m->cycle;
		put_be(ev.bytes + d->other_ts_at - 1, ev.ts, 4);
	}
	if ((code == MSR_ITLBWRITE || code == MSR_DTLBWRITE) &&
	    gen_rng_chance(&m->vrng, 0.2))
		ev.bytes[5] = 0xff; /* demap */
	m->st.others++;
	return sink_event(m, &ev);
}

/*
 * The register-write delta of one instruction (pli-other.md): a header
 * record, up to two continuation records, then the end byte. The delta is
 * always closed before anything else follows, so no message code is ever
 * read as a continuation record.
 */
static int emit_regdelta(struct gen_model *m, unsigned tnum)
{
	static const uint8_t types[] = {'G', 'W', 'X', 'F', 'C'};
	unsigned n = 1 + (unsigned)gen_rng_below(&m->vrng, 3);
	struct msr_event ev;
	int rc = MSR_OK;

	for (unsigned i = 0; i < n && rc == MSR_OK; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.code = MSR_REGDELTA;
		ev.flags = i == 0 ? MSR_EVF_RD_HEADER : 0;
		ev.rd_tid = (uint16_t)tnum;
		ev.rd_type = types[gen_rng_below(&m->vrng, sizeof(types))];
		if (ev.rd_type == 'G' || ev.rd_type == 'W' || ev.rd_type == 'X')
			ev.rd_extra = (uint8_t)gen_rng_below(&m->vrng, 8);
		ev.rd_reg = (uint8_t)gen_rng_below(&m->vrng, 32);
		ev.data = gen_rng_next(&m->vrng);
		m->st.others++;
		rc = sink_event(m, &ev);
	}
	if (rc == MSR_OK) {
		memset(&ev, 0, sizeof(ev));
		ev.code = MSR_REGDELTA_END;
		rc = sink_event(m, &ev);
	}
	return rc;
}

int model_emit(struct gen_model *m, struct msr_event *ev)
{
	int rc;

	ev->ts = (uint32_t)m->cycle;
	rc = sink_event(m, ev);
	if (rc == MSR_OK && m->cfg.other_rate > 0 &&
	    gen_rng_chance(&m->vrng, m->cfg.other_rate)) {
		unsigned n = sizeof(other_codes) / sizeof(other_codes[0]);
		unsigned code = other_codes[gen_rng_below(&m->vrng, n)];

		rc = emit_other(m, code, (unsigned)gen_rng_below(&m->vrng,
								 m->nstrands));
	}
	return rc;
}

/* ---------------------------------------------------------------- */
/* SSTEP and the step line                                           */
/* ---------------------------------------------------------------- */

static void step_fields(struct strand *s, struct gen_step *st, bool bad)
{
	const struct gen_insn *in = &s->cur;
	unsigned sz = in->size;

	st->pa = in->pa;
	st->size = (uint8_t)sz;
	switch (in->op) {
	case MSR_STEP_LD:
		st->has = MSR_STEP_HAS_PA | MSR_STEP_HAS_SIZE | MSR_STEP_HAS_LD;
		break;
	case MSR_STEP_LDD: case MSR_STEP_LDQ: case MSR_STEP_LDBLK:
		st->has = MSR_STEP_HAS_PA | MSR_STEP_HAS_LD;
		break;
	case MSR_STEP_ST:
		st->has = MSR_STEP_HAS_PA | MSR_STEP_HAS_SIZE | MSR_STEP_HAS_ST;
		break;
	case MSR_STEP_STBLK: case MSR_STEP_STBI:
		st->has = MSR_STEP_HAS_PA | MSR_STEP_HAS_ST;
		break;
	case MSR_STEP_CAS: case MSR_STEP_SWAP: case MSR_STEP_LDSTUB:
		st->has = MSR_STEP_HAS_PA | MSR_STEP_HAS_SIZE | MSR_STEP_HAS_LD;
		if (!(in->flags & GEN_F_CAS_FAIL))
			st->has |= MSR_STEP_HAS_ST;
		break;
	case MSR_STEP_MEMBAR:
		st->has = MSR_STEP_HAS_MASK;
		st->mask = in->mask;
		break;
	case MSR_STEP_PREFETCH:
		st->has = MSR_STEP_HAS_PA;
		break;
	default:
		st->has = 0;
	}
	if (st->has & MSR_STEP_HAS_LD)
		memcpy(st->ld, s->value, sz);
	if (st->has & MSR_STEP_HAS_ST)
		memcpy(st->st, in->st, sz);
	if (bad && (st->has & MSR_STEP_HAS_LD) && (in->flags & GEN_F_BAD_LD_LOG))
		st->ld[0] ^= 0x5a;
	if (bad && (st->has & MSR_STEP_HAS_ST) && (in->flags & GEN_F_BAD_ST_LOG))
		st->st[0] ^= 0x5a;
}

static bool is_store_op(unsigned op)
{
	return op == MSR_STEP_ST || op == MSR_STEP_STBLK || op == MSR_STEP_STBI;
}

int model_sstep(struct gen_model *m, struct strand *s)
{
	struct gen_insn *in = &s->cur;
	struct gen_step st;
	struct msr_event ev;
	bool bad = false;
	int rc;

	s->iseq++;
	if (in->op == MSR_STEP_NOP && m->cfg.other_rate > 0 &&
	    gen_rng_chance(&m->vrng, m->cfg.other_rate)) {
		/* a TLB write instruction: its SSTEP follows right after */
		rc = emit_other(m, gen_rng_chance(&m->vrng, 0.5) ? MSR_ITLBWRITE
								  : MSR_DTLBWRITE,
				s->id);
		if (rc < 0)
			return rc;
	}
	if (m->cfg.other_rate > 0 && gen_rng_chance(&m->vrng, m->cfg.other_rate)) {
		rc = emit_regdelta(m, s->id);
		if (rc < 0)
			return rc;
	}
	if (!s->from_script && m->faults) {
		rc = gen_faults_on_step(m->faults, m, s->id, in, s->iseq,
					m->st.events, &bad, m->err);
		if (rc < 0)
			return rc;
		if (bad)
			in->flags |= GEN_F_BAD_LD_LOG | GEN_F_BAD_ST_LOG;
	}
	if (is_store_op(in->op)) {
		for (unsigned k = 0; k < s->stb_count; k++) {
			struct stb_entry *e = STB_AT(s, s->stb_head + k);

			if (e->group == s->next_group) {
				e->retired = true;
				e->iseq = s->iseq;
			}
		}
	}
	if (in->trk) {
		in->trk->iseq = s->iseq;
		in->trk->sstep_event = m->st.events;
		in->trk->stepped = true;
		memcpy(in->trk->value, s->value, sizeof(s->value));
	}
	memset(&ev, 0, sizeof(ev));
	ev.code = MSR_SSTEP;
	ev.tnum = (uint8_t)s->id;
	rc = model_emit(m, &ev);
	if (rc < 0)
		return rc;
	memset(&st, 0, sizeof(st));
	st.tnum = (uint8_t)s->id;
	st.op = in->op;
	st.pc = s->pc;
	s->pc = (s->pc & ~0xfffffull) | ((s->pc + 4) & 0xfffffull);
	step_fields(s, &st, bad || (in->flags & (GEN_F_BAD_LD_LOG |
						 GEN_F_BAD_ST_LOG)));
	m->st.steps++;
	m->st.instructions++;
	return m->sink.step ? m->sink.step(m->sink.ctx, &st, m->err) : MSR_OK;
}

/* ---------------------------------------------------------------- */
/* queues                                                            */
/* ---------------------------------------------------------------- */

static unsigned bank_of(uint64_t pa)
{
	return (unsigned)((pa >> 6) & 7);
}

int model_bank_push(struct gen_model *m, uint64_t pa, struct req r)
{
	struct bank *b = &m->banks[bank_of(pa)];

	if (b->count == b->cap)
		return msr_error_set(m->err, MSR_E_INTERNAL, "gen", NULL,
				     "bank queue overflow bank=%u", bank_of(pa));
	b->q[(b->head + b->count) & (b->cap - 1)] = r;
	b->count++;
	return MSR_OK;
}

int model_tok_push(struct gen_model *m, unsigned core, const struct token *t,
		   uint64_t *idx)
{
	struct respq *q = &m->rq[core];

	if (q->count == q->cap) {
		struct token *nt = malloc(sizeof(*nt) * q->cap * 2);

		if (!nt)
			return msr_error_set(m->err, MSR_E_NOMEM, "gen", NULL,
					     "out of memory growing queue core=%u",
					     core);
		for (unsigned i = 0; i < q->count; i++)
			nt[i] = q->t[(q->head + i) & (q->cap - 1)];
		free(q->t);
		q->t = nt;
		q->head = 0;
		q->cap *= 2;
	}
	q->t[(q->head + q->count) & (q->cap - 1)] = *t;
	q->count++;
	if (idx)
		*idx = q->enq;
	q->enq++;
	return MSR_OK;
}

static bool queues_full(const struct gen_model *m)
{
	for (unsigned c = 0; c < m->cfg.cores; c++)
		if (m->rq[c].count >= QUEUE_SOFT_LIMIT)
			return true;
	return false;
}

/* ---------------------------------------------------------------- */
/* L2 bank operations                                                */
/* ---------------------------------------------------------------- */

static int emit_ld_data(struct gen_model *m, struct strand *s, uint64_t pa)
{
	struct msr_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.code = MSR_LD_DATA;
	ev.tnum = (uint8_t)s->id;
	ev.pa = pa;
	ev.dsrc = MSR_DSRC_L2;
	if (s->cur.trk && !s->cur.trk->has_data) {
		s->cur.trk->data_event = m->st.events;
		s->cur.trk->has_data = true;
	}
	return model_emit(m, &ev);
}

static int bank_load(struct gen_model *m, struct strand *s, unsigned kind)
{
	const struct gen_insn *in = &s->cur;
	struct token t;
	int rc = MSR_OK;

	memset(&t, 0, sizeof(t));
	t.kind = TK_DATA;
	t.strand = (uint8_t)s->id;
	t.pa = in->pa;
	m->st.l2_loads++;
	if (kind == RQ_IO) {
		memcpy(s->value, m->io + (in->pa - GEN_IO_BASE), in->size);
		rc = emit_ld_data(m, s, in->pa);
	} else if (kind == RQ_BLOCK) {
		for (unsigned i = 0; i < 4 && rc == MSR_OK; i++)
			rc = emit_ld_data(m, s, in->pa + 16 * i);
		memcpy(s->value, m->mem + model_off(m, in->pa), 64);
	} else {
		uint64_t off = model_off(m, in->pa), line = off >> 4;

		memcpy(s->value, m->mem + off, in->size);
		rc = emit_ld_data(m, s, in->pa);
		if (kind == RQ_LOAD || kind == RQ_QUAD) {
			t.fill = true;
			memcpy(t.data, m->mem + (line << 4), 16);
			m->dir[line] |= 1u << s->core;
		}
	}
	if (kind != RQ_IO)
		m->l2p[model_off(m, in->pa) >> 6] = 1;
	return rc < 0 ? rc : model_tok_push(m, s->core, &t, NULL);
}

/* INV tokens for the other cores of `inv`; fault marks may hold or hide
 * one of them. */
static int push_invs(struct gen_model *m, struct strand *s,
		     const struct stb_entry *e, uint32_t inv, uint64_t wait_idx)
{
	for (unsigned c = 0; c < m->cfg.cores; c++) {
		struct token t;
		int rc;

		if (c == s->core || !((inv >> c) & 1))
			continue;
		memset(&t, 0, sizeof(t));
		t.kind = TK_INV;
		t.strand = (uint8_t)s->id;
		t.pa = e->pa & ~15ull;
		t.wait_core = (uint8_t)s->core;
		t.wait_idx = wait_idx;
		if ((e->flags & GEN_F_LOSE_INV) && c == e->fault_core)
			t.kind = TK_INV_SILENT;
		if ((e->flags & GEN_F_DELAY_INV) && c == e->fault_core &&
		    !m->inv_held) {
			m->held = t;
			m->held_core = c;
			m->inv_held = true;
			continue;
		}
		rc = model_tok_push(m, c, &t, NULL);
		if (rc < 0)
			return rc;
	}
	return MSR_OK;
}

/* Merge an entry's bytes into memory and emit its ST_COMMIT. */
static int commit_entry(struct gen_model *m, struct strand *s,
			struct stb_entry *e, bool write, uint32_t *invp)
{
	uint64_t off = model_off(m, e->pa), line = off >> 4, l64 = off >> 6;
	uint64_t d8 = off & ~7ull;
	uint32_t inv = write ? m->dir[line] : 0;
	bool l2hit = m->l2p[l64];
	struct msr_event ev;

	if (write) {
		if (e->itype == MSR_IT_BLK_INIT_ST && !l2hit)
			memset(m->mem + (l64 << 6), 0, 64);
		for (unsigned b = 0; b < 8; b++)
			if (e->bmask & (0x80u >> b))
				m->mem[d8 + b] = e->data[b];
		m->dir[line] = inv & (1u << s->core);
	}
	m->l2p[l64] = 1;
	memset(&ev, 0, sizeof(ev));
	ev.code = MSR_ST_COMMIT;
	ev.tnum = (uint8_t)s->id;
	ev.pa = e->pa;
	ev.bmask = write ? e->bmask : 0;
	ev.invvec = inv;
	ev.l2hit = l2hit;
	if (e->trk) {
		e->trk->commit_event = m->st.events;
		e->trk->committed = true;
	}
	e->committed = true;
	m->st.commits++;
	*invp = inv;
	return model_emit(m, &ev);
}

static void own_token(struct gen_model *m, struct strand *s, unsigned idx,
		      uint32_t inv, struct token *t)
{
	struct stb_entry *e = STB_AT(s, idx);

	memset(t, 0, sizeof(*t));
	t->strand = (uint8_t)s->id;
	t->stb_idx = (uint16_t)idx;
	t->pa = e->pa;
	t->rmo = e->itype == MSR_IT_BLOCK_STORE || e->itype == MSR_IT_BLK_INIT_ST;
	t->update = (inv >> s->core) & 1;
	if (t->update)
		memcpy(t->data, m->mem + (model_off(m, e->pa) & ~7ull), 8);
	t->kind = e->preacked ? TK_UPDATE : TK_ACK;
}

static int bank_store(struct gen_model *m, struct strand *s, unsigned idx)
{
	struct stb_entry *e = STB_AT(s, idx);
	struct token t;
	uint32_t inv;
	int rc = commit_entry(m, s, e, true, &inv);

	if (rc < 0)
		return rc;
	own_token(m, s, idx, inv, &t);
	/* An early-acked entry still sends a token through its own core's
	 * queue (ST_UPDATE, or a silent marker): it leaves the buffer only when
	 * every invalidation queued before its commit has reached that core,
	 * so its strand cannot hit a stale copy of its own store's line. */
	{
		uint64_t ti;

		rc = model_tok_push(m, s->core, &t, &ti);
		if (rc < 0)
			return rc;
		if (t.kind == TK_ACK)
			e->ack_idx = ti;
	}
	rc = push_invs(m, s, e, inv, e->ack_idx);
	e->update_pending = t.kind == TK_UPDATE;
	if (rc == MSR_OK && e->preacked && e->acked && !e->update_pending)
		strand_stb_done(m, s, idx);
	return rc;
}

int model_atomic_commit(struct gen_model *m, struct strand *s, unsigned idx)
{
	struct stb_entry *e = STB_AT(s, idx);
	struct gen_insn *in = &s->cur;
	struct token d, t;
	bool ok = true;
	uint32_t inv;
	uint64_t ti;
	int rc;

	if (in->op == MSR_STEP_CAS) {
		if (!(in->flags & (GEN_F_CAS_OK | GEN_F_CAS_FAIL)))
			in->flags |= gen_rng_chance(&m->vrng, 0.6) ? GEN_F_CAS_OK
								   : GEN_F_CAS_FAIL;
		ok = !(in->flags & GEN_F_CAS_FAIL);
	}
	rc = commit_entry(m, s, e, ok, &inv);
	if (rc < 0)
		return rc;
	memset(&d, 0, sizeof(d));
	d.kind = TK_DATA;
	d.atomic = true;
	d.strand = (uint8_t)s->id;
	d.pa = e->pa;
	rc = model_tok_push(m, s->core, &d, NULL);
	own_token(m, s, idx, inv, &t);
	if (rc == MSR_OK)
		rc = model_tok_push(m, s->core, &t, &ti);
	if (rc < 0)
		return rc;
	e->ack_idx = ti;
	return push_invs(m, s, e, inv, ti);
}

static int bank_atomic(struct gen_model *m, struct strand *s, unsigned idx)
{
	const struct gen_insn *in = &s->cur;
	int rc;

	memcpy(s->value, m->mem + model_off(m, in->pa), in->size);
	rc = emit_ld_data(m, s, in->pa);
	if (rc < 0)
		return rc;
	if (in->flags & GEN_F_ATOMIC_BREAK) {
		m->atomic_split = true;
		m->split_strand = s->id;
		return MSR_OK;
	}
	return model_atomic_commit(m, s, idx);
}

int model_bank_tick(struct gen_model *m, struct bank *b)
{
	struct req r;
	struct strand *s;
	int rc;

	if (!b->count || m->cycle < b->wake)
		return MSR_OK;
	r = b->q[b->head];
	s = &m->s[r.strand];
	if (r.kind >= RQ_STORE ? queues_full(m)
			       : m->rq[s->core].count >= QUEUE_SOFT_LIMIT)
		return MSR_OK;
	b->head = (b->head + 1) & (b->cap - 1);
	b->count--;
	b->wake = m->cycle + 1 + model_delay(m, 2);
	switch (r.kind) {
	case RQ_STORE: rc = bank_store(m, s, r.stb_idx); break;
	case RQ_ATOMIC: rc = bank_atomic(m, s, r.stb_idx); break;
	case RQ_ATOMIC_COMMIT: rc = model_atomic_commit(m, s, r.stb_idx); break;
	default: rc = bank_load(m, s, r.kind); break;
	}
	return rc;
}

/* ---------------------------------------------------------------- */
/* response delivery                                                 */
/* ---------------------------------------------------------------- */

static int deliver_data(struct gen_model *m, struct strand *s,
			const struct token *t)
{
	struct msr_event ev;
	bool step_first;
	int rc = MSR_OK;

	if (t->atomic) {
		rc = model_sstep(m, s);
		s->state = ST_WAIT_EMPTY_POST;
		return rc;
	}
	if (!t->fill) {
		s->state = ST_STEP;
		s->wake = m->cycle + model_delay(m, 2);
		return MSR_OK;
	}
	{
		uint64_t line = model_off(m, t->pa) >> 4;

		m->l1p[line] |= 1u << s->core;
		memcpy(model_l1(m, s->core, line), t->data, 16);
	}
	memset(&ev, 0, sizeof(ev));
	ev.code = MSR_LD_FILL;
	ev.tnum = (uint8_t)s->id;
	ev.pa = t->pa;
	step_first = gen_rng_chance(&m->rng, 0.3);
	if (step_first)
		rc = model_sstep(m, s);
	if (rc == MSR_OK)
		rc = model_emit(m, &ev);
	if (rc == MSR_OK && !step_first)
		rc = model_sstep(m, s);
	s->state = ST_IDLE;
	s->wake = m->cycle + 1 + model_delay(m, 2);
	return rc;
}

static int deliver_ack(struct gen_model *m, unsigned core,
		       const struct token *t)
{
	struct strand *s = &m->s[t->strand];
	struct stb_entry *e = STB_AT(s, t->stb_idx);
	struct msr_event ev;
	int rc = MSR_OK;

	if (t->kind == TK_ACK) {
		memset(&ev, 0, sizeof(ev));
		ev.code = MSR_ST_ACK;
		ev.tnum = t->strand;
		ev.rmo = t->rmo;
		rc = model_emit(m, &ev);
	}
	if (rc == MSR_OK && t->update) {
		uint64_t line = model_off(m, t->pa) >> 4;

		memset(&ev, 0, sizeof(ev));
		ev.code = MSR_ST_UPDATE;
		ev.tnum = t->strand;
		ev.pa = t->pa;
		if ((m->l1p[line] >> core) & 1)
			memcpy(model_l1(m, core, line) + (t->pa & 8), t->data, 8);
		m->st.updates++;
		rc = model_emit(m, &ev);
	}
	if (t->kind == TK_ACK)
		e->acked = true;
	else
		e->update_pending = false;
	if (e->acked && (!t->rmo || (e->committed && !e->update_pending)))
		strand_stb_done(m, s, t->stb_idx);
	return rc;
}

static int deliver(struct gen_model *m, unsigned core, const struct token *t)
{
	uint64_t line = model_off(m, t->pa) >> 4;
	struct msr_event ev;

	memset(&ev, 0, sizeof(ev));
	switch (t->kind) {
	case TK_DATA:
		return deliver_data(m, &m->s[t->strand], t);
	case TK_ACK: case TK_UPDATE:
		return deliver_ack(m, core, t);
	case TK_INV_SILENT:
		m->l1p[line] &= ~(1u << core);
		return MSR_OK;
	case TK_INV:
		m->l1p[line] &= ~(1u << core);
		ev.code = MSR_ST_INV;
		ev.cid = (uint8_t)core;
		ev.tnum = t->strand;
		ev.pa = t->pa;
		m->st.invs++;
		return model_emit(m, &ev);
	default: /* TK_EVICT_INV */
		m->l1p[line] &= ~(1u << core);
		ev.code = MSR_EVICT_INV;
		ev.cid = (uint8_t)core;
		ev.bank = t->bank;
		return model_emit(m, &ev);
	}
}

int model_queue_tick(struct gen_model *m, unsigned core)
{
	struct respq *q = &m->rq[core];
	struct token t;

	if (!q->count || m->cycle < q->wake)
		return MSR_OK;
	t = q->t[q->head];
	if (t.kind == TK_INV && m->rq[t.wait_core].deq <= t.wait_idx)
		return MSR_OK; /* the ack of its commit goes first */
	q->head = (q->head + 1) & (q->cap - 1);
	q->count--;
	q->deq++;
	/* mostly quick, sometimes a long crossbar stall: stale windows */
	q->wake = m->cycle + (gen_rng_chance(&m->rng, 1.0 / 32)
				      ? 8 + model_delay(m, 40)
				      : model_delay(m, 2));
	return deliver(m, core, &t);
}
