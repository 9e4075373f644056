/*
 * util-internal.h - the engine's hot-path containers: sequence-indexed ring
 * buffers, an open-addressing hash map from 64-bit keys to 32-bit slots, and
 * a fixed-size element pool with a free list.
 *
 * These never allocate per event: rings and maps grow by doubling (amortised
 * O(1)) up to an optional limit, pools reuse freed slots. They never print,
 * exit or keep global state.
 */
#ifndef MSR_ENGINE_UTIL_INTERNAL_H
#define MSR_ENGINE_UTIL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * A FIFO whose elements are addressed by a sequence number that is never
 * reused: the first element pushed has seq 1. Live elements have seq in
 * [head, tail). Growth keeps every element at slot (seq & (cap - 1)).
 */
struct msr_ring {
	unsigned char *buf;
	size_t esz;
	uint64_t cap;   /* power of two (0 before the first push) */
	uint64_t head;  /* seq of the oldest live element */
	uint64_t tail;  /* seq the next push gets */
	uint64_t limit; /* max live elements, 0 = unlimited */
};

void msr_ring_init(struct msr_ring *r, size_t esz, uint64_t limit);
void msr_ring_release(struct msr_ring *r);
/* Append a zeroed element; returns it (seq = tail - 1) or NULL when full or
 * out of memory (full: count == limit). */
void *msr_ring_push(struct msr_ring *r);

static inline uint64_t msr_ring_count(const struct msr_ring *r)
{
	return r->tail - r->head;
}

static inline void *msr_ring_at(const struct msr_ring *r, uint64_t seq)
{
	if (seq < r->head || seq >= r->tail)
		return NULL;
	return r->buf + (size_t)(seq & (r->cap - 1)) * r->esz;
}

/* The seq at or below the tail's last whose low 32 bits are v: a 32-bit
 * reference to a live element (within 2^32 of the tail) made whole. */
static inline uint64_t msr_ring_seq32(const struct msr_ring *r, uint32_t v)
{
	uint64_t last = r->tail - 1;

	return last - (uint32_t)((uint32_t)last - v);
}

static inline int msr_ring_full(const struct msr_ring *r)
{
	return r->limit && msr_ring_count(r) >= r->limit;
}

/* Double the capacity; 0, or -1 when out of memory. */
int msr_ring_grow(struct msr_ring *r);

/* Append an element left as it was (the caller clears or fills it all:
 * a memset of a constant size there is a few stores, not a call). */
static inline void *msr_ring_push_raw(struct msr_ring *r)
{
	if (msr_ring_full(r))
		return NULL;
	if (msr_ring_count(r) >= r->cap && msr_ring_grow(r) < 0)
		return NULL;
	return r->buf + (size_t)(r->tail++ & (r->cap - 1)) * r->esz;
}

/* 64-bit mix (splitmix64 finaliser): spreads block addresses over the map. */
static inline uint64_t msr_hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/*
 * Open-addressing (linear probing, backward-shift deletion) map from a
 * 64-bit key to a 32-bit value. Key UINT64_MAX is reserved (empty slot).
 * Key and value share a slot, so a hit costs one cache line, not two.
 * `aux` is a second value in the slot's padding that some maps use (see
 * msr_map_aux); it is undefined in a new slot and moves with `val`.
 */
struct msr_map_slot {
	uint64_t key;
	uint32_t val;
	uint32_t aux;
};

struct msr_map {
	struct msr_map_slot *slots; /* NULL before init / after release */
	size_t cap;   /* power of two */
	size_t count;
	unsigned shift; /* 64 - log2(cap): multiplicative hashing */
	bool mixed;     /* an msr_omap: slot = splitmix64(key) & (cap - 1) */
};

/*
 * Maps use one multiply (Fibonacci hashing) to place keys: it spreads
 * block addresses as well as splitmix and costs a fraction. The inline
 * functions below are for these maps only.
 */
int msr_map_init(struct msr_map *m, size_t cap_hint);
void msr_map_release(struct msr_map *m);

/* Home slot of `key` in a map made by msr_map_init. */
static inline size_t msr_map_home(const struct msr_map *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> m->shift);
}

/* Ask for the home slot of `key`, for a later get or upsert. */
static inline void msr_map_prefetch(const struct msr_map *m, uint64_t key)
{
	__builtin_prefetch(&m->slots[msr_map_home(m, key)], 1);
}

