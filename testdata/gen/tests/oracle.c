/*
 * oracle.c - independent replay of msync-gen output for the unit tests (see
 * oracle.h). Written for clarity, not speed: small linear searches over the
 * in-flight window are fine here. It must never share state with the model.
 */
#include "oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXS 256
#define RING 128
#define MAXREC 8192

struct o_load {
	uint64_t pa;
	unsigned itype, bytes, need, got;
	uint8_t value[64];
	uint8_t line[16];
	uint32_t tag[64];     /* writer of each byte read (0 = initial) */
	uint32_t linetag[16];
	bool l2, filled, tagged;
};

struct o_store {
	uint64_t pa;
	uint8_t data[8], bmask, itype;
	uint8_t cmask;   /* bytes its commit wrote */
	uint32_t wtag;   /* writer tag of its commit */
	bool committed, acked, stepped;
};

#define FLOORS 1024 /* per strand, direct mapped: lossy, never wrong */

struct o_floor {
	uint64_t pa8;   /* 0 = empty */
	uint32_t t[8];  /* newest writer this strand must not read behind */
};

struct o_strand {
	struct o_floor floor[FLOORS];
	struct o_load ld[RING];
	unsigned ld_head, ld_n;
	struct o_load fillwait; /* stepped load whose LD_FILL is still due */
	bool has_fillwait;
	struct o_store st[RING];
	unsigned st_head, st_n;
	uint64_t iseq;
	bool stepped_pending; /* an SSTEP awaits its step line */
};

struct o_rec { /* commit awaiting ST_INV/ST_UPDATE, or EVICT awaiting */
	bool used, evict, rmo, acked;
	unsigned strand, bank;
	uint64_t line;
	uint32_t await;   /* cores still to send ST_INV / EVICT_INV */
	bool await_update;
	uint8_t blk[8];
	uint32_t blktag[8];
	uint64_t seq;
};

struct oracle {
	struct gen_config cfg;
	unsigned nstrands;
	uint64_t cbytes;
	uint8_t *mem, *io;
	uint32_t *l1p;
	uint8_t *l1d;
	uint32_t *mtag, *l1tag; /* writer tags of memory and L1 bytes */
	uint32_t wseq;          /* last writer tag handed out */
	struct o_strand *s;
	struct o_rec *rec;
	uint64_t recseq;
	uint64_t events, steps, last_ts;
	uint64_t by_code[MSR_CODE_LIMIT];
	unsigned last_sstep;
	struct oracle_finding f[ORACLE_MAX_FINDINGS];
	unsigned nf, nf_total;
	void (*step_hook)(void *, const struct gen_step *);
	void *step_ctx;
	void (*ev_hook)(void *, const struct msr_event *);
	void *ev_ctx;
};

static void finding(struct oracle *o, const char *kind, unsigned strand,
		    uint64_t pa)
{
	o->nf_total++;
	if (o->nf == ORACLE_MAX_FINDINGS)
		return;
	snprintf(o->f[o->nf].kind, sizeof(o->f[o->nf].kind), "%s", kind);
	o->f[o->nf].strand = strand;
	o->f[o->nf].iseq = strand < o->nstrands ? o->s[strand].iseq + 1 : 0;
	o->f[o->nf].pa = pa;
	o->f[o->nf].event = o->events;
	o->nf++;
}

struct oracle *oracle_new(const struct gen_config *cfg)
{
	struct oracle *o = calloc(1, sizeof(*o));

	o->cfg = *cfg;
	o->nstrands = cfg->cores * cfg->threads;
	o->cbytes = cfg->footprint + GEN_FAULT_BYTES + GEN_SLAM_BYTES;
	o->mem = calloc(o->cbytes, 1);
	o->io = calloc(GEN_IO_BYTES, 1);
	o->l1p = calloc(o->cbytes / 16, sizeof(uint32_t));
	o->l1d = calloc(o->cbytes / 16 * cfg->cores, 16);
	o->mtag = calloc(o->cbytes, sizeof(uint32_t));
	o->l1tag = calloc(o->cbytes * cfg->cores, sizeof(uint32_t));
	o->s = calloc(o->nstrands, sizeof(*o->s));
	o->rec = calloc(MAXREC, sizeof(*o->rec));
	return o;
}

