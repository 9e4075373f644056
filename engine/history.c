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
 *
 * Shared, the writer and the reader each own one counter: `next` (written
 * only by the thread that adds) and `shown` (only by the one that queries);
 * queries read slots from `shown` back by at most `window`, which the
 * caller's flow control keeps out of the writer's way. The writer never
 * reads its slots again, so it writes them past its caches (stream.h).
 */
#include "engine-internal.h"
#include "hugepage.h"
#include "stream.h"

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
_Static_assert(sizeof(struct hslot) % 8 == 0, "msr_stream_copy takes 8-byte words");

struct msr_history {
	struct hslot *ring;
	uint8_t (*bytes)[64]; /* payloads, same slots as ring */
	uint64_t cap;         /* slots, power of two */
	uint64_t window;      /* events a query sees back from `shown` (<= cap) */
	bool shared;          /* adding does not move `shown` */
	uint8_t has[MSR_CODE_LIMIT]; /* HAS_* per code */
	/* shared, two threads write these: a cache line each */
	char pad0[64];
	uint64_t next;        /* seq of the next event added */
	char pad1[64];
	uint64_t shown;       /* queries see seqs below this */
	char pad2[64];
};

/* A field of a stored event (copied out: no type punning). */
static uint64_t slot_u64(const struct hslot *s, size_t off)
{
	uint64_t v;

	memcpy(&v, s->b + off, sizeof(v));
	return v;
}

/* The ring and payload arrays for `cap` slots; false when memory is short. */
static bool ring_alloc(uint64_t cap, struct hslot **ring, uint8_t (**bytes)[64])
{
	/* line-aligned: a 64-byte slot is then one cache line to write */
	*ring = msr_hugepage_alloc((size_t)cap * sizeof(**ring));
	/* payloads are read back only as far as they were written */
	*bytes = msr_hugepage_alloc((size_t)cap * sizeof(**bytes));
	if (*ring && *bytes)
		return true;
	free(*ring);
	free(*bytes);
	return false;
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
	h->cap = h->window = cap;
	if (!ring_alloc(cap, &h->ring, &h->bytes))
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

uint64_t msr_history_share(struct msr_history *h, uint64_t lag)
{
	uint64_t cap = h->window;
	struct hslot *ring;
	uint8_t (*bytes)[64];

	if (lag > (UINT64_C(1) << 32))
		return 0;
	while (cap < h->window + lag)
		cap *= 2;
	if (cap != h->cap) {
		if (!ring_alloc(cap, &ring, &bytes))
			return 0;
		free(h->ring);
		free(h->bytes);
		h->ring = ring;
		h->bytes = bytes;
		h->cap = cap;
	}
	h->shared = lag > 0;
	return cap - h->window;
}

void msr_history_add(struct msr_history *h, const struct msr_event *ev)
{
	size_t slot = (size_t)(h->next++ & (h->cap - 1));

	/* fixed-size copies: a variable one is a slow `rep movs` */
	if (h->shared)
		msr_stream_copy(&h->ring[slot], ev, sizeof(h->ring[slot]));
	else
		memcpy(&h->ring[slot], ev, sizeof(h->ring[slot]));
	if (ev->nbytes)
		memcpy(h->bytes[slot], ev->bytes, ev->nbytes);
	if (!h->shared)
		h->shown = h->next;
}

void msr_history_show(struct msr_history *h, uint64_t upto)
{
	if (upto > h->shown)
		h->shown = upto;
}

uint64_t msr_history_shown(const struct msr_history *h)
{
	return h->shown;
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
	return h->shown > h->window ? h->shown - h->window : 0;
}

/* One past the newest held event whose index is <= at (oldest_seq when
 * none is). */
static uint64_t end_at(const struct msr_history *h, uint64_t at)
{
	uint64_t lo = oldest_seq(h), hi = h->shown;

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

	for (uint64_t q = end_at(h, at); k < n && q < h->shown; q++) {
		const struct hslot *s = slot_at(h, q);

		if (!slot_touches(h, s, strand, pa8))
			continue;
		copy_out(h, s, &out[k++]);
	}
	return k;
}

bool msr_history_get(const struct msr_history *h, uint64_t seq,
		     struct msr_event *out)
{
	if (seq >= h->shown || seq < oldest_seq(h))
		return false;
	copy_out(h, slot_at(h, seq), out);
	return true;
}

bool msr_history_touches(const struct msr_history *h, int strand,
			 uint64_t pa8, uint64_t index)
{
	uint64_t q = end_at(h, index);

	return q > oldest_seq(h) && slot_index(h, q - 1) == index &&
	       slot_touches(h, slot_at(h, q - 1), strand, pa8);
}
