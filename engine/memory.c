/*
 * memory.c - the sparse memory image (4 KiB pages of 64-byte chunks, each
 * block's bytes, known bits and sources in one cache line),
 * the per-block byte sources, the per-core L1 pieces, the bounded commit
 * history, and the initial-image loader (trace-format.md section 4).
 *
 * The image held here is the L2 view: memory plus every commit applied so
 * far, because every read the model makes is "as of now" (the newest MAB
 * position). Memory grows only with the touched footprint; nothing here is
 * indexed by trace position.
 */
#include "engine-internal.h"
#include "hugepage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int msr_mem_init(struct msr_engine *e)
{
	msr_pool_init(&e->pages, sizeof(struct page));
	msr_pool_init(&e->chunks, sizeof(struct chunk));
	msr_pool_init(&e->mixed, 8 * sizeof(struct msr_src));
	/* an element holds the pieces of one L1 line: lines come and go whole */
	msr_pool_init(&e->l1, sizeof(struct l1_piece) * (e->line / 8));
	for (unsigned i = 0; i < MSR_CHUNK_CACHE; i++)
		e->chunk_cache[i].cn = UINT64_MAX; /* no chunk has this number */
	if (msr_map_init(&e->pages_map, 64) < 0 ||
	    msr_map_init(&e->l1_map, 1024) < 0 ||
	    msr_omap_init(&e->dma_map, 16) < 0)
		return -1;
	/* zeroed, and touched only as commits fill it: a short replay uses
	 * a few of its 4 MiB */
	e->hist = msr_hugepage_zalloc(MSR_COMMIT_HISTORY * sizeof(*e->hist));
	return e->hist ? 0 : -1;
}

void msr_mem_release(struct msr_engine *e)
{
	msr_map_release(&e->pages_map);
	msr_map_release(&e->l1_map);
	msr_omap_release(&e->dma_map);
	msr_pool_release(&e->pages);
	msr_pool_release(&e->chunks);
	msr_pool_release(&e->mixed);
	msr_pool_release(&e->l1);
	msr_hugepage_release(e->hist, MSR_COMMIT_HISTORY * sizeof(*e->hist));
	e->hist = NULL;
}

/* Remember chunk cn at index idx in the chunk cache. */
static inline void chunk_cache_put(struct msr_engine *e, uint64_t cn,
				   uint32_t idx)
{
	e->chunk_cache[cn & (MSR_CHUNK_CACHE - 1)].cn = cn;
	e->chunk_cache[cn & (MSR_CHUNK_CACHE - 1)].idx = idx;
}

/* Turn sparse page pn (its pages_map value *v) dense: its chunks move into
 * one run, where the untouched ones are zeroed cells, and its record is
 * freed. False (nothing changed) when out of memory. It moves chunks: no
 * chunk or block pointer survives it, as none survives the pool's growth. */
static bool page_make_dense(struct msr_engine *e, uint64_t pn, uint32_t *v)
{
	uint32_t run = msr_pool_alloc_run(&e->chunks, MSR_PAGE_CHUNKS);
	struct page *pg = msr_pool_at(&e->pages, *v);

	if (run == UINT32_MAX)
		return false;
	if (run & MSR_PAGE_DENSE) { /* past what a map value can name */
		for (unsigned i = 0; i < MSR_PAGE_CHUNKS; i++)
			msr_pool_free(&e->chunks, run + i);
		return false;
	}
	for (unsigned i = 0; i < MSR_PAGE_CHUNKS; i++) {
		uint64_t cn = pn * MSR_PAGE_CHUNKS + i;
		struct chunk_slot *c = &e->chunk_cache[cn & (MSR_CHUNK_CACHE - 1)];

		if (!pg->chunk[i])
			continue;
		memcpy(msr_pool_at(&e->chunks, run + i),
		       msr_pool_at(&e->chunks, pg->chunk[i] - 1),
		       sizeof(struct chunk));
		msr_pool_free(&e->chunks, pg->chunk[i] - 1);
		if (c->cn == cn)
			c->idx = run + i;
	}
	msr_pool_free(&e->pages, *v);
	*v = MSR_PAGE_DENSE | run;
	return true;
}

