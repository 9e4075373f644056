/*
 * history.c - a bounded ring of recent events with per-strand and
 * per-8-byte-block back links, so a report can list "the last N events
 * that touched this strand or this block" without keeping the trace.
 *
 * Memory is fixed by the ring size: the block index is rebuilt from the
 * ring whenever it holds twice as many blocks as the ring has events, so
 * it never grows with trace length. Adding an event is O(1) amortised.
 * Independent of the engine; never prints or exits.
 */
#include "engine-internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NO_LINK UINT64_MAX

struct hslot {
	struct msr_event ev;
	uint64_t prev_strand; /* history seq, NO_LINK = none */
	uint64_t prev_block;
	int strand;           /* -1 = none */
	uint64_t pa8;         /* UINT64_MAX = none */
};

struct msr_history {
	struct hslot *ring;
	uint64_t cap;         /* power of two */
	uint64_t next;        /* seq of the next event added */
	uint64_t strand_last[MSR_MAX_STRANDS];
	struct msr_map blocks; /* pa8 -> low 32 bits of its newest event's seq */
	uint8_t has_tnum[MSR_CODE_LIMIT];
	uint8_t has_pa[MSR_CODE_LIMIT];
};

int msr_history_create(size_t ring_events, struct msr_history **out,
		       struct msr_error *err)
{
	struct msr_history *h = calloc(1, sizeof(*h));
	uint64_t cap = 16;

	*out = NULL;
	if (!ring_events)
		ring_events = 65536;
	while (cap < ring_events)
		cap *= 2;
	if (!h)
		goto nomem;
	h->cap = cap;
	h->ring = calloc((size_t)cap, sizeof(*h->ring));
	if (!h->ring || msr_map_init(&h->blocks, 1024) < 0)
		goto nomem;
	for (unsigned i = 0; i < MSR_MAX_STRANDS; i++)
		h->strand_last[i] = NO_LINK;
	for (unsigned c = 0; c < MSR_CODE_LIMIT; c++) {
		const struct msr_msgdef *d = msr_msgdef_get(c);

		if (!d)
			continue;
		h->has_tnum[c] = d->other_tnum_at != 0;
		for (unsigned f = 0; f < MSR_MAX_FIELDS && d->fields[f]; f++) {
			if (d->fields[f] == MSR_F_TNUM)
				h->has_tnum[c] = 1;
			if (d->fields[f] == MSR_F_PA)
				h->has_pa[c] = 1;
		}
	}
	h->has_pa[MSR_CSR_READ] = h->has_pa[MSR_PIO_READ] = 1;
	*out = h;
	return MSR_OK;
nomem:
	msr_history_destroy(h);
	return msr_error_set(err, MSR_E_NOMEM, "engine", NULL,
			     "out of memory creating an event history of %zu events",
			     ring_events);
}

void msr_history_destroy(struct msr_history *h)
{
	if (!h)
		return;
	free(h->ring);
	msr_map_release(&h->blocks);
	free(h);
}

static struct hslot *slot_of(const struct msr_history *h, uint64_t seq)
{
	if (seq == NO_LINK || seq >= h->next || h->next - seq > h->cap)
		return NULL;
	return &h->ring[seq & (h->cap - 1)];
}

/* Drop index entries whose events left the ring (keeps memory bounded). */
static void rebuild_blocks(struct msr_history *h)
{
	uint64_t first = h->next > h->cap ? h->next - h->cap : 0;

	msr_map_release(&h->blocks);
	if (msr_map_init(&h->blocks, (size_t)h->cap) < 0)
		return;
	for (uint64_t q = first; q < h->next; q++) {
		struct hslot *s = &h->ring[q & (h->cap - 1)];

		if (s->pa8 != UINT64_MAX)
			msr_map_put(&h->blocks, s->pa8, (uint32_t)q);
	}
}

void msr_history_add(struct msr_history *h, const struct msr_event *ev)
{
	uint64_t seq = h->next++;
	struct hslot *s = &h->ring[seq & (h->cap - 1)];
	unsigned code = ev->code < MSR_CODE_LIMIT ? ev->code : 0;

	/* the payload only as far as it is used: most events have none (a
	 * fixed-size copy first: a variable one is a slow `rep movs`) */
	memcpy(&s->ev, ev, offsetof(struct msr_event, bytes));
	if (ev->nbytes)
		memcpy(s->ev.bytes, ev->bytes, ev->nbytes);
	s->prev_strand = s->prev_block = NO_LINK;
	s->strand = -1;
	s->pa8 = UINT64_MAX;
	if (h->has_tnum[code]) {
		s->strand = ev->tnum;
		s->prev_strand = h->strand_last[ev->tnum];
		h->strand_last[ev->tnum] = seq;
	}
	if (h->has_pa[code] && h->blocks.slots) {
		uint64_t pa8 = ev->pa & ~7ULL;
		uint32_t *v = msr_map_get(&h->blocks, pa8);

		s->pa8 = pa8;
		if (v) {
			/* the block's newest event; still in the ring => still it */
			uint64_t prev = seq - (uint32_t)((uint32_t)seq - *v);

			s->prev_block = slot_of(h, prev) ? prev : NO_LINK;
			*v = (uint32_t)seq;
		} else {
			msr_map_put(&h->blocks, pa8, (uint32_t)seq);
		}
		if (h->blocks.count > 2 * h->cap)
			rebuild_blocks(h);
	}
}

/* Newest event at or before `at` on one chain, starting from seq `q`. */
static uint64_t chain_start(const struct msr_history *h, uint64_t q,
			    uint64_t at, bool by_strand)
{
	for (;;) {
		struct hslot *s = slot_of(h, q);

		if (!s)
			return NO_LINK;
		if (s->ev.index <= at)
			return q;
		q = by_strand ? s->prev_strand : s->prev_block;
	}
}

size_t msr_history_context(const struct msr_history *h, int strand,
			   uint64_t pa8, uint64_t at, size_t n,
			   struct msr_event *out)
{
	uint64_t a = NO_LINK, b = NO_LINK;
	size_t k = 0;

	if (strand >= 0 && strand < MSR_MAX_STRANDS)
		a = chain_start(h, h->strand_last[strand], at, true);
	if (pa8 != UINT64_MAX && h->blocks.slots) {
		uint32_t *v = msr_map_get(&h->blocks, pa8 & ~7ULL);

		if (v) {
			uint64_t last = h->next - 1;
			uint64_t q = last - (uint32_t)((uint32_t)last - *v);

			if (slot_of(h, q))
				b = chain_start(h, q, at, false);
		}
	}
	/* merge both chains newest first, one copy of events on both */
	while (k < n && (a != NO_LINK || b != NO_LINK)) {
		uint64_t q = a == NO_LINK ? b : b == NO_LINK ? a : a > b ? a : b;
		struct hslot *s = slot_of(h, q);

		if (!s)
			break;
		out[k++] = s->ev;
		if (q == a)
			a = slot_of(h, s->prev_strand) ? s->prev_strand : NO_LINK;
		if (q == b)
			b = slot_of(h, s->prev_block) ? s->prev_block : NO_LINK;
	}
	for (size_t i = 0; i < k / 2; i++) {
		struct msr_event t = out[i];

		out[i] = out[k - 1 - i];
		out[k - 1 - i] = t;
	}
	return k;
}
