/*
 * config.c - the YAML configuration loader (PRODUCT.md "Configuration"); the
 * UltraSPARC T2 defaults it loads over come from msr_config_default.
 *
 * The loader walks libyaml's event stream once, section by section, and
 * accepts only the keys it knows: unknown keys, duplicate keys (libyaml does
 * not detect them), wrong types, out-of-range values and YAML syntax errors
 * are MSR_E_CONFIG naming file:line:column. A file is applied all or
 * nothing: on error the caller's config is left as it was. It never
 * interprets the memory images it lists (the engine loads them), and only
 * parses waivers (the report applies them).
 */
#include "engine.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static void release_waivers(struct msr_config *cfg)
{
	for (unsigned i = 0; i < cfg->nwaivers; i++)
		free(cfg->waivers[i].reason);
	free(cfg->waivers);
	free(cfg->waiver_file);
	cfg->waivers = NULL;
	cfg->nwaivers = 0;
	cfg->waiver_file = NULL;
}

void msr_config_release(struct msr_config *cfg)
{
	for (unsigned i = 0; i < cfg->nimages; i++)
		free(cfg->images[i]);
	free(cfg->images);
	cfg->images = NULL;
	cfg->nimages = 0;
	release_waivers(cfg);
}

int msr_config_copy_waivers(struct msr_config *dst,
			    const struct msr_config *src,
			    struct msr_error *err)
{
	dst->waivers = NULL;
	dst->nwaivers = 0;
	dst->waiver_file = NULL;
	if (!src->nwaivers)
		return MSR_OK;
	dst->waivers = calloc(src->nwaivers, sizeof(*dst->waivers));
	if (!dst->waivers ||
	    (src->waiver_file && !(dst->waiver_file = strdup(src->waiver_file))))
		goto oom;
	for (unsigned i = 0; i < src->nwaivers; i++) {
		dst->waivers[i] = src->waivers[i];
		dst->waivers[i].reason = strdup(src->waivers[i].reason);
		if (!dst->waivers[i].reason)
			goto oom;
		dst->nwaivers++;
	}
	return MSR_OK;
oom:
	release_waivers(dst);
	return msr_error_set(err, MSR_E_NOMEM, "config", NULL, "out of memory");
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                      */
/* ------------------------------------------------------------------------ */

enum key_type { K_UNSIGNED, K_SIZE };

struct key_def {
	const char *name;
	size_t offset;
	enum key_type type;
	uint64_t min, max;
	bool pow2;
};

#define KEY(n, f, t, lo, hi, p2) {n, offsetof(struct msr_config, f), t, lo, hi, p2}

static const struct key_def system_keys[] = {
	KEY("cores", cores, K_UNSIGNED, 1, MSR_MAX_CORES, false),
	KEY("threads_per_core", threads_per_core, K_UNSIGNED, 1, MSR_MAX_STRANDS, false),
	KEY("l1_line", l1_line, K_UNSIGNED, 8, 4096, true),
	KEY("l2_line", l2_line, K_UNSIGNED, 8, 4096, true),
	KEY("l2_banks", l2_banks, K_UNSIGNED, 1, 256, false),
	{NULL, 0, K_UNSIGNED, 0, 0, false},
};

static const struct key_def report_keys[] = {
	KEY("context", context_len, K_UNSIGNED, 0, MSR_CONTEXT_MAX, false),
	KEY("context_before", context_len, K_UNSIGNED, 0, MSR_CONTEXT_MAX, false),
	KEY("context_after", context_after, K_UNSIGNED, 0, MSR_CONTEXT_MAX, false),
	KEY("max_violations", max_violations, K_UNSIGNED, 0, UINT_MAX, false),
	{NULL, 0, K_UNSIGNED, 0, 0, false},
};

static const struct key_def limits_keys[] = {
	KEY("step_lookahead", step_lookahead, K_SIZE, 1, (uint64_t)1 << 32, false),
	KEY("max_inflight", max_inflight, K_SIZE, 1, (uint64_t)1 << 32, false),
	KEY("mab_window", mab_window, K_SIZE, 1, (uint64_t)1 << 32, false),
	KEY("max_memory", max_memory, K_SIZE, 0, MSR_MAX_MEMORY_MIB, false),
	{NULL, 0, K_UNSIGNED, 0, 0, false},
};

/* ------------------------------------------------------------------------ */
/* Event walking                                                             */
/* ------------------------------------------------------------------------ */

struct cfg_parser {
	yaml_parser_t parser;
	yaml_event_t ev;
	bool have_ev;
	const char *path;
	struct msr_config *cfg; /* the copy being filled */
	struct msr_error *err;
	yaml_mark_t marks[8];   /* where cores/tpc/l1/l2 were set */
	bool had_waivers;       /* the file has a waivers section */
};

enum { MK_CORES, MK_TPC, MK_L1, MK_L2 };

static int perr(struct cfg_parser *cp, yaml_mark_t m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct cfg_parser *cp, yaml_mark_t m, const char *fmt, ...)
{
	char where[200], text[256];
	va_list ap;

	snprintf(where, sizeof(where), "%s:%zu:%zu", cp->path, m.line + 1,
		 m.column + 1);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return msr_error_set(cp->err, MSR_E_CONFIG, "config", where, "%s", text);
}

static int next_event(struct cfg_parser *cp)
{
	if (cp->have_ev)
		yaml_event_delete(&cp->ev);
	cp->have_ev = false;
	if (!yaml_parser_parse(&cp->parser, &cp->ev)) {
		yaml_parser_t *p = &cp->parser;

		return perr(cp, p->problem_mark, "yaml syntax error: %s%s%s",
			    p->problem ? p->problem : "unknown problem",
			    p->context ? " " : "", p->context ? p->context : "");
	}
	cp->have_ev = true;
	if (cp->ev.type == YAML_ALIAS_EVENT)
		return perr(cp, cp->ev.start_mark,
			    "yaml aliases are not supported in the configuration");
	return MSR_OK;
}

static const char *scalar(const struct cfg_parser *cp)
{
	return (const char *)cp->ev.data.scalar.value;
}

static bool is_null_scalar(const struct cfg_parser *cp)
{
	const char *s = scalar(cp);

	return cp->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcmp(s, "null"));
}

