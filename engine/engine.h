/*
 * engine.h - the memory-sync engine: RTL events + ISS steps in, executed
 * operations, commits and violations out.
 *
 * Contract: the engine consumes `struct msr_event`s in stream order (from
 * trace/) and, on each SSTEP, the strand's next step-log line. It keeps the
 * transient state of the memory system (per-strand load/store/retired/RMO
 * buffers, the memory access buffer, per-core L1 images, per-bank EVICT
 * FIFOs, the sparse memory image), captures the value every load got, checks
 * every store against the ISS, and reports protocol and data violations.
 * Downstream it emits, through a caller-supplied sink:
 *   - `struct msr_commit` for every ST_COMMIT, in global commit order (co);
 *   - `struct msr_op` for every executed memory instruction, in program
 *     order per strand, with the store each loaded byte reads from (rf);
 *   - `struct msr_violation` for everything wrong it finds.
 * It never reaches back into trace/ readers other than the step log it is
 * handed, never exits, keeps no global mutable state (two engines in one
 * process are independent), and never aborts on bad semantics: after a
 * violation it repairs its state and continues. Every event costs amortised
 * O(1); memory is bounded by the in-flight window plus touched footprint.
 *
 * Numbering used across the product:
 *   iseq  - the strand's instruction number: the k-th SSTEP of a strand
 *           executes instruction k (1-based). A violation found at an event
 *           that belongs to no executed instruction yet carries the strand's
 *           next iseq (executed count + 1).
 *   sseq  - per-strand store-entry number: the k-th ST_ISSUE of a strand
 *           creates store entry k (1-based); a block store has 8 entries.
 *   co    - global commit number: the k-th ST_COMMIT in the stream is co k
 *           (1-based); co 0 means "the initial (or learned) memory value".
 */
#ifndef MSR_ENGINE_H
#define MSR_ENGINE_H

#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Configuration (T2 defaults; YAML loader in engine/config.c)               */
/* ------------------------------------------------------------------------ */

#define MSR_MAX_CORES 32
#define MSR_MAX_STRANDS 256

/*
 * A waiver (config section `waivers`): violations it matches are listed as
 * waived instead of counted. Either by fingerprint, or by kind + an
 * inclusive pa range (overlapping [pa, pa+size)) + optionally one strand.
 */
#define MSR_MAX_WAIVERS 4096

struct msr_waiver {
	bool by_fingerprint;
	char fingerprint[17];  /* 16 lowercase hex digits */
	unsigned kind;         /* enum msr_vkind (declared below) */
	uint64_t pa_lo, pa_hi; /* inclusive */
	int strand;            /* -1 = any strand */
	char *reason;          /* owned by the config */
	unsigned line;         /* line of the entry in the config file */
};

/* limits.max_memory (MiB) at most */
#define MSR_MAX_MEMORY_MIB ((uint64_t)1 << 32)

struct msr_config {
	/* system */
	unsigned cores;            /* 8 */
	unsigned threads_per_core; /* 8 */
	unsigned l1_line;          /* 16 */
	unsigned l2_line;          /* 64 */
	unsigned l2_banks;         /* 8 */
	/* memory: initial image files (owned by the config) */
	char **images;
	unsigned nimages;
	/* report */
	unsigned context_len;      /* events of context per violation: 16 */
	unsigned max_violations;   /* 0 = unlimited */
	/* limits */
	size_t step_lookahead;     /* step lines buffered across strands: 1M */
	size_t max_inflight;       /* entries per strand buffer before error */
	size_t mab_window;         /* a MAB entry still awaiting answers after
				    * this many later MAB entries is
				    * force-retired with a `leftover`
				    * violation: 64K (0 = default) */
	size_t max_memory;         /* MiB resident before a replaying command
				    * stops (the engine does not read it):
				    * 0 = automatic, see cmd/ */
	/* report, continued: events of context after a violation: 8
	 * (context_len above counts those before, through its own event) */
	unsigned context_after;
	/* waivers (owned by the config); waiver_file names the file */
	struct msr_waiver *waivers;
	unsigned nwaivers;
	char *waiver_file;
};