void oracle_free(struct oracle *o)
{
	if (!o)
		return;
	free(o->mem);
	free(o->io);
	free(o->l1p);
	free(o->l1d);
	free(o->mtag);
	free(o->l1tag);
	free(o->s);
	free(o->rec);
	free(o);
}

static int init_word(void *ctx, uint64_t pa, const uint8_t w[8],
		     struct msr_error *err)
{
	struct oracle *o = ctx;

	(void)err;
	if (pa >= GEN_IO_BASE)
		memcpy(o->io + (pa - GEN_IO_BASE), w, 8);
	else
		memcpy(o->mem + (pa - GEN_POOL_BASE), w, 8);
	return MSR_OK;
}

void oracle_init_memory(struct oracle *o, const struct gen_model *m)
{
	gen_model_foreach_initial(m, init_word, o, NULL);
}

static uint8_t *memp(struct oracle *o, uint64_t pa)
{
	if (pa >= GEN_IO_BASE && pa < GEN_IO_BASE + GEN_IO_BYTES)
		return o->io + (pa - GEN_IO_BASE);
	if (pa >= GEN_POOL_BASE && pa < GEN_POOL_BASE + o->cbytes)
		return o->mem + (pa - GEN_POOL_BASE);
	return NULL;
}

static uint8_t *l1(struct oracle *o, unsigned core, uint64_t pa)
{
	uint64_t line = (pa - GEN_POOL_BASE) >> 4;

	return o->l1d + ((uint64_t)core * (o->cbytes / 16) + line) * 16;
}

static uint32_t *l1p(struct oracle *o, uint64_t pa)
{
	return &o->l1p[(pa - GEN_POOL_BASE) >> 4];
}

static uint32_t *mtagp(struct oracle *o, uint64_t pa)
{
	return o->mtag + (pa - GEN_POOL_BASE);
}

static uint32_t *l1tagp(struct oracle *o, unsigned core, uint64_t pa)
{
	return o->l1tag + (uint64_t)core * o->cbytes + (pa - GEN_POOL_BASE);
}

static bool cacheable(const struct oracle *o, uint64_t pa)
{
	return pa >= GEN_POOL_BASE && pa < GEN_POOL_BASE + o->cbytes;
}

/*
 * Coherence (CoRR, CoWR): a strand never reads a byte written before the
 * newest write to it that it has already seen or made itself.
 */
static struct o_floor *floor_of(struct o_strand *s, uint64_t pa8, bool make)
{
	struct o_floor *f = &s->floor[(pa8 >> 3) % FLOORS];

	if (f->pa8 == pa8)
		return f;
	if (!make)
		return NULL;
	memset(f, 0, sizeof(*f));
	f->pa8 = pa8;
	return f;
}

static void floor_raise(struct oracle *o, unsigned strand, uint64_t pa,
			uint32_t tag, bool check)
{
	struct o_floor *f = floor_of(&o->s[strand], pa & ~7ull, true);
	uint32_t *t = &f->t[pa & 7];

	if (check && tag < *t) {
		if (getenv("MSR_ORACLE_DEBUG"))
			fprintf(stderr, "COH strand=%u pa=0x%llx tag=%u floor=%u\n",
				strand, (unsigned long long)pa, tag, *t);
		finding(o, "coherence", strand, pa);
	}
	if (tag > *t)
		*t = tag;
}

static unsigned core_of(const struct oracle *o, unsigned strand)
{
	return strand / o->cfg.threads;
}

/* ---------------------------------------------------------------- */
/* loads                                                             */
/* ---------------------------------------------------------------- */

static unsigned load_bytes(const struct msr_event *ev)
{
	switch (ev->itype) {
	case MSR_IT_BLOCK_LOAD: return 64;
	case MSR_IT_QUAD_LOAD: return 16;
	case MSR_IT_DOUBLE_LOAD: return 8;
	default: return 1u << ev->size;
	}
}

static void on_ld_issue(struct oracle *o, const struct msr_event *ev)
{
	struct o_strand *s = &o->s[ev->tnum];
	struct o_load *l = &s->ld[(s->ld_head + s->ld_n) % RING];

	memset(l, 0, sizeof(*l));
	l->pa = ev->pa;
	l->itype = ev->itype;
	l->bytes = load_bytes(ev);
	l->need = ev->itype == MSR_IT_BLOCK_LOAD ? 4 : 1;
	s->ld_n++;
}

