/*
 * tso-internal.h - private state of the TSO checker pass (checker/tso*.c).
 *
 * The checker places every load of a strand, in program order, at the
 * earliest gap of the global commit order (co) its constraints allow, and
 * checks that gap against the interval [co of the store it reads from, co of
 * the next store to the same byte). See docs/tso.md for the algorithm. This
 * header is shared by tso.c (state, commits, stores, waiting ops),
 * tso_load.c (load resolution and placement), tso_own.c (own-store
 * entries), tso_map.c (map, rings) and tso_proof.c (violation building)
 * only; nothing outside checker/ may include it.
 */
#ifndef MSR_TSO_INTERNAL_H
#define MSR_TSO_INTERNAL_H

#include <string.h>

#include "checker.h"
#include "hugepage.h"

/* How a lower bound on a strand's memory-order position was established. */
enum tso_wit_type {
	TSO_WIT_NONE = 0,
	TSO_WIT_RF,  /* a load of the strand (`via`) read store `store` */
	TSO_WIT_OWN, /* own store `store`, ordered before by a barrier */
};

/* The witness of a position: the store whose co it is and why the strand
 * must be at or after it. Kept by value so proofs survive ring eviction. */
struct tso_wit {
	uint8_t type;        /* enum tso_wit_type */
	bool has_barrier;    /* OWN: `barrier` is a separate op of the cycle */
	bool rmo;            /* OWN: the store is an RMO store */
	bool dma;            /* RF: `store` is a DMA write just after co */
	bool via_lazy;       /* via.value not set: it is raw under via_mask */
	uint8_t via_mask;
	uint8_t via_raw[8];
	uint64_t co;         /* position: co of `store` */
	uint64_t via_pa;     /* RF: bytes [via_pa, via_pa + via_size) read */
	unsigned via_size;
	struct msr_proof_op via;
	struct msr_proof_op barrier;
	struct msr_proof_op store;
};

/* One commit, in a ring indexed by co. */
struct tso_crec {
	uint64_t co;        /* 0 = empty slot */
	uint64_t pa8, sseq, iseq, pc, event;
	uint64_t next[8];   /* co of the next commit to each byte, 0 = none yet */
	uint32_t ts;
	uint8_t strand, mask, step_op;
	uint8_t data[8];
};

/* One store entry of a strand, in a ring indexed by sseq. */
struct tso_srec {
	uint64_t sseq;      /* 0 = empty slot */
	uint64_t co;        /* 0 = not committed (yet) */
	bool have_op, rmo, atomic;
	bool lazy;          /* info.value not set: it is raw under raw_mask */
	uint8_t raw_mask;
	uint8_t raw[8];
	struct msr_proof_op info; /* the executed store, when have_op */
};

/* Open-addressing map keyed by an 8-byte block address; entries start with
 * `uint64_t key` (pa8 + 1, 0 = empty). */
struct tso_map {
	unsigned char *slots;
	size_t esz, cap, n;
};

/* Global per-block facts: newest and first commit of each byte. Most
 * blocks are only ever written whole, so one pair stands for all 8 bytes
 * (24 bytes a block, not 136). A block whose bytes' histories differ has
 * TSO_BLK_MIXED set in latest, the low bits then a base co, and first
 * the index of its per-byte record: in the narrow pool (32-bit offsets
 * from the base), or in the wide one when TSO_BLK_WIDE is set in first. */
struct tso_block {
	uint64_t key;
	uint64_t latest;   /* every byte's newest commit, 0 = none */
	uint64_t first;    /* every byte's first commit */
};

#define TSO_BLK_MIXED (1ull << 63)
#define TSO_BLK_WIDE (1ull << 63)

/* Per-byte facts of a mixed block: a wide record, and the form the
 * commit and load paths work on. */
struct tso_bytes {
	uint64_t latest[8];
	uint64_t first[8];
};

/* The usual mixed record, 64 bytes: co - base + 1 (0 = none). */
struct tso_nbytes {
	uint32_t latest[8];
	uint32_t first[8];
};

