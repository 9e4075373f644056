/*
 * test_litmus.c - the TSO checker against an exhaustive operational
 * reference. A small x86-TSO machine (strands with FIFO store buffers over
 * one memory, store-buffer forwarding, membar #StoreLoad and atomics that
 * need an empty buffer) enumerates every reachable outcome of a litmus
 * program, recorded as (store each load read, total commit order). Then
 * every candidate outcome - each load reading any store to its address or
 * the initial value, times every total order of the program's stores - is
 * turned into msr_op / msr_commit streams (three schedules: ops early,
 * commits early, all ops before all commits) and run through the checker. Verdicts come from the
 * enumerator only: reachable => no tso-* violation; unreachable => at least
 * one, of a kind the test names (and tso-store-order whenever the order
 * breaks a strand's program order of stores).
 */
#include <stdio.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "test_tso_harness.h"

enum { L_ST = 1, L_LD, L_MB, L_SWAP };

#define LT 4   /* threads */
#define LI 6   /* instructions per thread */
#define LS 6   /* stores per program */
#define LL 8   /* loads per program */
#define LADDR 3

struct l_ins {
	int op, addr;
};

struct l_prog {
	char name[24];
	int nt;
	int n[LT];
	struct l_ins ins[LT][LI];
	unsigned kinds; /* bit per enum msr_vkind accepted when forbidden */
};

#define K(x) (1u << (MSR_V_TSO_##x - MSR_V_TSO_STORE_ORDER))
#define BASE (K(STORE_ORDER) | K(COHERENCE) | K(VALUE))
#define ST(a) {L_ST, a}
#define LD(a) {L_LD, a}
#define MB {L_MB, 0}
#define SW(a) {L_SWAP, a}

/* ------------------------------------------------------------------------ */
/* Static numbering of a program                                             */
/* ------------------------------------------------------------------------ */

struct l_info {
	int ns, nl;
	int store_id[LT][LI]; /* 1..ns, 0 = no store */
	int load_id[LT][LI];  /* 0..nl-1, -1 = no load */
	int s_thread[LS + 1], s_index[LS + 1], s_addr[LS + 1], s_sseq[LS + 1];
	int l_thread[LL], l_index[LL], l_addr[LL];
};

static void l_number(const struct l_prog *p, struct l_info *in)
{
	int t, i;

	memset(in, 0, sizeof(*in));
	for (t = 0; t < p->nt; t++) {
		int sseq = 0;

		for (i = 0; i < p->n[t]; i++) {
			const struct l_ins *x = &p->ins[t][i];

			in->load_id[t][i] = -1;
			if (x->op == L_ST || x->op == L_SWAP) {
				int id = ++in->ns;

				in->store_id[t][i] = id;
				in->s_thread[id] = t;
				in->s_index[id] = i;
				in->s_addr[id] = x->addr;
				in->s_sseq[id] = ++sseq;
			}
			if (x->op == L_LD || x->op == L_SWAP) {
				int k = in->nl++;

				in->load_id[t][i] = k;
				in->l_thread[k] = t;
				in->l_index[k] = i;
				in->l_addr[k] = x->addr;
			}
		}
	}
}

/* ------------------------------------------------------------------------ */
/* The operational TSO machine                                               */
/* ------------------------------------------------------------------------ */

struct l_outcome {
	int rf[LL];
	int co[LS];
};

struct l_set {
	unsigned n;
	struct l_outcome o[4096];
};

struct m_state {
	int pc[LT];
	int buf[LT][LI];
	int blen[LT];
	int mem[LADDR];
	struct l_outcome out;
	int nco;
};

static bool l_same(const struct l_outcome *a, const struct l_outcome *b,
		   const struct l_info *in)
{
	return !memcmp(a->rf, b->rf, sizeof(int) * (size_t)in->nl) &&
	       !memcmp(a->co, b->co, sizeof(int) * (size_t)in->ns);
}

