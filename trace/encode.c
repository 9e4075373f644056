/*
 * encode.c - events back to bytes: the binary message form and the
 * canonical text form (trace-format.md section 2).
 *
 * Both encoders are exact inverses of the decoders: decode then encode
 * reproduces the input bytes, non-memory messages and register-delta
 * records included. They never allocate and never fail on a decoded event.
 */
#include "reader-internal.h"

#include <string.h>

static inline uint8_t *put_be(uint8_t *o, uint64_t v, int nbytes)
{
	for (int i = nbytes - 1; i >= 0; i--)
		*o++ = (uint8_t)(v >> (8 * i));
	return o;
}

static uint8_t *encode_regdelta(const struct msr_event *ev, uint8_t *o)
{
	bool extra;

	if (ev->flags & MSR_EVF_RD_HEADER) {
		*o++ = 0xFF;
		*o++ = (uint8_t)(ev->rd_tid & 0xFF);
		*o++ = (uint8_t)(ev->rd_tid >> 8);
	}
	*o++ = ev->rd_type;
	if (msr_rd_type(ev->rd_type, &extra) && extra)
		*o++ = ev->rd_extra;
	*o++ = ev->rd_reg;
	for (int i = 0; i < 8; i++)
		*o++ = (uint8_t)(ev->data >> (8 * i));
	return o;
}

size_t msr_event_encode_bin(const struct msr_event *ev,
			    uint8_t out[MSR_EVENT_BIN_MAX])
{
	const struct msr_msgdef *def;
	uint8_t *o = out;

	if (ev->code == MSR_REGDELTA)
		return (size_t)(encode_regdelta(ev, o) - out);
	if (ev->code == MSR_REGDELTA_END) {
		out[0] = 0xFE;
		return 1;
	}
	def = msr_msgdef_get(ev->code);
	if (!def)
		return 0;
	*o++ = (uint8_t)ev->code;
	if (!def->memory) {
		memcpy(o, ev->bytes, (size_t)def->length - 1);
		return def->length;
	}
	for (const uint8_t *f = def->fields; *f != MSR_F_END; f++) {
		switch ((enum msr_field)*f) {
		case MSR_F_TNUM: *o++ = ev->tnum; break;
		case MSR_F_CID: *o++ = ev->cid; break;
		case MSR_F_BANK: *o++ = ev->bank; break;
		case MSR_F_PA: o = put_be(o, ev->pa, 5); break;
		case MSR_F_DATA: o = put_be(o, ev->data, 8); break;
		case MSR_F_BMASK: *o++ = ev->bmask; break;
		case MSR_F_ITYPE: *o++ = ev->itype; break;
		case MSR_F_SIZE: *o++ = ev->size; break;
		case MSR_F_DSRC: *o++ = ev->dsrc; break;
		case MSR_F_INVVEC: o = put_be(o, ev->invvec, 4); break;
		case MSR_F_L2HIT: *o++ = ev->l2hit; break;
		case MSR_F_RMO: *o++ = ev->rmo; break;
		case MSR_F_INV: *o++ = ev->inv; break;
		case MSR_F_TOTAL: *o++ = ev->total; break;
		case MSR_F_TS: o = put_be(o, ev->ts, 4); break;
		case MSR_F_PAYLOAD64:
			memcpy(o, ev->bytes, 64);
			o += 64;
			break;
		case MSR_F_END: break;
		}
	}
	return (size_t)(o - out);
}

/* ---- text ---- */

static const char hexdig[] = "0123456789abcdef";

static char *put_s(char *o, const char *s)
{
	size_t n = strlen(s);

	memcpy(o, s, n);
	return o + n;
}

static char *put_hex(char *o, uint64_t v, int digits)
{
	*o++ = '0';
	*o++ = 'x';
	for (int i = digits - 1; i >= 0; i--)
		*o++ = hexdig[(v >> (4 * i)) & 0xF];
	return o;
}

static char *put_dec(char *o, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*o++ = tmp[--n];
	return o;
}

static char *put_bytes(char *o, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		*o++ = hexdig[b[i] >> 4];
		*o++ = hexdig[b[i] & 0xF];
	}
	return o;
}

static char *put_name(char *o, const char *name)
{
	size_t n = strlen(name);

	memcpy(o, name, n);
	o += n;
	do
		*o++ = ' ';
	while (++n < 10);
	return o;
}

