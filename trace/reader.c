/*
 * reader.c - msr_trace_reader: open an input, detect its format from the
 * content and hand out events through the matching decoder.
 *
 * Detection looks only at the first decompressed bytes, never at the file
 * name: "# msync-text" = canonical text; only lowercase hex digits, line
 * breaks and register-delta type letters = hex-text variant; anything else
 * = raw binary. Must never read ahead more than one block.
 */
#include "reader-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DETECT_BYTES 256

void msr_trace_opts_default(struct msr_trace_opts *opts)
{
	opts->strands = 64;
	opts->cores = 8;
	opts->l2_banks = 8;
	opts->format = MSR_FMT_AUTO;
}

int msr_reader_next_block(struct msr_trace_reader *r, struct msr_error *err)
{
	const uint8_t *b;
	size_t n;
	int rc;

	if (r->eof)
		return MSR_END;
	rc = msr_source_read(r->src, &b, &n, err);
	if (rc == MSR_END) {
		r->eof = true;
		r->buf = NULL;
		r->len = r->pos = 0;
		return MSR_END;
	}
	if (rc)
		return rc;
	r->buf = b;
	r->len = n;
	r->pos = 0;
	return MSR_OK;
}

void msr_reader_where_offset(const struct msr_trace_reader *r, uint64_t off,
			     char *buf, size_t size)
{
	snprintf(buf, size, "%s offset=%llu", msr_source_path(r->src),
		 (unsigned long long)off);
}

static bool hex_char(uint8_t c)
{
	bool extra;

	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '\n' ||
	       c == '\r' || msr_rd_type(c, &extra);
}

static enum msr_trace_format detect(const uint8_t *p, size_t n)
{
	static const char text_magic[] = "# msync-text";
	size_t k = n < DETECT_BYTES ? n : DETECT_BYTES;

	if (n == 0)
		return MSR_FMT_BINARY;
	if (n >= sizeof(text_magic) - 1 &&
	    memcmp(p, text_magic, sizeof(text_magic) - 1) == 0)
		return MSR_FMT_TEXT;
	for (size_t i = 0; i < k; i++)
		if (!hex_char(p[i]))
			return MSR_FMT_BINARY;
	return MSR_FMT_HEX;
}

/* Common part of the open functions: `mem` NULL = open the file `path`. */
static int reader_open(const char *path, const void *mem, size_t len, size_t block_max,
		       const struct msr_trace_opts *opts, struct msr_trace_reader **out,
		       struct msr_error *err)
{
	struct msr_trace_reader *r;
	int rc;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return msr_error_set(err, MSR_E_NOMEM, "trace", path, "out of memory");
	r->pushback = -1;
	if (opts)
		r->opts = *opts;
	else
		msr_trace_opts_default(&r->opts);
	if (!r->opts.strands || !r->opts.cores || !r->opts.l2_banks) {
		free(r);
		return msr_error_set(err, MSR_E_USAGE, "trace", path,
				     "strands, cores and l2_banks must be at least 1");
	}
	rc = mem ? msr_source_open_mem(mem, len, path, block_max, &r->src, err)
		 : msr_source_open(path, &r->src, err);
	if (rc)
		goto fail;
	rc = msr_reader_next_block(r, err);
	if (rc < 0)
		goto fail;
	r->format = r->opts.format != MSR_FMT_AUTO ? r->opts.format
						   : detect(r->buf, r->len);
	*out = r;
	return MSR_OK;
fail:
	msr_trace_reader_close(r);
	return rc;
}

int msr_trace_reader_open(const char *path, const struct msr_trace_opts *opts,
			  struct msr_trace_reader **out, struct msr_error *err)
{
	return reader_open(path, NULL, 0, 0, opts, out, err);
}

int msr_trace_reader_open_mem(const void *buf, size_t len, const char *name,
			      const struct msr_trace_opts *opts,
			      struct msr_trace_reader **out, struct msr_error *err)
{
	return reader_open(name, len ? buf : "", len, 0, opts, out, err);
}

int msr_reader_open_mem_blocks(const void *buf, size_t len, const char *name,
			       size_t block_max, const struct msr_trace_opts *opts,
			       struct msr_trace_reader **out, struct msr_error *err)
{
	return reader_open(name, len ? buf : "", len, block_max, opts, out, err);
}

/* Text, hex, and any use after an error. */
__attribute__((noinline)) static int reader_next_other(struct msr_trace_reader *r,
						       struct msr_event *ev,
						       struct msr_error *err)
{
	int rc;

	if (r->failed)
		return msr_error_set(err, MSR_E_USAGE, "trace", msr_source_path(r->src),
				     "reader used after an error");
	switch (r->format) {
	case MSR_FMT_HEX:
		rc = msr_decode_hex_next(r, ev, err);
		break;
	case MSR_FMT_TEXT:
		rc = msr_decode_text_next(r, ev, err);
		break;
	default:
		rc = msr_decode_bin_next(r, ev, err);
		break;
	}
	if (rc < 0)
		r->failed = true;
	return rc;
}

int msr_trace_reader_next(struct msr_trace_reader *r, struct msr_event *ev,
			  struct msr_error *err)
{
	/* binary, the hot case: a tail call (it marks r->failed itself) */
	if (r->format == MSR_FMT_BINARY && !r->failed)
		return msr_decode_bin_next(r, ev, err);
	return reader_next_other(r, ev, err);
}

bool msr_trace_reader_decompress_ahead(struct msr_trace_reader *r)
{
	return msr_source_decompress_ahead(r->src);
}

enum msr_trace_format msr_trace_reader_format(const struct msr_trace_reader *r)
{
	return r->format;
}

bool msr_trace_reader_compressed(const struct msr_trace_reader *r)
{
	return msr_source_compressed(r->src);
}

void msr_trace_reader_get_stats(const struct msr_trace_reader *r,
				struct msr_trace_reader_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->bytes_in = msr_source_bytes_in(r->src);
	st->bytes_out = r->off;
	st->file_size = msr_source_file_size(r->src);
	st->events = r->index;
	st->regdelta_records = r->regdelta_records;
	st->regdelta_ambiguous = r->regdelta_ambiguous;
}

void msr_trace_reader_close(struct msr_trace_reader *r)
{
	if (!r)
		return;
	msr_source_close(r->src);
	free(r->line);
	free(r);
}