struct chunk *msr_mem_chunk_lookup(struct msr_engine *e, uint64_t cn,
				   bool create)
{
	uint64_t pn = cn >> (MSR_PAGE_SHIFT - MSR_CHUNK_SHIFT);
	unsigned i = (unsigned)(cn & (MSR_PAGE_CHUNKS - 1));
	uint32_t *v = msr_map_get(&e->pages_map, pn);
	struct page *pg;
	uint32_t idx;
	bool found;

	if (v && (*v & MSR_PAGE_DENSE)) {
		idx = (*v & ~MSR_PAGE_DENSE) + i;
		chunk_cache_put(e, cn, idx);
		return msr_pool_at(&e->chunks, idx);
	}
	if (!v) {
		if (!create)
			return NULL;
		idx = msr_pool_alloc(&e->pages);
		/* an index with the dense bit (2^31 pages) is out of memory */
		if (idx != UINT32_MAX && (idx & MSR_PAGE_DENSE)) {
			msr_pool_free(&e->pages, idx);
			idx = UINT32_MAX;
		}
		if (idx == UINT32_MAX) {
			e->nomem = 1;
			return NULL;
		}
		v = msr_map_upsert(&e->pages_map, pn, &found);
		if (!v) {
			msr_pool_free(&e->pages, idx);
			e->nomem = 1;
			return NULL;
		}
		*v = idx;
	}
	pg = msr_pool_at(&e->pages, *v);
	if (!pg->chunk[i]) {
		if (!create)
			return NULL;
		if (pg->nchunks + 1 >= MSR_PAGE_DENSE_AT &&
		    page_make_dense(e, pn, v))
			return msr_mem_chunk_lookup(e, cn, false);
		idx = msr_pool_alloc(&e->chunks);
		if (idx == UINT32_MAX) {
			e->nomem = 1;
			return NULL;
		}
		pg->chunk[i] = idx + 1;
		pg->nchunks++;
	}
	chunk_cache_put(e, cn, pg->chunk[i] - 1);
	return msr_pool_at(&e->chunks, pg->chunk[i] - 1);
}

struct blk *msr_mem_blk(struct msr_engine *e, uint64_t pa8, bool create)
{
	struct chunk *p = msr_mem_chunk(e, pa8, create);

	return p ? &msr_chunk_cell(p, pa8)->b : NULL;
}

struct blk *msr_mem_image(struct msr_engine *e, uint64_t pa8, uint8_t data[8],
			  uint8_t *known, struct msr_src src[8], bool *per_byte,
			  uint8_t *zmask, uint8_t *m2)
{
	struct chunk *p = msr_mem_chunk(e, pa8, true);
	struct cell *c;

	if (!p) {
		*per_byte = msr_mem_read_c(e, pa8, data, known, src, zmask, m2);
		return NULL;
	}
	c = msr_chunk_cell(p, pa8);
	*per_byte = msr_cell_read_c(e, c, data, known, src, zmask, m2);
	return &c->b;
}

static inline bool src_eq(const struct msr_src *a, const struct msr_src *b)
{
	uint64_t x[2], y[2];

	/* two words each: compare words, not a memcmp of 16 bytes */
	memcpy(x, a, sizeof(x));
	memcpy(y, b, sizeof(y));
	return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
}

/* Every byte of b now comes from s: a mixed record is no longer needed. */
static inline void blk_set_all(struct msr_engine *e, struct blk *b,
			       const struct msr_src *s)
{
	if (b->mixed) {
		msr_pool_free(&e->mixed, b->mixed - 1);
		b->mixed = 0;
	}
	b->one = *s;
	b->zmask = 0;
	b->m2 = 0;
}

/* The 8 sources as a block's inline form (struct blk), when they are at
 * most two besides the zero source; false (and *one, *two, *zmask, *m2
 * spoilt) when they are more. */
static bool srcs_inline(const struct msr_src src[8], struct msr_src *one,
			struct msr_src *two, uint8_t *zmask, uint8_t *m2)
{
	static const struct msr_src zero;
	unsigned n = 0;

	*zmask = *m2 = 0;
	*one = zero;
	for (unsigned i = 0; i < 8; i++) {
		uint8_t bit = (uint8_t)(0x80u >> i);

		if (src_eq(&src[i], &zero)) {
			*zmask |= bit;
		} else if (n > 0 && src_eq(&src[i], one)) {
			continue;
		} else if (n > 1 && src_eq(&src[i], two)) {
			*m2 |= bit;
		} else if (n == 0) {
			*one = src[i];
			n = 1;
		} else if (n == 1) {
			*two = src[i];
			*m2 |= bit;
			n = 2;
		} else {
			return false;
		}
	}
	if (!n)
		*zmask = 0; /* no source at all: one form, as a fresh block's */
	return true;
}

