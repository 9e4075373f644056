/*
 * strand.c - one hardware strand of the msync-gen model: in-order issue with
 * one outstanding load, a FIFO store buffer with full-bypass forwarding, and
 * the drain of that buffer towards the L2 banks (one store group in flight,
 * so commits follow program order; RMO groups may commit out of order among
 * themselves and be acknowledged early).
 *
 * It must never let a load see data in a way TSO forbids unless a fault mark
 * asks for it, and never emit an event out of the orders listed in
 * docs/generator.md.
 */
#include "model-internal.h"

#include <string.h>

static unsigned log2u(unsigned v)
{
	unsigned r = 0;

	while (v > 1) {
		v >>= 1;
		r++;
	}
	return r;
}

static uint64_t be64(const uint8_t b[8])
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | b[i];
	return v;
}

static int emit_simple(struct gen_model *m, unsigned code, unsigned tnum,
		       uint64_t pa, unsigned itype, unsigned size_log,
		       unsigned dsrc)
{
	struct msr_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.code = (uint16_t)code;
	ev.tnum = (uint8_t)tnum;
	ev.pa = pa;
	ev.itype = (uint8_t)itype;
	ev.size = (uint8_t)size_log;
	ev.dsrc = (uint8_t)dsrc;
	return model_emit(m, &ev);
}

static int emit_st_issue(struct gen_model *m, unsigned tnum,
			 const struct stb_entry *e)
{
	struct msr_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.code = MSR_ST_ISSUE;
	ev.tnum = (uint8_t)tnum;
	ev.pa = e->pa;
	ev.data = be64(e->data);
	ev.bmask = e->bmask;
	ev.itype = e->itype;
	return model_emit(m, &ev);
}

static unsigned ld_itype(unsigned op)
{
	switch (op) {
	case MSR_STEP_LDD: return MSR_IT_DOUBLE_LOAD;
	case MSR_STEP_LDQ: return MSR_IT_QUAD_LOAD;
	case MSR_STEP_LDBLK: return MSR_IT_BLOCK_LOAD;
	case MSR_STEP_CAS: case MSR_STEP_SWAP: case MSR_STEP_LDSTUB:
		return MSR_IT_ATOMIC;
	default: return MSR_IT_LOAD;
	}
}

/* Byte mask (bit 7 = byte 0) of [pa, pa+size) within the dword at pa8. */
static uint8_t dword_mask(uint64_t pa8, uint64_t pa, unsigned size)
{
	uint8_t mk = 0;

	for (unsigned b = 0; b < 8; b++) {
		uint64_t a = pa8 + b;

		if (a >= pa && a < pa + size)
			mk |= (uint8_t)(0x80u >> b);
	}
	return mk;
}

/*
 * The youngest live store of `s` overlapping [pa, pa+size): 0 none,
 * 1 it fully covers a load confined to one dword and may be forwarded
 * (*idx set), 2 any other overlap (the load must wait for it to drain).
 */
static int stb_overlap(struct strand *s, uint64_t pa, unsigned size,
		       unsigned *idx)
{
	for (unsigned k = s->stb_count; k-- > 0;) {
		unsigned i = s->stb_head + k;
		struct stb_entry *e = STB_AT(s, i);
		uint64_t pa8 = e->pa & ~7ull;
		uint8_t lm;

		if (e->done)
			continue;
		/* a block-init store may zero its whole 64-byte line (l2hit=0
		 * is known only at commit): any load to the line waits for it */
		if (e->itype == MSR_IT_BLK_INIT_ST &&
		    (e->pa & ~63ull) <= pa + size - 1 &&
		    pa < (e->pa & ~63ull) + 64)
			return 2;
		if (pa8 + 8 <= pa || pa8 >= pa + size)
			continue;
		lm = dword_mask(pa8, pa, size);
		if (!(lm & e->bmask))
			continue;
		/* forward from a normal store still in the buffer, committed
		 * or not: its ack reaches the core before any L2 data that
		 * could hold a newer store, so the strand has seen nothing
		 * newer than it */
		if ((pa & ~7ull) == ((pa + size - 1) & ~7ull) &&
		    (e->bmask & lm) == lm && e->itype == MSR_IT_STORE) {
			*idx = i;
			return 1;
		}
		return 2;
	}
	return 0;
}

/* Bypass-fault: the next older live store that also covers the load. */
static unsigned older_cover(struct strand *s, unsigned idx, uint64_t pa,
			    unsigned size)
{
	uint8_t lm = dword_mask(pa & ~7ull, pa, size);

	for (unsigned i = idx; i-- != s->stb_head;) {
		struct stb_entry *e = STB_AT(s, i);

		if (!e->done && (e->pa & ~7ull) == (pa & ~7ull) &&
		    (e->bmask & lm) == lm)
			return i;
	}
	return idx;
}

