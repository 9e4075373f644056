/*
 * report_yaml.c - writes the collected report as one YAML document with
 * libyaml's emitter (PRODUCT.md "The violation report").
 *
 * Layout: tool, inputs, config, summary, violations, waived,
 * unused_waivers. Lines never fold
 * (width -1); hex values and every string a YAML 1.1 reader would retype
 * (0x.., 007, no, on, ...) are double-quoted. The document goes to a
 * temporary file in the target directory that is renamed into place only
 * when complete, so a reader never sees half a report; a target that is
 * not a regular file (device, FIFO, symbolic link) is written in place and
 * never replaced. Never uses printf
 * for YAML output and never changes the collected data.
 */
#include "msr_version.h"
#include "report-internal.h"
#include "utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct yw {
	yaml_emitter_t em;
	bool failed;
};

static void emit(struct yw *w, yaml_event_t *ev)
{
	if (w->failed) {
		yaml_event_delete(ev);
		return;
	}
	if (!yaml_emitter_emit(&w->em, ev))
		w->failed = true;
}

/* A string a YAML 1.1 reader keeps as a string when written plain. */
static bool plain_safe(const char *s)
{
	static const char *const words[] = {
		"y", "n", "yes", "no", "on", "off", "true", "false", "null",
	};
	char low[8];
	size_t n = strlen(s);

	if (!n || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	if (n < sizeof(low)) {
		for (size_t i = 0; i <= n; i++)
			low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (!strcmp(low, words[i]))
				return false;
	}
	return true;
}

/* Strings are made valid UTF-8 first (libyaml emits nothing else), so a
 * file name or a quoted input byte never costs the report. */
static void scalar(struct yw *w, const char *s, bool quoted)
{
	msr_utf8_yaml_emit(&w->em, &w->failed, s, quoted);
}

/* A string value: plain when that is safe, else double-quoted. */
static void str(struct yw *w, const char *s)
{
	scalar(w, s, !plain_safe(s));
}

static void map_start(struct yw *w, bool flow)
{
	yaml_event_t ev;

	yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
					    flow ? YAML_FLOW_MAPPING_STYLE
						 : YAML_BLOCK_MAPPING_STYLE);
	emit(w, &ev);
}

static void map_end(struct yw *w)
{
	yaml_event_t ev;

	yaml_mapping_end_event_initialize(&ev);
	emit(w, &ev);
}

static void seq_start(struct yw *w, bool flow)
{
	yaml_event_t ev;

	yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
					     flow ? YAML_FLOW_SEQUENCE_STYLE
						  : YAML_BLOCK_SEQUENCE_STYLE);
	emit(w, &ev);
}

static void seq_end(struct yw *w)
{
	yaml_event_t ev;

	yaml_sequence_end_event_initialize(&ev);
	emit(w, &ev);
}

static void kv_str(struct yw *w, const char *k, const char *v)
{
	scalar(w, k, false);
	str(w, v);
}

static void kv_u64(struct yw *w, const char *k, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	scalar(w, k, false);
	scalar(w, buf, false);
}

static void kv_int(struct yw *w, const char *k, long long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", v);
	scalar(w, k, false);
	scalar(w, buf, false);
}

static void kv_bool(struct yw *w, const char *k, bool v)
{
	scalar(w, k, false);
	scalar(w, v ? "true" : "false", false);
}

/* "0x" + `digits` hex digits (minimal when digits is 0), quoted. */
static void kv_hex(struct yw *w, const char *k, uint64_t v, int digits)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%0*llx", digits, (unsigned long long)v);
	scalar(w, k, false);
	scalar(w, buf, true);
}

static void kv_bytes(struct yw *w, const char *k, const uint8_t *b, unsigned n)
{
	char buf[2 + 2 * 64 + 1] = "0x";

	for (unsigned i = 0; i < n && i < 64; i++)
		snprintf(buf + 2 + 2 * i, 3, "%02x", b[i]);
	scalar(w, k, false);
	scalar(w, buf, true);
}

/* ------------------------------------------------------------------------ */
/* Sections                                                                  */
/* ------------------------------------------------------------------------ */

static void write_inputs(struct yw *w, const struct msr_report *r)
{
	scalar(w, "inputs", false);
	seq_start(w, false);
	for (size_t i = 0; i < r->ninputs; i++) {
		map_start(w, false);
		kv_str(w, "role", r->inputs[i].role);
		kv_str(w, "path", r->inputs[i].path);
		kv_u64(w, "size", r->inputs[i].size);
		map_end(w);
	}
	seq_end(w);
}

