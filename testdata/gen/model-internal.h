/*
 * model-internal.h - the state of the msync-gen memory-system model, shared
 * by model.c (memory, L2 banks, response queues, cycle loop) and strand.c
 * (strand pipelines and store buffers). Nothing outside the model may
 * include it.
 *
 * Sizes are fixed at creation (rings are power-of-two, response queues grow
 * by doubling only while back-pressure lets them fill), so a run of any
 * length uses the same memory.
 */
#ifndef MSR_GEN_MODEL_INTERNAL_H
#define MSR_GEN_MODEL_INTERNAL_H

#include "gen-internal.h"

#define STB_RING 64 /* power of two; >= any store-buffer depth */
#define SCRIPT_RING 16
#define QUEUE_SOFT_LIMIT 192 /* response tokens per core before back-pressure */

/* Store-buffer entry */
struct stb_entry {
	uint64_t pa;
	uint64_t iseq;
	uint8_t data[8];      /* dword image, data[0] = lowest address */
	uint8_t bmask;
	uint8_t itype;
	uint16_t group;       /* entries of one instruction share a group */
	uint16_t flags;       /* GEN_F_* of the instruction */
	uint8_t fault_core;
	bool retired;         /* its SSTEP was emitted */
	bool sent, committed, acked, preacked, done;
	bool update_pending; /* own-core ST_UPDATE still queued */
	uint64_t ack_idx;     /* own-queue index of its ACK token */
	struct gen_track *trk;
};

enum strand_state {
	ST_IDLE = 0,
	ST_WAIT_STB_SPACE, /* store waits for free entries */
	ST_WAIT_EMPTY_PRE, /* atomic waits for an empty STB before issue */
	ST_WAIT_MEMBAR,    /* membar #StoreLoad waits for an empty STB */
	ST_LD_WAIT_STB,    /* load issued, waits for overlapping stores */
	ST_LD_HIT,         /* load issued, L1 hit data due at wake */
	ST_LD_REQ,         /* load request at L2, waits for its data */
	ST_STEP,           /* SSTEP due at wake */
	ST_WAIT_EMPTY_POST /* after an atomic: wait until its ack */
};

struct strand {
	/* hot: read every cycle by the loop (keep within one cache line) */
	uint64_t wake;
	enum strand_state state;
	unsigned stb_head, stb_count;
	unsigned inflight;      /* entries sent, not done */
	unsigned sc_head, sc_count;
	bool reserved, hold_stb, program_done, from_script;
	/* cold */
	unsigned id, core;
	uint16_t next_group;
	uint64_t iseq;          /* instructions executed (SSTEPs) */
	uint64_t pc;
	struct gen_insn cur;
	uint8_t value[64];      /* load bytes the RTL got */
	struct stb_entry *stb;      /* STB_RING entries (separate, so the */
	struct gen_insn *script;    /* per-cycle scan stays in cache) */
};

enum req_kind { RQ_LOAD, RQ_QUAD, RQ_BLOCK, RQ_IO, RQ_STORE, RQ_ATOMIC,
		RQ_ATOMIC_COMMIT };

struct req {
	uint8_t kind;
	uint8_t strand;
	uint16_t stb_idx;  /* RQ_STORE / atomics: ring index */
};

struct bank {
	struct req *q;
	unsigned head, count, cap; /* cap power of two */
	uint64_t wake;
};

enum tok_kind { TK_DATA, TK_ACK, TK_UPDATE, TK_INV, TK_INV_SILENT,
		TK_EVICT_INV };

struct token {
	uint8_t kind;
	uint8_t strand;  /* DATA/ACK/UPDATE/INV: the strand named */
	uint8_t bank;    /* EVICT_INV */
	bool fill, rmo, update, atomic;
	uint16_t stb_idx;
	uint8_t wait_core;
	uint64_t wait_idx; /* INV: deliverable once wait_core delivered > it */
	uint64_t pa;
	uint8_t data[16];  /* fill: the line; update: the 8-byte block */
};

struct respq {
	struct token *t;
	unsigned head, count, cap;
	uint64_t enq, deq;  /* tokens ever enqueued / delivered */
	uint64_t wake;
};

struct gen_model {
	struct gen_config cfg;
	struct gen_program *prog;
	struct gen_faults *faults;
	struct gen_sink sink;
	struct gen_rng rng;      /* timing and system events */
	struct gen_rng vrng;     /* values of cas decisions, payloads */
	uint64_t cycle;
	unsigned nstrands;
	struct strand *s;
	struct stb_entry *stb_pool;
	struct gen_insn *script_pool;
	struct bank banks[8];
	struct respq *rq;        /* per core */
	/* memory: pool + fault region, then I/O */
	uint64_t cbytes;         /* cacheable bytes */
	uint64_t nlines;         /* 16-byte lines */
	uint8_t *mem;
	uint8_t *io;
	uint32_t *dir;           /* per line: L2 directory (cores) */
	uint32_t *l1p;           /* per line: cores whose L1 holds it */
	uint8_t *l1d;            /* per core per line: 16 bytes */
	uint8_t *l2p;            /* per 64-byte line: present in L2 */
	uint64_t fault_next;     /* next fresh fault line offset */
	/* fault hooks */
	bool inv_held;
	struct token held;
	unsigned held_core;
	bool atomic_split;
	unsigned split_strand;
	bool stopping;
	uint64_t started;        /* instructions started */
	struct gen_model_stats st;
	struct msr_error *err;   /* current run's error (for emit helpers) */
	int status;
};

/* model.c services used by strand.c */
int model_emit(struct gen_model *m, struct msr_event *ev);
int model_sstep(struct gen_model *m, struct strand *s);
uint64_t model_off(const struct gen_model *m, uint64_t pa);
bool model_cacheable(const struct gen_model *m, uint64_t pa);
uint8_t *model_l1(struct gen_model *m, unsigned core, uint64_t line);
int model_bank_push(struct gen_model *m, uint64_t pa, struct req r);
int model_tok_push(struct gen_model *m, unsigned core, const struct token *t,
		   uint64_t *idx);
unsigned model_delay(struct gen_model *m, unsigned max);
int model_bank_tick(struct gen_model *m, struct bank *b);
int model_queue_tick(struct gen_model *m, unsigned core);
int model_atomic_commit(struct gen_model *m, struct strand *s, unsigned idx);

/* strand.c */
int strand_tick(struct gen_model *m, struct strand *s);
int strand_drain(struct gen_model *m, struct strand *s);
void strand_stb_done(struct gen_model *m, struct strand *s, unsigned idx);
bool strand_quiet(const struct strand *s);

#define STB_AT(s, i) (&(s)->stb[(i) & (STB_RING - 1)])

#endif /* MSR_GEN_MODEL_INTERNAL_H */
