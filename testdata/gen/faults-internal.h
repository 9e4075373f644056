/*
 * faults-internal.h - state shared by faults.c (specs, sidecar) and
 * episodes.c (the scripted fault episodes). Private to msync-gen.
 */
#ifndef MSR_GEN_FAULTS_INTERNAL_H
#define MSR_GEN_FAULTS_INTERNAL_H

#include "gen-internal.h"

#include <yaml.h>

#define NTRK 6

struct episode {
	bool active, begun;
	unsigned kind, retries;
	int phase;
	unsigned a, b;       /* strands */
	unsigned ca, cb;     /* their cores */
	uint64_t x, y;       /* fresh addresses */
	uint64_t v1, v2;
	struct gen_track trk[NTRK];
};

struct gen_faults {
	struct gen_inject inj[GEN_MAX_INJECT];
	unsigned ninj;
	struct gen_config cfg;
	FILE *f;
	yaml_emitter_t em;
	bool em_ok;
	struct episode ep;
	uint64_t injected, aborted, counter, last_started;
	int status;
};

struct expect_op {
	const char *role;
	unsigned strand;
	uint64_t iseq, pa, event;
	uint64_t fault_event; /* where the fault acts, when not `event`; 0 none */
};

int fault_record(struct gen_faults *f, unsigned kind,
		 const struct expect_op *main_op, const struct expect_op *rel,
		 unsigned nrel, struct msr_error *err);

/* Should injection `in` fire now? `delta` = opportunities since last ask. */
bool fault_due(struct gen_inject *in, uint64_t started, struct gen_rng *r,
	       uint64_t delta);

#endif /* MSR_GEN_FAULTS_INTERNAL_H */