/* Youngest live store of the strand overlapping [pa, pa+n): full cover? */
static struct o_store *find_cover(struct o_strand *s, uint64_t pa, unsigned n,
				  bool *full)
{
	for (unsigned k = s->st_n; k-- > 0;) {
		struct o_store *e = &s->st[(s->st_head + k) % RING];
		uint64_t p8 = e->pa & ~7ull;
		uint8_t lm = 0;

		if (e->acked && e->committed)
			continue;
		for (unsigned b = 0; b < 8; b++)
			if (p8 + b >= pa && p8 + b < pa + n)
				lm |= (uint8_t)(0x80u >> b);
		if (!(lm & e->bmask))
			continue;
		*full = (e->bmask & lm) == lm && (pa & ~7ull) == p8 &&
			((pa + n - 1) & ~7ull) == p8 && e->itype == MSR_IT_STORE;
		return e;
	}
	*full = false;
	return NULL;
}

static void on_ld_data(struct oracle *o, const struct msr_event *ev)
{
	struct o_strand *s = &o->s[ev->tnum];
	struct o_load *l = NULL;
	unsigned core = core_of(o, ev->tnum);

	for (unsigned k = 0; k < s->ld_n && !l; k++) {
		struct o_load *c = &s->ld[(s->ld_head + k) % RING];

		if (c->got < c->need)
			l = c;
	}
	if (!l || ev->pa < l->pa || ev->pa >= l->pa + l->bytes) {
		finding(o, "unmatched-ld-data", ev->tnum, ev->pa);
		return;
	}
	if (ev->dsrc == MSR_DSRC_L2) {
		unsigned n = l->itype == MSR_IT_BLOCK_LOAD ? 16 : l->bytes;

		memcpy(l->value + (ev->pa - l->pa), memp(o, ev->pa), n);
		if (ev->pa < GEN_IO_BASE) {
			memcpy(l->line, memp(o, ev->pa & ~15ull), 16);
			memcpy(l->tag + (ev->pa - l->pa), mtagp(o, ev->pa),
			       n * sizeof(uint32_t));
			memcpy(l->linetag, mtagp(o, ev->pa & ~15ull),
			       sizeof(l->linetag));
			l->tagged = true;
		}
		l->l2 = true;
	} else if (ev->dsrc == MSR_DSRC_L1) {
		if (!((*l1p(o, ev->pa) >> core) & 1))
			finding(o, "l1-hit-not-present", ev->tnum, ev->pa);
		memcpy(l->value, l1(o, core, ev->pa) + (ev->pa & 15), l->bytes);
		memcpy(l->tag, l1tagp(o, core, ev->pa), l->bytes * sizeof(uint32_t));
		l->tagged = true;
	} else {
		bool full;
		struct o_store *e = find_cover(s, l->pa, l->bytes, &full);

		if (!e || !full)
			finding(o, "bypass-not-covered", ev->tnum, ev->pa);
		else
			memcpy(l->value, e->data + (l->pa & 7), l->bytes);
	}
	l->got++;
}

static void apply_fill(struct oracle *o, unsigned strand, const struct o_load *l,
		       const struct msr_event *ev)
{
	unsigned core = core_of(o, strand);

	if ((ev->pa & ~15ull) != (l->pa & ~15ull))
		finding(o, "address-mismatch", strand, ev->pa);
	memcpy(l1(o, core, l->pa), l->line, 16);
	memcpy(l1tagp(o, core, l->pa & ~15ull), l->linetag, sizeof(l->linetag));
	*l1p(o, l->pa) |= 1u << core;
}

static void on_ld_fill(struct oracle *o, const struct msr_event *ev)
{
	struct o_strand *s = &o->s[ev->tnum];

	if (s->has_fillwait) {
		apply_fill(o, ev->tnum, &s->fillwait, ev);
		s->has_fillwait = false;
		return;
	}
	if (s->ld_n) {
		struct o_load *l = &s->ld[s->ld_head % RING];

		if (l->got == l->need && l->l2 && l->pa < GEN_IO_BASE &&
		    (l->itype == MSR_IT_LOAD || l->itype == MSR_IT_DOUBLE_LOAD ||
		     l->itype == MSR_IT_QUAD_LOAD)) {
			apply_fill(o, ev->tnum, l, ev);
			l->filled = true;
			return;
		}
	}
	finding(o, "unmatched-ld-fill", ev->tnum, ev->pa);
}