/* b's inline form grows a third source: its bytes go per byte. */
static void blk_to_mixed(struct msr_engine *e, struct blk *b, uint8_t mask,
			 const struct msr_src *s)
{
	uint32_t idx = msr_pool_alloc_raw(&e->mixed);
	struct msr_src *src;

	if (idx == UINT32_MAX) {
		e->nomem = 1;
		return;
	}
	src = msr_pool_at(&e->mixed, idx);
	msr_blk_src(e, b, src);
	b->mixed = idx + 1;
	for (unsigned m = mask; m; m &= m - 1)
		src[7 - (unsigned)__builtin_ctz(m)] = *s;
}

/* The bytes of `mask` (bit 7 = byte 0) of b now come from s. */
static void blk_set_some(struct msr_engine *e, struct blk *b, uint8_t mask,
			 const struct msr_src *s)
{
	static const struct msr_src zero;
	bool one_zero;
	uint8_t z, m2;

	if (b->mixed) {
		struct msr_src *src = msr_pool_at(&e->mixed, b->mixed - 1);

		for (unsigned m = mask; m; m &= m - 1)
			src[7 - (unsigned)__builtin_ctz(m)] = *s;
		/* back inline once no more than two sources are left */
		if (srcs_inline(src, &b->one, &b->two, &b->zmask, &b->m2)) {
			msr_pool_free(&e->mixed, b->mixed - 1);
			b->mixed = 0;
		}
		return;
	}
	/* read only now: while a block has a pooled record they are spoilt */
	one_zero = src_eq(&b->one, &zero);
	z = b->zmask;
	m2 = b->m2;
	if (one_zero)
		z = (uint8_t)~m2; /* one's bytes have the zero source */
	if (src_eq(s, &zero)) {
		z |= mask;
		m2 &= (uint8_t)~mask;
	} else if (!one_zero && src_eq(&b->one, s)) {
		z &= (uint8_t)~mask;
		m2 &= (uint8_t)~mask;
	} else if (m2 && src_eq(&b->two, s)) {
		z &= (uint8_t)~mask;
		m2 |= mask;
	} else {
		/* a new source: which of one's and two's bytes are left */
		uint8_t left1 = (uint8_t)~(z | m2 | mask);

		if (m2 & (uint8_t)~mask) {
			if (left1) {
				b->zmask = z;
				b->m2 = m2;
				blk_to_mixed(e, b, mask, s);
				return;
			}
			b->one = b->two; /* two's bytes are all one's now */
		} else if (!left1) {
			b->one = *s;
			b->zmask = z & (uint8_t)~mask;
			b->m2 = 0;
			return;
		}
		b->two = *s;
		m2 = mask;
		z &= (uint8_t)~mask;
	}
	if (m2 && (z | m2) == 0xff) {
		/* one has no bytes left: two is the only source */
		b->one = b->two;
		m2 = 0;
	}
	b->zmask = z;
	b->m2 = m2;
}

static void l1_unshare_all(struct msr_engine *e, struct chunk *p,
			   uint64_t pa8, uint32_t cores);

void msr_mem_write(struct msr_engine *e, uint64_t pa8, const uint8_t data[8],
		   uint8_t mask, const struct msr_src *s)
{
	struct chunk *p;
	struct cell *c;

	if (!mask)
		return;
	p = msr_mem_chunk(e, pa8, true);
	if (!p)
		return;
	c = msr_chunk_cell(p, pa8);
	if (c->l1_shared)
		l1_unshare_all(e, p, pa8, c->l1_shared);
	c->known |= mask;
	if (mask == 0xff) {
		memcpy(c->data, data, 8);
		blk_set_all(e, &c->b, s);
		return;
	}
	for (unsigned m = mask; m; m &= m - 1) {
		/* bit 7 = byte 0 */
		unsigned i = 7 - (unsigned)__builtin_ctz(m);

		c->data[i] = data[i];
	}
	blk_set_some(e, &c->b, mask, s);
}