static char *put_field(char *o, const struct msr_event *ev, enum msr_field f)
{
	const char *s;

	o = put_s(o, msr_field_name(f));
	*o++ = '=';
	switch (f) {
	case MSR_F_TNUM: return put_dec(o, ev->tnum);
	case MSR_F_CID: return put_dec(o, ev->cid);
	case MSR_F_BANK: return put_dec(o, ev->bank);
	case MSR_F_PA: return put_hex(o, ev->pa, 10);
	case MSR_F_DATA: return put_hex(o, ev->data, 16);
	case MSR_F_BMASK: return put_hex(o, ev->bmask, 2);
	case MSR_F_ITYPE:
		s = msr_itype_name(ev->itype);
		return s ? put_s(o, s) : put_dec(o, ev->itype);
	case MSR_F_SIZE: return put_dec(o, ev->size);
	case MSR_F_DSRC:
		s = msr_dsrc_name(ev->dsrc);
		return s ? put_s(o, s) : put_dec(o, ev->dsrc);
	case MSR_F_INVVEC: return put_hex(o, ev->invvec, 8);
	case MSR_F_L2HIT: return put_dec(o, ev->l2hit);
	case MSR_F_RMO: return put_dec(o, ev->rmo);
	case MSR_F_INV: return put_dec(o, ev->inv);
	case MSR_F_TOTAL: return put_dec(o, ev->total);
	case MSR_F_TS: return put_dec(o, ev->ts);
	case MSR_F_PAYLOAD64:
		*o++ = '0';
		*o++ = 'x';
		return put_bytes(o, ev->bytes, 64);
	case MSR_F_END: break;
	}
	return o;
}

static char *format_regdelta(char *o, const struct msr_event *ev)
{
	bool extra = false;

	o = put_name(o, "REGDELTA");
	if (ev->flags & MSR_EVF_RD_HEADER) {
		o = put_s(o, "tid=");
		o = put_dec(o, ev->rd_tid);
		*o++ = ' ';
	}
	o = put_s(o, "type=");
	*o++ = (char)ev->rd_type;
	if (msr_rd_type(ev->rd_type, &extra) && extra) {
		o = put_s(o, " extra=");
		o = put_dec(o, ev->rd_extra);
	}
	o = put_s(o, " reg=");
	o = put_dec(o, ev->rd_reg);
	o = put_s(o, " value=");
	o = put_hex(o, ev->data, 16);
	if (ev->flags & MSR_EVF_RD_AMBIGUOUS)
		o = put_s(o, ev->rd_type == 'C' ? "  # type byte 0x43 read as a record, not ASI_READ"
					  : "  # type byte 0x47 read as a record, not CSR_READ");
	return o;
}

static char *format_other(char *o, const struct msr_event *ev,
			  const struct msr_msgdef *def)
{
	o = put_name(o, "MSG");
	o = put_s(o, "code=");
	o = put_hex(o, ev->code, 2);
	if (def->length > 1) {
		o = put_s(o, " bytes=");
		o = put_bytes(o, ev->bytes, (size_t)def->length - 1);
	}
	o = put_s(o, "  # ");
	o = put_s(o, def->name);
	if (def->other_tnum_at) {
		o = put_s(o, " tnum=");
		o = put_dec(o, ev->tnum);
	}
	if (def->other_ts_at) {
		o = put_s(o, " ts=");
		o = put_dec(o, ev->ts);
	}
	return o;
}

size_t msr_event_format_text(const struct msr_event *ev, char *buf, size_t size)
{
	char tmp[MSR_EVENT_TEXT_MAX];
	char *start = size >= MSR_EVENT_TEXT_MAX ? buf : tmp;
	char *o = start;
	const struct msr_msgdef *def = msr_msgdef_get(ev->code);
	size_t n;

	if (ev->code == MSR_REGDELTA) {
		o = format_regdelta(o, ev);
	} else if (ev->code == MSR_REGDELTA_END) {
		o = put_s(o, "REGDELTA_END");
	} else if (!def) {
		o = put_s(o, "# unknown event code=");
		o = put_hex(o, ev->code, 4);
	} else if (!def->memory) {
		o = format_other(o, ev, def);
	} else {
		o = put_name(o, def->name);
		for (const uint8_t *f = def->fields; *f != MSR_F_END; f++) {
			if (f != def->fields)
				*o++ = ' ';
			o = put_field(o, ev, (enum msr_field)*f);
		}
	}
	n = (size_t)(o - start);
	if (start == tmp) {
		if (!size)
			return n;
		if (n >= size)
			n = size - 1;
		memcpy(buf, tmp, n);
	}
	buf[n] = '\0';
	return n;
}
