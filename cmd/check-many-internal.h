/*
 * check-many-internal.h - `msync-replay check` on several traces, each in
 * its own child process running the single-trace check. Private to cmd/.
 */
#ifndef MSR_CHECK_MANY_INTERNAL_H
#define MSR_CHECK_MANY_INTERNAL_H

#include <stdbool.h>

struct mguard_board;

/* True when the check command line names several traces, a --list, -j,
 * --steps-suffix or --steps-name: then msr_check_many handles it. */
bool msr_check_many_wanted(int argc, char **argv);

/* Plan, run (at most -j children at a time) and tabulate; returns the exit
 * code: 2 if any trace was unusable (125 with --bisect), else 1 if any had
 * violations, else 0. */
int msr_check_many(int argc, char **argv);

/* The single-trace check (cmd_check.c), alone (board NULL) or as one of
 * the replays running at once, in `seat` of the board on which they hold
 * the automatic memory limit together (mem-guard-internal.h). */
int msr_check_one(int argc, char **argv, struct mguard_board *board, unsigned seat);

#endif /* MSR_CHECK_MANY_INTERNAL_H */
