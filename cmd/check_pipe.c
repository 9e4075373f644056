/*
 * check_pipe.c - queue the engine's output to a helper thread, in order.
 *
 * Records are 8-byte aligned: a header (type, count, length, events added
 * so far) and a payload holding only the bytes in use: an operation's
 * blocks without their unused read sources. The producer fills one chunk
 * at a time and publishes it whole; two counting semaphores (`filled`,
 * `space`) pass chunks back and forth and order their contents, including
 * the shared history's slots written before a chunk is published. After
 * each chunk the helper publishes the event count it has handed on
 * (`done`); the producer reads it only when it nears its limit. A chunk is
 * handed over when full or once it holds a quarter of the lag's events,
 * whichever comes first: with few records an event (a replay without a
 * step log queues about 11 bytes an event, one with --no-tso only the
 * counts) a full chunk would hold more events than the lag allows, and the
 * producer would stop at its limit while the helper could not yet see the
 * chunk it was waiting for: the two threads would take turns instead of
 * running together. The producer never reads a record again: it composes
 * each one and copies it into the chunk past its caches (stream.h),
 * fencing those copies and the history's before it publishes a chunk.
 * The helper reads a few records ahead of the one it delivers and passes
 * the sink an optional hint of the strand and block each will touch
 * (`warm`), so that the TSO pass's map misses overlap earlier work.
 */
#include "check-pipe-internal.h"

#include "handoff.h"
#include "hugepage.h"
#include "stream.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* REC_EVENTS: only the count (the producer waits for the helper) */
enum { REC_EVENTS = 1, REC_COMMIT, REC_OP, REC_VIOLATION, REC_END };

struct rec {
	uint16_t type;
	uint16_t count;  /* REC_OP: blocks */
	uint32_t len;    /* bytes of payload (a multiple of 8) */
	uint64_t events; /* events added before the record was emitted */
};

#define OP_FIXED offsetof(struct msr_op, blk)
#define BLK_FIXED offsetof(struct msr_op_block, rf)

struct cpipe {
	struct cpipe_count count; /* first: cpipe_event reads it inline */
	char pad_count[64 - sizeof(struct cpipe_count)];
	struct cpipe_sink sink;
	struct msr_handoff h;
	uint8_t *chunks;              /* one block: CPIPE_CHUNKS chunks */
	uint8_t *chunk[CPIPE_CHUNKS];
	size_t used[CPIPE_CHUNKS]; /* bytes of each published chunk */
	uint64_t lag;
	/* each thread writes its own fields: apart by a cache line or more */
	char pad0[64];
	_Atomic uint64_t done; /* events the helper has handed on */
	char pad1[64];
	/* producer */
	unsigned put;
	uint8_t *w, *wend;
	uint64_t limit;   /* no wait for the helper needed below this count */
	uint64_t post_at; /* the chunk is handed over at this count */
	char pad2[64];
	/* helper: the records are rebuilt here (the sink may keep nothing) */
	uint64_t told;          /* events handed on */
	struct msr_op op;
};

/* cpipe_event (check-pipe-internal.h) reads the count through the pipe's
 * own pointer. */
_Static_assert(offsetof(struct cpipe, count) == 0,
	       "the event count starts struct cpipe");

/* The most events a chunk covers: a quarter of the lag (at least one). */
static uint64_t chunk_events(uint64_t lag)
{
	return (lag + 3) / 4;
}

/* The count at which cpipe_event_check is next due: the lesser of the
 * hand-over and the wait limit. Both only grow (publish moves post_at on),
 * so a value set earlier never passes either. */
static void set_check_at(struct cpipe *p)
{
	p->count.check_at = p->post_at < p->limit ? p->post_at : p->limit;
}

/* Hand the chunk being written to the helper. */
static void post_chunk(struct cpipe *p)
{
	msr_stream_fence();
	p->used[p->put % CPIPE_CHUNKS] =
		(size_t)(p->w - p->chunk[p->put % CPIPE_CHUNKS]);
	sem_post(&p->h.filled);
}

/* ... and go on in the next free one. */
static void publish(struct cpipe *p)
{
	post_chunk(p);
	p->put++;
	msr_handoff_wait(&p->h.space);
	p->w = p->chunk[p->put % CPIPE_CHUNKS];
	p->wend = p->w + CPIPE_CHUNK;
	p->post_at = p->count.events + chunk_events(p->lag);
}

