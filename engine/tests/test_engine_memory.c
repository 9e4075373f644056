/*
 * test_engine_memory.c - the compact byte sources of memory blocks and L1
 * pieces (one or two sources and zero-source bytes, or a per-byte record)
 * read back
 * exactly what a per-byte reference holds, also through the compact reads
 * that fills and commits carry; the image allocates only the chunks touched;
 * L1 lines shared with the image read what a copy taken at the fill would.
 */
#include "engine-test.h"
#include "engine-internal.h"

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* a few distinct sources, the zero source among them */
static struct msr_src pick(uint64_t *r)
{
	struct msr_src s = {0};
	unsigned k = (unsigned)(rnd(r) % 4);

	if (k) {
		s.co = k;
		s.sseq = 10 + k;
		s.strand = k;
		s.kind = MSR_RF_COMMIT;
	}
	return s;
}

static void expect_src(const struct msr_src *got, const struct msr_src *want)
{
	for (unsigned i = 0; i < 8; i++)
		cr_assert(memcmp(&got[i], &want[i], sizeof(*got)) == 0,
			  "byte %u source differs", i);
}

/* One random write to block `b` of the test range (random bytes, a quarter
 * of them whole blocks, a random source), recorded in `ref`; false when
 * skipped: an initial-value write to a block without a record keeps none. */
static bool write_random(struct msr_engine *e, uint64_t *r, unsigned b,
			 struct msr_src ref[8])
{
	static const uint8_t d[8];
	uint8_t mask = (uint8_t)rnd(r);
	struct msr_src s = pick(r);

	if (rnd(r) % 4 == 0)
		mask = 0xff;
	if (s.kind == MSR_RF_INIT && !msr_mem_blk(e, 0x4000 + 8 * b, false))
		return false;
	msr_mem_write(e, 0x4000 + 8 * b, d, mask, &s);
	for (unsigned i = 0; i < 8; i++)
		if (mask & (0x80u >> i))
			ref[i] = s;
	return true;
}

Test(memory, block_sources_match_a_reference)
{
	struct tctx *t = t_new(true);
	struct msr_src ref[4][8];
	uint64_t r = 88172645463325252ULL;

	memset(ref, 0, sizeof(ref));
	for (unsigned n = 0; n < 20000; n++) {
		unsigned b = (unsigned)(rnd(&r) % 4);
		struct msr_src got[8];
		uint8_t data[8], known;

		if (!write_random(t->e, &r, b, ref[b]))
			continue;
		msr_mem_read(t->e, 0x4000 + 8 * b, data, &known, got);
		expect_src(got, ref[b]);
	}
	t_free(t);
}

/* A block written by two sources keeps both inline; a third takes a
 * per-byte record, and a write that leaves two puts them inline again. */
Test(memory, two_sources_stay_inline)
{
	struct tctx *t = t_new(true);
	static const uint8_t d[8];
	static const struct msr_src a = {1, 11, 1, MSR_RF_COMMIT};
	static const struct msr_src b = {2, 12, 2, MSR_RF_COMMIT};
	static const struct msr_src c = {3, 13, 3, MSR_RF_COMMIT};
	const uint64_t pa8 = 0x4000;
	struct msr_src got[8], want[8];
	uint8_t data[8], known, zmask, m2;

	msr_mem_write(t->e, pa8, d, 0xff, &a);
	msr_mem_write(t->e, pa8, d, 0x0f, &b); /* bytes 4-7 */
	cr_assert_eq(msr_mem_blk(t->e, pa8, false)->mixed, 0);
	cr_assert_eq(msr_mem_blk(t->e, pa8, false)->m2, 0x0f);
	msr_mem_write(t->e, pa8, d, 0x30, &c); /* bytes 2-3: a third source */
	cr_assert_neq(msr_mem_blk(t->e, pa8, false)->mixed, 0);
	cr_assert(msr_mem_read_c(t->e, pa8, data, &known, got, &zmask, &m2));
	msr_mem_write(t->e, pa8, d, 0xc0, &c); /* bytes 0-1: a's last ones */
	cr_assert_eq(msr_mem_blk(t->e, pa8, false)->mixed, 0, "back inline");
	cr_assert_not(msr_mem_read_c(t->e, pa8, data, &known, got, &zmask,
				     &m2));
	cr_assert_eq(zmask, 0);
	cr_assert_eq(m2, 0x0f);
	for (unsigned i = 0; i < 8; i++)
		want[i] = i < 4 ? c : b;
	msr_mem_read(t->e, pa8, data, &known, got);
	expect_src(got, want);
	t_free(t);
}

