/*
 * report_yaml.c - writes the collected report as one YAML document with
 * libyaml's emitter (PRODUCT.md "The violation report").
 *
 * Layout: tool, inputs, config, summary, violations. Lines never fold
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

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
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

static void scalar(struct yw *w, const char *s, bool quoted)
{
	yaml_event_t ev;

	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s,
				     (int)strlen(s), !quoted, 1,
				     quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
					    : YAML_PLAIN_SCALAR_STYLE);
	emit(w, &ev);
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
	kv_u64(w, "max_violations", c->max_violations);
	kv_u64(w, "step_lookahead", c->step_lookahead);
	kv_u64(w, "max_inflight", c->max_inflight);
	kv_u64(w, "mab_window", c->mab_window);
	kv_bool(w, "tso", r->sum.tso);
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
	kv_u64(w, "listed", r->nkept);
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
	const struct report_entry *e = &r->entries[i];
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
	map_end(w);
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
	for (size_t i = 0; i < r->nkept; i++)
		write_violation(w, r, i);
	seq_end(w);
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

static int write_in_place(const struct msr_report *r, const char *path,
			  struct msr_error *err)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f)
		return msr_error_set(err, MSR_E_IO, "report", path,
				     "cannot open the report for writing: %s",
				     strerror(errno));
	rc = emit_to(r, f, path, err);
	if (fclose(f) && !rc)
		rc = msr_error_set(err, MSR_E_IO, "report", path,
				   "cannot write the report: %s", strerror(errno));
	return rc;
}

int msr_report_write_yaml(const struct msr_report *r, const char *path,
			  struct msr_error *err)
{
	char tmp[4096];
	const char *slash;
	struct stat st;
	mode_t mask;
	FILE *f;
	int fd, rc;

	if (!path || !strcmp(path, "-"))
		return emit_to(r, stdout, "<stdout>", err);
	/* Only a regular file may be replaced by renaming: a device (/dev/null),
	 * a FIFO or a symbolic link is written in place. */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return write_in_place(r, path, err);
	slash = strrchr(path, '/');
	if (slash)
		rc = snprintf(tmp, sizeof(tmp), "%.*s/.%s.XXXXXX",
			      (int)(slash - path), path, slash + 1);
	else
		rc = snprintf(tmp, sizeof(tmp), ".%s.XXXXXX", path);
	if (rc < 0 || (size_t)rc >= sizeof(tmp))
		return msr_error_set(err, MSR_E_IO, "report", path, "path too long");
	fd = mkstemp(tmp);
	if (fd < 0)
		return msr_error_set(err, MSR_E_IO, "report", path,
				     "cannot create a temporary file in the report's "
				     "directory: %s", strerror(errno));
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) || !(f = fdopen(fd, "w"))) {
		rc = msr_error_set(err, MSR_E_IO, "report", tmp, "%s", strerror(errno));
		close(fd);
		unlink(tmp);
		return rc;
	}
	rc = emit_to(r, f, path, err);
	if (fclose(f) && !rc)
		rc = msr_error_set(err, MSR_E_IO, "report", path,
				   "cannot write the report: %s", strerror(errno));
	if (!rc && rename(tmp, path))
		rc = msr_error_set(err, MSR_E_IO, "report", path,
				   "cannot rename %s into place: %s", tmp,
				   strerror(errno));
	if (rc)
		unlink(tmp);
	return rc;
}
