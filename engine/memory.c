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

/* In an l1_map value: some piece of the line may have a mixed record. */
#define L1_HAS_MIXED 0x80000000u

static struct l1_piece *l1_line(struct msr_engine *e, uint32_t v)
{
	return msr_pool_at(&e->l1, v & ~L1_HAS_MIXED);
}

struct l1_piece *msr_l1_get(struct msr_engine *e, unsigned core, uint64_t pa8,
			    bool create, uint32_t **line)
{
	uint64_t key = msr_l1_key(e, core, pa8);
	unsigned k = (unsigned)((pa8 & ((uint64_t)e->line - 1)) / 8);
	uint32_t *v;
	bool found;

	if (!create) {
		v = msr_map_get(&e->l1_map, key);
		if (line)
			*line = v;
		return v ? l1_line(e, *v) + k : NULL;
	}
	v = msr_map_upsert(&e->l1_map, key, &found);
	if (v && !found) {
		/* the fill sets every piece ... */
		uint32_t idx = msr_pool_alloc_raw(&e->l1);

		/* an index with the flag's bit (2^31 lines) is out of memory */
		if (idx != UINT32_MAX && (idx & L1_HAS_MIXED)) {
			msr_pool_free(&e->l1, idx);
			idx = UINT32_MAX;
		}
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
		/* a line that never had a mixed record is dropped without
		 * reading its pieces (a cache miss, waited for, on a line
		 * filled long ago) */
		if (*v & L1_HAS_MIXED) {
			struct l1_piece *p0 = l1_line(e, *v);

			for (unsigned i = 0; i < e->line / 8; i++)
				if (p0[i].mixed)
					msr_pool_free(&e->mixed,
						      p0[i].mixed - 1);
		}
		msr_pool_free(&e->l1, *v & ~L1_HAS_MIXED);
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
