/*
 * source-internal.h - the streaming byte source under every trace/ reader.
 *
 * Contract: opens a file or standard input ("-"), detects zstd by its magic
 * number (one or several frames, skippable frames ignored, large windows
 * accepted) and hands out the decompressed bytes in large blocks, zero-copy.
 * Never reads the whole input into memory; a truncated or corrupt frame is
 * MSR_E_TRUNCATED / MSR_E_FORMAT naming the compressed offset, returned
 * after every byte decoded before it has been handed out.
 */
#ifndef MSR_SOURCE_INTERNAL_H
#define MSR_SOURCE_INTERNAL_H

#include "trace.h"

struct msr_source;

int msr_source_open(const char *path, struct msr_source **out,
		    struct msr_error *err);

/*
 * Serve `len` bytes at `buf` (not copied; must outlive the source) as if
 * they were a file called `name`. `block_max` > 0 caps the size of each
 * underlying read, so tests can make messages straddle blocks.
 */
int msr_source_open_mem(const void *buf, size_t len, const char *name,
			size_t block_max, struct msr_source **out,
			struct msr_error *err);

/*
 * Next block of (decompressed) bytes: MSR_OK with *buf and *len set (valid until
 * the next call; *len > 0), MSR_END at the end of input, or an error.
 */
int msr_source_read(struct msr_source *s, const uint8_t **buf, size_t *len,
		    struct msr_error *err);

/*
 * Decompress ahead in a helper thread from here on (a zstd input only):
 * the file and the zstd state then belong to the helper, which fills up to
 * two blocks ahead of the reader (copies of at most 1 MiB; inline, blocks
 * of up to 1 MiB are read where they were decoded). The bytes, the errors
 * and their order are the same as without it. Returns false, and stays as
 * it was, for an uncompressed input or when no thread could be started.
 */
bool msr_source_decompress_ahead(struct msr_source *s);

/* Do the first 4 of the `n` bytes at p (n >= 4) make a zstd magic number
 * (a regular or a skippable frame's), so that a source would decompress
 * them? A raw stream that starts so cannot be read as raw (writer.c). */
bool msr_source_zstd_magic(const uint8_t *p, size_t n);

const char *msr_source_path(const struct msr_source *s); /* "-" = stdin */
bool msr_source_compressed(const struct msr_source *s);
uint64_t msr_source_bytes_in(const struct msr_source *s);  /* file bytes read */
uint64_t msr_source_bytes_out(const struct msr_source *s); /* bytes handed out */
uint64_t msr_source_file_size(const struct msr_source *s); /* 0 = unknown */

void msr_source_close(struct msr_source *s);

#endif /* MSR_SOURCE_INTERNAL_H */
