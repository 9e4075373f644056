/*
 * test_report_waivers.c - unit tests of the collector's waivers, merging of
 * repeated fingerprints, the first violation by event index, and the
 * context collected after a violation.
 */
#include "report.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct msr_violation make_violation(enum msr_vkind kind, int strand,
					   uint64_t iseq, uint64_t pa,
					   uint64_t event)
{
	struct msr_violation v;

	memset(&v, 0, sizeof(v));
	v.kind = kind;
	v.strand = strand;
	v.core = strand >= 0 ? strand / 8 : -1;
	v.iseq = iseq;
	v.pa = pa;
	v.size = 8;
	v.event = event;
	snprintf(v.message, sizeof(v.message), "wrong");
	return v;
}

/* Reasons live in inline arrays: the collector copies them. */
static char reason_a[] = "known bug a", reason_b[] = "scratch range",
	    reason_c[] = "never matches";

static void waiver_config(struct msr_config *cfg, struct msr_waiver w[3])
{
	char fp[17];

	msr_config_default(cfg);
	memset(w, 0, 3 * sizeof(*w));
	msr_report_fingerprint(MSR_V_STORE_DATA, 2, 7, 0x100, fp);
	w[0].by_fingerprint = true;
	memcpy(w[0].fingerprint, fp, 17);
	w[0].reason = reason_a;
	w[0].strand = -1;
	w[0].line = 2;
	w[1].kind = MSR_V_LOAD_VALUE;
	w[1].pa_lo = 0x2000;
	w[1].pa_hi = 0x2fff;
	w[1].strand = 5;
	w[1].reason = reason_b;
	w[1].line = 4;
	w[2].by_fingerprint = true;
	memcpy(w[2].fingerprint, "0000000000000001", 17);
	w[2].reason = reason_c;
	w[2].strand = -1;
	w[2].line = 8;
	cfg->waivers = w;
	cfg->nwaivers = 3;
}

Test(report_waivers, by_fingerprint_and_by_kind_range_strand)
{
	struct msr_config cfg;
	struct msr_waiver w[3];
	struct msr_report *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_violation v;
	const char *reason;
	uint64_t count;

	waiver_config(&cfg, w);
	cr_assert_eq(msr_report_create(&cfg, NULL, &r, &err), MSR_OK);
	v = make_violation(MSR_V_STORE_DATA, 2, 7, 0x100, 1);
	cr_assert_not(msr_report_add(r, &v), "waived by fingerprint");
	v = make_violation(MSR_V_STORE_DATA, 2, 8, 0x100, 2);
	cr_assert(msr_report_add(r, &v), "other iseq: other fingerprint");
	v = make_violation(MSR_V_LOAD_VALUE, 5, 1, 0x2ffc, 3);
	cr_assert_not(msr_report_add(r, &v), "overlaps the range on strand 5");
	v = make_violation(MSR_V_LOAD_VALUE, 5, 2, 0x1ff8, 4);
	cr_assert(msr_report_add(r, &v), "below the range");
	v = make_violation(MSR_V_LOAD_VALUE, 4, 3, 0x2000, 5);
	cr_assert(msr_report_add(r, &v), "other strand");
	v = make_violation(MSR_V_MEM_CHECK, 5, 4, 0x2000, 6);
	cr_assert(msr_report_add(r, &v), "other kind");
	cr_assert_eq(msr_report_shown(r), 4);
	cr_assert_eq(msr_report_waived(r), 2);
	cr_assert_eq(msr_report_waived_kept(r), 2);
	cr_assert_eq(msr_report_get_waived(r, 0, &count, &reason)->iseq, 7);
	cr_assert_str_eq(reason, "known bug a");
	cr_assert_eq(count, 1);
	cr_assert_eq(msr_report_get_waived(r, 1, NULL, &reason)->pa, 0x2ffc);
	cr_assert_str_eq(reason, "scratch range");
	cr_assert_eq(msr_report_waiver_uses(r, 0), 1);
	cr_assert_eq(msr_report_waiver_uses(r, 1), 1);
	cr_assert_eq(msr_report_waiver_uses(r, 2), 0, "unused");
	cr_assert_eq(msr_report_kind_count(r, MSR_V_LOAD_VALUE), 2,
		     "per-kind counts exclude waived ones");
	msr_report_destroy(r);
}

