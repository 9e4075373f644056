/*
 * slice_shrink.c - `slice --shrink` at instruction level: delta debugging
 * over the whole instructions of a written slice until no single one can be
 * left out without losing the violation.
 *
 * A unit is one executed instruction of a strand (its issues, data, fills,
 * commits, acks and the ST_INV/ST_UPDATE answers to its commits, up to its
 * SSTEP, together with its step line), or one event of no instruction (a
 * MEM_SLAM, an EVICT with its EVICT_INVs, ...). A candidate is kept when its
 * check shows the same kind of violation on the same strand and renumbered
 * instruction, reads cleanly and shows no more violations than before (so
 * the rest of the stream stays protocol-consistent). The violation's own
 * instruction is never left out. It works on the slice in memory (tens to
 * hundreds of events) and never touches the original inputs.
 */
#include "slice-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SH_FIFO 64 /* store instructions of one strand awaiting commits/acks */

struct sh_line {
	char *text;
	int tnum;        /* -1: not a step line */
	uint64_t ord;    /* k-th line of its strand (1-based) */
};

struct sh_unit {
	int strand;      /* -1: no instruction */
	uint64_t step;   /* ordinal of its SSTEP in its strand, 0 when none */
};

struct sh_state {
	struct msr_slice_run *s;
	struct msr_event *ev;
	size_t nev;
	size_t *unit_of;        /* unit of each event */
	struct sh_unit *unit;
	size_t nunit;
	bool *gone;             /* units left out */
	struct sh_line *line;
	size_t nline;
	size_t target;          /* unit of the violation's instruction */
	char trace[1024], steps[1024], image[1024];
	/* result of the last check */
	bool ok;
	uint64_t want_iseq, nviol, kinds[MSR_V_COUNT];
	struct msr_violation rv;
};

static double sh_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------------ */
/* Loading the slice and cutting it into units                               */
/* ------------------------------------------------------------------------ */

static int sh_load_events(struct sh_state *h, const char *path, struct msr_error *err)
{
	struct msr_slice_pipe p = {0};
	struct msr_event e;
	size_t cap = 0;
	int rc = msr_slice_pipe_open(&p, path, NULL, h->s->o, NULL, err);

	while (!rc && (rc = msr_slice_pipe_read(&p, &e, err)) == MSR_OK) {
		if (h->nev == cap) {
			size_t n = cap ? 2 * cap : 256;
			struct msr_event *a = realloc(h->ev, n * sizeof(*a));

			if (!a) {
				rc = msr_error_set(err, MSR_E_NOMEM, "slice", NULL, "out of memory");
				break;
			}
			h->ev = a;
			cap = n;
		}
		h->ev[h->nev++] = e;
	}
	msr_slice_pipe_close(&p);
	return rc == MSR_END ? MSR_OK : rc;
}

static int sh_load_steps(struct sh_state *h, const char *path, struct msr_error *err)
{
	uint64_t ord[MSR_MAX_STRANDS] = {0};
	FILE *f = fopen(path, "r");
	char buf[1024];
	size_t cap = 0;

	if (!f)
		return msr_error_set(err, MSR_E_IO, "slice", path, "cannot open: %s",
				     strerror(errno));
	while (fgets(buf, sizeof(buf), f)) {
		struct sh_line *l;
		char *end;
		long t;

		if (h->nline == cap) {
			size_t n = cap ? 2 * cap : 256;
			struct sh_line *a = realloc(h->line, n * sizeof(*a));

			if (!a)
				goto nomem;
			h->line = a;
			cap = n;
		}
		l = &h->line[h->nline];
		if (!(l->text = strdup(buf)))
			goto nomem;
		h->nline++;
		l->tnum = -1;
		l->ord = 0;
		t = strtol(buf, &end, 10);
		if (buf[0] != '#' && end != buf && t >= 0 && t < MSR_MAX_STRANDS) {
			l->tnum = (int)t;
			l->ord = ++ord[t];
		}
	}
	fclose(f);
	return MSR_OK;
nomem:
	fclose(f);
	return msr_error_set(err, MSR_E_NOMEM, "slice", NULL, "out of memory");
}

#define SH_RECENT 8 /* recent loads / commits remembered per strand */

/* A recent load data return or commit: which unit, which address. */
struct sh_recent {
	size_t unit[SH_RECENT];
	uint64_t pa[SH_RECENT];
	unsigned n;
};

/* Per-strand bookkeeping while cutting the slice into units. */
struct sh_strand {
	size_t open;                 /* unit of the instruction being issued */
	bool has_open;
	size_t cq[SH_FIFO], aq[SH_FIFO]; /* store units awaiting commits / acks */
	unsigned cn[SH_FIFO], an[SH_FIFO];
	unsigned chead, ctail, ahead, atail;
	struct sh_recent loads, commits;
	uint64_t steps;
};

