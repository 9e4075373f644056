/*
 * cmd.h - the msync-replay command line: one entry point per subcommand and
 * the helpers they share (exit codes, error printing).
 *
 * Contract: cmd/ only parses arguments, wires trace -> engine -> checker ->
 * report, prints errors once and picks the exit code. It is the only place
 * that may exit the process.
 */
#ifndef MSR_CMD_H
#define MSR_CMD_H

#include "trace.h"

/* Stable exit codes */
enum {
	MSR_EXIT_CLEAN = 0,      /* replayed to the end, no violations */
	MSR_EXIT_VIOLATIONS = 1, /* violations found (diff: new violations) */
	MSR_EXIT_UNUSABLE = 2,   /* unusable input or usage error */
	MSR_EXIT_BISECT_SKIP = 125, /* --bisect: unusable input */
};

int msr_cmd_dump(int argc, char **argv);
int msr_cmd_encode(int argc, char **argv);
int msr_cmd_stat(int argc, char **argv);
int msr_cmd_check(int argc, char **argv);
int msr_cmd_tracediff(int argc, char **argv);
int msr_cmd_slice(int argc, char **argv);
int msr_cmd_diff(int argc, char **argv);

/* Print "msync-replay: <error chain>" / "msync-replay: <msg>" on stderr,
 * with bytes that are not UTF-8 and control characters (which the input
 * quoted in a message may hold) written as \xNN. */
void msr_cli_print_error(const struct msr_error *err);
void msr_cli_print_message(const char *msg);

/* Print "msync-replay <cmd>: <message>" and a hint to --help; returns 2. */
int msr_cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Parse an unsigned number (decimal or 0x-hex); false when malformed. */
bool msr_cli_parse_u64(const char *s, uint64_t *out);

/* --no-huge-pages: transparent huge pages off for this process and the
 * children it forks (thp-internal.h); where the system cannot, a warning
 * on stderr, and the run goes on. */
void msr_cli_no_huge_pages(const char *cmd);

#endif /* MSR_CMD_H */
