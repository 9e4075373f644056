/*
 * hugepage.c - large tables on transparent huge pages (hugepage.h).
 */
#define _GNU_SOURCE /* mremap */
#include "hugepage.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGEPAGE_SIZE ((size_t)2 << 20)

void msr_hugepage_advise(void *p, size_t bytes)
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

/* bytes rounded up to a multiple of align (a power of two) */
static size_t round_up(size_t bytes, size_t align)
{
	return (bytes + align - 1) & ~(align - 1);
}

static size_t hugepage_round(size_t bytes)
{
	return round_up(bytes, HUGEPAGE_SIZE);
}

void *msr_hugepage_alloc(size_t bytes)
{
	size_t align = bytes < MSR_HUGEPAGE_MIN ? 64 : HUGEPAGE_SIZE;
	size_t n = round_up(bytes, align);
	void *p = aligned_alloc(align, n ? n : align);

	if (p)
		msr_hugepage_advise(p, n);
	return p;
}

/* n bytes (whole huge pages) of address space at a 2 MiB boundary, not
 * yet usable (PROT_NONE), or NULL. */
static void *hugepage_reserve(size_t n)
{
	size_t over = n + HUGEPAGE_SIZE;
	uintptr_t m, a;
	void *r = mmap(NULL, over, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (r == MAP_FAILED)
		return NULL;
	m = (uintptr_t)r;
	a = (m + HUGEPAGE_SIZE - 1) & ~(uintptr_t)(HUGEPAGE_SIZE - 1);
	if (a > m)
		munmap(r, a - m);
	if (m + over > a + n)
		munmap((void *)(a + n), m + over - (a + n));
	return (void *)a;
}

/* n bytes (whole huge pages) at a 2 MiB boundary, usable and advised, not
 * yet touched; NULL when memory is short. */
static void *hugepage_map(size_t n)
{
	void *p = hugepage_reserve(n);

	if (!p)
		return NULL;
	if (mprotect(p, n, PROT_READ | PROT_WRITE) != 0) {
		munmap(p, n);
		return NULL;
	}
	msr_hugepage_advise(p, n);
	return p;
}

void *msr_hugepage_grow(void *old, size_t old_bytes, size_t new_bytes)
{
	size_t n = hugepage_round(new_bytes);
	void *p;

	if (new_bytes < MSR_HUGEPAGE_MIN) {
		/* realloc would align to 16 bytes only */
		p = aligned_alloc(64, new_bytes ? round_up(new_bytes, 64) : 64);
		if (p && old)
			memcpy(p, old,
			       old_bytes < new_bytes ? old_bytes : new_bytes);
		if (p)
			free(old);
		return p;
	}
	if (old && old_bytes >= MSR_HUGEPAGE_MIN) {
		size_t o = hugepage_round(old_bytes);

		if (n <= o)
			return old;
#ifdef MREMAP_FIXED
		p = hugepage_reserve(n);
		if (!p)
			return NULL;
		/* onto the reservation: the old pages move, its tail is new */
		if (mremap(old, o, n, MREMAP_MAYMOVE | MREMAP_FIXED, p) ==
		    MAP_FAILED) {
			munmap(p, n);
			return NULL;
		}
		msr_hugepage_advise(p, n);
#else
		/* no mremap: copy, as realloc would */
		p = hugepage_map(n);
		if (!p)
			return NULL;
		memcpy(p, old, o);
		munmap(old, o);
#endif
		return p;
	}
	p = hugepage_map(n);
	if (!p)
		return NULL;
	if (old)
		memcpy(p, old, old_bytes < new_bytes ? old_bytes : new_bytes);
	free(old);
	return p;
}

void *msr_hugepage_zalloc(size_t bytes)
{
	/* a fresh anonymous mapping reads as zeros */
	return bytes < MSR_HUGEPAGE_MIN ? calloc(1, bytes ? bytes : 1)
					: hugepage_map(hugepage_round(bytes));
}

void msr_hugepage_release(void *p, size_t bytes)
{
	if (!p)
		return;
	if (bytes < MSR_HUGEPAGE_MIN)
		free(p);
	else
		munmap(p, hugepage_round(bytes));
}
