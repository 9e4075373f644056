/*
 * test_trace_source.c - the byte source's zstd decoding, byte for byte:
 * frames of many window sizes, with and without a content size, several
 * frames with skippable ones between them and windows that grow from
 * frame to frame, data whose matches reach back across the whole window;
 * read in one piece and in tiny reads, inline and ahead, each block
 * checked again after the helper has had time to decode ahead of it.
 */
#include <criterion/criterion.h>

#include "source-internal.h"

#include <stdio.h>
#include <time.h>
#include <zstd.h>

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

/* `n` bytes that compress, with copies of earlier bytes from up to
 * `reach` back, so that a decoder needs all of its window. */
static uint8_t *make_data(size_t n, size_t reach, uint64_t seed)
{
	uint8_t *d = malloc(n);
	uint64_t x = seed | 1;
	size_t i = 0;

	cr_assert(d);
	while (i < n) {
		size_t len = 8 + rnd(&x) % 300;

		if (len > n - i)
			len = n - i;
		if (i > 64 && rnd(&x) % 3) {
			size_t back = 1 + rnd(&x) % (i < reach ? i : reach);

			for (size_t k = 0; k < len; k++, i++)
				d[i] = d[i - back];
		} else {
			for (size_t k = 0; k < len; k++, i++)
				d[i] = (uint8_t)('a' + rnd(&x) % 16);
		}
	}
	return d;
}

/* Append one zstd frame of `src` to *out. `content` = with its size in
 * the header (a single-segment frame when that fits the window). */
static void put_frame(uint8_t **out, size_t *len, const uint8_t *src, size_t n,
		      int level, int wlog, bool content)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t cap = ZSTD_compressBound(n), r;
	ZSTD_inBuffer in = {src, n, 0};
	ZSTD_outBuffer o;

	cr_assert(c);
	*out = realloc(*out, *len + cap);
	cr_assert(*out);
	o = (ZSTD_outBuffer){*out + *len, cap, 0};
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, wlog);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	if (content)
		ZSTD_CCtx_setPledgedSrcSize(c, n);
	do {
		r = ZSTD_compressStream2(c, &o, &in, ZSTD_e_end);
		cr_assert(!ZSTD_isError(r), "%s", ZSTD_getErrorName(r));
	} while (r);
	*len += o.pos;
	ZSTD_freeCCtx(c);
}

static void put_skippable(uint8_t **out, size_t *len, uint32_t size)
{
	*out = realloc(*out, *len + 8 + size);
	cr_assert(*out);
	uint8_t *p = *out + *len;
	uint32_t magic = 0x184D2A53u;

	for (int i = 0; i < 4; i++) {
		p[i] = (uint8_t)(magic >> (8 * i));
		p[4 + i] = (uint8_t)(size >> (8 * i));
	}
	memset(p + 8, 0xa5, size);
	*len += 8 + size;
}

enum { INLINE, AHEAD, AHEAD_LATE };

/* Read all of `z` through a source and compare with `want`: inline, with
 * the helper from the start, or from the second block on (the first block,
 * decoded inline, still held when the helper starts).
 * With the helper, every few blocks wait for it to fill its slots, then
 * check the block held again: what it decodes meanwhile must not touch
 * it. */
