/*
 * decode_bin.c - the binary PLI message decoder: the hot path of every run.
 *
 * Decodes messages straight from the source block with one switch on the
 * code byte; a message split across two blocks is gathered in the reader's
 * small carry buffer. Register-delta records are framed with the "delta
 * open" flag of pli-other.md. Must never allocate, never call per byte, and
 * never guess: an unknown code is fatal (there is no resynchronisation).
 */
#include "bytes-internal.h"
#include "reader-internal.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Error paths stay out of line so the decode switch keeps a small frame. */
#define COLD __attribute__((cold, noinline))
#define HOT_INLINE __attribute__((always_inline)) inline

/* 40-bit field reading exactly its 5 bytes (it may end the buffer). */
static inline uint64_t be40(const uint8_t *p)
{
	return (uint64_t)p[0] << 32 | msr_be32(p + 1);
}

COLD static int bad_field(struct msr_trace_reader *r, uint64_t off, unsigned code,
		     const char *field, unsigned value, const char *expect,
		     struct msr_error *err)
{
	char where[1200];
	const struct msr_msgdef *def = msr_msgdef_get(code);

	msr_reader_where_offset(r, off, where, sizeof(where));
	return msr_error_set(err, MSR_E_FORMAT, "trace", where,
			     "bad %s=%u in message code=0x%02x (%s): expected %s",
			     field, value, code, def ? def->name : "?", expect);
}

COLD static int check_tnum(struct msr_trace_reader *r, uint64_t off, unsigned code,
		      unsigned tnum, struct msr_error *err)
{
	char where[1200];
	const struct msr_msgdef *def;

	if (tnum < r->opts.strands)
		return MSR_OK;
	def = msr_msgdef_get(code);
	msr_reader_where_offset(r, off, where, sizeof(where));
	return msr_error_set(err, MSR_E_FORMAT, "trace", where,
			     "strand out of range tnum=%u in message code=0x%02x "
			     "(%s): expected tnum < %u",
			     tnum, code, def ? def->name : "?", r->opts.strands);
}

COLD static int check_cid(struct msr_trace_reader *r, uint64_t off, unsigned code,
		     unsigned cid, struct msr_error *err)
{
	char exp[48];

	if (cid < r->opts.cores)
		return MSR_OK;
	snprintf(exp, sizeof(exp), "cid < %u", r->opts.cores);
	return bad_field(r, off, code, "cid", cid, exp, err);
}

COLD static int unknown_code(struct msr_trace_reader *r, uint64_t off, unsigned code,
			struct msr_error *err)
{
	char where[1200];

	msr_reader_where_offset(r, off, where, sizeof(where));
	return msr_error_set(err, MSR_E_FORMAT, "trace", where,
			     "unknown message code=0x%02x%s", code,
			     r->delta_open ? " (a register delta is open)" : "");
}

void msr_event_fill_other(struct msr_event *ev, const struct msr_msgdef *def)
{
	/* ev->bytes holds the payload after the code: message offset k is
	 * bytes[k - 1]. */
	if (def->other_tnum_at)
		ev->tnum = ev->bytes[def->other_tnum_at - 1];
	if (def->other_ts_at)
		ev->ts = msr_be32(ev->bytes + def->other_ts_at - 1);
	if (def->code == MSR_CSR_READ || def->code == MSR_PIO_READ) {
		ev->pa = msr_be64(ev->bytes);
		ev->data = msr_be64(ev->bytes + 8);
	}
}

static int decode_regdelta(struct msr_trace_reader *r, const uint8_t *p,
			   size_t n, uint64_t off, struct msr_event *ev,
			   size_t *need, struct msr_error *err)
{
	bool extra;
	size_t len, t;
	bool header = p[0] == 0xFF;

	t = header ? 3 : 0;
	if (n <= t) {
		*need = t + 1;
		return 0;
	}
	if (!msr_rd_type(p[t], &extra)) {
		char where[1200];

		msr_reader_where_offset(r, off, where, sizeof(where));
		return msr_error_set(err, MSR_E_FORMAT, "trace", where,
				     "bad register-delta type=0x%02x in header "
				     "record: expected G, W, X, F or C", p[t]);
	}
	len = t + (extra ? 11 : 10);
	if (n < len) {
		*need = len;
		return 0;
	}
	memset(ev, 0, sizeof(*ev));
	ev->code = MSR_REGDELTA;
	ev->rd_type = p[t];
	if (header) {
		ev->flags = MSR_EVF_RD_HEADER;
		ev->rd_tid = (uint16_t)(p[1] | p[2] << 8);
	} else if (p[0] == 0x43 || p[0] == 0x47) {
		ev->flags = MSR_EVF_RD_AMBIGUOUS;
		r->regdelta_ambiguous++;
	}
	t++;
	if (extra)
		ev->rd_extra = p[t++];
	ev->rd_reg = p[t++];
	ev->data = msr_le64(p + t);
	r->delta_open = true;
	r->regdelta_records++;
	return (int)len;
}