/* Per-byte sources into a piece, compact when all bytes share one source
 * or the zero one (what a fill or commit hands the engine). */
static void set_src(struct msr_engine *e, uint32_t *line, struct l1_piece *p,
		    const struct msr_src src[8])
{
	static const struct msr_src zero;
	const struct msr_src *one = &zero;
	uint8_t zmask = 0;
	unsigned i;

	for (i = 0; i < 8; i++) {
		if (!memcmp(&src[i], &zero, sizeof(zero)))
			zmask |= (uint8_t)(0x80u >> i);
		else if (one == &zero)
			one = &src[i];
		else if (memcmp(&src[i], one, sizeof(*one)))
			break;
	}
	if (i == 8)
		msr_l1_set_compact(e, p, one, zmask, 0);
	else
		msr_l1_set_mixed(e, line, p, src);
}

Test(memory, l1_piece_sources_match_a_reference)
{
	struct tctx *t = t_new(true);
	uint64_t r = 2463534242ULL;
	uint32_t *line;
	struct l1_piece *p = msr_l1_get(t->e, 0, 0x8000, true, &line);

	cr_assert(p);
	for (unsigned n = 0; n < 20000; n++) {
		struct msr_src src[8], got[8];
		unsigned form = (unsigned)(rnd(&r) % 3);
		struct msr_src one = pick(&r);

		for (unsigned i = 0; i < 8; i++)
			src[i] = form == 0 ? one
				: form == 1 && rnd(&r) % 2 ? (struct msr_src){0}
				: form == 1 ? one : pick(&r);
		set_src(t->e, line, p, src);
		msr_src_get(t->e, &p->one, &p->two, p->zmask, p->m2, p->mixed,
			    got);
		expect_src(got, src);
	}
	msr_l1_drop_range(t->e, 0, 0x8000, 8);
	t_free(t);
}

/* The compact reads a fill or commit carries (msr_mem_read_c,
 * msr_mem_image) set an L1 piece to the same per-byte sources. */
Test(memory, compact_reads_set_pieces_like_a_reference)
{
	struct tctx *t = t_new(true);
	struct msr_src ref[4][8];
	uint64_t r = 1181783497276652981ULL;
	uint32_t *line;
	struct l1_piece *p = msr_l1_get(t->e, 0, 0x4000, true, &line);

	cr_assert(p);
	memset(ref, 0, sizeof(ref));
	for (unsigned n = 0; n < 20000; n++) {
		unsigned b = (unsigned)(rnd(&r) % 4);
		uint8_t data[8], known, zmask, m2;
		struct msr_src src[8], got[8];
		bool per_byte;

		if (!write_random(t->e, &r, b, ref[b]))
			continue;
		if (n % 2)
			per_byte = msr_mem_read_c(t->e, 0x4000 + 8 * b, data,
						  &known, src, &zmask, &m2);
		else
			msr_mem_image(t->e, 0x4000 + 8 * b, data, &known, src,
				      &per_byte, &zmask, &m2);
		if (per_byte)
			msr_l1_set_mixed(t->e, line, p, src);
		else
			msr_l1_set_compact(t->e, p, src, zmask, m2);
		msr_src_get(t->e, &p->one, &p->two, p->zmask, p->m2, p->mixed,
			    got);
		expect_src(got, ref[b]);
	}
	msr_l1_drop_range(t->e, 0, 0x4000, 8);
	t_free(t);
}

/* Lines come and go with random pieces mixed, compact again, or never
 * mixed: dropping a line hands every mixed record it still holds back to
 * the pool, once (the drop reads a line's pieces only when the line has
 * had one), and a line made again from a reused entry starts with none. */