/* Fixed-size records by index; a free one links the next free one
 * (index + 1, 0 = none) in its first 8 bytes. */
struct tso_pool {
	unsigned char *a;
	size_t esz, n, cap, free;
};

/* Record `idx` of pool `p`. */
static inline void *tso_pool_at(const struct tso_pool *p, size_t idx)
{
	return p->a + idx * p->esz;
}

/* A block's facts as seen by a load: byte i's are latest[i & m] and
 * first[i & m] (m = 0 for a uniform block, 7 for a wide one), or for a
 * narrow record `r` its offsets from `base`, decoded per byte used. */
struct tso_bview {
	const uint64_t *latest, *first;
	unsigned m;
	const struct tso_nbytes *r;
	uint64_t base;
};

static inline uint64_t tso_bv_latest(const struct tso_bview *v, unsigned i)
{
	if (v->r)
		return v->r->latest[i] ? v->base + v->r->latest[i] : 0;
	return v->latest[i & v->m];
}

static inline uint64_t tso_bv_first(const struct tso_bview *v, unsigned i)
{
	if (v->r)
		return v->r->first[i] ? v->base + v->r->first[i] : 0;
	return v->first[i & v->m];
}

/* Every byte's first commit: byte i's is at [i & *m] of the result (a
 * narrow record's decoded into buf). */
static inline const uint64_t *tso_bv_firsts(const struct tso_bview *v,
					    uint64_t *buf, unsigned *m)
{
	unsigned i;

	if (!v->r) {
		*m = v->m;
		return v->first;
	}
	for (i = 0; i < 8; i++)
		buf[i] = tso_bv_first(v, i);
	*m = 7;
	return buf;
}

/*
 * Per strand and block: the youngest executed own store to each byte.
 * Nearly always one store holds every live byte (a fresh entry, or a
 * store covering the bytes of the ones before it); `sseq` and `co` then
 * stand for each live byte, and the entry takes 48 bytes of the map.
 * Otherwise (`wide` != 0) the bytes' own values are in a record of the
 * pass's `ownx` pool (struct tso_own_bytes): read them through
 * tso_own_sseq / tso_own_co.
 */
struct tso_own {
	uint64_t key;
	uint64_t sseq;     /* wide 0: every live byte's store */
	uint64_t co;       /* wide 0: its commit, 0 = not committed yet */
	uint64_t maxco;    /* highest co of the used bytes (when !pend) */
	uint32_t hash;     /* tso_hash64(key), low half: for deletion */
	uint32_t wide;     /* 0, or 1 + the index of its per-byte record */
	uint8_t live;      /* bytes with a store (sseq != 0), bit 7 = lowest */
	uint8_t pend;      /* used bytes not committed yet (co == 0) */
	uint8_t rmo;       /* bit per byte (bit 7 = lowest address) */
	uint8_t queued;    /* in the strand's `done` queue */
};

_Static_assert(sizeof(struct tso_own) == 48, "an own-store entry of one store");

/* The per-byte form of an own-store entry (0 for a byte not live). */
struct tso_own_bytes {
	uint64_t sseq[8];
	uint64_t co[8];
};

/* An own-store entry whose stores had all committed, the newest at maxco. */
struct tso_done {
	uint64_t pa8, maxco;
};

struct tso_strand {
	struct tso_srec *st;
	size_t st_cap;
	struct tso_map own;
	/* entries of `own` whose stores all committed, in the order they did:
	 * each leaves the map once the position passes its newest commit */
	struct tso_done *done;
	size_t done_cap, done_head, done_len;
	uint64_t last_st_sseq;  /* youngest executed store entry */
	uint64_t barrier_upto;  /* stores <= this precede later loads */
	uint64_t scanned;       /* stores <= this folded into f_sl */
	struct msr_proof_op barrier_op;
	bool barrier_is_atomic;
	uint64_t f_sl;          /* StoreLoad floor (membar / atomic) */
	struct tso_wit w_sl;
	uint64_t f_ll;          /* position of the latest placed load */
	struct tso_wit w_ll;
	uint64_t ss_last;       /* sseq of the latest committed non-RMO store */
	struct msr_op *q;       /* ops waiting for a commit, program order */
	size_t qcap, qhead, qlen;
};

