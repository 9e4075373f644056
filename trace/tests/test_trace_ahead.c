/*
 * test_trace_ahead.c - decompressing ahead in a helper thread: the same
 * events, steps, byte counts and errors as decompressing inline, on inputs
 * of many blocks; closing early (helper waiting or still decompressing);
 * an uncompressed input stays inline; the helper is named for top/perf.
 */
#include <criterion/criterion.h>

#include "trace_test_util.h"

#include <dirent.h>
#include <zstd.h>

#define REPS 6000

/* Every sample event, `reps` times over, the stores' data varied so that
 * the trace does not compress to nothing: several MiB once decompressed, so
 * the helper's ring of blocks wraps many times and messages straddle its
 * block ends. Returns the events written (caller frees). */
static struct msr_event *write_trace(const char *path, int level, size_t reps, size_t *nev)
{
	struct msr_event evs[64], *all;
	size_t n = tt_sample_events(evs);
	struct msr_trace_writer *w;
	struct msr_error err = MSR_ERROR_INIT;
	uint64_t x = 88172645463325252ull;

	all = malloc(reps * n * sizeof(*all));
	cr_assert(all);
	cr_assert_eq(msr_trace_writer_open(path, MSR_FMT_BINARY, level, &w, &err), MSR_OK);
	for (size_t r = 0; r < reps; r++)
		for (size_t i = 0; i < n; i++) {
			struct msr_event *e = &all[r * n + i];

			*e = evs[i];
			if (e->code == MSR_ST_ISSUE) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				e->data = x;
			}
			cr_assert_eq(msr_trace_writer_put(w, e, &err), MSR_OK);
		}
	cr_assert_eq(msr_trace_writer_close(w, &err), MSR_OK);
	*nev = reps * n;
	return all;
}

struct outcome {
	int rc;
	size_t events;
	struct msr_trace_reader_stats st;
	char msg[1024];
};

static void read_all(const char *path, bool ahead, const struct msr_event *evs,
		     struct outcome *o, bool *started)
{
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event ev;

	memset(o, 0, sizeof(*o));
	cr_assert_eq(msr_trace_reader_open(path, NULL, &r, &err), MSR_OK);
	*started = ahead && msr_trace_reader_decompress_ahead(r);
	while ((o->rc = msr_trace_reader_next(r, &ev, &err)) == MSR_OK) {
		cr_assert_eq(tt_event_cmp(&ev, &evs[o->events]), 0,
			     "ahead %d: event %zu", ahead, o->events);
		o->events++;
	}
	if (o->rc < 0)
		msr_error_format(&err, o->msg, sizeof(o->msg));
	msr_trace_reader_get_stats(r, &o->st);
	msr_trace_reader_close(r);
}

Test(ahead, same_events_and_counts_as_inline)
{
	char *path = tt_tmpfile(".zst");
	size_t nev;
	struct msr_event *evs = write_trace(path, 1, REPS, &nev);
	struct outcome in, ah;
	bool started;

	read_all(path, false, evs, &in, &started);
	read_all(path, true, evs, &ah, &started);
	cr_assert(started, "a helper thread decompresses a zstd trace");
	cr_assert_eq(in.rc, MSR_END, "%s", in.msg);
	cr_assert_eq(ah.rc, MSR_END, "%s", ah.msg);
	cr_assert_eq(ah.events, nev);
	cr_assert_eq(in.events, ah.events);
	cr_assert_gt(ah.st.bytes_out, 2u << 20, "%llu bytes: too few to wrap the ring",
		     (unsigned long long)ah.st.bytes_out);
	cr_assert_eq(in.st.bytes_out, ah.st.bytes_out);
	cr_assert_eq(in.st.bytes_in, ah.st.bytes_in);
	cr_assert_eq(ah.st.bytes_in, ah.st.file_size);
	free(evs);
	unlink(path);
	free(path);
}

Test(ahead, truncated_trace_same_error_after_the_same_events)
{
	char *path = tt_tmpfile(".zst");
	size_t nev, n = 0;
	struct msr_event *evs = write_trace(path, 1, REPS, &nev);
	uint8_t *all = tt_read_file(path, &n);
	struct outcome in, ah;
	bool started;

	tt_write_file(path, all, n / 2);
	read_all(path, false, evs, &in, &started);
	read_all(path, true, evs, &ah, &started);
	cr_assert(started);
	cr_assert_eq(in.rc, MSR_E_TRUNCATED, "%s", in.msg);
	cr_assert_eq(ah.rc, in.rc, "%s", ah.msg);
	cr_assert_str_eq(ah.msg, in.msg);
	cr_assert_gt(in.events, nev / 4, "the cut is well past the first blocks");
	cr_assert_eq(ah.events, in.events);
	free(evs);
	free(all);
	unlink(path);
	free(path);
}

Test(ahead, error_stays_the_answer)
{
	struct msr_event ev;
	char *path = tt_tmpfile(".zst");
	size_t nev, n = 0;
	struct msr_event *evs = write_trace(path, 1, 100, &nev);
	uint8_t *all = tt_read_file(path, &n);
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;
	int rc;

	tt_write_file(path, all, n - 4);
	cr_assert_eq(msr_trace_reader_open(path, NULL, &r, &err), MSR_OK);
	cr_assert(msr_trace_reader_decompress_ahead(r));
	cr_assert(msr_trace_reader_decompress_ahead(r), "asking twice is harmless");
	while ((rc = msr_trace_reader_next(r, &ev, &err)) == MSR_OK)
		;
	cr_assert_eq(rc, MSR_E_TRUNCATED);
	cr_assert_neq(msr_trace_reader_next(r, &ev, &err), MSR_OK);
	msr_trace_reader_close(r);
	free(evs);
	free(all);
	unlink(path);
	free(path);
}