Test(report_waivers, repeats_merge_and_first_is_lowest_event)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_violation v;
	size_t idx;

	msr_config_default(&cfg);
	cr_assert_eq(msr_report_create(&cfg, NULL, &r, &err), MSR_OK);
	cr_assert_null(msr_report_first(r, &idx));
	v = make_violation(MSR_V_LEFTOVER, 1, 3, 0x40, 90);
	msr_report_add(r, &v);
	v = make_violation(MSR_V_TSO_MEMBAR, 2, 4, 0x80, 50);
	msr_report_add(r, &v);
	for (uint64_t ev = 60; ev < 64; ev++) {
		v = make_violation(MSR_V_LEFTOVER, 1, 3, 0x40, ev);
		cr_assert(msr_report_add(r, &v));
	}
	cr_assert_eq(msr_report_shown(r), 6);
	cr_assert_eq(msr_report_kept(r), 2);
	cr_assert_eq(msr_report_get_count(r, 0), 5);
	cr_assert_eq(msr_report_get_last_event(r, 0), 90, "the latest event");
	cr_assert_eq(msr_report_get(r, 0)->event, 90, "the first occurrence is kept");
	cr_assert_eq(msr_report_get_count(r, 1), 1);
	cr_assert_eq(msr_report_first(r, &idx)->event, 50);
	cr_assert_eq(idx, 1);
	/* a repeat at a lower event than anything yet becomes the first */
	v = make_violation(MSR_V_LEFTOVER, 1, 3, 0x40, 7);
	msr_report_add(r, &v);
	cr_assert_eq(msr_report_first(r, &idx)->event, 7);
	cr_assert_eq(idx, 0);
	msr_report_destroy(r);
}

Test(report_waivers, many_distinct_fingerprints)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_error err = MSR_ERROR_INIT;

	msr_config_default(&cfg);
	cfg.max_violations = 300;
	cr_assert_eq(msr_report_create(&cfg, NULL, &r, &err), MSR_OK);
	for (int round = 0; round < 2; round++)
		for (uint64_t i = 0; i < 500; i++) {
			struct msr_violation v = make_violation(MSR_V_LOAD_VALUE, 0, i,
								0x1000, i);

			msr_report_add(r, &v);
		}
	cr_assert_eq(msr_report_shown(r), 1000);
	cr_assert_eq(msr_report_kept(r), 300);
	for (size_t i = 0; i < 300; i++) {
		cr_assert_eq(msr_report_get(r, i)->iseq, i);
		cr_assert_eq(msr_report_get_count(r, i), 2);
	}
	msr_report_destroy(r);
}

static void feed(struct msr_history *h, struct msr_report *r, uint64_t index,
		 unsigned tnum, uint64_t pa)
{
	struct msr_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.index = index;
	ev.offset = 10 * index;
	ev.code = MSR_LD_DATA;
	ev.tnum = (uint8_t)tnum;
	ev.pa = pa;
	msr_history_add(h, &ev);
	msr_report_observe(r, &ev);
}

Test(report_waivers, context_after_is_collected_as_events_arrive)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_history *h;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_report_summary sum;
	const char *const *lines;
	struct msr_violation v;

	msr_config_default(&cfg);
	cfg.context_len = 1;
	cfg.context_after = 2;
	cr_assert_eq(msr_history_create(64, &h, &err), MSR_OK);
	cr_assert_eq(msr_report_create(&cfg, h, &r, &err), MSR_OK);
	feed(h, r, 0, 3, 0x2000);
	v = make_violation(MSR_V_LOAD_VALUE, 3, 1, 0x2000, 0);
	msr_report_add(r, &v);
	v = make_violation(MSR_V_LOAD_VALUE, 7, 1, 0x7000, 0);
	msr_report_add(r, &v);
	feed(h, r, 1, 9, 0x9000);   /* touches neither */
	feed(h, r, 2, 9, 0x2004);   /* same block as V1 */
	cr_assert_eq(msr_report_get_context_after(r, 0, &lines), 0,
		     "still pending");
	feed(h, r, 3, 3, 0x5000);   /* same strand as V1 */
	feed(h, r, 4, 3, 0x2000);   /* after V1 is complete */
	cr_assert_eq(msr_report_get_context_after(r, 0, &lines), 2);
	cr_assert(!strncmp(lines[0], "event=2 offset=20 ", 18), "%s", lines[0]);
	cr_assert(!strncmp(lines[1], "event=3 offset=30 ", 18), "%s", lines[1]);
	cr_assert_eq(msr_report_get_context(r, 0, &lines), 1);
	cr_assert(!strncmp(lines[0], "event=0 ", 8), "%s", lines[0]);
	/* V2 saw nothing yet; the end of the run completes it as it is */
	feed(h, r, 5, 7, 0x1000);
	memset(&sum, 0, sizeof(sum));
	msr_report_set_summary(r, &sum);
	cr_assert_eq(msr_report_get_context_after(r, 1, &lines), 1);
	cr_assert(!strncmp(lines[0], "event=5 ", 8), "%s", lines[0]);
	msr_report_destroy(r);
	msr_history_destroy(h);
}

