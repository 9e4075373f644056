/*
 * bytes-internal.h - fixed-width integer fields read from a byte buffer.
 *
 * Contract: each reader loads exactly its width from `p` with no alignment
 * assumed (memcpy, so the compiler emits one word load) and returns the
 * field in host order. Shared by the binary decoder (big-endian fields,
 * little-endian data) and the step-log parser (8 characters at a time).
 */
#ifndef MSR_TRACE_BYTES_INTERNAL_H
#define MSR_TRACE_BYTES_INTERNAL_H

#include <stdint.h>
#include <string.h>

static inline uint32_t msr_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline uint64_t msr_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline uint64_t msr_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

#endif
