/*
 * source.c - the streaming byte source under every trace/ reader.
 *
 * Opens a file or standard input, detects zstd by the magic number of the
 * first frame (a regular or a skippable frame) and hands out decompressed
 * bytes in large blocks that the decoders read in place. zstd frames are
 * decoded with libzstd's buffer-less decoder straight into a ring that
 * holds the frame's window, so that a block handed out is where libzstd
 * wrote it: the streaming decoder would decode into its own window and
 * copy every byte out again. Several frames and skippable frames (skipped
 * here) are accepted, windows up to 2 GiB (zstd --long). After
 * msr_source_decompress_ahead a helper thread (ahead.c) runs the file
 * reads and the decompression and this file only takes its blocks. Must
 * never read the whole input into memory, and never hands out an empty
 * block.
 */
#include "source-internal.h"

#include "ahead-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ZSTD_STATIC_LINKING_ONLY /* the buffer-less decoder */
#include <zstd.h>
#include <zstd_errors.h>

#define RAW_BLOCK (1u << 20)
#define ZIN_BLOCK (1u << 18)
/* The first read lands in the raw buffer before zstd is detected. */
_Static_assert(ZIN_BLOCK <= RAW_BLOCK, "the first compressed block must fit the raw buffer");
/* One compressed block (at most 128 KiB and its 3-byte header) must fit
 * the input buffer: libzstd's buffer-less decoder takes it whole. */
_Static_assert(ZIN_BLOCK >= ZSTD_BLOCKSIZE_MAX + 3, "a compressed block must fit the input buffer");

#define ZSTD_WINDOW_MAX ((uint64_t)1 << 31) /* as zstd --long=31 */
/* A block handed out is at most chunk_max long (this, or AHEAD_BLOCK for
 * the helper's slots), and at least that less one zstd block unless the
 * ring wraps, a frame ends or the input does. */
#define ZCHUNK RAW_BLOCK
/* Room past a block's end that libzstd may write into (its wild copies
 * overrun by up to 32 bytes), kept free at the ring's end. */
#define ZRING_SLACK 64

struct msr_source {
	FILE *f;
	bool is_stdin;
	bool compressed;
	bool eof;          /* no more file bytes */
	bool done;         /* END returned or error */
	char path[1024];
	uint8_t *buf;      /* file bytes (zstd: only until it is detected) */
	size_t bufcap;
	uint8_t *in;       /* zstd: compressed bytes in[zin_pos, zin_size) */
	size_t incap, zin_pos, zin_size;
	ZSTD_DCtx *zdc;
	bool in_frame;     /* a regular frame begun and not yet ended */
	uint64_t skip;     /* bytes of a skippable frame still to pass */
	size_t block_max;  /* the frame's largest block */
	uint8_t *ring;     /* zstd: decompressed bytes, handed out in place */
	size_t ring_cap, wpos;
	size_t chunk_max;  /* of a block handed out */
	int zrc;           /* an error found after bytes still to hand out */
	struct msr_error zerr;
	uint64_t frame_start; /* compressed offset of the current frame */
	uint64_t zin_base;    /* compressed offset of in[0] */
	uint64_t bytes_in;
	uint64_t bytes_out;
	uint64_t file_size;
	/* Bytes read for magic detection, handed out first (raw only). */
	size_t pending;
	/* In-memory input (msr_source_open_mem): no file */
	const uint8_t *mem;
	size_t mem_len, mem_pos;
	size_t read_max;  /* 0 = no limit on a read */
	struct msr_ahead *ahead; /* decompressing in a helper thread, or NULL */
	uint64_t ahead_bytes_in; /* bytes_in as of the block handed out */
};

static int io_error(struct msr_source *s, struct msr_error *err, const char *what)
{
	return msr_error_set(err, MSR_E_IO, "trace", s->path, "cannot %s: %s", what,
			     strerror(errno));
}

/* fread until `want` bytes or end of file; a read error is reported. */
static int fill(struct msr_source *s, uint8_t *dst, size_t want, size_t *got,
		struct msr_error *err)
{
	size_t n = 0;