void msr_config_default(struct msr_config *cfg);

/*
 * Load a YAML configuration file over `cfg` (which holds defaults). Unknown
 * keys, duplicate keys and wrong types are MSR_E_CONFIG with file:line:col.
 */
int msr_config_load(struct msr_config *cfg, const char *path,
		    struct msr_error *err);
void msr_config_release(struct msr_config *cfg);

/*
 * The number and range syntax shared by waivers and the report filters.
 * msr_scan_u64: a decimal or 0x-hex number at *p, up to the first non-digit;
 * advances *p; false when there is no digit or it overflows.
 * msr_parse_range: "LO:HI", inclusive, either side may be empty (open: 0 and
 * `max`); false when malformed, LO > HI or HI > max.
 */
bool msr_scan_u64(const char **p, uint64_t *out);
bool msr_parse_range(const char *s, uint64_t max, uint64_t *lo, uint64_t *hi);
/* A report fingerprint: exactly 16 hex digits in either case, copied to
 * `out` in lowercase; false when `s` is anything else. */
bool msr_fingerprint_normalize(const char *s, char out[17]);
/* Deep-copy the waivers of `src` into `dst` (which holds none yet). */
int msr_config_copy_waivers(struct msr_config *dst,
			    const struct msr_config *src,
			    struct msr_error *err);

static inline unsigned msr_config_strands(const struct msr_config *cfg)
{
	return cfg->cores * cfg->threads_per_core;
}

/* ------------------------------------------------------------------------ */
/* Violations                                                                */
/* ------------------------------------------------------------------------ */

enum msr_vkind {
	/* data */
	MSR_V_LOAD_VALUE,
	MSR_V_STORE_DATA,
	MSR_V_MEM_CHECK,
	/* protocol */
	MSR_V_UNMATCHED_LD_DATA,
	MSR_V_UNMATCHED_LD_FILL,
	MSR_V_UNMATCHED_ST_COMMIT,
	MSR_V_UNMATCHED_ST_ACK,
	MSR_V_UNMATCHED_ST_INV,
	MSR_V_UNMATCHED_ST_UPDATE,
	MSR_V_UNMATCHED_EVICT_INV,
	MSR_V_ADDRESS_MISMATCH,
	MSR_V_BYPASS_NOT_COVERED,
	MSR_V_L1_HIT_NOT_PRESENT,
	MSR_V_POP_EMPTY,
	MSR_V_DATA_NOT_READY,
	MSR_V_STEP_KIND_MISMATCH,
	MSR_V_STEP_LOG_SHORT,
	MSR_V_STEP_LOG_LONG,
	MSR_V_ORDER_ASSUMPTION,
	MSR_V_LEFTOVER,
	/* TSO (checker/) */
	MSR_V_TSO_STORE_ORDER,
	MSR_V_TSO_LOAD_ORDER,
	MSR_V_TSO_LOAD_STORE,
	MSR_V_TSO_MEMBAR,
	MSR_V_TSO_ATOMICITY,
	MSR_V_TSO_COHERENCE,
	MSR_V_TSO_VALUE,
	MSR_V_COUNT
};

/* Report name of a kind ("load-value", "tso-store-order", ...). */
const char *msr_vkind_name(enum msr_vkind kind);
/* Inverse of msr_vkind_name; returns MSR_V_COUNT when unknown. */
enum msr_vkind msr_vkind_by_name(const char *name);

/* A store named by a violation (the expected or the observed value's). */
struct msr_store_ref {
	bool valid;
	uint8_t strand;
	uint64_t iseq;   /* 0 when the store's instruction has not executed */
	uint64_t sseq;
	uint64_t co;     /* 0 when not committed */
	uint32_t ts;     /* ts of its commit (or issue when not committed) */
	uint64_t event;  /* event index of its commit (or issue) */
};

