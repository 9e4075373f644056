/*
 * faults.c - fault injection for msync-gen: parses `--inject` specs, runs the
 * short scripted episodes that make a fault observable (on strands taken
 * away from the program for a while, over fresh lines of the fault region
 * that nothing else touches), and writes the sidecar (YAML, libyaml
 * emitter) listing what a correct checker must report for each fault.
 *
 * An expectation is written only after the episode verified that the fault
 * really showed (e.g. the stale L1 hit returned the old value); an episode
 * whose preconditions fail is abandoned and counted, never reported. It must
 * never disturb strands outside an episode.
 */
#include "faults-internal.h"
#include "msr_version.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const fault_names[GEN_FK_COUNT] = {
	"stale-l1", "store-order", "bad-bypass", "store-data", "load-value",
	"lost-inv", "atomic-break", "membar",
};

/* The violation kind a checker must report, then the accepted ones. */
static const char *const fault_kinds[GEN_FK_COUNT][4] = {
	{"tso-load-order", "tso-coherence", "tso-value", NULL},
	{"tso-store-order", NULL},
	{"load-value", "bypass-not-covered", NULL},
	{"store-data", NULL},
	{"load-value", NULL},
	{"leftover", "unmatched-st-inv", NULL},
	{"tso-atomicity", NULL},
	{"tso-membar", NULL},
};

const char *gen_fault_name(unsigned kind)
{
	return kind < GEN_FK_COUNT ? fault_names[kind] : NULL;
}

int gen_inject_parse(const char *spec, struct gen_inject *out,
		     struct msr_error *err)
{
	size_t n = strcspn(spec, ":@");
	char *end;

	memset(out, 0, sizeof(*out));
	out->kind = GEN_FK_COUNT;
	for (unsigned k = 0; k < GEN_FK_COUNT; k++)
		if (strlen(fault_names[k]) == n && !strncmp(spec, fault_names[k], n))
			out->kind = k;
	if (out->kind == GEN_FK_COUNT)
		return msr_error_set(err, MSR_E_USAGE, "gen", NULL,
				     "unknown fault kind in --inject %s (known: "
				     "stale-l1 store-order bad-bypass store-data "
				     "load-value lost-inv atomic-break membar)", spec);
	if (!spec[n])
		return MSR_OK;
	errno = 0;
	if (spec[n] == ':') {
		out->rate = strtod(spec + n + 1, &end);
		if (errno || *end || end == spec + n + 1 || out->rate <= 0 ||
		    out->rate > 1)
			return msr_error_set(err, MSR_E_USAGE, "gen", NULL,
					     "bad rate in --inject %s: expected a "
					     "number in (0, 1]", spec);
		return MSR_OK;
	}
	out->at = strtoull(spec + n + 1, &end, 10);
	if (errno || *end || end == spec + n + 1)
		return msr_error_set(err, MSR_E_USAGE, "gen", NULL,
				     "bad instruction number in --inject %s", spec);
	return MSR_OK;
}

/* ---------------------------------------------------------------- */
/* state                                                             */
/* ---------------------------------------------------------------- */

static int yerr(struct gen_faults *f, struct msr_error *err)
{
	f->status = MSR_E_IO;
	return msr_error_set(err, MSR_E_IO, "gen", NULL,
			     "cannot write the expectation file: %s",
			     f->em.problem ? f->em.problem : "emitter error");
}

static int y_scalar(struct gen_faults *f, const char *s, bool quoted,
		    struct msr_error *err)
{
	yaml_event_t ev;

	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s,
				     (int)strlen(s), !quoted, quoted,
				     quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
					    : YAML_PLAIN_SCALAR_STYLE);
	return yaml_emitter_emit(&f->em, &ev) ? MSR_OK : yerr(f, err);
}

static int y_kv(struct gen_faults *f, const char *k, const char *v,
		bool quoted, struct msr_error *err)
{
	int rc = y_scalar(f, k, false, err);

	return rc < 0 ? rc : y_scalar(f, v, quoted, err);
}

static int y_ku(struct gen_faults *f, const char *k, uint64_t v,
		struct msr_error *err)
{
	char b[32];

	snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
	return y_kv(f, k, b, false, err);
}

static int y_kx(struct gen_faults *f, const char *k, uint64_t v,
		struct msr_error *err)
{
	char b[32];

	snprintf(b, sizeof(b), "0x%010llx", (unsigned long long)v);
	return y_kv(f, k, b, true, err);
}