static int send_load(struct gen_model *m, struct strand *s)
{
	struct req r = {RQ_LOAD, (uint8_t)s->id, 0};

	if (s->cur.flags & GEN_F_IO)
		r.kind = RQ_IO;
	else if (s->cur.op == MSR_STEP_LDQ)
		r.kind = RQ_QUAD;
	else if (s->cur.op == MSR_STEP_LDBLK)
		r.kind = RQ_BLOCK;
	s->state = ST_LD_REQ;
	return model_bank_push(m, s->cur.pa, r);
}

static int load_bypass(struct gen_model *m, struct strand *s, unsigned idx)
{
	const struct gen_insn *in = &s->cur;
	struct stb_entry *e;
	int rc;

	if (in->flags & GEN_F_BAD_BYPASS)
		idx = older_cover(s, idx, in->pa, in->size);
	e = STB_AT(s, idx);
	memcpy(s->value, e->data + (in->pa & 7), in->size);
	if (in->trk)
		in->trk->data_event = m->st.events;
	rc = emit_simple(m, MSR_LD_DATA, s->id, in->pa, 0, 0, MSR_DSRC_STB);
	m->st.stb_bypasses++;
	s->state = ST_STEP;
	s->wake = m->cycle + model_delay(m, 3);
	return rc;
}

static int load_issue(struct gen_model *m, struct strand *s)
{
	const struct gen_insn *in = &s->cur;
	unsigned idx = 0;
	int ov, rc;

	rc = emit_simple(m, MSR_LD_ISSUE, s->id, in->pa, ld_itype(in->op),
			 log2u(in->size), 0);
	if (rc < 0)
		return rc;
	m->st.loads++;
	if (in->flags & GEN_F_IO)
		return send_load(m, s);
	ov = stb_overlap(s, in->pa, in->size, &idx);
	if (ov == 1 && (in->op == MSR_STEP_LD || in->op == MSR_STEP_LDD))
		return load_bypass(m, s, idx);
	if (ov) {
		s->state = ST_LD_WAIT_STB;
		return MSR_OK;
	}
	if ((in->op == MSR_STEP_LD || in->op == MSR_STEP_LDD) &&
	    gen_model_l1_present(m, s->core, in->pa)) {
		s->state = ST_LD_HIT;
		s->wake = m->cycle + model_delay(m, 2);
		return MSR_OK;
	}
	return send_load(m, s);
}

static int load_hit(struct gen_model *m, struct strand *s)
{
	const struct gen_insn *in = &s->cur;
	uint64_t line = model_off(m, in->pa) >> 4;
	int rc;

	if (!gen_model_l1_present(m, s->core, in->pa))
		return send_load(m, s); /* invalidated meanwhile: miss */
	memcpy(s->value, model_l1(m, s->core, line) + (in->pa & 15), in->size);
	if (!(m->dir[line] & (1u << s->core)))
		m->st.stale_hits++;
	if (in->trk)
		in->trk->data_event = m->st.events;
	rc = emit_simple(m, MSR_LD_DATA, s->id, in->pa, 0, 0, MSR_DSRC_L1);
	m->st.l1_hits++;
	s->state = ST_STEP;
	s->wake = m->cycle + model_delay(m, 3);
	return rc;
}

static void entry_fill(struct stb_entry *e, uint64_t pa, const uint8_t *v,
		       unsigned size)
{
	memset(e->data, 0, sizeof(e->data));
	memcpy(e->data + (pa & 7), v, size);
	e->pa = pa;
	e->bmask = dword_mask(pa & ~7ull, pa, size);
}

static struct stb_entry *stb_push(struct strand *s, const struct gen_insn *in)
{
	struct stb_entry *e = STB_AT(s, s->stb_head + s->stb_count);

	memset(e, 0, sizeof(*e));
	e->group = s->next_group;
	e->flags = in->flags;
	e->fault_core = in->fault_core;
	e->trk = in->trk;
	s->stb_count++;
	return e;
}

static unsigned stb_cap(const struct gen_model *m)
{
	return m->cfg.stb_depth < 8 ? 8 : m->cfg.stb_depth;
}

static int store_issue(struct gen_model *m, struct strand *s)
{
	const struct gen_insn *in = &s->cur;
	unsigned n = in->op == MSR_STEP_STBLK ? 8 : 1;
	unsigned limit = in->op == MSR_STEP_STBLK ? stb_cap(m) : m->cfg.stb_depth;
	int rc = MSR_OK;

	if (s->stb_count + n > limit) {
		s->state = ST_WAIT_STB_SPACE;
		return MSR_OK;
	}
	s->next_group++;
	for (unsigned i = 0; i < n && rc == MSR_OK; i++) {
		struct stb_entry *e = stb_push(s, in);

		if (in->op == MSR_STEP_STBLK) {
			entry_fill(e, in->pa + 8 * i, in->st + 8 * i, 8);
			e->itype = MSR_IT_BLOCK_STORE;
		} else {
			entry_fill(e, in->pa, in->st, in->size);
			e->itype = in->op == MSR_STEP_STBI ? MSR_IT_BLK_INIT_ST
							 : MSR_IT_STORE;
		}
		rc = emit_st_issue(m, s->id, e);
	}
	m->st.stores++;
	s->state = ST_STEP;
	s->wake = m->cycle + model_delay(m, 3);
	return rc;
}