	if (s->read_max && want > s->read_max)
		want = s->read_max;
	if (s->mem) {
		n = s->mem_len - s->mem_pos < want ? s->mem_len - s->mem_pos : want;
		memcpy(dst, s->mem + s->mem_pos, n);
		s->mem_pos += n;
		s->eof = s->mem_pos == s->mem_len;
		s->bytes_in += n;
		*got = n;
		return MSR_OK;
	}
	while (n < want && !s->eof) {
		size_t r = fread(dst + n, 1, want - n, s->f);

		n += r;
		/* a read interrupted by a signal after some bytes returns them
		 * with the error set: stop here too, or the next fread waits */
		if (ferror(s->f))
			return io_error(s, err, "read");
		if (r == 0)
			s->eof = true;
	}
	s->bytes_in += n;
	*got = n;
	return MSR_OK;
}

/* Could the `n` bytes at p begin a zstd frame, regular or skippable (the
 * magic numbers 0xFD2FB528, 0x184D2A5?, little-endian)? Fewer than 4
 * bytes are compared as far as they go. */
static bool zstd_magic_prefix(const uint8_t *p, size_t n)
{
	static const uint8_t frame[4] = {0x28, 0xb5, 0x2f, 0xfd};
	static const uint8_t skippable[4] = {0x50, 0x2a, 0x4d, 0x18};
	size_t k = n < 4 ? n : 4;

	if (k && (p[0] & 0xf0) == skippable[0])
		return memcmp(p + 1, skippable + 1, k - 1) == 0;
	return memcmp(p, frame, k) == 0;
}

bool msr_source_zstd_magic(const uint8_t *p, size_t n)
{
	return n >= 4 && zstd_magic_prefix(p, 4);
}

static int setup_zstd(struct msr_source *s, struct msr_error *err)
{
	s->zdc = ZSTD_createDCtx();
	s->chunk_max = ZCHUNK;
	s->incap = ZIN_BLOCK;
	s->in = malloc(s->incap);
	if (!s->zdc || !s->in)
		return msr_error_set(err, MSR_E_NOMEM, "trace", s->path,
				     "out of memory setting up zstd decompression");
	return MSR_OK;
}

static int start(struct msr_source *s, struct msr_error *err);

int msr_source_open(const char *path, struct msr_source **out,
		    struct msr_error *err)
{
	struct msr_source *s;
	struct stat st;
	int rc;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return msr_error_set(err, MSR_E_NOMEM, "trace", path, "out of memory");
	snprintf(s->path, sizeof(s->path), "%s", path);
	if (strcmp(path, "-") == 0) {
		s->f = stdin;
		s->is_stdin = true;
	} else {
		s->f = fopen(path, "rb");
		if (!s->f) {
			rc = io_error(s, err, "open");
			goto fail;
		}
	}
	if (fstat(fileno(s->f), &st) == 0 && S_ISREG(st.st_mode))
		s->file_size = (uint64_t)st.st_size;
	rc = start(s, err);
	if (rc)
		goto fail;
	*out = s;
	return MSR_OK;
fail:
	msr_source_close(s);
	return rc;
}

int msr_source_open_mem(const void *buf, size_t len, const char *name,
			size_t block_max, struct msr_source **out,
			struct msr_error *err)
{
	struct msr_source *s;
	int rc;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return msr_error_set(err, MSR_E_NOMEM, "trace", name, "out of memory");
	snprintf(s->path, sizeof(s->path), "%s", name);
	s->mem = len ? buf : (const uint8_t *)"";
	s->mem_len = len;
	s->eof = len == 0;
	s->file_size = len;
	s->read_max = block_max;
	rc = start(s, err);
	if (rc) {
		msr_source_close(s);
		return rc;
	}
	*out = s;
	return MSR_OK;
}

/* Buffers, first block and zstd detection, common to files and memory. */
static int start(struct msr_source *s, struct msr_error *err)
{
	int rc;

	s->bufcap = RAW_BLOCK;
	s->buf = malloc(s->bufcap);
	if (!s->buf)
		return msr_error_set(err, MSR_E_NOMEM, "trace", s->path, "out of memory");
	/* Read the first block and look at its magic. */
	rc = fill(s, s->buf, ZIN_BLOCK, &s->pending, err);
	while (!rc && s->pending < 4 && !s->eof) { /* capped reads: get the magic */
		size_t got;

		rc = fill(s, s->buf + s->pending, 4 - s->pending, &got, err);
		s->pending += got;
	}
	if (rc)
		return rc;
	if (msr_source_zstd_magic(s->buf, s->pending)) {
		s->compressed = true;
		rc = setup_zstd(s, err);
		if (rc)
			return rc;
		memcpy(s->in, s->buf, s->pending);
		s->zin_size = s->pending;
		s->pending = 0;
		free(s->buf); /* the ring holds the decompressed bytes */
		s->buf = NULL;
	}
	return MSR_OK;
}