static void write_config(struct yw *w, const struct msr_report *r)
{
	const struct msr_config *c = &r->cfg;
	const struct msr_report_filter *f = &r->filter;

	scalar(w, "config", false);
	map_start(w, false);
	kv_u64(w, "cores", c->cores);
	kv_u64(w, "threads_per_core", c->threads_per_core);
	kv_u64(w, "strands", msr_config_strands(c));
	kv_u64(w, "l1_line", c->l1_line);
	kv_u64(w, "l2_line", c->l2_line);
	kv_u64(w, "l2_banks", c->l2_banks);
	scalar(w, "memory", false);
	seq_start(w, false);
	for (unsigned i = 0; i < c->nimages; i++)
		str(w, c->images[i]);
	seq_end(w);
	kv_u64(w, "context", c->context_len);
	kv_u64(w, "context_after", c->context_after);
	kv_u64(w, "max_violations", c->max_violations);
	kv_u64(w, "step_lookahead", c->step_lookahead);
	kv_u64(w, "max_inflight", c->max_inflight);
	kv_u64(w, "mab_window", c->mab_window);
	kv_bool(w, "tso", r->sum.tso);
	kv_u64(w, "waivers", c->nwaivers);
	if (f->by_strand || f->by_cycles || f->by_pa) {
		scalar(w, "filters", false);
		map_start(w, false);
		if (f->by_strand)
			kv_str(w, "strands", f->strands_text);
		if (f->by_cycles)
			kv_str(w, "cycles", f->cycles_text);
		if (f->by_pa)
			kv_str(w, "pa", f->pa_text);
		map_end(w);
	}
	map_end(w);
}

/* The shown violation with the lowest event: where debugging starts. */
static void write_first(struct yw *w, const struct msr_report *r)
{
	const struct msr_violation *v = r->has_first ? &r->first : NULL;
	const char *kind = v ? msr_vkind_name(v->kind) : NULL;
	char id[24];

	if (!v)
		return;
	scalar(w, "first", false);
	map_start(w, true);
	if (r->first_entry != NO_ENTRY) {
		snprintf(id, sizeof(id), "V%zu", r->first_entry + 1);
		kv_str(w, "id", id);
	}
	kv_str(w, "kind", kind ? kind : "unknown");
	if (v->strand >= 0)
		kv_int(w, "strand", v->strand);
	kv_u64(w, "iseq", v->iseq);
	kv_u64(w, "event", v->event);
	map_end(w);
}

static void write_summary(struct yw *w, const struct msr_report *r)
{
	const struct msr_report_summary *s = &r->sum;
	char buf[48];

	scalar(w, "summary", false);
	map_start(w, false);
	kv_u64(w, "events", s->events);
	kv_u64(w, "steps", s->steps);
	kv_u64(w, "loads", s->loads);
	kv_u64(w, "stores", s->stores);
	kv_u64(w, "atomics", s->atomics);
	kv_u64(w, "membars", s->membars);
	kv_u64(w, "commits", s->commits);
	kv_u64(w, "other_messages", s->other_messages);
	kv_u64(w, "learned_bytes", s->learned_bytes);
	kv_u64(w, "violations", r->shown);
	write_first(w, r);
	kv_u64(w, "listed", r->list.n);
	kv_u64(w, "waived", r->waived);
	kv_u64(w, "filtered_out", r->filtered);
	scalar(w, "per_kind", false);
	map_start(w, false);
	for (unsigned k = 0; k < MSR_V_COUNT; k++)
		if (r->per_kind[k])
			kv_u64(w, msr_vkind_name((enum msr_vkind)k), r->per_kind[k]);
	map_end(w);
	kv_bool(w, "complete", s->complete);
	if (s->stopped[0])
		kv_str(w, "stopped", s->stopped);
	if (s->error[0])
		kv_str(w, "error", s->error);
	snprintf(buf, sizeof(buf), "%.3f", s->elapsed);
	scalar(w, "elapsed_seconds", false);
	scalar(w, buf, false);
	kv_u64(w, "events_per_second",
	       s->elapsed > 0 ? (uint64_t)((double)s->events / s->elapsed) : 0);
	map_end(w);
}