static int atomic_issue(struct gen_model *m, struct strand *s)
{
	const struct gen_insn *in = &s->cur;
	struct stb_entry *e;
	struct req r = {RQ_ATOMIC, (uint8_t)s->id, 0};
	int rc;

	rc = emit_simple(m, MSR_LD_ISSUE, s->id, in->pa, MSR_IT_ATOMIC,
			 log2u(in->size), 0);
	if (rc < 0)
		return rc;
	s->next_group++;
	r.stb_idx = (uint16_t)(s->stb_head + s->stb_count);
	e = stb_push(s, in);
	entry_fill(e, in->pa, in->st, in->size);
	e->itype = MSR_IT_ATOMIC;
	e->sent = true;
	s->inflight++;
	rc = emit_st_issue(m, s->id, e);
	if (rc < 0)
		return rc;
	m->st.atomics++;
	s->state = ST_LD_REQ;
	return model_bank_push(m, in->pa, r);
}

/* Wrong-path issue that the pipeline squashes: LD_ISSUE+LD_POP or
 * ST_ISSUE+ST_POP. It never gets data and never reaches L2. */
static int wrong_path(struct gen_model *m, struct strand *s)
{
	uint64_t pa = GEN_POOL_BASE +
		      (gen_rng_below(&m->rng, m->cfg.footprint) & ~7ull);
	struct msr_event ev;
	int rc;

	m->st.pops++;
	if (s->stb_count < m->cfg.stb_depth && gen_rng_chance(&m->rng, 0.5)) {
		struct stb_entry e;
		uint8_t v[8];

		memset(&e, 0, sizeof(e));
		for (int i = 0; i < 8; i++)
			v[i] = (uint8_t)gen_rng_next(&m->rng);
		entry_fill(&e, pa, v, 8);
		e.itype = MSR_IT_STORE;
		rc = emit_st_issue(m, s->id, &e);
		memset(&ev, 0, sizeof(ev));
		ev.code = MSR_ST_POP;
	} else {
		rc = emit_simple(m, MSR_LD_ISSUE, s->id, pa, MSR_IT_LOAD, 3, 0);
		memset(&ev, 0, sizeof(ev));
		ev.code = MSR_LD_POP;
	}
	ev.tnum = (uint8_t)s->id;
	return rc < 0 ? rc : model_emit(m, &ev);
}

static int dispatch(struct gen_model *m, struct strand *s)
{
	const struct gen_insn *in = &s->cur;

	switch (in->op) {
	case MSR_STEP_LD: case MSR_STEP_LDD: case MSR_STEP_LDQ:
	case MSR_STEP_LDBLK:
		return load_issue(m, s);
	case MSR_STEP_ST: case MSR_STEP_STBLK: case MSR_STEP_STBI:
		return store_issue(m, s);
	case MSR_STEP_CAS: case MSR_STEP_SWAP: case MSR_STEP_LDSTUB:
		if (s->stb_count) {
			s->state = ST_WAIT_EMPTY_PRE;
			return MSR_OK;
		}
		return atomic_issue(m, s);
	case MSR_STEP_MEMBAR:
		if ((in->mask & GEN_MEMBAR_STORELOAD) &&
		    !(in->flags & GEN_F_NOWAIT)) {
			s->state = ST_WAIT_MEMBAR;
			return MSR_OK;
		}
		/* fall through */
	default:
		s->state = ST_STEP;
		s->wake = m->cycle + model_delay(m, 3);
		return MSR_OK;
	}
}

static int fetch(struct gen_model *m, struct strand *s)
{
	if (s->sc_count) {
		s->cur = s->script[s->sc_head];
		s->sc_head = (s->sc_head + 1) % SCRIPT_RING;
		s->sc_count--;
		s->from_script = true;
	} else {
		int r;

		if (s->reserved || m->stopping || s->program_done)
			return MSR_OK;
		r = gen_program_next(m->prog, s->id, m->cycle, &s->cur);
		if (r == GEN_PROG_WAIT)
			return MSR_OK;
		if (r == GEN_PROG_NONE) {
			s->program_done = true;
			return MSR_OK;
		}
		s->from_script = false;
		m->started++;
		if (m->cfg.max_instructions &&
		    m->started >= m->cfg.max_instructions)
			m->stopping = true;
		if (m->cfg.pop_rate > 0 && gen_rng_chance(&m->rng, m->cfg.pop_rate)) {
			int rc = wrong_path(m, s);

			if (rc < 0)
				return rc;
		}
	}
	return dispatch(m, s);
}