struct tso_byte {
	uint64_t pa;
	uint64_t lo;   /* earliest gap (co of the store read, 0 for own) */
	uint64_t hi;   /* co of the next store to the byte, 0 = none yet */
	uint64_t src;  /* co of the store read, 0 = initial / uncommitted;
			* DMA: the number of commits before the write */
	bool dma;      /* read a DMA / back-door write (outside co) */
	uint8_t val;   /* the byte read */
};

struct tso_load {
	const struct msr_op *op;
	struct msr_proof_op self; /* valid when self_ok (built on demand) */
	bool self_ok;
	unsigned nb;
	struct tso_byte b[64];
	bool reported;
};

struct msr_tso {
	struct msr_engine_sink sink;
	unsigned tpc;            /* threads per core */
	struct tso_strand *s;    /* [MSR_MAX_STRANDS] */
	struct tso_crec *ring;
	size_t ring_cap;
	struct tso_map blocks;
	struct tso_pool narrow;  /* mixed blocks' struct tso_nbytes */
	struct tso_pool wide;    /* and struct tso_bytes (offsets too big) */
	struct tso_pool ownx;    /* own-store entries' struct tso_own_bytes */
	uint64_t n;              /* commits seen: the newest co */
	unsigned nblocked;       /* strands with queued ops, listed in */
	uint8_t blocked[MSR_MAX_STRANDS];
	bool nomem;
	struct tso_load ld;         /* scratch for the load being placed */
	uint64_t reported;        /* violations emitted */
};

#define TSO_IO_BIT (1ull << 39)

static inline bool tso_overlaps(uint64_t pa, unsigned size, uint64_t lo,
			    unsigned n)
{
	return pa < lo + n && lo < pa + size;
}

/* tso_map.c */
int tso_map_init(struct tso_map *m, size_t esz, size_t cap);
/* A free record of pool `p` (its index; grows by doubling, amortised
 * O(1)), SIZE_MAX when out of memory; and giving record `idx` back. */
size_t tso_pool_get(struct tso_pool *p);
void tso_pool_put(struct tso_pool *p, size_t idx);
int tso_map_grow(struct tso_map *m);
void tso_map_release(struct tso_map *m);
/* Remove the entry at `e` (see tso_map_del_at). */
void tso_map_del(struct tso_map *m, void *e);
/*
 * Move the `len` entries (of `esz` bytes) of a power-of-two ring whose
 * oldest is at *head (< *cap) into a new buffer of `ncap` slots, oldest
 * first; -1 (ring unchanged) when out of memory.
 */
int tso_ring_regrow(void **ring, size_t esz, size_t *cap, size_t *head,
		    size_t len, size_t ncap);

static inline void *tso_map_slot(const struct tso_map *m, size_t i)
{
	return m->slots + i * m->esz;
}

static inline uint64_t tso_hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* The entry of block `pa8` (hash `h`) of `esz` bytes (= m->esz), created
 * when absent with only its key set (*fresh then true; the caller sets the
 * rest). */
static inline void *tso_map_put(struct tso_map *m, uint64_t pa8, uint64_t h,
				size_t esz, bool *fresh)
{
	uint64_t key = pa8 + 1;
	size_t i;

	*fresh = false;
	if (!m->cap)
		return NULL;
	for (i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		unsigned char *e = m->slots + i * esz;
		uint64_t k;

		memcpy(&k, e, sizeof(k));
		if (k == key)
			return e;
		if (!k)
			break;
	}
	/* grow only for a new key: a footprint of exactly cap/2 blocks (a
	 * power-of-two pool in a small table) keeps its table instead of
	 * doubling it at its next commit; a large table fills further
	 * (msr_table_limit, asked only past half full: it is implied there,
	 * and asking it at every new key costs 0.1 % of the instructions) */
	if ((m->n + 1) * 2 > m->cap && m->n >= msr_table_limit(m->cap, esz))
		return tso_map_grow(m) < 0 ? NULL
					   : tso_map_put(m, pa8, h, esz, fresh);
	memcpy(m->slots + i * esz, &key, sizeof(key));
	m->n++;
	*fresh = true;
	return m->slots + i * esz;
}

