/*
 * rng.c - the generator's own PRNG (xoshiro256**, seeded by splitmix64).
 *
 * Every random choice of msync-gen comes from here so that a seed fixes the
 * output bytes on every machine; it must never call rand() or read time.
 */
#include "gen-internal.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void gen_rng_seed(struct gen_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ull);

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t gen_rng_next(struct gen_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

uint64_t gen_rng_below(struct gen_rng *r, uint64_t n)
{
	/* Lemire's multiply-shift; the tiny bias is irrelevant here and the
	 * result is still a pure function of the seed. */
	return (uint64_t)(((unsigned __int128)gen_rng_next(r) * n) >> 64);
}

bool gen_rng_chance(struct gen_rng *r, double p)
{
	if (p <= 0)
		return false;
	if (p >= 1)
		return true;
	return (gen_rng_next(r) >> 11) < (uint64_t)(p * 9007199254740992.0);
}
