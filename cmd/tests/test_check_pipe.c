/*
 * test_check_pipe.c - the check pipe hands the sink every record, in order
 * and with its contents, across many chunks: operations of 1 to 8 blocks
 * with 0 to 8 read sources, commits and (large) violations, each after the
 * sink was told how many events the replay had counted before it; the
 * replay never runs more than `lag` events ahead; a chunk of few records
 * reaches the sink once it covers a quarter of the lag; an empty pipe; two
 * pipes at once; the sink's optional `warm` hint names every commit's and
 * operation's strand and first block, in order, records ahead of it.
 */
#include <criterion/criterion.h>

#include "check-pipe-internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { K_COMMIT = 1, K_OP, K_VIOL };

/* What the sink saw, as (kind, key, events told before it) triples, and
 * content mismatches. */
struct seen {
	size_t n, cap;
	uint64_t *key, *ev;
	uint8_t *kind;
	unsigned bad;
	uint64_t told;            /* the last count the sink was told */
	_Atomic uint64_t told_at; /* the same, for the replay's thread */
	/* warm hints: strand << 56 | pa8, and how many records had been
	 * delivered when each came */
	size_t nw, wcap;
	uint64_t *wkey, *wat;
};

static void note(struct seen *s, uint8_t kind, uint64_t key, uint64_t ev)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->key = realloc(s->key, s->cap * sizeof(*s->key));
		s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
		s->kind = realloc(s->kind, s->cap);
		cr_assert(s->key && s->ev && s->kind);
	}
	s->key[s->n] = key;
	s->ev[s->n] = ev;
	s->kind[s->n++] = kind;
}

static void make_op(uint64_t i, struct msr_op *op)
{
	memset(op, 0, sizeof(*op));
	op->kind = (uint8_t)(i % 4);
	op->strand = (uint8_t)(i % 64);
	op->iseq = i;
	op->pc = i * 4;
	op->event = i;
	op->nblocks = (uint8_t)(1 + i % MSR_OP_MAX_BLOCKS);
	for (unsigned b = 0; b < op->nblocks; b++) {
		struct msr_op_block *k = &op->blk[b];

		k->pa8 = i * 64 + 8 * b;
		k->mask = (uint8_t)(0xFF >> (b % 8));
		k->load[b % 8] = (uint8_t)i;
		k->store[7 - b % 8] = (uint8_t)~i;
		k->sseq = i + b;
		k->nrf = (uint8_t)((i + b) % 9);
		for (unsigned r = 0; r < k->nrf; r++) {
			k->rf[r].kind = (uint8_t)(r % 4);
			k->rf[r].mask = (uint8_t)(1u << r);
			k->rf[r].co = i * 8 + r;
			k->rf[r].sseq = r;
		}
		k->data_event = i + 1000 * b;
	}
}

/* Told only when the count grew. */
static void s_events(void *ctx, uint64_t upto)
{
	struct seen *s = ctx;

	if (upto <= s->told)
		s->bad++;
	s->told = upto;
	atomic_store(&s->told_at, upto);
}

static void s_commit(void *ctx, const struct msr_commit *c)
{
	struct seen *s = ctx;

	if (c->pa8 != c->co * 8 || c->data[7] != (uint8_t)c->co)
		s->bad++;
	note(s, K_COMMIT, c->co, s->told);
}

static void s_op(void *ctx, const struct msr_op *op)
{
	struct seen *s = ctx;
	struct msr_op want;

	make_op(op->iseq, &want);
	if (memcmp(op, &want, offsetof(struct msr_op, blk)))
		s->bad++;
	for (unsigned b = 0; b < want.nblocks; b++) {
		const struct msr_op_block *x = &op->blk[b], *y = &want.blk[b];

		if (x->pa8 != y->pa8 || x->mask != y->mask || x->sseq != y->sseq ||
		    x->nrf != y->nrf || x->data_event != y->data_event ||
		    memcmp(x->load, y->load, 8) || memcmp(x->store, y->store, 8) ||
		    memcmp(x->rf, y->rf, y->nrf * sizeof(y->rf[0])))
			s->bad++;
	}
	note(s, K_OP, op->iseq, s->told);
}

static void s_viol(void *ctx, const struct msr_violation *v)
{
	struct seen *s = ctx;
	char want[sizeof(v->message)];

	snprintf(want, sizeof(want), "violation %llu", (unsigned long long)v->iseq);
	if (strcmp(v->message, want) || v->proof[MSR_PROOF_MAX - 1].iseq != v->iseq)
		s->bad++;
	note(s, K_VIOL, v->iseq, s->told);
}

/* Push n events and records, mixed; returns the expected sequence and adds
 * the events counted to *nev. */