void msr_mem_learn(struct msr_engine *e, uint64_t pa8, const uint8_t data[8],
		   uint8_t mask)
{
	struct chunk *p = msr_mem_chunk(e, pa8, true);
	struct cell *c;

	if (!p)
		return;
	c = msr_chunk_cell(p, pa8);
	for (unsigned i = 0; i < 8; i++) {
		uint8_t bit = (uint8_t)(0x80u >> i);

		if (!(mask & bit) || (c->known & bit))
			continue;
		c->data[i] = data[i];
		c->known |= bit;
		e->st.learned_bytes++;
	}
}

static struct l1_piece *l1_line(struct msr_engine *e, uint32_t v)
{
	return msr_pool_at(&e->l1, v & ~L1_HAS_MIXED);
}

/* Give a private line's pool element (map value v) and mixed records back. */
static void l1_free_private(struct msr_engine *e, uint32_t v)
{
	/* a line that never had a mixed record is freed without reading its
	 * pieces (a cache miss, waited for, on a line filled long ago) */
	if (v & L1_HAS_MIXED) {
		struct l1_piece *p0 = l1_line(e, v);

		for (unsigned i = 0; i < e->line / 8; i++)
			if (p0[i].mixed)
				msr_pool_free(&e->mixed, p0[i].mixed - 1);
	}
	msr_pool_free(&e->l1, v & ~L1_HAS_MIXED);
}

/* A new pool element for a line's pieces, UINT32_MAX when out of memory
 * (an index with a flag's bit, 2^30 lines, is). */
static uint32_t l1_alloc(struct msr_engine *e)
{
	uint32_t idx = msr_pool_alloc_raw(&e->l1);

	if (idx != UINT32_MAX && (idx & (L1_HAS_MIXED | L1_SHARED))) {
		msr_pool_free(&e->l1, idx);
		idx = UINT32_MAX;
	}
	return idx;
}

/* Piece p of a private line (its map value *line) holds these bytes,
 * known mask and sources, as of cycle ts. */
static void l1_piece_set(struct msr_engine *e, uint32_t *line,
			 struct l1_piece *p, const uint8_t data[8],
			 uint8_t known, const struct msr_src *src, bool per_byte,
			 uint8_t zmask, uint8_t m2, uint32_t ts)
{
	memcpy(p->data, data, 8);
	if (per_byte)
		msr_l1_set_mixed(e, line, p, src);
	else
		msr_l1_set_compact(e, p, src, zmask, m2);
	p->known = known;
	p->fill_ts = ts;
}

/*
 * The core's shared line at `line` (its map value *v; p the chunk of its
 * blocks) becomes private: its pieces are the blocks as they are now,
 * with only the bytes its fill knew known, as a fill would have stored
 * them. False when out of memory (or p is NULL): the line is then
 * dropped.
 */
static bool l1_make_private(struct msr_engine *e, uint32_t *v, unsigned core,
			    uint64_t line, struct chunk *p)
{
	uint32_t known = *v & ~L1_SHARED, ts = *msr_map_aux(v);
	uint32_t idx = p ? l1_alloc(e) : UINT32_MAX;
	struct l1_piece *p0;

	for (unsigned k = 0; p && k < e->line / 8; k++)
		msr_chunk_cell(p, line + 8 * k)->l1_shared &= ~(1u << core);
	if (idx == UINT32_MAX) {
		/* out of memory (a shared line's chunk is never missing) */
		e->nomem = 1;
		msr_map_del_at(&e->l1_map, v);
		return false;
	}
	*v = idx;
	p0 = l1_line(e, idx);
	for (unsigned k = 0; k < e->line / 8; k++) {
		uint8_t fk = (uint8_t)(known >> (8 * k)), d[8], kn, zm, m2;
		struct msr_src src[8];
		bool pb = msr_cell_read_c(e, msr_chunk_cell(p, line + 8 * k), d,
					  &kn, src, &zm, &m2);

		/* bytes learned since the fill stay unknown to the core (and
		 * 0, as the image's unknown bytes are) */
		for (unsigned m = (uint8_t)~fk; m; m &= m - 1)
			d[7 - (unsigned)__builtin_ctz(m)] = 0;
		p0[k].mixed = 0;
		l1_piece_set(e, v, p0 + k, d, fk, src, pb, zm, m2, ts);
	}
	return true;
}

