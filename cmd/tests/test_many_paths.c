/*
 * test_many_paths.c - report and step-log paths and JUnit class names
 * derived from trace paths for `check` on several traces.
 */
#include "many-paths-internal.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static void expect_report(const char *dir, const char *trace, unsigned depth,
			  const char *want)
{
	char *got = mpath_report(dir, trace, depth);

	cr_assert_not_null(got);
	cr_expect_str_eq(got, want, "%s at depth %u", trace, depth);
	free(got);
}

Test(many_paths, depth_counts_components_but_dots)
{
	cr_expect_eq(mpath_depth("nas.trace.zst"), 1);
	cr_expect_eq(mpath_depth("seed7/nas.trace.zst"), 2);
	cr_expect_eq(mpath_depth("/farm/run/seed7/nas.trace.zst"), 4);
	cr_expect_eq(mpath_depth("./a//./b/nas.trace"), 3);
	cr_expect_eq(mpath_depth("../x/nas.trace"), 2, "a '..' ends the count");
	cr_expect_eq(mpath_depth("a/../x/nas.trace"), 2);
	cr_expect_eq(mpath_depth("x/.."), 0);
	cr_expect_eq(mpath_depth("/"), 0);
	cr_expect_eq(mpath_depth(""), 0);
}

Test(many_paths, depth_is_bounded)
{
	char path[2 * 100 + 8] = "";

	for (int i = 0; i < 100; i++)
		strcat(path, "d/");
	strcat(path, "t.zst");
	cr_expect_eq(mpath_depth(path), MPATH_DEPTH_MAX);
	expect_report("o", "a/b/c/t.zst", MPATH_DEPTH_MAX, "o/a/b/c/t.yaml");
}

Test(many_paths, report_mirrors_trailing_components)
{
	expect_report("out", "run7/nas.trace.zst", 1, "out/nas.trace.yaml");
	expect_report("out", "run7/nas.trace.zst", 2, "out/run7/nas.trace.yaml");
	expect_report("out", "/farm/run7/nas.trace", 2, "out/run7/nas.trace.yaml");
	expect_report("out", "./a/./b//nas.trace.zst", 3, "out/a/b/nas.trace.yaml");
	/* only the basename loses its .zst, and only when something precedes it */
	expect_report("out", "a.zst/b.zst", 2, "out/a.zst/b.yaml");
	expect_report("out", ".zst", 1, "out/.zst.yaml");
}

Test(many_paths, report_of_odd_paths_stays_in_dir)
{
	expect_report("out", "x/..", 1, "out/...yaml");
	expect_report("out", "/", 1, "out/.yaml");
	expect_report("o/", "t", 1, "o//t.yaml");
	/* a deeper ask stops at the "..", which is never mirrored */
	expect_report("out", "../x/nas.trace", 5, "out/x/nas.trace.yaml");
	expect_report("out", "a/../x/nas.trace", 3, "out/x/nas.trace.yaml");
	expect_report("out", "x/..", 4, "out/...yaml");
}

static void expect_class(const char *trace, unsigned depth, const char *want)
{
	char *got = mpath_class(trace, depth);

	cr_assert_not_null(got);
	cr_expect_str_eq(got, want, "%s at depth %u", trace, depth);
	free(got);
}

Test(many_paths, class_names_mirror_trailing_components)
{
	/* depth 1: what a single-trace check names the class */
	expect_class("run7/nas.trace.zst", 1, "msync-replay.nas_trace_zst");
	expect_class("run7/nas.trace.zst", 2, "msync-replay.run7.nas_trace_zst");
	expect_class("/farm/v1.2/./run7//t", 3, "msync-replay.v1_2.run7.t");
	expect_class("/", 1, "msync-replay.trace");
	expect_class("../x/t.zst", 5, "msync-replay.x.t_zst");
	expect_class("x/..", 3, "msync-replay.__");
}

Test(many_paths, steps_by_suffix)
{
	char *s = mpath_steps_suffix("run/nas.trace.zst", ".steps.zst");

	cr_expect_str_eq(s, "run/nas.steps.zst");
	free(s);
	s = mpath_steps_suffix("a.b/trace", ".log");
	cr_expect_str_eq(s, "a.b/trace.log", "dots of directories do not count");
	free(s);
	s = mpath_steps_suffix(".hidden.zst", ".log");
	cr_expect_str_eq(s, ".hidden.zst.log", "a leading dot is not a stem's end");
	free(s);
}

Test(many_paths, steps_beside)
{
	char *s = mpath_steps_beside("seed7/nas.trace.zst", "steps.log.zst");

	cr_expect_str_eq(s, "seed7/steps.log.zst");
	free(s);
	s = mpath_steps_beside("nas.trace.zst", "steps.log.zst");
	cr_expect_str_eq(s, "steps.log.zst");
	free(s);
	s = mpath_steps_beside("/abs/dir/t", "s");
	cr_expect_str_eq(s, "/abs/dir/s");
	free(s);
}
