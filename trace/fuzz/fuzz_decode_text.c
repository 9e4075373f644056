/*
 * fuzz_decode_text.c - libFuzzer target: arbitrary bytes through the
 * canonical text decoder (format forced, zstd still detected), checking
 * the properties of fuzz-common.h.
 */
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(data, size, MSR_FMT_TEXT);
}