static bool l_has(const struct l_set *set, const struct l_outcome *o,
		  const struct l_info *in)
{
	unsigned k;

	for (k = 0; k < set->n; k++)
		if (l_same(&set->o[k], o, in))
			return true;
	return false;
}

static void m_run(const struct l_prog *p, const struct l_info *in,
		  const struct m_state *s, struct l_set *set)
{
	bool done = true;
	int t;

	for (t = 0; t < p->nt; t++) {
		struct m_state n;
		const struct l_ins *x;
		int id, j;

		if (s->blen[t]) { /* drain the oldest buffered store */
			n = *s;
			id = n.buf[t][0];
			n.mem[in->s_addr[id]] = id;
			n.out.co[n.nco++] = id;
			memmove(n.buf[t], n.buf[t] + 1,
				sizeof(int) * (size_t)(--n.blen[t]));
			m_run(p, in, &n, set);
			done = false;
		}
		if (s->pc[t] >= p->n[t])
			continue;
		done = false;
		x = &p->ins[t][s->pc[t]];
		n = *s;
		switch (x->op) {
		case L_ST:
			n.buf[t][n.blen[t]++] = in->store_id[t][s->pc[t]];
			break;
		case L_LD:
			id = n.mem[x->addr];
			for (j = n.blen[t] - 1; j >= 0; j--)
				if (in->s_addr[n.buf[t][j]] == x->addr) {
					id = n.buf[t][j];
					break;
				}
			n.out.rf[in->load_id[t][s->pc[t]]] = id;
			break;
		case L_MB:
			if (n.blen[t])
				continue;
			break;
		case L_SWAP:
			if (n.blen[t])
				continue;
			id = in->store_id[t][s->pc[t]];
			n.out.rf[in->load_id[t][s->pc[t]]] = n.mem[x->addr];
			n.mem[x->addr] = id;
			n.out.co[n.nco++] = id;
			break;
		default:
			break;
		}
		n.pc[t]++;
		m_run(p, in, &n, set);
	}
	if (done && !l_has(set, &s->out, in) && set->n < 4096)
		set->o[set->n++] = s->out;
}

/* ------------------------------------------------------------------------ */
/* Realising a candidate as checker input                                    */
/* ------------------------------------------------------------------------ */

#define XADDR(a) (0x10000ull + 0x40ull * (uint64_t)(a))

struct l_stream {
	const struct l_prog *p;
	const struct l_info *in;
	const struct l_outcome *o;
	int copos[LS + 1];      /* co of each store id, 1-based */
	bool committed[LS + 1];
	bool op_done[LS + 1];   /* store op emitted */
	int next_op[LT];
	int next_co;
};

static bool s_op_ready(const struct l_stream *s, int t)
{
	const struct l_ins *x = &s->p->ins[t][s->next_op[t]];
	int i = s->next_op[t], rf;

	if (x->op == L_ST || x->op == L_MB)
		return true;
	rf = s->o->rf[s->in->load_id[t][i]];
	if (x->op == L_SWAP && !s->committed[s->in->store_id[t][i]])
		return false;
	if (!rf || s->committed[rf])
		return true;
	/* own earlier store still buffered: the load bypasses it */
	return x->op == L_LD && s->in->s_thread[rf] == t &&
	       s->in->s_index[rf] < i;
}

