/*
 * test_thp.c - --no-huge-pages: the process's switch is set, a child
 * forked after it (check -j) inherits it, and memory advised for huge
 * pages then gets none (where the system would have given some).
 * Criterion runs each test in a process of its own, so the switch set by
 * one test is never seen by another.
 */
#include "thp-internal.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define HUGE ((size_t)2 << 20)
#define REGION (4 * HUGE)

/* Turn them off, or skip where this kernel has no such switch. */
static void disable_or_skip(void)
{
	int rc = thp_disable();

	if (rc == EINVAL || rc == ENOSYS)
		cr_skip_test("no PR_SET_THP_DISABLE here: %s", strerror(rc));
	cr_assert_eq(rc, 0, "thp_disable: %s", strerror(rc));
}

/* A 2 MiB-aligned region of REGION bytes, advised for huge pages and
 * written to (the test process ends without unmapping it). */
static unsigned char *advised_region(void)
{
	unsigned char *m = mmap(NULL, REGION + HUGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *p;

	cr_assert_neq(m, MAP_FAILED);
	p = (unsigned char *)(((uintptr_t)m + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
#ifdef MADV_HUGEPAGE
	(void)madvise(p, REGION, MADV_HUGEPAGE); /* fails where THP is absent */
#endif
	memset(p, 0x5a, REGION);
	return p;
}

/* AnonHugePages of the mapping holding p (/proc/self/smaps), in KiB;
 * -1 when it cannot be read. */
static long huge_kib(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		/* a mapping's first line: "lo-hi perms ..." */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kib) == 1)
			break;
	}
	fclose(f);
	return kib;
}

Test(thp, disable_sets_the_process_switch)
{
	if (prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1)
		cr_skip_test("huge pages already off for this process (inherited)");
	disable_or_skip();
	cr_assert_eq(prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0), 1);
}

Test(thp, a_child_forked_after_inherits_it)
{
	pid_t pid;
	int status;

	disable_or_skip();
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1 ? 0 : 1);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the forked child has huge pages allowed again");
}

Test(thp, advised_memory_gets_no_huge_pages_after_it)
{
	unsigned char *before = advised_region();
	long kib_before = huge_kib(before), kib_after;
	unsigned char *after;

	disable_or_skip();
	after = advised_region();
	kib_after = huge_kib(after);
	cr_assert_geq(kib_after, 0, "no AnonHugePages line for the region");
	cr_assert_eq(kib_after, 0, "%ld KiB of huge pages after the switch",
		     kib_after);
	if (kib_before <= 0)
		cr_log_info("this system gave no huge pages before the switch "
			    "either (%ld KiB): the check above shows nothing here",
			    kib_before);
}