/* Every payload is whole 8-byte words, so records stay 8-aligned. */
_Static_assert(sizeof(struct msr_commit) % 8 == 0 &&
	       sizeof(struct msr_violation) % 8 == 0 && OP_FIXED % 8 == 0 &&
	       BLK_FIXED % 8 == 0 &&
	       sizeof(((struct msr_op_block *)0)->rf[0]) % 8 == 0 &&
	       sizeof(((struct msr_op_block *)0)->data_event) % 8 == 0,
	       "record payloads are whole 8-byte words");

/* Append a record: its header, then `len` bytes of payload. */
static void put(struct cpipe *p, unsigned type, unsigned count,
		const void *payload, size_t len)
{
	struct rec h = {(uint16_t)type, (uint16_t)count, (uint32_t)len,
			p->count.events};

	if ((size_t)(p->wend - p->w) < sizeof(h) + len)
		publish(p);
	msr_stream_copy(p->w, &h, sizeof(h));
	p->w += sizeof(h);
	if (len)
		msr_stream_copy(p->w, payload, len);
	p->w += len;
}

/* Tell the helper the count and hand the chunk over: once it has finished
 * the chunk, `done` reaches the count itself. */
static void publish_count(struct cpipe *p)
{
	put(p, REC_EVENTS, 0, NULL, 0);
	publish(p);
}

void cpipe_event_check(struct cpipe *p)
{
	uint64_t n = p->count.events;

	if (n >= p->post_at)
		publish_count(p);
	while (n >= p->limit) {
		p->limit = atomic_load_explicit(&p->done, memory_order_acquire) + p->lag;
		if (n < p->limit)
			break;
		publish_count(p);
	}
	set_check_at(p);
}

void cpipe_commit(struct cpipe *p, const struct msr_commit *c)
{
	put(p, REC_COMMIT, 0, c, sizeof(*c));
}

/* A block's n (<= 8) read sources, in copies of constant length: a memcpy
 * of a variable length compiles to `rep movsq`, whose start-up costs more
 * than copying the one to eight sources a block has. */
static inline void copy_rf(void *dst, const void *src, unsigned n)
{
	enum { RF = sizeof(((struct msr_op_block *)0)->rf[0]) };

	switch (n) {
	case 8: memcpy(dst, src, 8 * RF); break;
	case 7: memcpy(dst, src, 7 * RF); break;
	case 6: memcpy(dst, src, 6 * RF); break;
	case 5: memcpy(dst, src, 5 * RF); break;
	case 4: memcpy(dst, src, 4 * RF); break;
	case 3: memcpy(dst, src, 3 * RF); break;
	case 2: memcpy(dst, src, 2 * RF); break;
	case 1: memcpy(dst, src, RF); break;
	default: break;
	}
}

static size_t blk_bytes(const struct msr_op_block *b)
{
	return BLK_FIXED + b->nrf * sizeof(b->rf[0]) + sizeof(b->data_event);
}

void cpipe_op(struct cpipe *p, const struct msr_op *op)
{
	/* the packed form leaves out unused read sources: never longer */
	_Alignas(8) uint8_t buf[sizeof(*op)];
	uint8_t *d = buf;

	memcpy(d, op, OP_FIXED);
	d += OP_FIXED;
	for (unsigned i = 0; i < op->nblocks; i++) {
		const struct msr_op_block *b = &op->blk[i];
		size_t nrf = b->nrf * sizeof(b->rf[0]);

		memcpy(d, b, BLK_FIXED);
		copy_rf(d + BLK_FIXED, b->rf, b->nrf);
		memcpy(d + BLK_FIXED + nrf, &b->data_event, sizeof(b->data_event));
		d += blk_bytes(b);
	}
	put(p, REC_OP, op->nblocks, buf, (size_t)(d - buf));
}

void cpipe_violation(struct cpipe *p, const struct msr_violation *v)
{
	put(p, REC_VIOLATION, 0, v, sizeof(*v));
}

static void deliver_op(struct cpipe *p, const uint8_t *d, unsigned nblocks)
{
	struct msr_op *op = &p->op;

	memcpy(op, d, OP_FIXED);
	d += OP_FIXED;
	for (unsigned i = 0; i < nblocks; i++) {
		struct msr_op_block *b = &op->blk[i];
		size_t nrf;

		memcpy(b, d, BLK_FIXED);
		nrf = b->nrf * sizeof(b->rf[0]);
		copy_rf(b->rf, d + BLK_FIXED, b->nrf);
		memcpy(&b->data_event, d + BLK_FIXED + nrf, sizeof(b->data_event));
		d += blk_bytes(b);
	}
	p->sink.op(p->sink.ctx, op);
}