static void s_emit_op(struct h_run *h, struct l_stream *s, int t)
{
	const struct l_info *in = s->in;
	int i = s->next_op[t]++, sid = in->store_id[t][i], rf = 0;
	const struct l_ins *x = &s->p->ins[t][i];
	struct msr_op op;

	h->iseq[t] = (uint64_t)i;
	if (x->op == L_MB) {
		h_membar(h, (unsigned)t, 0x2);
		return;
	}
	if (x->op != L_ST)
		rf = s->o->rf[in->load_id[t][i]];
	h_op_init(h, &op, (unsigned)t,
		  x->op == L_ST	  ? MSR_OP_STORE
		  : x->op == L_LD ? MSR_OP_LOAD
				  : MSR_OP_ATOMIC,
		  x->op == L_ST	  ? MSR_STEP_ST
		  : x->op == L_LD ? MSR_STEP_LD
				  : MSR_STEP_SWAP,
		  XADDR(x->addr));
	if (sid) {
		op.blk[0].sseq = (uint64_t)in->s_sseq[sid];
		h_word(op.blk[0].store, (uint64_t)sid);
		s->op_done[sid] = true;
	}
	if (x->op != L_ST) {
		h_word(op.blk[0].load, (uint64_t)rf);
		if (!rf)
			h_set_rf(&op.blk[0], MSR_RF_INIT, 0, 0, 0);
		else if (!s->committed[rf] && in->s_thread[rf] == t &&
			 in->s_index[rf] < i)
			h_set_rf(&op.blk[0], MSR_RF_BYPASS,
				 (unsigned)in->s_thread[rf],
				 (uint64_t)in->s_sseq[rf], 0);
		else
			h_set_rf(&op.blk[0], MSR_RF_COMMIT,
				 (unsigned)in->s_thread[rf],
				 (uint64_t)in->s_sseq[rf],
				 (uint64_t)s->copos[rf]);
	}
	msr_tso_add_op(h->tso, &op);
}

static void s_emit_commit(struct h_run *h, struct l_stream *s)
{
	int id = s->o->co[s->next_co++];
	const struct l_info *in = s->in;

	h_commit(h, (unsigned)in->s_thread[id], (uint64_t)in->s_sseq[id],
		 XADDR(in->s_addr[id]), (uint64_t)id,
		 s->p->ins[in->s_thread[id]][in->s_index[id]].op == L_SWAP);
	s->committed[id] = true;
}

static bool s_commit_ready(const struct l_stream *s)
{
	int id = s->o->co[s->next_co];

	return s->op_done[id] ||
	       s->p->ins[s->in->s_thread[id]][s->in->s_index[id]].op == L_SWAP;
}

/* Feed one candidate. Schedule 0: ops as soon as what they read has
 * committed; 1: commits as soon as their op executed; 2: every op first,
 * then every commit (the checker must hold ops until their commits). */
static void s_run(struct h_run *h, const struct l_prog *p,
		  const struct l_info *in, const struct l_outcome *o,
		  int sched)
{
	struct l_stream s;
	bool ops_first = sched == 0;
	int k, t;

	memset(&s, 0, sizeof(s));
	s.p = p;
	s.in = in;
	s.o = o;
	for (k = 0; k < in->ns; k++)
		s.copos[o->co[k]] = k + 1;
	if (sched == 2) {
		for (t = 0; t < p->nt; t++)
			while (s.next_op[t] < p->n[t])
				s_emit_op(h, &s, t);
		while (s.next_co < in->ns)
			s_emit_commit(h, &s);
		return;
	}
	for (;;) {
		bool more_ops = false, did = false;

		if (!ops_first && s.next_co < in->ns && s_commit_ready(&s)) {
			s_emit_commit(h, &s);
			continue;
		}
		for (t = 0; t < p->nt && !did; t++) {
			if (s.next_op[t] >= p->n[t])
				continue;
			more_ops = true;
			if (s_op_ready(&s, t)) {
				s_emit_op(h, &s, t);
				did = true;
			}
		}
		if (did)
			continue;
		if (s.next_co < in->ns) {
			s_emit_commit(h, &s); /* before its op if need be */
			continue;
		}
		if (!more_ops)
			break;
		cr_assert_fail("schedule stuck");
	}
}

/* ------------------------------------------------------------------------ */
/* Candidates                                                                */
/* ------------------------------------------------------------------------ */

struct l_count {
	unsigned candidates, allowed, forbidden, runs;
	unsigned kinds[7]; /* forbidden runs reporting each tso-* kind */
};

static const char *const kind_names[7] = {
	"store-order", "load-order", "load-store", "membar",
	"atomicity", "coherence", "value",
};