static void sh_recent_put(struct sh_recent *r, size_t unit, uint64_t pa)
{
	r->unit[r->n % SH_RECENT] = unit;
	r->pa[r->n % SH_RECENT] = pa;
	r->n++;
}

/* The newest entry on the 16-byte piece of pa, else on its 64-byte line,
 * else the newest; SIZE_MAX when there is none. */
static size_t sh_recent_find(const struct sh_recent *r, uint64_t pa)
{
	unsigned n = r->n < SH_RECENT ? r->n : SH_RECENT;

	for (unsigned shift = 4; shift <= 6; shift += 2)
		for (unsigned k = 1; k <= n; k++) {
			unsigned i = (r->n - k) % SH_RECENT;

			if (r->pa[i] >> shift == pa >> shift)
				return r->unit[i];
		}
	return n ? r->unit[(r->n - 1) % SH_RECENT] : SIZE_MAX;
}

static size_t sh_new_unit(struct sh_state *h, int strand)
{
	h->unit[h->nunit].strand = strand;
	h->unit[h->nunit].step = 0;
	return h->nunit++;
}

static size_t sh_fifo_take(size_t *q, unsigned *n, unsigned *head)
{
	size_t u = q[*head % SH_FIFO];

	if (!--n[*head % SH_FIFO])
		(*head)++;
	return u;
}

/* The unit an event of strand t belongs to. */
static size_t sh_strand_unit(struct sh_state *h, struct sh_strand *st, int t,
			     const struct msr_event *e)
{
	size_t u;

	switch (e->code) {
	case MSR_ST_COMMIT:
		if (st->chead != st->ctail)
			u = sh_fifo_take(st->cq, st->cn, &st->chead);
		else
			u = sh_new_unit(h, -1);
		sh_recent_put(&st->commits, u, e->pa);
		return u;
	case MSR_ST_ACK:
		if (st->ahead != st->atail)
			return sh_fifo_take(st->aq, st->an, &st->ahead);
		/* more acks than stores: the newest commit's */
		return st->commits.n ? st->commits.unit[(st->commits.n - 1) % SH_RECENT]
				     : sh_new_unit(h, -1);
	case MSR_ST_INV:
	case MSR_ST_UPDATE:
		u = sh_recent_find(&st->commits, e->pa);
		return u != SIZE_MAX ? u : sh_new_unit(h, -1);
	case MSR_LD_FILL:
		u = sh_recent_find(&st->loads, e->pa);
		return u != SIZE_MAX ? u : sh_new_unit(h, -1);
	default:
		break;
	}
	if (!st->has_open) {
		st->open = sh_new_unit(h, t);
		st->has_open = true;
	}
	u = st->open;
	if (e->code == MSR_ST_ISSUE) {
		unsigned i = (st->ctail - 1) % SH_FIFO;

		if (st->ctail != st->chead && st->cq[i] == u) {
			st->cn[i]++;
			st->an[(st->atail - 1) % SH_FIFO]++;
		} else if (st->ctail - st->chead < SH_FIFO && st->atail - st->ahead < SH_FIFO) {
			st->cq[st->ctail % SH_FIFO] = u;
			st->cn[st->ctail++ % SH_FIFO] = 1;
			st->aq[st->atail % SH_FIFO] = u;
			st->an[st->atail++ % SH_FIFO] = 1;
		}
	} else if (e->code == MSR_LD_DATA) {
		sh_recent_put(&st->loads, u, e->pa);
	} else if (e->code == MSR_SSTEP) {
		h->unit[u].step = ++st->steps;
		st->has_open = false;
	}
	return u;
}

static int sh_cut_units(struct sh_state *h, struct msr_error *err)
{
	struct sh_strand *st = calloc(MSR_MAX_STRANDS, sizeof(*st));
	size_t evict = SIZE_MAX;
	int tgt = h->s->rv.strand;

	h->unit_of = calloc(h->nev + 1, sizeof(*h->unit_of));
	h->unit = calloc(h->nev + 1, sizeof(*h->unit));
	h->gone = calloc(h->nev + 1, sizeof(*h->gone));
	if (!st || !h->unit_of || !h->unit || !h->gone) {
		free(st);
		return msr_error_set(err, MSR_E_NOMEM, "slice", NULL, "out of memory");
	}
	h->target = SIZE_MAX;
	for (size_t i = 0; i < h->nev; i++) {
		const struct msr_event *e = &h->ev[i];
		size_t u;

		if (msr_event_has(e) & MSR_EVHAS_TNUM) {
			u = sh_strand_unit(h, &st[e->tnum], e->tnum, e);
		} else if (e->code == MSR_EVICT_INV && evict != SIZE_MAX) {
			u = evict;
		} else if ((e->code == MSR_REGDELTA && !(e->flags & MSR_EVF_RD_HEADER)) ||
			   e->code == MSR_REGDELTA_END) {
			u = i ? h->unit_of[i - 1] : sh_new_unit(h, -1);
		} else {
			u = sh_new_unit(h, -1);
			if (e->code == MSR_EVICT)
				evict = u;
		}
		h->unit_of[i] = u;
		if (e->code == MSR_SSTEP && (int)e->tnum == tgt && h->unit[u].step == h->s->rv.iseq)
			h->target = u;
		if (h->s->rv.strand < 0 && e->index == h->s->rv.event)
			h->target = u;
	}
	free(st);
	return MSR_OK;
}