static int y_event(struct gen_faults *f, int type, struct msr_error *err)
{
	yaml_event_t ev;
	int ok;

	switch (type) {
	case 0: ok = yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							YAML_BLOCK_MAPPING_STYLE); break;
	case 1: ok = yaml_mapping_end_event_initialize(&ev); break;
	case 2: ok = yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							 YAML_BLOCK_SEQUENCE_STYLE); break;
	case 3: ok = yaml_sequence_end_event_initialize(&ev); break;
	case 4: ok = yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							 YAML_FLOW_SEQUENCE_STYLE); break;
	default: ok = 0;
	}
	if (!ok || !yaml_emitter_emit(&f->em, &ev))
		return yerr(f, err);
	return MSR_OK;
}

#define Y(call) do { rc = (call); if (rc < 0) return rc; } while (0)

static int y_open(struct gen_faults *f, struct msr_error *err)
{
	yaml_event_t ev;
	int rc;

	yaml_emitter_initialize(&f->em);
	f->em_ok = true;
	yaml_emitter_set_output_file(&f->em, f->f);
	yaml_emitter_set_width(&f->em, -1);
	yaml_emitter_set_unicode(&f->em, 1);
	if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ||
	    !yaml_emitter_emit(&f->em, &ev) ||
	    !yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) ||
	    !yaml_emitter_emit(&f->em, &ev))
		return yerr(f, err);
	Y(y_event(f, 0, err));
	Y(y_kv(f, "generator", "msync-gen", false, err));
	Y(y_kv(f, "version", MSR_VERSION, true, err));
	Y(y_ku(f, "seed", f->cfg.seed, err));
	Y(y_ku(f, "cores", f->cfg.cores, err));
	Y(y_ku(f, "threads_per_core", f->cfg.threads, err));
	Y(y_scalar(f, "faults", false, err));
	return y_event(f, 2, err);
}

int gen_faults_create(const struct gen_inject *inj, unsigned ninj,
		      const char *expect_path, const struct gen_config *cfg,
		      struct gen_faults **out, struct msr_error *err)
{
	struct gen_faults *f;
	int rc = MSR_OK;

	*out = NULL;
	if (ninj > GEN_MAX_INJECT)
		return msr_error_set(err, MSR_E_USAGE, "gen", NULL,
				     "too many --inject options count=%u max=%u",
				     ninj, GEN_MAX_INJECT);
	for (unsigned i = 0; i < ninj; i++)
		if (cfg->cores < 2 && inj[i].kind != GEN_FK_STORE_DATA &&
		    inj[i].kind != GEN_FK_LOAD_VALUE &&
		    inj[i].kind != GEN_FK_STORE_ORDER &&
		    inj[i].kind != GEN_FK_BAD_BYPASS)
			return msr_error_set(err, MSR_E_USAGE, "gen", NULL,
					     "--inject %s needs at least 2 cores",
					     fault_names[inj[i].kind]);
	f = calloc(1, sizeof(*f));
	if (!f)
		return msr_error_set(err, MSR_E_NOMEM, "gen", NULL, "out of memory");
	memcpy(f->inj, inj, sizeof(*inj) * ninj);
	f->ninj = ninj;
	f->cfg = *cfg;
	if (expect_path) {
		f->f = fopen(expect_path, "w");
		if (!f->f) {
			rc = msr_error_set(err, MSR_E_IO, "gen", expect_path,
					   "cannot create the expectation file: %s",
					   strerror(errno));
			free(f);
			return rc;
		}
		rc = y_open(f, err);
	}
	if (rc < 0) {
		gen_faults_close(f, NULL);
		return rc;
	}
	*out = f;
	return MSR_OK;
}

uint64_t gen_faults_injected(const struct gen_faults *f)
{
	return f->injected;
}

static int y_close(struct gen_faults *f, struct msr_error *err)
{
	yaml_event_t ev;
	int rc;

	Y(y_event(f, 3, err));
	Y(y_scalar(f, "summary", false, err));
	Y(y_event(f, 0, err));
	Y(y_ku(f, "injected", f->injected, err));
	Y(y_ku(f, "abandoned", f->aborted, err));
	Y(y_event(f, 1, err));
	Y(y_event(f, 1, err));
	if (!yaml_document_end_event_initialize(&ev, 1) ||
	    !yaml_emitter_emit(&f->em, &ev) ||
	    !yaml_stream_end_event_initialize(&ev) ||
	    !yaml_emitter_emit(&f->em, &ev) || !yaml_emitter_flush(&f->em))
		return yerr(f, err);
	return MSR_OK;
}