static int read_raw(struct msr_source *s, const uint8_t **buf, size_t *len,
		    struct msr_error *err)
{
	size_t got = s->pending;
	int rc;

	s->pending = 0;
	if (got == 0) {
		rc = fill(s, s->buf, s->bufcap, &got, err);
		if (rc)
			return rc;
	}
	if (got == 0)
		return MSR_END;
	*buf = s->buf;
	*len = got;
	return MSR_OK;
}

static int zstd_truncated(struct msr_source *s, struct msr_error *err)
{
	uint64_t end = s->zin_base + s->zin_size;

	return msr_error_set(err, MSR_E_TRUNCATED, "trace", s->path,
			     "truncated zstd frame at compressed offset=%llu: the "
			     "frame that starts at compressed offset=%llu is incomplete",
			     (unsigned long long)end,
			     (unsigned long long)s->frame_start);
}

static int zstd_corrupt(struct msr_source *s, const char *why,
			struct msr_error *err)
{
	return msr_error_set(err, MSR_E_FORMAT, "trace", s->path,
			     "corrupt zstd data in the frame at compressed "
			     "offset=%llu: %s",
			     (unsigned long long)s->frame_start, why);
}

/* At least `n` (<= incap) compressed bytes at in + zin_pos, unless the
 * input ends first (then fewer; *eof). */
static int zin_need(struct msr_source *s, size_t n, bool *eof,
		    struct msr_error *err)
{
	*eof = false;
	while (s->zin_size - s->zin_pos < n) {
		size_t got;
		int rc;

		if (s->eof) {
			*eof = true;
			return MSR_OK;
		}
		if (s->zin_pos) {
			memmove(s->in, s->in + s->zin_pos, s->zin_size - s->zin_pos);
			s->zin_base += s->zin_pos;
			s->zin_size -= s->zin_pos;
			s->zin_pos = 0;
		}
		rc = fill(s, s->in + s->zin_size, s->incap - s->zin_size, &got, err);
		if (rc)
			return rc;
		s->zin_size += got;
	}
	return MSR_OK;
}

/* The window and content size from a regular frame's header at p
 * (`n` bytes, at least its first 5): RFC 8878, 3.1.1.1. False until
 * all of the header is there. */
static bool zstd_frame_sizes(const uint8_t *p, size_t n, uint64_t *window,
			     uint64_t *content)
{
	static const unsigned fcs_len[4] = {0, 2, 4, 8};
	static const unsigned did_len[4] = {0, 1, 2, 4};
	unsigned fhd = p[4], single = (fhd >> 5) & 1;
	unsigned fcs_n = fcs_len[fhd >> 6], did_n = did_len[fhd & 3];
	size_t hdr = 5 + !single + did_n + (fcs_n ? fcs_n : single);
	const uint8_t *f;

	if (n < hdr)
		return false;
	*content = ZSTD_CONTENTSIZE_UNKNOWN;
	f = p + 5 + !single + did_n;
	if (fcs_n || single) {
		uint64_t v = 0;

		for (unsigned i = fcs_n ? fcs_n : 1; i--;)
			v = v << 8 | f[i];
		*content = fcs_n == 2 ? v + 256 : v;
	}
	if (single) {
		*window = *content;
	} else {
		unsigned wd = p[5], exp = wd >> 3;
		uint64_t base = (uint64_t)1 << (10 + exp);

		*window = base + (base / 8) * (wd & 7);
	}
	return true;
}

/* A ring for the frame's window. Called with no block of the old ring
 * out: the reader gave its block back by asking for the next, and the
 * helper hands out copies. */