static int decode_other(struct msr_trace_reader *r, const uint8_t *p, size_t n,
			uint64_t off, struct msr_event *ev, size_t *need,
			struct msr_error *err)
{
	const struct msr_msgdef *def = msr_msgdef_get(p[0]);
	int rc;

	if (!def || def->memory || def->code > 0xFF)
		return unknown_code(r, off, p[0], err);
	if (n < def->length) {
		*need = def->length;
		return 0;
	}
	memset(ev, 0, sizeof(*ev));
	ev->code = def->code;
	ev->nbytes = (uint8_t)(def->length - 1);
	memcpy(ev->bytes, p + 1, ev->nbytes);
	msr_event_fill_other(ev, def);
	if (def->other_tnum_at) {
		rc = check_tnum(r, off, def->code, ev->tnum, err);
		if (rc)
			return rc;
	}
	return def->length;
}

/*
 * Zero every field but the payload: bytes[] only counts up to nbytes, and
 * clearing 64 bytes less per event is measurable on the hot path.
 */
static inline void clear(struct msr_event *ev)
{
	memset(ev, 0, offsetof(struct msr_event, bytes));
}

#define NEED(L)                        \
	do {                           \
		if (n < (L)) {         \
			*need = (L);   \
			return 0;      \
		}                      \
	} while (0)

#define TNUM(v)                                                      \
	do {                                                         \
		ev->tnum = (v);                                      \
		if (ev->tnum >= r->opts.strands)                     \
			return check_tnum(r, off, c, ev->tnum, err); \
	} while (0)


/* Store side: ST_ISSUE .. ST_ACK. Returns the length, 0 (need) or < 0. */
static HOT_INLINE int decode_store(struct msr_trace_reader *r, const uint8_t *p, size_t n,
			uint64_t off, struct msr_event *ev, size_t *need,
			struct msr_error *err)
{
	unsigned c = p[0];

	switch (c) {
	case MSR_ST_ISSUE:
		NEED(21);
		clear(ev);
		TNUM(p[1]);
		ev->pa = be40(p + 2);
		ev->data = msr_be64(p + 7);
		ev->bmask = p[15];
		ev->itype = p[16];
		ev->ts = msr_be32(p + 17);
		if (ev->itype >= MSR_IT_COUNT)
			return bad_field(r, off, c, "itype", ev->itype, "0..9", err);
		ev->code = (uint16_t)c;
		return 21;
	case MSR_ST_COMMIT:
		NEED(17);
		clear(ev);
		TNUM(p[1]);
		ev->pa = be40(p + 2);
		ev->bmask = p[7];
		ev->invvec = msr_be32(p + 8);
		ev->l2hit = p[12];
		ev->ts = msr_be32(p + 13);
		ev->code = (uint16_t)c;
		return 17;
	case MSR_ST_INV:
		NEED(12);
		clear(ev);
		ev->cid = p[1];
		TNUM(p[2]);
		ev->pa = be40(p + 3);
		ev->ts = msr_be32(p + 8);
		if (ev->cid >= r->opts.cores)
			return check_cid(r, off, c, ev->cid, err);
		ev->code = (uint16_t)c;
		return 12;
	case MSR_ST_UPDATE:
		NEED(11);
		clear(ev);
		TNUM(p[1]);
		ev->pa = be40(p + 2);
		ev->ts = msr_be32(p + 7);
		ev->code = (uint16_t)c;
		return 11;
	default: /* MSR_ST_ACK */
		NEED(7);
		clear(ev);
		TNUM(p[1]);
		ev->rmo = p[2];
		ev->ts = msr_be32(p + 3);
		ev->code = (uint16_t)c;
		return 7;
	}
}

/* Load side: LD_ISSUE, LD_DATA, LD_FILL, and the strand-only messages. */
static HOT_INLINE int decode_load(struct msr_trace_reader *r, const uint8_t *p, size_t n,
		       uint64_t off, struct msr_event *ev, size_t *need,
		       struct msr_error *err)
{
	unsigned c = p[0];

