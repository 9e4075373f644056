/*
 * test_mem_guard.c - the memory limit of the replaying commands: cgroup
 * limits found on the way up from the process's cgroup (v2 and v1), the
 * resident-size check, and the automatic limit held together by the
 * replays on one board (in one process and across a fork).
 */
#include "mem-guard-internal.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

Test(mguard, automatic_limit)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	cr_assert_gt(mguard_auto(), 0);
	cr_assert_leq(mguard_auto(), (uint64_t)pages * (uint64_t)psize / 4 * 3,
		      "at most 3/4 of the machine's memory");
}

Test(mguard, over_the_limit)
{
	struct mguard g;
	uint64_t used;

	mguard_init(&g, 1, NULL, 0, "--max-memory");
	cr_assert_eq(g.limit, (uint64_t)1 << 20);
	cr_assert(mguard_over(&g, &used), "any process holds more than 1 MiB");
	cr_assert_gt(used, (uint64_t)1 << 20);
	mguard_close(&g);
	mguard_init(&g, (uint64_t)1 << 32, NULL, 0, "--max-memory");
	cr_assert_not(mguard_over(&g, &used));
	cr_assert_gt(used, 0, "the resident size was read");
	mguard_close(&g);
	mguard_init(&g, 0, NULL, 0, "--max-memory");
	cr_assert_eq(g.limit, mguard_auto(), "0 MiB: the automatic limit");
	cr_assert_null(g.knob);
	mguard_close(&g);
}

/* This process's resident size, as a guard reads it. */
static uint64_t resident(void)
{
	struct mguard g;
	uint64_t used;

	mguard_init(&g, 0, NULL, 0, "--max-memory");
	mguard_over(&g, &used);
	mguard_close(&g);
	cr_assert_gt(used, 0);
	return used;
}

Test(mguard, replays_on_a_board_hold_the_limit_together)
{
	struct mguard_board *b = mguard_board_create(2);
	struct mguard a, c;
	uint64_t r = resident(), used;

	cr_assert_not_null(b);
	cr_assert_eq(b->seats, 2);
	mguard_init(&a, 0, b, 0, "--max-memory");
	mguard_init(&c, 0, b, 1, "--max-memory");
	cr_assert_eq(a.board, b);
	/* both read this process's size r: alone under 1.5 r, together not */
	a.limit = c.limit = r / 2 * 3;
	cr_assert_not(mguard_over(&c, &used), "seat 0 still empty: %llu of %llu",
		      (unsigned long long)used, (unsigned long long)c.limit);
	cr_assert_eq(atomic_load(&b->used[1]), used, "the size is published");
	cr_assert(mguard_over(&a, &used), "the sum of both seats is over");
	cr_assert_geq(a.others, r / 4 * 3);
	mguard_board_clear(b, 1);
	cr_assert_not(mguard_over(&a, &used), "the other replay ended");
	a.limit = c.limit = r / 2 * 5;
	cr_assert_not(mguard_over(&c, &used));
	cr_assert_not(mguard_over(&a, &used), "room for both under 2.5 r");
	mguard_close(&c);
	cr_assert_eq(atomic_load(&b->used[1]), 0, "closing empties the seat");
	mguard_close(&a);
	mguard_board_destroy(b);
}

Test(mguard, only_replays_above_an_even_share_stop)
{
	struct mguard_board *b = mguard_board_create(3);
	struct mguard a;
	uint64_t r = resident(), used;

	cr_assert_not_null(b);
	mguard_init(&a, 0, b, 0, "--max-memory");
	a.limit = 4 * r; /* an even share is 4/3 r */
	atomic_store(&b->used[2], 100 * r);
	cr_assert_not(mguard_over(&a, &used),
		      "the sum is over, but the replay in seat 2 made it so");
	a.limit = r / 2 * 3;
	cr_assert(mguard_over(&a, &used), "over an even share of 1.5 r / 3");
	a.limit = r / 2;
	mguard_board_clear(b, 2);
	cr_assert(mguard_over(&a, &used), "over the whole limit alone");
	mguard_close(&a);
	mguard_board_destroy(b);
}

