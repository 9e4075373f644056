/*
 * engine-test.h - helpers for the engine's unit tests: build events in
 * memory, serve steps from an array, and record everything the engine
 * emits. Header-only (static functions) so each test file stands alone.
 */
#ifndef MSR_ENGINE_TEST_H
#define MSR_ENGINE_TEST_H

#include "engine.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T_MAXV 256
#define T_MAXOPS 128
#define T_MAXC 128
#define T_MAXSTEPS 128

struct tctx {
	struct msr_engine *e;
	struct msr_config cfg;
	uint64_t idx;
	struct msr_violation v[T_MAXV];
	unsigned nv;
	struct msr_op ops[T_MAXOPS];
	unsigned nops;
	struct msr_commit c[T_MAXC];
	unsigned nc;
	struct msr_step steps[T_MAXSTEPS];
	unsigned nsteps;
	unsigned cursor[MSR_MAX_STRANDS];
};

static inline void t_on_violation(void *ctx, const struct msr_violation *v)
{
	struct tctx *t = ctx;

	if (t->nv < T_MAXV)
		t->v[t->nv++] = *v;
}

static inline void t_on_op(void *ctx, const struct msr_op *op)
{
	struct tctx *t = ctx;

	if (t->nops < T_MAXOPS)
		t->ops[t->nops++] = *op;
}

static inline void t_on_commit(void *ctx, const struct msr_commit *c)
{
	struct tctx *t = ctx;

	if (t->nc < T_MAXC)
		t->c[t->nc++] = *c;
}

static inline int t_step_next(void *ctx, unsigned tnum, struct msr_step *step,
		       struct msr_error *err)
{
	struct tctx *t = ctx;

	(void)err;
	for (unsigned i = t->cursor[tnum]; i < t->nsteps; i++) {
		if (t->steps[i].tnum == tnum) {
			*step = t->steps[i];
			t->cursor[tnum] = i + 1;
			return MSR_OK;
		}
	}
	t->cursor[tnum] = t->nsteps;
	return MSR_END;
}

static inline int t_step_remaining(void *ctx, unsigned tnum, uint64_t *count,
			    struct msr_error *err)
{
	struct tctx *t = ctx;

	(void)err;
	*count = 0;
	for (unsigned i = t->cursor[tnum]; i < t->nsteps; i++)
		if (t->steps[i].tnum == tnum)
			(*count)++;
	return MSR_OK;
}

/* A new engine with T2 defaults but the given limits (0 keeps the
 * default); `steps` attaches the step array. */
static inline struct tctx *t_new_limits(bool steps, size_t max_inflight,
					size_t mab_window)
{
	struct tctx *t = calloc(1, sizeof(*t));
	struct msr_engine_sink sink = {t, t_on_commit, t_on_op, t_on_violation};
	struct msr_error err = MSR_ERROR_INIT;

	cr_assert_not_null(t);
	msr_config_default(&t->cfg);
	if (max_inflight)
		t->cfg.max_inflight = max_inflight;
	if (mab_window)
		t->cfg.mab_window = mab_window;
	cr_assert_eq(msr_engine_create(&t->cfg, &sink, &t->e, &err), MSR_OK);
	if (steps) {
		struct msr_step_source src = {t, t_step_next, t_step_remaining};

		msr_engine_set_steps(t->e, &src);
	}
	return t;
}

/* A new engine with T2 defaults; `steps` attaches the step array. */
static inline struct tctx *t_new(bool steps)
{
	return t_new_limits(steps, 0, 0);
}

static inline void t_free(struct tctx *t)
{
	msr_engine_destroy(t->e);
	free(t);
}

static inline void t_apply(struct tctx *t, struct msr_event *ev)
{
	struct msr_error err = MSR_ERROR_INIT;

	ev->index = t->idx;
	ev->offset = t->idx * 16;
	t->idx++;
	cr_assert_eq(msr_engine_apply(t->e, ev, &err), MSR_OK);
}

static inline void t_finish(struct tctx *t)
{
	struct msr_error err = MSR_ERROR_INIT;

	cr_assert_eq(msr_engine_finish(t->e, true, &err), MSR_OK);
}

/* ---- events ---- */

static inline void ld_issue(struct tctx *t, unsigned tnum, uint64_t pa,
		     unsigned lsize, unsigned itype, uint32_t ts)
{
	struct msr_event ev = {0};

	ev.code = MSR_LD_ISSUE, ev.tnum = (uint8_t)tnum, ev.pa = pa;
	ev.size = (uint8_t)lsize, ev.itype = (uint8_t)itype, ev.ts = ts;
	t_apply(t, &ev);
}