/* A plain scalar holding a decimal or 0x-hex unsigned integer. */
static int parse_uint(struct cfg_parser *cp, const char *key, uint64_t *out)
{
	const char *s = scalar(cp);
	uint64_t v = 0;
	int base = 10;

	if (cp->ev.type != YAML_SCALAR_EVENT)
		return perr(cp, cp->ev.start_mark, "%s: expected an integer, got a %s",
			    key, cp->ev.type == YAML_MAPPING_START_EVENT ? "mapping"
								       : "list");
	if (cp->ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return perr(cp, cp->ev.start_mark, "%s: expected an integer, got the "
			    "quoted string '%s'", key, s);
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return perr(cp, cp->ev.start_mark, "%s: expected an integer, got "
			    "nothing", key);
	for (; *s; s++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return perr(cp, cp->ev.start_mark, "%s: expected an integer, "
				    "got '%s'", key, scalar(cp));
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return perr(cp, cp->ev.start_mark, "%s=%s is too large", key,
				    scalar(cp));
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*out = v;
	return MSR_OK;
}

static int set_key(struct cfg_parser *cp, const char *section,
		   const struct key_def *k)
{
	uint64_t v = 0;
	int rc = parse_uint(cp, k->name, &v);

	if (rc)
		return rc;
	if (v < k->min || v > k->max)
		return perr(cp, cp->ev.start_mark, "%s.%s=%llu out of range %llu..%llu",
			    section, k->name, (unsigned long long)v,
			    (unsigned long long)k->min, (unsigned long long)k->max);
	if (k->pow2 && (v & (v - 1)))
		return perr(cp, cp->ev.start_mark, "%s.%s=%llu must be a power of two",
			    section, k->name, (unsigned long long)v);
	if (k->type == K_UNSIGNED)
		*(unsigned *)((char *)cp->cfg + k->offset) = (unsigned)v;
	else
		*(size_t *)((char *)cp->cfg + k->offset) = (size_t)v;
	if (!strcmp(section, "system")) {
		static const size_t offs[] = {
			offsetof(struct msr_config, cores),
			offsetof(struct msr_config, threads_per_core),
			offsetof(struct msr_config, l1_line),
			offsetof(struct msr_config, l2_line),
		};
		for (size_t i = 0; i < 4; i++)
			if (offs[i] == k->offset)
				cp->marks[i] = cp->ev.start_mark;
	}
	return MSR_OK;
}

/* The value of `section:` must be a mapping (or empty). Cursor: the value. */
static int parse_keys(struct cfg_parser *cp, const char *section,
		      const struct key_def *keys, uint32_t *seen_out)
{
	uint32_t seen = 0;
	int rc;

	*seen_out = 0;
	if (cp->ev.type == YAML_SCALAR_EVENT && is_null_scalar(cp))
		return MSR_OK;
	if (cp->ev.type != YAML_MAPPING_START_EVENT)
		return perr(cp, cp->ev.start_mark, "%s: expected a mapping of keys",
			    section);
	for (;;) {
		const struct key_def *k;
		unsigned i;

		if ((rc = next_event(cp)))
			return rc;
		if (cp->ev.type == YAML_MAPPING_END_EVENT) {
			*seen_out = seen;
			return MSR_OK;
		}
		if (cp->ev.type != YAML_SCALAR_EVENT)
			return perr(cp, cp->ev.start_mark, "%s: keys must be plain names",
				    section);
		for (i = 0, k = keys; k->name && strcmp(k->name, scalar(cp)); k++)
			i++;
		if (!k->name) {
			char known[160] = "";

			for (const struct key_def *q = keys; q->name; q++)
				snprintf(known + strlen(known), sizeof(known) - strlen(known),
					 "%s%s", q == keys ? "" : ", ", q->name);
			return perr(cp, cp->ev.start_mark, "unknown key '%s' in section "
				    "%s: known keys are %s", scalar(cp), section, known);
		}
		if (seen & (1u << i))
			return perr(cp, cp->ev.start_mark, "duplicate key '%s' in "
				    "section %s", k->name, section);
		/* report.context sets both sides; context_before names one of
		 * them again, so the two together are ambiguous */
		if (keys == report_keys && (i == 0 || i == 1) &&
		    (seen & (1u << (1 - i))))
			return perr(cp, cp->ev.start_mark, "report.context and "
				    "report.context_before both given: use one");
		seen |= 1u << i;
		if ((rc = next_event(cp)) || (rc = set_key(cp, section, k)))
			return rc;
	}
}

static int add_image(struct cfg_parser *cp)
{
	struct msr_config *cfg = cp->cfg;
	const char *val = scalar(cp), *slash = strrchr(cp->path, '/');
	char **grown;
	char *copy;
	size_t dirlen = 0;

	if (!*val)
		return perr(cp, cp->ev.start_mark, "memory: empty image path");
	/* Relative image paths are relative to the configuration file. */
	if (val[0] != '/' && slash)
		dirlen = (size_t)(slash - cp->path) + 1;
	copy = malloc(dirlen + strlen(val) + 1);
	grown = realloc(cfg->images, (cfg->nimages + 1) * sizeof(*grown));
	if (!copy || !grown) {
		free(copy);
		if (grown)
			cfg->images = grown;
		return msr_error_set(cp->err, MSR_E_NOMEM, "config", cp->path,
				     "out of memory");
	}
	memcpy(copy, cp->path, dirlen);
	strcpy(copy + dirlen, val);
	cfg->images = grown;
	cfg->images[cfg->nimages++] = copy;
	return MSR_OK;
}

/* memory: a list of image file paths (or empty). Cursor: the value. */
static int parse_memory(struct cfg_parser *cp)
{
	int rc;

	if (cp->ev.type == YAML_SCALAR_EVENT && is_null_scalar(cp))
		return MSR_OK;
	if (cp->ev.type != YAML_SEQUENCE_START_EVENT)
		return perr(cp, cp->ev.start_mark, "memory: expected a list of image "
			    "file paths");
	for (;;) {
		if ((rc = next_event(cp)))
			return rc;
		if (cp->ev.type == YAML_SEQUENCE_END_EVENT)
			return MSR_OK;
		if (cp->ev.type != YAML_SCALAR_EVENT)
			return perr(cp, cp->ev.start_mark, "memory: each entry must be a "
				    "file path");
		if ((rc = add_image(cp)))
			return rc;
	}
}

bool msr_scan_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0, base = 10;
	bool any = false;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (;; s++) {
		uint64_t d;

		if (*s >= '0' && *s <= '9')
			d = (uint64_t)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (uint64_t)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (uint64_t)(*s - 'A' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
		any = true;
	}
	*p = s;
	*out = v;
	return any;
}

bool msr_fingerprint_normalize(const char *s, char out[17])
{
	for (unsigned i = 0; i < 16; i++) {
		char c = s[i];

		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		out[i] = c;
	}
	if (s[16])
		return false;
	out[16] = '\0';
	return true;
}

bool msr_parse_range(const char *s, uint64_t max, uint64_t *lo, uint64_t *hi)
{
	*lo = 0;
	*hi = max;
	if (*s != ':' && !msr_scan_u64(&s, lo))
		return false;
	if (*s++ != ':')
		return false;
	if (*s && !msr_scan_u64(&s, hi))
		return false;
	return !*s && *lo <= *hi && *hi <= max;
}

enum { WK_FINGERPRINT, WK_KIND, WK_PA, WK_STRAND, WK_REASON, WK_COUNT };

static const char *const waiver_keys[WK_COUNT] = {
	"fingerprint", "kind", "pa", "strand", "reason",
};

/* One value of a waiver entry. Cursor: the value's event. */
static int set_waiver_key(struct cfg_parser *cp, unsigned k,
			  struct msr_waiver *w)
{
	const char *val = scalar(cp);
	uint64_t v;
	int rc;

	if (cp->ev.type != YAML_SCALAR_EVENT)
		return perr(cp, cp->ev.start_mark, "waiver %s: expected a single "
			    "value, got a %s", waiver_keys[k],
			    cp->ev.type == YAML_MAPPING_START_EVENT ? "mapping" : "list");
	switch (k) {
	case WK_FINGERPRINT:
		if (!msr_fingerprint_normalize(val, w->fingerprint))
			return perr(cp, cp->ev.start_mark, "waiver fingerprint='%s': "
				    "expected 16 hex digits as in the report", val);
		w->by_fingerprint = true;
		return MSR_OK;
	case WK_KIND:
		w->kind = (unsigned)msr_vkind_by_name(val);
		if (w->kind == MSR_V_COUNT)
			return perr(cp, cp->ev.start_mark, "waiver kind='%s' is not a "
				    "violation kind (e.g. load-value, tso-membar)", val);
		return MSR_OK;
	case WK_PA:
		if (!msr_parse_range(val, UINT64_MAX, &w->pa_lo, &w->pa_hi))
			return perr(cp, cp->ev.start_mark, "waiver pa='%s': expected "
				    "LO:HI with LO <= HI (inclusive; an empty side is open)",
				    val);
		return MSR_OK;
	case WK_STRAND:
		if ((rc = parse_uint(cp, "waiver strand", &v)))
			return rc;
		if (v >= MSR_MAX_STRANDS)
			return perr(cp, cp->ev.start_mark, "waiver strand=%llu out of "
				    "range 0..%d", (unsigned long long)v, MSR_MAX_STRANDS - 1);
		w->strand = (int)v;
		return MSR_OK;
	default:
		if (!*val)
			return perr(cp, cp->ev.start_mark, "waiver reason is empty: say "
				    "why the violation is accepted");
		free(w->reason);
		w->reason = strdup(val);
		if (!w->reason)
			return msr_error_set(cp->err, MSR_E_NOMEM, "config", cp->path,
					     "out of memory");
		return MSR_OK;
	}
}

/* Which keys a complete waiver has; `m` is where its entry starts. */
static int check_waiver(struct cfg_parser *cp, yaml_mark_t m, uint32_t seen)
{
	bool fp = seen & (1u << WK_FINGERPRINT);
	bool by_kind = seen & ((1u << WK_KIND) | (1u << WK_PA) | (1u << WK_STRAND));

	if (!(seen & (1u << WK_REASON)))
		return perr(cp, m, "waiver without reason: every waiver needs "
			    "reason: saying why the violation is accepted");
	if (fp && by_kind)
		return perr(cp, m, "waiver has both fingerprint and kind/pa/strand: "
			    "it matches either by fingerprint or by kind and pa");
	if (!fp && !(seen & (1u << WK_KIND)))
		return perr(cp, m, "waiver needs fingerprint, or kind and pa");
	if (!fp && !(seen & (1u << WK_PA)))
		return perr(cp, m, "waiver with kind needs pa: LO:HI (':' = any "
			    "address)");
	return MSR_OK;
}

/* One entry of `waivers:`. Cursor: its MAPPING_START; `w` is zeroed. */
static int parse_waiver(struct cfg_parser *cp, struct msr_waiver *w)
{
	yaml_mark_t m = cp->ev.start_mark;
	uint32_t seen = 0;
	int rc;

	w->strand = -1;
	w->line = (unsigned)m.line + 1;
	for (;;) {
		unsigned k;

		if ((rc = next_event(cp)))
			return rc;
		if (cp->ev.type == YAML_MAPPING_END_EVENT)
			return check_waiver(cp, m, seen);
		if (cp->ev.type != YAML_SCALAR_EVENT)
			return perr(cp, cp->ev.start_mark, "waiver keys must be plain "
				    "names");
		for (k = 0; k < WK_COUNT && strcmp(waiver_keys[k], scalar(cp)); k++)
			;
		if (k == WK_COUNT)
			return perr(cp, cp->ev.start_mark, "unknown key '%s' in a waiver: "
				    "known keys are fingerprint, kind, pa, strand, reason",
				    scalar(cp));
		if (seen & (1u << k))
			return perr(cp, cp->ev.start_mark, "duplicate key '%s' in a "
				    "waiver", waiver_keys[k]);
		seen |= 1u << k;
		if ((rc = next_event(cp)) || (rc = set_waiver_key(cp, k, w)))
			return rc;
	}
}

/* waivers: a list of waiver mappings (or empty). Cursor: the value. */
static int parse_waivers(struct cfg_parser *cp)
{
	struct msr_config *cfg = cp->cfg;
	int rc;

	cp->had_waivers = true;
	if (cp->ev.type == YAML_SCALAR_EVENT && is_null_scalar(cp))
		return MSR_OK;
	if (cp->ev.type != YAML_SEQUENCE_START_EVENT)
		return perr(cp, cp->ev.start_mark, "waivers: expected a list of "
			    "waivers (- fingerprint: ... or - kind: ... pa: ..., "
			    "each with reason: ...)");
	for (;;) {
		struct msr_waiver *grown;

		if ((rc = next_event(cp)))
			return rc;
		if (cp->ev.type == YAML_SEQUENCE_END_EVENT)
			return MSR_OK;
		if (cp->ev.type != YAML_MAPPING_START_EVENT)
			return perr(cp, cp->ev.start_mark, "waivers: each entry must be "
				    "a mapping with reason and either fingerprint or "
				    "kind and pa");
		if (cfg->nwaivers == MSR_MAX_WAIVERS)
			return perr(cp, cp->ev.start_mark, "waivers: more than %d "
				    "entries", MSR_MAX_WAIVERS);
		grown = realloc(cfg->waivers, (cfg->nwaivers + 1) * sizeof(*grown));
		if (!grown)
			return msr_error_set(cp->err, MSR_E_NOMEM, "config", cp->path,
					     "out of memory");
		cfg->waivers = grown;
		memset(&grown[cfg->nwaivers], 0, sizeof(*grown));
		/* counted before parsing so that a failed entry's reason is freed */
		rc = parse_waiver(cp, &grown[cfg->nwaivers++]);
		if (rc)
			return rc;
	}
}

static const char *const sections[] = {"system", "memory", "report", "limits",
				       "waivers"};

static int parse_section(struct cfg_parser *cp, unsigned s)
{
	uint32_t seen;
	int rc;

	switch (s) {
	case 0:
		return parse_keys(cp, "system", system_keys, &seen);
	case 1:
		return parse_memory(cp);
	case 2:
		if ((rc = parse_keys(cp, "report", report_keys, &seen)))
			return rc;
		/* `context: N` alone means N before and N after */
		if ((seen & 1u) && !(seen & 4u))
			cp->cfg->context_after = cp->cfg->context_len;
		return MSR_OK;
	case 3:
		return parse_keys(cp, "limits", limits_keys, &seen);
	default:
		return parse_waivers(cp);
	}
}

/* The root mapping. Cursor: the event after DOCUMENT_START. */
static int parse_root(struct cfg_parser *cp)
{
	uint32_t seen = 0;
	int rc;

	if (cp->ev.type == YAML_SCALAR_EVENT && is_null_scalar(cp))
		return MSR_OK;
	if (cp->ev.type != YAML_MAPPING_START_EVENT)
		return perr(cp, cp->ev.start_mark, "expected a mapping with sections "
			    "system, memory, report, limits, waivers");
	for (;;) {
		unsigned s;

		if ((rc = next_event(cp)))
			return rc;
		if (cp->ev.type == YAML_MAPPING_END_EVENT)
			return MSR_OK;
		if (cp->ev.type != YAML_SCALAR_EVENT)
			return perr(cp, cp->ev.start_mark, "section names must be plain "
				    "names");
		for (s = 0; s < 5 && strcmp(sections[s], scalar(cp)); s++)
			;
		if (s == 5)
			return perr(cp, cp->ev.start_mark, "unknown section '%s': known "
				    "sections are system, memory, report, limits, "
				    "waivers",
				    scalar(cp));
		if (seen & (1u << s))
			return perr(cp, cp->ev.start_mark, "duplicate section '%s'",
				    sections[s]);
		seen |= 1u << s;
		if ((rc = next_event(cp)) || (rc = parse_section(cp, s)))
			return rc;
	}
}

static int parse_stream(struct cfg_parser *cp)
{
	int rc;

	if ((rc = next_event(cp)))  /* STREAM_START */
		return rc;
	if ((rc = next_event(cp)))
		return rc;
	if (cp->ev.type == YAML_STREAM_END_EVENT)
		return MSR_OK; /* empty file or only comments: all defaults */
	if ((rc = next_event(cp)) || (rc = parse_root(cp)))
		return rc;
	if ((rc = next_event(cp)))  /* DOCUMENT_END */
		return rc;
	if ((rc = next_event(cp)))
		return rc;
	if (cp->ev.type != YAML_STREAM_END_EVENT)
		return perr(cp, cp->ev.start_mark, "expected one yaml document, found "
			    "more");
	return MSR_OK;
}

static int check_consistency(struct cfg_parser *cp)
{
	const struct msr_config *c = cp->cfg;

	if (c->cores * c->threads_per_core > MSR_MAX_STRANDS)
		return perr(cp, cp->marks[MK_TPC].line || cp->marks[MK_TPC].column ?
			    cp->marks[MK_TPC] : cp->marks[MK_CORES],
			    "system.cores=%u times system.threads_per_core=%u exceeds "
			    "%u strands", c->cores, c->threads_per_core, MSR_MAX_STRANDS);
	if (c->l1_line > c->l2_line)
		return perr(cp, cp->marks[MK_L1].line || cp->marks[MK_L1].column ?
			    cp->marks[MK_L1] : cp->marks[MK_L2],
			    "system.l1_line=%u is larger than system.l2_line=%u",
			    c->l1_line, c->l2_line);
	for (unsigned i = 0; i < c->nwaivers; i++) {
		yaml_mark_t m = {0, c->waivers[i].line - 1, 0};

		if (c->waivers[i].strand >= (int)msr_config_strands(c))
			return perr(cp, m, "waiver strand=%d: the system has %u "
				    "strands", c->waivers[i].strand,
				    msr_config_strands(c));
	}
	return MSR_OK;
}

int msr_config_load(struct msr_config *cfg, const char *path,
		    struct msr_error *err)
{
	struct cfg_parser cp;
	struct msr_config work = *cfg;
	FILE *f;
	int rc;

	memset(&cp, 0, sizeof(cp));
	f = fopen(path, "rb");
	if (!f)
		return msr_error_set(err, MSR_E_CONFIG, "config", path,
				     "cannot open the configuration file");
	if (!yaml_parser_initialize(&cp.parser)) {
		fclose(f);
		return msr_error_set(err, MSR_E_NOMEM, "config", path, "out of memory");
	}
	yaml_parser_set_input_file(&cp.parser, f);
	/* Images and waivers listed by the file replace those of `cfg`. */
	work.images = NULL;
	work.nimages = 0;
	work.waivers = NULL;
	work.nwaivers = 0;
	work.waiver_file = NULL;
	cp.path = path;
	cp.cfg = &work;
	cp.err = err;
	rc = parse_stream(&cp);
	if (!rc)
		rc = check_consistency(&cp);
	if (cp.have_ev)
		yaml_event_delete(&cp.ev);
	yaml_parser_delete(&cp.parser);
	fclose(f);
	if (rc) {
		msr_config_release(&work);
		return rc;
	}
	if (cp.had_waivers && !(work.waiver_file = strdup(path))) {
		msr_config_release(&work);
		return msr_error_set(err, MSR_E_NOMEM, "config", path, "out of memory");
	}
	if (!work.nimages) {
		work.images = cfg->images;
		work.nimages = cfg->nimages;
	} else {
		for (unsigned i = 0; i < cfg->nimages; i++)
			free(cfg->images[i]);
		free(cfg->images);
	}
	if (!cp.had_waivers) {
		work.waivers = cfg->waivers;
		work.nwaivers = cfg->nwaivers;
		work.waiver_file = cfg->waiver_file;
	} else {
		release_waivers(cfg);
	}
	*cfg = work;
	return MSR_OK;
}