/* ---------------------------------------------------------------- */
/* stores                                                            */
/* ---------------------------------------------------------------- */

static bool is_rmo(unsigned itype)
{
	return itype == MSR_IT_BLOCK_STORE || itype == MSR_IT_BLK_INIT_ST;
}

static void on_st_issue(struct oracle *o, const struct msr_event *ev)
{
	struct o_strand *s = &o->s[ev->tnum];
	struct o_store *e = &s->st[(s->st_head + s->st_n) % RING];

	memset(e, 0, sizeof(*e));
	e->pa = ev->pa;
	for (int b = 0; b < 8; b++)
		e->data[b] = (uint8_t)(ev->data >> (8 * (7 - b)));
	e->bmask = ev->bmask;
	e->itype = ev->itype;
	s->st_n++;
}

static void st_trim(struct o_strand *s)
{
	while (s->st_n && s->st[s->st_head % RING].committed &&
	       s->st[s->st_head % RING].acked) {
		s->st_head++;
		s->st_n--;
	}
}

static struct o_rec *new_rec(struct oracle *o)
{
	for (unsigned i = 0; i < MAXREC; i++)
		if (!o->rec[i].used) {
			memset(&o->rec[i], 0, sizeof(o->rec[i]));
			o->rec[i].used = true;
			o->rec[i].seq = o->recseq++;
			return &o->rec[i];
		}
	return NULL;
}

static void rec_gc(struct o_rec *r)
{
	if (!r->await && !r->await_update && (r->acked || r->evict))
		r->used = false;
}

static void on_commit(struct oracle *o, const struct msr_event *ev)
{
	struct o_strand *s = &o->s[ev->tnum];
	struct o_store *e = NULL, *older = NULL;
	unsigned own = core_of(o, ev->tnum);
	uint8_t *m;
	struct o_rec *r;

	for (unsigned k = 0; k < s->st_n; k++) {
		struct o_store *c = &s->st[(s->st_head + k) % RING];

		if (c->committed)
			continue;
		if ((c->pa & ~7ull) == (ev->pa & ~7ull)) {
			e = c;
			break;
		}
		if (!is_rmo(c->itype) && !older)
			older = c;
	}
	if (!e) {
		finding(o, "unmatched-st-commit", ev->tnum, ev->pa);
		return;
	}
	if (older && !is_rmo(e->itype))
		finding(o, "order:store-order", ev->tnum, ev->pa);
	e->committed = true;
	m = memp(o, ev->pa & ~7ull);
	o->wseq++;
	if (e->itype == MSR_IT_BLK_INIT_ST && !ev->l2hit) {
		uint64_t base = ev->pa & ~63ull;

		memset(memp(o, base), 0, 64);
		for (unsigned b = 0; b < 64; b++) {
			*mtagp(o, base + b) = o->wseq;
			floor_raise(o, ev->tnum, base + b, o->wseq, false);
		}
	}
	e->wtag = o->wseq;
	e->cmask = ev->bmask;
	for (unsigned b = 0; b < 8; b++)
		if (ev->bmask & (0x80u >> b)) {
			m[b] = e->data[b];
			*mtagp(o, (ev->pa & ~7ull) + b) = o->wseq;
			/* an atomic's own read comes before its write: its floor
			 * rises when it executes */
			if (e->itype != MSR_IT_ATOMIC)
				floor_raise(o, ev->tnum, (ev->pa & ~7ull) + b,
					    o->wseq, false);
		}
	r = new_rec(o);
	if (r) {
		r->strand = ev->tnum;
		r->line = ev->pa & ~15ull;
		r->rmo = is_rmo(e->itype);
		r->acked = e->acked || r->rmo; /* RMO acks carry no identity */
		r->await = ev->invvec & ~(1u << own);
		r->await_update = (ev->invvec >> own) & 1;
		memcpy(r->blk, m, 8);
		memcpy(r->blktag, mtagp(o, ev->pa & ~7ull), sizeof(r->blktag));
		rec_gc(r);
	}
	st_trim(s);
}

