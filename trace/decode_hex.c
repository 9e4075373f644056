/*
 * decode_hex.c - the hex-text variant of the message stream: two lowercase
 * hex digits per byte, line breaks ignored, register-delta records written
 * with decimal tid/extra/regnum and literal type letters (pli-other.md).
 *
 * Each message is turned back into its binary bytes in the carry buffer and
 * handed to the binary decoder, so both variants validate identically.
 * Offsets in errors and events are positions in the hex text. Must never
 * accept uppercase hex digits (C and F are register-delta type letters).
 */
#include "reader-internal.h"

#include <stdio.h>
#include <string.h>

struct hx {
	struct msr_trace_reader *r;
	uint64_t start;  /* offset of the message's first character */
	size_t nbytes;   /* binary bytes gathered so far */
	size_t expect;   /* binary length of the message, 0 while unknown */
	const char *what; /* for truncation messages */
};

static int hx_getc(struct msr_trace_reader *r, int *c, uint64_t *coff,
		   struct msr_error *err)
{
	int rc;

	if (r->pushback >= 0) {
		*c = r->pushback;
		*coff = r->pushback_off;
		r->pushback = -1;
		return MSR_OK;
	}
	for (;;) {
		uint8_t ch;

		if (r->pos == r->len) {
			rc = msr_reader_next_block(r, err);
			if (rc) {
				/* defined even at the end, so no caller
				 * reads an unset character */
				*c = -1;
				*coff = r->off;
				return rc;
			}
		}
		ch = r->buf[r->pos++];
		*coff = r->off++;
		if (ch != '\n' && ch != '\r') {
			*c = ch;
			return MSR_OK;
		}
	}
}

static int hx_bad(struct hx *h, uint64_t coff, int c, const char *expect,
		  struct msr_error *err)
{
	char where[1200];

	msr_reader_where_offset(h->r, coff, where, sizeof(where));
	if (c >= 0x21 && c < 0x7f)
		return msr_error_set(err, MSR_E_FORMAT, "trace", where,
				     "malformed hex: expected %s, got '%c' (0x%02x)",
				     expect, c, c);
	return msr_error_set(err, MSR_E_FORMAT, "trace", where,
			     "malformed hex: expected %s, got byte 0x%02x", expect, c);
}

static int hx_trunc(struct hx *h, struct msr_error *err)
{
	char where[1200];

	msr_reader_where_offset(h->r, h->start, where, sizeof(where));
	if (h->expect)
		return msr_error_set(err, MSR_E_TRUNCATED, "trace", where,
				     "truncated %s: expected %zu bytes, got %zu",
				     h->what, h->expect, h->nbytes);
	return msr_error_set(err, MSR_E_TRUNCATED, "trace", where,
			     "truncated %s: input ends inside the record", h->what);
}

/* Next character inside a message: END there is a truncation. */
static int hx_inner(struct hx *h, int *c, uint64_t *coff, struct msr_error *err)
{
	int rc = hx_getc(h->r, c, coff, err);

	return rc == MSR_END ? hx_trunc(h, err) : rc;
}