/* tso_map_at with the key's hash `h` (tso_hash64(pa8 + 1)) given: a
 * commit looks up one block in two maps with one hash. */
static inline void *tso_map_at_h(struct tso_map *m, uint64_t pa8, uint64_t h,
				 bool create, size_t esz)
{
	uint64_t key = pa8 + 1;
	size_t i;

	if (create) {
		bool fresh;
		unsigned char *e = tso_map_put(m, pa8, h, esz, &fresh);

		if (e && fresh)
			memset(e + sizeof(key), 0, esz - sizeof(key));
		return e;
	}
	if (!m->cap)
		return NULL;
	i = h & (m->cap - 1);
	for (;;) {
		unsigned char *e = m->slots + i * esz;
		uint64_t k;

		memcpy(&k, e, sizeof(k));
		if (k == key)
			return e;
		if (!k)
			return NULL;
		i = (i + 1) & (m->cap - 1);
	}
}

/* tso_map_find for entries of `esz` bytes (= m->esz): with a constant
 * size the slot arithmetic and the clearing compile to a few stores. */
static inline void *tso_map_at(struct tso_map *m, uint64_t pa8, bool create,
			       size_t esz)
{
	return tso_map_at_h(m, pa8, tso_hash64(pa8 + 1), create, esz);
}

/* The entry of block `pa8`, created zeroed when `create`; NULL when absent
 * or out of memory. Inline: it runs several times per operation. */
static inline void *tso_map_find(struct tso_map *m, uint64_t pa8, bool create)
{
	return tso_map_at(m, pa8, create, m->esz);
}

/* Remove the entry at `e` of `esz` bytes (= m->esz); linear probing:
 * shift later entries back. */
static inline void tso_map_del_at(struct tso_map *m, void *e, size_t esz)
{
	size_t i = (size_t)((unsigned char *)e - m->slots) / esz, j = i;
	size_t mask = m->cap - 1;

	for (;;) {
		uint64_t key;
		size_t h;

		j = (j + 1) & mask;
		memcpy(&key, m->slots + j * esz, sizeof(key));
		if (!key)
			break;
		h = tso_hash64(key) & mask;
		/* the entry at j may move to i unless its home lies in (i, j] */
		if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) {
			memcpy(m->slots + i * esz, m->slots + j * esz, esz);
			i = j;
		}
	}
	memset(m->slots + i * esz, 0, sizeof(uint64_t)); /* key 0: empty */
	m->n--;
}

/* tso_map_del_at for entries that keep the low half of their key's hash
 * as a uint32_t at byte `hoff`: no hash is recomputed. */
static inline void tso_map_del_hashed(struct tso_map *m, void *e, size_t esz,
				      size_t hoff)
{
	size_t i = (size_t)((unsigned char *)e - m->slots) / esz, j = i;
	size_t mask = m->cap - 1;

	for (;;) {
		uint64_t key;
		uint32_t hv;
		size_t h;

		j = (j + 1) & mask;
		memcpy(&key, m->slots + j * esz, sizeof(key));
		if (!key)
			break;
		memcpy(&hv, m->slots + j * esz + hoff, sizeof(hv));
		h = hv & mask;
		if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) {
			memcpy(m->slots + i * esz, m->slots + j * esz, esz);
			i = j;
		}
	}
	memset(m->slots + i * esz, 0, sizeof(uint64_t)); /* key 0: empty */
	m->n--;
}