static void read_back(const uint8_t *z, size_t zn, const uint8_t *want,
		      size_t n, size_t read_max, int mode, const char *what)
{
	bool ahead = mode == AHEAD;
	struct msr_source *s;
	struct msr_error err = MSR_ERROR_INIT;
	const uint8_t *b;
	size_t len, at = 0, blocks = 0;
	int rc;

	cr_assert_eq(msr_source_open_mem(z, zn, what, read_max, &s, &err), MSR_OK);
	cr_assert(msr_source_compressed(s));
	if (ahead)
		cr_assert(msr_source_decompress_ahead(s));
	while ((rc = msr_source_read(s, &b, &len, &err)) == MSR_OK) {
		cr_assert(len > 0);
		cr_assert(at + len <= n, "%s: %zu bytes too many", what, at + len - n);
		cr_assert(!memcmp(b, want + at, len), "%s: bytes %zu.. differ", what, at);
		if (mode == AHEAD_LATE && !ahead) {
			ahead = true;
			cr_assert(msr_source_decompress_ahead(s));
			blocks = 3; /* wait and check this block now */
		}
		if (ahead && ++blocks % 4 == 0) {
			struct timespec ts = {0, 2000000};

			nanosleep(&ts, NULL);
			cr_assert(!memcmp(b, want + at, len),
				  "%s: block at %zu changed while held", what, at);
		}
		at += len;
	}
	if (rc != MSR_END) {
		char msg[1024];

		msr_error_format(&err, msg, sizeof(msg));
		cr_assert_fail("%s: status %d: %s", what, rc, msg);
	}
	cr_assert_eq(at, n, "%s: %zu of %zu bytes", what, at, n);
	cr_assert_eq(msr_source_bytes_out(s), n);
	cr_assert_eq(msr_source_bytes_in(s), zn);
	msr_source_close(s);
}

static void all_reads(const uint8_t *z, size_t zn, const uint8_t *want, size_t n,
		      const char *what)
{
	for (int mode = INLINE; mode <= AHEAD_LATE; mode++) {
		read_back(z, zn, want, n, 0, mode, what);
		read_back(z, zn, want, n, 4093, mode, what);
	}
}

Test(source, one_frame_each_window)
{
	static const int wlogs[] = {10, 11, 14, 17, 19, 21, 23};
	size_t n = 3u << 20;

	for (size_t i = 0; i < sizeof(wlogs) / sizeof(wlogs[0]); i++) {
		uint8_t *d = make_data(n, (size_t)1 << wlogs[i], 7 + i);

		for (int content = 0; content < 2; content++) {
			uint8_t *z = NULL;
			size_t zn = 0;
			char what[64];

			put_frame(&z, &zn, d, n, 1 + (int)i % 4, wlogs[i], content);
			snprintf(what, sizeof(what), "wlog %d content %d", wlogs[i], content);
			all_reads(z, zn, d, n, what);
			free(z);
		}
		free(d);
	}
}

Test(source, small_single_segment_frames)
{
	/* frames smaller than their window: the window is the content */
	for (size_t n = 1; n < 70000; n = n * 3 + 1) {
		uint8_t *d = make_data(n, n, n), *z = NULL;
		size_t zn = 0;

		put_frame(&z, &zn, d, n, 3, 20, true);
		read_back(z, zn, d, n, 0, INLINE, "small");
		read_back(z, zn, d, n, 7, AHEAD, "small, tiny reads");
		free(z);
		free(d);
	}
}

Test(source, frames_skippable_frames_and_growing_windows)
{
	/* windows that grow and shrink from frame to frame, an empty frame,
	 * skippable frames between them and before the first */
	static const struct { int wlog; size_t n; bool content; } f[] = {
		{10, 200000, false}, {20, 1500000, false}, {12, 300000, true},
		{16, 0, true}, {22, 2500000, false}, {18, 50000, true},
	};
	uint8_t *z = NULL, *all = NULL;
	size_t zn = 0, n = 0;

	put_skippable(&z, &zn, 100);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		uint8_t *d = make_data(f[i].n ? f[i].n : 1, (size_t)1 << f[i].wlog, 40 + i);

		put_frame(&z, &zn, d, f[i].n, 3, f[i].wlog, f[i].content);
		if (i % 2)
			put_skippable(&z, &zn, (uint32_t)(i * 70000));
		all = realloc(all, n + f[i].n + 1);
		memcpy(all + n, d, f[i].n);
		n += f[i].n;
		free(d);
	}
	all_reads(z, zn, all, n, "frames");
	free(z);
	free(all);
}

Test(source, long_window_frame)
{
	/* a 128 MiB window (zstd --long=27) for a few MiB: the ring is sized
	 * for the window, but only the bytes written are touched */
	size_t n = 4u << 20;
	uint8_t *d = make_data(n, n, 99), *z = NULL;
	size_t zn = 0;

	put_frame(&z, &zn, d, n, 1, 27, false);
	read_back(z, zn, d, n, 0, AHEAD_LATE, "long");
	free(z);
	free(d);
}