int gen_faults_close(struct gen_faults *f, struct msr_error *err)
{
	int rc = MSR_OK;

	if (!f)
		return MSR_OK;
	if (f->f && f->em_ok && f->status == MSR_OK)
		rc = y_close(f, err);
	if (f->em_ok)
		yaml_emitter_delete(&f->em);
	if (f->f && fclose(f->f) != 0 && rc == MSR_OK)
		rc = msr_error_set(err, MSR_E_IO, "gen", NULL,
				   "cannot close the expectation file: %s",
				   strerror(errno));
	free(f);
	return rc;
}

/* ---------------------------------------------------------------- */
/* expectations                                                      */
/* ---------------------------------------------------------------- */

static int y_op(struct gen_faults *f, const struct expect_op *o,
		struct msr_error *err)
{
	int rc;

	Y(y_event(f, 0, err));
	Y(y_kv(f, "role", o->role, false, err));
	Y(y_ku(f, "strand", o->strand, err));
	Y(y_ku(f, "iseq", o->iseq, err));
	Y(y_kx(f, "pa", o->pa, err));
	Y(y_ku(f, "event", o->event, err));
	if (o->fault_event)
		Y(y_ku(f, "fault_event", o->fault_event, err));
	return y_event(f, 1, err);
}

/* One expectation: main op (the violating access) plus related ones. */
int fault_record(struct gen_faults *f, unsigned kind,
		  const struct expect_op *main_op, const struct expect_op *rel,
		  unsigned nrel, struct msr_error *err)
{
	char id[32];
	int rc;

	f->injected++;
	if (!f->f)
		return MSR_OK;
	snprintf(id, sizeof(id), "F%llu", (unsigned long long)f->injected);
	Y(y_event(f, 0, err));
	Y(y_kv(f, "id", id, false, err));
	Y(y_kv(f, "fault", fault_names[kind], false, err));
	Y(y_kv(f, "kind", fault_kinds[kind][0], false, err));
	Y(y_scalar(f, "accept", false, err));
	Y(y_event(f, 4, err));
	for (unsigned i = 0; fault_kinds[kind][i]; i++)
		Y(y_scalar(f, fault_kinds[kind][i], false, err));
	Y(y_event(f, 3, err));
	Y(y_ku(f, "strand", main_op->strand, err));
	Y(y_ku(f, "core", main_op->strand / f->cfg.threads, err));
	Y(y_ku(f, "iseq", main_op->iseq, err));
	Y(y_kx(f, "pa", main_op->pa, err));
	Y(y_ku(f, "event", main_op->event, err));
	if (main_op->fault_event)
		Y(y_ku(f, "fault_event", main_op->fault_event, err));
	if (nrel) {
		Y(y_scalar(f, "related", false, err));
		Y(y_event(f, 2, err));
		for (unsigned i = 0; i < nrel; i++)
			Y(y_op(f, &rel[i], err));
		Y(y_event(f, 3, err));
	}
	return y_event(f, 1, err);
}

bool fault_due(struct gen_inject *in, uint64_t started, struct gen_rng *r,
		uint64_t delta)
{
	if (in->rate > 0) {
		double p = in->rate * (double)(delta ? delta : 1);

		return gen_rng_chance(r, p > 1 ? 1 : p);
	}
	return !in->done && started >= in->at;
}

int gen_faults_on_step(struct gen_faults *f, struct gen_model *m,
		       unsigned strand, const struct gen_insn *in,
		       uint64_t iseq, uint64_t sstep_event, bool *bad_log,
		       struct msr_error *err)
{
	*bad_log = false;
	for (unsigned i = 0; i < f->ninj; i++) {
		struct gen_inject *j = &f->inj[i];
		struct expect_op o = {"load", strand, iseq, in->pa, sstep_event, 0};

		if (j->kind == GEN_FK_LOAD_VALUE && in->op != MSR_STEP_LD)
			continue;
		if (j->kind == GEN_FK_STORE_DATA && in->op != MSR_STEP_ST)
			continue;
		if (j->kind != GEN_FK_LOAD_VALUE && j->kind != GEN_FK_STORE_DATA)
			continue;
		if (!fault_due(j, gen_model_instructions(m), gen_model_rng(m), 1))
			continue;
		j->done = true;
		*bad_log = true;
		if (j->kind == GEN_FK_STORE_DATA)
			o.role = "store";
		return fault_record(f, j->kind, &o, NULL, 0, err);
	}
	return MSR_OK;
}
