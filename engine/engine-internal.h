/*
 * engine-internal.h - the memory-sync engine's state (semantics.md section 2)
 * shared by the engine's source files.
 *
 * Per strand: load and store rings (the store ring holds the store buffer,
 * the retired buffer and the RMO buffer as entry states) with per-key
 * chains of their live entries (youngest first) and a small FIFO of
 * outstanding L1 misses. Global: the memory access buffer (MAB) of entries
 * that await acknowledgements, lists of the commits awaiting answers per
 * strand and line, one EVICT FIFO per L2 bank, the per-core L1 pieces, the
 * sparse memory image and a bounded commit history. Nothing here is global
 * or static mutable state; nothing here prints or exits.
 */
#ifndef MSR_ENGINE_INTERNAL_H
#define MSR_ENGINE_INTERNAL_H

#include "engine.h"
#include "util-internal.h"

#include <stdarg.h>
#include <string.h>

#define MSR_IO_BIT (1ULL << 39)
/* The memory image is a map of 4 KiB pages, each allocated in 64-byte
 * chunks as they are first touched, so that a trace that touches one word
 * per page (a TLB test) costs about 0.8 KiB a page, until a quarter of its
 * chunks are: the page then turns dense, all its chunks in one run that
 * the page map names directly (no per-chunk index to miss on). The chunk
 * cache covers 64 KiB of addresses, a whole footprint of that size. */
#define MSR_PAGE_SHIFT 12
#define MSR_CHUNK_SHIFT 6
#define MSR_CHUNK_SIZE (1u << MSR_CHUNK_SHIFT)
#define MSR_PAGE_CHUNKS (1u << (MSR_PAGE_SHIFT - MSR_CHUNK_SHIFT))
#define MSR_CHUNK_CACHE 1024 /* power of two */
#define MSR_PAGE_DENSE_AT (MSR_PAGE_CHUNKS / 4)
#define MSR_L1_LINE_MAX 64
#define MSR_FILLS 16
#define MSR_FILL_SLOTS 64
#define MSR_DEFAULT_MAB_WINDOW 65536
#define MSR_COMMIT_HISTORY 65536 /* power of two */
#define MSR_OBSERVED_SEARCH 256  /* commits or stores walked back to name a value */

/* Where one byte's current value came from (feeds msr_rf). */
struct msr_src {
	uint64_t co;            /* COMMIT: commit number */
	uint64_t sseq : 48;     /* COMMIT / BYPASS: store entry */
	uint64_t strand : 8;
	uint64_t kind : 8;      /* enum msr_rf_kind */
};
/* two words, no padding: sources compare and copy as words */
_Static_assert(sizeof(struct msr_src) == 16, "msr_src is two words");

/* ld_keys: the key of an I/O address's execution start (msr_eng_ld_io),
 * beside the key of its chain (the address) */
#define LD_EXEC_KEY (1ULL << 63)

/* Load entry flags */
#define LDF_DATA 0x01
#define LDF_EXEC 0x02
#define LDF_POPPED 0x04
#define LDF_IO 0x08
#define LDF_RMO_OVERLAP 0x10 /* an RMO store overlapped at issue */
#define LDF_LATER 0x20 /* a later entry of its instruction (group != seq) */

struct ld_ent {
	uint64_t pa;          /* byte address of this entry's first byte */
	uint64_t key;         /* 8-byte block (cacheable) or full pa (I/O) */
	struct msr_chain_link link; /* the chain of the strand's live loads
				     * with this key */
	uint64_t group;       /* seq of the first entry of the instruction */
	uint64_t bypass_sseq; /* model's full-bypass decision, 0 = none */
	uint64_t iseq, pc;
	uint64_t issue_event, data_event;
	uint64_t issue_offset;
	uint32_t issue_ts, data_ts;
	uint32_t l1_fill_ts;  /* L1 hit: when the piece it read was filled */
	uint8_t itype, dsrc, flags;
	uint8_t nent;         /* entries of the instruction (1, 2, 8) */
	uint8_t acc;          /* access size of the instruction, bytes */
	uint8_t mask;         /* bytes of this block accessed */
	uint8_t known;        /* bytes of data[] whose value is known */
	/* not cleared at issue (written before read): keep these last */
	uint8_t bypass_data[8];
	uint8_t data[8];
	/* its sources: src[0..7] when src_pb, else src[0] and src[1] with
	 * src_zm and src_m2 as in struct blk (msr_ld_src gives one byte's) */
	bool src_pb;
	uint8_t src_zm, src_m2;
	struct msr_src src[8];
};

