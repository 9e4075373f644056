/*
 * cmd-trace-internal.h - option handling shared by the trace subcommands
 * (dump, encode, stat, tracediff): the system size that bounds tnum and
 * cid, and whether a zstd trace is decompressed on a helper thread.
 */
#ifndef MSR_CMD_TRACE_INTERNAL_H
#define MSR_CMD_TRACE_INTERNAL_H

#include "cmd.h"

/* Long-option ids shared by the trace subcommands */
enum {
	MSR_OPT_CORES = 1000,
	MSR_OPT_THREADS,
	MSR_OPT_SINGLE_THREAD,
	MSR_OPT_FIRST_LOCAL, /* first id free for a subcommand's own options */
};

/*
 * Parse the value of --cores or --threads into *out; on a bad value print
 * a usage error for `cmd` and return false.
 */
bool msr_cli_trace_size(const char *cmd, const char *opt, const char *val,
			unsigned max, unsigned *out);

/*
 * Reader options for cores x threads strands (cid < cores); false (with a
 * usage error printed) when there are more strands than a tnum byte holds.
 */
bool msr_cli_trace_opts(const char *cmd, unsigned cores, unsigned threads,
			struct msr_trace_opts *opts);

/* The help lines of --single-thread. */
#define MSR_CLI_SINGLE_THREAD_HELP \
	"  --single-thread    decompress a zstd trace on this thread (default: a\n" \
	"                     helper thread decompresses it ahead, on another\n" \
	"                     core; the output is the same)\n"

/*
 * Decompress r's input ahead on a helper thread unless `single_thread`, so
 * that decoding runs at the decompressor's speed instead of after it.
 */
void msr_cli_reader_ahead(struct msr_trace_reader *r, bool single_thread);

#endif /* MSR_CMD_TRACE_INTERNAL_H */
