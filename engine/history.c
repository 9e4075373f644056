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

/* HAS_*: which chains an event code joins (table indexed by code) */
#define HAS_TNUM 1
#define HAS_PA 2

/* The event without its payload, which few events carry: that lives in
 * `bytes`, copied only when there is one. */
struct hslot {
	struct msr_event_head {
		unsigned char b[offsetof(struct msr_event, bytes)];
	} ev;
	uint64_t prev_strand; /* history seq, NO_LINK = none */
	uint64_t prev_block;
	uint8_t has;          /* HAS_*: the chains this event is on */
};

struct msr_history {
	struct hslot *ring;
	uint8_t (*bytes)[64]; /* payloads, same slots as ring */
	uint64_t cap;         /* power of two */
	uint64_t next;        /* seq of the next event added */
	uint64_t strand_last[MSR_MAX_STRANDS];
	struct msr_map blocks; /* pa8 -> low 32 bits of its newest event's seq */
	uint8_t has[MSR_CODE_LIMIT]; /* HAS_* per code */
};

/* A field of the stored event head (copied out: no type punning). */
static uint64_t slot_u64(const struct hslot *s, size_t off)
{
	uint64_t v;

	memcpy(&v, s->ev.b + off, sizeof(v));
	return v;
}

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
	h->bytes = calloc((size_t)cap, sizeof(*h->bytes));
	if (!h->ring || !h->bytes || msr_map_init(&h->blocks, 1024) < 0)
		goto nomem;
	for (unsigned i = 0; i < MSR_MAX_STRANDS; i++)
		h->strand_last[i] = NO_LINK;
	for (unsigned c = 0; c < MSR_CODE_LIMIT; c++) {
		const struct msr_msgdef *d = msr_msgdef_get(c);

		if (!d)
			continue;
		if (d->other_tnum_at)
			h->has[c] |= HAS_TNUM;
		for (unsigned f = 0; f < MSR_MAX_FIELDS && d->fields[f]; f++) {
			if (d->fields[f] == MSR_F_TNUM)
				h->has[c] |= HAS_TNUM;
			if (d->fields[f] == MSR_F_PA)
				h->has[c] |= HAS_PA;
		}
	}
	h->has[MSR_CSR_READ] |= HAS_PA;
	h->has[MSR_PIO_READ] |= HAS_PA;
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
	free(h->bytes);
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
	struct msr_map fresh;

	/* out of memory: keep the old index, still right, only bigger */
	if (msr_map_init(&fresh, (size_t)h->cap) < 0)
		return;
	msr_map_release(&h->blocks);
	h->blocks = fresh;
	for (uint64_t q = first; q < h->next; q++) {
		struct hslot *s = &h->ring[q & (h->cap - 1)];
		uint64_t pa = slot_u64(s, offsetof(struct msr_event, pa));

		if (s->has & HAS_PA)
			msr_map_put(&h->blocks, pa & ~7ULL, (uint32_t)q);
	}
}

/* A block's first event in the index (kept out of line: most events
 * find their block there). */
static __attribute__((noinline)) void new_block(struct msr_history *h,
						uint64_t pa8, uint64_t seq)
{
	msr_map_put(&h->blocks, pa8, (uint32_t)seq);
	if (h->blocks.count > 2 * h->cap)
		rebuild_blocks(h);
}

void msr_history_add(struct msr_history *h, const struct msr_event *ev)
{
	uint64_t seq = h->next++;
	size_t slot = (size_t)(seq & (h->cap - 1));
	struct hslot *s = &h->ring[slot];
	unsigned has = h->has[ev->code < MSR_CODE_LIMIT ? ev->code : 0];

	/* a fixed-size copy: a variable one is a slow `rep movs` */
	memcpy(&s->ev, ev, sizeof(s->ev));
	if (ev->nbytes)
		memcpy(h->bytes[slot], ev->bytes, ev->nbytes);
	s->prev_strand = s->prev_block = NO_LINK;
	if (has & HAS_TNUM) {
		s->prev_strand = h->strand_last[ev->tnum];
		h->strand_last[ev->tnum] = seq;
	}
	if (has & HAS_PA) { /* the block index always exists */
		uint64_t pa8 = ev->pa & ~7ULL;
		uint32_t *v = msr_map_get(&h->blocks, pa8);

		if (v) {
			/* the block's newest event; still in the ring => still it */
			uint64_t prev = seq - (uint32_t)((uint32_t)seq - *v);

			s->prev_block = seq - prev < h->cap ? prev : NO_LINK;
			*v = (uint32_t)seq;
		} else {
			new_block(h, pa8, seq);
		}
	}
	s->has = (uint8_t)has;
}

/* Newest event at or before `at` on one chain, starting from seq `q`. */
static uint64_t chain_start(const struct msr_history *h, uint64_t q,
			    uint64_t at, bool by_strand)
{
	for (;;) {
		struct hslot *s = slot_of(h, q);

		if (!s)
			return NO_LINK;
		if (slot_u64(s, offsetof(struct msr_event, index)) <= at)
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
		memcpy(&out[k], &s->ev, sizeof(s->ev));
		memset(out[k].bytes, 0, sizeof(out[k].bytes));
		if (out[k].nbytes)
			memcpy(out[k].bytes, h->bytes[s - h->ring],
			       out[k].nbytes);
		k++;
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
