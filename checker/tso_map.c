/*
 * tso_map.c - the open-addressing map of the TSO pass, keyed by an 8-byte
 * block address (power-of-two capacity, linear probing, splitmix hash).
 * Entries are fixed-size and start with `uint64_t key` (pa8 + 1; 0 =
 * empty). It knows nothing of TSO and never allocates except to grow.
 * Also the growth of the pass's power-of-two rings (tso_ring_regrow) and
 * its pools of fixed-size records (tso_pool_get).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tso-internal.h"
#include "hugepage.h"

int tso_map_init(struct tso_map *m, size_t esz, size_t cap)
{
	/* cleared lazily (calloc, or pages the system clears as they are
	 * first written), by whoever fills it */
	m->slots = msr_hugepage_zalloc(cap * esz);
	m->esz = esz;
	m->cap = m->slots ? cap : 0;
	m->n = 0;
	return m->slots ? 0 : -1;
}

/* Double the capacity, rehashing every entry. */
int tso_map_grow(struct tso_map *m)
{
	struct tso_map nm;
	size_t i;

	if (tso_map_init(&nm, m->esz, m->cap * 2) < 0)
		return -1;
	for (i = 0; i < m->cap; i++) {
		uint64_t key;
		size_t j;

		memcpy(&key, tso_map_slot(m, i), sizeof(key));
		if (!key)
			continue;
		j = tso_hash64(key) & (nm.cap - 1);
		for (;;) {
			uint64_t k2;

			memcpy(&k2, tso_map_slot(&nm, j), sizeof(k2));
			if (!k2)
				break;
			j = (j + 1) & (nm.cap - 1);
		}
		memcpy(tso_map_slot(&nm, j), tso_map_slot(m, i), m->esz);
		nm.n++;
	}
	tso_map_release(m);
	*m = nm;
	return 0;
}

void tso_map_release(struct tso_map *m)
{
	msr_hugepage_release(m->slots, m->cap * m->esz);
	m->slots = NULL;
	m->cap = m->n = 0;
}

void tso_map_del(struct tso_map *m, void *e)
{
	tso_map_del_at(m, e, m->esz);
}

size_t tso_pool_get(struct tso_pool *p)
{
	size_t idx;

	if (p->free) {
		idx = p->free - 1;
		memcpy(&p->free, tso_pool_at(p, idx), sizeof(p->free));
		return idx;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		unsigned char *na = msr_hugepage_grow(p->a, p->cap * p->esz,
						      cap * p->esz);

		if (!na)
			return SIZE_MAX;
		p->a = na;
		p->cap = cap;
	}
	return p->n++;
}

void tso_pool_put(struct tso_pool *p, size_t idx)
{
	memcpy(tso_pool_at(p, idx), &p->free, sizeof(p->free));
	p->free = idx + 1;
}

int tso_ring_regrow(void **ring, size_t esz, size_t *cap, size_t *head,
		    size_t len, size_t ncap)
{
	unsigned char *n = malloc(ncap * esz);
	size_t first = *cap - *head; /* entries up to the buffer's end */

	if (!n)
		return -1;
	if (first > len)
		first = len;
	if (len) {
		memcpy(n, (unsigned char *)*ring + *head * esz, first * esz);
		memcpy(n + first * esz, *ring, (len - first) * esz);
	}
	free(*ring);
	*ring = n;
	*cap = ncap;
	*head = 0;
	return 0;
}