Test(memory, dropped_lines_return_their_mixed_records_once)
{
	struct tctx *t = t_new(true);
	struct msr_engine *e = t->e;
	static const struct msr_src one = {1, 11, 1, MSR_RF_COMMIT};
	uint64_t r = 0x9e3779b97f4a7c15ULL;
	unsigned pieces = e->line / 8, live = 0, peak = 0;
	struct msr_src src[8];

	for (unsigned i = 0; i < 8; i++)
		src[i] = (struct msr_src){i + 1, 20 + i, 2, MSR_RF_COMMIT};
	for (unsigned round = 0; round < 200; round++) {
		for (unsigned l = 0; l < 32; l++) {
			uint64_t pa = 0x10000 + (uint64_t)l * e->line;
			uint32_t *line;
			struct l1_piece *p0 = msr_l1_get(e, 1, pa, true, &line);

			cr_assert(p0);
			for (unsigned k = 0; k < pieces; k++) {
				unsigned form = (unsigned)(rnd(&r) % 3);

				if (form == 0) {
					msr_l1_set_compact(e, p0 + k, &one, 0, 0);
					continue;
				}
				msr_l1_set_mixed(e, line, p0 + k, src);
				if (++live > peak)
					peak = live;
				if (form == 2) { /* compact again */
					msr_l1_set_compact(e, p0 + k, &one, 0, 0);
					live--;
				}
			}
		}
		msr_l1_drop_range(e, 1, 0x10000, 32 * e->line);
		live = 0;
		for (unsigned l = 0; l < 32; l++)
			cr_assert_null(msr_l1_get(e, 1,
						  0x10000 + (uint64_t)l * e->line,
						  false, NULL));
	}
	/* freed records were reused: the pool never held more than one
	 * round's worth */
	cr_assert_leq(e->mixed.used, peak,
		      "mixed records: %u allocated, at most %u live",
		      e->mixed.used, peak);
	/* and each is on the free list once: allocating them all again
	 * hands out distinct records without growing the pool */
	{
		uint32_t n = e->mixed.used;
		uint8_t *seen = calloc(n, 1);

		cr_assert(seen);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t idx = msr_pool_alloc_raw(&e->mixed);

			cr_assert_lt(idx, n);
			cr_assert_not(seen[idx], "record %u handed out twice",
				      idx);
			seen[idx] = 1;
		}
		free(seen);
	}
	t_free(t);
}

/* The image allocates a page's chunks only as they are touched, and every
 * byte reads back through the chunk cache and past it: blocks spread over
 * 64 pages, two chunks of each (4 blocks of each chunk), over more chunk
 * numbers than the cache has slots, written twice over in a scrambled
 * order. */
#define SPARSE_BLOCKS (64 * 2 * 4)
static uint64_t sparse_block(unsigned i)
{
	return 0x100000 + (uint64_t)(i / 8) * 4096 +
	       (i / 4 % 2) * 5 * MSR_CHUNK_SIZE + (i % 4) * (MSR_CHUNK_SIZE / 4);
}

Test(memory, sparse_chunks_hold_every_byte)
{
	struct tctx *t = t_new(true);
	struct msr_src s = {.co = 7, .sseq = 9, .strand = 3, .kind = MSR_RF_COMMIT};

	cr_assert_gt(64 * MSR_PAGE_CHUNKS, MSR_CHUNK_CACHE,
		     "the blocks' chunk numbers outnumber the cache's slots");
	for (unsigned round = 0; round < 2; round++)
		for (unsigned n = 0; n < SPARSE_BLOCKS; n++) {
			unsigned i = (n * 389u + round * 17u) % SPARSE_BLOCKS;
			uint64_t pa8 = sparse_block(i);
			uint8_t d[8];

			for (unsigned k = 0; k < 8; k++)
				d[k] = (uint8_t)(pa8 >> 3) + (uint8_t)k + (uint8_t)round;
			msr_mem_write(t->e, pa8, d, round ? 0x0f : 0xf0, &s);
		}
	cr_assert_eq(t->e->pages.used, 64, "one page record per touched page");
	cr_assert_eq(t->e->chunks.used, 128, "two chunks of each page, no more");
	for (unsigned i = 0; i < SPARSE_BLOCKS; i++) {
		uint64_t pa8 = sparse_block(i);
		uint8_t data[8], known;
		struct msr_src got[8];

		msr_mem_read(t->e, pa8, data, &known, got);
		cr_assert_eq(known, 0xff, "block %#llx", (unsigned long long)pa8);
		for (unsigned k = 0; k < 8; k++)
			cr_assert_eq(data[k], (uint8_t)((uint8_t)(pa8 >> 3) + k + (k >= 4)),
				     "block %#llx byte %u", (unsigned long long)pa8, k);
		msr_mem_read(t->e, pa8 + 8, data, &known, got);
		cr_assert_eq(known, 0, "an untouched block of a touched chunk");
	}
	t_free(t);
}

