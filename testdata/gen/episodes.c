/*
 * episodes.c - the scripted fault episodes of msync-gen. Each episode takes
 * one or two strands away from the program (after they went quiet), runs a
 * few instructions over fresh fault-region lines with a fault mark on one of
 * them, checks that the fault really showed, and records the expectation.
 *
 * The instruction sequences are those of docs/generator.md ("Fault
 * episodes"). An episode must leave the model as it found it: holds and
 * held messages released, strands handed back to the program.
 */
#include "faults-internal.h"

#include <string.h>

#define MAX_RETRY 4

static void insn(struct gen_insn *in, unsigned op, uint64_t pa, unsigned size,
		 uint16_t flags, struct gen_track *trk)
{
	memset(in, 0, sizeof(*in));
	in->op = (uint8_t)op;
	in->pa = pa;
	in->size = (uint8_t)size;
	in->flags = flags;
	in->trk = trk;
}

static void put_value(struct gen_insn *in, uint64_t v)
{
	for (unsigned i = 0; i < in->size; i++)
		in->st[i] = (uint8_t)(v >> (8 * (in->size - 1 - i)));
}

static uint64_t value_of(const struct gen_track *t, unsigned size)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < size; i++)
		v = (v << 8) | t->value[i];
	return v;
}

static bool quiet(struct gen_model *m, unsigned s)
{
	return gen_model_idle(m, s) && gen_model_stb_empty(m, s);
}

static bool two_strands(unsigned kind)
{
	return kind == GEN_FK_STALE_L1 || kind == GEN_FK_LOST_INV ||
	       kind == GEN_FK_ATOMIC_BREAK || kind == GEN_FK_MEMBAR;
}

static void finish(struct gen_faults *f, struct gen_model *m, bool ok)
{
	struct episode *e = &f->ep;

	gen_model_release_inv(m);
	gen_model_release_atomic(m);
	gen_model_hold_stb(m, e->a, false);
	gen_model_reserve(m, e->a, false);
	if (two_strands(e->kind)) {
		gen_model_hold_stb(m, e->b, false);
		gen_model_reserve(m, e->b, false);
	}
	if (!ok)
		f->aborted++;
	e->active = false;
}

bool gen_faults_busy(const struct gen_faults *f)
{
	return f->ep.active;
}

static int begin(struct gen_faults *f, struct gen_model *m, unsigned kind)
{
	struct episode *e = &f->ep;
	struct gen_rng *r = gen_model_rng(m);
	unsigned threads = gen_model_threads(m);
	unsigned cores = gen_model_strands(m) / threads;

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->x = gen_model_fault_line(m);
	e->y = gen_model_fault_line(m);
	if (!e->x || !e->y)
		return 0; /* fault region used up */
	e->a = (unsigned)gen_rng_below(r, gen_model_strands(m));
	e->ca = e->a / threads;
	if (two_strands(kind)) {
		e->cb = (e->ca + 1 + (unsigned)gen_rng_below(r, cores - 1)) % cores;
		e->b = e->cb * threads + (unsigned)gen_rng_below(r, threads);
		gen_model_reserve(m, e->b, true);
	}
	gen_model_reserve(m, e->a, true);
	f->counter++;
	e->v1 = 0xe100000000000000ull | (f->counter << 8) | 1;
	e->v2 = 0xe200000000000000ull | (f->counter << 8) | 2;
	e->active = true;
	return 1;
}

static void maybe_start(struct gen_faults *f, struct gen_model *m)
{
	uint64_t started = gen_model_instructions(m);
	uint64_t delta = started - f->last_started;

	f->last_started = started;
	if (gen_model_stopping(m))
		return;
	for (unsigned i = 0; i < f->ninj; i++) {
		struct gen_inject *j = &f->inj[i];

		if (j->kind == GEN_FK_LOAD_VALUE || j->kind == GEN_FK_STORE_DATA)
			continue;
		if (j->done || !fault_due(j, started, gen_model_rng(m), delta))
			continue;
		if (j->rate == 0)
			j->done = true;
		if (!begin(f, m, j->kind)) {
			j->done = true; /* no fresh lines left */
			f->aborted++;
		}
		return;
	}
}