/* Value slot of `key`, or NULL. Inline: it is on every event's path. */
static inline uint32_t *msr_map_get(const struct msr_map *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	size_t i = msr_map_home(m, key);

	for (;;) {
		struct msr_map_slot *sl = &m->slots[i];

		if (sl->key == key)
			return &sl->val;
		if (sl->key == UINT64_MAX)
			return NULL;
		i = (i + 1) & mask;
	}
}

/* The `aux` value of the slot whose `val` the functions below returned. */
static inline uint32_t *msr_map_aux(uint32_t *val)
{
	return &((struct msr_map_slot *)(void *)((char *)val -
		offsetof(struct msr_map_slot, val)))->aux;
}

/*
 * Chains: the live elements of a ring that share a key (a strand's loads
 * or stores to one block), linked both ways. A map slot keeps the chain's
 * youngest element in `val` and its start in `aux`: every element older
 * than the start is done (bound, or dropped), so binding in order walks
 * forward from the start and passes each done element once. Elements enter
 * at the young end (msr_chain_push) and leave when they retire, in ring
 * order, or when popped from the young end (msr_chain_leave); an element
 * popped from the middle stays linked, as a done one, until it retires.
 * References are 32-bit (msr_ring_seq32), links are gaps in seqs: a ring
 * holds at most 2^32 elements.
 */
struct msr_chain_link {
	uint32_t older;   /* seq gap to the next older element, 0 = none */
	uint32_t younger; /* seq gap to the next younger element, 0 = none */
};

static inline struct msr_chain_link *msr_chain_at(const struct msr_ring *r,
						  uint64_t q, size_t link_off)
{
	unsigned char *x = msr_ring_at(r, q);

	return x ? (struct msr_chain_link *)(void *)(x + link_off) : NULL;
}

/* The next older element of q in its chain (0 = none; may have retired). */
static inline uint64_t msr_chain_older(uint64_t q,
				       const struct msr_chain_link *l)
{
	return l->older ? q - l->older : 0;
}

/*
 * Element `seq`, just pushed with its link zeroed, joins the chain whose
 * map value is *v (`found` false: a new key, *v undefined). Done as in
 * msr_chain_bind. Returns the element that headed the chain, 0 = none.
 */
static inline uint64_t msr_chain_push(const struct msr_ring *r, uint32_t *v,
				      bool found, uint64_t seq,
				      size_t link_off, size_t flags_off,
				      uint8_t done)
{
	uint64_t p = found ? msr_ring_seq32(r, *v) : 0;
	uint32_t *start = msr_map_aux(v);
	unsigned char *x;

	*v = (uint32_t)seq;
	if (p < r->head || p >= seq) {
		*start = (uint32_t)seq;
		return 0;
	}
	x = msr_ring_at(r, p);
	msr_chain_at(r, seq, link_off)->older = (uint32_t)(seq - p);
	((struct msr_chain_link *)(void *)(x + link_off))->younger =
		(uint32_t)(seq - p);
	/* all done before it: the next bind starts at the new element */
	if (msr_ring_seq32(r, *start) == p && (x[flags_off] & done))
		*start = (uint32_t)seq;
	return p;
}

/*
 * Element q leaves the chain whose map value is *v: retired from the
 * ring's head, or popped. `start2`, when not NULL, is a second start kept
 * the same way for another kind of binding. Returns true when the key has
 * no live element left (the caller deletes the slot).
 */
static inline bool msr_chain_leave(const struct msr_ring *r, uint32_t *v,
				   uint32_t *start2, uint64_t q,
				   size_t link_off)
{
	const struct msr_chain_link *l = msr_chain_at(r, q, link_off);
	uint32_t *start = msr_map_aux(v);
	uint64_t p, to;

	if (msr_ring_seq32(r, *v) != q) {
		/* an older element: a start moves past it once done */
		to = q + l->younger;
	} else {
		p = msr_chain_older(q, l);
		if (p < r->head || p >= q)
			return true;
		*v = (uint32_t)p;
		msr_chain_at(r, p, link_off)->younger = 0;
		to = p;
	}
	if (msr_ring_seq32(r, *start) == q)
		*start = (uint32_t)to;
	if (start2 && msr_ring_seq32(r, *start2) == q)
		*start2 = (uint32_t)to;
	return false;
}