/*
 * How many records ahead the sink is told what block they touch: enough
 * for a miss to memory to arrive while the records before are handled
 * (a few hundred nanoseconds each on large footprints); 24 did no better.
 */
#define WARM_AHEAD 8

/* Tell the sink which block the record at `d` touches; the next record. */
static const uint8_t *warm_rec(struct cpipe *p, const uint8_t *d)
{
	const struct rec *h = (const struct rec *)(const void *)d;
	const uint8_t *pl = (const uint8_t *)(h + 1);
	uint64_t pa8;

	if (h->type == REC_COMMIT) {
		memcpy(&pa8, pl + offsetof(struct msr_commit, pa8), sizeof(pa8));
		p->sink.warm(p->sink.ctx,
			     pl[offsetof(struct msr_commit, strand)], pa8);
	} else if (h->type == REC_OP && h->count) {
		/* the first block: the packed form keeps its fixed part */
		memcpy(&pa8, pl + OP_FIXED + offsetof(struct msr_op_block, pa8),
		       sizeof(pa8));
		p->sink.warm(p->sink.ctx, pl[offsetof(struct msr_op, strand)],
			     pa8);
	}
	return pl + h->len;
}

/* Hand one chunk's records to the sink; false at the end record. */
static bool deliver(struct cpipe *p, const uint8_t *d, size_t n)
{
	const uint8_t *end = d + n, *ahead = d;
	struct msr_commit c;

	if (p->sink.warm)
		for (unsigned i = 0; i < WARM_AHEAD && ahead < end; i++)
			ahead = warm_rec(p, ahead);
	while (d < end) {
		const struct rec *h = (const struct rec *)(const void *)d;
		const uint8_t *pl = (const uint8_t *)(h + 1);

		if (p->sink.warm && ahead < end)
			ahead = warm_rec(p, ahead);
		if (h->events > p->told) {
			p->told = h->events;
			p->sink.events(p->sink.ctx, p->told);
		}
		switch (h->type) {
		case REC_EVENTS:
			break;
		case REC_COMMIT:
			memcpy(&c, pl, sizeof(c));
			p->sink.commit(p->sink.ctx, &c);
			break;
		case REC_OP:
			deliver_op(p, pl, h->count);
			break;
		case REC_VIOLATION:
			/* rare and large: read in place (8-aligned) */
			p->sink.violation(p->sink.ctx,
					  (const struct msr_violation *)(const void *)pl);
			break;
		default:
			return false;
		}
		d = pl + h->len;
	}
	return true;
}

static void *helper_main(void *arg)
{
	struct cpipe *p = arg;
	bool more = true;

	for (unsigned get = 0; more; get++) {
		unsigned k = get % CPIPE_CHUNKS;

		msr_handoff_wait(&p->h.filled);
		more = deliver(p, p->chunk[k], p->used[k]);
		atomic_store_explicit(&p->done, p->told, memory_order_release);
		sem_post(&p->h.space);
	}
	return NULL;
}

static void pipe_free(struct cpipe *p)
{
	free(p->chunks);
	free(p);
}

struct cpipe *cpipe_start(const struct cpipe_sink *sink, uint64_t lag)
{
	struct cpipe *p;

	if (!lag || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->sink = *sink;
	p->lag = p->limit = lag;
	p->post_at = chunk_events(lag);
	set_check_at(p);
	atomic_init(&p->done, 0);
	/* 8-aligned records need 8-aligned chunks: one block, so that it can
	 * be on huge pages */
	p->chunks = msr_hugepage_alloc(CPIPE_CHUNKS * CPIPE_CHUNK);
	if (!p->chunks) {
		pipe_free(p);
		return NULL;
	}
	for (unsigned i = 0; i < CPIPE_CHUNKS; i++)
		p->chunk[i] = p->chunks + i * CPIPE_CHUNK;
	/* the producer holds chunk 0 from the start */
	p->w = p->chunk[0];
	p->wend = p->w + CPIPE_CHUNK;
	if (msr_handoff_start(&p->h, "msr-tso", CPIPE_CHUNKS - 1, helper_main, p)) {
		pipe_free(p);
		return NULL;
	}
	return p;
}

void cpipe_finish(struct cpipe *p)
{
	if (!p)
		return;
	put(p, REC_END, 0, NULL, 0);
	post_chunk(p);
	msr_handoff_join(&p->h);
	pipe_free(p);
}