/* ------------------------------------------------------------------------ */
/* Checking a candidate                                                      */
/* ------------------------------------------------------------------------ */

static void sh_violation(void *ctx, const struct msr_violation *v)
{
	struct sh_state *h = ctx;
	const struct msr_violation *t = &h->s->rv;

	h->nviol++;
	h->kinds[v->kind]++;
	if (h->ok || v->kind != t->kind || v->strand != t->strand)
		return;
	if (t->strand >= 0 && t->iseq ? v->iseq != h->want_iseq
				     : (v->pa & ~7ULL) != (t->pa & ~7ULL))
		return;
	h->ok = true;
	h->rv = *v;
}

static int sh_write(struct sh_state *h, const char *trace, const char *steps,
		    struct msr_error *err)
{
	struct msr_trace_writer *w = NULL;
	struct msr_error err2 = MSR_ERROR_INIT;
	bool *drop = calloc(MSR_MAX_STRANDS * (h->nline + 1), sizeof(*drop));
	FILE *f = NULL;
	int rc;

	if (!drop)
		return msr_error_set(err, MSR_E_NOMEM, "slice", NULL, "out of memory");
	/* step lines of the instructions left out */
	for (size_t u = 0; u < h->nunit; u++)
		if (h->gone[u] && h->unit[u].strand >= 0 && h->unit[u].step &&
		    h->unit[u].step <= h->nline)
			drop[(size_t)h->unit[u].strand * (h->nline + 1) + h->unit[u].step] = true;
	rc = msr_trace_writer_open(trace, MSR_FMT_BINARY, 1, &w, err);
	for (size_t i = 0; !rc && i < h->nev; i++)
		if (!h->gone[h->unit_of[i]])
			rc = msr_trace_writer_put(w, &h->ev[i], err);
	if (w && msr_trace_writer_close(w, &err2) && !rc) {
		*err = err2;
		rc = err->status;
	}
	if (!rc && !(f = fopen(steps, "w")))
		rc = msr_error_set(err, MSR_E_IO, "slice", steps, "cannot create: %s",
				   strerror(errno));
	for (size_t i = 0; !rc && i < h->nline; i++) {
		const struct sh_line *l = &h->line[i];

		if (l->tnum < 0 || !drop[(size_t)l->tnum * (h->nline + 1) + l->ord])
			fputs(l->text, f);
	}
	if (f && fclose(f) && !rc)
		rc = msr_error_set(err, MSR_E_IO, "slice", steps, "write failed");
	free(drop);
	return rc;
}

/* Write the units not gone to trace/steps and check them: sets h->ok. */
static int sh_check(struct sh_state *h, const char *trace, const char *steps,
		    struct msr_error *err)
{
	struct msr_slice_pipe p = {.ctx = h, .on_violation = sh_violation};
	struct msr_error cerr = MSR_ERROR_INIT;
	struct msr_event e;
	int rc;

	h->ok = false;
	h->nviol = 0;
	memset(h->kinds, 0, sizeof(h->kinds));
	h->want_iseq = 0;
	for (size_t u = 0; u < h->nunit; u++)
		if (!h->gone[u] && h->unit[u].strand == h->s->rv.strand && h->unit[u].step &&
		    h->unit[u].step <= h->s->rv.iseq)
			h->want_iseq++;
	if ((rc = sh_write(h, trace, steps, err)))
		return rc;
	/* a candidate the pipeline refuses is no reproducer; not an error */
	rc = msr_slice_pipe_open(&p, trace, h->s->o->steps ? steps : NULL, h->s->o,
				 h->image, &cerr);
	while (!rc && (rc = msr_slice_pipe_read(&p, &e, &cerr)) == MSR_OK)
		rc = msr_slice_pipe_apply(&p, &e, &cerr);
	if (rc == MSR_END)
		rc = msr_slice_pipe_finish(&p, true, &cerr);
	msr_slice_pipe_close(&p);
	if (rc < 0)
		h->ok = false;
	return MSR_OK;
}

/* ------------------------------------------------------------------------ */
/* The search                                                                */
/* ------------------------------------------------------------------------ */

/* Try leaving out units [a, b) but the target; *kept when that still
 * reproduces with no more violations (else the caller restores h->gone). */
