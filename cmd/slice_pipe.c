/*
 * slice_pipe.c - the replay pipeline used by `slice`: the same wiring as
 * `check` (trace reader -> engine with step log -> TSO pass, violations in
 * the order found), with hooks that let slice watch violations, commits and
 * the step lines the engine consumes. Also formats step-log lines.
 *
 * It never decides what a slice keeps and never exits.
 */
#include "slice-internal.h"

#include <stdio.h>
#include <string.h>

static void pipe_violation(void *ctx, const struct msr_violation *v)
{
	struct msr_slice_pipe *p = ctx;

	if (p->on_violation)
		p->on_violation(p->ctx, v);
}

static void pipe_commit(void *ctx, const struct msr_commit *c)
{
	struct msr_slice_pipe *p = ctx;

	if (p->tso)
		msr_tso_add_commit(p->tso, c);
	if (p->on_commit)
		p->on_commit(p->ctx, c);
}

static void pipe_op(void *ctx, const struct msr_op *op)
{
	struct msr_slice_pipe *p = ctx;

	if (p->tso)
		msr_tso_add_op(p->tso, op);
}

static int pipe_step_next(void *ctx, unsigned tnum, struct msr_step *step,
			  struct msr_error *err)
{
	struct msr_slice_pipe *p = ctx;
	int rc = msr_steplog_next(p->log, tnum, step, err);

	if (rc == MSR_OK && p->on_step)
		p->on_step(p->ctx, step);
	return rc;
}

static int pipe_step_remaining(void *ctx, unsigned tnum, uint64_t *count,
			       struct msr_error *err)
{
	struct msr_slice_pipe *p = ctx;

	return msr_steplog_remaining(p->log, tnum, count, err);
}

int msr_slice_pipe_open(struct msr_slice_pipe *p, const char *trace,
			const char *steps, const struct msr_slice_opts *o,
			const char *image, struct msr_error *err)
{
	struct msr_engine_sink esink = {p, pipe_commit, pipe_op, pipe_violation};
	struct msr_engine_sink tsink = {p, NULL, NULL, pipe_violation};
	struct msr_trace_opts topts;
	int rc;

	msr_config_default(&p->cfg);
	p->cfg_loaded = true;
	if (o->config && (rc = msr_config_load(&p->cfg, o->config, err)))
		return rc;
	if (o->has_max_memory)
		p->cfg.max_memory = (size_t)o->max_memory;
	mguard_init(&p->guard, p->cfg.max_memory, NULL, 0,
		    "--max-memory or limits.max_memory");
	p->guarded = true;
	p->applied = 0;
	p->trace = trace;
	msr_trace_opts_default(&topts);
	topts.strands = msr_config_strands(&p->cfg);
	topts.cores = p->cfg.cores;
	topts.l2_banks = p->cfg.l2_banks;
	if ((rc = msr_trace_reader_open(trace, &topts, &p->rd, err)))
		return rc;
	if (steps && (rc = msr_steplog_open(steps, msr_config_strands(&p->cfg),
					    p->cfg.step_lookahead, &p->log, err)))
		return rc;
	if (p->ahead) {
		msr_trace_reader_decompress_ahead(p->rd);
		if (p->log)
			msr_steplog_decompress_ahead(p->log);
	}
	if ((rc = msr_tso_create(&p->cfg, &tsink, &p->tso, err)))
		return rc;
	if ((rc = msr_engine_create(&p->cfg, &esink, &p->eng, err)))
		return rc;
	if (p->log) {
		struct msr_step_source src = {p, pipe_step_next, pipe_step_remaining};

		msr_engine_set_steps(p->eng, &src);
	}
	for (unsigned i = 0; i < p->cfg.nimages; i++)
		if ((rc = msr_engine_load_image(p->eng, p->cfg.images[i], err)))
			return rc;
	if (image && (rc = msr_engine_load_image(p->eng, image, err)))
		return rc;
	return MSR_OK;
}

int msr_slice_pipe_read(struct msr_slice_pipe *p, struct msr_event *ev,
			struct msr_error *err)
{
	return msr_trace_reader_next(p->rd, ev, err);
}

int msr_slice_pipe_apply(struct msr_slice_pipe *p, const struct msr_event *ev,
			 struct msr_error *err)
{
	int rc = msr_engine_apply(p->eng, ev, err);
	uint64_t used;

	if (rc >= 0 && !(++p->applied % MGUARD_EVERY) && mguard_over(&p->guard, &used))
		return mguard_error(&p->guard, err, "slice", p->trace, p->applied, used);
	return rc;
}

int msr_slice_pipe_finish(struct msr_slice_pipe *p, bool complete,
			  struct msr_error *err)
{
	int rc = msr_engine_finish(p->eng, complete, err);

	if (rc < 0)
		return rc;
	return msr_tso_finish(p->tso, err);
}

void msr_slice_pipe_close(struct msr_slice_pipe *p)
{
	if (p->eng)
		msr_engine_destroy(p->eng);
	if (p->tso)
		msr_tso_destroy(p->tso);
	if (p->log)
		msr_steplog_close(p->log);
	if (p->rd)
		msr_trace_reader_close(p->rd);
	if (p->cfg_loaded)
		msr_config_release(&p->cfg);
	if (p->guarded)
		mguard_close(&p->guard);
	p->guarded = false;
	p->eng = NULL;
	p->tso = NULL;
	p->log = NULL;
	p->rd = NULL;
	p->cfg_loaded = false;
}

static size_t put_hex(char *o, const uint8_t *b, unsigned n)
{
	static const char hx[] = "0123456789abcdef";

	for (unsigned i = 0; i < n; i++) {
		o[2 * i] = hx[b[i] >> 4];
		o[2 * i + 1] = hx[b[i] & 15];
	}
	return 2 * (size_t)n;
}

size_t msr_slice_step_format(const struct msr_step *s, char *buf, size_t size)
{
	char tmp[512];
	size_t n;
	int k;

	k = snprintf(tmp, sizeof(tmp), "%u %llx %s", s->tnum, (unsigned long long)s->pc,
		     msr_step_op_name(s->op));
	n = (size_t)k;
	if (s->has & MSR_STEP_HAS_PA)
		n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, " pa=%llx",
				      (unsigned long long)s->pa);
	if (s->has & MSR_STEP_HAS_SIZE)
		n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, " size=%u", s->size);
	if (s->has & MSR_STEP_HAS_ST) {
		memcpy(tmp + n, " st=", 4);
		n += 4;
		n += put_hex(tmp + n, s->st, s->st_len);
	}
	if (s->has & MSR_STEP_HAS_LD) {
		memcpy(tmp + n, " ld=", 4);
		n += 4;
		n += put_hex(tmp + n, s->ld, s->ld_len);
	}
	if (s->has & MSR_STEP_HAS_MASK)
		n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, " mask=%x", s->mask);
	tmp[n++] = '\n';
	if (n >= size)
		n = size - 1;
	memcpy(buf, tmp, n);
	buf[n] = '\0';
	return n;
}