/* Store entry flags */
#define STF_COMMITTED 0x01
#define STF_ACKED 0x02
#define STF_CRETIRED 0x04 /* its commit left the MAB */
#define STF_EXEC 0x08
#define STF_POPPED 0x10
#define STF_RMO 0x20

struct st_ent {
	uint64_t pa;
	struct msr_chain_link link; /* the chain of the strand's live stores
				     * to this block */
	uint64_t co;
	uint64_t iseq;
	uint64_t issue_event, commit_event;
	uint64_t issue_offset;
	uint32_t issue_ts, commit_ts;
	uint8_t data[8];
	uint8_t bmask, itype, flags, commit_mask;
	uint8_t nent;   /* stores in its group, when it is the group's first */
	uint16_t gback; /* how far back its group's first store is */
	/* per byte i of the block (bit 0x80 >> i): how many stores back the
	 * youngest older store of this chain writing it is; 0 none,
	 * ST_BACK_FAR too far to say (walk the chain) */
	uint16_t wr_back[8];
};
_Static_assert(sizeof(struct st_ent) == 96, "a store entry is 1.5 cache lines");

#define ST_BACK_FAR 0xffffu

/* The first store of the group of store `q`, `se` (one block store's
 * ST_ISSUEs form one group; any other store is a group of its own). */
static inline uint64_t msr_st_group(uint64_t q, const struct st_ent *se)
{
	return q - se->gback;
}

/* An outstanding L1 miss: the line as of its LD_DATA, awaiting LD_FILL. */
struct fill_rec {
	uint64_t line;
	uint64_t lseq;
	uint64_t mpos;  /* MAB tail at its LD_DATA: older commits are in data */
	bool dead;      /* invalidated by a newer commit/evict before the fill */
	uint8_t known[MSR_L1_LINE_MAX / 8];
	/* block k's sources: src[8k..8k+7] when per_byte[k], else src[8k]
	 * and src[8k+1] with zmask[k] and m2[k] (struct blk), so the fill
	 * needs no uniformity test */
	bool per_byte[MSR_L1_LINE_MAX / 8];
	uint8_t zmask[MSR_L1_LINE_MAX / 8];
	uint8_t m2[MSR_L1_LINE_MAX / 8];
	uint8_t data[MSR_L1_LINE_MAX];
	struct msr_src src[MSR_L1_LINE_MAX];
};

struct strand {
	struct msr_ring ld, st;   /* struct ld_ent, struct st_ent */
	uint64_t pend_n;          /* its commits in the engine's `pend` lists */
	struct msr_map st_blocks; /* pa8 -> youngest live store (low 32 bits) */
	struct msr_map ld_keys;   /* load key -> youngest live load (low 32 bits) */
	uint64_t ld_exec_cur;     /* no unexecuted live load below this */
	uint64_t st_exec_cur;
	/* committed, unacknowledged normal stores: a min-heap of their seqs,
	 * so an ST_ACK takes the oldest without passing the uncommitted ones
	 * before it (a flood of acks behind stores that never commit) */
	uint64_t *acks;
	uint32_t acks_n, acks_cap;
	uint64_t st_rmo_ack_cur;  /* RMO stores below are acked */
	uint64_t ld_live_tail;    /* seq after the youngest unpopped load */
	uint64_t st_live_tail;
	uint64_t executed;        /* instructions executed (last iseq) */
	uint64_t last_pc;
	/* MSR_FILLS records in e->fill_recs: out of line, so that the
	 * strands' other fields share pages and a replay touches a strand's
	 * 18 KiB of fill records only as it uses them */
	struct fill_rec *fills;
	uint8_t fill_head, fill_n; /* < MSR_FILLS, <= MSR_FILLS */
	bool short_reported;
};

