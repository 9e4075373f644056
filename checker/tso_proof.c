/*
 * tso_proof.c - turns a broken TSO axiom found by tso.c into a
 * `struct msr_violation`: location, the stores read and expected, a plain
 * message and the proof cycle. It decides nothing about TSO itself and never
 * keeps state between violations.
 */
#include <stdio.h>
#include <string.h>

#include "tso-internal.h"

void tso_report_init(struct tso_report *r, enum msr_vkind kind,
		     const struct msr_op *op)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->op = op;
	if (op) {
		r->pa = op->pa;
		r->size = op->size;
		r->ts = op->ts;
		r->event = op->event;
	}
}

void tso_report_push(struct tso_report *r, const struct msr_proof_op *p,
		     enum msr_rel rel)
{
	if (r->nproof >= MSR_PROOF_MAX)
		return;
	r->proof[r->nproof] = *p;
	r->proof[r->nproof].rel = (uint8_t)rel;
	r->nproof++;
}

static void store_ref(const struct msr_tso *t, uint64_t co,
		      struct msr_store_ref *ref)
{
	const struct tso_crec *c = tso_crec_get(t, co);

	memset(ref, 0, sizeof(*ref));
	if (!c)
		return;
	ref->valid = true;
	ref->strand = c->strand;
	ref->iseq = c->iseq;
	ref->sseq = c->sseq;
	ref->co = c->co;
	ref->ts = c->ts;
	ref->event = c->event;
}

void tso_report_emit(struct msr_tso *t, const struct tso_report *r)
{
	struct msr_violation v;
	size_t n;

	t->reported++;
	if (!t->sink.violation)
		return;
	memset(&v, 0, sizeof(v));
	v.kind = r->kind;
	if (r->op) {
		v.strand = r->op->strand;
		v.iseq = r->op->iseq;
		v.pc = r->op->pc;
	} else if (r->at) {
		v.strand = r->at->strand;
		v.iseq = r->at->iseq;
		v.pc = r->at->pc;
	} else {
		v.strand = -1;
	}
	v.core = v.strand >= 0 && t->tpc ? (int)((unsigned)v.strand / t->tpc)
					 : -1;
	v.pa = r->pa;
	v.size = r->size;
	v.ts = r->ts;
	v.event = r->event;
	store_ref(t, r->observed_co, &v.observed_from);
	store_ref(t, r->expected_co, &v.expected_from);
	n = strlen(r->message);
	if (n >= sizeof(v.message))
		n = sizeof(v.message) - 1;
	memcpy(v.message, r->message, n);
	v.message[n] = 0;
	v.nproof = r->nproof;
	memcpy(v.proof, r->proof, sizeof(v.proof[0]) * r->nproof);
	t->sink.violation(t->sink.ctx, &v);
}
