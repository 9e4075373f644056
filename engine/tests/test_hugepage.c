/*
 * test_hugepage.c - huge pages for large tables: the advice leaves contents
 * and small tables alone and covers a table's whole mapping, so that
 * realloc can still grow the table in place; fixed tables are aligned and
 * large ones lie on whole huge pages; cleared ones read as zeros even where
 * the allocator had dirty memory at hand, and large ones are not touched
 * until written; a growing table keeps its contents from malloc's memory
 * (line-aligned) to a mapping of its own and beyond.
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>
#include <unistd.h>

#include "hugepage.h"

/* The mapping of /proc/self/smaps that holds address a: its bounds and
 * whether its VmFlags include the huge-page advice ("hg"). False when
 * smaps cannot be read. */
static bool mapping_of(uintptr_t a, uintptr_t *lo, uintptr_t *hi, bool *hg)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		uintmax_t s, e;

		/* a mapping's first line: "start-end perms ..."; the
		 * attribute lines ("Rss:", "VmFlags:") do not parse so */
		if (sscanf(line, "%jx-%jx ", &s, &e) == 2) {
			if (found)
				break;
			in = a >= s && a < e;
			if (in) {
				*lo = (uintptr_t)s;
				*hi = (uintptr_t)e;
				*hg = false;
				found = true;
			}
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0)
			*hg = strstr(line, " hg") != NULL;
	}
	fclose(f);
	return found;
}

/* Whether this kernel records huge-page advice at all (skip if not). */
static bool kernel_takes_advice(void)
{
#ifdef MADV_HUGEPAGE
	size_t n = (size_t)4 << 20;
	void *m = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t lo, hi;
	bool hg = false;

	if (m == MAP_FAILED)
		return false;
	if (madvise(m, n, MADV_HUGEPAGE) != 0 ||
	    !mapping_of((uintptr_t)m, &lo, &hi, &hg))
		hg = false;
	munmap(m, n);
	return hg;
#else
	return false;
#endif
}

/*
 * Expect one advised mapping to hold [from, to): false, with nothing
 * checked, where the kernel keeps no huge-page advice.
 */
static bool expect_advised(uintptr_t from, uintptr_t to)
{
	uintptr_t lo, hi;
	bool hg = false;

	if (!kernel_takes_advice())
		return false;
	cr_assert(mapping_of(from, &lo, &hi, &hg));
	cr_expect(hg, "the mapping at %#jx was not advised", (uintmax_t)from);
	cr_expect_leq(lo, from);
	cr_expect_geq(hi, to, "the mapping at %#jx ends at %#jx, before %#jx",
		      (uintmax_t)from, (uintmax_t)hi, (uintmax_t)to);
	return true;
}

static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 131 + 7);
}

static bool filled(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(i * 131 + 7))
			return false;
	return true;
}

Test(hugepage, small_tables_null_and_contents_are_left_alone)
{
	size_t n = MSR_HUGEPAGE_MIN - 1;
	unsigned char *p = malloc(n);
	uintptr_t lo, hi;
	bool hg = false;

	cr_assert_not_null(p);
	fill(p, n);
	msr_hugepage_advise(NULL, MSR_HUGEPAGE_MIN * 4);
	msr_hugepage_advise(p, 0);
	msr_hugepage_advise(p, n);
	cr_assert(filled(p, n));
	if (mapping_of((uintptr_t)p, &lo, &hi, &hg))
		cr_expect_not(hg, "a table under %zu bytes was advised",
			      (size_t)MSR_HUGEPAGE_MIN);
	free(p);
}

Test(hugepage, a_large_table_is_advised_whole_and_grows_in_place)
{
	/* an odd size, so that the table starts and ends inside pages */
	size_t n = MSR_HUGEPAGE_MIN * 2 + 1000;
	unsigned char *p = malloc(n), *q;

	cr_assert_not_null(p);
	fill(p, n);
	msr_hugepage_advise(p, n);
	cr_assert(filled(p, n));
	/* one mapping from the table's first byte to its last: advice on the
	 * aligned interior only would have split it (and stopped mremap) */
	if (!expect_advised((uintptr_t)p, (uintptr_t)p + n)) {
		free(p); /* a skip leaves the test at once */
		cr_skip_test("no huge-page advice here (or no /proc/self/smaps)");
	}
	q = realloc(p, 2 * n);
	cr_assert_not_null(q);
	cr_expect(filled(q, n));
	free(q);
}

Test(hugepage, a_small_fixed_table_is_line_aligned)
{
	size_t n = 1000;
	unsigned char *p = msr_hugepage_alloc(n);

	cr_assert_not_null(p);
	cr_expect_eq((uintptr_t)p % 64, 0, "not on a cache line: %p", (void *)p);
	fill(p, n);
	cr_expect(filled(p, n));
	free(p);
}