enum mab_type { MAB_COMMIT = 1, MAB_EVICT = 2 };

struct mab_ent {
	uint8_t type;
	uint8_t strand;
	uint8_t mask;     /* commit bmask */
	uint8_t rmo, atomic, known; /* known: bytes of data[] known */
	uint32_t await;   /* cores still to answer */
	uint32_t invvec;  /* as sent */
	uint32_t ts;
	uint64_t pa;      /* commit: pa8; evict: 16-byte piece */
	uint64_t sseq, co;
	uint64_t event, offset;
	uint8_t data[8];  /* commit: block image after the commit */
	/* its sources: src[0..7] when per_byte, else src[0] and src[1] with
	 * zmask and m2 (struct blk) */
	bool per_byte;
	uint8_t zmask, m2;
	struct msr_src src[8];
};

/*
 * Per 8-byte block: who wrote each byte and the newest commit to it. Most
 * blocks have one source for all bytes (whole-block writes) and many of the
 * rest two (a partial store over a whole one), so up to two are kept
 * inline; only a block with three or more has an out-of-line per-byte
 * record.
 */
struct blk {
	struct msr_src one;  /* the source of the bytes in neither mask ... */
	struct msr_src two;  /* ... of the bytes in m2 ... */
	uint64_t last_co;
	uint32_t mixed;      /* e->mixed pool index + 1 (struct msr_src[8]) */
	/* ... when mixed == 0; zmask bytes (bit 7 = byte 0) have the zero
	 * source: a partial write to fresh memory needs no mixed record.
	 * zmask and m2 are disjoint; two is unused while m2 is 0 */
	uint8_t zmask, m2;
};

/* A core's L1 copy of one 8-byte piece (present <=> the line is held);
 * its sources are kept like a block's (struct blk). */
struct l1_piece {
	struct msr_src one, two;
	uint32_t mixed;
	uint32_t fill_ts;
	uint8_t zmask, m2;
	uint8_t known;
	uint8_t data[8];
};

/* One 8-byte block of the image with its sources, in one cache line: a
 * read or write of the block waits on that line alone, not on a chain of
 * records. A zeroed cell is an untouched block (unknown bytes, every one
 * with the initial source). */
struct cell {
	_Alignas(64) struct blk b;
	uint8_t data[8];
	uint8_t known; /* bit 7 = byte 0 */
	/* bit c: core c holds this block's L1 line shared with the image
	 * (set alike in every cell of the line; see msr_l1_fill) */
	uint32_t l1_shared;
};
_Static_assert(sizeof(struct cell) == 64, "a cell is one cache line");

/* MSR_CHUNK_SIZE bytes of the image. */
struct chunk {
	struct cell cell[MSR_CHUNK_SIZE / 8];
};

/* A sparse 4 KiB page of the image: its chunks, pool index + 1, 0 =
 * untouched, and how many it has. */
struct page {
	uint32_t chunk[MSR_PAGE_CHUNKS];
	uint32_t nchunks;
};

/* In a pages_map value: the page is dense, and the rest of the value is
 * the chunks index of its first chunk (of MSR_PAGE_CHUNKS in a run), not
 * a struct page's. */
#define MSR_PAGE_DENSE 0x80000000u

/* A commit in a `pend` list (struct msr_engine). */
struct pend_node {
	uint32_t mseq; /* the commit's MAB seq, low 32 bits */
	uint32_t next; /* the next node of the list, pool index + 1; 0 none */
};

/* One entry of the bounded commit history (slot = co & (N - 1)). */
struct chist {
	uint64_t co, sseq, iseq, prev_co, pa8, event;
	uint32_t ts;
	uint8_t strand, mask;
	uint8_t data[8];
};