static int sh_try(struct sh_state *h, size_t a, size_t b, uint64_t *viol, bool *kept,
		  struct msr_error *err)
{
	size_t n = 0;
	int rc;

	*kept = false;
	for (size_t u = a; u < b; u++)
		if (!h->gone[u] && u != h->target) {
			h->gone[u] = true;
			n++;
		}
	if (!n)
		return MSR_OK;
	if ((rc = sh_check(h, h->trace, h->steps, err)))
		return rc;
	if (h->ok && h->nviol <= *viol) {
		*viol = h->nviol;
		*kept = true;
	}
	return MSR_OK;
}

/* ddmin-style: leave out chunks of units, halving the chunk, then single
 * units until a whole round removes nothing (the fixpoint) or time is up. */
static int sh_search(struct sh_state *h, double end, struct msr_error *err)
{
	uint64_t viol = h->nviol;
	bool *save = malloc(h->nunit + 1);
	size_t chunk = h->nunit / 2 ? h->nunit / 2 : 1;
	int rc = MSR_OK;

	if (!save)
		return msr_error_set(err, MSR_E_NOMEM, "slice", NULL, "out of memory");
	h->s->shrink_fixpoint = false;
	while (!rc && sh_now() < end) {
		bool changed = false;

		/* from the end: later units depend on earlier ones, not back */
		for (size_t b = h->nunit; b > 0 && !rc && sh_now() < end; ) {
			size_t a = b > chunk ? b - chunk : 0;
			bool kept;

			memcpy(save, h->gone, h->nunit);
			rc = sh_try(h, a, b, &viol, &kept, err);
			if (!kept)
				memcpy(h->gone, save, h->nunit);
			changed |= kept;
			b = a;
		}
		h->s->shrink_rounds++;
		if (chunk > 1) {
			chunk /= 2;
		} else if (!changed && !rc && sh_now() < end) {
			h->s->shrink_fixpoint = true;
			break;
		}
	}
	free(save);
	return rc;
}

static void sh_free(struct sh_state *h)
{
	for (size_t i = 0; i < h->nline; i++)
		free(h->line[i].text);
	free(h->line);
	free(h->ev);
	free(h->unit_of);
	free(h->unit);
	free(h->gone);
}

/* Keep the map entries of the events that stay, and the final counts. */
static void sh_commit(struct sh_state *h)
{
	struct msr_slice_run *s = h->s;
	size_t n = 0;

	for (size_t i = 0; i < h->nev && i < s->nmap; i++)
		if (!h->gone[h->unit_of[i]])
			s->map[n++] = s->map[i];
	s->nmap = n;
	for (size_t u = 0; u < h->nunit; u++)
		if (h->gone[u]) {
			if (h->unit[u].strand >= 0 && h->unit[u].step)
				s->shrink_instr_removed[h->unit[u].strand]++;
			else
				s->shrink_other_removed++;
		}
	s->sviol = h->nviol;
	memcpy(s->sviol_kind, h->kinds, sizeof(h->kinds));
	s->rv = h->rv;
	s->reproduced = h->ok;
}

int msr_slice_shrink_instructions(struct msr_slice_run *s, double end,
				  struct msr_error *err)
{
	struct sh_state h = {.s = s};
	char final_trace[1024], final_steps[1024];
	double t0 = sh_now();
	int rc;

	snprintf(final_trace, sizeof(final_trace), "%s/nas.trace.zst", s->o->outdir);
	snprintf(final_steps, sizeof(final_steps), "%s/steps.log", s->o->outdir);
	snprintf(h.trace, sizeof(h.trace), "%s/shrink-try.trace.zst", s->o->outdir);
	snprintf(h.steps, sizeof(h.steps), "%s/shrink-try.steps.log", s->o->outdir);
	snprintf(h.image, sizeof(h.image), "%s/image.mem", s->o->outdir);
	if ((rc = sh_load_events(&h, final_trace, err)) ||
	    (rc = sh_load_steps(&h, final_steps, err)) || (rc = sh_cut_units(&h, err)))
		goto out;
	s->shrink_events_before = h.nev;
	s->shrink_units = h.nunit;
	if (h.target == SIZE_MAX && s->rv.strand >= 0)
		goto out; /* cannot tell the violation's instruction: leave it */
	if ((rc = sh_check(&h, h.trace, h.steps, err)))
		goto out;
	if (!h.ok)
		goto out; /* the slice as written must reproduce, or nothing to do */
	if ((rc = sh_search(&h, end, err)))
		goto out;
	if ((rc = sh_check(&h, final_trace, final_steps, err)))
		goto out;
	sh_commit(&h);
	s->shrunk = true;
out:
	s->shrink_seconds = sh_now() - t0;
	remove(h.trace);
	remove(h.steps);
	sh_free(&h);
	return rc;
}