/* The two maps of the pass. */
static inline struct tso_block *tso_block_find(struct tso_map *m,
					       uint64_t pa8, bool create)
{
	return tso_map_at(m, pa8, create, sizeof(struct tso_block));
}

/*
 * An own-store entry is settled when every used byte's store committed at
 * or before the strand's position: later loads sit after those commits, so
 * the position alone catches a stale read of them. A settled entry counts
 * as absent everywhere, and a store to its block starts a fresh entry, so
 * which rule a load is reported under never depends on when settled
 * entries leave the map.
 */
static inline bool tso_own_settled(const struct tso_own *e, uint64_t f_ll)
{
	return !e->live || (!e->pend && e->maxco <= f_ll);
}

/* The per-byte record of a wide own-store entry. */
static inline struct tso_own_bytes *tso_own_bytes(const struct msr_tso *t,
						  const struct tso_own *e)
{
	return tso_pool_at(&t->ownx, e->wide - 1);
}

/* The sseq of own-store entry e's store to byte i (0 = none). */
static inline uint64_t tso_own_sseq(const struct msr_tso *t,
				    const struct tso_own *e, unsigned i)
{
	if (e->wide)
		return tso_own_bytes(t, e)->sseq[i];
	return e->live & (0x80u >> i) ? e->sseq : 0;
}

/* The commit of that store (0 = not committed yet, or no store). */
static inline uint64_t tso_own_co(const struct msr_tso *t,
				  const struct tso_own *e, unsigned i)
{
	if (e->wide)
		return tso_own_bytes(t, e)->co[i];
	return e->live & (0x80u >> i) ? e->co : 0;
}

/* The unsettled own-store entry of block pa8, else NULL; `h` is
 * tso_hash64(pa8 + 1). */
static inline struct tso_own *tso_own_find_h(struct tso_strand *s,
					     uint64_t pa8, uint64_t h)
{
	struct tso_own *e;

	if (!s->own.n)
		return NULL;
	e = tso_map_at_h(&s->own, pa8, h, false, sizeof(struct tso_own));
	return e && !tso_own_settled(e, s->f_ll) ? e : NULL;
}

static inline const struct tso_own *tso_own_find(struct tso_strand *s,
						 uint64_t pa8)
{
	return tso_own_find_h(s, pa8, tso_hash64(pa8 + 1));
}

/* Store entry `sseq` of strand `s` while it is in the store ring. */
static inline struct tso_srec *tso_srec_get(struct tso_strand *s,
					    uint64_t sseq)
{
	struct tso_srec *r;

	if (!s->st || !sseq)
		return NULL;
	r = &s->st[sseq & (s->st_cap - 1)];
	return r->sseq == sseq ? r : NULL;
}

/* A mixed block's narrow per-byte record (struct tso_block.first). */
static inline struct tso_nbytes *tso_narrow_rec(const struct msr_tso *t,
						size_t idx)
{
	return tso_pool_at(&t->narrow, idx);
}

/* The commit with number `co` while it is in the ring, else NULL. */
static inline const struct tso_crec *tso_crec_get(const struct msr_tso *t,
						  uint64_t co)
{
	const struct tso_crec *c = &t->ring[co & (t->ring_cap - 1)];

	return co && c->co == co ? c : NULL;
}

/* tso_proof.c: proof operations of loads (their value) and of commits */
void tso_proof_load(const struct msr_op *op, struct msr_proof_op *out);
/* The proof value of the bytes `m` of one block `src` (block order). */
uint64_t tso_proof_value(const uint8_t *src, unsigned m);

/* The executed store's proof op, its value filled in if still raw. */
static inline void tso_srec_info(const struct tso_srec *r,
				 struct msr_proof_op *out)
{
	*out = r->info;
	if (r->lazy)
		out->value = tso_proof_value(r->raw, r->raw_mask);
}