static void push_mixed(struct cpipe *p, size_t n, struct seen *want, uint64_t *nev)
{
	struct msr_op op;
	struct msr_commit c;
	struct msr_violation *v = calloc(1, sizeof(*v));

	cr_assert(v);
	for (uint64_t i = 0; i < n; i++) {
		switch (i % 7) {
		case 0: case 2: case 4:
			cpipe_event(p);
			++*nev;
			break;
		case 1: case 5:
			make_op(i, &op);
			cpipe_op(p, &op);
			note(want, K_OP, i, *nev);
			break;
		case 3:
			memset(&c, 0, sizeof(c));
			c.co = i;
			c.pa8 = i * 8;
			c.data[7] = (uint8_t)i;
			cpipe_commit(p, &c);
			note(want, K_COMMIT, i, *nev);
			break;
		default:
			if (i % 700 != 6)
				break;
			memset(v, 0, sizeof(*v));
			v->iseq = i;
			v->proof[MSR_PROOF_MAX - 1].iseq = i;
			snprintf(v->message, sizeof(v->message), "violation %llu",
				 (unsigned long long)i);
			cpipe_violation(p, v);
			note(want, K_VIOL, i, *nev);
			break;
		}
	}
	free(v);
}

static void expect_same(const struct seen *got, const struct seen *want)
{
	cr_assert_eq(got->bad, 0, "%u records with other contents", got->bad);
	cr_assert_eq(got->n, want->n);
	for (size_t i = 0; i < want->n; i++) {
		cr_assert_eq(got->kind[i], want->kind[i], "record %zu", i);
		cr_assert_eq(got->key[i], want->key[i], "record %zu", i);
		cr_assert_eq(got->ev[i], want->ev[i], "record %zu: told %llu events, "
			     "not %llu", i, (unsigned long long)got->ev[i],
			     (unsigned long long)want->ev[i]);
	}
}

static void s_warm(void *ctx, unsigned strand, uint64_t pa8)
{
	struct seen *s = ctx;

	if (s->nw == s->wcap) {
		s->wcap = s->wcap ? 2 * s->wcap : 1024;
		s->wkey = realloc(s->wkey, s->wcap * sizeof(*s->wkey));
		s->wat = realloc(s->wat, s->wcap * sizeof(*s->wat));
		cr_assert(s->wkey && s->wat);
	}
	s->wkey[s->nw] = (uint64_t)strand << 56 | pa8;
	s->wat[s->nw++] = s->n;
}

static void seen_free(struct seen *s)
{
	free(s->wkey);
	free(s->wat);
	free(s->key);
	free(s->ev);
	free(s->kind);
}

Test(check_pipe, every_record_in_order_across_chunks)
{
	struct seen got = {0}, want = {0};
	struct cpipe_sink sink = {&got, s_events, s_commit, s_op, s_viol, NULL};
	struct cpipe *p = cpipe_start(&sink, 1u << 30);
	uint64_t nev = 0;

	cr_assert(p);
	/* about 46 MB of records: the 8 MiB ring of chunks wraps five times */
	push_mixed(p, 200000, &want, &nev);
	cpipe_finish(p);
	expect_same(&got, &want);
	cr_assert_eq(got.told, nev, "told %llu events at the end, not %llu",
		     (unsigned long long)got.told, (unsigned long long)nev);
	seen_free(&got);
	seen_free(&want);
}

/*
 * The hint comes for each commit (its strand and block) and each operation
 * (its strand and first block), in record order, before the record is
 * delivered, and on average several records before it.
 */
Test(check_pipe, warm_names_each_record_ahead)
{
	struct seen got = {0}, want = {0};
	struct cpipe_sink sink = {&got, s_events, s_commit, s_op, s_viol, s_warm};
	struct cpipe *p = cpipe_start(&sink, 1u << 30);
	uint64_t nev = 0, lead = 0;
	size_t j = 0;

	cr_assert(p);
	push_mixed(p, 100000, &want, &nev);
	cpipe_finish(p);
	expect_same(&got, &want);
	for (size_t i = 0; i < got.n; i++) {
		uint64_t k = got.key[i], key;

		if (got.kind[i] == K_VIOL)
			continue;
		/* push_mixed: commit co k has strand 0 and block 8k; op k strand
		 * k % 64 and first block 64k */
		key = got.kind[i] == K_COMMIT ? k * 8 : (k % 64) << 56 | k * 64;
		cr_assert_lt(j, got.nw, "no hint for record %zu", i);
		cr_assert_eq(got.wkey[j], key, "hint %zu (record %zu): 0x%llx",
			     j, i, (unsigned long long)got.wkey[j]);
		cr_assert_leq(got.wat[j], i, "hint %zu came after its record", j);
		lead += i - got.wat[j];
		j++;
	}
	cr_assert_eq(j, got.nw, "%zu hints for %zu records", got.nw, j);
	cr_assert_geq(lead, 4 * (uint64_t)j, "hints %llu records ahead on "
		      "average, not 4 or more",
		      (unsigned long long)(lead / (j ? j : 1)));
	seen_free(&got);
	seen_free(&want);
}

