/*
 * output.c - the text outputs of msync-gen: the ISS step log
 * (trace-format.md section 3), the initial memory image (section 4), both
 * through a buffered writer that zstd-compresses when the file name ends in
 * ".zst". The binary trace itself goes through the trace writer of trace.h.
 *
 * Formatting is hand-rolled (no printf per line) because step lines are on
 * the hot path; it must never produce a line the step-log parser rejects.
 */
#include "gen-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define TEXT_BUF (1u << 17)

struct gen_textout {
	FILE *f;
	bool own;
	char *path;
	ZSTD_CCtx *z;
	uint8_t *buf, *zbuf;
	size_t len, zcap;
};

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && !strcmp(s + n - k, suf);
}

static int io_error(const struct gen_textout *t, struct msr_error *err,
		    const char *what)
{
	return msr_error_set(err, MSR_E_IO, "gen", t->path, "cannot %s: %s",
			     what, strerror(errno));
}

int gen_textout_open(const char *path, struct gen_textout **out,
		     struct msr_error *err)
{
	struct gen_textout *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return msr_error_set(err, MSR_E_NOMEM, "gen", path, "out of memory");
	t->path = strdup(path);
	t->buf = malloc(TEXT_BUF);
	if (!t->path || !t->buf)
		goto nomem;
	if (!strcmp(path, "-")) {
		t->f = stdout;
	} else {
		t->f = fopen(path, "wb");
		t->own = true;
		if (!t->f) {
			int rc = io_error(t, err, "create the file");

			t->own = false;
			gen_textout_close(t, NULL);
			return rc;
		}
	}
	if (ends_with(path, ".zst")) {
		t->z = ZSTD_createCCtx();
		t->zcap = ZSTD_CStreamOutSize();
		t->zbuf = malloc(t->zcap);
		if (!t->z || !t->zbuf)
			goto nomem;
		ZSTD_CCtx_setParameter(t->z, ZSTD_c_compressionLevel, 3);
	}
	*out = t;
	return MSR_OK;
nomem:
	gen_textout_close(t, NULL);
	return msr_error_set(err, MSR_E_NOMEM, "gen", path, "out of memory");
}

static int zpump(struct gen_textout *t, ZSTD_EndDirective mode,
		 struct msr_error *err)
{
	ZSTD_inBuffer in = {t->buf, t->len, 0};
	size_t left;

	do {
		ZSTD_outBuffer o = {t->zbuf, t->zcap, 0};

		left = ZSTD_compressStream2(t->z, &o, &in, mode);
		if (ZSTD_isError(left))
			return msr_error_set(err, MSR_E_IO, "gen", t->path,
					     "zstd compression failed: %s",
					     ZSTD_getErrorName(left));
		if (o.pos && fwrite(t->zbuf, 1, o.pos, t->f) != o.pos)
			return io_error(t, err, "write");
	} while (mode == ZSTD_e_end ? left != 0 : in.pos < in.size);
	t->len = 0;
	return MSR_OK;
}

static int flush_buf(struct gen_textout *t, ZSTD_EndDirective mode,
		     struct msr_error *err)
{
	if (t->z)
		return zpump(t, mode, err);
	if (t->len && fwrite(t->buf, 1, t->len, t->f) != t->len)
		return io_error(t, err, "write");
	t->len = 0;
	return MSR_OK;
}

int gen_textout_write(struct gen_textout *t, const void *buf, size_t len,
		      struct msr_error *err)
{
	const uint8_t *p = buf;

	while (len) {
		size_t n = TEXT_BUF - t->len;

		if (n > len)
			n = len;
		memcpy(t->buf + t->len, p, n);
		t->len += n;
		p += n;
		len -= n;
		if (t->len == TEXT_BUF) {
			int rc = flush_buf(t, ZSTD_e_continue, err);

			if (rc < 0)
				return rc;
		}
	}
	return MSR_OK;
}

int gen_textout_close(struct gen_textout *t, struct msr_error *err)
{
	int rc = MSR_OK;

	if (!t)
		return MSR_OK;
	if (t->f && err)
		rc = flush_buf(t, ZSTD_e_end, err);
	if (t->f && rc == MSR_OK && fflush(t->f) != 0)
		rc = io_error(t, err, "write");
	if (t->own && fclose(t->f) != 0 && rc == MSR_OK)
		rc = io_error(t, err, "close");
	ZSTD_freeCCtx(t->z);
	free(t->zbuf);
	free(t->buf);
	free(t->path);
	free(t);
	return rc;
}

/* ---------------------------------------------------------------- */
/* step lines                                                        */
/* ---------------------------------------------------------------- */

static const char hexd[] = "0123456789abcdef";

/* Step-log op names in enum msr_step_op order (trace-format.md 3). */
static const char *const op_names[MSR_STEP_OP_COUNT] = {
	"nop", "ld", "ldd", "ldq", "ldblk", "st", "stblk", "stbi", "cas",
	"swap", "ldstub", "membar", "prefetch",
};

static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

static char *put_hex(char *p, uint64_t v)
{
	char tmp[16];
	int n = 0;

	do {
		tmp[n++] = hexd[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_dec(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_bytes(char *p, const uint8_t *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		*p++ = hexd[b[i] >> 4];
		*p++ = hexd[b[i] & 15];
	}
	return p;
}

size_t gen_step_format(const struct gen_step *st, char *buf, size_t size)
{
	char *p = buf;
	const char *name = st->op < MSR_STEP_OP_COUNT ? op_names[st->op] : NULL;

	if (size < GEN_STEP_LINE_MAX)
		return 0;
	p = put_dec(p, st->tnum);
	*p++ = ' ';
	p = put_hex(p, st->pc);
	*p++ = ' ';
	p = put_str(p, name ? name : "nop");
	if (st->has & MSR_STEP_HAS_PA) {
		p = put_str(p, " pa=");
		p = put_hex(p, st->pa);
	}
	if (st->has & MSR_STEP_HAS_SIZE) {
		p = put_str(p, " size=");
		p = put_dec(p, st->size);
	}
	if (st->has & MSR_STEP_HAS_ST) {
		p = put_str(p, " st=");
		p = put_bytes(p, st->st, st->size);
	}
	if (st->has & MSR_STEP_HAS_LD) {
		p = put_str(p, " ld=");
		p = put_bytes(p, st->ld, st->size);
	}
	if (st->has & MSR_STEP_HAS_MASK) {
		p = put_str(p, " mask=");
		p = put_hex(p, st->mask);
	}
	*p++ = '\n';
	return (size_t)(p - buf);
}
