/*
 * writer.c - msr_trace_writer: events out as binary messages, the hex-text
 * variant or canonical text, optionally zstd-compressed.
 *
 * Output goes through one buffer that is written (or compressed) when
 * full, so the cost per event is an encode and a memcpy. Must never leave a
 * zstd frame unfinished on a clean close, and never write partial events.
 */
#include "reader-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#define WBUF (1u << 18)

struct msr_trace_writer {
	FILE *f;
	bool is_stdout;
	enum msr_trace_format format;
	char path[1024];
	ZSTD_CCtx *cctx;
	uint8_t *buf;
	size_t len;
	uint8_t *zbuf;
	size_t zcap;
	bool started; /* bytes have gone to the file */
};

static int werr(struct msr_trace_writer *w, struct msr_error *err)
{
	return msr_error_set(err, MSR_E_IO, "trace", w->path, "cannot write: %s",
			     strerror(errno ? errno : EIO));
}

static int write_all(struct msr_trace_writer *w, const void *p, size_t n,
		     struct msr_error *err)
{
	if (n && fwrite(p, 1, n, w->f) != n)
		return werr(w, err);
	return MSR_OK;
}

static int compress(struct msr_trace_writer *w, ZSTD_EndDirective mode,
		    struct msr_error *err)
{
	ZSTD_inBuffer in = {w->buf, w->len, 0};
	size_t rem;
	int rc;

	do {
		ZSTD_outBuffer out = {w->zbuf, w->zcap, 0};

		rem = ZSTD_compressStream2(w->cctx, &out, &in, mode);
		if (ZSTD_isError(rem))
			return msr_error_set(err, MSR_E_INTERNAL, "trace", w->path,
					     "zstd compression failed: %s",
					     ZSTD_getErrorName(rem));
		rc = write_all(w, w->zbuf, out.pos, err);
		if (rc)
			return rc;
	} while (mode == ZSTD_e_end ? rem != 0 : in.pos < in.size);
	w->len = 0;
	return MSR_OK;
}

static int flush(struct msr_trace_writer *w, struct msr_error *err)
{
	int rc;

	if (w->cctx)
		return compress(w, ZSTD_e_continue, err);
	/* an EVICT of pa 0xb52ffd.... first encodes as 28 b5 2f fd: every
	 * reader would take the file for zstd */
	if (!w->started && w->format == MSR_FMT_BINARY &&
	    msr_source_zstd_magic(w->buf, w->len))
		return msr_error_set(err, MSR_E_USAGE, "trace", w->path,
				     "the first message encodes as a zstd magic "
				     "number, so this raw binary trace would be read "
				     "back as zstd: write it compressed (--zstd) or "
				     "as hex text (--hex)");
	w->started = true;
	rc = write_all(w, w->buf, w->len, err);
	w->len = 0;
	return rc;
}

int msr_trace_writer_raw(struct msr_trace_writer *w, const void *buf, size_t len,
			 struct msr_error *err)
{
	const uint8_t *p = buf;
	int rc;

	while (len) {
		size_t take = WBUF - w->len;

		if (take > len)
			take = len;
		memcpy(w->buf + w->len, p, take);
		w->len += take;
		p += take;
		len -= take;
		if (w->len == WBUF) {
			rc = flush(w, err);
			if (rc)
				return rc;
		}
	}
	return MSR_OK;
}

int msr_trace_writer_open(const char *path, enum msr_trace_format format,
			  int zstd_level, struct msr_trace_writer **out,
			  struct msr_error *err)
{
	struct msr_trace_writer *w;
	int rc;

	*out = NULL;
	if (format != MSR_FMT_BINARY && format != MSR_FMT_HEX && format != MSR_FMT_TEXT)
		return msr_error_set(err, MSR_E_USAGE, "trace", path,
				     "bad output format=%d", (int)format);
	w = calloc(1, sizeof(*w));
	if (!w)
		return msr_error_set(err, MSR_E_NOMEM, "trace", path, "out of memory");
	snprintf(w->path, sizeof(w->path), "%s", path);
	w->format = format;
	w->buf = malloc(WBUF);
	if (!w->buf) {
		rc = msr_error_set(err, MSR_E_NOMEM, "trace", path, "out of memory");
		goto fail;
	}
	if (zstd_level > 0) {
		w->cctx = ZSTD_createCCtx();
		w->zcap = ZSTD_CStreamOutSize();
		w->zbuf = malloc(w->zcap);
		if (!w->cctx || !w->zbuf) {
			rc = msr_error_set(err, MSR_E_NOMEM, "trace", path, "out of memory");
			goto fail;
		}
		if (zstd_level > ZSTD_maxCLevel())
			zstd_level = ZSTD_maxCLevel();
		ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, zstd_level);
		ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	}
	if (!strcmp(path, "-")) {
		w->f = stdout;
		w->is_stdout = true;
	} else {
		w->f = fopen(path, "wb");
		if (!w->f) {
			rc = msr_error_set(err, MSR_E_IO, "trace", path, "cannot open for writing: %s",
					   strerror(errno));
			goto fail;
		}
	}
	if (format == MSR_FMT_TEXT) {
		rc = msr_trace_writer_raw(w, "# msync-text 1\n", 15, err);
		if (rc)
			goto fail;
	}
	*out = w;
	return MSR_OK;