/* One operation in a TSO proof cycle. */
enum msr_rel { MSR_REL_NONE = 0, MSR_REL_PO, MSR_REL_RF, MSR_REL_CO, MSR_REL_FR };
const char *msr_rel_name(enum msr_rel rel);

struct msr_proof_op {
	uint8_t strand;
	uint8_t op;       /* enum msr_step_op */
	uint8_t rel;      /* relation to the next op of the cycle */
	uint64_t iseq, pc, pa;
	uint64_t value;   /* first up-to-8 bytes, big-endian */
	uint8_t size;
	uint32_t ts;
	uint64_t event;
};

#define MSR_PROOF_MAX 8
#define MSR_CONTEXT_MAX 64

struct msr_violation {
	enum msr_vkind kind;
	int strand;        /* -1 when the event names no strand */
	int core;          /* -1 when unknown */
	uint64_t iseq;
	uint64_t pc;
	uint64_t pa;
	unsigned size;     /* bytes */
	uint32_t ts;
	uint64_t event;    /* index of the event where it was found */
	uint64_t offset;   /* byte offset of that event */
	bool has_values;
	unsigned vlen;     /* bytes in expected/observed */
	uint8_t expected[64];
	uint8_t observed[64];
	const char *source; /* "STB", "L1", "L2", "memory" or NULL */
	struct msr_store_ref expected_from;
	struct msr_store_ref observed_from;
	char message[320]; /* one line, plain words */
	unsigned nproof;
	struct msr_proof_op proof[MSR_PROOF_MAX];
};

/* ------------------------------------------------------------------------ */
/* Executed operations and commits (input of the TSO pass)                   */
/* ------------------------------------------------------------------------ */

enum msr_op_kind {
	MSR_OP_LOAD,   /* ld, ldd, ldq, ldblk */
	MSR_OP_STORE,  /* st, stblk, stbi */
	MSR_OP_ATOMIC, /* cas, swap, ldstub: load half + store half */
	MSR_OP_MEMBAR,
};

enum msr_rf_kind {
	MSR_RF_INIT = 0,  /* initial or learned memory value (co 0) */
	MSR_RF_COMMIT,    /* a committed store, by co number */
	MSR_RF_BYPASS,    /* the strand's own store-buffer entry, by sseq */
	MSR_RF_DMA,       /* a DMA_ST or MEM_SLAM write (outside co) */
};

/* Where some bytes of one 8-byte block of a load came from. */
struct msr_rf {
	uint8_t kind;   /* enum msr_rf_kind */
	uint8_t mask;   /* bytes of the block this source supplied (bit 7 =
			 * lowest address), disjoint across a block's sources */
	uint8_t strand; /* COMMIT/BYPASS: the storing strand */
	uint8_t placed; /* DMA: 1 when `co` holds the write's place in the
			 * commit order (the number of commits before it);
			 * 0 = place unknown, the TSO pass then skips it */
	uint64_t sseq;  /* COMMIT/BYPASS: the store entry */
	uint64_t co;    /* COMMIT: its commit number; DMA: see `placed` */
};

/* The part of an operation that falls in one 8-byte block. */
struct msr_op_block {
	uint64_t pa8;     /* block address (8-byte aligned) */
	uint8_t mask;     /* bytes accessed */
	uint8_t load[8];  /* bytes read (load/atomic), block order */
	uint8_t store[8]; /* bytes written (store/atomic) */
	uint64_t sseq;    /* store/atomic: the store entry of this block */
	uint8_t nrf;
	struct msr_rf rf[8];
	uint64_t data_event; /* load: event index of its LD_DATA */
};

#define MSR_OP_MAX_BLOCKS 8

struct msr_op {
	uint8_t kind;      /* enum msr_op_kind */
	uint8_t step_op;   /* enum msr_step_op */
	uint8_t strand;
	bool rmo;          /* RMO store (block store, block-init store) */
	bool store_failed; /* failed cas: no write */
	uint32_t membar_mask;
	uint64_t iseq, pc, pa;
	uint8_t size;      /* bytes */
	uint32_t ts;       /* ts of the SSTEP's neighbourhood (last ts seen) */
	uint64_t event;    /* index of the SSTEP event */
	uint64_t offset;   /* byte offset of the SSTEP event */
	uint8_t nblocks;
	struct msr_op_block blk[MSR_OP_MAX_BLOCKS];
};