int strand_tick(struct gen_model *m, struct strand *s)
{
	unsigned idx;

	if (m->cycle < s->wake)
		return MSR_OK;
	switch (s->state) {
	case ST_IDLE:
		return fetch(m, s);
	case ST_WAIT_STB_SPACE:
		return store_issue(m, s);
	case ST_WAIT_EMPTY_PRE:
		return s->stb_count ? MSR_OK : atomic_issue(m, s);
	case ST_WAIT_MEMBAR:
		if (!s->stb_count) {
			s->state = ST_STEP;
			s->wake = m->cycle + model_delay(m, 2);
		}
		return MSR_OK;
	case ST_LD_WAIT_STB:
		if (stb_overlap(s, s->cur.pa, s->cur.size, &idx))
			return MSR_OK;
		return send_load(m, s);
	case ST_LD_HIT:
		return load_hit(m, s);
	case ST_STEP: {
		int rc = model_sstep(m, s);

		s->state = ST_IDLE;
		s->wake = m->cycle + model_delay(m, 2);
		return rc;
	}
	case ST_WAIT_EMPTY_POST:
		if (!s->stb_count)
			s->state = ST_IDLE;
		return MSR_OK;
	case ST_LD_REQ:
	default:
		return MSR_OK;
	}
}

void strand_stb_done(struct gen_model *m, struct strand *s, unsigned idx)
{
	struct stb_entry *e = STB_AT(s, idx);

	(void)m;
	if (e->done)
		return;
	e->done = true;
	s->inflight--;
	while (s->stb_count && STB_AT(s, s->stb_head)->done) {
		s->stb_head++;
		s->stb_count--;
	}
}

static bool is_rmo(const struct stb_entry *e)
{
	return e->itype == MSR_IT_BLOCK_STORE || e->itype == MSR_IT_BLK_INIT_ST;
}

/* Send an RMO group: entries may be acknowledged before they commit and
 * reach the bank in any order among themselves. */
static int send_rmo(struct gen_model *m, struct strand *s, unsigned first,
		    unsigned n)
{
	unsigned order[8];
	int rc = MSR_OK;

	for (unsigned i = 0; i < n; i++) {
		struct stb_entry *e = STB_AT(s, first + i);

		order[i] = first + i;
		e->sent = true;
		if (gen_rng_chance(&m->rng, 0.5)) {
			struct token t;

			memset(&t, 0, sizeof(t));
			t.kind = TK_ACK;
			t.strand = (uint8_t)s->id;
			t.rmo = true;
			t.stb_idx = (uint16_t)(first + i);
			e->preacked = true;
			rc = model_tok_push(m, s->core, &t, &e->ack_idx);
			if (rc < 0)
				return rc;
		}
	}
	for (unsigned i = n; i > 1; i--) {
		unsigned j = (unsigned)gen_rng_below(&m->rng, i), t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
	s->inflight += n;
	for (unsigned i = 0; i < n && rc == MSR_OK; i++) {
		struct req r = {RQ_STORE, (uint8_t)s->id, (uint16_t)order[i]};

		rc = model_bank_push(m, STB_AT(s, order[i])->pa, r);
	}
	return rc;
}

static int send_one(struct gen_model *m, struct strand *s, unsigned idx)
{
	struct req r = {RQ_STORE, (uint8_t)s->id, (uint16_t)idx};

	STB_AT(s, idx)->sent = true;
	s->inflight++;
	return model_bank_push(m, STB_AT(s, idx)->pa, r);
}

int strand_drain(struct gen_model *m, struct strand *s)
{
	struct stb_entry *h;
	unsigned n = 1;

	if (!s->stb_count || s->inflight || s->hold_stb)
		return MSR_OK;
	h = STB_AT(s, s->stb_head);
	if (!h->retired || h->sent || !gen_rng_chance(&m->rng, 0.5))
		return MSR_OK;
	if (h->flags & GEN_F_SWAP_NEXT) {
		struct stb_entry *nx = STB_AT(s, s->stb_head + 1);

		if (s->stb_count < 2 || !nx->retired)
			return MSR_OK;
		h->flags &= (uint16_t)~GEN_F_SWAP_NEXT;
		return send_one(m, s, s->stb_head + 1);
	}
	if (!is_rmo(h))
		return send_one(m, s, s->stb_head);
	while (n < s->stb_count && STB_AT(s, s->stb_head + n)->group == h->group)
		n++;
	return send_rmo(m, s, s->stb_head, n);
}

bool strand_quiet(const struct strand *s)
{
	return s->state == ST_IDLE && !s->sc_count && !s->stb_count;
}