static int hexdig(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* `ndig` hex (base 16) or decimal (base 10) digits as one number */
static int hx_num(struct hx *h, int base, int ndig, uint64_t *v, struct msr_error *err)
{
	uint64_t x = 0;

	*v = 0; /* defined on errors too */
	for (int i = 0; i < ndig; i++) {
		int c, d;
		uint64_t coff;
		int rc = hx_inner(h, &c, &coff, err);

		if (rc)
			return rc;
		d = base == 16 ? hexdig(c) : (c >= '0' && c <= '9' ? c - '0' : -1);
		if (d < 0)
			return hx_bad(h, coff, c, base == 16 ? "a lowercase hex digit"
							   : "a decimal digit", err);
		x = x * (uint64_t)base + (uint64_t)d;
	}
	*v = x;
	return MSR_OK;
}

/* The rest of a register-delta record from its type letter on. */
static int hx_record(struct hx *h, int type, struct msr_error *err)
{
	struct msr_trace_reader *r = h->r;
	uint8_t *o = r->carry + h->nbytes;
	uint64_t v = 0;
	bool extra = false;
	int c, rc;
	uint64_t coff;

	msr_rd_type((unsigned)type, &extra);
	*o++ = (uint8_t)type;
	if (extra) {
		rc = hx_num(h, 10, 2, &v, err);
		if (rc)
			return rc;
		*o++ = (uint8_t)v;
	}
	rc = hx_num(h, 10, 2, &v, err);
	if (rc)
		return rc;
	if (type == 'X' && v == 99) {
		/* "999" is the end push (regnum byte 0xE7) */
		rc = hx_inner(h, &c, &coff, err);
		if (rc)
			return rc;
		if (c == '9') {
			v = 0xE7;
		} else {
			r->pushback = c;
			r->pushback_off = coff;
		}
	}
	*o++ = (uint8_t)v;
	rc = hx_num(h, 16, 16, &v, err);
	if (rc)
		return rc;
	for (int i = 0; i < 8; i++)
		*o++ = (uint8_t)(v >> (8 * i));
	h->nbytes = (size_t)(o - r->carry);
	return MSR_OK;
}

static int hx_header(struct hx *h, struct msr_error *err)
{
	struct msr_trace_reader *r = h->r;
	uint64_t tid = 0, coff = 0;
	int c, rc;
	bool extra = false;

	h->what = "register-delta header record";
	rc = hx_num(h, 10, 4, &tid, err);
	if (rc)
		return rc;
	r->carry[1] = (uint8_t)(tid & 0xFF);
	r->carry[2] = (uint8_t)(tid >> 8);
	h->nbytes = 3;
	rc = hx_inner(h, &c, &coff, err);
	if (rc)
		return rc;
	if (!msr_rd_type((unsigned)c, &extra))
		return hx_bad(h, coff, c, "a register-delta type letter G, W, X, F or C", err);
	return hx_record(h, c, err);
}

/* An ordinary message: code byte b, then length-1 bytes as hex pairs. */
static int hx_message(struct hx *h, unsigned b, struct msr_error *err)
{
	struct msr_trace_reader *r = h->r;
	const struct msr_msgdef *def = msr_msgdef_get(b);
	char where[1200];

	if (!def || def->code > 0xFF || (b == 0xFE || b == 0xFF)) {
		msr_reader_where_offset(r, h->start, where, sizeof(where));
		return msr_error_set(err, MSR_E_FORMAT, "trace", where,
				     "unknown message code=0x%02x%s", b,
				     r->delta_open ? " (a register delta is open)" : "");
	}
	h->what = "message";
	h->expect = def->length;
	r->carry[0] = (uint8_t)b;
	h->nbytes = 1;
	while (h->nbytes < def->length) {
		uint64_t v;
		int rc = hx_num(h, 16, 2, &v, err);

		if (rc == MSR_E_TRUNCATED) {
			msr_reader_where_offset(r, h->start, where, sizeof(where));
			return msr_error_set(err, MSR_E_TRUNCATED, "trace", where,
					     "truncated message code=0x%02x: expected %u "
					     "bytes, got %zu", b, def->length, h->nbytes);
		}
		if (rc)
			return rc;
		r->carry[h->nbytes++] = (uint8_t)v;
	}
	return MSR_OK;
}

static int hx_decode(struct hx *h, struct msr_event *ev, bool as_message,
		     struct msr_error *err)
{
	struct msr_trace_reader *r = h->r;
	bool open = r->delta_open;
	size_t need = 0;
	int rc;

	/* In hex, record types are letters: a code byte is always a message. */
	if (as_message)
		r->delta_open = false;
	rc = msr_decode_bin_msg(r, r->carry, h->nbytes, h->start, ev, &need, err);
	if (as_message)
		r->delta_open = open;
	if (rc == 0)
		return msr_error_set(err, MSR_E_INTERNAL, "trace", msr_source_path(r->src),
				     "hex record length mismatch need=%zu", need);
	if (rc < 0)
		return rc;
	ev->offset = h->start;
	ev->index = r->index++;
	return MSR_OK;
}

int msr_decode_hex_next(struct msr_trace_reader *r, struct msr_event *ev,
			struct msr_error *err)
{
	struct hx h = {r, 0, 0, 0, "message"};
	int c, d, rc;
	uint64_t coff;
	bool extra = false;

	rc = hx_getc(r, &c, &h.start, err);
	if (rc)
		return rc;
	if (msr_rd_type((unsigned)c, &extra)) {
		if (!r->delta_open)
			return hx_bad(&h, h.start, c,
				      "a hex digit (register-delta record type letters "
				      "only follow an open delta)", err);
		h.what = "register-delta record";
		rc = hx_record(&h, c, err);
		return rc ? rc : hx_decode(&h, ev, false, err);
	}
	if (hexdig(c) < 0)
		return hx_bad(&h, h.start, c, "a lowercase hex digit", err);
	h.what = "hex byte";
	rc = hx_inner(&h, &d, &coff, err);
	if (rc)
		return rc;
	if (hexdig(d) < 0)
		return hx_bad(&h, coff, d, "a lowercase hex digit", err);
	unsigned b = (unsigned)(hexdig(c) << 4 | hexdig(d));

	if (r->delta_open && b == 0xFE) {
		r->carry[0] = 0xFE;
		h.nbytes = 1;
		return hx_decode(&h, ev, false, err);
	}
	if (!r->delta_open && b == 0xFF) {
		r->carry[0] = 0xFF;
		rc = hx_header(&h, err);
		return rc ? rc : hx_decode(&h, ev, false, err);
	}
	rc = hx_message(&h, b, err);
	return rc ? rc : hx_decode(&h, ev, true, err);
}