/* Block pa8 (in chunk p) is about to change: every core sharing its line
 * (the bits `cores`) takes a private copy first. */
static void l1_unshare_all(struct msr_engine *e, struct chunk *p,
			   uint64_t pa8, uint32_t cores)
{
	uint64_t line = pa8 & ~((uint64_t)e->line - 1);

	for (uint32_t w = cores; w; w &= w - 1) {
		unsigned core = (unsigned)__builtin_ctz(w);
		uint32_t *v = msr_map_get(&e->l1_map, msr_l1_key(e, core, line));

		if (v && (*v & L1_SHARED))
			l1_make_private(e, v, core, line, p);
	}
	for (unsigned k = 0; k < e->line / 8; k++)
		msr_chunk_cell(p, line + 8 * k)->l1_shared = 0;
}

/* The fill as a shared line, when the image holds what it brings: false
 * when it must be stored privately. */
static bool l1_fill_shared(struct msr_engine *e, unsigned core, uint64_t line,
			   const struct fill_rec *f, uint32_t ts)
{
	unsigned n = e->line / 8;
	uint32_t known = 0, *v;
	struct chunk *p;
	bool found;

	if (n > L1_SHARED_PIECES)
		return false;
	p = msr_mem_chunk(e, line, false);
	if (!p)
		return false;
	/* the bytes the fill knew (the image may have learned more since),
	 * the same sources in the same form: anything else is stored
	 * privately, as it always may be */
	for (unsigned k = 0; k < n; k++) {
		const struct cell *c = msr_chunk_cell(p, line + 8 * k);
		const struct blk *b = &c->b;
		uint8_t fk = f->known[k];

		if (f->per_byte[k] || b->mixed || (fk & ~c->known) ||
		    f->zmask[k] != b->zmask || f->m2[k] != b->m2 ||
		    !src_eq(&f->src[8 * k], &b->one) ||
		    (b->m2 && !src_eq(&f->src[8 * k + 1], &b->two)) ||
		    msr_bytes_differ(c->data, f->data + 8 * k, fk))
			return false;
		known |= (uint32_t)fk << (8 * k);
	}
	v = msr_map_upsert(&e->l1_map, msr_l1_key(e, core, line), &found);
	if (!v)
		return false; /* msr_l1_get reports it */
	if (found && !(*v & L1_SHARED))
		l1_free_private(e, *v);
	*v = L1_SHARED | known;
	*msr_map_aux(v) = ts;
	for (unsigned k = 0; k < n; k++)
		msr_chunk_cell(p, line + 8 * k)->l1_shared |= 1u << core;
	return true;
}

void msr_l1_capture(struct msr_engine *e, struct fill_rec *f)
{
	for (unsigned k = 0; k < e->line / 8; k++)
		f->per_byte[k] = msr_mem_read_c(e, f->line + 8 * k,
						f->data + 8 * k, &f->known[k],
						f->src + 8 * k, &f->zmask[k],
						&f->m2[k]);
}

bool msr_l1_fill(struct msr_engine *e, unsigned core, const struct fill_rec *f,
		 uint32_t ts)
{
	uint32_t *lv = NULL;
	struct l1_piece *p0;

	if (l1_fill_shared(e, core, f->line, f, ts))
		return true;
	p0 = msr_l1_get(e, core, f->line, true, &lv);
	if (!p0)
		return false;
	for (unsigned k = 0; k < e->line / 8; k++)
		l1_piece_set(e, lv, p0 + k, f->data + 8 * k, f->known[k],
			     f->src + 8 * k, f->per_byte[k], f->zmask[k],
			     f->m2[k], ts);
	return true;
}