	switch (c) {
	case MSR_LD_ISSUE:
		NEED(13);
		clear(ev);
		TNUM(p[1]);
		ev->pa = be40(p + 2);
		ev->size = p[7];
		ev->itype = p[8];
		ev->ts = msr_be32(p + 9);
		if (ev->itype >= MSR_IT_COUNT)
			return bad_field(r, off, c, "itype", ev->itype, "0..9", err);
		ev->code = (uint16_t)c;
		return 13;
	case MSR_LD_DATA:
		NEED(12);
		clear(ev);
		TNUM(p[1]);
		ev->pa = be40(p + 2);
		ev->dsrc = p[7];
		ev->ts = msr_be32(p + 8);
		if (ev->dsrc < MSR_DSRC_STB || ev->dsrc > MSR_DSRC_L2)
			return bad_field(r, off, c, "dsrc", ev->dsrc,
					 "1 (STB), 2 (L1) or 3 (L2)", err);
		ev->code = (uint16_t)c;
		return 12;
	case MSR_LD_FILL:
		NEED(11);
		clear(ev);
		TNUM(p[1]);
		ev->pa = be40(p + 2);
		ev->ts = msr_be32(p + 7);
		ev->code = (uint16_t)c;
		return 11;
	default: /* MSR_SSTEP, MSR_LD_POP, MSR_ST_POP */
		NEED(2);
		clear(ev);
		TNUM(p[1]);
		ev->code = (uint16_t)c;
		return 2;
	}
}

/* Messages without a strand: EVICT, EVICT_INV, MEM_SLAM, MEM_CHECK, DMA_ST. */
static HOT_INLINE int decode_system(struct msr_trace_reader *r, const uint8_t *p, size_t n,
			 uint64_t off, struct msr_event *ev, size_t *need,
			 struct msr_error *err)
{
	unsigned c = p[0];
	char exp[48];

	switch (c) {
	case MSR_EVICT:
		NEED(14);
		clear(ev);
		ev->pa = be40(p + 1);
		ev->invvec = msr_be32(p + 6);
		ev->ts = msr_be32(p + 10);
		ev->code = (uint16_t)c;
		return 14;
	case MSR_EVICT_INV:
		NEED(7);
		clear(ev);
		ev->cid = p[1];
		ev->bank = p[2];
		ev->ts = msr_be32(p + 3);
		if (ev->cid >= r->opts.cores)
			return check_cid(r, off, c, ev->cid, err);
		if (ev->bank >= r->opts.l2_banks) {
			snprintf(exp, sizeof(exp), "bank < %u", r->opts.l2_banks);
			return bad_field(r, off, c, "bank", ev->bank, exp, err);
		}
		ev->code = (uint16_t)c;
		return 7;
	case MSR_MEM_SLAM:
		NEED(19);
		clear(ev);
		ev->pa = be40(p + 1);
		ev->data = msr_be64(p + 6);
		ev->bmask = p[14];
		ev->ts = msr_be32(p + 15);
		ev->code = (uint16_t)c;
		return 19;
	case MSR_MEM_CHECK:
		NEED(70);
		clear(ev);
		ev->pa = be40(p + 1);
		memcpy(ev->bytes, p + 6, 64);
		ev->nbytes = 64;
		ev->code = (uint16_t)c;
		return 70;
	default: /* MSR_DMA_ST */
		NEED(21);
		clear(ev);
		ev->pa = be40(p + 1);
		ev->data = msr_be64(p + 6);
		ev->bmask = p[14];
		ev->inv = p[15];
		ev->total = p[16];
		ev->ts = msr_be32(p + 17);
		ev->code = (uint16_t)c;
		return 21;
	}
}

static HOT_INLINE int decode_memory(struct msr_trace_reader *r, const uint8_t *p, size_t n,
			 uint64_t off, struct msr_event *ev, size_t *need,
			 struct msr_error *err)
{
	switch (p[0]) {
	case MSR_ST_ISSUE: case MSR_ST_COMMIT: case MSR_ST_INV: case MSR_ST_UPDATE:
	case MSR_ST_ACK:
		return decode_store(r, p, n, off, ev, need, err);
	case MSR_LD_ISSUE: case MSR_LD_DATA: case MSR_LD_FILL: case MSR_SSTEP:
	case MSR_LD_POP: case MSR_ST_POP:
		return decode_load(r, p, n, off, ev, need, err);
	case MSR_EVICT: case MSR_EVICT_INV: case MSR_MEM_SLAM: case MSR_MEM_CHECK:
	case MSR_DMA_ST:
		return decode_system(r, p, n, off, ev, need, err);
	default:
		return decode_other(r, p, n, off, ev, need, err);
	}
}

