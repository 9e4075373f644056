/*
 * util.c - ring buffers, hash maps and pools used on the engine's hot path.
 *
 * Growth is by doubling so every operation is amortised O(1); nothing here
 * allocates per element once capacity is reached, and nothing here reports
 * errors beyond a NULL / -1 return (callers turn that into MSR_E_NOMEM).
 */
#include "util-internal.h"
#include "hugepage.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void msr_ring_init(struct msr_ring *r, size_t esz, uint64_t limit)
{
	memset(r, 0, sizeof(*r));
	r->esz = esz;
	r->head = r->tail = 1;
	r->limit = limit;
}

void msr_ring_release(struct msr_ring *r)
{
	free(r->buf);
	r->buf = NULL;
	r->cap = 0;
}

int msr_ring_grow(struct msr_ring *r)
{
	/* a small first ring: most strands keep a few entries in flight, and
	 * a replay of a small trace would otherwise fault in pages of rings
	 * it never fills */
	uint64_t ncap = r->cap ? r->cap * 2 : 4;
	unsigned char *nb = calloc((size_t)ncap, r->esz);

	if (!nb)
		return -1;
	msr_hugepage_advise(nb, (size_t)ncap * r->esz);
	for (uint64_t s = r->head; s < r->tail; s++)
		memcpy(nb + (size_t)(s & (ncap - 1)) * r->esz,
		       r->buf + (size_t)(s & (r->cap - 1)) * r->esz, r->esz);
	free(r->buf);
	r->buf = nb;
	r->cap = ncap;
	return 0;
}

void *msr_ring_push(struct msr_ring *r)
{
	void *p = msr_ring_push_raw(r);

	if (p)
		memset(p, 0, r->esz);
	return p;
}

static void slots_clear(struct msr_map_slot *sl, size_t cap)
{
	for (size_t i = 0; i < cap; i++)
		sl[i].key = UINT64_MAX;
}

/* Home slot of `key` for either kind of map (out-of-line paths). */
static size_t map_home(const struct msr_map *m, uint64_t key)
{
	if (m->mixed)
		return (size_t)msr_hash64(key) & (m->cap - 1);
	return msr_map_home(m, key);
}

/* An omap's slot order is seen, so it keeps the density it always had. */
static size_t map_limit(const struct msr_map *m)
{
	return m->mixed ? m->cap / 2
			: msr_table_limit(m->cap, sizeof(*m->slots));
}

static int map_init(struct msr_map *m, size_t cap_hint, bool mixed)
{
	size_t cap = 16;
	unsigned shift = 60;

	while (cap < cap_hint) {
		cap *= 2;
		shift--;
	}
	m->slots = msr_hugepage_alloc(cap * sizeof(*m->slots));
	m->cap = cap;
	m->shift = shift;
	m->mixed = mixed;
	m->count = 0;
	if (!m->slots) {
		msr_map_release(m);
		return -1;
	}
	slots_clear(m->slots, cap);
	return 0;
}

int msr_map_init(struct msr_map *m, size_t cap_hint)
{
	return map_init(m, cap_hint, false);
}

void msr_map_release(struct msr_map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}

/* Place a slot whose key is known to be absent (there is room). */
static void map_insert(struct msr_map *m, const struct msr_map_slot *sl)
{
	size_t i = map_home(m, sl->key);

	while (m->slots[i].key != UINT64_MAX)
		i = (i + 1) & (m->cap - 1);
	m->slots[i] = *sl;
}

static __attribute__((noinline)) int map_grow(struct msr_map *m)
{
	struct msr_map old = *m;
	struct msr_map_slot *ns = msr_hugepage_alloc(old.cap * 2 * sizeof(*ns));

	if (!ns)
		return -1;
	slots_clear(ns, old.cap * 2);
	m->slots = ns;
	m->cap = old.cap * 2;
	m->shift = old.shift - 1;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].key != UINT64_MAX)
			map_insert(m, &old.slots[i]);
	free(old.slots);
	return 0;
}

uint32_t *msr_map_insert_at(struct msr_map *m, uint64_t key, size_t i)
{
	if (m->count >= map_limit(m)) {
		size_t mask;

		if (map_grow(m) < 0)
			return NULL;
		mask = m->cap - 1;
		for (i = map_home(m, key); m->slots[i].key != UINT64_MAX;)
			i = (i + 1) & mask;
	}
	m->slots[i].key = key;
	m->count++;
	return &m->slots[i].val;
}