static struct o_rec *oldest_rec(struct oracle *o, unsigned strand,
				uint64_t line, int cid)
{
	struct o_rec *best = NULL;

	for (unsigned i = 0; i < MAXREC; i++) {
		struct o_rec *r = &o->rec[i];

		if (!r->used || r->evict || r->strand != strand || r->line != line)
			continue;
		if (cid >= 0 ? !((r->await >> cid) & 1) : !r->await_update)
			continue;
		if (!best || r->seq < best->seq)
			best = r;
	}
	return best;
}

static void mark_rec_acked(struct oracle *o, unsigned strand)
{
	struct o_rec *best = NULL;

	for (unsigned i = 0; i < MAXREC; i++) {
		struct o_rec *r = &o->rec[i];

		if (r->used && !r->evict && !r->rmo && !r->acked &&
		    r->strand == strand && (!best || r->seq < best->seq))
			best = r;
	}
	if (best) {
		best->acked = true;
		rec_gc(best);
	}
}

static void on_ack(struct oracle *o, const struct msr_event *ev)
{
	struct o_strand *s = &o->s[ev->tnum];

	for (unsigned k = 0; k < s->st_n; k++) {
		struct o_store *c = &s->st[(s->st_head + k) % RING];
		bool rmo = is_rmo(c->itype);

		if (c->acked || rmo != (bool)ev->rmo || (!rmo && !c->committed))
			continue;
		c->acked = true;
		if (!rmo)
			mark_rec_acked(o, ev->tnum);
		st_trim(s);
		return;
	}
	finding(o, "unmatched-st-ack", ev->tnum, 0);
}

static void on_inv(struct oracle *o, const struct msr_event *ev, bool update)
{
	unsigned core = update ? core_of(o, ev->tnum) : ev->cid;
	struct o_rec *r = oldest_rec(o, ev->tnum, ev->pa & ~15ull,
				     update ? -1 : (int)ev->cid);

	if (!r) {
		finding(o, update ? "unmatched-st-update" : "unmatched-st-inv",
			ev->tnum, ev->pa);
		return;
	}
	if (!r->rmo && !r->acked)
		finding(o, "order:inv-before-ack", ev->tnum, ev->pa);
	if (update) {
		r->await_update = false;
		if ((*l1p(o, ev->pa) >> core) & 1) {
			memcpy(l1(o, core, ev->pa) + (ev->pa & 8), r->blk, 8);
			memcpy(l1tagp(o, core, ev->pa & ~7ull), r->blktag,
			       sizeof(r->blktag));
		}
	} else {
		r->await &= ~(1u << core);
		*l1p(o, ev->pa) &= ~(1u << core);
	}
	rec_gc(r);
}

/* ---------------------------------------------------------------- */
/* system events                                                     */
/* ---------------------------------------------------------------- */

static void on_evict(struct oracle *o, const struct msr_event *ev)
{
	struct o_rec *r = new_rec(o);

	if (!r)
		return;
	r->evict = true;
	r->line = ev->pa;
	r->bank = (unsigned)((ev->pa >> 6) & 7);
	r->await = ev->invvec;
	rec_gc(r);
}

static void on_evict_inv(struct oracle *o, const struct msr_event *ev)
{
	struct o_rec *best = NULL;

	for (unsigned i = 0; i < MAXREC; i++) {
		struct o_rec *r = &o->rec[i];

		if (r->used && r->evict && r->bank == ev->bank &&
		    ((r->await >> ev->cid) & 1) && (!best || r->seq < best->seq))
			best = r;
	}
	if (!best) {
		finding(o, "unmatched-evict-inv", 0, 0);
		return;
	}
	best->await &= ~(1u << ev->cid);
	*l1p(o, best->line) &= ~(1u << ev->cid);
	rec_gc(best);
}

static void write_masked(struct oracle *o, const struct msr_event *ev)
{
	uint8_t *m = memp(o, ev->pa & ~7ull);

	o->wseq++;
	for (unsigned b = 0; b < 8; b++)
		if (ev->bmask & (0x80u >> b)) {
			m[b] = (uint8_t)(ev->data >> (8 * (7 - b)));
			*mtagp(o, (ev->pa & ~7ull) + b) = o->wseq;
		}
}

