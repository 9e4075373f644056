/*
 * program.c - what the strands execute: a random instruction mix over an
 * address pool (hot lines for contention, a footprint for capacity), or one
 * of the classic litmus tests repeated with random timing.
 *
 * It only chooses instructions (operation, address, size, store data); it
 * never looks at the memory system, so every timing and value effect comes
 * from the model. Deterministic for a seed.
 */
#include "gen-internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const mix_names[GEN_MIX_COUNT] = {
	"ld", "ldd", "ldq", "ldblk", "ldio", "st", "stblk", "stbi", "cas",
	"swap", "ldstub", "membar", "nop", "prefetch",
};

const char *gen_mix_name(unsigned op)
{
	return op < GEN_MIX_COUNT ? mix_names[op] : NULL;
}

void gen_config_default(struct gen_config *cfg)
{
	static const unsigned mix[GEN_MIX_COUNT] = {
		30, 3, 2, 2, 2, 25, 2, 2, 3, 2, 1, 4, 8, 2,
	};

	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = 1;
	cfg->cores = 8;
	cfg->threads = 8;
	cfg->stb_depth = 8;
	cfg->footprint = 64 * 1024;
	cfg->hot_lines = 16;
	cfg->hot_rate = 0.5;
	memcpy(cfg->mix, mix, sizeof(mix));
	cfg->pop_rate = 0.01;
	cfg->evict_rate = 0.002;
	cfg->dma_rate = 0.0005;
	cfg->slam_rate = 0.0005;
	cfg->check_rate = 0.001;
	cfg->l2_absent = 0.05;
}

/* ---------------------------------------------------------------- */
/* litmus tests                                                      */
/* ---------------------------------------------------------------- */

struct lit_op {
	char kind; /* 'S' store, 'L' load, 0 end */
	uint8_t var, val;
};

struct litmus {
	const char *name;
	unsigned nroles;
	struct lit_op ops[4][3];
};

static const struct litmus litmus_tests[] = {
	{"SB", 2, {{{'S', 0, 1}, {'L', 1, 0}}, {{'S', 1, 1}, {'L', 0, 0}}}},
	{"MP", 2, {{{'S', 0, 1}, {'S', 1, 1}}, {{'L', 1, 0}, {'L', 0, 0}}}},
	{"LB", 2, {{{'L', 0, 0}, {'S', 1, 1}}, {{'L', 1, 0}, {'S', 0, 1}}}},
	{"IRIW", 4, {{{'S', 0, 1}}, {{'S', 1, 1}},
		     {{'L', 0, 0}, {'L', 1, 0}}, {{'L', 1, 0}, {'L', 0, 0}}}},
	{"WRC", 3, {{{'S', 0, 1}}, {{'L', 0, 0}, {'S', 1, 1}},
		    {{'L', 1, 0}, {'L', 0, 0}}}},
	{"2+2W", 2, {{{'S', 0, 1}, {'S', 1, 2}}, {{'S', 1, 1}, {'S', 0, 2}}}},
	{"R", 2, {{{'S', 0, 1}, {'S', 1, 1}}, {{'S', 1, 2}, {'L', 0, 0}}}},
	{"S", 2, {{{'S', 0, 2}, {'S', 1, 1}}, {{'L', 1, 0}, {'S', 0, 1}}}},
};

#define NLITMUS (sizeof(litmus_tests) / sizeof(litmus_tests[0]))

const char *const gen_litmus_names[] = {
	"SB", "MP", "LB", "IRIW", "WRC", "2+2W", "R", "S", NULL,
};

struct gen_program {
	struct gen_config cfg;
	struct gen_rng rng;
	unsigned nstrands, mix_total;
	const struct litmus *lit;
	int role_of[256];
	unsigned pos[4];
	uint64_t iter[4];
	uint64_t wait_until[4];
};