Test(mguard, an_explicit_limit_is_each_replays_own)
{
	struct mguard_board *b = mguard_board_create(2);
	struct mguard a;
	uint64_t used;

	cr_assert_not_null(b);
	mguard_init(&a, (uint64_t)1 << 32, b, 1, "--max-memory");
	cr_assert_null(a.board);
	atomic_store(&b->used[0], UINT64_MAX / 4);
	cr_assert_not(mguard_over(&a, &used));
	cr_assert_eq(atomic_load(&b->used[1]), 0, "nothing published");
	mguard_close(&a);
	cr_assert_null(mguard_board_create(0));
	mguard_board_destroy(b);
}

Test(mguard, the_board_is_shared_with_forked_replays)
{
	struct mguard_board *b = mguard_board_create(2);
	int status;

	cr_assert_not_null(b);
	for (int closes = 0; closes < 2; closes++) {
		pid_t pid = fork();

		cr_assert_geq(pid, 0);
		if (!pid) {
			struct mguard g;
			uint64_t used;

			mguard_init(&g, 0, b, 1, "--max-memory");
			mguard_over(&g, &used);
			if (closes)
				mguard_close(&g);
			_exit(used ? 0 : 1);
		}
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		if (closes)
			cr_assert_eq(atomic_load(&b->used[1]), 0,
				     "a replay that closes its guard empties its seat");
		else
			cr_assert_gt(atomic_load(&b->used[1]), (uint64_t)1 << 20,
				     "the child's size reached the parent");
		mguard_board_clear(b, 1);
		cr_assert_eq(atomic_load(&b->used[1]), 0);
	}
	mguard_board_destroy(b);
}

Test(mguard, the_error_names_the_limit_and_where_it_comes_from)
{
	struct mguard g;
	struct msr_error err = MSR_ERROR_INIT;
	struct mguard_board *b = mguard_board_create(2);
	char text[768];

	mguard_init(&g, 64, NULL, 0, "limits.max_memory");
	cr_assert_eq(mguard_error(&g, &err, "slice", "t.zst", 16384, (uint64_t)70 << 20),
		     MSR_E_NOMEM);
	msr_error_format(&err, text, sizeof(text));
	cr_assert(strstr(text, "t.zst: memory limit reached after 16384 events: 70 MiB "
			       "resident, the limit is 64 MiB (limits.max_memory)"), "%s", text);
	mguard_close(&g);
	msr_error_clear(&err);
	mguard_init(&g, 0, NULL, 0, "limits.max_memory");
	mguard_error(&g, &err, "check", "t.zst", 32768, g.limit + 1);
	msr_error_format(&err, text, sizeof(text));
	cr_assert(strstr(text, "(automatic: 3/4 of the machine's or the cgroup's memory); "),
		  "%s", text);
	mguard_close(&g);
	msr_error_clear(&err);
	/* over only together with the other replay */
	cr_assert_not_null(b);
	mguard_init(&g, 0, b, 0, "limits.max_memory");
	g.limit = (uint64_t)100 << 20;
	atomic_store(&b->used[1], (uint64_t)60 << 20);
	g.others = (uint64_t)60 << 20;
	mguard_error(&g, &err, "check", "t.zst", 49152, (uint64_t)70 << 20);
	msr_error_format(&err, text, sizeof(text));
	cr_assert(strstr(text, "t.zst: memory limit reached after 49152 events: 70 MiB "
			       "resident, 130 MiB with the replays running beside it, over "
			       "the automatic limit of 100 MiB they share; run fewer at "
			       "once (-j) or give each its own limit (--max-memory)"),
		  "%s", text);
	mguard_close(&g);
	msr_error_clear(&err);
	mguard_board_destroy(b);
}