static void on_pop(struct oracle *o, const struct msr_event *ev, bool store)
{
	struct o_strand *s = &o->s[ev->tnum];

	if (store ? !s->st_n : !s->ld_n) {
		finding(o, "pop-empty", ev->tnum, 0);
		return;
	}
	if (store)
		s->st_n--;
	else
		s->ld_n--;
}

int oracle_event(void *ctx, const struct msr_event *ev, struct msr_error *err)
{
	struct oracle *o = ctx;

	(void)err;
	if (o->ev_hook)
		o->ev_hook(o->ev_ctx, ev);
	if (ev->index != o->events)
		finding(o, "order:index", ev->tnum, ev->index);
	if (ev->code != MSR_LD_POP && ev->code != MSR_ST_POP &&
	    ev->code != MSR_SSTEP && ev->code != MSR_MEM_CHECK &&
	    msr_msgdef_get(ev->code) && msr_msgdef_get(ev->code)->memory) {
		if (ev->ts < o->last_ts)
			finding(o, "order:ts", ev->tnum, ev->ts);
		o->last_ts = ev->ts;
	}
	if (getenv("MSR_ORACLE_DEBUG")) {
		char b[MSR_EVENT_TEXT_MAX];

		msr_event_format_text(ev, b, sizeof(b));
		fprintf(stderr, "%llu %s\n", (unsigned long long)ev->index, b);
	}
	o->by_code[ev->code < MSR_CODE_LIMIT ? ev->code : 0]++;
	switch (ev->code) {
	case MSR_LD_ISSUE: on_ld_issue(o, ev); break;
	case MSR_LD_DATA: on_ld_data(o, ev); break;
	case MSR_LD_FILL: on_ld_fill(o, ev); break;
	case MSR_ST_ISSUE: on_st_issue(o, ev); break;
	case MSR_ST_COMMIT: on_commit(o, ev); break;
	case MSR_ST_ACK: on_ack(o, ev); break;
	case MSR_ST_INV: on_inv(o, ev, false); break;
	case MSR_ST_UPDATE: on_inv(o, ev, true); break;
	case MSR_EVICT: on_evict(o, ev); break;
	case MSR_EVICT_INV: on_evict_inv(o, ev); break;
	case MSR_DMA_ST: case MSR_MEM_SLAM: write_masked(o, ev); break;
	case MSR_MEM_CHECK:
		if (memcmp(memp(o, ev->pa), ev->bytes, 64))
			finding(o, "mem-check", 0, ev->pa);
		break;
	case MSR_LD_POP: on_pop(o, ev, false); break;
	case MSR_ST_POP: on_pop(o, ev, true); break;
	case MSR_SSTEP:
		if (o->s[o->last_sstep].stepped_pending)
			finding(o, "order:step-line-missing", o->last_sstep, 0);
		o->s[ev->tnum].stepped_pending = true;
		o->last_sstep = ev->tnum;
		break;
	default: break;
	}
	o->events++;
	return MSR_OK;
}

/* ---------------------------------------------------------------- */
/* steps                                                             */
/* ---------------------------------------------------------------- */

static bool load_op(unsigned op)
{
	return op == MSR_STEP_LD || op == MSR_STEP_LDD || op == MSR_STEP_LDQ ||
	       op == MSR_STEP_LDBLK || op == MSR_STEP_CAS ||
	       op == MSR_STEP_SWAP || op == MSR_STEP_LDSTUB;
}

static void step_load(struct oracle *o, struct o_strand *s,
		      const struct gen_step *st)
{
	struct o_load *l = &s->ld[s->ld_head % RING];

	if (!s->ld_n || l->got < l->need) {
		finding(o, "data-not-ready", st->tnum, st->pa);
		return;
	}
	if (l->pa != st->pa || l->bytes != st->size)
		finding(o, "address-mismatch", st->tnum, st->pa);
	else if ((st->has & MSR_STEP_HAS_LD) && memcmp(l->value, st->ld, st->size))
		finding(o, "load-value", st->tnum, st->pa);
	if (l->tagged && cacheable(o, l->pa))
		for (unsigned b = 0; b < l->bytes; b++)
			floor_raise(o, st->tnum, l->pa + b, l->tag[b], true);
	if (l->l2 && !l->filled && l->pa < GEN_IO_BASE &&
	    (l->itype == MSR_IT_LOAD || l->itype == MSR_IT_DOUBLE_LOAD ||
	     l->itype == MSR_IT_QUAD_LOAD)) {
		s->fillwait = *l;
		s->has_fillwait = true;
	}
	s->ld_head++;
	s->ld_n--;
}

