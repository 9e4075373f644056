/*
 * report-internal.h - the collector's state, shared by report.c (collect)
 * and report_yaml.c (write). Not part of the public API.
 */
#ifndef MSR_REPORT_INTERNAL_H
#define MSR_REPORT_INTERNAL_H

#include "report.h"

#define CTX_LINE_MAX (MSR_EVENT_TEXT_MAX + 64)

struct report_entry {
	struct msr_violation v;
	char fp[17];
	unsigned nctx;
	char **ctx; /* nctx line pointers followed by their text, one block */
};

struct report_input {
	char role[16];
	char *path;
	uint64_t size;
};

struct msr_report {
	struct msr_config cfg; /* effective configuration (images copied) */
	const struct msr_history *hist;
	struct msr_report_filter filter;
	struct report_input *inputs;
	size_t ninputs;
	struct report_entry *entries;
	size_t nkept, cap;
	uint64_t shown, filtered, dropped;
	uint64_t per_kind[MSR_V_COUNT];
	struct msr_report_summary sum;
	struct msr_event ctxbuf[MSR_CONTEXT_MAX];    /* scratch for context */
	char ctxtext[MSR_CONTEXT_MAX * CTX_LINE_MAX]; /* scratch for its text */
};

#endif /* MSR_REPORT_INTERNAL_H */