/* lag events ahead at most, with records among the events or none */
static void lag_run(uint64_t lag, uint64_t n, uint64_t commit_every)
{
	struct seen got = {0};
	struct cpipe_sink sink = {&got, s_events, s_commit, s_op, s_viol, NULL};
	struct cpipe *p = cpipe_start(&sink, lag);
	struct msr_commit c;
	uint64_t co = 0;

	cr_assert(p);
	for (uint64_t i = 0; i < n; i++) {
		cpipe_event(p);
		/* event number i is counted: the sink has been told more
		 * than i - lag of them */
		cr_assert_lt(i, atomic_load(&got.told_at) + lag, "event %llu",
			     (unsigned long long)i);
		if (commit_every && i % commit_every == 0) {
			memset(&c, 0, sizeof(c));
			c.co = ++co;
			c.pa8 = co * 8;
			c.data[7] = (uint8_t)co;
			cpipe_commit(p, &c);
		}
	}
	cpipe_finish(p);
	cr_assert_eq(got.bad, 0);
	cr_assert_eq(got.n, co);
	cr_assert_eq(got.told, n);
	for (size_t k = 0; k < got.n; k++)
		cr_assert_eq(got.ev[k], 1 + (got.key[k] - 1) * commit_every,
			     "commit %llu", (unsigned long long)got.key[k]);
	seen_free(&got);
}

Test(check_pipe, replay_stays_within_lag)
{
	lag_run(100, 300000, 1000);
	lag_run(1, 20000, 7);
}

Test(check_pipe, events_without_records)
{
	lag_run(1000, 1000000, 0);
}

/*
 * Events without records fill a chunk slowly: the sink must still see them
 * while the replay is far below its limit, or the replay would reach the
 * limit with the events it waits for still in its own chunk.
 */
Test(check_pipe, sparse_chunk_reaches_the_sink)
{
	struct seen got = {0};
	struct cpipe_sink sink = {&got, s_events, s_commit, s_op, s_viol, NULL};
	struct cpipe *p = cpipe_start(&sink, 4000);
	struct timespec nap = {0, 1000000};

	cr_assert(p);
	for (int i = 0; i < 2000; i++)
		cpipe_event(p);
	/* no more calls: only a chunk already handed over can tell the sink */
	for (int ms = 0; ms < 20000 && atomic_load(&got.told_at) < 1000; ms++)
		nanosleep(&nap, NULL);
	cr_assert_geq(atomic_load(&got.told_at), 1000,
		      "the sink was told %llu of 2000 events (the limit: 4000)",
		      (unsigned long long)atomic_load(&got.told_at));
	cpipe_finish(p);
	cr_assert_eq(got.told, 2000);
	seen_free(&got);
}

Test(check_pipe, empty_pipe_finishes)
{
	struct seen got = {0};
	struct cpipe_sink sink = {&got, s_events, s_commit, s_op, s_viol, NULL};
	struct cpipe *p = cpipe_start(&sink, 10);

	cr_assert(p);
	cpipe_finish(p);
	cr_assert_eq(got.n, 0);
	cr_assert_eq(got.told, 0);
	cpipe_finish(NULL);
	cr_assert_null(cpipe_start(&sink, 0), "a lag of 0 events is refused");
}

Test(check_pipe, two_pipes_at_once)
{
	struct seen got[2] = {{0}}, want[2] = {{0}};
	struct cpipe *p[2];
	uint64_t nev[2] = {0, 0};

	for (int k = 0; k < 2; k++) {
		struct cpipe_sink sink = {&got[k], s_events, s_commit, s_op, s_viol, NULL};

		p[k] = cpipe_start(&sink, 5000);
		cr_assert(p[k]);
	}
	push_mixed(p[0], 30000, &want[0], &nev[0]);
	push_mixed(p[1], 50000, &want[1], &nev[1]);
	push_mixed(p[0], 10, &want[0], &nev[0]);
	cpipe_finish(p[1]);
	cpipe_finish(p[0]);
	for (int k = 0; k < 2; k++) {
		expect_same(&got[k], &want[k]);
		cr_assert_eq(got[k].told, nev[k]);
		seen_free(&got[k]);
		seen_free(&want[k]);
	}
}