static int zstd_ring_for(struct msr_source *s, uint64_t window,
			 uint64_t content, struct msr_error *err)
{
	size_t need, block;
	uint8_t *r;

	block = window < ZSTD_BLOCKSIZE_MAX ? (size_t)window : ZSTD_BLOCKSIZE_MAX;
	if (block == 0)
		block = 1;
	need = ZSTD_decodingBufferSize_min(window, content);
	if (ZSTD_isError(need))
		return zstd_corrupt(s, ZSTD_getErrorName(need), err);
	need += 4 * block + 4 * ZRING_SLACK;
	s->block_max = block;
	if (need <= s->ring_cap)
		return MSR_OK;
	r = malloc(need);
	if (!r)
		return msr_error_set(err, MSR_E_NOMEM, "trace", s->path,
				     "out of memory: a %llu-byte zstd window",
				     (unsigned long long)window);
	free(s->ring);
	s->ring = r;
	s->ring_cap = need;
	s->wpos = 0;
	return MSR_OK;
}

/*
 * Between frames: pass skippable frames, begin the next regular one and
 * ready the ring for it. MSR_END at a clean end of input.
 */
static int zstd_frame_begin(struct msr_source *s, struct msr_error *err)
{
	uint64_t window, content;
	const uint8_t *p;
	size_t avail;
	bool eof;
	int rc;

	for (;;) {
		while (s->skip) {
			size_t n;

			rc = zin_need(s, 1, &eof, err);
			if (rc)
				return rc;
			if (eof)
				return zstd_truncated(s, err);
			n = s->zin_size - s->zin_pos;
			if (n > s->skip)
				n = (size_t)s->skip;
			s->zin_pos += n;
			s->skip -= n;
		}
		s->frame_start = s->zin_base + s->zin_pos;
		rc = zin_need(s, ZSTD_FRAMEHEADERSIZE_MAX, &eof, err);
		if (rc)
			return rc;
		avail = s->zin_size - s->zin_pos;
		if (avail == 0)
			return MSR_END; /* clean end between frames */
		p = s->in + s->zin_pos;
		if (!zstd_magic_prefix(p, avail))
			return zstd_corrupt(s, ZSTD_getErrorString(ZSTD_error_prefix_unknown), err);
		if ((p[0] & 0xf0) != 0x50)
			break;
		if (avail < 8)
			return zstd_truncated(s, err);
		s->skip = 8 + ((uint64_t)p[4] | (uint64_t)p[5] << 8 |
			       (uint64_t)p[6] << 16 | (uint64_t)p[7] << 24);
	}
	/* A regular frame: libzstd checks its header (all of it is in the
	 * buffer now, or the input ends inside it) before the window size is
	 * looked at, so that its errors come first, as they always did. */
	ZSTD_decompressBegin(s->zdc);
	while (ZSTD_nextInputType(s->zdc) == ZSTDnit_frameHeader) {
		size_t n = ZSTD_nextSrcSizeToDecompress(s->zdc), r;

		if (s->zin_size - s->zin_pos < n)
			return zstd_truncated(s, err);
		r = ZSTD_decompressContinue(s->zdc, NULL, 0, s->in + s->zin_pos, n);
		if (ZSTD_isError(r))
			return zstd_corrupt(s, ZSTD_getErrorName(r), err);
		s->zin_pos += n;
	}
	if (!zstd_frame_sizes(p, avail, &window, &content))
		return zstd_corrupt(s, "internal: frame header not parsed", err);
	if (window > ZSTD_WINDOW_MAX)
		return zstd_corrupt(s, ZSTD_getErrorString(ZSTD_error_frameParameter_windowTooLarge), err);
	rc = zstd_ring_for(s, window, content, err);
	if (rc)
		return rc;
	s->in_frame = true;
	return MSR_OK;
}

/*
 * The next block of decompressed bytes, in place in the ring: zstd blocks
 * decoded one after the other from wpos, until one more might pass chunk_max
 * bytes, the ring's end (libzstd's round buffer goes on at its start), the
 * frame's end (the next one may need a larger ring) or an error, which the
 * next call returns. Valid until the next call.
 */
static int read_zstd(struct msr_source *s, const uint8_t **buf, size_t *len,
		     struct msr_error *err)
{
	size_t start = s->wpos;
	bool eof;
	int rc = MSR_OK;

