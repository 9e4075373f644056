/*
 * trace.h - the trace layer of msync-replay: bytes in, typed events out.
 *
 * Contract: this module turns an input (file, stdin, zstd or not; raw binary
 * PLI message stream, its hex-text variant, or the canonical text form) into a
 * stream of `struct msr_event`, and events back into bytes (canonical text,
 * binary, zstd). It also parses the ISS step log into `struct msr_step`.
 * It never interprets memory semantics (that is engine/), never reads a whole
 * input into memory, never exits or aborts, and keeps no global mutable state.
 * Every failure is returned as a negative `enum msr_status` with a filled
 * `struct msr_error` naming the file, the byte offset or line:column, the
 * message code or field, and a sentence the user can act on.
 *
 * The status enum and the error struct defined here are shared by every
 * module (trace is the bottom of the pipeline, so everyone may include it).
 */
#ifndef MSR_TRACE_H
#define MSR_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status and errors (shared by all modules)                                 */
/* ------------------------------------------------------------------------ */

enum msr_status {
	MSR_OK = 0,
	MSR_END = 1,     /* clean end of input */
	MSR_AGAIN = 2,   /* nothing available yet; call again */
	MSR_E_IO = -1,        /* a file could not be opened, read or written */
	MSR_E_FORMAT = -2,    /* malformed input: bad code, field, syntax */
	MSR_E_TRUNCATED = -3, /* input ends inside a message, frame or line */
	MSR_E_USAGE = -4,     /* bad command line or API use */
	MSR_E_CONFIG = -5,    /* bad configuration file */
	MSR_E_NOMEM = -6,     /* allocation failed or a configured limit hit */
	MSR_E_INTERRUPTED = -7, /* stopped by a signal */
	MSR_E_INTERNAL = -8,  /* a bug in msync-replay */
};

#define MSR_ERROR_MAX_CAUSES 4

struct msr_error_cause {
	char module[16];  /* "trace", "engine", "config", ... */
	char where[160];  /* "nas.trace offset=18312" or "cfg.yaml:3:7"; may be empty */
	char text[256];   /* lowercase sentence, no full stop, name=value context */
};

/*
 * Caller-owned error. Initialise with MSR_ERROR_INIT or msr_error_clear().
 * cause[0] is the innermost (first set) cause; later causes wrap it.
 */
struct msr_error {
	int status;
	unsigned ncauses;
	struct msr_error_cause cause[MSR_ERROR_MAX_CAUSES];
};

#define MSR_ERROR_INIT {0, 0, {{{0}, {0}, {0}}}}

void msr_error_clear(struct msr_error *err);

/*
 * Set the innermost cause (discarding previous ones) and return `status`,
 * so that callers can write `return msr_error_set(err, ...)`.
 * `where` may be NULL or "". `err` may be NULL (then nothing is recorded).
 */