static void step_store(struct oracle *o, struct o_strand *s,
		       const struct gen_step *st)
{
	unsigned n = st->op == MSR_STEP_STBLK ? 8 : 1, done = 0;

	for (unsigned k = 0; k < s->st_n && done < n; k++) {
		struct o_store *e = &s->st[(s->st_head + k) % RING];
		uint64_t pa = st->pa + 8 * done;
		unsigned len = n == 8 ? 8 : st->size;

		if (e->stepped)
			continue;
		e->stepped = true;
		if (e->itype == MSR_IT_ATOMIC && e->committed)
			for (unsigned b = 0; b < 8; b++)
				if (e->cmask & (0x80u >> b))
					floor_raise(o, st->tnum, (e->pa & ~7ull) + b,
						    e->wtag, false);
		if ((st->has & MSR_STEP_HAS_ST) &&
		    (e->pa != (n == 8 ? pa : st->pa) ||
		     memcmp(e->data + (e->pa & 7), st->st + 8 * done, len)))
			finding(o, "store-data", st->tnum, st->pa);
		done++;
	}
	if (done < n)
		finding(o, "step-kind-mismatch", st->tnum, st->pa);
}

int oracle_step(void *ctx, const struct gen_step *st, struct msr_error *err)
{
	struct oracle *o = ctx;
	struct o_strand *s = &o->s[st->tnum];

	(void)err;
	if (!s->stepped_pending || st->tnum != o->last_sstep)
		finding(o, "order:step-without-sstep", st->tnum, st->pa);
	s->stepped_pending = false;
	if (getenv("MSR_ORACLE_DEBUG")) {
		char b[GEN_STEP_LINE_MAX];

		fwrite(b, 1, gen_step_format(st, b, sizeof(b)), stderr);
	}
	if (o->step_hook)
		o->step_hook(o->step_ctx, st);
	if (load_op(st->op))
		step_load(o, s, st);
	if (st->op == MSR_STEP_ST || st->op == MSR_STEP_STBLK ||
	    st->op == MSR_STEP_STBI || st->op == MSR_STEP_CAS ||
	    st->op == MSR_STEP_SWAP || st->op == MSR_STEP_LDSTUB)
		step_store(o, s, st);
	s->iseq++;
	o->steps++;
	return MSR_OK;
}

void oracle_finish(struct oracle *o)
{
	for (unsigned i = 0; i < o->nstrands; i++) {
		struct o_strand *s = &o->s[i];

		if (s->ld_n || s->st_n || s->has_fillwait || s->stepped_pending)
			finding(o, "leftover", i, 0);
	}
	for (unsigned i = 0; i < MAXREC; i++)
		if (o->rec[i].used)
			finding(o, "leftover", o->rec[i].strand, o->rec[i].line);
}

unsigned oracle_nfindings(const struct oracle *o) { return o->nf_total; }

const struct oracle_finding *oracle_finding_at(const struct oracle *o, unsigned i)
{
	return i < o->nf ? &o->f[i] : NULL;
}

unsigned oracle_count(const struct oracle *o, const char *kind)
{
	unsigned n = 0;

	for (unsigned i = 0; i < o->nf; i++)
		n += !strcmp(o->f[i].kind, kind);
	return n;
}

uint64_t oracle_events(const struct oracle *o) { return o->events; }
uint64_t oracle_steps(const struct oracle *o) { return o->steps; }
uint64_t oracle_code_count(const struct oracle *o, unsigned code)
{
	return code < MSR_CODE_LIMIT ? o->by_code[code] : 0;
}

void oracle_set_step_hook(struct oracle *o,
			  void (*fn)(void *ctx, const struct gen_step *st),
			  void *ctx)
{
	o->step_hook = fn;
	o->step_ctx = ctx;
}

void oracle_set_event_hook(struct oracle *o,
			   void (*fn)(void *ctx, const struct msr_event *ev),
			   void *ctx)
{
	o->ev_hook = fn;
	o->ev_ctx = ctx;
}