/* A pool hands out runs of consecutive, zeroed elements past its
 * high-water mark, growing as it must, and keeps the elements it holds. */
Test(memory, pool_runs_are_consecutive_and_zeroed)
{
	struct msr_pool p;
	uint32_t a, b, run;

	msr_pool_init(&p, 24);
	a = msr_pool_alloc(&p);
	b = msr_pool_alloc(&p);
	memset(msr_pool_at(&p, a), 0xa5, 24);
	memset(msr_pool_at(&p, b), 0x5a, 24);
	msr_pool_free(&p, a);
	run = msr_pool_alloc_run(&p, 1000);
	cr_assert_eq(run, 2, "past the high-water mark, not from the free list");
	cr_assert_eq(p.used, 1002);
	for (uint32_t i = 0; i < 1000; i++) {
		const unsigned char *e = msr_pool_at(&p, run + i);

		for (unsigned k = 0; k < 24; k++)
			cr_assert_eq(e[k], 0, "element %u byte %u", i, k);
		memset(msr_pool_at(&p, run + i), (int)(i & 0xff), 24);
	}
	cr_assert_eq(*(unsigned char *)msr_pool_at(&p, b), 0x5a, "kept");
	cr_assert_eq(msr_pool_alloc(&p), a, "the free list is still used");
	cr_assert_eq(msr_pool_alloc_run(&p, 0), UINT32_MAX);
	cr_assert_eq(msr_pool_alloc_run(&p, UINT32_MAX), UINT32_MAX,
		     "a run larger than any pool fails, without harm");
	cr_assert_eq(*(unsigned char *)msr_pool_at(&p, run + 999), 999 & 0xff);
	msr_pool_release(&p);
}

/* A page turns dense once a quarter of its chunks are touched: its chunks
 * move into one run, and every byte reads back the same, through the
 * chunk cache and past it, before and after. Its n-th chunk touched is
 * dense_chunk(n), in a scrambled order, one block of each. */
#define DENSE_PAGE 0x340000
static unsigned dense_chunk(unsigned n)
{
	return (n * 37u + 5u) % MSR_PAGE_CHUNKS;
}

static uint64_t dense_block(unsigned c)
{
	return DENSE_PAGE + c * MSR_CHUNK_SIZE + 8 * (c % (MSR_CHUNK_SIZE / 8));
}

Test(memory, a_page_turns_dense_and_keeps_every_byte)
{
	struct tctx *t = t_new(true);
	struct msr_src s = {.co = 5, .sseq = 6, .strand = 2, .kind = MSR_RF_COMMIT};
	static const uint8_t other[8] = {9, 8, 7, 6, 5, 4, 3, 2};
	uint8_t data[8], known;
	struct msr_src got[8];

	/* the last chunk is the quarter that turns the page dense */
	for (unsigned n = 0; n < MSR_PAGE_DENSE_AT; n++) {
		unsigned c = dense_chunk(n);
		uint64_t pa8 = dense_block(c);
		uint8_t d[8];

		for (unsigned k = 0; k < 8; k++)
			d[k] = (uint8_t)(c * 8 + k);
		msr_mem_write(t->e, pa8, d, n % 2 ? 0xff : 0x3c, &s);
		if (n + 1 < MSR_PAGE_DENSE_AT)
			cr_assert_eq(t->e->chunks.used, n + 1, "sparse: one chunk each");
	}
	cr_assert_eq(t->e->chunks.used, (MSR_PAGE_DENSE_AT - 1) + MSR_PAGE_CHUNKS,
		     "dense: one run of the page's chunks");
	/* the chunks it left are reused */
	msr_mem_write(t->e, 0x900000, other, 0xff, &s);
	cr_assert_eq(t->e->chunks.used, (MSR_PAGE_DENSE_AT - 1) + MSR_PAGE_CHUNKS);
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned n = 0; n < MSR_PAGE_DENSE_AT; n++) {
			unsigned c = dense_chunk(n);
			uint64_t pa8 = dense_block(c);
			uint8_t want = n % 2 ? 0xff : 0x3c;

			msr_mem_read(t->e, pa8, data, &known, got);
			cr_assert_eq(known, want, "round %u chunk %u", round, c);
			for (unsigned k = 0; k < 8; k++)
				if (want & (0x80u >> k))
					cr_assert_eq(data[k], (uint8_t)(c * 8 + k),
						     "chunk %u byte %u", c, k);
			cr_assert_eq(got[2].co, 5, "chunk %u: its source kept", c);
		}
		/* a chunk in every slot of the cache: the next round's reads
		 * go past it */
		for (unsigned c = 0; c < MSR_CHUNK_CACHE; c++)
			msr_mem_write(t->e, 0x4000000 + (uint64_t)c * MSR_CHUNK_SIZE,
				      other, 0x01, &s);
	}
	/* an untouched chunk of the dense page: unknown, initial source */
	msr_mem_read(t->e, DENSE_PAGE + MSR_CHUNK_SIZE * (MSR_PAGE_CHUNKS - 1) + 8,
		     data, &known, got);
	cr_assert_eq(known, 0);
	cr_assert_eq(got[0].kind, MSR_RF_INIT);
	t_free(t);
}