bool msr_l1_read_c(struct msr_engine *e, unsigned core, uint64_t pa8,
		   uint8_t data[8], uint8_t *known, struct msr_src src[8],
		   uint8_t *zmask, uint8_t *m2, bool *per_byte,
		   uint32_t *fill_ts)
{
	uint32_t *v = msr_map_get(&e->l1_map, msr_l1_key(e, core, pa8));
	const struct l1_piece *p;
	uint8_t md[8], mk;
	struct msr_src ms[8];

	if (!v)
		return false;
	if (*v & L1_SHARED) {
		*fill_ts = *msr_map_aux(v);
		*per_byte = msr_mem_read_c(e, pa8, data, known, src, zmask, m2);
		return true;
	}
	p = l1_line(e, *v) + (pa8 & ((uint64_t)e->line - 1)) / 8;
	memcpy(data, p->data, 8);
	*per_byte = msr_src_copy_c(e, &p->one, &p->two, p->zmask, p->m2,
				   p->mixed, src, zmask, m2);
	*known = p->known;
	*fill_ts = p->fill_ts;
	if (p->known == 0xff)
		return true;
	/* bytes the core did not know that memory has learned since */
	msr_mem_read(e, pa8, md, &mk, ms);
	for (unsigned i = 0; i < 8; i++) {
		uint8_t bit = (uint8_t)(0x80u >> i);

		if (!(*known & bit) && (mk & bit) &&
		    ms[i].kind == MSR_RF_INIT) {
			data[i] = md[i];
			*known |= bit;
		}
	}
	return true;
}

void msr_l1_update(struct msr_engine *e, unsigned core, uint64_t pa8,
		   const uint8_t data[8], uint8_t known,
		   const struct msr_src src[8], bool per_byte, uint8_t zmask,
		   uint8_t m2, uint32_t ts)
{
	uint32_t *lv;
	struct l1_piece *p = msr_l1_get(e, core, pa8, false, &lv);

	if (p)
		l1_piece_set(e, lv, p, data, known, src, per_byte, zmask, m2, ts);
}

struct l1_piece *msr_l1_get(struct msr_engine *e, unsigned core, uint64_t pa8,
			    bool create, uint32_t **line)
{
	uint64_t key = msr_l1_key(e, core, pa8);
	uint64_t base = pa8 & ~((uint64_t)e->line - 1);
	unsigned k = (unsigned)((pa8 & ((uint64_t)e->line - 1)) / 8);
	uint32_t *v;
	bool found;

	if (!create) {
		v = msr_map_get(&e->l1_map, key);
		found = v != NULL;
	} else {
		v = msr_map_upsert(&e->l1_map, key, &found);
	}
	if (v && found && (*v & L1_SHARED) &&
	    !l1_make_private(e, v, core, base, msr_mem_chunk(e, base, false)))
		v = NULL;
	else if (v && !found) {
		/* the fill sets every piece ... */
		uint32_t idx = l1_alloc(e);

		if (idx == UINT32_MAX) {
			msr_map_del_at(&e->l1_map, v);
			v = NULL;
		} else {
			struct l1_piece *p0 = l1_line(e, idx);

			/* ... but not its mixed record, so it has none yet */
			*v = idx;
			for (unsigned i = 0; i < e->line / 8; i++)
				p0[i].mixed = 0;
		}
	}
	if (line)
		*line = v;
	if (!v) {
		if (create || found)
			e->nomem = 1;
		return NULL;
	}
	return l1_line(e, *v) + k;
}

void msr_l1_set_mixed(struct msr_engine *e, uint32_t *line, struct l1_piece *p,
		      const struct msr_src src[8])
{
	*line |= L1_HAS_MIXED;
	if (!p->mixed) {
		uint32_t idx = msr_pool_alloc_raw(&e->mixed);

		if (idx == UINT32_MAX) {
			e->nomem = 1;
			p->one = src[0];
			p->zmask = p->m2 = 0;
			return;
		}
		p->mixed = idx + 1;
	}
	memcpy(msr_pool_at(&e->mixed, p->mixed - 1), src, 8 * sizeof(*src));
}

void msr_l1_set_compact(struct msr_engine *e, struct l1_piece *p,
			const struct msr_src *src, uint8_t zmask, uint8_t m2)
{
	static const struct msr_src zero;

	if (p->mixed) {
		msr_pool_free(&e->mixed, p->mixed - 1);
		p->mixed = 0;
	}
	p->m2 = m2;
	if (m2) {
		p->one = src[0];
		p->two = src[1];
		p->zmask = zmask;
		return;
	}
	/* all-zero sources have one form: no source, no zero mask */
	if (zmask == 0xff || src_eq(&src[0], &zero)) {
		p->one = zero;
		p->zmask = 0;
		return;
	}
	p->one = src[0];
	p->zmask = zmask;
}

