/*
 * memlat.c - the latency of a random read at several working-set sizes, for
 * the benchmark's record of the machine.
 *
 *   msr-memlat [SIZE...]     sizes in bytes with k, M or G (default 1M 4M 16M)
 *
 * Prints one line, e.g. "1 MiB 4.6 ns, 4 MiB 14.2 ns, 16 MiB 118.0 ns": the
 * mean time of one load in a chain of dependent loads through a random
 * cyclic permutation of the 64-byte lines of a buffer of that size, on
 * ordinary (small) pages. A replay's tables are read at random over a few
 * MiB, so its speed follows these figures far more than the decompression
 * floor does: on a virtual machine whose last-level cache neighbours have
 * taken, the 4 MiB figure rises from about 15 ns to about 150 ns, and
 * `check` takes twice to three times as long against an almost unchanged
 * floor. Exit status 0, or 2 on a bad argument or when memory is short.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LINE 64
/* under 0.1 s a size even at DRAM latency, long enough to average */
#define STEPS ((uint64_t)1 << 19)

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift = 0;

	if (end == s)
		return -1;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'M')
		shift = 20;
	else if (*end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end || v == 0 || v > (SIZE_MAX >> shift) || v << shift < 2 * LINE)
		return -1;
	*out = (size_t)v << shift;
	return 0;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Nanoseconds a load through `bytes` of lines linked in random order. */
static int chase(size_t bytes, double *ns)
{
	size_t n = bytes / LINE, i;
	size_t *order = malloc(n * sizeof(*order));
	unsigned char *buf = aligned_alloc(LINE, n * LINE);
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	struct timespec a, b;
	void *p;

	if (!order || !buf) {
		free(order);
		free(buf);
		return -1;
	}
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) { /* Fisher-Yates: one cycle through all */
		size_t j = (size_t)(xorshift(&seed) % (i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < n; i++) {
		void *next = buf + order[(i + 1) % n] * LINE;

		memcpy(buf + order[i] * LINE, &next, sizeof(next));
	}
	p = buf + order[0] * LINE;
	for (i = 0; i < n; i++) /* one lap to warm what fits */
		p = *(void **)p;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (uint64_t k = 0; k < STEPS; k++)
		p = *(void **)p;
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* the chain's end is used, so the loop cannot be dropped */
	*ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 +
	       (double)(b.tv_nsec - a.tv_nsec)) / (double)STEPS +
	      (p == NULL ? 1.0 : 0.0);
	free(order);
	free(buf);
	return 0;
}

static void print_size(FILE *f, size_t bytes)
{
	if (bytes % ((size_t)1 << 30) == 0)
		fprintf(f, "%zu GiB", bytes >> 30);
	else if (bytes % ((size_t)1 << 20) == 0)
		fprintf(f, "%zu MiB", bytes >> 20);
	else if (bytes % 1024 == 0)
		fprintf(f, "%zu KiB", bytes >> 10);
	else
		fprintf(f, "%zu bytes", bytes);
}

int main(int argc, char **argv)
{
	static const char *const dflt[] = {"1M", "4M", "16M"};
	const char *const *sizes = argc > 1 ? (const char *const *)argv + 1
					    : dflt;
	int n = argc > 1 ? argc - 1 : 3;
	size_t *bytes = calloc((size_t)n, sizeof(*bytes));

	if (!bytes)
		return 2;
	for (int i = 0; i < n; i++) /* all checked before any is measured */
		if (parse_size(sizes[i], &bytes[i]) != 0) {
			fprintf(stderr, "msr-memlat: bad size '%s': give bytes "
				"with k, M or G, at least 128\n", sizes[i]);
			free(bytes);
			return 2;
		}
	for (int i = 0; i < n; i++) {
		double ns;

		if (chase(bytes[i], &ns) != 0) {
			fprintf(stderr, "msr-memlat: out of memory for ");
			print_size(stderr, bytes[i]);
			fprintf(stderr, "\n");
			free(bytes);
			return 2;
		}
		print_size(stdout, bytes[i]);
		printf(" %.1f ns%s", ns, i + 1 < n ? ", " : "\n");
	}
	free(bytes);
	return 0;
}