fail:
	if (w->f && !w->is_stdout)
		fclose(w->f);
	ZSTD_freeCCtx(w->cctx);
	free(w->zbuf);
	free(w->buf);
	free(w);
	return rc;
}

static char *put_dec_fixed(char *o, unsigned v, int digits)
{
	for (int i = digits - 1; i >= 0; i--) {
		o[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return o + digits;
}

/* Register-delta record in the hex-text variant (pli-other.md). */
static int hex_regdelta(struct msr_trace_writer *w, const struct msr_event *ev,
			char *o, size_t *n, struct msr_error *err)
{
	static const char hexd[] = "0123456789abcdef";
	char *s = o;
	bool extra = false;
	bool endpush = ev->rd_type == 'X' && ev->rd_reg == 0xE7;

	msr_rd_type(ev->rd_type, &extra);
	if (ev->rd_tid > 9999 || (extra && ev->rd_extra > 99) ||
	    (ev->rd_reg > 99 && !endpush))
		return msr_error_set(err, MSR_E_FORMAT, "trace", w->path,
				     "register-delta record tid=%u extra=%u reg=%u cannot be "
				     "written in the hex-text variant: it holds tid <= 9999, "
				     "extra and reg <= 99", ev->rd_tid, ev->rd_extra, ev->rd_reg);
	if (ev->flags & MSR_EVF_RD_HEADER) {
		*o++ = 'f';
		*o++ = 'f';
		o = put_dec_fixed(o, ev->rd_tid, 4);
	}
	*o++ = (char)ev->rd_type;
	if (extra)
		o = put_dec_fixed(o, ev->rd_extra, 2);
	o = endpush ? put_dec_fixed(o, 999, 3) : put_dec_fixed(o, ev->rd_reg, 2);
	for (int i = 15; i >= 0; i--)
		*o++ = hexd[(ev->data >> (4 * i)) & 0xF];
	*n = (size_t)(o - s);
	return MSR_OK;
}

static size_t hex_bytes(char *o, const uint8_t *b, size_t n)
{
	static const char hexd[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		o[2 * i] = hexd[b[i] >> 4];
		o[2 * i + 1] = hexd[b[i] & 0xF];
	}
	return 2 * n;
}

int msr_trace_writer_put(struct msr_trace_writer *w, const struct msr_event *ev,
			 struct msr_error *err)
{
	uint8_t bin[MSR_EVENT_BIN_MAX];
	char text[MSR_EVENT_TEXT_MAX + 1];
	size_t n = 0;
	int rc;

	switch (w->format) {
	case MSR_FMT_BINARY:
		n = msr_event_encode_bin(ev, bin);
		if (n == 0)
			goto bad;
		if (w->len + n <= WBUF) { /* fast path */
			memcpy(w->buf + w->len, bin, n);
			w->len += n;
			return MSR_OK;
		}
		return msr_trace_writer_raw(w, bin, n, err);
	case MSR_FMT_HEX:
		if (ev->code == MSR_REGDELTA) {
			rc = hex_regdelta(w, ev, text, &n, err);
			if (rc)
				return rc;
		} else {
			size_t nb = msr_event_encode_bin(ev, bin);

			if (nb == 0)
				goto bad;
			n = hex_bytes(text, bin, nb);
		}
		text[n++] = '\n';
		return msr_trace_writer_raw(w, text, n, err);
	default:
		n = msr_event_format_text(ev, text, sizeof(text));
		text[n++] = '\n';
		return msr_trace_writer_raw(w, text, n, err);
	}
bad:
	return msr_error_set(err, MSR_E_USAGE, "trace", w->path,
			     "cannot encode event code=0x%02x: unknown message code", ev->code);
}

int msr_trace_writer_close(struct msr_trace_writer *w, struct msr_error *err)
{
	int rc;

	if (!w)
		return MSR_OK;
	rc = w->cctx ? compress(w, ZSTD_e_end, err) : flush(w, err);
	if (!rc && fflush(w->f) != 0)
		rc = werr(w, err);
	if (!w->is_stdout && fclose(w->f) != 0 && !rc)
		rc = werr(w, err);
	ZSTD_freeCCtx(w->cctx);
	free(w->zbuf);
	free(w->buf);
	free(w);
	return rc;
}