struct msr_engine {
	struct msr_config cfg;
	struct msr_engine_sink sink;
	struct msr_step_source steps;
	bool have_steps;
	unsigned nstrands, tpc, line;
	uint64_t mab_window;

	struct strand *strands;
	struct fill_rec *fill_recs; /* MSR_FILLS per strand (strand.fills) */
	struct msr_ring mab;       /* struct mab_ent */
	struct msr_ring *banks;    /* uint64_t MAB seqs of EVICTs, per bank */
	/* per bank and core: no EVICT of the bank below this FIFO position
	 * awaits the core (answers take them in order) */
	uint64_t *evict_floor;     /* [bank * cores + core] */
	/* commits awaiting answers per strand, L1 line and core (key
	 * (line << 8 | strand) << 5 | core), oldest first: a list of
	 * struct pend_node in `pend_nodes`, val its first node and aux its
	 * last (pool index + 1). One small map for all strands stays in
	 * cache. */
	struct msr_map pend;
	struct msr_pool pend_nodes;

	struct msr_map pages_map;  /* page number -> pages index, or
				    * MSR_PAGE_DENSE | chunks index */
	struct msr_pool pages;
	struct msr_pool chunks;    /* indexed from struct page.chunk and
				    * dense pages' pages_map values */
	/* direct-mapped cache of chunk lookups (slot cn % MSR_CHUNK_CACHE):
	 * loads and stores interleave chunks, one entry missed half the time */
	struct chunk_slot {
		uint64_t cn;
		uint32_t idx;      /* chunks index; cn UINT64_MAX = empty */
	} chunk_cache[MSR_CHUNK_CACHE];
	struct msr_pool mixed;     /* per-byte sources of mixed blocks */
	struct msr_map l1_map;     /* core << 48 | line -> pool index, with
				    * L1_HAS_MIXED once a piece got a mixed
				    * record: only then does a drop read
				    * the pieces */
	struct msr_pool l1;        /* one element: the line's l1_pieces */
	struct msr_omap dma_map;   /* 16-byte piece -> DMA_ST inv awaiting EVICT;
				    * walked in slot order for its leftovers */
	/* per core: bit t % tpc set <=> strand t has a fill outstanding
	 * (kept for tpc <= 64; more threads per core scan them all) */
	uint64_t core_fills[MSR_MAX_CORES];
	/* per core: fill records outstanding per line slot (line number %
	 * MSR_FILL_SLOTS), so an answer skips lines with none */
	uint16_t fill_lines[MSR_MAX_CORES][MSR_FILL_SLOTS];

	struct chist *hist;        /* MSR_COMMIT_HISTORY entries */
	uint64_t co;               /* last commit number */

	const struct msr_event *ev; /* event being applied (or `where`) */
	struct msr_event where;    /* position reported for end-of-input findings */
	uint64_t last_index, last_offset;
	uint32_t last_ts;
	struct msr_engine_stats st;
	int nomem;                 /* an allocation failed during apply */
};

/* Whether bytes of a and b under `mask` (bit 0x80 >> i: byte i) differ. */
static inline bool msr_bytes_differ(const uint8_t *a, const uint8_t *b,
				    uint8_t mask)
{
	if (mask == 0xff)
		return memcmp(a, b, 8) != 0; /* one compare */
	for (unsigned m = mask; m; m &= m - 1) {
		unsigned i = 7 - (unsigned)__builtin_ctz(m);

		if (a[i] != b[i])
			return true;
	}
	return false;
}

/* The bytes of a big-endian data word, lowest address first. */
static inline void msr_be64_bytes(uint64_t v, uint8_t out[8])
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v); /* one instruction, not eight shifts */
#elif !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
	uint64_t w = 0;

	for (unsigned i = 0; i < 8; i++)
		((uint8_t *)&w)[i] = (uint8_t)(v >> (56 - 8 * i));
	v = w;
#endif
	memcpy(out, &v, 8);
}