/* One ST_COMMIT, emitted in stream (= global commit) order. */
struct msr_commit {
	uint64_t co;
	uint8_t strand;
	uint64_t sseq;
	uint64_t iseq;    /* 0 when the store has not executed yet (atomics) */
	uint64_t pa8;
	uint8_t mask;     /* bytes written; 0 = failed cas */
	uint8_t data[8];  /* the block's L2 image after the commit */
	bool rmo;
	bool atomic;
	uint32_t ts;
	uint64_t event;
	uint64_t offset;  /* byte offset of the ST_COMMIT event */
};

/* ------------------------------------------------------------------------ */
/* The engine                                                                */
/* ------------------------------------------------------------------------ */

/* Where the engine's output goes. Any callback may be NULL. The pointers
 * passed are valid only during the call. */
struct msr_engine_sink {
	void *ctx;
	void (*commit)(void *ctx, const struct msr_commit *c);
	void (*op)(void *ctx, const struct msr_op *op);
	void (*violation)(void *ctx, const struct msr_violation *v);
};

struct msr_engine_stats {
	uint64_t events;
	uint64_t steps;
	uint64_t loads;
	uint64_t stores;
	uint64_t atomics;
	uint64_t membars;
	uint64_t commits;
	uint64_t other_messages;
	uint64_t learned_bytes;  /* memory bytes adopted from first observation */
	/* entries looked at to bind LD_DATA, ST_COMMIT, ST_INV/ST_UPDATE and
	 * EVICT_INV, to decide a load's bypass (a few per event, whatever the
	 * trace: the cost stays O(1)) and to name the store a wrong load
	 * value came from (at most 256 each) */
	uint64_t bind_steps;
	uint64_t violations;
	uint64_t per_kind[MSR_V_COUNT];
};

struct msr_engine;

int msr_engine_create(const struct msr_config *cfg,
		      const struct msr_engine_sink *sink,
		      struct msr_engine **out, struct msr_error *err);

/* Load an initial memory image (trace-format.md section 4). */
int msr_engine_load_image(struct msr_engine *e, const char *path,
			  struct msr_error *err);

/*
 * Where the ISS steps come from. `next` returns the strand's next step in
 * program order (MSR_OK), MSR_END when it has none, or a negative status
 * with `err` filled (fatal). `remaining` (called by msr_engine_finish on a
 * complete trace) counts the steps of `tnum` never consumed. cmd/ wires
 * these to trace/'s msr_steplog; tests may serve steps from an array.
 */
struct msr_step_source {
	void *ctx;
	int (*next)(void *ctx, unsigned tnum, struct msr_step *step,
		    struct msr_error *err);
	int (*remaining)(void *ctx, unsigned tnum, uint64_t *count,
			 struct msr_error *err);
};

/* Steps to play on SSTEP (copied; NULL = replay RTL events alone). */
void msr_engine_set_steps(struct msr_engine *e,
			  const struct msr_step_source *src);

/*
 * Apply one event. Semantic problems are violations, not errors: the return
 * is negative only when the run cannot go on (step-log syntax error, out of
 * memory), with `err` filled.
 */
int msr_engine_apply(struct msr_engine *e, const struct msr_event *ev,
		     struct msr_error *err);

/*
 * End of input. With `complete` (the trace ended cleanly) report leftover
 * pending entries and step-log-long; without, only flush what is certain.
 */
int msr_engine_finish(struct msr_engine *e, bool complete,
		      struct msr_error *err);

void msr_engine_get_stats(const struct msr_engine *e,
			  struct msr_engine_stats *st);

void msr_engine_destroy(struct msr_engine *e);

