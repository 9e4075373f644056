/*
 * test_mem_guard.c - the memory limit of the replaying commands: cgroup
 * limits found on the way up from the process's cgroup (v2 and v1), the
 * automatic limit shared among replays, and the resident-size check.
 */
#include "mem-guard-internal.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static void dir(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	cr_assert_eq(mkdir(path, 0700), 0, "%s", path);
}

static void make_root(void)
{
	strcpy(root, "/tmp/msr-mguard-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void remove_root(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(mguard, .init = make_root, .fini = remove_root);

Test(mguard, cgroup_values)
{
	cr_assert_eq(mguard_cgroup_value("1073741824\n"), (uint64_t)1 << 30);
	cr_assert_eq(mguard_cgroup_value("4096"), 4096);
	cr_assert_eq(mguard_cgroup_value("max\n"), UINT64_MAX, "v2: no limit");
	cr_assert_eq(mguard_cgroup_value("9223372036854771712\n"), UINT64_MAX,
		     "v1: the page-rounded LLONG_MAX is no limit");
	cr_assert_eq(mguard_cgroup_value("12k\n"), UINT64_MAX, "not understood");
	cr_assert_eq(mguard_cgroup_value(""), UINT64_MAX);
}

Test(mguard, v2_smallest_limit_on_the_way_up)
{
	dir("job");
	dir("job/step");
	dir("job/step/task");
	put("job/memory.max", "2147483648\n");
	put("job/step/memory.max", "max\n");
	put("job/step/task/memory.max", "8589934592\n");
	cr_assert_eq(mguard_cgroup_limit("0::/job/step/task\n", root), (uint64_t)2 << 30,
		     "the job's limit binds its tasks");
	cr_assert_eq(mguard_cgroup_limit("0::/job/step\n", root), (uint64_t)2 << 30);
	cr_assert_eq(mguard_cgroup_limit("0::/\n", root), UINT64_MAX,
		     "the root has no memory.max");
	cr_assert_eq(mguard_cgroup_limit("0::/no/such\n", root), UINT64_MAX);
	cr_assert_eq(mguard_cgroup_limit("", root), UINT64_MAX);
	cr_assert_eq(mguard_cgroup_limit("garbage without colons", root), UINT64_MAX);
}

Test(mguard, v1_memory_controller)
{
	dir("memory");
	dir("memory/slurm");
	dir("memory/slurm/job_7");
	put("memory/slurm/job_7/memory.limit_in_bytes", "1073741824\n");
	put("memory/memory.limit_in_bytes", "9223372036854771712\n");
	cr_assert_eq(mguard_cgroup_limit("12:cpuset:/slurm/job_7\n"
					 "11:memory:/slurm/job_7\n"
					 "1:name=systemd:/user.slice\n", root),
		     (uint64_t)1 << 30);
	cr_assert_eq(mguard_cgroup_limit("4:cpu,cpuacct:/slurm/job_7\n", root), UINT64_MAX,
		     "only the memory controller's hierarchy counts");
	cr_assert_eq(mguard_cgroup_limit("3:memory,hugetlb:/slurm/job_7\n", root),
		     (uint64_t)1 << 30, "memory among several controllers");
}

Test(mguard, automatic_limit_is_shared)
{
	uint64_t one = mguard_auto(1), four = mguard_auto(4);
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	cr_assert_gt(one, 0);
	cr_assert_leq(one, (uint64_t)pages * (uint64_t)psize / 4 * 3,
		      "at most 3/4 of the machine's memory");
	cr_assert_eq(four, one / 4);
	cr_assert_eq(mguard_auto(0), one, "0 replays count as one");
}

Test(mguard, over_the_limit)
{
	struct mguard g;
	uint64_t used;

	mguard_init(&g, 1, 1, "--max-memory");
	cr_assert_eq(g.limit, (uint64_t)1 << 20);
	cr_assert(mguard_over(&g, &used), "any process holds more than 1 MiB");
	cr_assert_gt(used, (uint64_t)1 << 20);
	mguard_close(&g);
	mguard_init(&g, (uint64_t)1 << 32, 1, "--max-memory");
	cr_assert_not(mguard_over(&g, &used));
	cr_assert_gt(used, 0, "the resident size was read");
	mguard_close(&g);
	mguard_init(&g, 0, 2, "--max-memory");
	cr_assert_eq(g.limit, mguard_auto(2), "0 MiB: the automatic limit");
	mguard_close(&g);
}

Test(mguard, the_error_names_the_limit_and_where_it_comes_from)
{
	struct mguard g;
	struct msr_error err = MSR_ERROR_INIT;
	char text[512];

	mguard_init(&g, 64, 1, "limits.max_memory");
	cr_assert_eq(mguard_error(&g, &err, "slice", "t.zst", 16384, (uint64_t)70 << 20),
		     MSR_E_NOMEM);
	msr_error_format(&err, text, sizeof(text));
	cr_assert(strstr(text, "t.zst: memory limit reached after 16384 events: 70 MiB "
			       "resident, the limit is 64 MiB (limits.max_memory)"), "%s", text);
	mguard_close(&g);
	msr_error_clear(&err);
	mguard_init(&g, 0, 3, "limits.max_memory");
	mguard_error(&g, &err, "check", "t.zst", 32768, g.limit + 1);
	msr_error_format(&err, text, sizeof(text));
	cr_assert(strstr(text, "(automatic: 3/4 of the machine's or the cgroup's memory, "
			       "shared by the replays running at once)"), "%s", text);
	mguard_close(&g);
	msr_error_clear(&err);
}