void msr_l1_drop_range(struct msr_engine *e, unsigned core, uint64_t pa,
		       unsigned len)
{
	uint64_t lmask = (uint64_t)e->line - 1;
	uint64_t start = pa & ~lmask;
	uint64_t end = (pa + (len ? len : 1) + lmask) & ~lmask;

	/* whole L1 lines overlapping [pa, pa+len) leave the core's L1 */
	for (uint64_t a = start; a < end; a += e->line) {
		uint32_t *v = msr_map_get(&e->l1_map, msr_l1_key(e, core, a));

		if (!v)
			continue;
		if (*v & L1_SHARED) {
			struct chunk *p = msr_mem_chunk(e, a, false);

			for (unsigned k = 0; p && k < e->line / 8; k++)
				msr_chunk_cell(p, a + 8 * k)->l1_shared &=
					~(1u << core);
		} else {
			l1_free_private(e, *v);
		}
		msr_map_del_at(&e->l1_map, v);
	}
}

struct chist *msr_hist_get(struct msr_engine *e, uint64_t co)
{
	struct chist *h;

	if (!co)
		return NULL;
	h = &e->hist[co & (MSR_COMMIT_HISTORY - 1)];
	return h->co == co ? h : NULL;
}

/* ---- initial image (trace-format.md section 4) ---- */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int image_token(struct msr_engine *e, const char *path, const char *t,
		       size_t len, unsigned long line, size_t col,
		       uint64_t *addr, struct msr_error *err)
{
	char where[200];
	static const struct msr_src init_src;
	uint8_t data[8];
	uint64_t v = 0;
	size_t i = 0;

	snprintf(where, sizeof(where), "%s:%lu:%zu", path, line, col);
	if (t[0] == '@') {
		if (len < 2 || len > 11)
			return msr_error_set(err, MSR_E_FORMAT, "engine", where,
				"bad address token len=%zu: expected @ and 1 to 10 hex digits",
				len);
		i = 1;
	} else if (len != 16) {
		return msr_error_set(err, MSR_E_FORMAT, "engine", where,
			"bad data token len=%zu: expected 16 hex digits", len);
	}
	for (; i < len; i++) {
		int h = hexval((unsigned char)t[i]);

		if (h < 0)
			return msr_error_set(err, MSR_E_FORMAT, "engine", where,
				"bad hex digit char='%c' at column %zu", t[i],
				col + i);
		v = (v << 4) | (uint64_t)h;
	}
	if (t[0] == '@') {
		if (v & 7)
			return msr_error_set(err, MSR_E_FORMAT, "engine", where,
				"address 0x%llx is not 8-byte aligned",
				(unsigned long long)v);
		*addr = v;
		return MSR_OK;
	}
	for (i = 0; i < 8; i++)
		data[i] = (uint8_t)(v >> (56 - 8 * i));
	msr_mem_write(e, *addr, data, 0xff, &init_src);
	*addr += 8;
	return e->nomem ? msr_error_set(err, MSR_E_NOMEM, "engine", where,
					"out of memory loading the image")
			: MSR_OK;
}

int msr_engine_load_image(struct msr_engine *e, const char *path,
			  struct msr_error *err)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t bufsz = 0;
	ssize_t n;
	unsigned long line = 0;
	uint64_t addr = 0;
	int rc = MSR_OK;

	if (!f)
		return msr_error_set(err, MSR_E_IO, "engine", path,
				     "cannot open memory image: %s",
				     strerror(errno));
	while ((n = getline(&buf, &bufsz, f)) >= 0) {
		size_t i = 0;

		line++;
		while (i < (size_t)n) {
			size_t j;

			while (i < (size_t)n && (buf[i] == ' ' || buf[i] == '\t' ||
						 buf[i] == '\n' || buf[i] == '\r'))
				i++;
			if (i >= (size_t)n || buf[i] == '#')
				break;
			for (j = i; j < (size_t)n && buf[j] != ' ' &&
				    buf[j] != '\t' && buf[j] != '\n' &&
				    buf[j] != '\r' && buf[j] != '#'; j++)
				;
			rc = image_token(e, path, buf + i, j - i, line, i + 1,
					 &addr, err);
			if (rc < 0)
				goto out;
			i = j;
		}
	}
	if (ferror(f))
		rc = msr_error_set(err, MSR_E_IO, "engine", path,
				   "cannot read memory image: %s",
				   strerror(errno));
out:
	free(buf);
	fclose(f);
	return rc;
}