int gen_program_create(const struct gen_config *cfg,
		       struct gen_program **out, struct msr_error *err)
{
	struct gen_program *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return msr_error_set(err, MSR_E_NOMEM, "gen", NULL, "out of memory");
	p->cfg = *cfg;
	p->nstrands = cfg->cores * cfg->threads;
	gen_rng_seed(&p->rng, cfg->seed, 3);
	for (unsigned i = 0; i < GEN_MIX_COUNT; i++)
		p->mix_total += cfg->mix[i];
	for (unsigned i = 0; i < 256; i++)
		p->role_of[i] = -1;
	if (cfg->litmus[0]) {
		for (unsigned i = 0; i < NLITMUS; i++)
			if (!strcmp(litmus_tests[i].name, cfg->litmus))
				p->lit = &litmus_tests[i];
		if (!p->lit) {
			free(p);
			return msr_error_set(err, MSR_E_USAGE, "gen", NULL,
					     "unknown litmus test name=%s",
					     cfg->litmus);
		}
		for (unsigned r = 0; r < p->lit->nroles; r++) {
			unsigned t = (unsigned)gen_rng_below(&p->rng, cfg->threads);
			unsigned core = r % cfg->cores;

			p->role_of[core * cfg->threads + t] = (int)r;
		}
	} else if (!p->mix_total) {
		free(p);
		return msr_error_set(err, MSR_E_USAGE, "gen", NULL,
				     "the instruction mix is empty");
	}
	*out = p;
	return MSR_OK;
}

void gen_program_destroy(struct gen_program *p)
{
	free(p);
}

bool gen_program_active(const struct gen_program *p, unsigned strand)
{
	return !p->lit || (strand < 256 && p->role_of[strand] >= 0);
}

static void put_value(uint8_t *st, unsigned size, uint64_t v)
{
	for (unsigned i = 0; i < size; i++)
		st[i] = (uint8_t)(v >> (8 * (size - 1 - i)));
}

static int litmus_next(struct gen_program *p, unsigned role, uint64_t cycle,
		       struct gen_insn *in)
{
	const struct lit_op *op;

	if (p->pos[role] == 0) {
		for (unsigned j = 0; j < p->lit->nroles; j++)
			if (p->iter[j] < p->iter[role])
				return GEN_PROG_WAIT;
		if (!p->wait_until[role])
			p->wait_until[role] = cycle + 1 + gen_rng_below(&p->rng, 24);
		if (cycle < p->wait_until[role])
			return GEN_PROG_WAIT;
		p->wait_until[role] = 0;
	}
	op = &p->lit->ops[role][p->pos[role]];
	memset(in, 0, sizeof(*in));
	in->size = 8;
	in->pa = GEN_POOL_BASE + 64ull * op->var;
	if (op->kind == 'S') {
		in->op = MSR_STEP_ST;
		put_value(in->st, 8, ((p->iter[role] + 1) << 8) | op->val);
	} else {
		in->op = MSR_STEP_LD;
	}
	p->pos[role]++;
	if (p->pos[role] == 3 || !p->lit->ops[role][p->pos[role]].kind) {
		p->pos[role] = 0;
		p->iter[role]++;
	}
	return GEN_PROG_INSN;
}

/* ---------------------------------------------------------------- */
/* random mix                                                        */
/* ---------------------------------------------------------------- */

static unsigned pick_mix(struct gen_program *p)
{
	uint64_t r = gen_rng_below(&p->rng, p->mix_total);

	for (unsigned i = 0; i < GEN_MIX_COUNT; i++) {
		if (r < p->cfg.mix[i])
			return i;
		r -= p->cfg.mix[i];
	}
	return GEN_MIX_NOP;
}

/* A naturally aligned address of `size` bytes (size <= 64) in the pool. */
static uint64_t pick_addr(struct gen_program *p, unsigned size)
{
	uint64_t nl = p->cfg.footprint / 16, line;
	uint64_t off;

	if (p->cfg.hot_lines && gen_rng_chance(&p->rng, p->cfg.hot_rate))
		line = gen_rng_below(&p->rng, p->cfg.hot_lines < nl ? p->cfg.hot_lines : nl);
	else
		line = gen_rng_below(&p->rng, nl);
	off = line * 16;
	if (size >= 16)
		off &= ~(uint64_t)(size - 1);
	else
		off += gen_rng_below(&p->rng, 16 / size) * size;
	return GEN_POOL_BASE + off;
}

