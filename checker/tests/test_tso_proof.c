/*
 * test_tso_proof.c - proof values of the TSO pass: the shift-based value of
 * a block's bytes (and of a whole op) against the plain byte walk, for
 * every mask, contiguous or not.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tso-internal.h"

/* The bytes under mask `m` (bit 7 = byte 0), lowest address first, at most
 * `max` of them, appended to `v`. */
static uint64_t walk(uint64_t v, const uint8_t *src, unsigned m, unsigned *n)
{
	unsigned i;

	for (i = 0; i < 8 && *n < 8; i++)
		if (m & (0x80u >> i)) {
			v = v << 8 | src[i];
			++*n;
		}
	return v;
}

Test(tso_proof, block_value_every_mask)
{
	uint8_t src[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
	unsigned m;

	for (m = 0; m < 256; m++) {
		unsigned n = 0;

		cr_assert_eq(tso_proof_value(src, m), walk(0, src, m, &n),
			     "mask 0x%02x", m);
	}
}

Test(tso_proof, op_value_across_blocks)
{
	static struct msr_op op;
	uint64_t seed = 99;
	unsigned round, b, i;

	for (round = 0; round < 5000; round++) {
		struct msr_proof_op p;
		uint64_t v = 0;
		unsigned n = 0;

		memset(&op, 0, sizeof(op));
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		op.kind = seed & 1 ? MSR_OP_STORE : MSR_OP_LOAD;
		op.nblocks = (uint8_t)(1 + (seed >> 8) % 3);
		for (b = 0; b < op.nblocks; b++) {
			op.blk[b].mask = (uint8_t)(seed >> (16 + 8 * b));
			for (i = 0; i < 8; i++) {
				op.blk[b].load[i] = (uint8_t)(seed >> i);
				op.blk[b].store[i] = (uint8_t)(seed >> (3 * i));
			}
			v = walk(v, op.kind == MSR_OP_STORE ? op.blk[b].store
							    : op.blk[b].load,
				 op.blk[b].mask, &n);
		}
		tso_proof_load(&op, &p);
		cr_assert_eq(p.value, v, "round %u", round);
	}
}