Test(report_waivers, late_violation_takes_after_context_from_history)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_history *h;
	struct msr_error err = MSR_ERROR_INIT;
	const char *const *lines;
	struct msr_violation v;

	msr_config_default(&cfg);
	cfg.context_after = 3;
	cr_assert_eq(msr_history_create(64, &h, &err), MSR_OK);
	cr_assert_eq(msr_report_create(&cfg, h, &r, &err), MSR_OK);
	for (uint64_t i = 0; i < 10; i++)
		feed(h, r, i, i % 2 ? 1 : 2, 0x3000 + 0x100 * i);
	/* found now (like a TSO violation) about event 4 of strand 2 */
	v = make_violation(MSR_V_TSO_VALUE, 2, 1, 0x3400, 4);
	msr_report_add(r, &v);
	/* events 6 and 8 are in the history; the third arrives later */
	cr_assert_eq(msr_report_get_context_after(r, 0, &lines), 0);
	feed(h, r, 10, 1, 0x3400);
	cr_assert_eq(msr_report_get_context_after(r, 0, &lines), 3);
	cr_assert(!strncmp(lines[0], "event=6 ", 8), "%s", lines[0]);
	cr_assert(!strncmp(lines[1], "event=8 ", 8), "%s", lines[1]);
	cr_assert(!strncmp(lines[2], "event=10 ", 9), "%s", lines[2]);
	msr_report_destroy(r);
	msr_history_destroy(h);
}

Test(report_waivers, pending_after_contexts_are_bounded)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_history *h;
	struct msr_error err = MSR_ERROR_INIT;
	const char *const *lines;

	msr_config_default(&cfg);
	cfg.context_after = 1;
	cr_assert_eq(msr_history_create(256, &h, &err), MSR_OK);
	cr_assert_eq(msr_report_create(&cfg, h, &r, &err), MSR_OK);
	feed(h, r, 0, 0, 0x100);
	/* 100 violations waiting at once: only the newest 64 keep watching */
	for (uint64_t i = 0; i < 100; i++) {
		struct msr_violation v = make_violation(MSR_V_LOAD_VALUE, 0, i + 1,
							0x100, 0);

		msr_report_add(r, &v);
	}
	feed(h, r, 1, 0, 0x100);
	cr_assert_eq(msr_report_kept(r), 100);
	cr_assert_eq(msr_report_get_context_after(r, 0, &lines), 0, "cut short");
	cr_assert_eq(msr_report_get_context_after(r, 35, &lines), 0, "cut short");
	cr_assert_eq(msr_report_get_context_after(r, 36, &lines), 1);
	cr_assert_eq(msr_report_get_context_after(r, 99, &lines), 1);
	cr_assert(!strncmp(lines[0], "event=1 ", 8), "%s", lines[0]);
	msr_report_destroy(r);
	msr_history_destroy(h);
}

Test(report_waivers, late_violation_reaches_back_past_one_batch)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_history *h;
	struct msr_error err = MSR_ERROR_INIT;
	const char *const *lines;
	struct msr_violation v;

	msr_config_default(&cfg);
	cfg.context_after = 4;
	cr_assert_eq(msr_history_create(1024, &h, &err), MSR_OK);
	cr_assert_eq(msr_report_create(&cfg, h, &r, &err), MSR_OK);
	for (uint64_t i = 0; i < 300; i++)
		feed(h, r, i, 6, 0x4000);
	/* about event 100, found 200 events of the same strand later */
	v = make_violation(MSR_V_TSO_LOAD_ORDER, 6, 1, 0x4000, 100);
	msr_report_add(r, &v);
	cr_assert_eq(msr_report_get_context_after(r, 0, &lines), 4);
	for (unsigned i = 0; i < 4; i++) {
		char want[24];

		snprintf(want, sizeof(want), "event=%u ", 101 + i);
		cr_assert(!strncmp(lines[i], want, strlen(want)), "%s", lines[i]);
	}
	/* across a batch border: two from one batch, two from the next */
	v = make_violation(MSR_V_TSO_LOAD_ORDER, 6, 3, 0x4000, 233);
	msr_report_add(r, &v);
	cr_assert_eq(msr_report_get_context_after(r, 1, &lines), 4);
	cr_assert(!strncmp(lines[0], "event=234 ", 10), "%s", lines[0]);
	cr_assert(!strncmp(lines[3], "event=237 ", 10), "%s", lines[3]);
	/* right at a batch border: the first 64 after are exactly one batch */
	v = make_violation(MSR_V_TSO_LOAD_ORDER, 6, 2, 0x4000, 235);
	cfg.context_after = 64;
	msr_report_destroy(r);
	cr_assert_eq(msr_report_create(&cfg, h, &r, &err), MSR_OK);
	msr_report_add(r, &v);
	cr_assert_eq(msr_report_get_context_after(r, 0, &lines), 64);
	cr_assert(!strncmp(lines[0], "event=236 ", 10), "%s", lines[0]);
	cr_assert(!strncmp(lines[63], "event=299 ", 10), "%s", lines[63]);
	msr_report_destroy(r);
	msr_history_destroy(h);
}
