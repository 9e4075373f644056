/*
 * hugepage.h - large tables on transparent huge pages.
 *
 * The engine's and the TSO pass's per-block tables are read at random over
 * tens to hundreds of MiB on large footprints, where the page faults of
 * their first touch (one per 4 KiB page) and the TLB misses are a large
 * share of the time. These functions put tables of MSR_HUGEPAGE_MIN bytes
 * or more on 2 MiB pages where the system allows it ("madvise" or
 * "always" in /sys/kernel/mm/transparent_hugepage/enabled); elsewhere they
 * behave as plain allocation, and say how full such a table may get
 * before it doubles (msr_table_limit). Nothing here changes a table's
 * contents, prints or exits; a failed allocation returns NULL.
 */
#ifndef MSR_HUGEPAGE_H
#define MSR_HUGEPAGE_H

#include <stdbool.h>
#include <stddef.h>

/* Smaller tables gain little, and one of 4 MiB always spans a whole
 * aligned 2 MiB page. */
#define MSR_HUGEPAGE_MIN ((size_t)4 << 20)

/*
 * Ask for huge pages for a table of `bytes` just allocated (by malloc,
 * calloc or realloc), before it is first written. Advice only: nothing for
 * smaller tables. The advised span is the table's pages rounded outward:
 * advising only its aligned 2 MiB interior would split a mapping of its
 * own into three, and glibc's realloc could then no longer grow it in
 * place with mremap (it copies instead).
 */
void msr_hugepage_advise(void *p, size_t bytes);

/*
 * A table of fixed size, not cleared, aligned to a cache line at least;
 * from MSR_HUGEPAGE_MIN bytes on whole huge pages: aligned to 2 MiB and
 * rounded up to it, so that none of it is left on small pages at an
 * unaligned start or end (a 4 MiB table at a random page boundary holds
 * only one aligned 2 MiB page). Free it with free().
 */
void *msr_hugepage_alloc(size_t bytes);

/*
 * A table of fixed size, cleared. From MSR_HUGEPAGE_MIN bytes on it is a
 * fresh mapping of its own on whole huge pages, which the system clears
 * as each page is first written: nothing is touched now, so a table that
 * fills slowly (or, in a short replay, hardly at all) costs only the pages
 * it uses, and none is cleared twice. Smaller ones are calloc's. Free it
 * with msr_hugepage_release and its size.
 */
void *msr_hugepage_zalloc(size_t bytes);

/*
 * Grow a table that only grows (a pool) from old_bytes to new_bytes,
 * keeping its contents, as realloc does: NULL when memory is short, with
 * the old table still valid. Under MSR_HUGEPAGE_MIN bytes it is malloc's,
 * aligned to a cache line (a pool of line-sized records keeps each in one);
 * from there on a mapping of its own on whole huge pages, which moves as
 * it grows (mremap) to a new 2 MiB boundary, so that its huge pages move
 * whole, neither copied nor touched again (glibc's realloc moves a large
 * block to any page boundary, which splits them into small pages). Free
 * it with msr_hugepage_release and its last size.
 */
void *msr_hugepage_grow(void *old, size_t old_bytes, size_t new_bytes);

/* Free a table from msr_hugepage_grow or msr_hugepage_zalloc, given its
 * (last) size (NULL: none). */
void msr_hugepage_release(void *p, size_t bytes);

/*
 * The most entries an open-addressing table of `cap` slots of `esz` bytes
 * holds before it doubles: half while it is under MSR_HUGEPAGE_MIN bytes,
 * where it stays in the caches and short probes are what count; three
 * quarters from there on, where a probe misses the caches anyway and the
 * smaller table is fewer pages to fault in and fewer lines to miss.
 */
static inline size_t msr_table_limit(size_t cap, size_t esz)
{
	return cap * esz < MSR_HUGEPAGE_MIN ? cap / 2 : cap / 4 * 3;
}

#endif /* MSR_HUGEPAGE_H */
