/*
 * bench_decode.c - decode benchmark (meson benchmark(), never a test).
 *
 * Generates a large T2-like message stream with the writer (raw binary and
 * zstd level 3, in a temporary directory), then times msr_trace_reader on
 * each and, for reference, `zstd -dc FILE > /dev/null` on the compressed
 * file. Prints MB/s (decompressed bytes) and events/s, by wall-clock time
 * and by this process's CPU time (steadier on a loaded machine). Size: MSR_BENCH_MB
 * (default 256) megabytes of binary stream.
 */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this process: less disturbed by other load than wall time */
static double cpu(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* A load/store mix of 64 strands over a few MiB of addresses. */
static int generate(const char *path, int level, uint64_t bytes, uint64_t *events)
{
	struct msr_trace_writer *w;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event e;
	uint64_t x = 88172645463325252ull, written = 0, n = 0;
	uint32_t ts = 0;
	uint8_t tmp[MSR_EVENT_BIN_MAX];

	if (msr_trace_writer_open(path, MSR_FMT_BINARY, level, &w, &err))
		return -1;
	while (written < bytes) {
		unsigned kind;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		kind = (unsigned)(x >> 60);
		memset(&e, 0, sizeof(e));
		e.tnum = (uint8_t)(x & 63);
		e.pa = (x >> 8) & 0x3FFFF8;
		e.ts = ts += (uint32_t)(x >> 40 & 3);
		if (kind < 4) {
			e.code = MSR_LD_ISSUE;
			e.size = 3;
			e.itype = MSR_IT_LOAD;
		} else if (kind < 8) {
			e.code = MSR_LD_DATA;
			e.dsrc = (uint8_t)(1 + (x >> 20) % 3);
		} else if (kind < 11) {
			e.code = MSR_SSTEP;
		} else if (kind < 12) {
			e.code = MSR_ST_ISSUE;
			e.data = x * 0x9E3779B97F4A7C15ull;
			e.bmask = 0xFF;
			e.itype = MSR_IT_STORE;
		} else if (kind < 13) {
			e.code = MSR_ST_COMMIT;
			e.bmask = 0xFF;
			e.invvec = (uint32_t)(x >> 32) & 0xFF;
			e.l2hit = 1;
		} else if (kind < 14) {
			e.code = MSR_ST_ACK;
		} else if (kind < 15) {
			e.code = MSR_ST_INV;
			e.cid = (uint8_t)(x >> 24 & 7);
		} else {
			e.code = MSR_LD_FILL;
		}
		if (msr_trace_writer_put(w, &e, &err))
			return -1;
		written += msr_event_encode_bin(&e, tmp);
		n++;
	}
	*events = n;
	return msr_trace_writer_close(w, &err);
}

static int decode(const char *label, const char *path)
{
	struct msr_trace_reader *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_trace_reader_stats st;
	struct msr_event ev;
	uint64_t sum = 0;
	double t0 = now(), c0 = cpu(), dt, dc;
	int rc;
	char buf[512];

	if (msr_trace_reader_open(path, NULL, &r, &err))
		goto fail;
	while ((rc = msr_trace_reader_next(r, &ev, &err)) == MSR_OK)
		sum += ev.pa ^ ev.tnum;
	if (rc < 0)
		goto fail;
	dt = now() - t0;
	dc = cpu() - c0;
	msr_trace_reader_get_stats(r, &st);
	printf("%-12s %8.1f MB/s  %6.1f M events/s wall %.3f s | %8.1f MB/s  %6.1f M events/s "
	       "cpu %.3f s  (%llu events, %.1f MB in, sum %llx)\n",
	       label, (double)st.bytes_out / dt / 1e6, (double)st.events / dt / 1e6, dt,
	       (double)st.bytes_out / dc / 1e6, (double)st.events / dc / 1e6, dc,
	       (unsigned long long)st.events, (double)st.bytes_in / 1e6,
	       (unsigned long long)(sum & 0xFFFF));
	msr_trace_reader_close(r);
	return 0;
fail:
	fprintf(stderr, "bench: %s\n", msr_error_format(&err, buf, sizeof(buf)));
	return 1;
}

int main(void)
{
	const char *mb_env = getenv("MSR_BENCH_MB");
	uint64_t mb = mb_env ? strtoull(mb_env, NULL, 10) : 256, nev = 0;
	char dir[] = "/tmp/msr-bench-XXXXXX", raw[64], zst[64], cmd[256];
	double t0, dt;
	int rc = 1;

	if (!mkdtemp(dir))
		return 1;
	snprintf(raw, sizeof(raw), "%s/nas.trace", dir);
	snprintf(zst, sizeof(zst), "%s/nas.trace.zst", dir);
	if (generate(raw, 0, mb << 20, &nev) || generate(zst, 3, mb << 20, &nev)) {
		fprintf(stderr, "bench: cannot write the test stream in %s\n", dir);
		goto out;
	}
	printf("stream: %llu MiB, %llu events\n", (unsigned long long)mb,
	       (unsigned long long)nev);
	if (decode("raw", raw) || decode("zstd", zst))
		goto out;
	snprintf(cmd, sizeof(cmd), "zstd -q -dc %s > /dev/null", zst);
	t0 = now();
	if (system(cmd) == 0) {
		dt = now() - t0;
		printf("%-12s %8.1f MB/s  (zstd -dc FILE > /dev/null, %.3f s)\n", "zstd -dc",
		       (double)(mb << 20) / dt / 1e6, dt);
	}
	rc = 0;
out:
	unlink(raw);
	unlink(zst);
	rmdir(dir);
	return rc;
}