/*
 * Bind to the oldest element still waiting of a chain, from the start in
 * msr_map_aux(v) (the chain's own slot, or a slot keeping a second start
 * for another kind of binding): an element waits unless its flags byte at
 * `flags_off` has a bit of `done`, and the caller makes the element found
 * done. Binding is in order, so the start moves past that element and the
 * walk never passes the elements before it again. Returns it (NULL: none)
 * and its seq in *seq; adds the elements looked at to *steps.
 */
static inline void *msr_chain_bind(const struct msr_ring *r, uint32_t *v,
				   size_t link_off, size_t flags_off,
				   uint8_t done, uint64_t *seq,
				   uint64_t *steps)
{
	uint32_t *start = msr_map_aux(v);
	uint64_t q = msr_ring_seq32(r, *start);

	for (;;) {
		unsigned char *x = msr_ring_at(r, q);
		const struct msr_chain_link *l;

		if (!x)
			return NULL;
		++*steps;
		l = (const struct msr_chain_link *)(void *)(x + link_off);
		if (!(x[flags_off] & done)) {
			*start = (uint32_t)(q + l->younger);
			*seq = q;
			return x;
		}
		if (!l->younger) {
			*start = (uint32_t)q;
			return NULL;
		}
		q += l->younger;
	}
}

/* Insert absent `key` at its free probe slot i (growing if needed). */
uint32_t *msr_map_insert_at(struct msr_map *m, uint64_t key, size_t i);

/* The value slot of `key`, inserted when absent (*found false; the
 * value is then the caller's to set); NULL when out of memory. One probe
 * finds the key or the empty slot it goes into. */
static inline uint32_t *msr_map_upsert(struct msr_map *m, uint64_t key,
				       bool *found)
{
	size_t mask = m->cap - 1;
	size_t i = msr_map_home(m, key);

	for (;;) {
		struct msr_map_slot *sl = &m->slots[i];

		if (sl->key == key) {
			*found = true;
			return &sl->val;
		}
		if (sl->key == UINT64_MAX)
			break;
		i = (i + 1) & mask;
	}
	*found = false;
	/* past half full the out-of-line path decides whether to grow */
	if ((m->count + 1) * 2 > m->cap)
		return msr_map_insert_at(m, key, i);
	m->slots[i].key = key;
	m->count++;
	return &m->slots[i].val;
}
/* Insert or overwrite; returns 0, or -1 when out of memory. */
int msr_map_put(struct msr_map *m, uint64_t key, uint32_t val);
/* Remove `key` if present. */
void msr_map_del(struct msr_map *m, uint64_t key);
/* Remove the entry whose value slot msr_map_get returned (no second probe). */
void msr_map_del_at(struct msr_map *m, uint32_t *val);

/*
 * A map whose slot order is seen (walked into a report): it keeps the
 * splitmix64 placement, so the order stays what it always was. Same
 * semantics as msr_map; out-of-line calls (it is not on a hot path).
 */
struct msr_omap {
	struct msr_map m; /* walk m.slots[0 .. m.cap) for the slot order */
};

int msr_omap_init(struct msr_omap *o, size_t cap_hint);
void msr_omap_release(struct msr_omap *o);
uint32_t *msr_omap_get(struct msr_omap *o, uint64_t key);
int msr_omap_put(struct msr_omap *o, uint64_t key, uint32_t val);
void msr_omap_del_at(struct msr_omap *o, uint32_t *val);

/* Fixed-size elements addressed by a 32-bit index, with a free list. */
struct msr_pool {
	unsigned char *buf;
	size_t esz;
	uint32_t cap, used; /* used = high-water mark */
	uint32_t free_head; /* UINT32_MAX = none */
};

void msr_pool_init(struct msr_pool *p, size_t esz);
void msr_pool_release(struct msr_pool *p);
/* A zeroed element's index, or UINT32_MAX when out of memory. */
uint32_t msr_pool_alloc(struct msr_pool *p);
/* The same, not cleared: for callers that set the whole element. */
uint32_t msr_pool_alloc_raw(struct msr_pool *p);
/* n zeroed elements at consecutive indexes (past the high-water mark,
 * never from the free list): the first's index, or UINT32_MAX. */
uint32_t msr_pool_alloc_run(struct msr_pool *p, uint32_t n);
void msr_pool_free(struct msr_pool *p, uint32_t idx);

static inline void *msr_pool_at(const struct msr_pool *p, uint32_t idx)
{
	return p->buf + (size_t)idx * p->esz;
}

#endif /* MSR_ENGINE_UTIL_INTERNAL_H */
