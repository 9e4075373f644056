/*
 * test_engine_misc.c - event history context, the engine's hash map,
 * violation-kind names, the default configuration and initial-image
 * loading errors.
 */
#include "engine-test.h"
#include "util-internal.h" /* the map under the engine's chains */
#include "hugepage.h"

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

/* Load i of `count`: index step * i, strand i % strands, block
 * 0x1000 + 8 * (i % blocks). */
static void add_loads(struct msr_history *h, uint64_t count, uint64_t step,
		      unsigned strands, unsigned blocks)
{
	for (uint64_t i = 0; i < count; i++) {
		struct msr_event ev = hev(step * i, MSR_LD_ISSUE,
					  (unsigned)(i % strands),
					  0x1000 + 8 * (i % blocks));

		msr_history_add(h, &ev);
	}
}

Test(history, ring_forgets_old_events)
{
	struct msr_history *h;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event out[64];
	size_t n;

	cr_assert_eq(msr_history_create(16, &h, &err), MSR_OK);
	add_loads(h, 1000, 1, 2, 3);
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

/* A query from the middle of the ring starts at its `at`, "after" reads
 * forward from it, and "touches" answers for exactly one held event. */
Test(history, query_mid_ring_and_touches)
{
	struct msr_history *h;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event out[64];
	size_t n;

	cr_assert_eq(msr_history_create(32, &h, &err), MSR_OK);
	add_loads(h, 100, 2, 4, 5);
	/* held: indices 136..198 (even); strand 1 has i = 69, 73, ... */
	n = msr_history_context(h, 1, UINT64_MAX, 161, 64, out);
	cr_assert_eq(n, 3); /* i = 69, 73, 77 */
	cr_assert_eq(out[0].index, 138);
	cr_assert_eq(out[2].index, 154);
	n = msr_history_context(h, -1, 0x1008, 152, 2, out); /* i % 5 == 1 */
	cr_assert_eq(n, 2);
	cr_assert_eq(out[0].index, 142);
	cr_assert_eq(out[1].index, 152);
	cr_assert_eq(msr_history_context(h, 0, 0x1000, 100, 64, out), 0);
	n = msr_history_after(h, 1, UINT64_MAX, 146, 2, out); /* after i = 73 */
	cr_assert_eq(n, 2);
	cr_assert_eq(out[0].index, 154);
	cr_assert_eq(out[1].index, 162);
	n = msr_history_after(h, 2, UINT64_MAX, 0, 64, out); /* i = 70, ..., 98 */
	cr_assert_eq(n, 8);
	cr_assert_eq(out[0].index, 140);
	cr_assert_eq(out[7].index, 196);
	cr_assert_eq(msr_history_after(h, 2, UINT64_MAX, 198, 64, out), 0);
	cr_assert(msr_history_touches(h, 3, UINT64_MAX, 198)); /* i = 99 */
	cr_assert(msr_history_touches(h, -1, 0x1024, 198)); /* block of 0x1020 */
	cr_assert_not(msr_history_touches(h, 2, 0x1000, 198));
	cr_assert_not(msr_history_touches(h, 3, UINT64_MAX, 199)); /* none */
	cr_assert(msr_history_touches(h, 0, UINT64_MAX, 136)); /* oldest held */
	cr_assert_not(msr_history_touches(h, 3, UINT64_MAX, 134)); /* gone */
	msr_history_destroy(h);
}

/* Shared: queries see only the shown events, as far back as the unshared
 * ring of the same size would, while the writer is up to `lag` ahead. */
Test(history, shared_answers_as_unshared_at_its_frontier)
{
	struct msr_history *h, *u;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event a[64], b[64], ev;
	uint64_t lag;
	size_t n;

	cr_assert_eq(msr_history_create(32, &h, &err), MSR_OK);
	cr_assert_eq(msr_history_create(32, &u, &err), MSR_OK);
	lag = msr_history_share(h, 100);
	cr_assert_geq(lag, 100);
	add_loads(h, 100, 2, 4, 5); /* 100 events: none shown yet */
	cr_assert_eq(msr_history_context(h, 1, UINT64_MAX, 1000, 64, a), 0);
	cr_assert_not(msr_history_get(h, 0, &ev));
	cr_assert_eq(msr_history_shown(h), 0);
	msr_history_show(h, 80); /* as if only the first 80 were added */
	cr_assert_eq(msr_history_shown(h), 80);
	add_loads(u, 80, 2, 4, 5);
	n = msr_history_context(h, 1, UINT64_MAX, 1000, 64, a);
	cr_assert_eq(n, msr_history_context(u, 1, UINT64_MAX, 1000, 64, b));
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(a[i].index, b[i].index);
	cr_assert_eq(a[n - 1].index, 2 * 77); /* the newest shown of strand 1 */
	n = msr_history_after(h, -1, 0x1000, 100, 64, a);
	cr_assert_eq(n, msr_history_after(u, -1, 0x1000, 100, 64, b));
	cr_assert_eq(a[n - 1].index, 2 * 75); /* not 2 * 95: not shown */
	cr_assert(msr_history_touches(h, 3, UINT64_MAX, 2 * 79));
	cr_assert_not(msr_history_touches(h, 0, UINT64_MAX, 2 * 80));
	cr_assert(msr_history_get(h, 79, &ev));
	cr_assert_eq(ev.index, 2 * 79);
	cr_assert_not(msr_history_get(h, 80, &ev)); /* added, not shown */
	cr_assert(msr_history_get(h, 48, &ev));      /* the oldest of 32 */
	cr_assert_not(msr_history_get(h, 47, &ev));  /* out of the window */
	msr_history_show(h, 70); /* never goes back */
	cr_assert_eq(msr_history_shown(h), 80);
	cr_assert(msr_history_get(h, 79, &ev));
	msr_history_destroy(h);
	msr_history_destroy(u);
}

/* Unshared again, adding shows each event at once. */
Test(history, unshare_before_use)
{
	struct msr_history *h;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event ev;

	cr_assert_eq(msr_history_create(16, &h, &err), MSR_OK);
	cr_assert_gt(msr_history_share(h, 1000), 0);
	cr_assert_eq(msr_history_share(h, 0), 0);
	add_loads(h, 40, 1, 2, 3);
	cr_assert_eq(msr_history_shown(h), 40);
	cr_assert(msr_history_get(h, 39, &ev));
	cr_assert_eq(ev.index, 39);
	cr_assert(msr_history_get(h, 24, &ev));
	cr_assert_not(msr_history_get(h, 23, &ev)); /* the window stays 16 */
	msr_history_destroy(h);
}

/* Payloads are kept beside the ring: a slot reused by a payload-less event
 * must not hand back the old payload, and every header field comes back. */
Test(history, context_returns_payloads_and_fields)
{
	struct msr_history *h;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event out[4];
	struct msr_event chk = hev(0, MSR_MEM_CHECK, 0, 0x3000);
	size_t n;

	cr_assert_eq(msr_history_create(16, &h, &err), MSR_OK);
	chk.nbytes = 64;
	for (unsigned i = 0; i < 64; i++)
		chk.bytes[i] = (uint8_t)(i + 1);
	chk.ts = 77;
	chk.offset = 1234;
	msr_history_add(h, &chk);
	n = msr_history_context(h, -1, 0x3000, 0, 4, out);
	cr_assert_eq(n, 1);
	cr_assert_eq(out[0].nbytes, 64);
	cr_assert_eq(out[0].ts, 77);
	cr_assert_eq(out[0].offset, 1234);
	cr_assert_eq(memcmp(out[0].bytes, chk.bytes, 64), 0);
	/* wrap the ring so slot 0 holds a new event without a payload */
	for (uint64_t i = 1; i <= 16; i++) {
		struct msr_event ev = hev(i, MSR_ST_ISSUE, 1, 0x3000);

		ev.data = 0x1122334455667788ULL + i;
		ev.bmask = 0xf0;
		msr_history_add(h, &ev);
	}
	n = msr_history_context(h, 1, 0x3000, 16, 1, out);
	cr_assert_eq(n, 1);
	cr_assert_eq(out[0].index, 16);
	cr_assert_eq(out[0].nbytes, 0);
	cr_assert_eq(out[0].data, 0x1122334455667788ULL + 16);
	cr_assert_eq(out[0].bmask, 0xf0);
	for (unsigned i = 0; i < 64; i++)
		cr_assert_eq(out[0].bytes[i], 0);
	msr_history_destroy(h);
}

/* The count at which a map of `cap` slots doubles: half full while it is
 * small, three quarters once it spans MSR_HUGEPAGE_MIN bytes. */
static size_t map_doubles_at(size_t cap)
{
	return cap * sizeof(struct msr_map_slot) >= MSR_HUGEPAGE_MIN ? cap / 4 * 3
								     : cap / 2;
}

/* A map grows past the huge-page size at three quarters full and keeps
 * every key; backward-shift deletion keeps the longer probe chains of that
 * density intact (half the keys deleted, the rest still found, the deleted
 * ones gone, then all put back). An omap, whose slot order reports see,
 * stays at half full at any size. */
Test(map, a_large_map_fills_to_three_quarters)
{
	const size_t n = (size_t)1 << 19; /* past two doublings at 3/4 */
	/* line-like keys of 8 cores: core << 48 | 16-byte line */
	uint64_t *keys = malloc(n * sizeof(*keys));
	size_t doublings = 0, dense = 0;
	struct msr_map m;
	struct msr_omap o;

	cr_assert_not_null(keys);
	for (size_t k = 0; k < n; k++)
		keys[k] = (uint64_t)(k % 8) << 48 | (0x10000000 + 16 * (k / 8));
	cr_assert_eq(msr_map_init(&m, 16), 0);
	for (size_t k = 0; k < n; k++) {
		size_t cap = m.cap;
		bool found;
		uint32_t *v = msr_map_upsert(&m, keys[k], &found);

		cr_assert(v && !found, "key %zu", k);
		*v = (uint32_t)k;
		if (m.cap != cap) {
			cr_assert_eq(m.cap, 2 * cap);
			cr_assert_eq(k, map_doubles_at(cap),
				     "a map of %zu slots doubled at %zu keys", cap, k);
			doublings++;
			dense += map_doubles_at(cap) != cap / 2;
		}
	}
	cr_assert_geq(dense, 2, "only %zu doublings at three quarters", dense);
	cr_assert_eq(m.count, n);
	for (size_t k = 0; k < n; k += 2) {
		uint32_t *v = msr_map_get(&m, keys[k]);

		cr_assert(v && *v == k, "key %zu before the deletions", k);
		msr_map_del_at(&m, v);
	}
	for (size_t k = 0; k < n; k++) {
		uint32_t *v = msr_map_get(&m, keys[k]);

		if (k % 2 == 0)
			cr_assert_null(v, "deleted key %zu still found", k);
		else
			cr_assert(v && *v == k, "key %zu lost by the deletions", k);
	}
	for (size_t k = 0; k < n; k += 2)
		cr_assert_eq(msr_map_put(&m, keys[k], (uint32_t)k), 0);
	for (size_t k = 0; k < n; k++) {
		uint32_t *v = msr_map_get(&m, keys[k]);

		cr_assert(v && *v == k, "key %zu after putting back", k);
	}
	cr_assert_eq(m.count, n);
	msr_map_release(&m);

	cr_assert_eq(msr_omap_init(&o, 16), 0);
	for (size_t k = 0; k < n / 2 + 1; k++)
		cr_assert_eq(msr_omap_put(&o, keys[k], (uint32_t)k), 0);
	cr_assert_eq(o.m.cap, 2 * n, "an omap of %zu keys has %zu slots",
		     n / 2 + 1, o.m.cap);
	msr_omap_release(&o);
	free(keys);
	cr_assert_gt(doublings, dense);
}

/* Random inserts, updates and deletes against a plain array, across
 * growth: msr_map through upsert/del_at, msr_omap through put/del_at. */
Test(map, upsert_and_delete_match_a_reference)
{
	for (int ordered = 0; ordered < 2; ordered++) {
		/* key 8*i -> value + 1, 0 = absent */
		static uint32_t ref[4096];
		struct msr_map m;
		struct msr_omap o;
		uint64_t x = 12345;

		memset(ref, 0, sizeof(ref));
		if (ordered)
			cr_assert_eq(msr_omap_init(&o, 16), 0);
		else
			cr_assert_eq(msr_map_init(&m, 16), 0);
		for (unsigned n = 0; n < 200000; n++) {
			unsigned i, op;
			bool found;
			uint32_t *v;

			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			i = (unsigned)(x >> 33) % 4096;
			op = (unsigned)(x >> 20) % 3;
			if (op < 2 && ordered) {
				cr_assert_eq(msr_omap_put(&o, 8ULL * i, n), 0);
				ref[i] = n + 1;
			} else if (op < 2) {
				v = msr_map_upsert(&m, 8ULL * i, &found);
				cr_assert(v);
				cr_assert_eq(found, ref[i] != 0);
				*v = n;
				ref[i] = n + 1;
			} else {
				v = ordered ? msr_omap_get(&o, 8ULL * i)
					    : msr_map_get(&m, 8ULL * i);
				cr_assert_eq(v != NULL, ref[i] != 0);
				if (!v)
					continue;
				cr_assert_eq(*v + 1, ref[i]);
				if (ordered)
					msr_omap_del_at(&o, v);
				else
					msr_map_del_at(&m, v);
				ref[i] = 0;
			}
		}
		for (unsigned i = 0; i < 4096; i++) {
			uint32_t *v = ordered ? msr_omap_get(&o, 8ULL * i)
					      : msr_map_get(&m, 8ULL * i);

			cr_assert_eq(v != NULL, ref[i] != 0);
			if (v)
				cr_assert_eq(*v + 1, ref[i]);
		}
		if (ordered)
			msr_omap_release(&o);
		else
			msr_map_release(&m);
	}
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
	cr_assert_eq(c.context_len, 8);
	cr_assert_eq(c.context_after, 8);
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

/* xorshift64: a fixed, seedable sequence for the random-input test */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void random_run(size_t max_inflight, size_t window, uint64_t seed)
{
	struct tctx *t = calloc(1, sizeof(*t));
	struct msr_engine_sink sink = {t, NULL, NULL, t_on_violation};
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_engine_stats st;
	static const uint16_t codes[] = {
		MSR_LD_ISSUE, MSR_LD_DATA, MSR_LD_FILL, MSR_ST_ISSUE,
		MSR_ST_COMMIT, MSR_ST_ACK, MSR_ST_INV, MSR_ST_UPDATE,
		MSR_EVICT, MSR_EVICT_INV, MSR_DMA_ST, MSR_MEM_SLAM,
		MSR_LD_POP, MSR_ST_POP, MSR_MEM_CHECK, MSR_SSTEP, MSR_ASI_READ,
	};
	uint64_t nv = 0;

	msr_config_default(&t->cfg);
	t->cfg.max_inflight = max_inflight;
	t->cfg.mab_window = window;
	cr_assert_eq(msr_engine_create(&t->cfg, &sink, &t->e, &err), MSR_OK);
	for (unsigned i = 0; i < T_MAXSTEPS; i++) {
		struct msr_step *s = add_step(t, (unsigned)(rnd(&seed) % 4),
					      (unsigned)(rnd(&seed) % MSR_STEP_OP_COUNT),
					      4 * i);

		s->pa = 0x1000 + 8 * (rnd(&seed) % 16);
		s->size = (uint8_t)(1u << (rnd(&seed) % 4));
		s->has = (uint8_t)(rnd(&seed) & 0x1f);
		s->ld_len = s->st_len = s->size;
		s->ld[0] = (uint8_t)rnd(&seed);
	}
	{
		struct msr_step_source src = {t, t_step_next, t_step_remaining};

		msr_engine_set_steps(t->e, &src);
	}
	for (unsigned i = 0; i < 20000; i++) {
		struct msr_event ev = {0};
		uint64_t r = rnd(&seed);

		ev.code = codes[r % (sizeof(codes) / sizeof(codes[0]))];
		ev.tnum = (uint8_t)((r >> 8) % 4 * ((r >> 10) % 2 ? 8 : 1));
		ev.pa = 0x1000 + 8 * ((r >> 12) % 16);
		if ((r >> 20) % 8 == 0)
			ev.pa |= 1ULL << 39;
		ev.data = rnd(&seed);
		ev.bmask = (uint8_t)(r >> 24);
		ev.itype = (uint8_t)((r >> 32) % 10);
		ev.size = (uint8_t)((r >> 36) % 4);
		ev.dsrc = (uint8_t)(1 + (r >> 38) % 3);
		ev.invvec = (uint32_t)((r >> 40) & 0xf);
		ev.cid = (uint8_t)((r >> 44) % 8);
		ev.bank = (uint8_t)((r >> 48) % 8);
		ev.rmo = (uint8_t)((r >> 51) & 1);
		ev.l2hit = (uint8_t)((r >> 52) & 1);
		ev.inv = (uint8_t)((r >> 53) & 1);
		ev.ts = i;
		t_apply(t, &ev);
	}
	t_finish(t);
	msr_engine_get_stats(t->e, &st);
	for (unsigned k = 0; k < MSR_V_COUNT; k++)
		nv += st.per_kind[k];
	cr_assert_eq(nv, st.violations);
	cr_assert_gt(st.violations, 0);
	cr_assert_eq(st.events, 20000);
	for (unsigned i = 0; i < t->nv; i++) {
		cr_assert_lt((unsigned)t->v[i].kind, MSR_V_COUNT);
		cr_assert_neq(t->v[i].message[0], 0);
	}
	t_free(t);
}

Test(robust, random_events_never_fail)
{
	random_run(65536, 0, 0x9e3779b97f4a7c15ULL);
}

Test(robust, random_events_with_tight_limits)
{
	random_run(4, 8, 0x1234567887654321ULL);
}
