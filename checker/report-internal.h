/*
 * report-internal.h - the collector's state, shared by report.c (collect)
 * and report_yaml.c (write). Not part of the public API.
 */
#ifndef MSR_REPORT_INTERNAL_H
#define MSR_REPORT_INTERNAL_H

#include "report.h"

#include <stdio.h>

#define CTX_LINE_MAX (MSR_EVENT_TEXT_MAX + 64)
/* Violations whose after-context is still being watched for, at most. */
#define REPORT_PENDING_MAX 64
#define NO_ENTRY SIZE_MAX

struct report_entry {
	struct msr_violation v;  /* its first occurrence */
	char fp[17];
	uint64_t count;          /* occurrences merged into this entry */
	uint64_t last_event;     /* event of the latest occurrence */
	int waiver;              /* index into cfg.waivers, -1 = not waived */
	unsigned nctx, nafter;
	char **ctx;   /* nctx line pointers followed by their text, one block */
	char **after; /* the same for the events after the violation */
};

/* A list of entries merged by fingerprint (violations, or waived ones). */
struct report_list {
	struct report_entry *e;
	size_t n, cap;
};

/* A violation still collecting the events after it (same strand/block). */
struct report_pending {
	bool active;
	size_t entry;         /* index into the violations list */
	uint64_t age;         /* creation order: the oldest is evicted first */
	int strand;
	uint64_t pa8;
	unsigned n;
	struct msr_event *evs; /* cfg.context_after slots */
};

struct report_input {
	char role[16];
	char *path;
	uint64_t size;
};

struct msr_report {
	struct msr_config cfg; /* effective configuration (images, waivers copied) */
	const struct msr_history *hist;
	struct msr_report_filter filter;
	struct report_input *inputs;
	size_t ninputs;
	struct report_list list;   /* shown violations */
	struct report_list wlist;  /* waived violations */
	/* fingerprint -> entry; value bit 31 = in wlist; power-of-two size */
	uint64_t *fp_keys;
	uint32_t *fp_vals;
	size_t fp_cap, fp_count;
	/* fingerprint waivers sorted by value for binary search */
	uint64_t *wfp_keys;
	unsigned *wfp_idx;
	unsigned nwfp;
	uint64_t *waiver_uses;     /* per cfg.waivers entry */
	uint64_t shown, filtered, dropped, waived;
	uint64_t per_kind[MSR_V_COUNT];
	bool has_first;            /* first = shown violation with lowest event */
	struct msr_violation first;
	size_t first_entry;        /* its list index, NO_ENTRY when not listed */
	struct report_pending pend[REPORT_PENDING_MAX];
	unsigned npending;
	uint64_t pend_age;
	struct msr_event *pend_evs; /* REPORT_PENDING_MAX x context_after */
	struct msr_report_summary sum;
	struct msr_event ctxbuf[MSR_CONTEXT_MAX];    /* scratch for context */
	char ctxtext[MSR_CONTEXT_MAX * CTX_LINE_MAX]; /* scratch for its text */
};

/* report_file.c: write a report file through a temporary file renamed into
 * place (devices, FIFOs and symbolic links in place; "-" = stdout). */
struct report_file_sink {
	const char *module; /* for errors: "report", "junit" */
	const char *what;   /* "report", "JUnit report" */
	int (*body)(FILE *f, const void *ctx, const char *path,
		    struct msr_error *err);
	const void *ctx;
};

int report_file_write(const char *path, const struct report_file_sink *s,
		      struct msr_error *err);

#endif /* MSR_REPORT_INTERNAL_H */
