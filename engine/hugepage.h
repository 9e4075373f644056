/*
 * hugepage.h - advice that a large table should be backed by huge pages.
 *
 * msr_hugepage_advise(p, bytes) asks the kernel to back a freshly allocated
 * table of at least MSR_HUGEPAGE_MIN bytes with transparent huge pages
 * (madvise MADV_HUGEPAGE). It is advice only: it never fails, never
 * changes the table's contents, does nothing for smaller tables or where
 * the system has no transparent huge pages (or has them set to "never"),
 * and call it before the table is first written so that its first touch
 * takes one fault per 2 MiB instead of one per 4 KiB page. The engine's
 * and the TSO pass's per-block tables are read at random over tens to
 * hundreds of MiB on large footprints, where those faults and the TLB
 * misses are a large share of the time.
 *
 * The advised span is the table's own pages, rounded outward to page
 * boundaries: advising only its aligned 2 MiB interior would split a
 * mapping of its own into three, and glibc's realloc could then no longer
 * grow it in place with mremap (it copies instead).
 */
#ifndef MSR_HUGEPAGE_H
#define MSR_HUGEPAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Smaller tables gain little, and one of 4 MiB always spans a whole
 * aligned 2 MiB page. */
#define MSR_HUGEPAGE_MIN ((size_t)4 << 20)

static inline void msr_hugepage_advise(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo, hi;

	if (!p || bytes < MSR_HUGEPAGE_MIN || page == 0 ||
	    (page & (page - 1)) != 0)
		return;
	lo = (uintptr_t)p & ~(page - 1);
	hi = ((uintptr_t)p + bytes + page - 1) & ~(page - 1);
	(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p;
	(void)bytes;
#endif
}

/*
 * A table of fixed size that is never reallocated, aligned to a cache line
 * at least; from MSR_HUGEPAGE_MIN bytes on whole huge pages: aligned to
 * 2 MiB and rounded up to it, so that none of it is left on small pages at
 * an unaligned start or end (a 4 MiB table at a random page boundary
 * holds only one aligned 2 MiB page). Cleared when `zero`, which touches
 * all of it now: a small table that fills slowly is better off with
 * calloc. Free it with free(); NULL when memory is short.
 */
static inline void *msr_hugepage_alloc(size_t bytes, bool zero)
{
	size_t align = bytes < MSR_HUGEPAGE_MIN ? 64 : (size_t)2 << 20;
	size_t n = (bytes + align - 1) & ~(align - 1);
	void *p = aligned_alloc(align, n ? n : align);

	if (!p)
		return NULL;
	msr_hugepage_advise(p, n);
	if (zero)
		memset(p, 0, n);
	return p;
}

#endif /* MSR_HUGEPAGE_H */