/* An issue asks for the image lines its commit or data will read, but
 * must not create them: a trace of issues to fresh addresses (which never
 * commit or return data) keeps the image and the L1 images empty. */
Test(memory, issues_touch_no_image)
{
	struct tctx *t = t_new(false);
	struct msr_src s = {.co = 1, .sseq = 2, .strand = 1, .kind = MSR_RF_COMMIT};
	static const uint8_t d[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint8_t data[8], known;

	for (unsigned i = 0; i < 256; i++) {
		uint64_t pa = 0x200000 + (uint64_t)i * 4096 + (i % 8) * 520;

		ld_issue(t, i % 64, pa & ~7ULL, 3, MSR_IT_LOAD, i);
		st_issue(t, (i + 1) % 64, pa & ~7ULL, 0x1122334455667788ULL, 0xff,
			 MSR_IT_STORE, i);
	}
	cr_assert_eq(t->e->pages.used, 0, "no page record for an issue");
	cr_assert_eq(t->e->chunks.used, 0, "no chunk for an issue");
	cr_assert_eq(t->e->l1_map.count, 0, "no L1 line for an issue");
	/* a touched page: issues to its other chunks create none either */
	msr_mem_write(t->e, 0x800000, d, 0xff, &s);
	for (unsigned c = 0; c < MSR_PAGE_CHUNKS; c++) {
		ld_issue(t, 1, 0x800000 + c * MSR_CHUNK_SIZE + 8, 3, MSR_IT_LOAD,
			 300);
		st_issue(t, 2, 0x800000 + c * MSR_CHUNK_SIZE + 16, 7, 0xff,
			 MSR_IT_STORE, 300);
	}
	cr_assert_eq(t->e->pages.used, 1);
	cr_assert_eq(t->e->chunks.used, 1, "only the written chunk");
	msr_engine_mem_peek(t->e, 0x800000, data, &known);
	cr_assert_eq(known, 0xff);
	cr_assert(memcmp(data, d, 8) == 0, "the written block unchanged");
	msr_engine_mem_peek(t->e, 0x800008, data, &known);
	cr_assert_eq(known, 0, "issued blocks stay unknown");
	t_free(t);
}

/* ---- L1 lines shared with the image ---- */

/* A fill record of `line` taken from the image now, as a data return
 * takes it. */
static void capture_fill(struct msr_engine *e, uint64_t line,
			 struct fill_rec *f)
{
	memset(f, 0, sizeof(*f));
	f->line = line;
	msr_l1_capture(e, f);
}

/* two stores' sources and two blocks of bytes */
static const struct msr_src st_a = {1, 11, 1, MSR_RF_COMMIT};
static const struct msr_src st_b = {2, 12, 2, MSR_RF_COMMIT};
static const uint8_t d1[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static const uint8_t d2[8] = {9, 9, 9, 9, 9, 9, 9, 9};

/* What msr_l1_read_c gives for one hit. */
struct l1_hit {
	uint8_t data[8], known, zm, m2;
	struct msr_src src[8];
	bool pb;
	uint32_t ts;
};

static bool l1_hit(struct msr_engine *e, unsigned core, uint64_t pa8,
		   struct l1_hit *h)
{
	return msr_l1_read_c(e, core, pa8, h->data, &h->known, h->src, &h->zm,
			     &h->m2, &h->pb, &h->ts);
}

/* The core's copy of `line`: 0 not held, 1 private, 2 shared. */
static int l1_form(struct msr_engine *e, unsigned core, uint64_t line)
{
	uint32_t *v = msr_map_get(&e->l1_map, msr_l1_key(e, core, line));

	return !v ? 0 : (*v & L1_SHARED) ? 2 : 1;
}

/* A fill the image still holds takes no pool element; a write to its
 * line first gives the core a private copy, which keeps the old bytes
 * and the fill's cycle; a drop clears the line's mark in the image. */
Test(memory, a_shared_line_turns_private_before_its_block_changes)
{
	struct tctx *t = t_new(true);
	struct msr_engine *e = t->e;
	struct fill_rec f;
	struct l1_hit h;

	msr_mem_write(e, 0x6000, d1, 0xff, &st_a);
	msr_mem_write(e, 0x6008, d1, 0xf0, &st_a);
	capture_fill(e, 0x6000, &f);
	cr_assert(msr_l1_fill(e, 2, &f, 77));
	cr_assert(msr_l1_fill(e, 3, &f, 78));
	cr_assert_eq(l1_form(e, 2, 0x6000), 2);
	cr_assert_eq(l1_form(e, 3, 0x6000), 2);
	cr_assert_eq(e->l1.used, 0, "no pool element for a shared line");
	cr_assert_neq(msr_chunk_cell(msr_mem_chunk(e, 0x6008, false),
				     0x6008)->l1_shared, 0);
	/* bytes 4-7, unknown at the fill, are observed: the shared line
	 * shows them, as a copy would once memory learned them */
	msr_mem_learn(e, 0x6008, d2, 0x0f);
	cr_assert_eq(l1_form(e, 2, 0x6000), 2, "a first observation shares");
	cr_assert(l1_hit(e, 2, 0x6008, &h));
	cr_assert_eq(h.known, 0xff);
	/* byte 4 changes: both cores keep the old line, and a byte the fill
	 * did not know that memory no longer holds as first observed stays
	 * unknown to them */
	msr_mem_write(e, 0x6008, d1, 0x08, &st_b);
	cr_assert_eq(l1_form(e, 2, 0x6000), 1);
	cr_assert_eq(l1_form(e, 3, 0x6000), 1);
	cr_assert_eq(e->l1.used, 2);
	cr_assert(l1_hit(e, 2, 0x6008, &h));
	cr_assert_eq(h.known, 0xf7, "byte 4 unknown, 5-7 as first observed");
	cr_assert(memcmp(h.data, d1, 4) == 0);
	cr_assert_eq(h.data[5], 9);
	cr_assert_eq(h.ts, 77);
	cr_assert(l1_hit(e, 3, 0x6000, &h));
	cr_assert_eq(h.known, 0xff);
	cr_assert(memcmp(h.data, d1, 8) == 0);
	cr_assert_eq(h.ts, 78);
	/* filled again now: shared again, the private element given back */
	capture_fill(e, 0x6000, &f);
	cr_assert(msr_l1_fill(e, 2, &f, 90));
	cr_assert_eq(l1_form(e, 2, 0x6000), 2);
	cr_assert(l1_hit(e, 2, 0x6008, &h));
	cr_assert_eq(h.known, 0xff);
	cr_assert_eq(h.data[4], 5);
	cr_assert_eq(h.ts, 90);
	msr_l1_drop_range(e, 2, 0x6000, 16);
	cr_assert_eq(l1_form(e, 2, 0x6000), 0);
	/* no core shares the line now: a write makes no copy */
	msr_mem_write(e, 0x6000, d2, 0xff, &st_b);
	cr_assert_eq(l1_form(e, 2, 0x6000), 0);
	cr_assert_eq(l1_form(e, 3, 0x6000), 1);
	t_free(t);
}

/* A fill whose line changed after its data return is stored privately,
 * with what the data return saw. */
Test(memory, a_fill_the_image_no_longer_holds_is_private)
{
	struct tctx *t = t_new(true);
	struct msr_engine *e = t->e;
	struct fill_rec f;
	struct l1_hit h;

	msr_mem_write(e, 0x7000, d1, 0xff, &st_a);
	msr_mem_write(e, 0x7008, d1, 0xff, &st_a);
	/* a byte changed */
	capture_fill(e, 0x7000, &f);
	msr_mem_write(e, 0x7000, d2, 0x01, &st_b);
	cr_assert(msr_l1_fill(e, 0, &f, 5));
	cr_assert_eq(l1_form(e, 0, 0x7000), 1);
	cr_assert(l1_hit(e, 0, 0x7000, &h));
	cr_assert(memcmp(h.data, d1, 8) == 0);
	cr_assert_not(h.pb);
	cr_assert_eq(h.zm | h.m2, 0, "one source: a's");
	cr_assert(memcmp(&h.src[0], &st_a, sizeof(st_a)) == 0);
	/* the same bytes rewritten by another store: its source changed */
	capture_fill(e, 0x7000, &f);
	msr_mem_write(e, 0x7008, d1, 0xff, &st_b);
	cr_assert(msr_l1_fill(e, 1, &f, 6));
	cr_assert_eq(l1_form(e, 1, 0x7000), 1);
	cr_assert(l1_hit(e, 1, 0x7008, &h));
	cr_assert(memcmp(&h.src[0], &st_a, sizeof(st_a)) == 0);
	/* a record that knows a byte the image does not */
	msr_mem_write(e, 0x7010, d1, 0x7f, &st_a);
	msr_mem_write(e, 0x7018, d1, 0xff, &st_a);
	capture_fill(e, 0x7010, &f);
	f.known[0] = 0xff;
	cr_assert(msr_l1_fill(e, 2, &f, 7));
	cr_assert_eq(l1_form(e, 2, 0x7010), 1);
	cr_assert(l1_hit(e, 2, 0x7010, &h));
	cr_assert_eq(h.known, 0xff);
	/* and one the image still holds */
	capture_fill(e, 0x7010, &f);
	cr_assert(msr_l1_fill(e, 3, &f, 8));
	cr_assert_eq(l1_form(e, 3, 0x7010), 2);
	t_free(t);
}

/* What an L1 hit read before lines were shared: the copy the fill (or
 * the last update) stored, with the bytes it did not know that memory
 * has since learned (initial source) filled in. */
struct ref_copy {
	bool held;
	uint8_t data[8], known;
	struct msr_src src[8];
	uint32_t ts;
};

#define REF_CORES 3
#define REF_LINES 2 /* 16-byte lines at 0x4000 */

static void ref_store(struct ref_copy *c, const uint8_t data[8], uint8_t known,
		      const struct msr_src *src, bool per_byte, uint8_t zmask,
		      uint8_t m2, uint32_t ts, struct msr_engine *e)
{
	c->held = true;
	memcpy(c->data, data, 8);
	c->known = known;
	if (per_byte)
		memcpy(c->src, src, sizeof(c->src));
	else
		msr_src_get(e, &src[0], &src[1], zmask, m2, 0, c->src);
	c->ts = ts;
}

static void ref_expect(struct msr_engine *e, const struct ref_copy *c,
		       unsigned core, uint64_t pa8)
{
	uint8_t md[8], mk, want_known = c->known, want[8];
	struct msr_src got[8], ms[8];
	struct l1_hit h;
	bool held = l1_hit(e, core, pa8, &h);

	cr_assert_eq(held, c->held, "core %u block %llx held", core,
		     (unsigned long long)pa8);
	if (!held)
		return;
	memcpy(want, c->data, 8);
	msr_mem_read(e, pa8, md, &mk, ms);
	for (unsigned i = 0; i < 8; i++) {
		uint8_t bit = (uint8_t)(0x80u >> i);

		if (!(want_known & bit) && (mk & bit) &&
		    ms[i].kind == MSR_RF_INIT) {
			want[i] = md[i];
			want_known |= bit;
		}
	}
	cr_assert_eq(h.known, want_known, "core %u block %llx known", core,
		     (unsigned long long)pa8);
	/* unknown bytes too: they read as 0, as the image's do */
	for (unsigned i = 0; i < 8; i++)
		cr_assert_eq(h.data[i], want[i], "core %u block %llx byte %u",
			     core, (unsigned long long)pa8, i);
	if (h.pb)
		memcpy(got, h.src, sizeof(got));
	else
		msr_src_get(e, &h.src[0], &h.src[1], h.zm, h.m2, 0, got);
	expect_src(got, c->src);
	cr_assert_eq(h.ts, c->ts);
}

/* Random writes, first observations, fills stored some time after their
 * data return (so that some still match the image and are shared, others
 * not), own-core updates and drops on two lines seen by three cores: every
 * L1 hit reads what the copy stored at the fill would. */
Test(memory, shared_lines_read_like_copies_taken_at_the_fill)
{
	struct tctx *t = t_new(true);
	struct msr_engine *e = t->e;
	struct ref_copy ref[REF_CORES][REF_LINES * 2];
	struct fill_rec pend[REF_CORES];
	bool pending[REF_CORES] = {false};
	unsigned shared_reads = 0, private_reads = 0, unshared = 0;
	uint64_t r = 0x2545F4914F6CDD1DULL;

	cr_assert_eq(e->line, 16);
	memset(ref, 0, sizeof(ref));
	for (uint32_t n = 1; n <= 200000; n++) {
		unsigned core = (unsigned)(rnd(&r) % REF_CORES);
		unsigned b = (unsigned)(rnd(&r) % (REF_LINES * 2));
		uint64_t base = 0x4000 + (n / 2000) * 0x40;
		uint64_t pa8 = base + 8 * (uint64_t)b;
		uint64_t line = pa8 & ~15ULL;
		unsigned op = (unsigned)(rnd(&r) % 16);
		uint8_t d[8];

		if (n % 2000 == 0) {
			/* fresh memory, its bytes unknown: the cores move on */
			for (unsigned c = 0; c < REF_CORES; c++)
				msr_l1_drop_range(e, c, base - 0x40, 0x40);
			memset(ref, 0, sizeof(ref));
			memset(pending, 0, sizeof(pending));
		}
		for (unsigned i = 0; i < 8; i++)
			d[i] = (uint8_t)(rnd(&r) % 4);
		if (op < 3) { /* a write: one to three bytes, or the block */
			struct msr_src s = pick(&r);
			uint8_t mask = (uint8_t)(rnd(&r) % 2 ? 0xff
					: (0x80u >> rnd(&r) % 8) |
					  (0x80u >> rnd(&r) % 8));
			struct chunk *p = msr_mem_chunk(e, pa8, false);

			if (p && msr_chunk_cell(p, pa8)->l1_shared)
				unshared++;
			msr_mem_write(e, pa8, d, mask, &s);
		} else if (op < 4) { /* a first observation */
			msr_mem_learn(e, pa8, d, (uint8_t)rnd(&r));
		} else if (op < 7) { /* a data return */
			capture_fill(e, line, &pend[core]);
			pending[core] = true;
		} else if (op < 10) { /* its fill, some events later */
			const struct fill_rec *f = &pend[core];
			unsigned l0 = (unsigned)((f->line - base) / 8);

			if (!pending[core])
				continue;
			pending[core] = false;
			cr_assert(msr_l1_fill(e, core, f, n));
			for (unsigned k = 0; k < 2; k++)
				ref_store(&ref[core][l0 + k], f->data + 8 * k,
					  f->known[k], f->src + 8 * k,
					  f->per_byte[k], f->zmask[k], f->m2[k],
					  n, e);
		} else if (op < 11) { /* the core's own commit updates it */
			uint8_t data[8], known, zm, m2;
			struct msr_src src[8];
			bool pb = msr_mem_read_c(e, pa8, data, &known, src, &zm,
						 &m2);

			msr_l1_update(e, core, pa8, data, known, src, pb, zm, m2,
				      n);
			if (ref[core][b].held)
				ref_store(&ref[core][b], data, known, src, pb,
					  zm, m2, n, e);
		} else if (op < 12) { /* an invalidation or eviction */
			msr_l1_drop_range(e, core, line, 16);
			ref[core][b & ~1u].held = false;
			ref[core][b | 1u].held = false;
		} else { /* an L1 hit */
			int form = l1_form(e, core, line);

			shared_reads += form == 2;
			private_reads += form == 1;
			ref_expect(e, &ref[core][b], core, pa8);
		}
	}
	/* and every copy at the end */
	for (unsigned c = 0; c < REF_CORES; c++)
		for (unsigned b = 0; b < REF_LINES * 2; b++)
			ref_expect(e, &ref[c][b], c,
				   0x4000 + 100 * 0x40 + 8 * (uint64_t)b);
	cr_assert_gt(shared_reads, 1000, "shared reads: %u", shared_reads);
	cr_assert_gt(private_reads, 1000, "private reads: %u", private_reads);
	cr_assert_gt(unshared, 1000, "writes to shared lines: %u", unshared);
	t_free(t);
}
