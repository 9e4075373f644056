/*
 * test_hugepage.c - huge-page advice for large tables: it leaves contents
 * and small tables alone, and it advises a table's whole mapping, so that
 * realloc can still grow the table in place.
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	uintptr_t lo, hi;
	bool hg = false;

	cr_assert_not_null(p);
	fill(p, n);
	msr_hugepage_advise(p, n);
	cr_assert(filled(p, n));
	if (!mapping_of((uintptr_t)p, &lo, &hi, &hg))
		cr_skip_test("/proc/self/smaps is not readable here");
	if (!hg && !mapping_of((uintptr_t)p + n / 2, &lo, &hi, &hg))
		cr_skip_test("/proc/self/smaps is not readable here");
	if (!hg)
		cr_skip_test("this kernel does not take huge-page advice");
	/* one mapping from the table's first byte to its last: advice on the
	 * aligned interior only would have split it (and stopped mremap) */
	cr_assert(mapping_of((uintptr_t)p, &lo, &hi, &hg));
	cr_expect(hg, "the table's first page was not advised");
	cr_expect_leq(lo, (uintptr_t)p);
	cr_expect_geq(hi, (uintptr_t)p + n, "the table's mapping was split");
	q = realloc(p, 2 * n);
	cr_assert_not_null(q);
	cr_expect(filled(q, n));
	free(q);
}
