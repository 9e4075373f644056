/*
 * bench_tso.c - throughput and memory of the TSO pass on a synthetic
 * stream: 64 strands storing to and loading from 4096 blocks, every load
 * reading the newest commit (or bypassing its own buffered store), so the
 * execution is TSO-clean. Run with `meson test --benchmark`; prints one
 * line (ops per second, peak RSS). Argument: number of operations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "test_tso_harness.h"

#define NBLK 4096

static struct h_run h;
static uint64_t lastco[NBLK], lastss[NBLK];
static unsigned lastst[NBLK];

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4000000, i;
	uint64_t seed = 88172645463325252ull;
	uint64_t pend[64] = {0}, pend_pa[64] = {0};
	struct timespec a, b;
	struct rusage ru;
	double s;

	if (h_init(&h) != MSR_OK)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		unsigned t, blk;
		uint64_t pa;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		t = (unsigned)(seed % 64);
		blk = (unsigned)((seed >> 8) % NBLK);
		pa = 0x100000 + 8ull * blk;
		if ((seed >> 20) % 2) { /* store; the previous one commits */
			if (pend[t]) {
				unsigned pb = (unsigned)((pend_pa[t] - 0x100000) / 8);

				lastco[pb] = h_commit(&h, t, pend[t], pend_pa[t], 1,
						      false);
				lastst[pb] = t;
				lastss[pb] = pend[t];
			}
			pend[t] = h_store(&h, t, pa, 1);
			pend_pa[t] = pa;
		} else if (pend[t] && pend_pa[t] == pa) {
			h_load_bypass(&h, t, pa, 1, pend[t]);
		} else {
			h_load(&h, t, pa, 1, lastst[blk], lastss[blk],
			       lastco[blk]);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	h_fini(&h);
	getrusage(RUSAGE_SELF, &ru);
	s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("tso: %ld ops and commits in %.3f s (%.2f M/s), %u violations, "
	       "peak RSS %ld KiB\n", n, s, (double)n / s / 1e6, h.nv,
	       ru.ru_maxrss);
	return h.nv ? 1 : 0;
}
