/*
 * steplog-internal.h - opening a step log on an already open byte source,
 * so tests and fuzz targets can feed it from memory in blocks of any size.
 * Private to trace/ (and its tests and fuzz targets).
 */
#ifndef MSR_STEPLOG_INTERNAL_H
#define MSR_STEPLOG_INTERNAL_H

#include "source-internal.h"
#include "trace.h"

/*
 * Like msr_steplog_open, reading from `src`; `path` names it in errors. The
 * log owns `src` from the call on: it is closed with the log, and at once
 * when the call fails.
 */
int msr_steplog_open_source(struct msr_source *src, const char *path,
			    unsigned strands, size_t max_lookahead,
			    struct msr_steplog **out, struct msr_error *err);

#endif