static HOT_INLINE int decode_msg(struct msr_trace_reader *r, const uint8_t *p, size_t n,
				 uint64_t off, struct msr_event *ev, size_t *need,
				 struct msr_error *err)
{
	bool extra;

	if (n == 0) {
		*need = 1;
		return 0;
	}
	if (r->delta_open) {
		if (p[0] == 0xFE) {
			memset(ev, 0, sizeof(*ev));
			ev->code = MSR_REGDELTA_END;
			r->delta_open = false;
			return 1;
		}
		if (msr_rd_type(p[0], &extra))
			return decode_regdelta(r, p, n, off, ev, need, err);
	} else if (p[0] == 0xFF) {
		return decode_regdelta(r, p, n, off, ev, need, err);
	}
	return decode_memory(r, p, n, off, ev, need, err);
}

int msr_decode_bin_msg(struct msr_trace_reader *r, const uint8_t *p, size_t n,
		       uint64_t off, struct msr_event *ev, size_t *need,
		       struct msr_error *err)
{
	return decode_msg(r, p, n, off, ev, need, err);
}

COLD static int truncated(struct msr_trace_reader *r, const uint8_t *p, size_t got,
		     size_t need, struct msr_error *err)
{
	char where[1200];
	size_t full = need;
	bool extra;

	msr_reader_where_offset(r, r->off, where, sizeof(where));
	if ((p[0] == 0xFF && !r->delta_open) || (r->delta_open && msr_rd_type(p[0], &extra))) {
		const char *kind = p[0] == 0xFF ? "header " : "";

		if (p[0] == 0xFF && got < 4)
			return msr_error_set(err, MSR_E_TRUNCATED, "trace", where,
					     "truncated register-delta header record: "
					     "expected at least 4 bytes, got %zu", got);
		return msr_error_set(err, MSR_E_TRUNCATED, "trace", where,
				     "truncated register-delta %srecord type=%c: "
				     "expected %zu bytes, got %zu",
				     kind, p[p[0] == 0xFF ? 3 : 0], full, got);
	}
	return msr_error_set(err, MSR_E_TRUNCATED, "trace", where,
			     "truncated message code=0x%02x: expected %zu bytes, got %zu",
			     p[0], full, got);
}

/* The message straddles blocks: gather it in the carry buffer. */
static int decode_carry(struct msr_trace_reader *r, struct msr_event *ev,
			size_t need, struct msr_error *err)
{
	size_t k = r->len - r->pos;
	int rc;

	memcpy(r->carry, r->buf + r->pos, k);
	r->pos = r->len;
	for (;;) {
		while (k < need) {
			size_t take;

			if (r->pos == r->len) {
				rc = msr_reader_next_block(r, err);
				if (rc == MSR_END)
					return truncated(r, r->carry, k, need, err);
				if (rc)
					return rc;
			}
			take = need - k;
			if (take > r->len - r->pos)
				take = r->len - r->pos;
			memcpy(r->carry + k, r->buf + r->pos, take);
			r->pos += take;
			k += take;
		}
		rc = msr_decode_bin_msg(r, r->carry, k, r->off, ev, &need, err);
		if (rc > 0)
			break;
		if (rc < 0)
			return rc;
	}
	ev->offset = r->off;
	ev->index = r->index++;
	r->off += (size_t)rc;
	return MSR_OK;
}

static int decode_next_any(struct msr_trace_reader *r, struct msr_event *ev,
			   struct msr_error *err);

/* Any message, at a block end or not; marks the reader failed on an error.
 * Out of line, so the fast path below needs no stack frame. */
__attribute__((noinline)) static int decode_next(struct msr_trace_reader *r, struct msr_event *ev,
		       struct msr_error *err)
{
	int rc = decode_next_any(r, ev, err);

	if (rc < 0)
		r->failed = true;
	return rc;
}

/* 40-bit big-endian field at p, read as one word (p[0..7] readable). */
static inline uint64_t be40_word(const uint8_t *p)
{
	return msr_be64(p) >> 24;
}

/* Longest message of the fast path, reads included (ST_ISSUE). */
#define FAST_MSG_MAX 21

