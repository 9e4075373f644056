/*
 * test_engine_misc.c - event history context, violation-kind names, the
 * default configuration and initial-image loading errors.
 */
#include "engine-test.h"

static struct msr_event hev(uint64_t index, unsigned code, unsigned tnum,
			    uint64_t pa)
{
	struct msr_event ev = {0};

	ev.index = index;
	ev.code = (uint16_t)code;
	ev.tnum = (uint8_t)tnum;
	ev.pa = pa;
	return ev;
}

Test(history, context_merges_strand_and_block)
{
	struct msr_history *h;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event out[16];
	size_t n;

	cr_assert_eq(msr_history_create(64, &h, &err), MSR_OK);
	msr_history_add(h, &(struct msr_event){0}); /* index 0: QUIT-like */
	{
		struct msr_event e1 = hev(1, MSR_ST_ISSUE, 3, 0x1000);
		struct msr_event e2 = hev(2, MSR_LD_ISSUE, 4, 0x1004);
		struct msr_event e3 = hev(3, MSR_SSTEP, 3, 0);
		struct msr_event e4 = hev(4, MSR_EVICT, 0, 0x2000);
		struct msr_event e5 = hev(5, MSR_ST_COMMIT, 3, 0x1000);
		struct msr_event e6 = hev(6, MSR_LD_DATA, 4, 0x1000);

		msr_history_add(h, &e1);
		msr_history_add(h, &e2);
		msr_history_add(h, &e3);
		msr_history_add(h, &e4);
		msr_history_add(h, &e5);
		msr_history_add(h, &e6);
	}
	n = msr_history_context(h, 3, 0x1000, 6, 16, out);
	cr_assert_eq(n, 5);
	cr_assert_eq(out[0].index, 1);
	cr_assert_eq(out[1].index, 2);
	cr_assert_eq(out[2].index, 3);
	cr_assert_eq(out[3].index, 5);
	cr_assert_eq(out[4].index, 6);
	n = msr_history_context(h, 3, UINT64_MAX, 4, 16, out);
	cr_assert_eq(n, 2);
	cr_assert_eq(out[1].index, 3);
	n = msr_history_context(h, -1, 0x1000, 6, 2, out);
	cr_assert_eq(n, 2);
	cr_assert_eq(out[0].index, 5);
	cr_assert_eq(out[1].index, 6);
	msr_history_destroy(h);
}

Test(history, ring_forgets_old_events)
{
	struct msr_history *h;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event out[64];
	size_t n;

	cr_assert_eq(msr_history_create(16, &h, &err), MSR_OK);
	for (uint64_t i = 0; i < 1000; i++) {
		struct msr_event ev = hev(i, MSR_LD_ISSUE, (unsigned)(i % 2),
					  0x1000 + 8 * (i % 3));

		msr_history_add(h, &ev);
	}
	n = msr_history_context(h, 0, UINT64_MAX, 999, 64, out);
	cr_assert_eq(n, 8); /* the even ones among the last 16 */
	cr_assert_eq(out[7].index, 998);
	cr_assert_eq(out[0].index, 984);
	n = msr_history_context(h, -1, 0x1000, 999, 64, out);
	cr_assert_eq(out[n - 1].index, 999);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(out[i].pa, 0x1000);
	msr_history_destroy(h);
}

Test(names, vkind_roundtrip)
{
	for (unsigned k = 0; k < MSR_V_COUNT; k++)
		cr_assert_eq(msr_vkind_by_name(msr_vkind_name((enum msr_vkind)k)),
			     k);
	cr_assert_str_eq(msr_vkind_name(MSR_V_L1_HIT_NOT_PRESENT),
			 "l1-hit-not-present");
	cr_assert_str_eq(msr_vkind_name(MSR_V_TSO_VALUE), "tso-value");
	cr_assert_eq(msr_vkind_by_name("nope"), MSR_V_COUNT);
	cr_assert_str_eq(msr_rel_name(MSR_REL_FR), "fr");
}

Test(config, t2_defaults)
{
	struct msr_config c;

	msr_config_default(&c);
	cr_assert_eq(c.cores, 8);
	cr_assert_eq(c.threads_per_core, 8);
	cr_assert_eq(c.l1_line, 16);
	cr_assert_eq(c.l2_line, 64);
	cr_assert_eq(c.l2_banks, 8);
	cr_assert_eq(c.context_len, 16);
	cr_assert_eq(msr_config_strands(&c), 64);
}

Test(image, bad_token_names_line_and_column)
{
	struct tctx *t = t_new(false);
	char path[] = "/tmp/msr-image-XXXXXX";
	struct msr_error err = MSR_ERROR_INIT;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	char where[300];

	fputs("@1000\n0000000000000001  00000000zz000002\n", f);
	fclose(f);
	cr_assert_eq(msr_engine_load_image(t->e, path, &err), MSR_E_FORMAT);
	snprintf(where, sizeof(where), "%s:2:19", path);
	cr_assert_str_eq(err.cause[0].where, where);
	cr_assert(strstr(err.cause[0].text, "bad hex digit"));
	unlink(path);
	cr_assert_eq(msr_engine_load_image(t->e, "/nonexistent/img", &err),
		     MSR_E_IO);
	t_free(t);
}

Test(image, words_advance_by_eight)
{
	struct tctx *t = t_new(true);

	t_image(t, "# comment\n@2000 1111111111111111 2222222222222222\n");
	step_ld(t, 0, 0x2008, 8, 0x2222222222222222ULL, true);
	ld_issue(t, 0, 0x2008, 3, MSR_IT_LOAD, 1);
	ld_data(t, 0, 0x2008, MSR_DSRC_L2, 2);
	sstep(t, 0);
	expect_clean(t);
	t_free(t);
}
