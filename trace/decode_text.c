/*
 * decode_text.c - the canonical text form (trace-format.md section 2):
 * "# msync-text 1", then one message per line as NAME key=value ...
 *
 * Lines are read in place from the source block (copied only when a line
 * straddles two blocks). Fields may come in any order but each exactly
 * once; numbers must fit their field. Every error names file:line:col and
 * the field. Must never accept a line that the binary encoder could not
 * turn into bytes that decode back to the same event.
 */
#include "reader-internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 12
#define SHOW 40 /* longest value echoed in a message */

struct tok {
	const char *key;
	size_t klen;
	const char *val;
	size_t vlen;
	unsigned col;  /* column of the key */
	unsigned vcol; /* column of the value */
	bool used;
};

struct line {
	const char *p;   /* line start */
	size_t n;
	uint64_t off;    /* byte offset of the line start */
	const char *name;
	size_t nlen;
	unsigned ncol;
	struct tok t[MAX_TOKENS];
	unsigned ntok;
};

static int text_err(struct msr_trace_reader *r, int status, unsigned col,
		    struct msr_error *err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int text_err(struct msr_trace_reader *r, int status, unsigned col,
		    struct msr_error *err, const char *fmt, ...)
{
	char where[1200];
	char text[256];
	va_list ap;

	snprintf(where, sizeof(where), "%s:%u:%u", msr_source_path(r->src),
		 r->lineno, col);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return msr_error_set(err, status, "trace", where, "%s", text);
}

/* Next line (without '\n' and a trailing '\r'); MSR_END at end of input. */
static int get_line(struct msr_trace_reader *r, struct line *L, struct msr_error *err)
{
	size_t have = 0;
	int rc;

	L->off = r->off;
	for (;;) {
		const uint8_t *s, *nl;
		size_t avail, take;

		if (r->pos == r->len) {
			rc = msr_reader_next_block(r, err);
			if (rc == MSR_END) {
				if (have == 0)
					return MSR_END;
				break; /* last line without newline */
			}
			if (rc)
				return rc;
		}
		s = r->buf + r->pos;
		avail = r->len - r->pos;
		nl = memchr(s, '\n', avail);
		take = nl ? (size_t)(nl - s) : avail;
		if (have == 0 && nl && take <= MSR_TEXT_LINE_MAX) {
			L->p = (const char *)s; /* the whole line is in the block */
			L->n = take;
			r->pos += take + 1;
			r->off += take + 1;
			goto done;
		}
		if (have + take > MSR_TEXT_LINE_MAX) {
			r->lineno++;
			return text_err(r, MSR_E_FORMAT, 1, err,
					"line too long: more than %u bytes",
					MSR_TEXT_LINE_MAX);
		}
		if (!r->line) {
			r->line = malloc(MSR_TEXT_LINE_MAX);
			if (!r->line)
				return msr_error_set(err, MSR_E_NOMEM, "trace",
						     msr_source_path(r->src), "out of memory");
		}
		memcpy(r->line + have, s, take);
		have += take;
		r->pos += take + (nl ? 1 : 0);
		r->off += take + (nl ? 1 : 0);
		if (nl)
			break;
	}
	L->p = r->line;
	L->n = have;
done:
	r->lineno++;
	if (L->n && L->p[L->n - 1] == '\r')
		L->n--;
	return MSR_OK;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Split into name and key=value tokens; stops at '#'. */
static int tokenize(struct msr_trace_reader *r, struct line *L, struct msr_error *err)
{
	size_t i = 0;

	L->name = NULL;
	L->ntok = 0;
	while (i < L->n) {
		size_t s;

		while (i < L->n && blank(L->p[i]))
			i++;
		if (i == L->n || L->p[i] == '#')
			break;
		s = i;
		while (i < L->n && !blank(L->p[i]))
			i++;
		if (!L->name) {
			L->name = L->p + s;
			L->nlen = i - s;
			L->ncol = (unsigned)s + 1;
			continue;
		}
		const char *eq = memchr(L->p + s, '=', i - s);
		struct tok *t;

		if (!eq || eq == L->p + s)
			return text_err(r, MSR_E_FORMAT, (unsigned)s + 1, err,
					"expected key=value, got '%.*s'", (int)((i - s) > SHOW ? SHOW : (i - s)),
					L->p + s);
		if (L->ntok == MAX_TOKENS)
			return text_err(r, MSR_E_FORMAT, (unsigned)s + 1, err,
					"too many fields: at most %d", MAX_TOKENS);
		t = &L->t[L->ntok];
		t->key = L->p + s;
		t->klen = (size_t)(eq - t->key);
		t->val = eq + 1;
		t->vlen = i - s - t->klen - 1;
		t->col = (unsigned)s + 1;
		t->vcol = t->col + (unsigned)t->klen + 1;
		t->used = false;
		for (unsigned k = 0; k < L->ntok; k++)
			if (L->t[k].klen == t->klen && !memcmp(L->t[k].key, t->key, t->klen))
				return text_err(r, MSR_E_FORMAT, t->col, err,
						"duplicate field %.*s in %.*s", (int)t->klen,
						t->key, (int)L->nlen, L->name);
		L->ntok++;
	}
	return MSR_OK;
}

/* The token for `key`, marked used; NULL when absent. */
static struct tok *find(struct line *L, const char *key)
{
	size_t n = strlen(key);

	for (unsigned k = 0; k < L->ntok; k++)
		if (L->t[k].klen == n && !memcmp(L->t[k].key, key, n)) {
			L->t[k].used = true;
			return &L->t[k];
		}
	return NULL;
}

static int need(struct msr_trace_reader *r, struct line *L, const char *key,
		struct tok **t, struct msr_error *err)
{
	*t = find(L, key);
	if (*t)
		return MSR_OK;
	return text_err(r, MSR_E_FORMAT, (unsigned)L->n + 1, err,
			"missing field %s in %.*s", key, (int)L->nlen, L->name);
}

static int check_unused(struct msr_trace_reader *r, struct line *L, struct msr_error *err)
{
	for (unsigned k = 0; k < L->ntok; k++)
		if (!L->t[k].used)
			return text_err(r, MSR_E_FORMAT, L->t[k].col, err,
					"unknown field %.*s in %.*s", (int)L->t[k].klen,
					L->t[k].key, (int)L->nlen, L->name);
	return MSR_OK;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#define VAL(t) (int)((t)->klen), (t)->key, (int)((t)->vlen > SHOW ? SHOW : (t)->vlen), (t)->val

/*
 * Parse a number into *v, at most `max`. hex_only: 0x + hex digits
 * (pa, data, bmask, invvec); otherwise decimal or 0x + hex.
 */
static int number(struct msr_trace_reader *r, const struct tok *t, bool hex_only,
		  uint64_t max, uint64_t *v, struct msr_error *err)
{
	const char *s = t->val;
	size_t n = t->vlen, i = 0;
	uint64_t x = 0;
	bool hex = n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	bool over = false;

	*v = 0; /* defined on errors too */
	if (hex) {
		for (i = 2; i < n; i++) {
			int d = hexval(s[i]);

			if (d < 0)
				break;
			over |= x >> 60 != 0;
			x = x << 4 | (uint64_t)d;
		}
	} else if (!hex_only) {
		for (i = 0; i < n; i++) {
			if (s[i] < '0' || s[i] > '9')
				break;
			over |= x > (UINT64_MAX - 9) / 10;
			x = x * 10 + (uint64_t)(s[i] - '0');
		}
	}
	if (n == 0 || i != n || (!hex && hex_only))
		return text_err(r, MSR_E_FORMAT, t->vcol, err,
				"bad number %.*s=%.*s: expected %s", VAL(t),
				hex_only ? "0x and hex digits" : "a decimal or 0x-hex number");
	if (over || x > max)
		return text_err(r, MSR_E_FORMAT, t->vcol, err,
				"number out of range %.*s=%.*s: expected at most %s%llx",
				VAL(t), "0x", (unsigned long long)max);
	*v = x;
	return MSR_OK;
}

static int enum_val(struct msr_trace_reader *r, const struct tok *t, bool is_itype,
		    uint8_t *out, struct msr_error *err)
{
	unsigned lo = is_itype ? 0 : 1, hi = is_itype ? MSR_IT_COUNT - 1 : 3;

	for (unsigned v = lo; v <= hi; v++) {
		const char *nm = is_itype ? msr_itype_name(v) : msr_dsrc_name(v);

		if (strlen(nm) == t->vlen && !memcmp(nm, t->val, t->vlen)) {
			*out = (uint8_t)v;
			return MSR_OK;
		}
	}
	return text_err(r, MSR_E_FORMAT, t->vcol, err, "bad %.*s=%.*s: expected %s", VAL(t),
			is_itype ? "NONE, LOAD, BLOCK_LOAD, DOUBLE_LOAD, QUAD_LOAD, PREFETCH, "
				   "STORE, BLOCK_STORE, ATOMIC or BLK_INIT_ST"
				 : "STB, L1 or L2");
}

static int limited(struct msr_trace_reader *r, const struct tok *t, unsigned limit,
		   const char *what, uint8_t *out, struct msr_error *err)
{
	uint64_t v;
	int rc = number(r, t, false, 255, &v, err);

	if (rc)
		return rc;
	if (v >= limit) {
		if (!strcmp(what, "tnum"))
			return text_err(r, MSR_E_FORMAT, t->vcol, err,
					"strand out of range tnum=%llu: expected tnum < %u",
					(unsigned long long)v, limit);
		return text_err(r, MSR_E_FORMAT, t->vcol, err,
				"bad %s=%llu: expected %s < %u", what,
				(unsigned long long)v, what, limit);
	}
	*out = (uint8_t)v;
	return MSR_OK;
}

static int payload(struct msr_trace_reader *r, const struct tok *t, uint8_t *out,
		   size_t nbytes, bool prefix, bool exact, struct msr_error *err)
{
	const char *s = t->val;
	size_t n = t->vlen;

	if (prefix) {
		if (n < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
			goto bad;
		s += 2;
		n -= 2;
	} else if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	for (size_t i = 0; i < n; i++)
		if (hexval(s[i]) < 0)
			goto bad;
	if ((exact && n != 2 * nbytes) || n > 2 * nbytes || (!exact && n == 0))
		return text_err(r, MSR_E_FORMAT, t->vcol, err,
				"bad %.*s: expected %zu bytes (%zu hex digits), got %zu hex digits",
				(int)t->klen, t->key, nbytes, 2 * nbytes, n);
	/* Right-align: fewer digits mean leading zero bytes. */
	memset(out, 0, nbytes);
	for (size_t i = 0; i < n; i++) {
		size_t d = 2 * nbytes - n + i;

		out[d / 2] |= (uint8_t)(hexval(s[i]) << (d % 2 ? 0 : 4));
	}
	return MSR_OK;
bad:
	return text_err(r, MSR_E_FORMAT, t->vcol, err, "bad number %.*s=%.*s: expected %s",
			VAL(t), prefix ? "0x and hex digits" : "hex digits");
}


static int set_field(struct msr_trace_reader *r, struct msr_event *ev,
		     enum msr_field f, const struct tok *t, struct msr_error *err)
{
	uint64_t v = 0;
	int rc;

	switch (f) {
	case MSR_F_TNUM: return limited(r, t, r->opts.strands, "tnum", &ev->tnum, err);
	case MSR_F_CID: return limited(r, t, r->opts.cores, "cid", &ev->cid, err);
	case MSR_F_BANK: return limited(r, t, r->opts.l2_banks, "bank", &ev->bank, err);
	case MSR_F_ITYPE: return enum_val(r, t, true, &ev->itype, err);
	case MSR_F_DSRC: return enum_val(r, t, false, &ev->dsrc, err);
	case MSR_F_PAYLOAD64:
		ev->nbytes = 64;
		return payload(r, t, ev->bytes, 64, true, false, err);
	case MSR_F_PA: rc = number(r, t, true, 0xFFFFFFFFFFull, &v, err); ev->pa = v; return rc;
	case MSR_F_DATA: rc = number(r, t, true, UINT64_MAX, &v, err); ev->data = v; return rc;
	case MSR_F_BMASK: rc = number(r, t, true, 0xFF, &v, err); ev->bmask = (uint8_t)v; return rc;
	case MSR_F_INVVEC:
		rc = number(r, t, true, 0xFFFFFFFFu, &v, err);
		ev->invvec = (uint32_t)v;
		return rc;
	case MSR_F_TS: rc = number(r, t, false, 0xFFFFFFFFu, &v, err); ev->ts = (uint32_t)v; return rc;
	case MSR_F_SIZE: rc = number(r, t, false, 0xFF, &v, err); ev->size = (uint8_t)v; return rc;
	case MSR_F_L2HIT: rc = number(r, t, false, 0xFF, &v, err); ev->l2hit = (uint8_t)v; return rc;
	case MSR_F_RMO: rc = number(r, t, false, 0xFF, &v, err); ev->rmo = (uint8_t)v; return rc;
	case MSR_F_INV: rc = number(r, t, false, 0xFF, &v, err); ev->inv = (uint8_t)v; return rc;
	case MSR_F_TOTAL: rc = number(r, t, false, 0xFF, &v, err); ev->total = (uint8_t)v; return rc;
	case MSR_F_END: break;
	}
	return MSR_OK;
}

static int parse_memory(struct msr_trace_reader *r, struct line *L,
			const struct msr_msgdef *def, struct msr_event *ev,
			struct msr_error *err)
{
	struct tok *t;
	int rc;

	for (const uint8_t *f = def->fields; *f != MSR_F_END; f++) {
		rc = need(r, L, msr_field_name((enum msr_field)*f), &t, err);
		if (rc)
			return rc;
		rc = set_field(r, ev, (enum msr_field)*f, t, err);
		if (rc)
			return rc;
	}
	ev->code = def->code;
	return check_unused(r, L, err);
}

static int parse_msg(struct msr_trace_reader *r, struct line *L,
		     struct msr_event *ev, struct msr_error *err)
{
	const struct msr_msgdef *def;
	struct tok *t;
	uint64_t code;
	int rc;

	rc = need(r, L, "code", &t, err);
	if (rc)
		return rc;
	rc = number(r, t, false, 0xFF, &code, err);
	if (rc)
		return rc;
	def = msr_msgdef_get((unsigned)code);
	if (!def)
		return text_err(r, MSR_E_FORMAT, t->vcol, err, "unknown message code=0x%02x",
				(unsigned)code);
	if (def->memory)
		return text_err(r, MSR_E_FORMAT, t->vcol, err,
				"message code=0x%02x is a memory message: write it as %s with its fields",
				(unsigned)code, def->name);
	if (r->delta_open && (code == MSR_ASI_READ || code == MSR_CSR_READ))
		return text_err(r, MSR_E_FORMAT, t->vcol, err,
				"message code=0x%02x (%s) cannot follow an open register delta: its "
				"code byte would be read as a register-delta record; close the delta "
				"with REGDELTA_END first", (unsigned)code, def->name);
	ev->code = def->code;
	ev->nbytes = (uint8_t)(def->length - 1);
	t = find(L, "bytes");
	if (!t && def->length > 1)
		return need(r, L, "bytes", &t, err);
	if (t) {
		rc = payload(r, t, ev->bytes, (size_t)def->length - 1, false, true, err);
		if (rc)
			return rc;
	}
	msr_event_fill_other(ev, def);
	if (def->other_tnum_at && ev->tnum >= r->opts.strands)
		return text_err(r, MSR_E_FORMAT, t->vcol, err,
				"strand out of range tnum=%u in %s: expected tnum < %u", ev->tnum,
				def->name, r->opts.strands);
	return check_unused(r, L, err);
}

static int parse_regdelta(struct msr_trace_reader *r, struct line *L,
			  struct msr_event *ev, struct msr_error *err)
{
	struct tok *t, *tid = find(L, "tid");
	uint64_t v;
	bool extra;
	int rc;

	if (tid && r->delta_open)
		return text_err(r, MSR_E_FORMAT, L->ncol, err,
				"register-delta header while a delta is open: end the delta "
				"with REGDELTA_END first");
	if (!tid && !r->delta_open)
		return text_err(r, MSR_E_FORMAT, L->ncol, err,
				"register-delta continuation record without an open delta: "
				"give it tid= to make it a header record");
	ev->code = MSR_REGDELTA;
	if (tid) {
		rc = number(r, tid, false, 0xFFFF, &v, err);
		if (rc)
			return rc;
		ev->rd_tid = (uint16_t)v;
		ev->flags |= MSR_EVF_RD_HEADER;
	}
	rc = need(r, L, "type", &t, err);
	if (rc)
		return rc;
	if (t->vlen != 1 || !msr_rd_type((unsigned char)t->val[0], &extra))
		return text_err(r, MSR_E_FORMAT, t->vcol, err,
				"bad type=%.*s: expected G, W, X, F or C",
				(int)(t->vlen > SHOW ? SHOW : t->vlen), t->val);
	ev->rd_type = (uint8_t)t->val[0];
	if (!tid && (ev->rd_type == 'C' || ev->rd_type == 'G'))
		ev->flags |= MSR_EVF_RD_AMBIGUOUS;
	if (extra) {
		rc = need(r, L, "extra", &t, err);
		if (!rc)
			rc = number(r, t, false, 0xFF, &v, err);
		if (rc)
			return rc;
		ev->rd_extra = (uint8_t)v;
	}
	rc = need(r, L, "reg", &t, err);
	if (!rc)
		rc = number(r, t, false, 0xFF, &v, err);
	if (rc)
		return rc;
	ev->rd_reg = (uint8_t)v;
	rc = need(r, L, "value", &t, err);
	if (!rc)
		rc = number(r, t, true, UINT64_MAX, &ev->data, err);
	if (!rc)
		rc = check_unused(r, L, err);
	if (rc)
		return rc;
	r->delta_open = true;
	r->regdelta_records++;
	if (ev->flags & MSR_EVF_RD_AMBIGUOUS)
		r->regdelta_ambiguous++;
	return MSR_OK;
}

static int parse_header(struct msr_trace_reader *r, const struct line *L,
			struct msr_error *err)
{
	static const char magic[] = "# msync-text 1";
	size_t n = L->n;

	while (n && blank(L->p[n - 1]))
		n--;
	if (n == sizeof(magic) - 1 && !memcmp(L->p, magic, n))
		return MSR_OK;
	return text_err(r, MSR_E_FORMAT, 1, err,
			"bad header: expected '# msync-text 1' as the first line");
}

/* 1 = event, 0 = nothing on this line, < 0 = error */
static int parse_line(struct msr_trace_reader *r, struct line *L,
		      struct msr_event *ev, struct msr_error *err)
{
	const struct msr_msgdef *def;
	int rc = tokenize(r, L, err);

	if (rc)
		return rc;
	if (!L->name)
		return 0;
	memset(ev, 0, sizeof(*ev));
	if (L->nlen == 3 && !memcmp(L->name, "MSG", 3)) {
		rc = parse_msg(r, L, ev, err);
	} else if (L->nlen == 8 && !memcmp(L->name, "REGDELTA", 8)) {
		rc = parse_regdelta(r, L, ev, err);
	} else if (L->nlen == 12 && !memcmp(L->name, "REGDELTA_END", 12)) {
		if (!r->delta_open)
			return text_err(r, MSR_E_FORMAT, L->ncol, err,
					"REGDELTA_END without an open register delta");
		rc = check_unused(r, L, err);
		ev->code = MSR_REGDELTA_END;
		if (!rc)
			r->delta_open = false;
	} else {
		def = msr_msgdef_by_name(L->name, L->nlen);
		if (!def || !def->memory)
			return text_err(r, MSR_E_FORMAT, L->ncol, err,
					"unknown message name '%.*s'%s",
					(int)(L->nlen > SHOW ? SHOW : L->nlen), L->name,
					def ? ": write non-memory messages as MSG code=0x.. bytes=..." : "");
		rc = parse_memory(r, L, def, ev, err);
	}
	return rc ? rc : 1;
}

int msr_decode_text_next(struct msr_trace_reader *r, struct msr_event *ev,
			 struct msr_error *err)
{
	struct line L;
	int rc;

	for (;;) {
		rc = get_line(r, &L, err);
		if (rc == MSR_END && r->lineno == 0)
			return text_err(r, MSR_E_FORMAT, 1, err,
					"empty input: expected '# msync-text 1' as the first line");
		if (rc)
			return rc;
		if (r->lineno == 1) {
			rc = parse_header(r, &L, err);
			if (rc)
				return rc;
			continue;
		}
		rc = parse_line(r, &L, ev, err);
		if (rc < 0)
			return rc;
		if (rc == 1)
			break;
	}
	ev->index = r->index++;
	ev->offset = L.off;
	ev->line = r->lineno;
	return MSR_OK;
}