/* engine.c */
struct strand *msr_eng_strand(struct msr_engine *e, unsigned tnum);
/* Number every ring's entries (strand loads and stores, so also sseq; the
 * MAB; the bank FIFOs) from `first`, and set the strands' cursors over them
 * there. Only before the first event. msr_engine_create starts at 1; the
 * tests start just below 2^32, since the rings' 32-bit references and
 * chain links must carry across it, which a replay would otherwise reach
 * only after 2^32 entries of one ring (beyond 10^10 events). */
void msr_eng_seq_start(struct msr_engine *e, uint64_t first);
void msr_eng_viol_init(struct msr_engine *e, struct msr_violation *v,
		       enum msr_vkind kind, int strand);
void msr_eng_viol_emit(struct msr_engine *e, struct msr_violation *v,
		       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Report a violation with only the basic fields; message from fmt. */
void msr_eng_report(struct msr_engine *e, enum msr_vkind kind, int strand,
		    uint64_t iseq, uint64_t pa, unsigned size, const char *fmt,
		    ...) __attribute__((format(printf, 7, 8)));
uint64_t msr_eng_next_iseq(struct msr_engine *e, unsigned tnum);
/* Report later findings as found at this event (end-of-input leftovers). */
void msr_eng_where(struct msr_engine *e, uint64_t index, uint64_t offset,
		   uint32_t ts);
void msr_eng_store_ref(struct msr_engine *e, const struct msr_src *s,
		       struct msr_store_ref *ref);
void msr_hex(char *buf, size_t size, const uint8_t *b, unsigned n);

/* memory.c: the sparse image, byte sources, L1 pieces, commit history */
int msr_mem_init(struct msr_engine *e);
void msr_mem_release(struct msr_engine *e);
struct chunk *msr_mem_chunk_lookup(struct msr_engine *e, uint64_t cn,
				   bool create);

/* The chunk holding pa (created when asked); most accesses hit the cache,
 * so that path is inline. */
static inline struct chunk *msr_mem_chunk(struct msr_engine *e, uint64_t pa,
					  bool create)
{
	uint64_t cn = pa >> MSR_CHUNK_SHIFT;
	const struct chunk_slot *c = &e->chunk_cache[cn & (MSR_CHUNK_CACHE - 1)];

	if (c->cn == cn)
		return msr_pool_at(&e->chunks, c->idx);
	return msr_mem_chunk_lookup(e, cn, create);
}

/* The cell of the block holding pa in its chunk p. */
static inline struct cell *msr_chunk_cell(struct chunk *p, uint64_t pa)
{
	return &p->cell[(pa & (MSR_CHUNK_SIZE - 1)) / 8];
}

/* Ask for the image line a later read or write of pa will wait on first
 * (its block's cell), when its chunk exists. */
static inline void msr_mem_prefetch(struct msr_engine *e, uint64_t pa)
{
	struct chunk *c = msr_mem_chunk(e, pa, false);

	if (c)
		__builtin_prefetch(msr_chunk_cell(c, pa), 1);
}

/* The per-byte sources of a record kept as `one`, `two`, `zmask` and `m2`
 * unless `mixed` (struct blk); two is read only when m2 is not 0. */
static inline void msr_src_get(const struct msr_engine *e,
			       const struct msr_src *one,
			       const struct msr_src *two, uint8_t zmask,
			       uint8_t m2, uint32_t mixed, struct msr_src src[8])
{
	static const struct msr_src zero;

	if (mixed) {
		memcpy(src, msr_pool_at(&e->mixed, mixed - 1),
		       8 * sizeof(*src));
		return;
	}
	/* src may alias one and two: load them once */
	struct msr_src v = *one, w = m2 ? *two : zero;

	if (!zmask && !m2) {
		for (unsigned i = 0; i < 8; i++)
			src[i] = v;
		return;
	}
	for (unsigned i = 0; i < 8; i++) {
		uint8_t bit = (uint8_t)(0x80u >> i);

		src[i] = (zmask & bit) ? zero : (m2 & bit) ? w : v;
	}
}

static inline void msr_blk_src(const struct msr_engine *e, const struct blk *b,
			       struct msr_src src[8])
{
	msr_src_get(e, &b->one, &b->two, b->zmask, b->m2, b->mixed, src);
}

/* The same record kept compact for a consumer (a load, fill or MAB entry):
 * false with src[0], src[1] (when *m2_out) and the masks, or true with all
 * 8 in src and the masks 0 (a record of three sources or more). */
static inline bool msr_src_copy_c(const struct msr_engine *e,
				  const struct msr_src *one,
				  const struct msr_src *two, uint8_t zmask,
				  uint8_t m2, uint32_t mixed,
				  struct msr_src src[8], uint8_t *zmask_out,
				  uint8_t *m2_out)
{
	if (mixed) {
		memcpy(src, msr_pool_at(&e->mixed, mixed - 1),
		       8 * sizeof(*src));
		*zmask_out = *m2_out = 0;
		return true;
	}
	src[0] = *one;
	if (m2)
		src[1] = *two;
	*zmask_out = zmask;
	*m2_out = m2;
	return false;
}

/* Memory (= L2 view) now: data, known mask and sources of block pa8. */
static inline void msr_mem_read(struct msr_engine *e, uint64_t pa8,
				uint8_t data[8], uint8_t *known,
				struct msr_src src[8])
{
	struct chunk *p = msr_mem_chunk(e, pa8, false);
	const struct cell *c;

	if (!p) {
		memset(data, 0, 8);
		*known = 0;
		memset(src, 0, 8 * sizeof(*src));
		return;
	}
	c = msr_chunk_cell(p, pa8);
	memcpy(data, c->data, 8);
	*known = c->known;
	msr_blk_src(e, &c->b, src);
}
/* The bytes, known mask and compact sources of block cell c, as
 * msr_mem_read_c gives them. */
static inline bool msr_cell_read_c(const struct msr_engine *e,
				   const struct cell *c, uint8_t data[8],
				   uint8_t *known, struct msr_src src[8],
				   uint8_t *zmask, uint8_t *m2)
{
	memcpy(data, c->data, 8);
	*known = c->known;
	return msr_src_copy_c(e, &c->b.one, &c->b.two, c->b.zmask, c->b.m2,
			      c->b.mixed, src, zmask, m2);
}
/* msr_mem_read keeping the sources compact: returns false with src[0],
 * src[1] (when *m2), *zmask and *m2 as in struct blk, or true with all 8 in
 * src (a block of three sources or more). */
static inline bool msr_mem_read_c(struct msr_engine *e, uint64_t pa8,
				  uint8_t data[8], uint8_t *known,
				  struct msr_src src[8], uint8_t *zmask,
				  uint8_t *m2)
{
	struct chunk *p = msr_mem_chunk(e, pa8, false);

	if (!p) {
		*zmask = 0;
		*m2 = 0;
		memset(data, 0, 8);
		*known = 0;
		memset(src, 0, sizeof(*src));
		return false;
	}
	return msr_cell_read_c(e, msr_chunk_cell(p, pa8), data, known, src,
			       zmask, m2);
}
/* The source of byte i of a load entry's block. */
static inline const struct msr_src *msr_ld_src(const struct ld_ent *le,
					       unsigned i)
{
	static const struct msr_src zero;
	uint8_t bit = (uint8_t)(0x80u >> i);

	if (le->src_pb)
		return &le->src[i];
	return (le->src_zm & bit) ? &zero
	       : (le->src_m2 & bit) ? &le->src[1] : &le->src[0];
}

/* msr_mem_read_c (its result in *per_byte), and the block's record
 * (created; NULL when out of memory). */
struct blk *msr_mem_image(struct msr_engine *e, uint64_t pa8, uint8_t data[8],
			  uint8_t *known, struct msr_src src[8], bool *per_byte,
			  uint8_t *zmask, uint8_t *m2);
/* Write bytes of `mask` with source `s` (one source for all). */
void msr_mem_write(struct msr_engine *e, uint64_t pa8, const uint8_t data[8],
		   uint8_t mask, const struct msr_src *s);
/* Adopt unknown bytes (first observation); counts learned bytes. */
void msr_mem_learn(struct msr_engine *e, uint64_t pa8, const uint8_t data[8],
		   uint8_t mask);
struct blk *msr_mem_blk(struct msr_engine *e, uint64_t pa8, bool create);
/* The l1_map key of the core's L1 line holding pa. */
static inline uint64_t msr_l1_key(const struct msr_engine *e, unsigned core,
				  uint64_t pa)
{
	return (uint64_t)core << 48 | (pa & ~((uint64_t)e->line - 1));
}

/* Ask for the l1_map slot of the core's line of pa, for a later fill. */
static inline void msr_l1_prefetch(const struct msr_engine *e, unsigned core,
				   uint64_t pa)
{
	msr_map_prefetch(&e->l1_map, msr_l1_key(e, core, pa));
}

/*
 * An L1 line is kept one of two ways. Shared: the core's copy is the
 * image's blocks as they are now (the line's bit in their cells'
 * l1_shared, its l1_map value L1_SHARED with the bytes the fill knew),
 * so a fill copies nothing and a hit reads the image. Private: its own
 * pieces in the `l1` pool, as the core saw them. A shared line becomes
 * private before anything but a first observation changes its blocks in
 * the image (msr_mem_write) and before its core's copy is updated; a fill
 * that does not match the image is stored private.
 */

/* In an l1_map value: some piece of the line may have a mixed record. */
#define L1_HAS_MIXED 0x80000000u
/* In an l1_map value: the line is shared and has no pool element; the low
 * bits hold the bytes its fill knew (piece k's known mask in bits 8k..8k+7)
 * and the slot's aux its fill's cycle. */
#define L1_SHARED 0x40000000u
/* Lines of at most this many pieces are shared (their masks fit). */
#define L1_SHARED_PIECES 2

/* The image's bytes, known masks and compact sources of the line f->line
 * into fill record f, as a data return from L2 sees them. */
void msr_l1_capture(struct msr_engine *e, struct fill_rec *f);
/* Store a fill (its record's line, data and sources) in the core's L1,
 * shared when the image holds that content now; false when out of memory. */
bool msr_l1_fill(struct msr_engine *e, unsigned core, const struct fill_rec *f,
		 uint32_t ts);
/* An L1 hit on pa8: false when the core does not hold the line, else its
 * bytes, known mask and sources as msr_mem_read_c gives them (*per_byte
 * its result) with the bytes the core did not know that memory has since
 * learned filled in, and when the line was filled or last updated. */
bool msr_l1_read_c(struct msr_engine *e, unsigned core, uint64_t pa8,
		   uint8_t data[8], uint8_t *known, struct msr_src src[8],
		   uint8_t *zmask, uint8_t *m2, bool *per_byte,
		   uint32_t *fill_ts);
/* The core's copy of block pa8, when it holds the line, takes these bytes
 * and sources (an ST_UPDATE: the core's own committed store). */
void msr_l1_update(struct msr_engine *e, unsigned core, uint64_t pa8,
		   const uint8_t data[8], uint8_t known,
		   const struct msr_src src[8], bool per_byte, uint8_t zmask,
		   uint8_t m2, uint32_t ts);
/* The core's piece of pa8 (NULL when the line is not held), private: a
 * shared line is made private first. With create,
 * a new line's pieces are NOT cleared: the caller (a fill) sets them all.
 * *line gets the line's map value, for msr_l1_set_mixed (valid until the
 * next line is added or dropped); line may be NULL. */
struct l1_piece *msr_l1_get(struct msr_engine *e, unsigned core, uint64_t pa8,
			    bool create, uint32_t **line);
/* Set the piece's sources: a mixed block's, kept per byte without a test
 * for one shared source (`line`: its line's map value, from msr_l1_get)... */
void msr_l1_set_mixed(struct msr_engine *e, uint32_t *line, struct l1_piece *p,
		      const struct msr_src src[8]);
/* ... or from the compact form (msr_mem_read_c: src[0], and src[1] when
 * m2 is not 0). */
void msr_l1_set_compact(struct msr_engine *e, struct l1_piece *p,
			const struct msr_src *src, uint8_t zmask, uint8_t m2);
void msr_l1_drop_range(struct msr_engine *e, unsigned core, uint64_t pa,
		       unsigned len);
struct chist *msr_hist_get(struct msr_engine *e, uint64_t co);

/* loads.c */
void msr_eng_ld_issue(struct msr_engine *e, const struct msr_event *ev);
void msr_eng_ld_data(struct msr_engine *e, const struct msr_event *ev);
void msr_eng_ld_fill(struct msr_engine *e, const struct msr_event *ev);
void msr_eng_ld_pop(struct msr_engine *e, const struct msr_event *ev);
struct ld_ent *msr_eng_ld_io(struct msr_engine *e, struct strand *s,
			     uint64_t pa, uint64_t *seq);
void msr_eng_ld_retire(struct msr_engine *e, struct strand *s);
/*
 * The MAB entry `mseq` (a commit, or an EVICT when m is NULL) reached
 * `core` before the LD_FILL of a miss whose data predates it: an
 * invalidation kills that fill, an own-core update (m) patches it.
 */
void msr_eng_fills_answer(struct msr_engine *e, unsigned core, uint64_t pa,
			  unsigned len, uint64_t mseq, const struct mab_ent *m,
			  bool update);

/* stores.c */
/* Live stores are within 2^32 of the tail: rebuild a seq from 32 bits. */
static inline uint64_t msr_st_seq32(const struct strand *s, uint32_t v)
{
	return msr_ring_seq32(&s->st, v);
}

/* Youngest live store of the strand to block pa8 (0 = none). */
static inline uint64_t msr_eng_st_youngest(struct strand *s, uint64_t pa8)
{
	uint32_t *v = msr_map_get(&s->st_blocks, pa8);
	uint64_t q = v ? msr_st_seq32(s, *v) : 0;

	return q >= s->st.head && q < s->st.tail ? q : 0;
}
void msr_eng_st_issue(struct msr_engine *e, const struct msr_event *ev);
void msr_eng_st_commit(struct msr_engine *e, const struct msr_event *ev);
void msr_eng_st_ack(struct msr_engine *e, const struct msr_event *ev);
void msr_eng_st_inv(struct msr_engine *e, const struct msr_event *ev,
		    bool update);
void msr_eng_st_pop(struct msr_engine *e, const struct msr_event *ev);
void msr_eng_st_retire(struct msr_engine *e, struct strand *s);
/* Commit `mseq` (m) at the MAB head is force-retired unanswered: it leaves
 * the `pend` lists of the cores it still awaits. */
void msr_eng_pend_drop(struct msr_engine *e, uint64_t mseq,
		       const struct mab_ent *m);

/* mab.c */
/* A new MAB entry, not cleared: the caller sets or clears every field. */
struct mab_ent *msr_mab_push(struct msr_engine *e, uint64_t *seq);
void msr_mab_retire(struct msr_engine *e);
void msr_eng_evict(struct msr_engine *e, const struct msr_event *ev);
void msr_eng_evict_inv(struct msr_engine *e, const struct msr_event *ev);
void msr_eng_dma(struct msr_engine *e, const struct msr_event *ev);
void msr_eng_slam(struct msr_engine *e, const struct msr_event *ev);
void msr_eng_mem_check(struct msr_engine *e, const struct msr_event *ev);
void msr_mab_leftovers(struct msr_engine *e);

/* step.c */
int msr_eng_sstep(struct msr_engine *e, const struct msr_event *ev,
		  struct msr_error *err);
void msr_eng_strand_leftovers(struct msr_engine *e, unsigned t);

#endif /* MSR_ENGINE_INTERNAL_H */
