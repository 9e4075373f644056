/*
 * tso_own.c - each strand's own-store entries (part of the TSO pass): per
 * 8-byte block, the youngest executed store of the strand to each byte and
 * its commit, for the own-store rules (a load must not read a value older
 * than its own earlier store). An entry is settled once all its stores
 * committed at or before the strand's position (tso_own_settled); settled
 * entries count as absent and leave the map through a per-strand queue,
 * in the order their stores finished committing. An entry holds one store
 * for all its live bytes; only stores that overlap partly give it a
 * per-byte record (the pass's `ownx` pool), which a store covering every
 * live byte gives back.
 */
#include <stddef.h>
#include <string.h>

#include "tso-internal.h"

/* The highest co of an own-store entry's used bytes. */
static void own_maxco(const struct msr_tso *t, struct tso_own *e)
{
	const struct tso_own_bytes *w;
	unsigned i;

	if (!e->wide) {
		e->maxco = e->co;
		return;
	}
	w = tso_own_bytes(t, e);
	e->maxco = 0;
	for (i = 0; i < 8; i++)
		if (w->sseq[i] && w->co[i] > e->maxco)
			e->maxco = w->co[i];
}

/* Give a wide entry's per-byte record back: it is one store again. */
static void own_narrow(struct msr_tso *t, struct tso_own *e)
{
	if (e->wide) {
		tso_pool_put(&t->ownx, e->wide - 1);
		e->wide = 0;
	}
}

/* The per-byte record of entry e, made from its one store when it has
 * none; NULL when memory is short. */
static struct tso_own_bytes *own_widen(struct msr_tso *t, struct tso_own *e)
{
	struct tso_own_bytes *w;
	size_t idx;
	unsigned i;

	if (e->wide)
		return tso_own_bytes(t, e);
	idx = tso_pool_get(&t->ownx);
	if (idx == SIZE_MAX)
		return NULL;
	if (idx >= UINT32_MAX) { /* past what `wide` can name */
		tso_pool_put(&t->ownx, idx);
		return NULL;
	}
	e->wide = (uint32_t)idx + 1;
	w = tso_own_bytes(t, e);
	for (i = 0; i < 8; i++) {
		bool on = e->live & (0x80u >> i);

		w->sseq[i] = on ? e->sseq : 0;
		w->co[i] = on ? e->co : 0;
	}
	return w;
}

/* Own-store entry `e` has every used byte committed: queue it to leave
 * the map once settled (own_retire). At most once per entry, so the queue
 * never holds more than the map. */
void tso_own_done(struct msr_tso *t, struct tso_strand *s,
		  struct tso_own *e)
{
	if (e->queued)
		return;
	if (s->done_len == s->done_cap &&
	    tso_ring_regrow((void **)&s->done, sizeof(*s->done),
			    &s->done_cap, &s->done_head, s->done_len,
			    s->done_cap ? 2 * s->done_cap : 64) < 0) {
		t->nomem = true;
		return;
	}
	s->done[(s->done_head + s->done_len++) & (s->done_cap - 1)] =
		(struct tso_done){e->key - 1, e->maxco}; /* key: pa8 + 1 */
	e->queued = 1;
}

/*
 * Retire the settled own-store entries (tso_own_settled) at the head of
 * the strand's done queue: nothing sees them any more. An entry stored to
 * since it was queued goes back to the tail while its stores have all
 * committed, else it is queued again when they have.
 */
static void own_retire(struct msr_tso *t, struct tso_strand *s)
{
#ifdef MSR_TSO_KEEP_SETTLED
	return; /* test builds: reports must not depend on retirement */
#endif
	while (s->done_len) {
		struct tso_done d = s->done[s->done_head];
		struct tso_own *e;

		if (d.maxco > s->f_ll)
			break;
		s->done_head = (s->done_head + 1) & (s->done_cap - 1);
		s->done_len--;
		e = tso_map_at(&s->own, d.pa8, false, sizeof(*e));
		if (!e)
			continue;
		e->queued = 0;
		if (tso_own_settled(e, s->f_ll)) {
			own_narrow(t, e);
			tso_map_del_hashed(&s->own, e, sizeof(*e),
					   offsetof(struct tso_own, hash));
		} else if (!e->pend) {
			tso_own_done(t, s, e);
		}
	}
}

void tso_own_store(struct msr_tso *t, struct tso_strand *s,
		   const struct msr_op_block *blk, uint64_t co, bool rmo)
{
	struct tso_own *e;
	bool fresh, queued;
	unsigned i, m;
	uint64_t h = tso_hash64(blk->pa8 + 1);

	own_retire(t, s);
	e = tso_map_put(&s->own, blk->pa8, h, sizeof(*e), &fresh);
	if (!e) {
		t->nomem = true;
		return;
	}
	queued = !fresh && e->queued; /* its queue record stays valid */
	if (!fresh && tso_own_settled(e, s->f_ll)) {
		own_narrow(t, e);
		fresh = true; /* as if it had left the map */
	}
	if (fresh) {
		/* every field set here: a new slot holds anything */
		e->sseq = blk->sseq;
		e->co = co;
		e->maxco = co;
		e->hash = (uint32_t)h;
		e->wide = 0;
		e->live = blk->mask;
		e->pend = co ? 0 : blk->mask;
		e->rmo = rmo ? blk->mask : 0;
		e->queued = queued;
		if (co)
			tso_own_done(t, s, e);
		return;
	}
	if (!(e->live & ~blk->mask)) {
		/* the store covers every byte of the ones before it */
		own_narrow(t, e);
		e->sseq = blk->sseq;
		e->co = co;
	} else {
		struct tso_own_bytes *w = own_widen(t, e);

		if (!w) {
			t->nomem = true;
			return;
		}
		for (m = blk->mask; m; m &= ~(0x80u >> i)) {
			i = (unsigned)__builtin_clz(m) - 24u;
			w->sseq[i] = blk->sseq;
			w->co[i] = co;
		}
	}
	e->live |= blk->mask;
	e->rmo = (uint8_t)(rmo ? e->rmo | blk->mask : e->rmo & ~blk->mask);
	if (!co) {
		e->pend |= blk->mask;
	} else { /* committed before it executed: any co, look again */
		e->pend &= (uint8_t)~blk->mask;
		own_maxco(t, e);
		if (!e->pend)
			tso_own_done(t, s, e);
	}
}