static inline void ld_data(struct tctx *t, unsigned tnum, uint64_t pa, unsigned dsrc,
		    uint32_t ts)
{
	struct msr_event ev = {0};

	ev.code = MSR_LD_DATA, ev.tnum = (uint8_t)tnum, ev.pa = pa;
	ev.dsrc = (uint8_t)dsrc, ev.ts = ts;
	t_apply(t, &ev);
}

static inline void ld_fill(struct tctx *t, unsigned tnum, uint64_t pa, uint32_t ts)
{
	struct msr_event ev = {0};

	ev.code = MSR_LD_FILL, ev.tnum = (uint8_t)tnum, ev.pa = pa, ev.ts = ts;
	t_apply(t, &ev);
}

static inline void st_issue(struct tctx *t, unsigned tnum, uint64_t pa, uint64_t data,
		     unsigned bmask, unsigned itype, uint32_t ts)
{
	struct msr_event ev = {0};

	ev.code = MSR_ST_ISSUE, ev.tnum = (uint8_t)tnum, ev.pa = pa;
	ev.data = data, ev.bmask = (uint8_t)bmask, ev.itype = (uint8_t)itype;
	ev.ts = ts;
	t_apply(t, &ev);
}

static inline void st_commit(struct tctx *t, unsigned tnum, uint64_t pa,
		      unsigned bmask, uint32_t invvec, unsigned l2hit,
		      uint32_t ts)
{
	struct msr_event ev = {0};

	ev.code = MSR_ST_COMMIT, ev.tnum = (uint8_t)tnum, ev.pa = pa;
	ev.bmask = (uint8_t)bmask, ev.invvec = invvec;
	ev.l2hit = (uint8_t)l2hit, ev.ts = ts;
	t_apply(t, &ev);
}

static inline void st_ack(struct tctx *t, unsigned tnum, unsigned rmo, uint32_t ts)
{
	struct msr_event ev = {0};

	ev.code = MSR_ST_ACK, ev.tnum = (uint8_t)tnum, ev.rmo = (uint8_t)rmo;
	ev.ts = ts;
	t_apply(t, &ev);
}

static inline void st_inv(struct tctx *t, unsigned cid, unsigned tnum, uint64_t pa,
		   uint32_t ts)
{
	struct msr_event ev = {0};

	ev.code = MSR_ST_INV, ev.cid = (uint8_t)cid, ev.tnum = (uint8_t)tnum;
	ev.pa = pa, ev.ts = ts;
	t_apply(t, &ev);
}

static inline void st_update(struct tctx *t, unsigned tnum, uint64_t pa, uint32_t ts)
{
	struct msr_event ev = {0};

	ev.code = MSR_ST_UPDATE, ev.tnum = (uint8_t)tnum, ev.pa = pa, ev.ts = ts;
	t_apply(t, &ev);
}

static inline void evict(struct tctx *t, uint64_t pa, uint32_t invvec, uint32_t ts)
{
	struct msr_event ev = {0};

	ev.code = MSR_EVICT, ev.pa = pa, ev.invvec = invvec, ev.ts = ts;
	t_apply(t, &ev);
}

static inline void evict_inv(struct tctx *t, unsigned cid, unsigned bank, uint32_t ts)
{
	struct msr_event ev = {0};

	ev.code = MSR_EVICT_INV, ev.cid = (uint8_t)cid, ev.bank = (uint8_t)bank;
	ev.ts = ts;
	t_apply(t, &ev);
}

static inline void simple(struct tctx *t, unsigned code, unsigned tnum)
{
	struct msr_event ev = {0};

	ev.code = (uint16_t)code, ev.tnum = (uint8_t)tnum;
	t_apply(t, &ev);
}

static inline void sstep(struct tctx *t, unsigned tnum)
{
	simple(t, MSR_SSTEP, tnum);
}

static inline void dma_st(struct tctx *t, uint64_t pa, uint64_t data, unsigned bmask,
		   unsigned inv, uint32_t ts)
{
	struct msr_event ev = {0};

	ev.code = MSR_DMA_ST, ev.pa = pa, ev.data = data;
	ev.bmask = (uint8_t)bmask, ev.inv = (uint8_t)inv, ev.total = 8;
	ev.ts = ts;
	t_apply(t, &ev);
}

static inline void mem_slam(struct tctx *t, uint64_t pa, uint64_t data,
		     unsigned bmask, uint32_t ts)
{
	struct msr_event ev = {0};

	ev.code = MSR_MEM_SLAM, ev.pa = pa, ev.data = data;
	ev.bmask = (uint8_t)bmask, ev.ts = ts;
	t_apply(t, &ev);
}

static inline void mem_check(struct tctx *t, uint64_t pa, const uint8_t bytes[64])
{
	struct msr_event ev = {0};

	ev.code = MSR_MEM_CHECK, ev.pa = pa, ev.nbytes = 64;
	memcpy(ev.bytes, bytes, 64);
	t_apply(t, &ev);
}

