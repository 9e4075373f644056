/*
 * many-paths-internal.h - the file names `check` on several traces derives
 * from a trace's path: its report under -o DIR and its step log
 * (--steps-suffix, --steps-name). Pure string functions: they never touch
 * the file system. Results are malloc'd (NULL when out of memory) and owned
 * by the caller. Private to cmd/.
 */
#ifndef MSR_MANY_PATHS_INTERNAL_H
#define MSR_MANY_PATHS_INTERNAL_H

/* Trailing path components a derived report path mirrors at most. */
#define MPATH_DEPTH_MAX 64

/* How many trailing components of `trace` (empty and "." ones not counted)
 * a report path may mirror: a ".." ends the count, so that a report stays
 * inside DIR. At most MPATH_DEPTH_MAX. */
unsigned mpath_depth(const char *trace);

/* DIR/<the last `depth` components of trace, a trailing .zst removed>.yaml:
 * run7/nas.trace.zst at depth 1 -> DIR/nas.trace.yaml, at depth 2 ->
 * DIR/run7/nas.trace.yaml. At most mpath_depth(trace) components are
 * mirrored (the basename alone when that is 0), however large `depth`. */
char *mpath_report(const char *dir, const char *trace, unsigned depth);

/* "msync-replay." then the last `depth` components of trace joined by '.',
 * each with its dots made underscores: a JUnit class name that Jenkins
 * reads as packages and a class (run7/nas.trace.zst at depth 2 ->
 * msync-replay.run7.nas_trace_zst; at depth 1 the name a single-trace
 * check gives). Components as mpath_report mirrors them. */
char *mpath_class(const char *trace, unsigned depth);

/* The trace path up to the first '.' of its basename, then `suffix`:
 * run/nas.trace.zst with .steps.zst -> run/nas.steps.zst. */
char *mpath_steps_suffix(const char *trace, const char *suffix);

/* `name` in the directory of trace: run7/nas.trace.zst with steps.log.zst
 * -> run7/steps.log.zst. */
char *mpath_steps_beside(const char *trace, const char *name);

#endif /* MSR_MANY_PATHS_INTERNAL_H */
