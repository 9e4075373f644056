/*
 * gen-internal.h - shared types of msync-gen, the synthetic T2-like trace
 * generator (model, program, faults, output, main).
 *
 * The model is a cycle-stepped simulation of an UltraSPARC T2-class memory
 * system that emits `struct msr_event`s and ISS step lines through a sink.
 * It is deterministic for a given seed: all randomness comes from the
 * generator's own PRNG streams, iteration orders are fixed, and nothing
 * depends on wall-clock time or pointers. Its state is bounded by the
 * configured footprint and the in-flight window; nothing is kept per event
 * after an instruction retires. It never exits or aborts.
 */
#ifndef MSR_GEN_INTERNAL_H
#define MSR_GEN_INTERNAL_H

#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ */
/* PRNG: xoshiro256** seeded through splitmix64                        */
/* ------------------------------------------------------------------ */

struct gen_rng {
	uint64_t s[4];
};

void gen_rng_seed(struct gen_rng *r, uint64_t seed, uint64_t stream);
uint64_t gen_rng_next(struct gen_rng *r);
/* Uniform in [0, n); n > 0. */
uint64_t gen_rng_below(struct gen_rng *r, uint64_t n);
/* True with probability p (0..1). */
bool gen_rng_chance(struct gen_rng *r, double p);

/* ------------------------------------------------------------------ */
/* Address map                                                          */
/* ------------------------------------------------------------------ */

#define GEN_POOL_BASE 0x0010000000ull   /* cacheable pool for programs */
#define GEN_FAULT_BYTES (256u * 1024u)  /* fault region after the pool */
/* Read-only region after the fault region: loads and MEM_CHECK see it,
 * only MEM_SLAM writes it (no store ever commits there, so a back-door
 * write never races a commit still in flight). */
#define GEN_SLAM_BYTES 4096u
#define GEN_IO_BASE 0x8000000000ull     /* pa bit 39: non-cacheable */
#define GEN_IO_BYTES 4096u

/* ------------------------------------------------------------------ */
/* Instructions                                                         */
/* ------------------------------------------------------------------ */

/* Progress of one instruction, recorded for fault bookkeeping. */
struct gen_track {
	uint64_t iseq;
	uint64_t sstep_event;
	uint64_t data_event;   /* LD_DATA (first one for block loads) */
	uint64_t commit_event; /* ST_COMMIT (atomic, or last store entry) */
	uint8_t value[64];     /* load: the bytes the RTL got */
	bool stepped, has_data, committed;
};

/* Instruction flags (program hints and fault marks) */
#define GEN_F_IO 0x0001           /* non-cacheable load */
#define GEN_F_HOLD_STB 0x0002     /* store: hold the strand's STB drain */
#define GEN_F_SWAP_NEXT 0x0004    /* store: commit after the next store */
#define GEN_F_NOWAIT 0x0008       /* membar #StoreLoad: do not wait */
#define GEN_F_BAD_LD_LOG 0x0010   /* step log: wrong ld= value */
#define GEN_F_BAD_ST_LOG 0x0020   /* step log: wrong st= value */
#define GEN_F_BAD_BYPASS 0x0040   /* bypass from the older store */
#define GEN_F_DELAY_INV 0x0080    /* store: hold the ST_INV to fault_core */
#define GEN_F_LOSE_INV 0x0100     /* store: ST_INV to fault_core is lost */
#define GEN_F_ATOMIC_BREAK 0x0200 /* atomic: split read and write */
#define GEN_F_CAS_FAIL 0x0400     /* cas: compare fails */
#define GEN_F_CAS_OK 0x0800       /* cas: compare succeeds */

/* membar masks that order earlier stores before later loads:
 * #StoreLoad, #MemIssue, #Sync */
#define GEN_MEMBAR_STORELOAD 0x62u

struct gen_insn {
	uint8_t op;      /* enum msr_step_op */
	uint8_t size;    /* bytes: 1..8 (ld/st/atomics), 8 ldd/stbi, 16, 64 */
	uint8_t fault_core;
	uint16_t flags;  /* GEN_F_* */
	uint32_t mask;   /* membar mmask */
	uint64_t pa;
	uint8_t st[64];  /* value to store (big-endian, st[0] at pa) */
	struct gen_track *trk; /* NULL unless a fault episode follows it */
};

/* ------------------------------------------------------------------ */
/* Sink: where events and step lines go                                 */
/* ------------------------------------------------------------------ */