static bool co_breaks_po(const struct l_info *in, const struct l_outcome *o)
{
	int a, b;

	for (a = 0; a < in->ns; a++)
		for (b = a + 1; b < in->ns; b++) {
			int x = o->co[a], y = o->co[b];

			if (in->s_thread[x] == in->s_thread[y] &&
			    in->s_sseq[x] > in->s_sseq[y])
				return true;
		}
	return false;
}

static void check_one(const struct l_prog *p, const struct l_info *in,
		      const struct l_set *set, const struct l_outcome *o,
		      struct l_count *cnt)
{
	bool allowed = l_has(set, o, in);
	int sched, k;

	cnt->candidates++;
	if (allowed)
		cnt->allowed++;
	else
		cnt->forbidden++;
	for (sched = 0; sched < 3; sched++) {
		struct h_run *h = malloc(sizeof(*h));
		char desc[128];
		int n = 0;
		unsigned kinds = 0;

		cr_assert_not_null(h);
		cr_assert_eq(h_init(h), MSR_OK);
		s_run(h, p, in, o, sched);
		h_fini(h);
		cnt->runs++;
		for (k = 0; k < in->nl && n < 100; k++)
			n += snprintf(desc + n, sizeof(desc) - (size_t)n,
				      "r%d=%d ", k, o->rf[k]);
		for (k = 0; k < in->ns && n < 120; k++)
			n += snprintf(desc + n, sizeof(desc) - (size_t)n,
				      "%s%d", k ? "<" : "co:", o->co[k]);
		for (k = 0; k < MSR_V_COUNT; k++)
			if (h->per_kind[k])
				kinds |= 1u << k;
		for (k = 0; k < 7 && !allowed; k++)
			if (h->per_kind[MSR_V_TSO_STORE_ORDER + k])
				cnt->kinds[k]++;
		if (allowed) {
			cr_expect_eq(h->nv, 0,
				     "%s %s (schedule %d): allowed, but got %u "
				     "violations, first: %s",
				     p->name, desc, sched, h->nv,
				     h->nv ? h->v[0].message : "");
		} else {
			unsigned accept = p->kinds << MSR_V_TSO_STORE_ORDER;

			cr_expect_gt(h->nv, 0,
				     "%s %s (schedule %d): forbidden, but no "
				     "violation", p->name, desc, sched);
			cr_expect_eq(kinds & ~accept, 0,
				     "%s %s (schedule %d): unexpected kind "
				     "(first: %s)", p->name, desc, sched,
				     h->nv ? h->v[0].message : "");
			if (co_breaks_po(in, o))
				cr_expect_gt(h->per_kind[MSR_V_TSO_STORE_ORDER],
					     0, "%s %s: no store-order",
					     p->name, desc);
		}
		free(h);
	}
}

/* Every co permutation (Heap's algorithm would do; n <= LS is small). */
static void perms(const struct l_prog *p, const struct l_info *in,
		  const struct l_set *set, struct l_outcome *o, int k,
		  bool *used, struct l_count *cnt)
{
	int id;

	if (k == in->ns) {
		check_one(p, in, set, o, cnt);
		return;
	}
	for (id = 1; id <= in->ns; id++) {
		if (used[id])
			continue;
		used[id] = true;
		o->co[k] = id;
		perms(p, in, set, o, k + 1, used, cnt);
		used[id] = false;
	}
}

static void rfs(const struct l_prog *p, const struct l_info *in,
		const struct l_set *set, struct l_outcome *o, int k,
		struct l_count *cnt)
{
	bool used[LS + 1] = {false};
	int id;

	/* nl <= LL; the second test only tells the compiler so */
	if (k == in->nl || k >= LL) {
		perms(p, in, set, o, 0, used, cnt);
		return;
	}
	o->rf[k] = 0;
	rfs(p, in, set, o, k + 1, cnt);
	for (id = 1; id <= in->ns; id++)
		if (in->s_addr[id] == in->l_addr[k]) {
			o->rf[k] = id;
			rfs(p, in, set, o, k + 1, cnt);
		}
}