Test(hugepage, a_large_fixed_table_is_on_whole_huge_pages)
{
	size_t huge = (size_t)2 << 20;
	size_t n = MSR_HUGEPAGE_MIN + 12345;
	unsigned char *p = msr_hugepage_alloc(n);
	bool advised;

	cr_assert_not_null(p);
	cr_expect_eq((uintptr_t)p % huge, 0, "not 2 MiB-aligned: %p", (void *)p);
	fill(p, n);
	cr_expect(filled(p, n));
	/* advised up to the next 2 MiB boundary, not to the last byte only */
	advised = expect_advised((uintptr_t)p,
				 (uintptr_t)p + ((n + huge - 1) & ~(huge - 1)));
	free(p); /* before a skip, which leaves the test at once */
	if (!advised)
		cr_skip_test("no huge-page advice here (or no /proc/self/smaps)");
}

/* msr_hugepage_zalloc(n) just after a block of n bytes was written and
 * freed: memory the allocator would hand out again, not fresh memory. */
static unsigned char *zalloc_after_dirty(size_t n)
{
	unsigned char *p = malloc(n);

	cr_assert_not_null(p);
	fill(p, n);
	free(p);
	p = msr_hugepage_zalloc(n);
	cr_assert_not_null(p);
	return p;
}

Test(hugepage, a_small_cleared_table_is_cleared)
{
	size_t n = 1000;
	unsigned char *p = zalloc_after_dirty(n);

	for (size_t i = 0; i < n; i++)
		cr_assert_eq(p[i], 0, "byte %zu not cleared", i);
	fill(p, n);
	cr_expect(filled(p, n));
	msr_hugepage_release(p, n);
}

Test(hugepage, a_large_cleared_table_is_a_fresh_mapping_on_huge_pages)
{
	size_t huge = (size_t)2 << 20;
	size_t n = MSR_HUGEPAGE_MIN + 12345;
	unsigned char *p = zalloc_after_dirty(n);
	bool advised;

	cr_expect_eq((uintptr_t)p % huge, 0, "not 2 MiB-aligned: %p", (void *)p);
	{
		/* nothing touched yet: the pages come as they are written */
		size_t pg = (size_t)sysconf(_SC_PAGESIZE), np = (n + pg - 1) / pg;
		unsigned char *vec = malloc(np);
		size_t resident = 0;

		cr_assert_not_null(vec);
		cr_assert_eq(mincore(p, np * pg, vec), 0);
		for (size_t i = 0; i < np; i++)
			resident += vec[i] & 1;
		cr_expect_eq(resident, 0, "%zu of %zu pages resident at once",
			     resident, np);
		free(vec);
	}
	for (size_t i = 0; i < n; i += 512)
		cr_assert_eq(p[i], 0, "byte %zu not cleared", i);
	fill(p, n);
	cr_expect(filled(p, n));
	advised = expect_advised((uintptr_t)p,
				 (uintptr_t)p + ((n + huge - 1) & ~(huge - 1)));
	msr_hugepage_release(p, n); /* before a skip, as above */
	if (!advised)
		cr_skip_test("no huge-page advice here (or no /proc/self/smaps)");
}

Test(hugepage, a_growing_table_keeps_its_contents_across_the_threshold)
{
	size_t huge = (size_t)2 << 20;
	size_t sizes[] = {1000, 100000, MSR_HUGEPAGE_MIN + 4096,
			  2 * MSR_HUGEPAGE_MIN + 1, 5 * MSR_HUGEPAGE_MIN + 1};
	unsigned char *p = NULL;
	size_t have = 0;

	for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		unsigned char *q = msr_hugepage_grow(p, have, n);

		cr_assert_not_null(q, "growing to %zu bytes failed", n);
		cr_expect(filled(q, have), "contents lost growing %zu -> %zu",
			  have, n);
		if (n >= MSR_HUGEPAGE_MIN)
			cr_expect_eq((uintptr_t)q % huge, 0,
				     "a %zu-byte table is not 2 MiB-aligned", n);
		else
			cr_expect_eq((uintptr_t)q % 64, 0,
				     "a %zu-byte table is not line-aligned", n);
		fill(q, n); /* the whole new size is writable */
		p = q;
		have = n;
	}
	/* growing to a size that fits its whole huge pages keeps it in place */
	cr_expect_eq(msr_hugepage_grow(p, have, have + 1), p);
	expect_advised((uintptr_t)p, (uintptr_t)p + have);
	msr_hugepage_release(p, have);
	msr_hugepage_release(NULL, have);
}