int msr_map_put(struct msr_map *m, uint64_t key, uint32_t val)
{
	bool found;
	uint32_t *v = msr_map_upsert(m, key, &found);

	if (!v)
		return -1;
	*v = val;
	return 0;
}

void msr_map_del(struct msr_map *m, uint64_t key)
{
	uint32_t *v = msr_map_get(m, key);

	if (v)
		msr_map_del_at(m, v);
}

void msr_map_del_at(struct msr_map *m, uint32_t *val)
{
	size_t mask = m->cap - 1;
	struct msr_map_slot *sl = m->slots;
	size_t i = (size_t)((struct msr_map_slot *)(void *)((char *)val -
		offsetof(struct msr_map_slot, val)) - sl);

	/* backward-shift deletion: no tombstones, probe chains stay intact */
	for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
		size_t home;

		if (sl[j].key == UINT64_MAX)
			break;
		home = map_home(m, sl[j].key);
		/* move j into the hole at i unless its home lies in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			sl[i] = sl[j];
			i = j;
		}
	}
	sl[i].key = UINT64_MAX;
	m->count--;
}

int msr_omap_init(struct msr_omap *o, size_t cap_hint)
{
	return map_init(&o->m, cap_hint, true);
}

void msr_omap_release(struct msr_omap *o)
{
	msr_map_release(&o->m);
}

/* The probe of `key` from its home: its slot, or the empty one after. */
static size_t omap_probe(const struct msr_map *m, uint64_t key)
{
	size_t i = map_home(m, key);

	while (m->slots[i].key != UINT64_MAX && m->slots[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint32_t *msr_omap_get(struct msr_omap *o, uint64_t key)
{
	size_t i = omap_probe(&o->m, key);

	return o->m.slots[i].key == key ? &o->m.slots[i].val : NULL;
}

int msr_omap_put(struct msr_omap *o, uint64_t key, uint32_t val)
{
	size_t i = omap_probe(&o->m, key);
	uint32_t *v = o->m.slots[i].key == key ? &o->m.slots[i].val
					       : msr_map_insert_at(&o->m, key, i);

	if (!v)
		return -1;
	*v = val;
	return 0;
}

void msr_omap_del_at(struct msr_omap *o, uint32_t *val)
{
	msr_map_del_at(&o->m, val);
}

void msr_pool_init(struct msr_pool *p, size_t esz)
{
	memset(p, 0, sizeof(*p));
	p->esz = esz < sizeof(uint32_t) ? sizeof(uint32_t) : esz;
	p->free_head = UINT32_MAX;
}

void msr_pool_release(struct msr_pool *p)
{
	msr_hugepage_release(p->buf, (size_t)p->cap * p->esz);
	p->buf = NULL;
	p->cap = p->used = 0;
}

uint32_t msr_pool_alloc(struct msr_pool *p)
{
	uint32_t idx = msr_pool_alloc_raw(p);

	if (idx != UINT32_MAX)
		memset(msr_pool_at(p, idx), 0, p->esz);
	return idx;
}

/* Room for n more elements past the high-water mark; false when short. */
static bool pool_reserve(struct msr_pool *p, uint32_t n)
{
	uint32_t ncap = p->cap ? p->cap : 64;
	unsigned char *nb;

	if (n > UINT32_MAX - p->used)
		return false;
	if (p->used + n <= p->cap)
		return true;
	while (ncap < p->used + n) {
		if (ncap > UINT32_MAX / 2)
			return false;
		ncap *= 2;
	}
	nb = msr_hugepage_grow(p->buf, (size_t)p->cap * p->esz,
			       (size_t)ncap * p->esz);
	if (!nb)
		return false;
	p->buf = nb;
	p->cap = ncap;
	return true;
}

uint32_t msr_pool_alloc_raw(struct msr_pool *p)
{
	uint32_t idx;

	if (p->free_head != UINT32_MAX) {
		idx = p->free_head;
		memcpy(&p->free_head, msr_pool_at(p, idx), sizeof(uint32_t));
		return idx;
	}
	if (!pool_reserve(p, 1))
		return UINT32_MAX;
	return p->used++;
}

uint32_t msr_pool_alloc_run(struct msr_pool *p, uint32_t n)
{
	uint32_t idx;

	if (!n || !pool_reserve(p, n))
		return UINT32_MAX;
	idx = p->used;
	p->used += n;
	memset(msr_pool_at(p, idx), 0, (size_t)n * p->esz);
	return idx;
}

void msr_pool_free(struct msr_pool *p, uint32_t idx)
{
	memcpy(msr_pool_at(p, idx), &p->free_head, sizeof(uint32_t));
	p->free_head = idx;
}
