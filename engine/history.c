/*
 * history.c - a bounded ring of recent events, so a report can list "the
 * last N events that touched this strand or this 8-byte block" without
 * keeping the trace.
 *
 * Adding an event is one 64-byte copy into the ring (plus its payload,
 * which few events carry, into a side array): nothing is indexed, because
 * every event pays for an index and only the few events a report lists
 * use it. A query instead finds its starting point by binary search on the
 * event index (events arrive in stream order) and scans back through the
 * ring: O(log ring + ring) per listed violation. Memory is fixed by the
 * ring size. Independent of the engine; never prints or exits.
 */
#include "engine-internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* HAS_*: which events touch a strand or a block (table indexed by code) */
#define HAS_TNUM 1
#define HAS_PA 2

/* The event without its payload (64 bytes). */
struct hslot {
	unsigned char b[offsetof(struct msr_event, bytes)];
};

struct msr_history {
	struct hslot *ring;
	uint8_t (*bytes)[64]; /* payloads, same slots as ring */
	uint64_t cap;         /* power of two */
	uint64_t next;        /* seq of the next event added */
	uint8_t has[MSR_CODE_LIMIT]; /* HAS_* per code */
};

/* A field of a stored event (copied out: no type punning). */
static uint64_t slot_u64(const struct hslot *s, size_t off)
{
	uint64_t v;

	memcpy(&v, s->b + off, sizeof(v));
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
	/* line-aligned: a 64-byte slot is then one cache line to write */
	h->ring = aligned_alloc(64, ((size_t)cap * sizeof(*h->ring) + 63) & ~(size_t)63);
	h->bytes = calloc((size_t)cap, sizeof(*h->bytes));
	if (!h->ring || !h->bytes)
		goto nomem;
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
	free(h);
}

void msr_history_add(struct msr_history *h, const struct msr_event *ev)
{
	size_t slot = (size_t)(h->next++ & (h->cap - 1));

	/* a fixed-size copy: a variable one is a slow `rep movs` */
	memcpy(&h->ring[slot], ev, sizeof(h->ring[slot]));
	if (ev->nbytes)
		memcpy(h->bytes[slot], ev->bytes, ev->nbytes);
}

static const struct hslot *slot_at(const struct msr_history *h, uint64_t seq)
{
	return &h->ring[seq & (h->cap - 1)];
}

static uint64_t slot_index(const struct msr_history *h, uint64_t seq)
{
	return slot_u64(slot_at(h, seq), offsetof(struct msr_event, index));
}

static uint64_t oldest_seq(const struct msr_history *h)
{
	return h->next > h->cap ? h->next - h->cap : 0;
}

/* One past the newest held event whose index is <= at (oldest_seq when
 * none is). */
static uint64_t end_at(const struct msr_history *h, uint64_t at)
{
	uint64_t lo = oldest_seq(h), hi = h->next;

	if (hi > lo && slot_index(h, hi - 1) <= at)
		return hi;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (slot_index(h, mid) <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Does the stored event touch the strand (-1 = none; a strand number
 * above 255 matches no event either) or the block (UINT64_MAX = none)? */
static bool slot_touches(const struct msr_history *h, const struct hslot *s,
			 int strand, uint64_t pa8)
{
	uint16_t code;
	unsigned has;

	memcpy(&code, s->b + offsetof(struct msr_event, code), sizeof(code));
	has = h->has[code < MSR_CODE_LIMIT ? code : 0];
	if ((has & HAS_TNUM) && strand >= 0 &&
	    s->b[offsetof(struct msr_event, tnum)] == strand)
		return true;
	return (has & HAS_PA) && pa8 != UINT64_MAX &&
	       (slot_u64(s, offsetof(struct msr_event, pa)) & ~7ULL) ==
		       (pa8 & ~7ULL);
}

/* A stored event with its payload, as it was added. */
static void copy_out(const struct msr_history *h, const struct hslot *s,
		     struct msr_event *ev)
{
	memcpy(ev, s, sizeof(*s));
	memset(ev->bytes, 0, sizeof(ev->bytes));
	if (ev->nbytes)
		memcpy(ev->bytes, h->bytes[s - h->ring], ev->nbytes);
}

size_t msr_history_context(const struct msr_history *h, int strand,
			   uint64_t pa8, uint64_t at, size_t n,
			   struct msr_event *out)
{
	uint64_t first = oldest_seq(h), q = end_at(h, at);
	size_t k = 0;

	while (k < n && q > first) {
		const struct hslot *s = slot_at(h, --q);

		if (!slot_touches(h, s, strand, pa8))
			continue;
		copy_out(h, s, &out[k++]);
	}
	for (size_t i = 0; i < k / 2; i++) {
		struct msr_event t = out[i];

		out[i] = out[k - 1 - i];
		out[k - 1 - i] = t;
	}
	return k;
}

size_t msr_history_after(const struct msr_history *h, int strand,
			 uint64_t pa8, uint64_t at, size_t n,
			 struct msr_event *out)
{
	size_t k = 0;

	for (uint64_t q = end_at(h, at); k < n && q < h->next; q++) {
		const struct hslot *s = slot_at(h, q);

		if (!slot_touches(h, s, strand, pa8))
			continue;
		copy_out(h, s, &out[k++]);
	}
	return k;
}

bool msr_history_touches(const struct msr_history *h, int strand,
			 uint64_t pa8, uint64_t index)
{
	uint64_t q = end_at(h, index);

	return q > oldest_seq(h) && slot_index(h, q - 1) == index &&
	       slot_touches(h, slot_at(h, q - 1), strand, pa8);
}