/* Phase machinery: `start` runs once per phase, then the phase waits. */
#define PHASE_START(e) if (!(e)->begun && ((e)->begun = true))
#define NEXT(e) do { (e)->phase++; (e)->begun = false; } while (0)
#define SCRIPT(in) do { rc = gen_model_script(m, strand, (in), err); \
			if (rc < 0) return rc; } while (0)

static int ep_stale_l1(struct gen_faults *f, struct gen_model *m,
		       struct msr_error *err)
{
	struct episode *e = &f->ep;
	struct gen_insn in;
	unsigned strand = e->a;
	int rc;

	switch (e->phase) {
	case 1:
		PHASE_START(e) {
			insn(&in, MSR_STEP_LD, e->x, 8, 0, &e->trk[0]);
			SCRIPT(&in);
		} else if (gen_model_idle(m, e->a)) {
			if (gen_model_l1_present(m, e->ca, e->x))
				NEXT(e);
			else if (++e->retries > MAX_RETRY)
				finish(f, m, false);
			else
				e->begun = false;
		}
		return MSR_OK;
	case 2:
		strand = e->b;
		PHASE_START(e) {
			insn(&in, MSR_STEP_ST, e->x, 8, GEN_F_DELAY_INV, &e->trk[1]);
			in.fault_core = (uint8_t)e->ca;
			put_value(&in, e->v1);
			SCRIPT(&in);
			insn(&in, MSR_STEP_ST, e->y, 8, 0, &e->trk[2]);
			put_value(&in, e->v2);
			SCRIPT(&in);
		} else if (quiet(m, e->b)) {
			if (gen_model_inv_held(m))
				NEXT(e);
			else
				finish(f, m, false);
		}
		return MSR_OK;
	case 3: case 4:
		PHASE_START(e) {
			insn(&in, MSR_STEP_LD, e->phase == 3 ? e->y : e->x, 8, 0,
			     &e->trk[e->phase]);
			SCRIPT(&in);
		} else if (gen_model_idle(m, e->a)) {
			NEXT(e);
		}
		return MSR_OK;
	default: {
		struct expect_op o = {"stale-load", e->a, e->trk[4].iseq, e->x,
				      e->trk[4].sstep_event, e->trk[4].data_event};
		struct expect_op rel[3] = {
			{"new-load", e->a, e->trk[3].iseq, e->y, e->trk[3].sstep_event,
			 e->trk[3].data_event},
			{"store", e->b, e->trk[1].iseq, e->x, e->trk[1].commit_event, 0},
			{"store", e->b, e->trk[2].iseq, e->y, e->trk[2].commit_event, 0},
		};
		bool ok = value_of(&e->trk[3], 8) == e->v2 &&
			  value_of(&e->trk[4], 8) != e->v1;

		finish(f, m, ok);
		return ok ? fault_record(f, GEN_FK_STALE_L1, &o, rel, 3, err)
			  : MSR_OK;
	}
	}
}

static int ep_lost_inv(struct gen_faults *f, struct gen_model *m,
		       struct msr_error *err)
{
	struct episode *e = &f->ep;
	struct gen_insn in;
	unsigned strand = e->a;
	int rc;

	if (e->phase == 1)
		return ep_stale_l1(f, m, err); /* same first phase */
	if (e->phase == 2) {
		strand = e->b;
		PHASE_START(e) {
			insn(&in, MSR_STEP_ST, e->x, 8, GEN_F_LOSE_INV, &e->trk[1]);
			in.fault_core = (uint8_t)e->ca;
			put_value(&in, e->v1);
			SCRIPT(&in);
		} else if (quiet(m, e->b)) {
			NEXT(e);
		}
		return MSR_OK;
	}
	{
		struct expect_op o = {"store", e->b, e->trk[1].iseq, e->x,
				      e->trk[1].commit_event, 0};
		struct expect_op rel = {"holder", e->a, e->trk[0].iseq, e->x,
					e->trk[0].sstep_event, e->trk[0].data_event};

		finish(f, m, true);
		return fault_record(f, GEN_FK_LOST_INV, &o, &rel, 1, err);
	}
}