static void write_store_ref(struct yw *w, const char *k,
			    const struct msr_store_ref *ref)
{
	if (!ref->valid)
		return;
	scalar(w, k, false);
	map_start(w, true);
	kv_u64(w, "strand", ref->strand);
	kv_u64(w, "iseq", ref->iseq);
	kv_u64(w, "sseq", ref->sseq);
	kv_u64(w, "co", ref->co);
	kv_u64(w, "ts", ref->ts);
	kv_u64(w, "event", ref->event);
	map_end(w);
}

static void write_proof(struct yw *w, const struct msr_violation *v)
{
	if (!v->nproof)
		return;
	scalar(w, "proof", false);
	seq_start(w, false);
	for (unsigned i = 0; i < v->nproof; i++) {
		const struct msr_proof_op *p = &v->proof[i];
		const char *op = msr_step_op_name(p->op);
		const char *rel = msr_rel_name((enum msr_rel)p->rel);

		map_start(w, true);
		kv_u64(w, "strand", p->strand);
		kv_u64(w, "iseq", p->iseq);
		kv_hex(w, "pc", p->pc, 0);
		kv_str(w, "op", op ? op : "unknown");
		kv_hex(w, "pa", p->pa, 10);
		kv_u64(w, "size", p->size);
		kv_hex(w, "value", p->value, p->size && p->size < 8 ? 2 * p->size : 16);
		kv_u64(w, "ts", p->ts);
		kv_u64(w, "event", p->event);
		if (rel && p->rel != MSR_REL_NONE)
			kv_str(w, "rel", rel);
		map_end(w);
	}
	seq_end(w);
}

static void write_violation(struct yw *w, const struct msr_report *r, size_t i)
{
	const struct report_entry *e = &r->list.e[i];
	const struct msr_violation *v = &e->v;
	const char *kind = msr_vkind_name(v->kind);
	char id[24];

	snprintf(id, sizeof(id), "V%zu", i + 1);
	map_start(w, false);
	kv_str(w, "id", id);
	kv_str(w, "kind", kind ? kind : "unknown");
	scalar(w, "fingerprint", false);
	scalar(w, e->fp, true);
	if (v->strand >= 0)
		kv_int(w, "strand", v->strand);
	if (v->core >= 0)
		kv_int(w, "core", v->core);
	kv_u64(w, "iseq", v->iseq);
	kv_hex(w, "pc", v->pc, 0);
	kv_hex(w, "pa", v->pa, 10);
	kv_u64(w, "size", v->size);
	kv_u64(w, "ts", v->ts);
	kv_u64(w, "event", v->event);
	kv_u64(w, "offset", v->offset);
	kv_u64(w, "count", e->count);
	kv_u64(w, "last_event", e->last_event);
	if (v->has_values) {
		kv_bytes(w, "expected", v->expected, v->vlen);
		kv_bytes(w, "observed", v->observed, v->vlen);
	}
	if (v->source)
		kv_str(w, "source", v->source);
	write_store_ref(w, "expected_from", &v->expected_from);
	write_store_ref(w, "observed_from", &v->observed_from);
	scalar(w, "message", false);
	scalar(w, v->message, true);
	write_proof(w, v);
	scalar(w, "context", false);
	seq_start(w, false);
	for (unsigned c = 0; c < e->nctx; c++)
		scalar(w, e->ctx[c], true);
	seq_end(w);
	scalar(w, "context_after", false);
	seq_start(w, false);
	for (unsigned c = 0; c < e->nafter; c++)
		scalar(w, e->after[c], true);
	seq_end(w);
	map_end(w);
}

/* Where a waiver is defined: "file:line". */
static void kv_waiver_at(struct yw *w, const struct msr_report *r, unsigned i)
{
	char at[4200];

	snprintf(at, sizeof(at), "%s:%u",
		 r->cfg.waiver_file ? r->cfg.waiver_file : "config",
		 r->cfg.waivers[i].line);
	kv_str(w, "waiver", at);
}