/* ------------------------------------------------------------------------ */
/* The programs                                                              */
/* ------------------------------------------------------------------------ */

enum { X_ = 0, Y_ = 1, Z_ = 2 };

static struct l_prog progs[] = {
	{"SB", 2, {2, 2}, {{ST(X_), LD(Y_)}, {ST(Y_), LD(X_)}}, BASE},
	{"SB+membars", 2, {3, 3},
	 {{ST(X_), MB, LD(Y_)}, {ST(Y_), MB, LD(X_)}}, BASE | K(MEMBAR)},
	{"SB+membar+po", 2, {3, 2},
	 {{ST(X_), MB, LD(Y_)}, {ST(Y_), LD(X_)}}, BASE | K(MEMBAR)},
	{"SB+atomics", 2, {2, 2}, {{SW(X_), LD(Y_)}, {SW(Y_), LD(X_)}},
	 BASE | K(MEMBAR) | K(ATOMICITY)},
	{"MP", 2, {2, 2}, {{ST(X_), ST(Y_)}, {LD(Y_), LD(X_)}},
	 BASE | K(LOAD_ORDER)},
	{"MP+membar", 2, {3, 3},
	 {{ST(X_), MB, ST(Y_)}, {LD(Y_), MB, LD(X_)}}, BASE | K(LOAD_ORDER)},
	{"MP+atomics", 2, {2, 2}, {{SW(X_), SW(Y_)}, {LD(Y_), LD(X_)}},
	 BASE | K(LOAD_ORDER) | K(ATOMICITY)},
	{"LB", 2, {2, 2}, {{LD(X_), ST(Y_)}, {LD(Y_), ST(X_)}},
	 BASE | K(LOAD_STORE)},
	{"S", 2, {2, 2}, {{ST(X_), ST(Y_)}, {LD(Y_), ST(X_)}},
	 BASE | K(LOAD_STORE)},
	{"R", 2, {2, 2}, {{ST(X_), ST(Y_)}, {ST(Y_), LD(X_)}}, BASE},
	{"R+membar", 2, {2, 3}, {{ST(X_), ST(Y_)}, {ST(Y_), MB, LD(X_)}},
	 BASE | K(MEMBAR)},
	{"2+2W", 2, {2, 2}, {{ST(X_), ST(Y_)}, {ST(Y_), ST(X_)}}, BASE},
	{"IRIW", 4, {1, 1, 2, 2},
	 {{ST(X_)}, {ST(Y_)}, {LD(X_), LD(Y_)}, {LD(Y_), LD(X_)}},
	 BASE | K(LOAD_ORDER)},
	{"IRIW+membars", 4, {1, 1, 3, 3},
	 {{ST(X_)}, {ST(Y_)}, {LD(X_), MB, LD(Y_)}, {LD(Y_), MB, LD(X_)}},
	 BASE | K(LOAD_ORDER)},
	{"IRIW+atomics", 4, {1, 1, 2, 2},
	 {{SW(X_)}, {SW(Y_)}, {LD(X_), LD(Y_)}, {LD(Y_), LD(X_)}},
	 BASE | K(LOAD_ORDER) | K(ATOMICITY)},
	{"WRC", 3, {1, 2, 2},
	 {{ST(X_)}, {LD(X_), ST(Y_)}, {LD(Y_), LD(X_)}},
	 BASE | K(LOAD_ORDER) | K(LOAD_STORE)},
	{"ISA2", 3, {2, 2, 2},
	 {{ST(X_), ST(Y_)}, {LD(Y_), ST(Z_)}, {LD(Z_), LD(X_)}},
	 BASE | K(LOAD_ORDER) | K(LOAD_STORE)},
	{"CoRR", 2, {1, 2}, {{ST(X_)}, {LD(X_), LD(X_)}}, BASE},
	{"CoWR", 2, {2, 1}, {{ST(X_), LD(X_)}, {ST(X_)}}, BASE},
	{"CoWW+R", 2, {2, 2}, {{ST(X_), ST(X_)}, {LD(X_), LD(X_)}}, BASE},
	{"ATOM", 2, {1, 1}, {{SW(X_)}, {SW(X_)}}, BASE | K(ATOMICITY)},
	{"ATOM+ST", 2, {1, 2}, {{SW(X_)}, {ST(X_), LD(X_)}},
	 BASE | K(ATOMICITY)},
};