/*
 * Read-only queries between two events (engine/query.c), for tools that
 * cut traces. What strand `tnum` still has in flight: loads issued and not
 * retired, store-buffer entries (`unacked` of them not acked yet,
 * `uncommitted` not committed yet), and its
 * commits still awaiting ST_INV/ST_UPDATE answers. Popped entries do not
 * count. Returns MSR_E_USAGE when tnum is out of range.
 */
struct msr_strand_inflight {
	uint64_t loads;
	uint64_t stores;
	uint64_t unacked;
	uint64_t uncommitted; /* store-buffer entries not committed yet */
	uint64_t fills;       /* L1 misses whose LD_FILL has not come yet */
	uint64_t answers;
};
int msr_engine_strand_inflight(const struct msr_engine *e, unsigned tnum,
			       struct msr_strand_inflight *out);

/* The memory (L2) image of the 8-byte block at pa8 now: data and the mask
 * of known bytes (bit 7 = lowest address); unknown bytes read as 0. */
void msr_engine_mem_peek(const struct msr_engine *e, uint64_t pa8,
			 uint8_t data[8], uint8_t *known);

/* ------------------------------------------------------------------------ */
/* Event history (context lines for reports)                                 */
/* ------------------------------------------------------------------------ */

/*
 * A bounded ring of recent events, so that a report can show "the last N
 * events that touched this strand or this block" without keeping the
 * trace. Fed by the caller with every event (in stream order, so event
 * indices never decrease); independent of the engine's state. Adding is
 * O(1); a query is O(ring size), paid only by reported violations.
 *
 * Queries see the events up to the "shown" frontier and at most the ring
 * size of them back from it. Unshared, every added event is shown at once.
 * Shared (msr_history_share), one thread adds and another queries: the
 * ring then holds `lag` more slots, the querying thread moves the frontier
 * (msr_history_show), and the adding thread must not add event number s
 * unless s < (a frontier the querying thread has shown) + lag. Queries
 * then answer exactly as the unshared history would at the same frontier.
 * Shared, events are added with non-temporal stores (stream.h): the adding
 * thread calls msr_stream_fence before it lets the other one query them.
 */
struct msr_history;

int msr_history_create(size_t ring_events, struct msr_history **out,
		       struct msr_error *err);
/*
 * Before the first event is added: share the history with `lag` events of
 * room ahead of the shown frontier (rounded up; 0 = unshared again).
 * Returns the room granted, or 0 (the history unchanged and unshared) when
 * memory is short or lag is 0.
 */
uint64_t msr_history_share(struct msr_history *h, uint64_t lag);
void msr_history_add(struct msr_history *h, const struct msr_event *ev);
/* Shared: queries see the first `upto` events added (never decreases). */
void msr_history_show(struct msr_history *h, uint64_t upto);
/* How many events queries see (on the querying thread when shared). */
uint64_t msr_history_shown(const struct msr_history *h);
/* Copy out event number `seq` (0-based, in the order added) if queries see
 * it; false if it is not shown yet or has left the ring. */
bool msr_history_get(const struct msr_history *h, uint64_t seq,
		     struct msr_event *out);
/*
 * Copy into out[0..n) (oldest first) up to `n` of the most recent events at
 * or before event index `at` that touched `strand` (-1 = none) or the 8-byte
 * block `pa8` (UINT64_MAX = none). Returns the number copied.
 */
size_t msr_history_context(const struct msr_history *h, int strand,
			   uint64_t pa8, uint64_t at, size_t n,
			   struct msr_event *out);
/* Likewise the oldest `n` held events after index `at` (oldest first). */
size_t msr_history_after(const struct msr_history *h, int strand,
			 uint64_t pa8, uint64_t at, size_t n,
			 struct msr_event *out);
/* Is the event of index `index` held and did it touch `strand` or `pa8`
 * (as above)? O(1) for the newest event. */
bool msr_history_touches(const struct msr_history *h, int strand,
			 uint64_t pa8, uint64_t index);
void msr_history_destroy(struct msr_history *h);

#ifdef __cplusplus
}
#endif

#endif /* MSR_ENGINE_H */
