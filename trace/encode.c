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

/* Memory messages, one case per code (the generator's and slice's hot path). */
static size_t encode_memory(const struct msr_event *ev, uint8_t *out)
{
	uint8_t *o = out + 1;

	out[0] = (uint8_t)ev->code;
	switch (ev->code) {
	case MSR_ST_ISSUE:
		*o++ = ev->tnum;
		o = put_be(o, ev->pa, 5);
		o = put_be(o, ev->data, 8);
		*o++ = ev->bmask;
		*o++ = ev->itype;
		break;
	case MSR_ST_COMMIT:
		*o++ = ev->tnum;
		o = put_be(o, ev->pa, 5);
		*o++ = ev->bmask;
		o = put_be(o, ev->invvec, 4);
		*o++ = ev->l2hit;
		break;
	case MSR_ST_INV:
		*o++ = ev->cid;
		*o++ = ev->tnum;
		o = put_be(o, ev->pa, 5);
		break;
	case MSR_ST_UPDATE:
	case MSR_LD_FILL:
		*o++ = ev->tnum;
		o = put_be(o, ev->pa, 5);
		break;
	case MSR_ST_ACK:
		*o++ = ev->tnum;
		*o++ = ev->rmo;
		break;
	case MSR_LD_ISSUE:
		*o++ = ev->tnum;
		o = put_be(o, ev->pa, 5);
		*o++ = ev->size;
		*o++ = ev->itype;
		break;
	case MSR_LD_DATA:
		*o++ = ev->tnum;
		o = put_be(o, ev->pa, 5);
		*o++ = ev->dsrc;
		break;
	case MSR_EVICT:
		o = put_be(o, ev->pa, 5);
		o = put_be(o, ev->invvec, 4);
		break;
	case MSR_EVICT_INV:
		*o++ = ev->cid;
		*o++ = ev->bank;
		break;
	case MSR_MEM_SLAM:
		o = put_be(o, ev->pa, 5);
		o = put_be(o, ev->data, 8);
		*o++ = ev->bmask;
		break;
	case MSR_LD_POP:
	case MSR_ST_POP:
	case MSR_SSTEP:
		*o++ = ev->tnum;
		return 2; /* no ts */
	case MSR_MEM_CHECK:
		o = put_be(o, ev->pa, 5);
		memcpy(o, ev->bytes, 64);
		return 70; /* no ts */
	case MSR_DMA_ST:
		o = put_be(o, ev->pa, 5);
		o = put_be(o, ev->data, 8);
		*o++ = ev->bmask;
		*o++ = ev->inv;
		*o++ = ev->total;
		break;
	default:
		return 0;
	}
	o = put_be(o, ev->ts, 4);
	return (size_t)(o - out);
}

size_t msr_event_encode_bin(const struct msr_event *ev,
			    uint8_t out[MSR_EVENT_BIN_MAX])
{
	const struct msr_msgdef *def;
	size_t n;

	n = encode_memory(ev, out);
	if (n)
		return n;
	if (ev->code == MSR_REGDELTA)
		return (size_t)(encode_regdelta(ev, out) - out);
	if (ev->code == MSR_REGDELTA_END) {
		out[0] = 0xFE;
		return 1;
	}
	def = msr_msgdef_get(ev->code);
	if (!def || def->memory)
		return 0;
	out[0] = (uint8_t)ev->code;
	memcpy(out + 1, ev->bytes, (size_t)def->length - 1);
	return def->length;
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
