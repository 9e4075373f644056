/*
 * cmd_trace_opts.c - the --cores/--threads handling of dump, encode, stat
 * and tracediff (the strand count the decoders check tnum against), and
 * their --single-thread.
 */
#include "cmd-trace-internal.h"

bool msr_cli_trace_size(const char *cmd, const char *opt, const char *val,
			unsigned max, unsigned *out)
{
	uint64_t v;

	if (!msr_cli_parse_u64(val, &v) || v == 0 || v > max) {
		msr_cli_usage_error(cmd, "bad %s=%s: expected a number from 1 to %u", opt,
				    val, max);
		return false;
	}
	*out = (unsigned)v;
	return true;
}

bool msr_cli_trace_opts(const char *cmd, unsigned cores, unsigned threads,
			struct msr_trace_opts *opts)
{
	if (cores * threads > 256) {
		msr_cli_usage_error(cmd, "--cores %u --threads %u make %u strands: tnum is "
				    "one byte, at most 256", cores, threads, cores * threads);
		return false;
	}
	msr_trace_opts_default(opts);
	opts->cores = cores;
	opts->strands = cores * threads;
	return true;
}

void msr_cli_reader_ahead(struct msr_trace_reader *r, bool single_thread)
{
	if (!single_thread)
		msr_trace_reader_decompress_ahead(r);
}