static int ep_store_order(struct gen_faults *f, struct gen_model *m,
			  struct msr_error *err)
{
	struct episode *e = &f->ep;
	struct gen_insn in;
	unsigned strand = e->a;
	int rc;

	if (e->phase == 1) {
		PHASE_START(e) {
			insn(&in, MSR_STEP_ST, e->x, 8, GEN_F_SWAP_NEXT, &e->trk[0]);
			put_value(&in, e->v1);
			SCRIPT(&in);
			insn(&in, MSR_STEP_ST, e->y, 8, 0, &e->trk[1]);
			put_value(&in, e->v2);
			SCRIPT(&in);
		} else if (quiet(m, e->a)) {
			NEXT(e);
		}
		return MSR_OK;
	}
	{
		struct expect_op o = {"late-store", e->a, e->trk[0].iseq, e->x,
				      e->trk[0].commit_event, 0};
		struct expect_op rel = {"early-store", e->a, e->trk[1].iseq, e->y,
					e->trk[1].commit_event, 0};
		bool ok = e->trk[0].commit_event > e->trk[1].commit_event;

		finish(f, m, ok);
		return ok ? fault_record(f, GEN_FK_STORE_ORDER, &o, &rel, 1, err)
			  : MSR_OK;
	}
}

static int ep_bad_bypass(struct gen_faults *f, struct gen_model *m,
			 struct msr_error *err)
{
	struct episode *e = &f->ep;
	struct gen_insn in;
	unsigned strand = e->a;
	int rc;

	if (e->phase == 1) {
		PHASE_START(e) {
			gen_model_hold_stb(m, e->a, true);
			insn(&in, MSR_STEP_ST, e->x, 8, 0, &e->trk[0]);
			put_value(&in, e->v1);
			SCRIPT(&in);
			insn(&in, MSR_STEP_ST, e->x, 8, 0, &e->trk[1]);
			put_value(&in, e->v2);
			SCRIPT(&in);
			insn(&in, MSR_STEP_LD, e->x, 8, GEN_F_BAD_BYPASS, &e->trk[2]);
			SCRIPT(&in);
		} else if (gen_model_idle(m, e->a)) {
			gen_model_hold_stb(m, e->a, false);
			NEXT(e);
		}
		return MSR_OK;
	}
	if (!quiet(m, e->a))
		return MSR_OK;
	{
		struct expect_op o = {"load", e->a, e->trk[2].iseq, e->x,
				      e->trk[2].sstep_event, 0};
		struct expect_op rel[2] = {
			{"forwarded-store", e->a, e->trk[0].iseq, e->x,
			 e->trk[0].sstep_event, 0},
			{"youngest-store", e->a, e->trk[1].iseq, e->x,
			 e->trk[1].sstep_event, 0},
		};
		bool ok = value_of(&e->trk[2], 8) == e->v1;

		finish(f, m, ok);
		return ok ? fault_record(f, GEN_FK_BAD_BYPASS, &o, rel, 2, err)
			  : MSR_OK;
	}
}

static int ep_atomic_break(struct gen_faults *f, struct gen_model *m,
			   struct msr_error *err)
{
	struct episode *e = &f->ep;
	struct gen_insn in;
	unsigned strand = e->a;
	int rc;

	switch (e->phase) {
	case 1:
		PHASE_START(e) {
			insn(&in, MSR_STEP_SWAP, e->x, 4, GEN_F_ATOMIC_BREAK,
			     &e->trk[0]);
			put_value(&in, e->v1);
			SCRIPT(&in);
		} else if (gen_model_atomic_split(m)) {
			NEXT(e);
		}
		return MSR_OK;
	case 2:
		strand = e->b;
		PHASE_START(e) {
			insn(&in, MSR_STEP_ST, e->x, 4, 0, &e->trk[1]);
			put_value(&in, e->v2);
			SCRIPT(&in);
		} else if (quiet(m, e->b)) {
			gen_model_release_atomic(m);
			NEXT(e);
		}
		return MSR_OK;
	default:
		if (!quiet(m, e->a))
			return MSR_OK;
		{
			struct expect_op o = {"atomic", e->a, e->trk[0].iseq, e->x,
					      e->trk[0].sstep_event,
					      e->trk[0].commit_event};
			struct expect_op rel = {"intervening-store", e->b,
						e->trk[1].iseq, e->x,
						e->trk[1].commit_event, 0};

			finish(f, m, true);
			return fault_record(f, GEN_FK_ATOMIC_BREAK, &o, &rel, 1, err);
		}
	}
}

