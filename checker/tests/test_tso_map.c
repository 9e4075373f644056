/*
 * test_tso_map.c - the TSO pass's block-keyed open-addressing map against
 * a plain reference array: random inserts, lookups and deletions (the
 * backward-shift deletion own-store retirement relies on), with growth.
 */
#include <criterion/criterion.h>

#include "tso-internal.h"
#include "hugepage.h"

struct ent {
	uint64_t key;
	uint64_t val;
};

#define NKEYS 700

Test(tso_map, random_against_reference)
{
	struct tso_map m;
	static uint64_t ref[NKEYS]; /* 0 = absent, else value */
	uint64_t seed = 12345, step;

	cr_assert_eq(tso_map_init(&m, sizeof(struct ent), 8), 0);
	for (step = 0; step < 200000; step++) {
		unsigned k;
		uint64_t pa8;
		struct ent *e;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		k = (unsigned)(seed % NKEYS);
		/* clustered addresses provoke probe chains */
		pa8 = 0x40000 + 8ull * k * (k % 3 ? 1 : 512);
		e = tso_map_find(&m, pa8, false);
		cr_assert_eq(e != NULL, ref[k] != 0, "key %u presence", k);
		if (e)
			cr_assert_eq(e->val, ref[k]);
		if ((seed >> 32) % 3 == 0 && e) {
			tso_map_del(&m, e);
			ref[k] = 0;
		} else {
			e = tso_map_find(&m, pa8, true);
			cr_assert_not_null(e);
			e->val = step + 1;
			ref[k] = step + 1;
		}
	}
	{
		size_t n = 0;
		unsigned k;

		for (k = 0; k < NKEYS; k++)
			n += ref[k] != 0;
		cr_assert_eq(m.n, n);
	}
	tso_map_release(&m);
}

/* Past MSR_HUGEPAGE_MIN the table is a mapping of its own, cleared by the
 * system as it is written: growing into one keeps every entry, and every
 * slot it did not fill reads as empty. */
Test(tso_map, grows_into_a_table_on_huge_pages)
{
	struct tso_map m;
	struct big {
		uint64_t key;
		uint64_t val[2];
	} *e;
	const unsigned n = 150000; /* doubles to 2^18 slots of 24 bytes, 6 MiB */

	cr_assert_eq(tso_map_init(&m, sizeof(struct big), 8), 0);
	for (unsigned k = 0; k < n; k++) {
		e = tso_map_find(&m, 0x100000 + 8ull * k, true);
		cr_assert_not_null(e);
		cr_assert_eq(e->val[0] | e->val[1], 0, "entry %u not fresh", k);
		e->val[0] = k + 1;
		e->val[1] = ~(uint64_t)k;
	}
	cr_assert_geq(m.cap * m.esz, MSR_HUGEPAGE_MIN);
	cr_assert_eq(m.n, n);
	for (unsigned k = 0; k < n; k++) {
		e = tso_map_find(&m, 0x100000 + 8ull * k, false);
		cr_assert_not_null(e, "entry %u lost", k);
		cr_assert_eq(e->val[0], k + 1);
		cr_assert_eq(e->val[1], ~(uint64_t)k);
	}
	cr_assert_null(tso_map_find(&m, 0x100000 + 8ull * n, false));
	tso_map_release(&m);
	cr_assert_null(m.slots);
}

/* The table grows only when a new key would take it past half full: a
 * footprint of exactly cap/2 blocks, the common power-of-two pool, keeps
 * its table however often its blocks are looked up again. */
Test(tso_map, grows_only_for_a_new_key)
{
	struct tso_map m;
	struct ent *e;
	bool fresh;

	cr_assert_eq(tso_map_init(&m, sizeof(struct ent), 8), 0);
	for (unsigned k = 0; k < 4; k++) {
		e = tso_map_put(&m, 8ull * k, tso_hash64(8ull * k + 1),
				sizeof(*e), &fresh);
		cr_assert(e && fresh);
		e->val = k + 1;
	}
	cr_assert_eq(m.cap, 8);
	for (unsigned k = 0; k < 4; k++) {
		e = tso_map_put(&m, 8ull * k, tso_hash64(8ull * k + 1),
				sizeof(*e), &fresh);
		cr_assert(e && !fresh);
		cr_assert_eq(e->val, k + 1);
		cr_assert_not_null(tso_map_find(&m, 8ull * k, true));
	}
	cr_assert_eq(m.cap, 8, "an existing key grew the table to %zu", m.cap);
	e = tso_map_put(&m, 32, tso_hash64(33), sizeof(*e), &fresh);
	cr_assert(e && fresh);
	cr_assert_eq(m.cap, 16);
	cr_assert_eq(m.n, 5);
	for (unsigned k = 0; k < 4; k++) {
		e = tso_map_find(&m, 8ull * k, false);
		cr_assert_not_null(e, "entry %u lost in the growth", k);
		cr_assert_eq(e->val, k + 1);
	}
	tso_map_release(&m);
}

/* A table of MSR_HUGEPAGE_MIN bytes or more doubles at three quarters
 * full, a smaller one at half; at that density every entry is kept, and
 * deleting half of them keeps the rest found (the backward shift over
 * longer probe chains). */
Test(tso_map, a_large_table_fills_to_three_quarters)
{
	struct tso_map m;
	struct big {
		uint64_t key;
		uint64_t val[2];
	} *e;
	const unsigned n = 1u << 19; /* past two doublings at 3/4 */
	unsigned dense = 0;

	cr_assert_eq(tso_map_init(&m, sizeof(struct big), 8), 0);
	for (unsigned k = 0; k < n; k++) {
		size_t cap = m.cap;
		size_t at = cap * sizeof(struct big) >= MSR_HUGEPAGE_MIN
				    ? cap / 4 * 3 : cap / 2;

		e = tso_map_find(&m, 0x100000 + 64ull * k, true);
		cr_assert_not_null(e);
		e->val[0] = k + 1;
		if (m.cap != cap) {
			cr_assert_eq(m.cap, 2 * cap);
			cr_assert_eq(k, at, "%zu slots doubled at %u entries", cap, k);
			dense += at != cap / 2;
		}
	}
	cr_assert_eq(dense, 2);
	for (unsigned k = 0; k < n; k += 2) {
		e = tso_map_find(&m, 0x100000 + 64ull * k, false);
		cr_assert(e && e->val[0] == k + 1, "entry %u", k);
		tso_map_del(&m, e);
	}
	cr_assert_eq(m.n, n / 2);
	for (unsigned k = 0; k < n; k++) {
		e = tso_map_find(&m, 0x100000 + 64ull * k, false);
		if (k % 2 == 0)
			cr_assert_null(e, "deleted entry %u still found", k);
		else
			cr_assert(e && e->val[0] == k + 1, "entry %u lost", k);
	}
	tso_map_release(&m);
}