	if (s->zrc) {
		*err = s->zerr;
		return s->zrc;
	}
	for (;;) {
		size_t n, r;

		if (!s->in_frame) {
			/* (only with nothing decoded yet: a new frame may
			 * bring a new ring) */
			rc = zstd_frame_begin(s, err);
			if (rc)
				return rc;
			start = s->wpos;
		}
		n = ZSTD_nextSrcSizeToDecompress(s->zdc);
		if (n == 0) {
			s->in_frame = false; /* the frame is whole */
			if (s->wpos > start)
				break;
			continue;
		}
		if (s->wpos - start + s->block_max > s->chunk_max)
			break; /* the next zstd block might not fit */
		if (s->ring_cap - s->wpos < s->block_max + ZRING_SLACK) {
			if (s->wpos > start)
				break; /* this block ends here; the next begins at 0 */
			s->wpos = start = 0;
		}
		rc = zin_need(s, n, &eof, err);
		if (!rc && eof)
			rc = zstd_truncated(s, err);
		if (!rc) {
			r = ZSTD_decompressContinue(s->zdc, s->ring + s->wpos,
						    s->ring_cap - s->wpos,
						    s->in + s->zin_pos, n);
			if (ZSTD_isError(r))
				rc = zstd_corrupt(s, ZSTD_getErrorName(r), err);
		}
		if (rc) {
			if (s->wpos == start)
				return rc;
			/* hand out what was decoded before it first */
			s->zrc = rc;
			s->zerr = *err;
			break;
		}
		s->zin_pos += n;
		s->wpos += r;
	}
	*buf = s->ring + start;
	*len = s->wpos - start;
	return MSR_OK;
}

/*
 * The helper's side: one block, copied into the helper's slot, and the file
 * bytes read up to its end. The copy is what keeps the ring on the helper's
 * core: libzstd writes and rereads its window there, and a ring the reader
 * also read on the other core would have those lines move back and forth
 * (measured: the helper took 40 % longer without the copy).
 */
static int ahead_produce(void *ctx, uint8_t *dst, size_t cap, size_t *len,
			 uint64_t *bytes_in, struct msr_error *err)
{
	struct msr_source *s = ctx;
	const uint8_t *b;
	int rc = read_zstd(s, &b, len, err);

	if (rc == MSR_OK) {
		if (*len > cap) /* read_zstd keeps its blocks to chunk_max */
			return msr_error_set(err, MSR_E_INTERNAL, "trace", s->path,
					     "a %zu-byte block for a %zu-byte slot",
					     *len, cap);
		memcpy(dst, b, *len);
	}
	*bytes_in = s->bytes_in;
	return rc;
}

bool msr_source_decompress_ahead(struct msr_source *s)
{
	if (s->ahead)
		return true;
	if (!s->compressed || s->done)
		return false;
	s->ahead_bytes_in = s->bytes_in;
	s->chunk_max = AHEAD_BLOCK; /* the helper's slots */
	s->ahead = msr_ahead_start(ahead_produce, s);
	if (!s->ahead)
		s->chunk_max = ZCHUNK;
	return s->ahead != NULL;
}

int msr_source_read(struct msr_source *s, const uint8_t **buf, size_t *len,
		    struct msr_error *err)
{
	int rc;

	if (s->done)
		return MSR_END;
	if (s->ahead) {
		rc = msr_ahead_take(s->ahead, buf, len, &s->ahead_bytes_in, err);
		if (rc == MSR_AHEAD_EINTR) /* as a read(2) would be */
			rc = io_error(s, err, "read");
	} else if (s->compressed) {
		rc = read_zstd(s, buf, len, err);
	} else
		rc = read_raw(s, buf, len, err);
	if (rc == MSR_OK)
		s->bytes_out += *len;
	else if (rc == MSR_END)
		s->done = true;
	return rc;
}

const char *msr_source_path(const struct msr_source *s)
{
	return s->path;
}

bool msr_source_compressed(const struct msr_source *s)
{
	return s->compressed;
}

uint64_t msr_source_bytes_in(const struct msr_source *s)
{
	return s->ahead ? s->ahead_bytes_in : s->bytes_in;
}

uint64_t msr_source_bytes_out(const struct msr_source *s)
{
	return s->bytes_out;
}

uint64_t msr_source_file_size(const struct msr_source *s)
{
	return s->file_size;
}

void msr_source_close(struct msr_source *s)
{
	if (!s)
		return;
	msr_ahead_stop(s->ahead);
	if (s->f && !s->is_stdin)
		fclose(s->f);
	ZSTD_freeDCtx(s->zdc);
	free(s->in);
	free(s->ring);
	free(s->buf);
	free(s);
}