static int membar_side(struct gen_faults *f, struct gen_model *m,
		       unsigned strand, uint64_t st_pa, uint64_t ld_pa,
		       uint64_t v, bool fault, struct msr_error *err)
{
	struct episode *e = &f->ep;
	struct gen_track *t = &e->trk[fault ? 0 : 3];
	struct gen_insn in;
	int rc;

	if (fault)
		gen_model_hold_stb(m, strand, true);
	insn(&in, MSR_STEP_ST, st_pa, 8, 0, &t[0]);
	put_value(&in, v);
	SCRIPT(&in);
	insn(&in, MSR_STEP_MEMBAR, 0, 0, fault ? GEN_F_NOWAIT : 0, &t[1]);
	in.mask = 0x2;
	SCRIPT(&in);
	insn(&in, MSR_STEP_LD, ld_pa, 8, 0, &t[2]);
	SCRIPT(&in);
	return MSR_OK;
}

static int ep_membar(struct gen_faults *f, struct gen_model *m,
		     struct msr_error *err)
{
	struct episode *e = &f->ep;
	int rc = MSR_OK;

	switch (e->phase) {
	case 1:
		PHASE_START(e) {
			rc = membar_side(f, m, e->a, e->x, e->y, e->v1, true, err);
		} else if (gen_model_idle(m, e->a)) {
			NEXT(e);
		}
		return rc;
	case 2:
		PHASE_START(e) {
			rc = membar_side(f, m, e->b, e->y, e->x, e->v2, false, err);
		} else if (gen_model_idle(m, e->b)) {
			gen_model_hold_stb(m, e->a, false);
			NEXT(e);
		}
		return rc;
	default:
		if (!quiet(m, e->a) || !quiet(m, e->b))
			return MSR_OK;
		{
			struct expect_op o = {"load", e->a, e->trk[2].iseq, e->y,
					      e->trk[2].sstep_event,
					      e->trk[2].data_event};
			struct expect_op rel[3] = {
				{"store", e->a, e->trk[0].iseq, e->x,
				 e->trk[0].commit_event, 0},
				{"store", e->b, e->trk[3].iseq, e->y,
				 e->trk[3].commit_event, 0},
				{"load", e->b, e->trk[5].iseq, e->x,
				 e->trk[5].sstep_event, e->trk[5].data_event},
			};
			bool ok = value_of(&e->trk[2], 8) != e->v2 &&
				  value_of(&e->trk[5], 8) != e->v1;

			finish(f, m, ok);
			return ok ? fault_record(f, GEN_FK_MEMBAR, &o, rel, 3, err)
				  : MSR_OK;
		}
	}
}

int gen_faults_tick(struct gen_faults *f, struct gen_model *m,
		    struct msr_error *err)
{
	struct episode *e = &f->ep;

	if (!e->active) {
		maybe_start(f, m);
		return MSR_OK;
	}
	if (e->phase == 0) {
		if (quiet(m, e->a) && (!two_strands(e->kind) || quiet(m, e->b)))
			NEXT(e);
		return MSR_OK;
	}
	switch (e->kind) {
	case GEN_FK_STALE_L1: return ep_stale_l1(f, m, err);
	case GEN_FK_LOST_INV: return ep_lost_inv(f, m, err);
	case GEN_FK_STORE_ORDER: return ep_store_order(f, m, err);
	case GEN_FK_BAD_BYPASS: return ep_bad_bypass(f, m, err);
	case GEN_FK_ATOMIC_BREAK: return ep_atomic_break(f, m, err);
	default: return ep_membar(f, m, err);
	}
}
