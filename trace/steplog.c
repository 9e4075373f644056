/*
 * steplog.c - the ISS step-log reader (trace-format.md section 3).
 *
 * Reads "# msync-steps 1" logs, plain or zstd (through msr_source), straight
 * from the source's blocks, one line at a time, with a small carry buffer
 * only for lines split across two blocks. Lines of different strands may be
 * interleaved arbitrarily; msr_steplog_next hands out one strand's lines in
 * program order and parks the lines of other strands it has to read past in
 * per-strand ring queues, bounded by max_lookahead. Every malformed field is
 * an MSR_E_FORMAT error naming file:line:column. It never uses sscanf, never
 * reads the whole log into memory and never interprets memory semantics.
 */
#include "bytes-internal.h"
#include "steplog-internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define STEPLOG_LINE_MAX 4096
#define STEPLOG_DEFAULT_LOOKAHEAD ((size_t)1 << 20)

struct step_queue {
	struct msr_step *ring; /* capacity is a power of two */
	size_t cap, head, count;
	uint64_t drained; /* lines counted (not kept) after the log was drained */
};

struct msr_steplog {
	struct msr_source *src;
	char path[128];
	unsigned strands;
	size_t max_lookahead;
	size_t buffered; /* lines parked in all queues */
	const uint8_t *blk;
	size_t blk_len, blk_pos;
	uint64_t lineno;  /* physical lines read */
	uint64_t steps;   /* step lines parsed */
	bool eof;
	bool header_seen;
	struct step_queue *q;
	char carry[STEPLOG_LINE_MAX];
};

static const char *const op_names[MSR_STEP_OP_COUNT] = {
	"nop", "ld", "ldd", "ldq", "ldblk", "st", "stblk", "stbi",
	"cas", "swap", "ldstub", "membar", "prefetch",
};

const char *msr_step_op_name(unsigned op)
{
	return op < MSR_STEP_OP_COUNT ? op_names[op] : NULL;
}

/* ------------------------------------------------------------------------ */
/* Line parsing                                                              */
/* ------------------------------------------------------------------------ */

/* One line being parsed: columns are counted from `line`. */
struct lctx {
	const struct msr_steplog *log;
	const char *line;
	struct msr_error *err;
};