/* ---- steps ---- */

static inline void be_bytes(uint64_t v, unsigned n, uint8_t *out)
{
	for (unsigned i = 0; i < n; i++)
		out[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static inline uint64_t be_val(const uint8_t *b, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v = (v << 8) | b[i];
	return v;
}

static inline struct msr_step *add_step(struct tctx *t, unsigned tnum, unsigned op,
				 uint64_t pc)
{
	struct msr_step *s;

	cr_assert_lt(t->nsteps, T_MAXSTEPS);
	s = &t->steps[t->nsteps++];
	memset(s, 0, sizeof(*s));
	s->line = t->nsteps + 1;
	s->tnum = (uint8_t)tnum;
	s->op = (uint8_t)op;
	s->pc = pc;
	return s;
}

static inline struct msr_step *step_mem(struct tctx *t, unsigned tnum, unsigned op,
				 uint64_t pa, unsigned size)
{
	struct msr_step *s = add_step(t, tnum, op, 0x1000 + 4 * t->nsteps);

	s->pa = pa;
	s->size = (uint8_t)size;
	s->has = MSR_STEP_HAS_PA | MSR_STEP_HAS_SIZE;
	return s;
}

static inline void step_set_ld(struct msr_step *s, uint64_t v)
{
	be_bytes(v, s->size > 8 ? 8 : s->size, s->ld);
	s->ld_len = s->size;
	s->has |= MSR_STEP_HAS_LD;
}

static inline void step_set_st(struct msr_step *s, uint64_t v)
{
	be_bytes(v, s->size > 8 ? 8 : s->size, s->st);
	s->st_len = s->size;
	s->has |= MSR_STEP_HAS_ST;
}

/* ld of `size` bytes observing `v` (`with_ld` false: no ld=) */
static inline void step_ld(struct tctx *t, unsigned tnum, uint64_t pa, unsigned size,
		    uint64_t v, bool with_ld)
{
	struct msr_step *s = step_mem(t, tnum, MSR_STEP_LD, pa, size);

	if (with_ld)
		step_set_ld(s, v);
}

static inline void step_st(struct tctx *t, unsigned tnum, uint64_t pa, unsigned size,
		    uint64_t v)
{
	step_set_st(step_mem(t, tnum, MSR_STEP_ST, pa, size), v);
}

/* Load an initial image given as text (trace-format.md section 4). */
static inline void t_image(struct tctx *t, const char *text)
{
	char path[] = "/tmp/msr-image-XXXXXX";
	struct msr_error err = MSR_ERROR_INIT;
	int fd = mkstemp(path);
	FILE *f;

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(msr_engine_load_image(t->e, path, &err), MSR_OK);
	unlink(path);
}

/* ---- lookups ---- */

static inline unsigned count_kind(const struct tctx *t, enum msr_vkind k)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->nv; i++)
		n += t->v[i].kind == k;
	return n;
}

static inline const struct msr_violation *find_kind(const struct tctx *t,
					     enum msr_vkind k)
{
	for (unsigned i = 0; i < t->nv; i++)
		if (t->v[i].kind == k)
			return &t->v[i];
	return NULL;
}

static inline void expect_clean(const struct tctx *t)
{
	for (unsigned i = 0; i < t->nv; i++)
		cr_log_error("unexpected %s: %s", msr_vkind_name(t->v[i].kind),
			     t->v[i].message);
	cr_assert_eq(t->nv, 0, "expected no violations, got %u", t->nv);
}

/* A store from strand `tnum` at `pa` that fully completes: issue, step,
 * commit (invvec), ack, answers from cores in `inv_cores`. */
static inline void full_store(struct tctx *t, unsigned tnum, uint64_t pa,
		       unsigned size, uint64_t v, uint32_t invvec, uint32_t ts)
{
	uint8_t b[8] = {0};
	uint64_t data = 0;
	unsigned off = (unsigned)(pa & 7);
	unsigned mask = ((0xffu >> off) & ~(0xffu >> (off + size))) & 0xff;

	be_bytes(v, size, b + off);
	data = be_val(b, 8);
	st_issue(t, tnum, pa, data, mask, MSR_IT_STORE, ts);
	sstep(t, tnum);
	st_commit(t, tnum, pa, mask, invvec, 1, ts + 10);
	st_ack(t, tnum, 0, ts + 11);
	for (unsigned c = 0; c < 32; c++) {
		if (!(invvec & (1u << c)))
			continue;
		if (c == tnum / t->cfg.threads_per_core)
			st_update(t, tnum, pa, ts + 12);
		else
			st_inv(t, c, tnum, pa & ~15ULL, ts + 12);
	}
}

#endif /* MSR_ENGINE_TEST_H */