int msr_error_set(struct msr_error *err, int status, const char *module,
		  const char *where, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Add an outer cause (context) to an already set error; returns err->status. */
int msr_error_wrap(struct msr_error *err, const char *module,
		   const char *where, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Format the chain, outermost first, as one line:
 *   "where: text: where: text" (empty parts skipped). Returns `buf`.
 */
char *msr_error_format(const struct msr_error *err, char *buf, size_t size);

/* ------------------------------------------------------------------------ */
/* Events                                                                    */
/* ------------------------------------------------------------------------ */

/* Message codes of the PLI stream (trace-format.md, pli-other.md). */
enum msr_code {
	MSR_QUIT = 0x01,
	MSR_SSTEP = 0x02,
	MSR_IHWTW = 0x11,
	MSR_DHWTW = 0x12,
	MSR_ITLBREAD = 0x13,
	MSR_DTLBREAD = 0x14,
	MSR_ITLBWRITE = 0x15,
	MSR_DTLBWRITE = 0x16,
	MSR_TLBLOOKUP = 0x17,
	MSR_DTLBREAD_POP = 0x18,
	MSR_ST_ISSUE = 0x20,
	MSR_ST_COMMIT = 0x21,
	MSR_ST_INV = 0x22,
	MSR_ST_UPDATE = 0x23,
	MSR_ST_ACK = 0x24,
	MSR_LD_ISSUE = 0x25,
	MSR_LD_DATA = 0x26,
	MSR_LD_FILL = 0x27,
	MSR_EVICT = 0x28,
	MSR_EVICT_INV = 0x29,
	MSR_MEM_SLAM = 0x30,
	MSR_LD_POP = 0x31,
	MSR_ST_POP = 0x32,
	MSR_MEM_CHECK = 0x33,
	MSR_DMA_ST = 0x34,
	MSR_INT_INTP = 0x40,
	MSR_ASR_WRITE = 0x41,
	MSR_ASI_WRITE = 0x42,
	MSR_ASI_READ = 0x43,
	MSR_CMP_WRITE = 0x44,
	MSR_ASR_READ = 0x45,
	MSR_CSR_READ = 0x47,
	MSR_PIO_READ = 0x49,
	/* Register-delta records are not PLI messages; they get pseudo codes
	 * outside the byte range so that a switch on `code` covers them. */
	MSR_REGDELTA = 0x100,     /* header (rd_header=1) or continuation record */
	MSR_REGDELTA_END = 0x101, /* the 0xFE end-of-delta byte */
};

#define MSR_CODE_LIMIT 0x102 /* size of tables indexed by code */

/* itype values (ST_ISSUE, LD_ISSUE) */
enum msr_itype {
	MSR_IT_NONE = 0,
	MSR_IT_LOAD = 1,
	MSR_IT_BLOCK_LOAD = 2,
	MSR_IT_DOUBLE_LOAD = 3,
	MSR_IT_QUAD_LOAD = 4,
	MSR_IT_PREFETCH = 5,
	MSR_IT_STORE = 6,
	MSR_IT_BLOCK_STORE = 7,
	MSR_IT_ATOMIC = 8,
	MSR_IT_BLK_INIT_ST = 9,
	MSR_IT_COUNT = 10
};

/* dsrc values (LD_DATA) */
enum msr_dsrc { MSR_DSRC_STB = 1, MSR_DSRC_L1 = 2, MSR_DSRC_L2 = 3 };

/* Event flags */
#define MSR_EVF_RD_HEADER 0x01   /* REGDELTA: header record (has tid) */
#define MSR_EVF_RD_AMBIGUOUS 0x02 /* REGDELTA: type byte was also a message code */

/*
 * One decoded message. Only the fields of the message's layout are
 * meaningful; the others are zero, except that bytes[] is defined only up
 * to nbytes (the binary decoder leaves the rest as it was, for speed). `index` and `offset` are set by the
 * reader. For messages the engine does not interpret (pli-other.md) the
 * payload bytes after the code are kept verbatim in `bytes` so that
 * encoders reproduce them exactly; named fields that the tools use for
 * filtering (tnum, ts, pa) are filled as well where the layout has them.
 */
struct msr_event {
	uint64_t index;   /* 0-based position in the event stream */
	uint64_t offset;  /* byte offset of the event's first byte in the
			   * (decompressed) input */
	uint64_t pa;      /* 40-bit physical address; 64-bit for CSR/PIO_READ */
	uint64_t data;    /* 8-byte data word, big-endian value (byte 0 = MSB =
			   * lowest address); REGDELTA: the register value */
	uint32_t ts;
	uint32_t invvec;
	uint32_t line;    /* text inputs: 1-based line number; else 0 */
	uint16_t code;    /* enum msr_code */
	uint16_t rd_tid;  /* REGDELTA header: thread id */
	uint8_t tnum;
	uint8_t cid;
	uint8_t bank;
	uint8_t itype;
	uint8_t size;     /* LD_ISSUE: log2 of the size */
	uint8_t dsrc;
	uint8_t bmask;    /* bit 7 = byte 0 (lowest address) ... bit 0 = byte 7 */
	uint8_t rmo;
	uint8_t l2hit;
	uint8_t inv;
	uint8_t total;
	uint8_t rd_type;  /* REGDELTA: 'G','W','X','F','C' */
	uint8_t rd_extra; /* REGDELTA G/W/X: global level or window */
	uint8_t rd_reg;   /* REGDELTA: register number (0xE7 = end push) */
	uint8_t flags;    /* MSR_EVF_* */
	uint8_t nbytes;   /* number of valid bytes in `bytes` */
	/* MEM_CHECK: the 64 payload bytes, lowest address first.
	 * Other (non-memory) messages: the payload after the code byte. */
	uint8_t bytes[64];
};

/* ------------------------------------------------------------------------ */
/* Message layouts                                                           */
/* ------------------------------------------------------------------------ */

/* Field kinds, in the order they appear in a message */
enum msr_field {
	MSR_F_END = 0,
	MSR_F_TNUM,   /* 1 byte */
	MSR_F_CID,    /* 1 */
	MSR_F_BANK,   /* 1 */
	MSR_F_PA,     /* 5 */
	MSR_F_DATA,   /* 8 */
	MSR_F_BMASK,  /* 1 */
	MSR_F_ITYPE,  /* 1 */
	MSR_F_SIZE,   /* 1 */
	MSR_F_DSRC,   /* 1 */
	MSR_F_INVVEC, /* 4 */
	MSR_F_L2HIT,  /* 1 */
	MSR_F_RMO,    /* 1 */
	MSR_F_INV,    /* 1 */
	MSR_F_TOTAL,  /* 1 */
	MSR_F_TS,     /* 4 */
	MSR_F_PAYLOAD64, /* 64 (MEM_CHECK) */
};

#define MSR_MAX_FIELDS 8

struct msr_msgdef {
	uint16_t code;
	uint8_t length;   /* total encoded length in bytes, code byte included;
			   * REGDELTA: 0 (variable, see pli-other.md) */
	bool memory;      /* interpreted by the engine (trace-format.md table) */
	const char *name; /* "ST_ISSUE", ... as in the spec tables */
	/* Memory messages: their fields in encoding order, MSR_F_END-terminated.
	 * Other messages: empty (payload kept raw), see `other_tnum_at`. */
	uint8_t fields[MSR_MAX_FIELDS + 1];
	/* Other messages: byte offset of tnum in the message (0 = none) and of
	 * ts (0 = none), so tools can filter and show them. */
	uint8_t other_tnum_at;
	uint8_t other_ts_at;
};

/* Layout of `code`, or NULL when the code is unknown (never sent). */
const struct msr_msgdef *msr_msgdef_get(unsigned code);

/* Look a message up by its canonical name ("ST_ISSUE"); NULL if unknown. */
const struct msr_msgdef *msr_msgdef_by_name(const char *name, size_t len);

/*
 * Which of tnum, pa and ts the event's layout carries (MSR_EVHAS_* bits),
 * for filters and statistics. Non-memory messages report what their raw
 * payload holds (pli-other.md); register-delta records carry none.
 */
#define MSR_EVHAS_TNUM 0x01
#define MSR_EVHAS_PA 0x02
#define MSR_EVHAS_TS 0x04
unsigned msr_event_has(const struct msr_event *ev);

/* Canonical names of enum values; NULL when out of range. */
const char *msr_itype_name(unsigned itype);
const char *msr_dsrc_name(unsigned dsrc);
const char *msr_field_name(enum msr_field f);

/* ------------------------------------------------------------------------ */
/* Reading traces                                                            */
/* ------------------------------------------------------------------------ */

enum msr_trace_format {
	MSR_FMT_AUTO = 0,
	MSR_FMT_BINARY,
	MSR_FMT_HEX,
	MSR_FMT_TEXT,
};

struct msr_trace_opts {
	unsigned strands;  /* tnum must be < strands (default 64) */
	unsigned cores;    /* cid must be < cores (default 8) */
	unsigned l2_banks; /* bank must be < l2_banks (default 8) */
	enum msr_trace_format format; /* MSR_FMT_AUTO: detect from content */
};

/* Fill `opts` with the UltraSPARC T2 defaults and format detection. */
void msr_trace_opts_default(struct msr_trace_opts *opts);

struct msr_trace_reader;

/*
 * Open `path` ("-" = standard input) for reading events. zstd compression
 * and the format are detected from the first bytes, never from the name.
 * On success *out owns the open file.
 */
int msr_trace_reader_open(const char *path, const struct msr_trace_opts *opts,
			  struct msr_trace_reader **out, struct msr_error *err);

/*
 * Like msr_trace_reader_open, on the `len` bytes at `buf` (not copied: they
 * must stay valid until the reader is closed); `name` stands for the file
 * name in error messages. For tests that build traces in memory.
 */
int msr_trace_reader_open_mem(const void *buf, size_t len, const char *name,
			      const struct msr_trace_opts *opts,
			      struct msr_trace_reader **out, struct msr_error *err);

/*
 * Decode the next event into *ev (caller-owned). Returns MSR_OK, MSR_END at
 * the clean end of input, or a negative status with `err` filled; after an
 * error the reader must not be used again except to be closed.
 */
int msr_trace_reader_next(struct msr_trace_reader *r, struct msr_event *ev,
			  struct msr_error *err);

/*
 * Decompress a zstd trace ahead of the decoder in a helper thread, so that
 * decompression overlaps the replay on a second core. Events, errors and
 * their order do not change. Returns false (and changes nothing) for an
 * uncompressed trace or when no thread could be started.
 */
bool msr_trace_reader_decompress_ahead(struct msr_trace_reader *r);

enum msr_trace_format msr_trace_reader_format(const struct msr_trace_reader *r);
bool msr_trace_reader_compressed(const struct msr_trace_reader *r);

struct msr_trace_reader_stats {
	uint64_t bytes_in;     /* bytes read from the file (compressed size) */
	uint64_t bytes_out;    /* decompressed bytes consumed by the decoder */
	uint64_t file_size;    /* size of the input file, 0 when unknown (pipe) */
	uint64_t events;
	uint64_t regdelta_records;
	uint64_t regdelta_ambiguous;
};
void msr_trace_reader_get_stats(const struct msr_trace_reader *r,
				struct msr_trace_reader_stats *st);

void msr_trace_reader_close(struct msr_trace_reader *r);

/* ------------------------------------------------------------------------ */
/* Writing traces                                                            */
/* ------------------------------------------------------------------------ */

/* Maximum encoded size of one event in any output format, newline included */
#define MSR_EVENT_TEXT_MAX 512
#define MSR_EVENT_BIN_MAX 80

/*
 * Encode one event in the binary message form (the bytes the testbench
 * sends). Returns the number of bytes written to `out`.
 */
size_t msr_event_encode_bin(const struct msr_event *ev,
			    uint8_t out[MSR_EVENT_BIN_MAX]);

/*
 * Format one event in canonical text form, without index prefix and without
 * newline ("ST_ISSUE tnum=3 pa=0x0000102008 ..."). Returns the length.
 */
size_t msr_event_format_text(const struct msr_event *ev, char *buf,
			     size_t size);

struct msr_trace_writer;

/*
 * Open `path` ("-" = standard output) for writing events in `format`
 * (MSR_FMT_BINARY, MSR_FMT_HEX or MSR_FMT_TEXT), zstd-compressed when
 * `zstd_level` > 0. The text form starts with its "# msync-text 1" line.
 */
int msr_trace_writer_open(const char *path, enum msr_trace_format format,
			  int zstd_level, struct msr_trace_writer **out,
			  struct msr_error *err);

int msr_trace_writer_put(struct msr_trace_writer *w, const struct msr_event *ev,
			 struct msr_error *err);

/* Write raw bytes to the output (comments in text form, for example). */
int msr_trace_writer_raw(struct msr_trace_writer *w, const void *buf,
			 size_t len, struct msr_error *err);

/* Flush, finish the zstd frame and close. Always frees `w`. */
int msr_trace_writer_close(struct msr_trace_writer *w, struct msr_error *err);

/* ------------------------------------------------------------------------ */
/* The ISS step log                                                          */
/* ------------------------------------------------------------------------ */

enum msr_step_op {
	MSR_STEP_NOP = 0,
	MSR_STEP_LD,
	MSR_STEP_LDD,
	MSR_STEP_LDQ,
	MSR_STEP_LDBLK,
	MSR_STEP_ST,
	MSR_STEP_STBLK,
	MSR_STEP_STBI,
	MSR_STEP_CAS,
	MSR_STEP_SWAP,
	MSR_STEP_LDSTUB,
	MSR_STEP_MEMBAR,
	MSR_STEP_PREFETCH,
	MSR_STEP_OP_COUNT
};

#define MSR_STEP_HAS_PA 0x01
#define MSR_STEP_HAS_SIZE 0x02
#define MSR_STEP_HAS_LD 0x04
#define MSR_STEP_HAS_ST 0x08
#define MSR_STEP_HAS_MASK 0x10

/* One step-log line. Values are big-endian: ld[0] is the byte at pa. */
struct msr_step {
	uint64_t line;   /* 1-based line number in the step log */
	uint64_t pc;
	uint64_t pa;
	uint32_t mask;   /* membar mmask */
	uint8_t tnum;
	uint8_t op;      /* enum msr_step_op */
	uint8_t size;    /* access size in bytes (1..64) */
	uint8_t has;     /* MSR_STEP_HAS_* */
	uint8_t ld_len;  /* bytes in ld (== size when present) */
	uint8_t st_len;  /* bytes in st */
	uint8_t ld[64];
	uint8_t st[64];
};

const char *msr_step_op_name(unsigned op);

struct msr_steplog;

/*
 * Open a step log (plain or zstd, "-" = stdin). `strands` bounds tnum.
 * `max_lookahead` bounds how many lines of other strands may be buffered
 * while looking for the next line of one strand (0 = default, 1M lines).
 */
int msr_steplog_open(const char *path, unsigned strands, size_t max_lookahead,
		     struct msr_steplog **out, struct msr_error *err);

/*
 * Next step of strand `tnum` in program order: MSR_OK with *step filled,
 * MSR_END when the log holds no further line for that strand, or a negative
 * status (syntax error with line:column, or lookahead limit exceeded).
 */
int msr_steplog_next(struct msr_steplog *log, unsigned tnum,
		     struct msr_step *step, struct msr_error *err);

/*
 * After the trace ended: the number of step lines of strand `tnum` never
 * consumed (reads the rest of the log). Returns MSR_OK or an error. The
 * rest of the log is counted, not kept, so memory stays bounded: lines
 * counted this way are no longer handed out by msr_steplog_next.
 */
int msr_steplog_remaining(struct msr_steplog *log, unsigned tnum,
			  uint64_t *count, struct msr_error *err);

/* Step lines (not comments or blank lines) parsed so far. */
uint64_t msr_steplog_lines(const struct msr_steplog *log);
/* msr_trace_reader_decompress_ahead for a step log. */
bool msr_steplog_decompress_ahead(struct msr_steplog *log);
void msr_steplog_close(struct msr_steplog *log);

#ifdef __cplusplus
}
#endif

#endif /* MSR_TRACE_H */