static void write_waived(struct yw *w, const struct msr_report *r)
{
	scalar(w, "waived", false);
	seq_start(w, false);
	for (size_t i = 0; i < r->wlist.n; i++) {
		const struct report_entry *e = &r->wlist.e[i];
		const char *kind = msr_vkind_name(e->v.kind);
		char id[24];

		snprintf(id, sizeof(id), "W%zu", i + 1);
		map_start(w, false);
		kv_str(w, "id", id);
		kv_str(w, "kind", kind ? kind : "unknown");
		scalar(w, "fingerprint", false);
		scalar(w, e->fp, true);
		if (e->v.strand >= 0)
			kv_int(w, "strand", e->v.strand);
		kv_u64(w, "iseq", e->v.iseq);
		kv_hex(w, "pa", e->v.pa, 10);
		kv_u64(w, "event", e->v.event);
		kv_u64(w, "count", e->count);
		kv_u64(w, "last_event", e->last_event);
		scalar(w, "reason", false);
		scalar(w, r->cfg.waivers[e->waiver].reason, true);
		kv_waiver_at(w, r, (unsigned)e->waiver);
		map_end(w);
	}
	seq_end(w);
}

static void write_unused_waivers(struct yw *w, const struct msr_report *r)
{
	scalar(w, "unused_waivers", false);
	seq_start(w, false);
	for (unsigned i = 0; i < r->cfg.nwaivers; i++) {
		const struct msr_waiver *wv = &r->cfg.waivers[i];
		char range[48];

		if (r->waiver_uses[i])
			continue;
		map_start(w, false);
		kv_waiver_at(w, r, i);
		if (wv->by_fingerprint) {
			scalar(w, "fingerprint", false);
			scalar(w, wv->fingerprint, true);
		} else {
			kv_str(w, "kind", msr_vkind_name((enum msr_vkind)wv->kind));
			snprintf(range, sizeof(range), "0x%llx:0x%llx",
				 (unsigned long long)wv->pa_lo,
				 (unsigned long long)wv->pa_hi);
			kv_str(w, "pa", range);
			if (wv->strand >= 0)
				kv_int(w, "strand", wv->strand);
		}
		scalar(w, "reason", false);
		scalar(w, wv->reason, true);
		map_end(w);
	}
	seq_end(w);
}

static void write_document(struct yw *w, const struct msr_report *r)
{
	yaml_event_t ev;

	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	emit(w, &ev);
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0);
	emit(w, &ev);
	map_start(w, false);
	scalar(w, "tool", false);
	map_start(w, false);
	kv_str(w, "name", "msync-replay");
	scalar(w, "version", false);
	scalar(w, MSR_VERSION, true);
	map_end(w);
	write_inputs(w, r);
	write_config(w, r);
	write_summary(w, r);
	scalar(w, "violations", false);
	seq_start(w, false);
	for (size_t i = 0; i < r->list.n; i++)
		write_violation(w, r, i);
	seq_end(w);
	write_waived(w, r);
	write_unused_waivers(w, r);
	map_end(w);
	yaml_document_end_event_initialize(&ev, 0);
	emit(w, &ev);
	yaml_stream_end_event_initialize(&ev);
	emit(w, &ev);
}

/* ------------------------------------------------------------------------ */
/* Output file                                                               */
/* ------------------------------------------------------------------------ */

static int emit_to(const struct msr_report *r, FILE *f, const char *path,
		   struct msr_error *err)
{
	struct yw w;

	memset(&w, 0, sizeof(w));
	if (!yaml_emitter_initialize(&w.em))
		return msr_error_set(err, MSR_E_NOMEM, "report", path, "out of memory");
	yaml_emitter_set_output_file(&w.em, f);
	yaml_emitter_set_width(&w.em, -1);
	yaml_emitter_set_unicode(&w.em, 1);
	write_document(&w, r);
	if (!w.failed && !yaml_emitter_flush(&w.em))
		w.failed = true;
	if (w.failed) {
		int rc = msr_error_set(err, MSR_E_IO, "report", path,
				       "cannot write the report: %s",
				       w.em.problem ? w.em.problem : "emitter error");

		yaml_emitter_delete(&w.em);
		return rc;
	}
	yaml_emitter_delete(&w.em);
	if (fflush(f) || ferror(f))
		return msr_error_set(err, MSR_E_IO, "report", path,
				     "cannot write the report: %s", strerror(errno));
	return MSR_OK;
}

static int emit_body(FILE *f, const void *ctx, const char *path,
		     struct msr_error *err)
{
	return emit_to(ctx, f, path, err);
}

int msr_report_write_yaml(const struct msr_report *r, const char *path,
			  struct msr_error *err)
{
	const struct report_file_sink sink = {"report", "report", emit_body, r};

	return report_file_write(path, &sink, err);
}