/* One step-log line in structured form (formatted by output.c). */
struct gen_step {
	uint8_t tnum;
	uint8_t op;       /* enum msr_step_op */
	uint8_t size;
	uint8_t has;      /* MSR_STEP_HAS_* */
	uint64_t pc, pa;
	uint32_t mask;
	uint8_t ld[64];
	uint8_t st[64];
};

struct gen_sink {
	void *ctx;
	/* Return MSR_OK or a negative status with err filled. */
	int (*event)(void *ctx, const struct msr_event *ev, struct msr_error *err);
	int (*step)(void *ctx, const struct gen_step *st, struct msr_error *err);
};

/* ------------------------------------------------------------------ */
/* Configuration                                                        */
/* ------------------------------------------------------------------ */

enum gen_mix_op {
	GEN_MIX_LD, GEN_MIX_LDD, GEN_MIX_LDQ, GEN_MIX_LDBLK, GEN_MIX_LDIO,
	GEN_MIX_ST, GEN_MIX_STBLK, GEN_MIX_STBI, GEN_MIX_CAS, GEN_MIX_SWAP,
	GEN_MIX_LDSTUB, GEN_MIX_MEMBAR, GEN_MIX_NOP, GEN_MIX_PREFETCH,
	GEN_MIX_COUNT
};

const char *gen_mix_name(unsigned op);

struct gen_config {
	uint64_t seed;
	unsigned cores, threads, stb_depth;
	uint64_t max_events;       /* 0 = no limit */
	uint64_t max_instructions; /* 0 = no limit */
	uint64_t footprint;        /* bytes of the cacheable pool */
	unsigned hot_lines;        /* 16-byte lines that take hot_rate */
	double hot_rate;
	unsigned mix[GEN_MIX_COUNT];
	double other_rate;  /* non-memory message after an event */
	double pop_rate;    /* wrong-path issue + LD_POP/ST_POP per insn */
	double evict_rate, dma_rate, slam_rate, check_rate; /* per cycle */
	double l2_absent;   /* fraction of lines initially absent from L2 */
	char litmus[16];    /* empty: random program */
};

void gen_config_default(struct gen_config *cfg);

/* ------------------------------------------------------------------ */
/* Program                                                              */
/* ------------------------------------------------------------------ */

struct gen_program;

int gen_program_create(const struct gen_config *cfg,
		       struct gen_program **out, struct msr_error *err);
void gen_program_destroy(struct gen_program *p);
/* Known litmus test names, NULL-terminated. */
extern const char *const gen_litmus_names[];

#define GEN_PROG_INSN 0 /* *out filled */
#define GEN_PROG_WAIT 1 /* nothing now; ask again later */
#define GEN_PROG_NONE 2 /* this strand never runs */

int gen_program_next(struct gen_program *p, unsigned strand, uint64_t cycle,
		     struct gen_insn *out);
/* True when `strand` takes part in the program (litmus roles). */
bool gen_program_active(const struct gen_program *p, unsigned strand);

/* ------------------------------------------------------------------ */
/* Faults                                                               */
/* ------------------------------------------------------------------ */

enum gen_fault_kind {
	GEN_FK_STALE_L1, GEN_FK_STORE_ORDER, GEN_FK_BAD_BYPASS,
	GEN_FK_STORE_DATA, GEN_FK_LOAD_VALUE, GEN_FK_LOST_INV,
	GEN_FK_ATOMIC_BREAK, GEN_FK_MEMBAR, GEN_FK_COUNT
};

const char *gen_fault_name(unsigned kind);

#define GEN_MAX_INJECT 16

struct gen_inject {
	unsigned kind;
	double rate;      /* > 0: per opportunity */
	uint64_t at;      /* rate == 0: once, at instruction >= at */
	bool done;
};

int gen_inject_parse(const char *spec, struct gen_inject *out,
		     struct msr_error *err);

struct gen_faults;
struct gen_model;

int gen_faults_create(const struct gen_inject *inj, unsigned ninj,
		      const char *expect_path, const struct gen_config *cfg,
		      struct gen_faults **out, struct msr_error *err);
/* Finish the sidecar and free. */
int gen_faults_close(struct gen_faults *f, struct msr_error *err);
uint64_t gen_faults_injected(const struct gen_faults *f);