/*
 * The hot path: a store or load message lying wholly in the block, decoded
 * with word loads and no call, so it needs no stack frame. Every other
 * message, and any field out of range, goes to decode_next, which decodes
 * it again and reports the precise error.
 */
int msr_decode_bin_next(struct msr_trace_reader *r, struct msr_event *ev,
			struct msr_error *err)
{
	const uint8_t *p;
	unsigned c, len;

	if (r->len - r->pos < FAST_MSG_MAX)
		return decode_next(r, ev, err);
	p = r->buf + r->pos;
	c = p[0];
	switch (c) {
	case MSR_ST_ISSUE:
		if (p[1] >= r->opts.strands || p[16] >= MSR_IT_COUNT)
			return decode_next(r, ev, err);
		clear(ev);
		ev->tnum = p[1];
		ev->pa = be40_word(p + 2);
		ev->data = msr_be64(p + 7);
		ev->bmask = p[15];
		ev->itype = p[16];
		ev->ts = msr_be32(p + 17);
		len = 21;
		break;
	case MSR_ST_COMMIT:
		if (p[1] >= r->opts.strands)
			return decode_next(r, ev, err);
		clear(ev);
		ev->tnum = p[1];
		ev->pa = be40_word(p + 2);
		ev->bmask = p[7];
		ev->invvec = msr_be32(p + 8);
		ev->l2hit = p[12];
		ev->ts = msr_be32(p + 13);
		len = 17;
		break;
	case MSR_ST_INV:
		if (p[2] >= r->opts.strands || p[1] >= r->opts.cores)
			return decode_next(r, ev, err);
		clear(ev);
		ev->cid = p[1];
		ev->tnum = p[2];
		ev->pa = be40_word(p + 3);
		ev->ts = msr_be32(p + 8);
		len = 12;
		break;
	case MSR_ST_UPDATE:
	case MSR_LD_FILL:
		if (p[1] >= r->opts.strands)
			return decode_next(r, ev, err);
		clear(ev);
		ev->tnum = p[1];
		ev->pa = be40_word(p + 2);
		ev->ts = msr_be32(p + 7);
		len = 11;
		break;
	case MSR_ST_ACK:
		if (p[1] >= r->opts.strands)
			return decode_next(r, ev, err);
		clear(ev);
		ev->tnum = p[1];
		ev->rmo = p[2];
		ev->ts = msr_be32(p + 3);
		len = 7;
		break;
	case MSR_LD_ISSUE:
		if (p[1] >= r->opts.strands || p[8] >= MSR_IT_COUNT)
			return decode_next(r, ev, err);
		clear(ev);
		ev->tnum = p[1];
		ev->pa = be40_word(p + 2);
		ev->size = p[7];
		ev->itype = p[8];
		ev->ts = msr_be32(p + 9);
		len = 13;
		break;
	case MSR_LD_DATA:
		if (p[1] >= r->opts.strands || p[7] < MSR_DSRC_STB || p[7] > MSR_DSRC_L2)
			return decode_next(r, ev, err);
		clear(ev);
		ev->tnum = p[1];
		ev->pa = be40_word(p + 2);
		ev->dsrc = p[7];
		ev->ts = msr_be32(p + 8);
		len = 12;
		break;
	case MSR_SSTEP:
	case MSR_LD_POP:
	case MSR_ST_POP:
		if (p[1] >= r->opts.strands)
			return decode_next(r, ev, err);
		clear(ev);
		ev->tnum = p[1];
		len = 2;
		break;
	default:
		return decode_next(r, ev, err);
	}
	ev->code = (uint16_t)c;
	ev->offset = r->off;
	ev->index = r->index++;
	r->pos += len;
	r->off += len;
	return MSR_OK;
}

static int decode_next_any(struct msr_trace_reader *r, struct msr_event *ev,
			   struct msr_error *err)
{
	size_t need = 0;
	int rc;

	if (r->pos == r->len) {
		rc = msr_reader_next_block(r, err);
		if (rc)
			return rc;
	}
	rc = decode_msg(r, r->buf + r->pos, r->len - r->pos, r->off, ev, &need, err);
	if (rc > 0) {
		ev->offset = r->off;
		ev->index = r->index++;
		r->pos += (size_t)rc;
		r->off += (size_t)rc;
		return MSR_OK;
	}
	if (rc < 0)
		return rc;
	return decode_carry(r, ev, need, err);
}