/* Close after one event, while the helper is blocked on a full ring or still
 * decompressing: no hang, nothing leaked (the sanitizer build checks). */
Test(ahead, close_early)
{
	struct msr_event ev;
	char *path = tt_tmpfile(".zst");
	size_t nev;
	struct msr_event *evs = write_trace(path, 1, REPS, &nev);

	for (int wait_ms = 0; wait_ms <= 20; wait_ms += 10) {
		struct msr_trace_reader *r;
		struct msr_error err = MSR_ERROR_INIT;

		cr_assert_eq(msr_trace_reader_open(path, NULL, &r, &err), MSR_OK);
		cr_assert(msr_trace_reader_decompress_ahead(r));
		cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_OK);
		usleep(wait_ms * 1000);
		msr_trace_reader_close(r);
	}
	free(evs);
	unlink(path);
	free(path);
}

Test(ahead, uncompressed_trace_stays_inline)
{
	char *path = tt_tmpfile(".bin");
	size_t nev;
	struct msr_event *evs = write_trace(path, 0, 50, &nev);
	struct outcome o;
	bool started = true;

	read_all(path, true, evs, &o, &started);
	cr_assert_not(started);
	cr_assert_eq(o.rc, MSR_END, "%s", o.msg);
	cr_assert_eq(o.events, nev);
	free(evs);
	unlink(path);
	free(path);
}

static bool step_eq(const struct msr_step *a, const struct msr_step *b)
{
	return a->line == b->line && a->pc == b->pc && a->pa == b->pa &&
	       a->mask == b->mask && a->tnum == b->tnum && a->op == b->op &&
	       a->size == b->size && a->has == b->has && a->ld_len == b->ld_len &&
	       a->st_len == b->st_len && memcmp(a->ld, b->ld, a->ld_len) == 0 &&
	       memcmp(a->st, b->st, a->st_len) == 0;
}

/* A zstd step log of many blocks, read two strands' steps interleaved. */
Test(ahead, step_log_same_steps)
{
	char *path = tt_tmpfile(".steps.zst");
	size_t cap = 8u << 20, n = 0, lines = 120000;
	char *text = malloc(cap);
	size_t ccap = ZSTD_compressBound(cap);
	void *comp = malloc(ccap);
	size_t clen;

	n += (size_t)snprintf(text + n, cap - n, "# msync-steps 1\n");
	for (size_t i = 0; i < lines; i++)
		n += (size_t)snprintf(text + n, cap - n,
				      "%zu 0x%zx st pa=0x%zx size=8 st=%016zx\n", i % 2,
				      0x1000 + 4 * i, 0x40 + 8 * (i % 512), i * 0x9e3779b9u);
	clen = ZSTD_compress(comp, ccap, text, n, 1);
	cr_assert_not(ZSTD_isError(clen));
	tt_write_file(path, comp, clen);

	struct msr_step want, got;
	struct msr_steplog *a, *b;
	struct msr_error err = MSR_ERROR_INIT;

	cr_assert_eq(msr_steplog_open(path, 64, 0, &a, &err), MSR_OK);
	cr_assert_eq(msr_steplog_open(path, 64, 0, &b, &err), MSR_OK);
	cr_assert(msr_steplog_decompress_ahead(b));
	for (size_t i = 0; i < lines; i++) {
		unsigned t = (unsigned)(i % 2);
		int ra = msr_steplog_next(a, t, &want, &err);
		int rb = msr_steplog_next(b, t, &got, &err);

		cr_assert_eq(ra, MSR_OK, "%s", err.cause[0].text);
		cr_assert_eq(rb, MSR_OK, "%s", err.cause[0].text);
		cr_assert(step_eq(&want, &got), "step %zu", i);
		cr_assert_eq(got.st_len, 8);
	}
	cr_assert_eq(msr_steplog_next(b, 0, &got, &err), MSR_END);
	cr_assert_eq(msr_steplog_lines(a), msr_steplog_lines(b));
	msr_steplog_close(a);
	msr_steplog_close(b);
	free(comp);
	free(text);
	unlink(path);
	free(path);
}

/* Threads of this process whose name is `name` (/proc/self/task). */
static unsigned threads_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *t;
	unsigned n = 0;

	cr_assert(d);
	while ((t = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (t->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", t->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			n += !strcmp(comm, name);
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* threads_named(name) once it is `want`, or as it is after about 2 s: a
 * joined thread's task leaves /proc a moment after pthread_join returns
 * (the kernel wakes the joiner before it releases the task). */
static unsigned threads_named_settled(const char *name, unsigned want)
{
	unsigned n = threads_named(name);

	for (int i = 0; i < 2000 && n != want; i++) {
		usleep(1000);
		n = threads_named(name);
	}
	return n;
}

Test(ahead, helper_thread_is_named)
{
	char *path = tt_tmpfile(".zst");
	size_t nev;
	/* longer than the helper's blocks ahead: it stays alive, waiting for
	 * a free block, until the reader is closed (a short trace lets it
	 * finish and leave before it can be counted) */
	struct msr_event *evs = write_trace(path, 1, REPS, &nev), ev;
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;

	cr_assert_eq(threads_named("msr-unzstd"), 0);
	cr_assert_eq(msr_trace_reader_open(path, NULL, &r, &err), MSR_OK);
	cr_assert(msr_trace_reader_decompress_ahead(r));
	cr_expect_eq(threads_named("msr-unzstd"), 1);
	cr_assert_eq(msr_trace_reader_next(r, &ev, &err), MSR_OK);
	msr_trace_reader_close(r);
	cr_expect_eq(threads_named_settled("msr-unzstd", 0), 0, "joined at close");
	free(evs);
	unlink(path);
	free(path);
}