/* Called by the model once per cycle: start / advance episodes. */
int gen_faults_tick(struct gen_faults *f, struct gen_model *m,
		    struct msr_error *err);
/* True while an episode still needs the simulation to run. */
bool gen_faults_busy(const struct gen_faults *f);
/* Called when a random-program instruction retires (its step is about to
 * be written): may mark it with GEN_F_BAD_LD_LOG / GEN_F_BAD_ST_LOG and
 * record the expectation. */
int gen_faults_on_step(struct gen_faults *f, struct gen_model *m,
		       unsigned strand, const struct gen_insn *in,
		       uint64_t iseq, uint64_t sstep_event, bool *bad_log,
		       struct msr_error *err);

/* ------------------------------------------------------------------ */
/* Model                                                                */
/* ------------------------------------------------------------------ */

struct gen_model_stats {
	uint64_t cycles, events, instructions, steps;
	uint64_t loads, stores, atomics, l1_hits, stb_bypasses, l2_loads;
	uint64_t stale_hits; /* L1 hits while an invalidation was in flight */
	uint64_t commits, invs, updates, evicts, dmas, slams, checks;
	uint64_t pops, others;
	uint64_t by_code[MSR_CODE_LIMIT];
};

int gen_model_create(const struct gen_config *cfg, struct gen_program *prog,
		     struct gen_faults *faults, const struct gen_sink *sink,
		     struct gen_model **out, struct msr_error *err);
void gen_model_destroy(struct gen_model *m);
/* Run until the size limit is reached and everything has drained. */
int gen_model_run(struct gen_model *m, struct msr_error *err);
void gen_model_get_stats(const struct gen_model *m, struct gen_model_stats *st);

/* Initial memory, for the image file: calls fn for every 8-byte word of
 * the pre-initialised regions in address order. */
int gen_model_foreach_initial(const struct gen_model *m,
			      int (*fn)(void *ctx, uint64_t pa,
					const uint8_t w[8], struct msr_error *err),
			      void *ctx, struct msr_error *err);

/* --- services for fault episodes --- */
unsigned gen_model_strands(const struct gen_model *m);
unsigned gen_model_threads(const struct gen_model *m);
bool gen_model_stopping(const struct gen_model *m);
uint64_t gen_model_instructions(const struct gen_model *m);
/* Reserve a strand for an episode: its program pauses. */
void gen_model_reserve(struct gen_model *m, unsigned strand, bool on);
bool gen_model_reserved(const struct gen_model *m, unsigned strand);
/* Strand idle (no instruction in flight, script empty). */
bool gen_model_idle(const struct gen_model *m, unsigned strand);
bool gen_model_stb_empty(const struct gen_model *m, unsigned strand);
/* Queue an instruction for a reserved strand (before its program). */
int gen_model_script(struct gen_model *m, unsigned strand,
		     const struct gen_insn *in, struct msr_error *err);
void gen_model_hold_stb(struct gen_model *m, unsigned strand, bool on);
/* The held ST_INV (GEN_F_DELAY_INV): present? release into its queue. */
bool gen_model_inv_held(const struct gen_model *m);
void gen_model_release_inv(struct gen_model *m);
/* Atomic split by GEN_F_ATOMIC_BREAK: read done, write pending? */
bool gen_model_atomic_split(const struct gen_model *m);
void gen_model_release_atomic(struct gen_model *m);
bool gen_model_l1_present(const struct gen_model *m, unsigned core,
			  uint64_t pa);
/* A fresh 64-byte line of the fault region (0 when exhausted). */
uint64_t gen_model_fault_line(struct gen_model *m);
struct gen_rng *gen_model_rng(struct gen_model *m);
uint64_t gen_model_events(const struct gen_model *m);

/* ------------------------------------------------------------------ */
/* Output                                                               */
/* ------------------------------------------------------------------ */

/* Buffered text file, zstd-compressed when the name ends in ".zst". */
struct gen_textout;

int gen_textout_open(const char *path, struct gen_textout **out,
		     struct msr_error *err);
int gen_textout_write(struct gen_textout *t, const void *buf, size_t len,
		      struct msr_error *err);
int gen_textout_close(struct gen_textout *t, struct msr_error *err);

/* Format one step line (with newline) into buf; returns the length. */
size_t gen_step_format(const struct gen_step *st, char *buf, size_t size);

#define GEN_STEP_LINE_MAX 400

#endif /* MSR_GEN_INTERNAL_H */
