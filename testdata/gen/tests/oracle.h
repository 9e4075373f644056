/*
 * oracle.h - an independent replay of msync-gen output for the tests: it
 * follows the events with the capture rules of semantics.md (memory as of
 * the LD_DATA position, newest L1 piece, youngest covering store), checks
 * the step log against them and checks the ordering rules of the event
 * sequences. It shares no code with the model, so it can catch it out.
 */
#ifndef MSR_GEN_ORACLE_H
#define MSR_GEN_ORACLE_H

#include "gen-internal.h"

#define ORACLE_MAX_FINDINGS 1024

struct oracle_finding {
	char kind[32];     /* "load-value", "store-data", "order:...", ... */
	unsigned strand;
	uint64_t iseq, pa, event;
};

struct oracle;

struct oracle *oracle_new(const struct gen_config *cfg);
void oracle_free(struct oracle *o);
/* Initial memory from the model (call before gen_model_run). */
void oracle_init_memory(struct oracle *o, const struct gen_model *m);
/* Sink callbacks (ctx = the oracle). */
int oracle_event(void *ctx, const struct msr_event *ev, struct msr_error *err);
int oracle_step(void *ctx, const struct gen_step *st, struct msr_error *err);
/* End of stream: leftover checks. */
void oracle_finish(struct oracle *o);

unsigned oracle_nfindings(const struct oracle *o);
const struct oracle_finding *oracle_finding_at(const struct oracle *o, unsigned i);
/* Findings of one kind. */
unsigned oracle_count(const struct oracle *o, const char *kind);
uint64_t oracle_events(const struct oracle *o);
uint64_t oracle_steps(const struct oracle *o);
uint64_t oracle_code_count(const struct oracle *o, unsigned code);
/* The step lines of one strand, for litmus checks: callback per line. */
void oracle_set_step_hook(struct oracle *o,
			  void (*fn)(void *ctx, const struct gen_step *st),
			  void *ctx);
/* Every event, for ordering tests: called before the oracle's checks. */
void oracle_set_event_hook(struct oracle *o,
			   void (*fn)(void *ctx, const struct msr_event *ev),
			   void *ctx);

#endif /* MSR_GEN_ORACLE_H */
