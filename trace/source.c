/*
 * source.c - the streaming byte source under every trace/ reader.
 *
 * Opens a file or standard input, detects zstd by the magic number of the
 * first frame (a regular or a skippable frame) and hands out decompressed
 * bytes in large blocks that the decoders read in place. Several frames and
 * skippable frames are handled by libzstd's streaming decoder; windows up to
 * 2 GiB (zstd --long) are accepted. After msr_source_decompress_ahead a
 * helper thread (ahead.c) runs the file reads and the decompression and
 * this file only takes its blocks. Must never read the whole input into
 * memory, and never hands out an empty block.
 */
#include "source-internal.h"

#include "ahead-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zstd.h>

#define RAW_BLOCK (1u << 20)
#define ZIN_BLOCK (1u << 18)
/* The first read lands in the raw buffer before zstd is detected. */
_Static_assert(ZIN_BLOCK <= RAW_BLOCK, "the first compressed block must fit the raw buffer");

struct msr_source {
	FILE *f;
	bool is_stdin;
	bool compressed;
	bool eof;          /* no more file bytes */
	bool done;         /* END returned or error */
	char path[1024];
	uint8_t *buf;      /* raw: file bytes; zstd: decompressed bytes */
	size_t bufcap;
	uint8_t *in;       /* zstd: compressed bytes */
	size_t incap;
	ZSTD_inBuffer zin;
	ZSTD_DStream *zds;
	size_t zret;       /* last ZSTD_decompressStream result: 0 = frame end */
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
	size_t block_max; /* 0 = no limit on a read */
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

	if (s->block_max && want > s->block_max)
		want = s->block_max;
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

static bool is_zstd_magic(const uint8_t *p, size_t n)
{
	uint32_t m;

	if (n < 4)
		return false;
	m = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
	return m == ZSTD_MAGICNUMBER || (m & 0xFFFFFFF0u) == ZSTD_MAGIC_SKIPPABLE_START;
}

static int setup_zstd(struct msr_source *s, struct msr_error *err)
{
	size_t r;

	s->zds = ZSTD_createDStream();
	s->incap = ZIN_BLOCK;
	s->in = malloc(s->incap);
	if (!s->zds || !s->in)
		return msr_error_set(err, MSR_E_NOMEM, "trace", s->path,
				     "out of memory setting up zstd decompression");
	r = ZSTD_DCtx_setParameter(s->zds, ZSTD_d_windowLogMax, 31);
	if (ZSTD_isError(r))
		return msr_error_set(err, MSR_E_INTERNAL, "trace", s->path,
				     "cannot set zstd window limit: %s",
				     ZSTD_getErrorName(r));
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
	s->block_max = block_max;
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
	if (is_zstd_magic(s->buf, s->pending)) {
		s->compressed = true;
		rc = setup_zstd(s, err);
		if (rc)
			return rc;
		memcpy(s->in, s->buf, s->pending);
		s->zin.src = s->in;
		s->zin.size = s->pending;
		s->zin.pos = 0;
		s->pending = 0;
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
	uint64_t end = s->zin_base + s->zin.pos;

	return msr_error_set(err, MSR_E_TRUNCATED, "trace", s->path,
			     "truncated zstd frame at compressed offset=%llu: the "
			     "frame that starts at compressed offset=%llu is incomplete",
			     (unsigned long long)end,
			     (unsigned long long)s->frame_start);
}

/* Decompress up to `cap` bytes into dst. */
static int read_zstd(struct msr_source *s, uint8_t *dst, size_t cap, size_t *len,
		     struct msr_error *err)
{
	ZSTD_outBuffer zout = {dst, cap, 0};
	int rc;

	while (zout.pos < zout.size) {
		size_t out0, in0;

		if (s->zin.pos == s->zin.size && !s->eof) {
			size_t got;

			s->zin_base += s->zin.size;
			rc = fill(s, s->in, s->incap, &got, err);
			if (rc)
				return rc;
			s->zin.size = got;
			s->zin.pos = 0;
		}
		if (s->zin.pos == s->zin.size && s->zret == 0)
			break; /* clean end between frames */
		if (s->zret == 0)
			s->frame_start = s->zin_base + s->zin.pos;
		out0 = zout.pos;
		in0 = s->zin.pos;
		s->zret = ZSTD_decompressStream(s->zds, &zout, &s->zin);
		if (ZSTD_isError(s->zret))
			return msr_error_set(err, MSR_E_FORMAT, "trace", s->path,
					     "corrupt zstd data in the frame at "
					     "compressed offset=%llu: %s",
					     (unsigned long long)s->frame_start,
					     ZSTD_getErrorName(s->zret));
		if (zout.pos == out0 && s->zin.pos == in0)
			break; /* input exhausted, nothing buffered */
	}
	if (zout.pos == 0) {
		/* A frame still expecting input at end of file is cut short. */
		if (s->zret != 0)
			return zstd_truncated(s, err);
		return MSR_END;
	}
	*len = zout.pos;
	return MSR_OK;
}

/* The helper's side: one block, and the file bytes read up to its end. */
static int ahead_produce(void *ctx, uint8_t *dst, size_t cap, size_t *len,
			 uint64_t *bytes_in, struct msr_error *err)
{
	struct msr_source *s = ctx;
	int rc = read_zstd(s, dst, cap, len, err);

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
	s->ahead = msr_ahead_start(ahead_produce, s);
	return s->ahead != NULL;
}

int msr_source_read(struct msr_source *s, const uint8_t **buf, size_t *len,
		    struct msr_error *err)
{
	int rc;

	if (s->done)
		return MSR_END;
	if (s->ahead) {
		/* the caller is done with the last block read here: the
		 * helper's blocks take over */
		free(s->buf);
		s->buf = NULL;
		rc = msr_ahead_take(s->ahead, buf, len, &s->ahead_bytes_in, err);
		if (rc == MSR_AHEAD_EINTR) /* as a read(2) would be */
			rc = io_error(s, err, "read");
	} else if (s->compressed) {
		rc = read_zstd(s, s->buf, s->bufcap, len, err);
		*buf = s->buf;
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
	ZSTD_freeDStream(s->zds);
	free(s->in);
	free(s->buf);
	free(s);
}