static int lerr(const struct lctx *c, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int lerr(const struct lctx *c, const char *at, const char *fmt, ...)
{
	char where[200], text[256];
	va_list ap;

	snprintf(where, sizeof(where), "%s:%llu:%llu", c->log->path,
		 (unsigned long long)c->log->lineno,
		 (unsigned long long)(at - c->line) + 1);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return msr_error_set(c->err, MSR_E_FORMAT, "steplog", where, "%s", text);
}

/* Digit value + 1 of every byte, 0 for a non-hex byte: one load a digit. */
static const uint8_t hex_digit1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static int hexval(char ch)
{
	return (int)hex_digit1[(unsigned char)ch] - 1;
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* Skip an optional "0x"/"0X" prefix. */
static const char *skip_0x(const char *p, const char *end)
{
	if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return p + 2;
	return p;
}

/* A hex number of at most `bits` bits spanning exactly [p, end). */
static int parse_hex(const struct lctx *c, const char *p, const char *end,
		     unsigned bits, const char *what, uint64_t *out)
{
	const char *d = skip_0x(p, end);
	uint64_t v = 0;

	if (d == end)
		return lerr(c, p, "empty %s: expected hex digits", what);
	for (const char *q = d; q < end; q++) {
		int h = hexval(*q);

		if (h < 0)
			return lerr(c, q, "bad hex digit '%c' in %s=%.*s", *q, what,
				    (int)(end - p), p);
		if (v >> (bits - 4))
			return lerr(c, p, "%s=%.*s does not fit in %u bits", what,
				    (int)(end - p), p, bits);
		v = v << 4 | (uint64_t)h;
	}
	*out = v;
	return MSR_OK;
}

static int parse_dec(const struct lctx *c, const char *p, const char *end,
		     uint64_t limit, const char *what, uint64_t *out)
{
	uint64_t v = 0;

	if (p == end)
		return lerr(c, p, "empty %s: expected a decimal number", what);
	for (const char *q = p; q < end; q++) {
		if (*q < '0' || *q > '9')
			return lerr(c, q, "bad decimal digit '%c' in %s=%.*s", *q,
				    what, (int)(end - p), p);
		v = v * 10 + (uint64_t)(*q - '0');
		if (v > limit)
			return lerr(c, p, "%s=%.*s out of range: at most %llu", what,
				    (int)(end - p), p, (unsigned long long)limit);
	}
	*out = v;
	return MSR_OK;
}

/* A big-endian byte string of up to 64 bytes (even number of hex digits). */
static int parse_bytes(const struct lctx *c, const char *p, const char *end,
		       const char *what, uint8_t *out, uint8_t *len)
{
	const char *d = skip_0x(p, end);
	size_t n = (size_t)(end - d);

	if (n == 0)
		return lerr(c, p, "empty %s=: expected hex digits", what);
	if (n % 2)
		return lerr(c, p, "%s= has %zu hex digits: expected an even number "
			    "(two per byte)", what, n);
	if (n > 128)
		return lerr(c, p, "%s= has %zu hex digits: at most 128 (64 bytes)",
			    what, n);
	for (size_t i = 0; i < n; i += 2) {
		int hi = hexval(d[i]), lo = hexval(d[i + 1]);

		if (hi < 0 || lo < 0) {
			const char *bad = hi < 0 ? d + i : d + i + 1;

			return lerr(c, bad, "bad hex digit '%c' in %s=", *bad, what);
		}
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	*len = (uint8_t)(n / 2);
	return MSR_OK;
}

/* Which fields an op takes: required, optional, and the fixed size (0 =
 * from size=, which must then be one of `sizes`, a bit set of 1,2,4,8). */
struct op_rule {
	uint8_t req, opt;
	uint8_t fixed_size;
	uint8_t sizes;
	uint8_t default_size; /* when size= is optional and omitted */
};

#define PA MSR_STEP_HAS_PA
#define SZ MSR_STEP_HAS_SIZE
#define LDV MSR_STEP_HAS_LD
#define STV MSR_STEP_HAS_ST
#define MK MSR_STEP_HAS_MASK

static const struct op_rule rules[MSR_STEP_OP_COUNT] = {
	[MSR_STEP_NOP] = {0, 0, 0, 0, 0},
	[MSR_STEP_LD] = {PA | SZ, LDV, 0, 1 | 2 | 4 | 8, 0},
	[MSR_STEP_LDD] = {PA, LDV | SZ, 8, 0, 0},
	[MSR_STEP_LDQ] = {PA, LDV | SZ, 16, 0, 0},
	[MSR_STEP_LDBLK] = {PA, LDV | SZ, 64, 0, 0},
	[MSR_STEP_ST] = {PA | SZ | STV, 0, 0, 1 | 2 | 4 | 8, 0},
	[MSR_STEP_STBLK] = {PA | STV, SZ, 64, 0, 0},
	[MSR_STEP_STBI] = {PA | STV, SZ, 8, 0, 0},
	[MSR_STEP_CAS] = {PA | SZ, LDV | STV, 0, 4 | 8, 0},
	[MSR_STEP_SWAP] = {PA | STV, LDV | SZ, 0, 4, 4},
	[MSR_STEP_LDSTUB] = {PA | STV, LDV | SZ, 0, 1, 1},
	[MSR_STEP_MEMBAR] = {MK, 0, 0, 0, 0},
	[MSR_STEP_PREFETCH] = {PA, SZ, 0, 1 | 2 | 4 | 8 | 16 | 32 | 64, 0},
};

static const char *const field_names[5] = {"pa", "size", "ld", "st", "mask"};

static int field_bit(const char *k, size_t n)
{
	switch (n) {
	case 2:
		if (k[0] == 'p' && k[1] == 'a')
			return PA;
		if (k[0] == 'l' && k[1] == 'd')
			return LDV;
		if (k[0] == 's' && k[1] == 't')
			return STV;
		return 0;
	case 4:
		if (!memcmp(k, "size", 4))
			return SZ;
		if (!memcmp(k, "mask", 4))
			return MK;
		return 0;
	default:
		return 0;
	}
}

static const uint8_t op_len[MSR_STEP_OP_COUNT] = {
	3, 2, 3, 3, 5, 2, 5, 4, 3, 4, 6, 6, 8,
};

static int op_lookup(const char *p, size_t n)
{
	for (int i = 0; i < MSR_STEP_OP_COUNT; i++)
		if (op_len[i] == n && p[0] == op_names[i][0] &&
		    !memcmp(p, op_names[i], n))
			return i;
	return -1;
}

/* Next whitespace-separated token of [*p, end): returns false at the end. */
static bool next_token(const char **p, const char *end, const char **tok,
		       const char **tok_end)
{
	const char *q = *p;

	while (q < end && is_space(*q))
		q++;
	*tok = q; /* an empty token at the end when there is none */
	if (q == end) {
		*tok_end = q;
		return false;
	}
	while (q < end && !is_space(*q))
		q++;
	*tok_end = q;
	*p = q;
	return true;
}

static int parse_field(const struct lctx *c, const char *tok,
		       const char *tok_end, struct msr_step *s,
		       const char *cols[5])
{
	const char *eq = memchr(tok, '=', (size_t)(tok_end - tok));
	const char *v;
	uint64_t x;
	int bit, idx, rc;

	if (!eq)
		return lerr(c, tok, "expected key=value, got '%.*s'",
			    (int)(tok_end - tok), tok);
	bit = field_bit(tok, (size_t)(eq - tok));
	if (!bit)
		return lerr(c, tok, "unknown field '%.*s': expected pa, size, ld, "
			    "st or mask", (int)(eq - tok), tok);
	idx = __builtin_ctz((unsigned)bit);
	if (s->has & bit)
		return lerr(c, tok, "duplicate field %s=", field_names[idx]);
	s->has |= (uint8_t)bit;
	cols[idx] = tok;
	v = eq + 1;
	switch (bit) {
	case PA:
		rc = parse_hex(c, v, tok_end, 40, "pa", &s->pa);
		break;
	case SZ:
		rc = parse_dec(c, v, tok_end, 64, "size", &x);
		s->size = (uint8_t)x;
		break;
	case LDV:
		rc = parse_bytes(c, v, tok_end, "ld", s->ld, &s->ld_len);
		break;
	case STV:
		rc = parse_bytes(c, v, tok_end, "st", s->st, &s->st_len);
		break;
	default:
		rc = parse_hex(c, v, tok_end, 32, "mask", &x);
		s->mask = (uint32_t)x;
		break;
	}
	return rc;
}

/* Check the fields present against the op's rule; fix up the size. */
static int check_fields(const struct lctx *c, struct msr_step *s,
			const char *op_col, const char *cols[5])
{
	const struct op_rule *r = &rules[s->op];
	const char *name = op_names[s->op];
	uint8_t missing = (uint8_t)(r->req & ~s->has);
	uint8_t extra = (uint8_t)(s->has & ~(r->req | r->opt));

	if (extra) {
		int i = __builtin_ctz(extra);

		return lerr(c, cols[i], "field %s= not allowed for op=%s",
			    field_names[i], name);
	}
	if (missing)
		return lerr(c, op_col, "missing required field %s= for op=%s",
			    field_names[__builtin_ctz(missing)], name);
	if (r->fixed_size) {
		if ((s->has & SZ) && s->size != r->fixed_size)
			return lerr(c, cols[1], "size=%u invalid for op=%s: "
				    "expected %u", s->size, name, r->fixed_size);
		s->size = r->fixed_size;
	} else if (r->sizes) {
		if (!(s->has & SZ))
			s->size = r->default_size;
		if (((s->has & SZ) || s->size) && (s->size == 0 || s->size > 64 || (s->size & (s->size - 1)) ||
		    !(s->size & r->sizes)))
			return lerr(c, cols[1] ? cols[1] : op_col,
				    "size=%u invalid for op=%s", s->size, name);
	}
	if ((s->has & PA) && s->size && (s->pa & (uint64_t)(s->size - 1)))
		return lerr(c, cols[0], "pa=0x%010llx not aligned to size=%u",
			    (unsigned long long)s->pa, s->size);
	if ((s->has & LDV) && s->ld_len != s->size)
		return lerr(c, cols[2], "value length does not match size: ld= has "
			    "%u hex digits, expected %u for size=%u",
			    s->ld_len * 2u, s->size * 2u, s->size);
	if ((s->has & STV) && s->st_len != s->size)
		return lerr(c, cols[3], "value length does not match size: st= has "
			    "%u hex digits, expected %u for size=%u",
			    s->st_len * 2u, s->size * 2u, s->size);
	return MSR_OK;
}

/*
 * Fast path for the common shape of a step line, parsed in place in the
 * source block in one pass: single blanks between tokens, plain hex without
 * 0x, no duplicate field, no comment, '\n' line end. Hex runs are validated
 * and packed 16 digits per SSE2 vector (8 per 64-bit word without SSE2).
 * Reads never leave the block: a line starting FAST_WINDOW bytes or more
 * before its end cannot make the parser read past it (at most six fields of
 * at most 140 bytes are looked at), so that copy runs without bounds checks;
 * closer to the end every word and token is checked. Returns NULL, with *s
 * partly filled, on anything else; the caller then reads the line the
 * general way, which gives the same result for a valid line and the precise
 * message for a bad one.
 */
#define FAST_WINDOW 1024
#define FAST_ROOM 16 /* bytes readable at a token start (checked copy) */
#define ALWAYS_INLINE __attribute__((always_inline)) inline

#if defined(__SSE2__)
/*
 * The run of hex digits at p (HEX_RUN characters looked at, one vector):
 * its length, and the first digits packed two to a byte into
 * out[HEX_RUN / 2] in text order (byte 0 = the first two; junk past the
 * run).
 */
#define HEX_RUN 16
static inline unsigned hex_run(const unsigned char *p, uint8_t *out)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i lc = _mm_or_si128(x, _mm_set1_epi8(0x20));
	/* '0'..'9' and 'a'..'f' move to the bottom of the signed range */
	__m128i d = _mm_sub_epi8(x, _mm_set1_epi8((char)0xb0));
	__m128i a = _mm_sub_epi8(lc, _mm_set1_epi8((char)0xe1));
	__m128i isd = _mm_cmplt_epi8(d, _mm_set1_epi8(-118));
	__m128i isa = _mm_cmplt_epi8(a, _mm_set1_epi8(-122));
	/* a non-digit counts as 0, so it cannot spoil its pair */
	__m128i nib = _mm_or_si128(
		_mm_and_si128(isd, _mm_sub_epi8(x, _mm_set1_epi8('0'))),
		_mm_and_si128(isa, _mm_sub_epi8(lc, _mm_set1_epi8('a' - 10))));
	/* 16-bit lane k holds digits 2k (low byte) and 2k + 1 */
	__m128i pair = _mm_or_si128(
		_mm_and_si128(_mm_slli_epi16(nib, 4), _mm_set1_epi16(0xf0)),
		_mm_srli_epi16(nib, 8));
	unsigned hex = (unsigned)_mm_movemask_epi8(_mm_or_si128(isd, isa));

	/* a store, not _mm_cvtsi128_si64: that one is x86-64 only */
	_mm_storel_epi64((__m128i *)(void *)out, _mm_packus_epi16(pair, pair));
	return (unsigned)__builtin_ctz(~hex); /* <= 16 */
}

/*
 * The hex number at p, at most 16 digits: its value, its digit count and
 * the end of the run; NULL for a longer run (or one leaving the block).
 */
static ALWAYS_INLINE const unsigned char *fast_num(const unsigned char *p,
						  const unsigned char *lim,
						  bool checked, uint64_t *out,
						  size_t *ndig)
{
	uint8_t b[8];
	unsigned n;

	if (checked && lim - p < HEX_RUN + 1)
		return NULL;
	n = hex_run(p, b);
	if (n == HEX_RUN && hex_digit1[p[HEX_RUN]])
		return NULL;
	/* the digits, first one highest, are the top n nibbles */
	*out = n ? msr_be64(b) >> (64 - 4 * n) : 0;
	*ndig = n;
	return p + n;
}
#else
#define ONES8 0x0101010101010101ull
#define HIGH8 0x8080808080808080ull

/*
 * 0x80 in every byte of the 8 characters x that is not a hex digit. Exact up
 * to the first byte >= 0x80 (whose carries may spoil the bytes above it), so
 * the lowest set byte is always the first non-digit.
 */
static inline uint64_t hex_bad8(uint64_t x)
{
	uint64_t y = x | ONES8 * 0x20;
	uint64_t dig = (x + ONES8 * (0x80 - '0')) & ~(x + ONES8 * (0x80 - ':'));
	uint64_t alpha = (y + ONES8 * (0x80 - 'a')) & ~(y + ONES8 * (0x80 - 'g'));

	return ((dig | alpha) & ~x & HIGH8) ^ HIGH8;
}

/* 8 hex digits (or NUL padding) -> 4 bytes, the first digits lowest. */
static inline uint32_t hex_pack8(uint64_t x)
{
	uint64_t d = (x & ONES8 * 0x0F) + ((x >> 6) & ONES8) * 9;

	d = ((d << 4) | (d >> 8)) & 0x00FF00FF00FF00FFull;
	d = (d | (d >> 8)) & 0x0000FFFF0000FFFFull;
	return (uint32_t)(d | (d >> 16));
}

/* The first n (< 8) characters of x, the rest zeroed. */
static inline uint64_t low_chars(uint64_t x, unsigned n)
{
	return x & ((1ull << (8 * n)) - 1);
}

/*
 * The hex number at p, at most 16 digits: its value, its digit count and
 * the end of the run; NULL for a longer run (or one leaving the block).
 */
static ALWAYS_INLINE const unsigned char *fast_num(const unsigned char *p,
						  const unsigned char *lim,
						  bool checked, uint64_t *out,
						  size_t *ndig)
{
	uint64_t x, bad, v;
	unsigned n;

	if (checked && lim - p < 9)
		return NULL;
	x = msr_le64(p);
	bad = hex_bad8(x);
	if (bad) {
		n = (unsigned)__builtin_ctzll(bad) / 8;
		*out = n ? __builtin_bswap32(hex_pack8(low_chars(x, n))) >> (32 - 4 * n) : 0;
		*ndig = n;
		return p + n;
	}
	v = __builtin_bswap32(hex_pack8(x));
	if (!hex_digit1[p[8]]) {
		*out = v;
		*ndig = 8;
		return p + 8;
	}
	if (checked && lim - p < 17)
		return NULL;
	x = msr_le64(p + 8);
	bad = hex_bad8(x);
	if (bad) {
		n = (unsigned)__builtin_ctzll(bad) / 8; /* >= 1: p[8] is a digit */
		*out = v << (4 * n) |
		       __builtin_bswap32(hex_pack8(low_chars(x, n))) >> (32 - 4 * n);
		*ndig = 8 + n;
		return p + 8 + n;
	}
	if (hex_digit1[p[16]])
		return NULL;
	*out = v << 32 | __builtin_bswap32(hex_pack8(x));
	*ndig = 16;
	return p + 16;
}

static inline void put4(uint8_t *out, uint32_t b)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	b = __builtin_bswap32(b);
#endif
	memcpy(out, &b, 4);
}

/* hex_run (see the SSE2 version) 8 characters at a time */
#define HEX_RUN 8
static inline unsigned hex_run(const unsigned char *p, uint8_t *out)
{
	uint64_t x = msr_le64(p), bad = hex_bad8(x);
	unsigned n = bad ? (unsigned)__builtin_ctzll(bad) / 8 : 8;

	/* a non-digit would spoil its pair's digit: clear the rest */
	put4(out, hex_pack8(bad ? low_chars(x, n) : x));
	return n;
}
#endif

/* The hex byte string at p into out[64]: its length and the end of the run. */
static ALWAYS_INLINE const unsigned char *fast_bytes(const unsigned char *p,
						    const unsigned char *lim,
						    bool checked, uint8_t *out,
						    uint8_t *len)
{
	const unsigned char *q = p;

	for (unsigned w = 0; w < 128 / HEX_RUN; w++, q += HEX_RUN) {
		unsigned n;

		if (checked && lim - q < HEX_RUN + 1)
			return NULL;
		n = hex_run(q, out + w * (HEX_RUN / 2));
		if (n < HEX_RUN) {
			/* n == 0 only for w == 0: q[0] was checked a digit */
			if (n == 0 || (n & 1))
				return NULL;
			*len = (uint8_t)(w * (HEX_RUN / 2) + n / 2);
			return q + n;
		}
		if (!hex_digit1[q[HEX_RUN]]) {
			*len = (uint8_t)((w + 1) * (HEX_RUN / 2));
			return q + HEX_RUN;
		}
	}
	return NULL; /* over 128 digits */
}

/* Bit 1: a blank; bit 2: a token end (a blank or '\n'). One load a test. */
static const uint8_t tok_class[256] = {[' '] = 3, ['\t'] = 3, ['\n'] = 2};

static inline bool blank(unsigned char ch)
{
	return tok_class[ch] & 1;
}

static inline bool ends_token(unsigned char ch)
{
	return tok_class[ch] & 2;
}

/* The op keyword at p (FAST_ROOM bytes readable): the op, *n its length. */
static ALWAYS_INLINE int fast_op(const unsigned char *p, unsigned *n)
{
#define OP(name, op)                                              \
	do {                                                      \
		if (!memcmp(p, name, sizeof(name) - 1) &&         \
		    ends_token(p[sizeof(name) - 1])) {            \
			*n = sizeof(name) - 1;                    \
			return op;                                \
		}                                                 \
	} while (0)
	switch (p[0]) {
	case 'l':
		OP("ld", MSR_STEP_LD);
		OP("ldd", MSR_STEP_LDD);
		OP("ldq", MSR_STEP_LDQ);
		OP("ldblk", MSR_STEP_LDBLK);
		OP("ldstub", MSR_STEP_LDSTUB);
		break;
	case 's':
		OP("st", MSR_STEP_ST);
		OP("stblk", MSR_STEP_STBLK);
		OP("stbi", MSR_STEP_STBI);
		OP("swap", MSR_STEP_SWAP);
		break;
	case 'n':
		OP("nop", MSR_STEP_NOP);
		break;
	case 'c':
		OP("cas", MSR_STEP_CAS);
		break;
	case 'm':
		OP("membar", MSR_STEP_MEMBAR);
		break;
	case 'p':
		OP("prefetch", MSR_STEP_PREFETCH);
		break;
	default:
		break;
	}
#undef OP
	return -1;
}

/* The rules of check_fields, as one predicate; fixes up the size. */
static inline bool fast_rules(struct msr_step *s)
{
	const struct op_rule *r = &rules[s->op];
	unsigned size = s->size;

	if ((s->has ^ r->req) & ~r->opt)
		return false; /* a field missing or not allowed */
	if (r->fixed_size) {
		if ((s->has & SZ) && size != r->fixed_size)
			return false;
		size = r->fixed_size;
	} else if (r->sizes) {
		if (!(s->has & SZ))
			size = r->default_size;
		if (((s->has & SZ) || size) &&
		    (size == 0 || (size & (size - 1)) || !(size & r->sizes)))
			return false;
	}
	if ((s->has & PA) && size && (s->pa & (uint64_t)(size - 1)))
		return false;
	if ((s->has & LDV) && s->ld_len != size)
		return false;
	if ((s->has & STV) && s->st_len != size)
		return false;
	s->size = (uint8_t)size;
	return true;
}

/* The step line at p in the block ending at lim: the byte after its '\n'. */
static ALWAYS_INLINE const unsigned char *
fast_line_in(const struct msr_steplog *log, const unsigned char *p,
	     const unsigned char *lim, bool checked, struct msr_step *s)
{
	const unsigned char *q;
	unsigned t, d, bit, n;
	size_t nd;
	uint64_t x = 0;
	int op;

	if ((checked && lim - p < FAST_ROOM) || (t = p[0] - (unsigned)'0') > 9)
		return NULL;
	memset(s, 0, offsetof(struct msr_step, ld));
	s->line = log->lineno + 1;
	if ((d = *++p - (unsigned)'0') <= 9) {
		t = t * 10 + d;
		if ((d = *++p - (unsigned)'0') <= 9)
			t = t * 10 + d, p++;
	}
	if (t >= log->strands || !blank(*p))
		return NULL;
	s->tnum = (uint8_t)t;
	q = fast_num(p + 1, lim, checked, &s->pc, &nd);
	if (!q || nd - 1 >= 16 || !blank(*q))
		return NULL;
	p = q + 1;
	if ((checked && lim - p < FAST_ROOM) || (op = fast_op(p, &n)) < 0)
		return NULL;
	s->op = (uint8_t)op;
	q = p + n;
	while (*q != '\n') {
		p = q + 1;
		if (checked && lim - p < FAST_ROOM)
			return NULL;
		switch (p[0]) {
		case 'p':
			if (p[1] != 'a' || p[2] != '=')
				return NULL;
			bit = PA;
			q = fast_num(p + 3, lim, checked, &s->pa, &nd);
			if (q && nd - 1 >= 10)
				return NULL;
			break;
		case 'l':
			if (p[1] != 'd' || p[2] != '=')
				return NULL;
			bit = LDV;
			q = fast_bytes(p + 3, lim, checked, s->ld, &s->ld_len);
			break;
		case 's':
			if (p[1] == 't' && p[2] == '=') {
				bit = STV;
				q = fast_bytes(p + 3, lim, checked, s->st, &s->st_len);
				break;
			}
			if (memcmp(p, "size=", 5) || (t = p[5] - (unsigned)'0') > 9)
				return NULL;
			bit = SZ;
			q = p + 6;
			if ((d = *q - (unsigned)'0') <= 9)
				t = t * 10 + d, q++;
			if (t > 64)
				return NULL;
			s->size = (uint8_t)t;
			break;
		case 'm':
			if (memcmp(p, "mask=", 5))
				return NULL;
			bit = MK;
			q = fast_num(p + 5, lim, checked, &x, &nd);
			if (q && nd - 1 >= 8)
				return NULL;
			s->mask = (uint32_t)x;
			break;
		default:
			return NULL;
		}
		if (!q || !ends_token(*q) || (s->has & bit))
			return NULL;
		s->has |= (uint8_t)bit;
	}
	return fast_rules(s) ? q + 1 : NULL;
}

/* The next line as a step the fast way, if it can: false = not taken. */
static ALWAYS_INLINE bool fast_step(struct msr_steplog *log, struct msr_step *s)
{
	const unsigned char *p, *lim, *next;

	if (!log->header_seen || log->blk_pos == log->blk_len)
		return false; /* (and blk may still be NULL) */
	p = log->blk + log->blk_pos;
	lim = log->blk + log->blk_len;
	next = lim - p >= FAST_WINDOW ? fast_line_in(log, p, lim, false, s)
				       : fast_line_in(log, p, lim, true, s);
	if (!next)
		return false;
	log->blk_pos += (size_t)(next - p);
	log->lineno++;
	log->steps++;
	return true;
}

/* Parse one step line [line, end) (no newline). */
static int parse_step(struct msr_steplog *log, const char *line,
		      const char *end, struct msr_step *s, struct msr_error *err)
{
	struct lctx c = {log, line, err};
	const char *p = line, *tok, *tok_end, *op_col;
	const char *cols[5] = {NULL, NULL, NULL, NULL, NULL};
	uint64_t x;
	int rc, op;

	memset(s, 0, offsetof(struct msr_step, ld));
	s->line = log->lineno;
	next_token(&p, end, &tok, &tok_end); /* the caller saw a non-blank */
	rc = parse_dec(&c, tok, tok_end, log->strands - 1u, "tnum", &x);
	if (rc)
		return rc;
	s->tnum = (uint8_t)x;
	if (!next_token(&p, end, &tok, &tok_end))
		return lerr(&c, end, "missing pc after tnum=%u", s->tnum);
	rc = parse_hex(&c, tok, tok_end, 64, "pc", &s->pc);
	if (rc)
		return rc;
	if (!next_token(&p, end, &tok, &tok_end))
		return lerr(&c, end, "missing op after pc");
	op = op_lookup(tok, (size_t)(tok_end - tok));
	if (op < 0)
		return lerr(&c, tok, "unknown op '%.*s': expected nop, ld, ldd, ldq, "
			    "ldblk, st, stblk, stbi, cas, swap, ldstub, membar or "
			    "prefetch", (int)(tok_end - tok), tok);
	s->op = (uint8_t)op;
	op_col = tok;
	while (next_token(&p, end, &tok, &tok_end)) {
		if (*tok == '#')
			break; /* a trailing comment */
		rc = parse_field(&c, tok, tok_end, s, cols);
		if (rc)
			return rc;
	}
	return check_fields(&c, s, op_col, cols);
}

/* ------------------------------------------------------------------------ */
/* Reading lines from the source                                             */
/* ------------------------------------------------------------------------ */

static int where_line(const struct msr_steplog *log, char *buf, size_t size)
{
	return snprintf(buf, size, "%s:%llu", log->path,
			(unsigned long long)log->lineno);
}

/*
 * Next physical line, without its newline (and without a trailing '\r').
 * Points into the source block when the line lies inside one, else into
 * the carry buffer. MSR_END at the end of the log.
 */
static int read_line(struct msr_steplog *log, const char **line,
		     const char **end, struct msr_error *err)
{
	size_t carried = 0;
	char where[200];
	int rc;

	for (;;) {
		if (log->blk_pos == log->blk_len) {
			if (log->eof)
				break;
			rc = msr_source_read(log->src, &log->blk, &log->blk_len, err);
			log->blk_pos = 0;
			if (rc == MSR_END) {
				log->eof = true;
				log->blk_len = 0;
				break;
			}
			if (rc < 0)
				return msr_error_wrap(err, "steplog", log->path,
						      "cannot read the step log");
			continue;
		}
		const char *b = (const char *)log->blk + log->blk_pos;
		size_t avail = log->blk_len - log->blk_pos;
		const char *nl = memchr(b, '\n', avail);
		size_t n = nl ? (size_t)(nl - b) : avail;

		if (carried == 0 && nl && n <= sizeof(log->carry)) {
			log->blk_pos += n + 1;
			log->lineno++;
			*line = b;
			*end = b + n;
			goto trim;
		}
		if (carried + n > sizeof(log->carry)) {
			log->lineno++;
			where_line(log, where, sizeof(where));
			return msr_error_set(err, MSR_E_FORMAT, "steplog", where,
					     "line longer than %zu bytes",
					     sizeof(log->carry));
		}
		memcpy(log->carry + carried, b, n);
		carried += n;
		log->blk_pos += nl ? n + 1 : n;
		if (nl)
			goto carried_line;
	}
	if (carried == 0)
		return MSR_END; /* no partial last line */
carried_line:
	log->lineno++;
	*line = log->carry;
	*end = log->carry + carried;
trim:
	if (*end > *line && (*end)[-1] == '\r')
		(*end)--;
	return MSR_OK;
}

static int check_header(struct msr_steplog *log, const char *line,
			const char *end, struct msr_error *err)
{
	static const char magic[] = "# msync-steps ";
	size_t n = (size_t)(end - line);
	char where[200];

	while (n && is_space(line[n - 1]))
		n--;
	where_line(log, where, sizeof(where));
	if (n < sizeof(magic) - 1 || memcmp(line, magic, sizeof(magic) - 1))
		return msr_error_set(err, MSR_E_FORMAT, "steplog", where,
				     "not a step log: the first line must be "
				     "'# msync-steps 1'");
	if (n != sizeof(magic) || line[n - 1] != '1')
		return msr_error_set(err, MSR_E_FORMAT, "steplog", where,
				     "unsupported step-log version=%.*s: this "
				     "build reads version 1",
				     (int)(n - (sizeof(magic) - 1)),
				     line + sizeof(magic) - 1);
	log->header_seen = true;
	return MSR_OK;
}

/*
 * Next step line of any strand into *s, the general way (after fast_step
 * declined it, or for counting the rest of the log); MSR_END at the end.
 */
static int read_step(struct msr_steplog *log, struct msr_step *s,
		     struct msr_error *err)
{
	const char *line = NULL, *end = NULL, *p;
	int rc;

	for (;;) {
		rc = read_line(log, &line, &end, err);
		if (rc == MSR_END && !log->header_seen) {
			log->lineno = 1;
			return msr_error_set(err, MSR_E_FORMAT, "steplog",
					     log->path, "empty step log: the "
					     "first line must be '# msync-steps 1'");
		}
		if (rc)
			return rc;
		if (!log->header_seen) {
			rc = check_header(log, line, end, err);
			if (rc)
				return rc;
			continue;
		}
		for (p = line; p < end && is_space(*p); p++)
			;
		if (p == end || *p == '#')
			continue; /* blank line or comment */
		rc = parse_step(log, line, end, s, err);
		if (rc == MSR_OK)
			log->steps++;
		return rc;
	}
}

/* ------------------------------------------------------------------------ */
/* Per-strand queues                                                         */
/* ------------------------------------------------------------------------ */

/* Copy the fields and only the value bytes in use (a step is ~170 bytes). */
static void step_copy(struct msr_step *dst, const struct msr_step *src)
{
	memcpy(dst, src, offsetof(struct msr_step, ld));
	memcpy(dst->ld, src->ld, src->ld_len);
	memcpy(dst->st, src->st, src->st_len);
}

static int queue_push(struct msr_steplog *log, const struct msr_step *s,
		      struct msr_error *err)
{
	struct step_queue *q = &log->q[s->tnum];

	if (log->buffered >= log->max_lookahead) {
		char where[200];

		where_line(log, where, sizeof(where));
		return msr_error_set(err, MSR_E_NOMEM, "steplog", where,
				     "step-log lookahead limit exceeded: %zu lines "
				     "of other strands buffered, max_lookahead=%zu "
				     "(raise limits.step_lookahead, or the trace and "
				     "the step log do not belong together)",
				     log->buffered, log->max_lookahead);
	}
	if (q->count == q->cap) {
		size_t ncap = q->cap ? q->cap * 2 : 16;
		struct msr_step *r = malloc(ncap * sizeof(*r));

		if (!r)
			return msr_error_set(err, MSR_E_NOMEM, "steplog", log->path,
					     "out of memory buffering step lines");
		for (size_t i = 0; i < q->count; i++)
			step_copy(&r[i], &q->ring[(q->head + i) & (q->cap - 1)]);
		free(q->ring);
		q->ring = r;
		q->cap = ncap;
		q->head = 0;
	}
	step_copy(&q->ring[(q->head + q->count) & (q->cap - 1)], s);
	q->count++;
	log->buffered++;
	return MSR_OK;
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */
/* ------------------------------------------------------------------------ */

int msr_steplog_open_source(struct msr_source *src, const char *path,
			    unsigned strands, size_t max_lookahead,
			    struct msr_steplog **out, struct msr_error *err)
{
	struct msr_steplog *log;

	*out = NULL;
	if (strands == 0 || strands > 256) {
		msr_source_close(src);
		return msr_error_set(err, MSR_E_USAGE, "steplog", path,
				     "strands=%u out of range 1..256", strands);
	}
	log = calloc(1, sizeof(*log));
	if (log)
		log->q = calloc(strands, sizeof(*log->q));
	if (!log || !log->q) {
		free(log);
		msr_source_close(src);
		return msr_error_set(err, MSR_E_NOMEM, "steplog", path,
				     "out of memory");
	}
	snprintf(log->path, sizeof(log->path), "%s", path);
	log->strands = strands;
	log->max_lookahead = max_lookahead ? max_lookahead : STEPLOG_DEFAULT_LOOKAHEAD;
	log->src = src;
	*out = log;
	return MSR_OK;
}

int msr_steplog_open(const char *path, unsigned strands, size_t max_lookahead,
		     struct msr_steplog **out, struct msr_error *err)
{
	struct msr_source *src;
	int rc;

	*out = NULL;
	if (strands == 0 || strands > 256)
		return msr_error_set(err, MSR_E_USAGE, "steplog", path,
				     "strands=%u out of range 1..256", strands);
	rc = msr_source_open(path, &src, err);
	if (rc)
		return rc;
	return msr_steplog_open_source(src, path, strands, max_lookahead, out,
				       err);
}

int msr_steplog_next(struct msr_steplog *log, unsigned tnum,
		     struct msr_step *step, struct msr_error *err)
{
	struct step_queue *q;
	int rc;

	if (tnum >= log->strands)
		return msr_error_set(err, MSR_E_USAGE, "steplog", log->path,
				     "tnum=%u out of range: strands=%u", tnum,
				     log->strands);
	q = &log->q[tnum];
	if (q->count) {
		step_copy(step, &q->ring[q->head]);
		q->head = (q->head + 1) & (q->cap - 1);
		q->count--;
		log->buffered--;
		return MSR_OK;
	}
	for (;;) {
		if (!fast_step(log, step)) {
			rc = read_step(log, step, err);
			if (rc)
				return rc;
		}
		if (step->tnum == tnum)
			return MSR_OK;
		rc = queue_push(log, step, err);
		if (rc)
			return rc;
	}
}

int msr_steplog_remaining(struct msr_steplog *log, unsigned tnum,
			  uint64_t *count, struct msr_error *err)
{
	struct msr_step s;
	int rc;

	*count = 0;
	if (tnum >= log->strands)
		return msr_error_set(err, MSR_E_USAGE, "steplog", log->path,
				     "tnum=%u out of range: strands=%u", tnum,
				     log->strands);
	/* Count the rest of the log without keeping it: memory stays bounded. */
	while ((rc = read_step(log, &s, err)) == MSR_OK)
		log->q[s.tnum].drained++;
	if (rc < 0)
		return rc;
	*count = log->q[tnum].count + log->q[tnum].drained;
	return MSR_OK;
}

uint64_t msr_steplog_lines(const struct msr_steplog *log)
{
	return log->steps;
}

bool msr_steplog_decompress_ahead(struct msr_steplog *log)
{
	return msr_source_decompress_ahead(log->src);
}

void msr_steplog_close(struct msr_steplog *log)
{
	if (!log)
		return;
	if (log->q)
		for (unsigned i = 0; i < log->strands; i++)
			free(log->q[i].ring);
	free(log->q);
	if (log->src)
		msr_source_close(log->src);
	free(log);
}