/* The load's own proof op, built on first use (most loads never need it). */
static inline const struct msr_proof_op *tso_load_self(struct tso_load *l)
{
	if (!l->self_ok) {
		tso_proof_load(l->op, &l->self);
		l->self_ok = true;
	}
	return &l->self;
}
void tso_proof_store(const struct msr_tso *t, uint64_t co, uint64_t pa,
		     struct msr_proof_op *out);
void tso_proof_dma(uint64_t pa, uint8_t val, struct msr_proof_op *out);
void tso_desc_store(const struct msr_tso *t, uint64_t co, char *buf,
		    size_t size);

/* tso_proof.c: build and emit one violation. */
struct tso_report {
	enum msr_vkind kind;
	const struct msr_op *op;     /* where it is established (or NULL) */
	const struct msr_proof_op *at; /* used when op is NULL */
	uint64_t pa;
	unsigned size;
	uint32_t ts;
	uint64_t event;
	uint64_t offset;             /* byte offset of that event */
	uint64_t observed_co;        /* store read (0 = none / initial) */
	uint64_t expected_co;        /* store that should have been seen */
	unsigned nproof;
	struct msr_proof_op proof[MSR_PROOF_MAX];
	char message[640]; /* cut to the violation's size on emit */
};

void tso_report_init(struct tso_report *r, enum msr_vkind kind,
		     const struct msr_op *op);
void tso_report_push(struct tso_report *r, const struct msr_proof_op *p,
		     enum msr_rel rel);
void tso_report_emit(struct msr_tso *t, const struct tso_report *r);

/* One builder per broken-axiom shape (message + proof cycle). The load
 * builders report at most once per load (tso_load.reported). */
void tso_report_store_order(struct msr_tso *t, const struct msr_commit *c,
			    uint64_t later_co);
void tso_report_bypass(struct msr_tso *t, struct tso_load *l,
		       const struct msr_rf *rf, const struct msr_proof_op *sp,
		       uint64_t pa);
void tso_report_own_later(struct msr_tso *t, struct tso_load *l, uint64_t c,
			  uint64_t pa);
void tso_report_own_stale(struct msr_tso *t, struct tso_load *l,
			  const struct tso_byte *b, uint64_t yco,
			  const struct msr_proof_op *yp);
void tso_report_stale(struct msr_tso *t, struct tso_load *l,
		      const struct tso_wit *w, enum msr_vkind kind,
		      const struct tso_byte *b);
void tso_report_load_store(struct msr_tso *t, const struct tso_wit *w,
			   const struct msr_op *op, uint64_t co,
			   const struct msr_op_block *blk);
void tso_report_atomic(struct msr_tso *t, struct tso_load *l,
		       enum msr_vkind kind, uint64_t co_a,
		       const struct tso_byte *b, const struct tso_wit *w);

/* tso_own.c: own-store entries. tso_own_store records executed store
 * block `blk` (committed at `co`, 0 = not yet); tso_own_done queues entry
 * `e` for retirement once all its stores have committed. */
void tso_own_store(struct msr_tso *t, struct tso_strand *s,
		   const struct msr_op_block *blk, uint64_t co, bool rmo);
void tso_own_done(struct msr_tso *t, struct tso_strand *s, struct tso_own *e);

/* tso_load.c: resolving and placing loads. tso_load_begin starts the
 * scratch load `l` for `op`; tso_load_resolve gives each byte of blocks
 * b0 .. b0+bn-1 its interval (reporting what a source alone breaks). */
void tso_load_begin(struct tso_load *l, const struct msr_op *op);
void tso_load_resolve(struct msr_tso *t, struct tso_strand *s,
		      struct tso_load *l, unsigned b0, unsigned bn);
/* Place a load / a block load (four unordered 16-byte pieces) after the
 * strand's earlier loads and barriers, moving its position. */
void tso_place_load(struct msr_tso *t, struct tso_strand *s,
		    const struct msr_op *op);
void tso_place_block_load(struct msr_tso *t, struct tso_strand *s,
			  const struct msr_op *op);

#endif /* MSR_TSO_INTERNAL_H */