/* Loads sometimes read the slam region (written only by MEM_SLAM). */
static uint64_t pick_load_addr(struct gen_program *p, unsigned size)
{
	if (gen_rng_chance(&p->rng, 1.0 / 16)) {
		uint64_t base = GEN_POOL_BASE + p->cfg.footprint + GEN_FAULT_BYTES;

		return base + gen_rng_below(&p->rng, GEN_SLAM_BYTES / size) * size;
	}
	return pick_addr(p, size);
}

static void random_data(struct gen_program *p, struct gen_insn *in)
{
	for (unsigned i = 0; i < 64; i += 8) {
		uint64_t v = gen_rng_next(&p->rng);

		memcpy(in->st + i, &v, 8);
	}
}

static const uint8_t op_of_mix[GEN_MIX_COUNT] = {
	MSR_STEP_LD, MSR_STEP_LDD, MSR_STEP_LDQ, MSR_STEP_LDBLK, MSR_STEP_LD,
	MSR_STEP_ST, MSR_STEP_STBLK, MSR_STEP_STBI, MSR_STEP_CAS,
	MSR_STEP_SWAP, MSR_STEP_LDSTUB, MSR_STEP_MEMBAR, MSR_STEP_NOP,
	MSR_STEP_PREFETCH,
};

static unsigned mix_size(struct gen_program *p, unsigned k)
{
	switch (k) {
	case GEN_MIX_LD: case GEN_MIX_LDIO: case GEN_MIX_ST:
		return 1u << gen_rng_below(&p->rng, 4);
	case GEN_MIX_LDQ: return 16;
	case GEN_MIX_LDBLK: case GEN_MIX_STBLK: return 64;
	case GEN_MIX_CAS: return gen_rng_chance(&p->rng, 0.5) ? 4 : 8;
	case GEN_MIX_SWAP: return 4;
	case GEN_MIX_LDSTUB: return 1;
	default: return 8;
	}
}

static void random_next(struct gen_program *p, struct gen_insn *in)
{
	static const uint32_t masks[] = {0x1, 0x2, 0x4, 0x8, 0xa, 0xf, 0x40};
	unsigned k = pick_mix(p);

	memset(in, 0, sizeof(*in));
	in->op = op_of_mix[k];
	in->size = (uint8_t)mix_size(p, k);
	if (k == GEN_MIX_MEMBAR) {
		in->mask = masks[gen_rng_below(&p->rng, 7)];
		in->size = 0;
		return;
	}
	if (k == GEN_MIX_NOP) {
		in->size = 0;
		return;
	}
	if (k == GEN_MIX_LDIO) {
		in->flags = GEN_F_IO;
		in->pa = GEN_IO_BASE +
			 gen_rng_below(&p->rng, GEN_IO_BYTES / in->size) * in->size;
		return;
	}
	if (in->op == MSR_STEP_LD || in->op == MSR_STEP_LDD ||
	    in->op == MSR_STEP_LDQ || in->op == MSR_STEP_LDBLK)
		in->pa = pick_load_addr(p, in->size);
	else
		in->pa = pick_addr(p, in->size);
	random_data(p, in);
	if (k == GEN_MIX_LDSTUB)
		in->st[0] = 0xff;
	if (k == GEN_MIX_PREFETCH)
		in->size = 0;
}

int gen_program_next(struct gen_program *p, unsigned strand, uint64_t cycle,
		     struct gen_insn *out)
{
	if (p->lit) {
		int role = strand < 256 ? p->role_of[strand] : -1;

		if (role < 0)
			return GEN_PROG_NONE;
		return litmus_next(p, (unsigned)role, cycle, out);
	}
	random_next(p, out);
	return GEN_PROG_INSN;
}
