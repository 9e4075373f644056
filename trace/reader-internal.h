/*
 * reader-internal.h - state shared by the trace reader and its decoders
 * (binary, hex-text, canonical text).
 *
 * The reader owns the byte source and the current block; decoders read the
 * block in place and only copy into the small carry buffer (binary, hex) or
 * line buffer (text) when a message or line straddles two blocks. Nothing
 * here may grow with the length of the trace.
 */
#ifndef MSR_READER_INTERNAL_H
#define MSR_READER_INTERNAL_H

#include "source-internal.h"

#define MSR_CARRY_MAX 96          /* > longest binary message (70 bytes) */
#define MSR_TEXT_LINE_MAX 4096    /* longest accepted text line */

struct msr_trace_reader {
	struct msr_source *src;
	struct msr_trace_opts opts;
	enum msr_trace_format format;
	const uint8_t *buf;   /* current block */
	size_t len;
	size_t pos;
	uint64_t off;         /* decompressed offset of buf[pos] */
	bool eof;             /* source returned END */
	bool failed;          /* an error was returned; next() refuses */
	bool delta_open;      /* a register-delta record is open */
	uint64_t index;       /* index of the next event */
	uint64_t regdelta_records;
	uint64_t regdelta_ambiguous;
	/* text: line number of the last line read, line buffer for lines
	 * that straddle blocks */
	uint32_t lineno;
	char *line;
	/* hex: one character of lookahead (-1 = none) and its offset */
	int pushback;
	uint64_t pushback_off;
	uint8_t carry[MSR_CARRY_MAX];
};

/*
 * msr_trace_reader_open_mem with every underlying read capped at
 * `block_max` bytes (tests and fuzzers: messages straddle blocks).
 */
int msr_reader_open_mem_blocks(const void *buf, size_t len, const char *name,
			       size_t block_max, const struct msr_trace_opts *opts,
			       struct msr_trace_reader **out, struct msr_error *err);

/* Fetch the next block into r->buf/len/pos (pos = 0). MSR_END sets r->eof. */
int msr_reader_next_block(struct msr_trace_reader *r, struct msr_error *err);

/* "path offset=N" for binary/hex errors */
void msr_reader_where_offset(const struct msr_trace_reader *r, uint64_t off,
			     char *buf, size_t size);

/*
 * Decode one binary message at p[0..n). Returns the message length (> 0)
 * with *ev filled, 0 when at least *need bytes are required, or a negative
 * status with `err` filled (`off` = offset of p[0], for the message).
 * Updates r->delta_open and the regdelta counters on success.
 */
int msr_decode_bin_msg(struct msr_trace_reader *r, const uint8_t *p, size_t n,
		       uint64_t off, struct msr_event *ev, size_t *need,
		       struct msr_error *err);

/* Fill tnum/ts/pa of a non-memory message from its raw payload ev->bytes. */
void msr_event_fill_other(struct msr_event *ev, const struct msr_msgdef *def);

/* Register-delta type byte: true for G W X F C; *extra = carries an extra byte */
static inline bool msr_rd_type(unsigned c, bool *extra)
{
	switch (c) {
	case 'G': case 'W': case 'X':
		*extra = true;
		return true;
	case 'F': case 'C':
		*extra = false;
		return true;
	default:
		return false;
	}
}

/* The binary decoder also sets r->failed on an error (msr_trace_reader_next
 * hands it straight on). */
int msr_decode_bin_next(struct msr_trace_reader *r, struct msr_event *ev,
			struct msr_error *err);
int msr_decode_hex_next(struct msr_trace_reader *r, struct msr_event *ev,
			struct msr_error *err);
int msr_decode_text_next(struct msr_trace_reader *r, struct msr_event *ev,
			 struct msr_error *err);

#endif /* MSR_READER_INTERNAL_H */
