/*
 * step.c - playing the ISS step log (semantics.md section 4): on each SSTEP
 * the strand's next step line executes the oldest issued instruction of the
 * strand; loads are formed from their captured data and compared with `ld=`,
 * stores are compared with `st=`, and one msr_op per executed memory
 * instruction goes to the sink with its per-byte read-from sources.
 *
 * Memory is never written here (commits do that). Also reports what is
 * left in a strand's buffers at the end of a complete trace.
 */
#include "engine-internal.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static uint8_t byte_mask(unsigned off, unsigned n)
{
	unsigned end = off + n > 8 ? 8 : off + n;

	return (uint8_t)((0xffu >> off) & ~(0xffu >> end));
}

/* Whether the first n (<= 8) bytes of a and b differ; both hold 8. */
static bool differ8(const uint8_t *a, const uint8_t *b, unsigned n)
{
#if defined(__BYTE_ORDER__) && (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ || \
				__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
	uint64_t x, y, keep;

	memcpy(&x, a, 8);
	memcpy(&y, b, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	keep = n >= 8 ? ~0ULL : (1ULL << (8 * n)) - 1;
#else
	keep = n >= 8 ? ~0ULL : ~(~0ULL >> (8 * n));
#endif
	return ((x ^ y) & keep) != 0;
#else
	return memcmp(a, b, n) != 0;
#endif
}

/* Bytes in an 8-bit mask (no libgcc call without -mpopcnt). */
static unsigned pop8(unsigned m)
{
	static const uint8_t n4[16] = {0, 1, 1, 2, 1, 2, 2, 3,
				       1, 2, 2, 3, 2, 3, 3, 4};

	return n4[m & 15] + n4[(m >> 4) & 15];
}

static const char *const op_names[MSR_STEP_OP_COUNT] = {
	"nop", "ld", "ldd", "ldq", "ldblk", "st", "stblk", "stbi",
	"cas", "swap", "ldstub", "membar", "prefetch",
};

static const char *const itype_names[MSR_IT_COUNT] = {
	"NONE", "LOAD", "BLOCK_LOAD", "DOUBLE_LOAD", "QUAD_LOAD",
	"PREFETCH", "STORE", "BLOCK_STORE", "ATOMIC", "BLK_INIT_ST",
};

static const char *itname(unsigned it)
{
	return it < MSR_IT_COUNT ? itype_names[it] : "?";
}

/* One rf run of bytes `mask` read from source `s`; only commits and
 * bypasses name a strand. */
static inline void rf_from_src(struct msr_rf *f, const struct msr_src *s, uint8_t mask)
{
	f->kind = s->kind;
	f->mask = mask;
	f->strand = s->kind == MSR_RF_COMMIT || s->kind == MSR_RF_BYPASS ? s->strand : 0;
	f->placed = 0;
	f->sseq = s->sseq;
	f->co = s->co;
}

/* Per-byte sources of one block -> disjoint rf runs (first-seen order).
 * Sources compare by their two words: equal words <=> equal fields. */
static void fill_rf(struct msr_op_block *b, const struct msr_src src[8])
{
	uint64_t w[8][2];
	unsigned n = 0;

	if (b->mask) {
		/* usually one source supplies every byte: one run */
		unsigned i0 = (unsigned)__builtin_clz(b->mask) - 24;
		unsigned m = b->mask & ~(0x80u >> i0);
		bool one = true;

		memcpy(w[0], &src[i0], sizeof(w[0]));
		for (; m && one; m &= m - 1) {
			uint64_t a[2];

			memcpy(a, &src[7 - __builtin_ctz(m)], sizeof(a));
			one = a[0] == w[0][0] && a[1] == w[0][1];
		}
		if (one) {
			rf_from_src(&b->rf[0], &src[i0], b->mask);
			b->nrf = 1;
			return;
		}
	}
	/* byte order: bit 7 = byte 0 first; runs of a source are usually
	 * adjacent bytes, so try the previous byte's run first */
	for (unsigned m = b->mask, i, r = 0; m; m &= ~(0x80u >> i)) {
		uint64_t a[2];

		i = (unsigned)__builtin_clz(m) - 24;
		memcpy(a, &src[i], sizeof(a));
		if (!n || w[r][0] != a[0] || w[r][1] != a[1])
			for (r = 0; r < n; r++)
				if (w[r][0] == a[0] && w[r][1] == a[1])
					break;
		if (r == n) {
			w[r][0] = a[0];
			w[r][1] = a[1];
			rf_from_src(&b->rf[r], &src[i], 0);
			n++;
		}
		b->rf[r].mask |= (uint8_t)(0x80u >> i);
	}
	b->nrf = (uint8_t)n;
}

/* fill_rf from a load entry's sources: one run without expanding them
 * when one of its inline sources supplies every accessed byte. */
static void ld_fill_rf(struct msr_op_block *b, const struct ld_ent *x)
{
	const struct msr_src *s = NULL;
	struct msr_src src[8];

	if (x->src_pb) {
		fill_rf(b, x->src);
		return;
	}
	if (b->mask && !(b->mask & (x->src_zm | x->src_m2)))
		s = &x->src[0];
	else if (b->mask && !(b->mask & (uint8_t)~x->src_m2))
		s = &x->src[1];
	if (s) {
		struct msr_rf *f = &b->rf[0];

		f->kind = s->kind;
		f->mask = b->mask;
		f->strand = s->kind == MSR_RF_COMMIT || s->kind == MSR_RF_BYPASS
				    ? s->strand : 0;
		f->placed = 0;
		f->sseq = s->sseq;
		f->co = s->co;
		b->nrf = 1;
		return;
	}
	for (unsigned i = 0; i < 8; i++)
		src[i] = *msr_ld_src(x, i);
	fill_rf(b, src);
}

static bool has_unexecuted_store(struct strand *s)
{
	for (uint64_t q = s->st_exec_cur; q < s->st.tail; q++) {
		struct st_ent *se = msr_ring_at(&s->st, q);

		if (!(se->flags & (STF_EXEC | STF_POPPED)))
			return true;
	}
	return false;
}

static bool has_unexecuted_load(struct strand *s)
{
	for (uint64_t q = s->ld_exec_cur; q < s->ld.tail; q++) {
		struct ld_ent *le = msr_ring_at(&s->ld, q);

		if (!(le->flags & (LDF_EXEC | LDF_POPPED)))
			return true;
	}
	return false;
}

static struct ld_ent *oldest_load(struct msr_engine *e, struct strand *s,
				  const struct msr_step *st, uint64_t *seq)
{
	struct ld_ent *first = NULL, *io;
	uint64_t q;

	while (s->ld_exec_cur < s->ld.tail) {
		struct ld_ent *le = msr_ring_at(&s->ld, s->ld_exec_cur);

		if (!(le->flags & (LDF_EXEC | LDF_POPPED)))
			break;
		s->ld_exec_cur++;
	}
	for (q = s->ld_exec_cur; q < s->ld.tail && !first; q++) {
		struct ld_ent *le = msr_ring_at(&s->ld, q);

		e->st.bind_steps++;
		if (!(le->flags & (LDF_EXEC | LDF_POPPED)) && le->group == q) {
			first = le;
			*seq = q;
		}
	}
	/* I/O loads may execute by address; others in order */
	if (!first || !(st->pa & MSR_IO_BIT) || first->pa == st->pa)
		return first;
	io = msr_eng_ld_io(e, s, st->pa, &q);
	if (io)
		*seq = q;
	return io ? io : first;
}

static uint8_t want_load_itype(unsigned op)
{
	switch (op) {
	case MSR_STEP_LD:
		return MSR_IT_LOAD;
	case MSR_STEP_LDD:
		return MSR_IT_DOUBLE_LOAD;
	case MSR_STEP_LDQ:
		return MSR_IT_QUAD_LOAD;
	case MSR_STEP_LDBLK:
		return MSR_IT_BLOCK_LOAD;
	default:
		return MSR_IT_ATOMIC;
	}
}

static uint8_t want_store_itype(unsigned op)
{
	switch (op) {
	case MSR_STEP_ST:
		return MSR_IT_STORE;
	case MSR_STEP_STBLK:
		return MSR_IT_BLOCK_STORE;
	case MSR_STEP_STBI:
		return MSR_IT_BLK_INIT_ST;
	default:
		return MSR_IT_ATOMIC;
	}
}

static void kind_mismatch(struct msr_engine *e, unsigned t, uint64_t iseq,
			  const struct msr_step *st, const char *what)
{
	msr_eng_report(e, MSR_V_STEP_KIND_MISMATCH, (int)t, iseq, st->pa,
		       st->size,
		       "strand %u executed instruction %llu as %s (step-log line %llu), but %s",
		       t, (unsigned long long)iseq,
		       st->op < MSR_STEP_OP_COUNT ? op_names[st->op] : "?",
		       (unsigned long long)st->line, what);
}

/* Describe where a value came from, for messages. */
static void src_words(struct msr_engine *e, const struct msr_src *s,
		      char *buf, size_t size)
{
	struct msr_store_ref r;

	switch (s->kind) {
	case MSR_RF_COMMIT:
	case MSR_RF_BYPASS:
		msr_eng_store_ref(e, s, &r);
		snprintf(buf, size, "store #%llu of strand %u%s",
			 (unsigned long long)s->sseq, s->strand,
			 s->kind == MSR_RF_BYPASS ? " (store buffer)" : "");
		break;
	case MSR_RF_DMA:
		snprintf(buf, size, "a DMA or back-door write");
		break;
	default:
		snprintf(buf, size, "initial memory");
		break;
	}
}

/* The newest commit in pa8's history whose image matches `obs` on `mask`. */
static const struct chist *find_observed(struct msr_engine *e, uint64_t pa8,
					 const uint8_t obs[8], uint8_t mask)
{
	struct blk *b = msr_mem_blk(e, pa8, false);
	uint64_t co = b ? b->last_co : 0;

	for (unsigned n = 0; co && n < MSR_OBSERVED_SEARCH; n++) {
		const struct chist *h = msr_hist_get(e, co);

		e->st.bind_steps++;
		if (!h || h->pa8 != pa8)
			return NULL;
		if ((h->mask & mask) && !msr_bytes_differ(h->data, obs, mask))
			return h;
		co = h->prev_co;
	}
	return NULL;
}

/* The youngest store of the strand still in its rings whose bytes cover
 * `mask` with the observed values (a wrong bypass names it), or 0. The
 * block's chain holds all of them; like find_observed, it looks at most
 * MSR_OBSERVED_SEARCH back, since behind a lost invalidation a strand may
 * have tens of thousands of stores in flight. */
static uint64_t find_own_store(struct msr_engine *e, struct strand *s,
			       uint64_t pa8, const uint8_t obs[8], uint8_t mask)
{
	uint64_t q = msr_eng_st_youngest(s, pa8);

	for (unsigned n = 0; q >= s->st.head && n < MSR_OBSERVED_SEARCH; n++) {
		struct st_ent *se = msr_ring_at(&s->st, q);

		e->st.bind_steps++;
		if (!se)
			return 0;
		if (!(se->flags & STF_POPPED) && (se->bmask & mask) == mask &&
		    !msr_bytes_differ(se->data, obs, mask))
			return q;
		q = msr_chain_older(q, &se->link);
	}
	return 0;
}

struct ld_form {
	struct ld_ent *ent[8];
	unsigned n;
	unsigned acc, off;
	uint8_t val[64], known[64]; /* known[]: only when !all_known */
	bool ready, all_known;
};

static void report_load_value(struct msr_engine *e, unsigned t, uint64_t iseq,
			      const struct msr_step *st, struct ld_form *f,
			      unsigned bad)
{
	struct ld_ent *le = f->ent[(f->off + bad) / 8];
	unsigned bi = (f->off + bad) % 8;
	uint64_t pa8 = le->pa & ~7ULL;
	struct msr_violation v;
	uint8_t obs[8] = {0}, mask = 0;
	const struct chist *h;
	char exp[140], obsw[140], src[100], where[120], extra[120] = "";

	msr_eng_viol_init(e, &v, MSR_V_LOAD_VALUE, (int)t);
	v.iseq = iseq;
	v.pc = st->pc;
	v.pa = f->ent[0]->pa;
	v.size = f->acc;
	v.has_values = true;
	v.vlen = f->acc;
	memcpy(v.expected, f->val, f->acc);
	memcpy(v.observed, st->ld, f->acc);
	v.source = !f->ready ? "memory"
		   : le->dsrc == MSR_DSRC_STB ? "STB"
		   : le->dsrc == MSR_DSRC_L1 ? "L1" : "L2";
	msr_eng_store_ref(e, msr_ld_src(le, bi), &v.expected_from);
	/* the block's bytes of this load, as observed */
	for (unsigned i = 0; i < f->acc; i++) {
		unsigned p = f->off + i;

		if (p / 8 == (f->off + bad) / 8) {
			obs[p % 8] = st->ld[i];
			mask |= (uint8_t)(0x80u >> (p % 8));
		}
	}
	h = find_observed(e, pa8, obs, mask);
	if (h) {
		struct msr_src hs = {h->co, h->sseq, h->strand, MSR_RF_COMMIT};

		msr_eng_store_ref(e, &hs, &v.observed_from);
		snprintf(extra, sizeof(extra),
			 "; the loaded value was written by store #%llu of strand %u (commit co=%llu at cycle %u)",
			 (unsigned long long)h->sseq, h->strand,
			 (unsigned long long)h->co, h->ts);
	} else {
		uint64_t q = find_own_store(e, &e->strands[t], pa8, obs, mask);

		if (q) {
			struct msr_src bs = {0, q, (uint8_t)t, MSR_RF_BYPASS};

			msr_eng_store_ref(e, &bs, &v.observed_from);
			snprintf(extra, sizeof(extra),
				 "; the loaded value is that of store #%llu of strand %u in its store buffer",
				 (unsigned long long)q, t);
		}
	}
	msr_hex(exp, sizeof(exp), f->val, f->acc > 16 ? 16 : f->acc);
	msr_hex(obsw, sizeof(obsw), st->ld, f->acc > 16 ? 16 : f->acc);
	src_words(e, msr_ld_src(le, bi), src, sizeof(src));
	if (!f->ready)
		snprintf(where, sizeof(where), "memory (its data had not arrived)");
	else if (le->dsrc == MSR_DSRC_L1)
		snprintf(where, sizeof(where),
			 "the L1 piece it hit (filled at cycle %u)",
			 le->l1_fill_ts);
	else if (le->dsrc == MSR_DSRC_STB)
		snprintf(where, sizeof(where), "its store-buffer bypass");
	else
		snprintf(where, sizeof(where), "L2 at its data return (cycle %u)",
			 le->data_ts);
	msr_eng_viol_emit(e, &v,
			  "strand %u (core %u, thread %u) loaded %s from 0x%llx at cycle %u, but %s held %s from %s%s",
			  t, t / e->tpc, t % e->tpc, obsw,
			  (unsigned long long)v.pa, le->data_ts, where, exp, src,
			  extra);
}

/* Gather the load's entries and value; false when there is nothing to run. */
static bool ld_gather(struct msr_engine *e, unsigned t, uint64_t iseq,
		      const struct msr_step *st, struct ld_form *f)
{
	struct strand *s = &e->strands[t];
	uint64_t seq = 0;
	struct ld_ent *le = oldest_load(e, s, st, &seq);
	uint8_t want = want_load_itype(st->op);

	if (!le) {
		if (has_unexecuted_store(s) && st->op <= MSR_STEP_LDBLK)
			kind_mismatch(e, t, iseq, st, "the strand's oldest issued instruction is a store, not a load");
		else
			msr_eng_report(e, MSR_V_DATA_NOT_READY, (int)t, iseq,
				       st->pa, st->size,
				       "strand %u executed load instruction %llu at 0x%llx (step-log line %llu), but the strand has no issued load",
				       t, (unsigned long long)iseq,
				       (unsigned long long)st->pa,
				       (unsigned long long)st->line);
		return false;
	}
	f->n = le->nent;
	for (unsigned k = 0; k < f->n; k++) {
		f->ent[k] = msr_ring_at(&s->ld, seq + k);
		if (!f->ent[k] || f->ent[k]->group != seq) {
			f->n = k;
			break;
		}
	}
	if (le->itype != want) {
		char what[120];

		snprintf(what, sizeof(what),
			 "the strand's oldest issued load is a %s", itname(le->itype));
		kind_mismatch(e, t, iseq, st, what);
		for (unsigned k = 0; k < f->n; k++) {
			f->ent[k]->flags |= LDF_EXEC;
			f->ent[k]->iseq = iseq;
		}
		return false;
	}
	f->acc = le->acc;
	f->off = f->n == 1 ? (unsigned)(le->pa & 7) : 0;
	if (f->off + f->acc > 8 * f->n)
		f->acc = 8 * f->n - f->off;
	if (((st->has & MSR_STEP_HAS_PA) && st->pa != le->pa) ||
	    ((st->has & MSR_STEP_HAS_SIZE) && st->size != le->acc))
		msr_eng_report(e, MSR_V_ADDRESS_MISMATCH, (int)t, iseq, st->pa,
			       st->size,
			       "strand %u executed %s of %u bytes at 0x%llx (step-log line %llu), but the RTL issued a %s of %u bytes at 0x%llx",
			       t, op_names[st->op], st->size,
			       (unsigned long long)st->pa,
			       (unsigned long long)st->line, itname(le->itype),
			       le->acc, (unsigned long long)le->pa);
	f->ready = true;
	for (unsigned k = 0; k < f->n; k++) {
		struct ld_ent *x = f->ent[k];

		if (!(x->flags & LDF_DATA)) {
			/* repair: read memory now; a late LD_DATA still binds */
			f->ready = false;
			x->src_pb = msr_mem_read_c(e, x->pa & ~7ULL, x->data,
						   &x->known, x->src,
						   &x->src_zm, &x->src_m2);
			x->dsrc = 0;
		}
	}
	if (!f->ready)
		msr_eng_report(e, MSR_V_DATA_NOT_READY, (int)t, iseq, le->pa,
			       f->acc,
			       "strand %u executed load instruction %llu at 0x%llx (step-log line %llu) before its load data arrived",
			       t, (unsigned long long)iseq,
			       (unsigned long long)le->pa,
			       (unsigned long long)st->line);
	/* the value block by block; per-byte known flags only when some byte
	 * is unknown (rare: first observations) */
	f->all_known = true;
	for (unsigned k = 0; k < f->n && 8 * k < f->off + f->acc; k++) {
		struct ld_ent *x = f->ent[k];
		unsigned lo = k ? 0 : f->off;
		unsigned end = f->off + f->acc - 8 * k;
		unsigned hi = end > 8 ? 8 : end;
		uint8_t need = byte_mask(lo, hi - lo);

		uint8_t tmp[16];

		/* fixed 8-byte copies (inline moves, not a libc call); bytes
		 * past the access are never read */
		memcpy(tmp, x->data, 8);
		memset(tmp + 8, 0, 8);
		memcpy(f->val + 8 * k + lo - f->off, tmp + lo, 8);
		if ((x->known & need) != need)
			f->all_known = false;
	}
	for (unsigned i = 0; !f->all_known && i < f->acc; i++) {
		unsigned p = f->off + i;
		struct ld_ent *x = f->ent[p / 8];

		f->known[i] = (x->known >> (7 - p % 8)) & 1;
	}
	return true;
}

/* Block k of an op, cleared: op_init clears only the op's header, since
 * most ops use one of the eight blocks (~2 KiB to clear per step); the rf
 * runs are written whole by fill_rf, only the first nrf count. */
static struct msr_op_block *op_block(struct msr_op *op, unsigned k)
{
	struct msr_op_block *b = &op->blk[k];

	memset(b, 0, offsetof(struct msr_op_block, rf));
	b->data_event = 0;
	return b;
}

/* Compare with ld=, learn unknown bytes, mark executed, fill op blocks. */
static void ld_finish(struct msr_engine *e, unsigned t, uint64_t iseq,
		      const struct msr_step *st, struct ld_form *f,
		      struct msr_op *op)
{
	bool have = (st->has & MSR_STEP_HAS_LD) && st->ld_len >= f->acc;
	int bad = -1;

	if (have && f->all_known) {
		/* the common case: nothing to learn, one compare */
		if (f->acc <= 8 ? differ8(f->val, st->ld, f->acc)
				: memcmp(f->val, st->ld, f->acc) != 0)
			for (unsigned i = 0; bad < 0; i++)
				if (f->val[i] != st->ld[i])
					bad = (int)i;
		have = false;
	}
	for (unsigned i = 0; have && i < f->acc; i++) {
		unsigned p = f->off + i;
		struct ld_ent *x = f->ent[p / 8];

		if (!f->known[i]) {
			uint8_t d[8] = {0};

			/* first observation of an unknown byte: adopt it */
			d[p % 8] = st->ld[i];
			msr_mem_learn(e, x->pa & ~7ULL, d,
				      (uint8_t)(0x80u >> (p % 8)));
			x->data[p % 8] = st->ld[i];
			x->known |= (uint8_t)(0x80u >> (p % 8));
			f->val[i] = st->ld[i];
		} else if (f->val[i] != st->ld[i] && bad < 0) {
			bad = (int)i;
		}
	}
	if (bad >= 0)
		report_load_value(e, t, iseq, st, f, (unsigned)bad);
	op->pa = f->ent[0]->pa;
	op->size = (uint8_t)(f->acc > 255 ? 255 : f->acc);
	op->nblocks = (uint8_t)f->n;
	for (unsigned k = 0; k < f->n; k++) {
		struct ld_ent *x = f->ent[k];
		struct msr_op_block *b = op_block(op, k);

		x->flags |= LDF_EXEC;
		x->iseq = iseq;
		x->pc = st->pc;
		b->pa8 = x->pa & ~7ULL;
		b->mask = x->mask;
		memcpy(b->load, x->data, 8);
		b->data_event = x->data_event;
		ld_fill_rf(b, x);
	}
	msr_eng_ld_retire(e, &e->strands[t]);
}

static void report_store_data(struct msr_engine *e, unsigned t, uint64_t iseq,
			      const struct msr_step *st, uint64_t seq0,
			      struct st_ent **ent, unsigned n, const char *why)
{
	struct msr_violation v;
	unsigned len = n == 8 ? 64 : (st->st_len ? st->st_len : st->size);
	char exp[140], obs[140];

	if (len > 64)
		len = 64;
	msr_eng_viol_init(e, &v, MSR_V_STORE_DATA, (int)t);
	v.iseq = iseq;
	v.pc = st->pc;
	v.pa = st->pa;
	v.size = len;
	v.has_values = true;
	v.vlen = len;
	v.source = "STB";
	memcpy(v.expected, st->st, len);
	for (unsigned i = 0; i < len; i++) {
		unsigned p = n == 8 ? i : (unsigned)(ent[0]->pa & 7) + i;

		v.observed[i] = p / 8 < n ? ent[p / 8]->data[p % 8] : 0;
	}
	v.observed_from.valid = true;
	v.observed_from.strand = (uint8_t)t;
	v.observed_from.iseq = iseq;
	v.observed_from.sseq = msr_st_group(seq0, ent[0]);
	v.observed_from.co = ent[0]->co;
	v.observed_from.ts = ent[0]->issue_ts;
	v.observed_from.event = ent[0]->issue_event;
	msr_hex(exp, sizeof(exp), v.expected, len > 16 ? 16 : len);
	msr_hex(obs, sizeof(obs), v.observed, len > 16 ? 16 : len);
	msr_eng_viol_emit(e, &v,
			  "strand %u (core %u, thread %u) executed %s of %s to 0x%llx (step-log line %llu), but its store-buffer entry issued at cycle %u holds %s at 0x%llx mask=0x%02x: %s",
			  t, t / e->tpc, t % e->tpc, op_names[st->op], exp,
			  (unsigned long long)st->pa,
			  (unsigned long long)st->line, ent[0]->issue_ts, obs,
			  (unsigned long long)ent[0]->pa, ent[0]->bmask, why);
}

/* Why the store group differs from the step, or NULL when it matches. */
static const char *st_compare(const struct msr_step *st, struct st_ent **ent,
			      unsigned n, bool atomic)
{
	bool has_st = (st->has & MSR_STEP_HAS_ST) != 0;
	unsigned want_n = st->op == MSR_STEP_STBLK ? 8 : 1;

	if (n != want_n)
		return "the RTL issued a different number of 8-byte pieces";
	for (unsigned k = 0; k < n; k++) {
		uint64_t pa8 = want_n == 8 ? (st->pa & ~63ULL) + 8 * k
					   : st->pa & ~7ULL;
		unsigned sz = want_n == 8 ? 8 : (st->size ? st->size : st->st_len);
		uint8_t mask = want_n == 8 ? 0xff : byte_mask(st->pa & 7, sz);

		if ((ent[k]->pa & ~7ULL) != pa8)
			return "different address";
		if (ent[k]->bmask != mask)
			return "different byte mask";
		if (has_st) {
			/* the mask is one run of bytes: compare it as a range,
			 * up to the end of the step's data */
			unsigned lo = want_n == 8 ? 0 : (unsigned)(st->pa & 7);
			unsigned cnt = pop8(mask);
			unsigned p0 = want_n == 8 ? 8 * k : 0;
			uint8_t tmp[16];

			if (p0 + cnt > st->st_len)
				cnt = st->st_len > p0 ? st->st_len - p0 : 0;
			memcpy(tmp, ent[k]->data, 8);
			memset(tmp + 8, 0, 8);
			if (differ8(tmp + lo, st->st + p0, cnt))
				return "different data";
		}
	}
	if (atomic && (ent[0]->flags & STF_COMMITTED)) {
		if (!has_st && ent[0]->commit_mask)
			return "the ISS failed the compare-and-swap but the commit wrote";
		if (has_st && !ent[0]->commit_mask)
			return "the ISS wrote but the commit wrote nothing (failed compare-and-swap)";
	}
	return NULL;
}

/* The strand's oldest unexecuted store group of the step's kind (`*n`
 * stores in ent[], ent[0] at `*first`), or NULL (reported as a step-kind
 * mismatch). */
static struct st_ent *st_gather(struct msr_engine *e, unsigned t,
				uint64_t iseq, const struct msr_step *st,
				bool atomic, struct st_ent **ent, unsigned *n,
				uint64_t *first)
{
	struct strand *s = &e->strands[t];
	struct st_ent *se;
	uint64_t q;

	while (s->st_exec_cur < s->st.tail) {
		se = msr_ring_at(&s->st, s->st_exec_cur);
		if (!(se->flags & (STF_EXEC | STF_POPPED)))
			break;
		s->st_exec_cur++;
	}
	q = s->st_exec_cur;
	se = msr_ring_at(&s->st, q);
	if (!se) {
		bool ld = has_unexecuted_load(s) && !atomic;

		kind_mismatch(e, t, iseq, st,
			      ld ? "the strand's oldest issued instruction is a load, not a store"
				 : "the strand has no issued store");
		return NULL;
	}
	*first = q;
	*n = se->nent ? se->nent : 1;
	for (unsigned k = 0; k < *n; k++) {
		ent[k] = msr_ring_at(&s->st, q + k);
		if (!ent[k] || msr_st_group(q + k, ent[k]) != q) {
			*n = k;
			break;
		}
	}
	if (se->itype != want_store_itype(st->op)) {
		char what[120];

		snprintf(what, sizeof(what),
			 "the strand's oldest issued store is a %s", itname(se->itype));
		kind_mismatch(e, t, iseq, st, what);
		for (unsigned k = 0; k < *n; k++) {
			ent[k]->flags |= STF_EXEC;
			ent[k]->iseq = iseq;
		}
		msr_eng_st_retire(e, s);
		return NULL;
	}
	return se;
}

/* Check one store step against the strand's oldest store group. */
static bool st_run(struct msr_engine *e, unsigned t, uint64_t iseq,
		   const struct msr_step *st, struct msr_op *op, bool atomic)
{
	struct st_ent *ent[8], *se;
	unsigned n = 0;
	uint64_t q;
	const char *why;

	se = st_gather(e, t, iseq, st, atomic, ent, &n, &q);
	if (!se)
		return false;
	why = st_compare(st, ent, n, atomic);
	if (why)
		report_store_data(e, t, iseq, st, q, ent, n, why);
	op->rmo = (se->flags & STF_RMO) != 0;
	op->store_failed = atomic && !(st->has & MSR_STEP_HAS_ST);
	for (unsigned k = 0; k < n; k++) {
		/* an atomic's blocks were started by ld_finish */
		struct msr_op_block *b = atomic ? &op->blk[k] : op_block(op, k);
		struct chist *h;

		ent[k]->flags |= STF_EXEC;
		ent[k]->iseq = iseq;
		h = msr_hist_get(e, ent[k]->co);
		if (h)
			h->iseq = iseq;
		if (!atomic) {
			b->pa8 = ent[k]->pa & ~7ULL;
			b->mask = ent[k]->bmask;
		}
		memcpy(b->store, ent[k]->data, 8);
		b->sseq = q + k;
	}
	if (!atomic) {
		op->nblocks = (uint8_t)n;
		op->pa = n == 8 ? ent[0]->pa & ~63ULL : ent[0]->pa;
		op->size = (uint8_t)(n == 8 ? 64 : pop8(se->bmask));
	}
	msr_eng_st_retire(e, &e->strands[t]);
	return true;
}

static void op_init(struct msr_engine *e, struct msr_op *op, unsigned t,
		    uint64_t iseq, const struct msr_step *st,
		    const struct msr_event *ev, enum msr_op_kind kind)
{
	memset(op, 0, offsetof(struct msr_op, blk)); /* blocks: op_block */
	op->kind = (uint8_t)kind;
	op->step_op = st->op;
	op->strand = (uint8_t)t;
	op->iseq = iseq;
	op->pc = st->pc;
	op->pa = st->pa;
	op->size = st->size;
	op->ts = e->last_ts;
	op->event = ev->index;
	op->offset = ev->offset;
}

static void emit_op(struct msr_engine *e, const struct msr_op *op)
{
	if (e->sink.op)
		e->sink.op(e->sink.ctx, op);
}

int msr_eng_sstep(struct msr_engine *e, const struct msr_event *ev,
		  struct msr_error *err)
{
	unsigned t = ev->tnum;
	struct strand *s = &e->strands[t];
	uint64_t iseq = ++s->executed;
	struct msr_step st;
	struct msr_op op;
	struct ld_form f; /* ld_gather sets what it returns true with */
	int rc;

	if (!e->have_steps)
		return MSR_OK;
	/* ld[] is read only up to ld_len, which the source sets with it; st[]
	 * is copied into reports up to the step's size: clear it */
	memset(&st, 0, offsetof(struct msr_step, ld));
	memset(st.st, 0, sizeof(st.st));
	s->last_pc = 0;
	rc = e->steps.next(e->steps.ctx, t, &st, err);
	if (rc < 0)
		return rc;
	if (rc == MSR_END) {
		if (!s->short_reported)
			msr_eng_report(e, MSR_V_STEP_LOG_SHORT, (int)t, iseq, 0, 0,
				       "strand %u executed instruction %llu but the step log has no further line for it",
				       t, (unsigned long long)iseq);
		s->short_reported = true;
		return MSR_OK;
	}
	s->last_pc = st.pc;
	switch (st.op) {
	case MSR_STEP_MEMBAR:
		e->st.membars++;
		op_init(e, &op, t, iseq, &st, ev, MSR_OP_MEMBAR);
		op.membar_mask = st.mask;
		op.pa = 0;
		op.size = 0;
		emit_op(e, &op);
		break;
	case MSR_STEP_LD:
	case MSR_STEP_LDD:
	case MSR_STEP_LDQ:
	case MSR_STEP_LDBLK:
		e->st.loads++;
		op_init(e, &op, t, iseq, &st, ev, MSR_OP_LOAD);
		if (ld_gather(e, t, iseq, &st, &f)) {
			ld_finish(e, t, iseq, &st, &f, &op);
			emit_op(e, &op);
		}
		break;
	case MSR_STEP_ST:
	case MSR_STEP_STBLK:
	case MSR_STEP_STBI:
		e->st.stores++;
		op_init(e, &op, t, iseq, &st, ev, MSR_OP_STORE);
		if (st_run(e, t, iseq, &st, &op, false))
			emit_op(e, &op);
		break;
	case MSR_STEP_CAS:
	case MSR_STEP_SWAP:
	case MSR_STEP_LDSTUB:
		e->st.atomics++;
		op_init(e, &op, t, iseq, &st, ev, MSR_OP_ATOMIC);
		if (ld_gather(e, t, iseq, &st, &f)) {
			bool ok;

			ld_finish(e, t, iseq, &st, &f, &op);
			ok = st_run(e, t, iseq, &st, &op, true);
			if (ok)
				emit_op(e, &op);
		} else {
			st_run(e, t, iseq, &st, &op, true);
		}
		break;
	default: /* nop, prefetch */
		break;
	}
	return MSR_OK;
}

void msr_eng_strand_leftovers(struct msr_engine *e, unsigned t)
{
	struct strand *s = &e->strands[t];
	bool exec = e->have_steps && !s->short_reported;

	for (uint64_t q = s->ld.head; q < s->ld.tail; q++) {
		struct ld_ent *le = msr_ring_at(&s->ld, q);
		const char *why = NULL;

		if ((le->flags & LDF_POPPED) || le->group != q)
			continue;
		if (!(le->flags & LDF_DATA))
			why = "never got its data";
		else if (exec && !(le->flags & LDF_EXEC))
			why = "was never executed";
		if (!why)
			continue;
		msr_eng_where(e, le->issue_event, le->issue_offset, le->issue_ts);
		msr_eng_report(e, MSR_V_LEFTOVER, (int)t,
			       le->flags & LDF_EXEC ? le->iseq : 0,
			       le->pa, le->acc,
			       "load of strand %u at 0x%llx issued at cycle %u (event %llu) %s before the trace ended",
			       t, (unsigned long long)le->pa,
			       le->issue_ts,
			       (unsigned long long)le->issue_event, why);
	}
	for (uint64_t q = s->st.head; q < s->st.tail; q++) {
		struct st_ent *se = msr_ring_at(&s->st, q);
		const char *why = NULL;

		if (se->flags & STF_POPPED)
			continue;
		if (!(se->flags & STF_COMMITTED))
			why = "was never committed";
		else if (!(se->flags & STF_ACKED))
			why = "was never acknowledged";
		else if (exec && !(se->flags & STF_EXEC) && !se->gback)
			why = "was never executed";
		if (!why)
			continue;
		msr_eng_where(e, se->issue_event, se->issue_offset, se->issue_ts);
		msr_eng_report(e, MSR_V_LEFTOVER, (int)t,
			       se->flags & STF_EXEC ? se->iseq : 0,
			       se->pa, 8,
			       "store #%llu of strand %u at 0x%llx issued at cycle %u (event %llu) %s before the trace ended",
			       (unsigned long long)q, t,
			       (unsigned long long)se->pa, se->issue_ts,
			       (unsigned long long)se->issue_event, why);
	}
}