ParameterizedTestParameters(litmus, outcomes)
{
	return cr_make_param_array(struct l_prog, progs,
				   sizeof(progs) / sizeof(progs[0]));
}

ParameterizedTest(struct l_prog *p, litmus, outcomes)
{
	struct l_info in;
	struct l_set *set = calloc(1, sizeof(*set));
	struct m_state s0;
	struct l_outcome o;
	struct l_count cnt;
	char kinds[160];
	int k, n = 0;

	cr_assert_not_null(set);
	memset(&cnt, 0, sizeof(cnt));
	l_number(p, &in);
	memset(&s0, 0, sizeof(s0));
	m_run(p, &in, &s0, set);
	cr_assert_gt(set->n, 0);
	memset(&o, 0, sizeof(o));
	rfs(p, &in, set, &o, 0, &cnt);
	cr_assert_gt(cnt.allowed, 0, "%s: nothing allowed", p->name);
	kinds[0] = 0;
	for (k = 0; k < 7 && n < 140; k++)
		if (cnt.kinds[k])
			n += snprintf(kinds + n, sizeof(kinds) - (size_t)n,
				      " %s=%u", kind_names[k], cnt.kinds[k]);
	fprintf(stderr,
		"litmus %-14s candidates=%u allowed=%u forbidden=%u runs=%u%s\n",
		p->name, cnt.candidates, cnt.allowed, cnt.forbidden, cnt.runs,
		kinds);
	free(set);
}

/* ------------------------------------------------------------------------ */
/* Random programs (fixed seed): the same differential check                 */
/* ------------------------------------------------------------------------ */

static uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A random program of 2-3 strands over 2 addresses with at most 3 stores
 * and 4 loads, so that candidates stay few. */
static void rnd_prog(uint64_t *seed, struct l_prog *p)
{
	int ns = 0, nl = 0, t, i;

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "random");
	p->kinds = 0x7f; /* any tso-* kind */
	p->nt = 2 + (int)(rnd_next(seed) % 2);
	for (t = 0; t < p->nt; t++) {
		p->n[t] = 1 + (int)(rnd_next(seed) % 3);
		for (i = 0; i < p->n[t]; i++) {
			int r = (int)(rnd_next(seed) % 10), a;

			a = (int)(rnd_next(seed) % 2);
			if (r < 4 && ns < 3) {
				p->ins[t][i] = (struct l_ins)ST(a);
				ns++;
			} else if (r < 8 && nl < 4) {
				p->ins[t][i] = (struct l_ins)LD(a);
				nl++;
			} else if (r < 9 || ns >= 3 || nl >= 4) {
				p->ins[t][i] = (struct l_ins)MB;
			} else {
				p->ins[t][i] = (struct l_ins)SW(a);
				ns++;
				nl++;
			}
		}
	}
}

Test(litmus, random_programs)
{
	struct l_set *set = calloc(1, sizeof(*set));
	struct l_count total;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned n;

	cr_assert_not_null(set);
	memset(&total, 0, sizeof(total));
	for (n = 0; n < 60; n++) {
		struct l_prog p;
		struct l_info in;
		struct m_state s0;
		struct l_outcome o;

		rnd_prog(&seed, &p);
		l_number(&p, &in);
		set->n = 0;
		memset(&s0, 0, sizeof(s0));
		m_run(&p, &in, &s0, set);
		memset(&o, 0, sizeof(o));
		rfs(&p, &in, set, &o, 0, &total);
	}
	fprintf(stderr,
		"litmus random x60      candidates=%u allowed=%u forbidden=%u "
		"runs=%u\n", total.candidates, total.allowed, total.forbidden,
		total.runs);
	free(set);
}
