/*
 * slice_util.c - small pieces of `slice`: the open-addressing block map,
 * a growable index list, and the lookup of a violation's fingerprint in a
 * saved report of check.
 *
 * Nothing here reads traces or decides what a slice keeps.
 */
#include "slice-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

int msr_slice_blocks_put(struct msr_slice_blocks *b, uint64_t pa8, uint64_t idx)
{
	if (2 * (b->n + 1) > b->cap) {
		struct msr_slice_blocks nb = {0};

		nb.cap = b->cap ? 2 * b->cap : 1024;
		nb.key = calloc(nb.cap, sizeof(*nb.key));
		nb.last = calloc(nb.cap, sizeof(*nb.last));
		if (!nb.key || !nb.last) {
			free(nb.key);
			free(nb.last);
			return MSR_E_NOMEM;
		}
		for (size_t i = 0; i < b->cap; i++)
			if (b->key[i])
				msr_slice_blocks_put(&nb, b->key[i] - 1, b->last[i]);
		free(b->key);
		free(b->last);
		*b = nb;
	}
	size_t m = b->cap - 1, i = (size_t)mix64(pa8) & m;

	while (b->key[i] && b->key[i] != pa8 + 1)
		i = (i + 1) & m;
	if (!b->key[i]) {
		b->key[i] = pa8 + 1;
		b->last[i] = idx;
		b->n++;
	} else if (idx > b->last[i]) {
		b->last[i] = idx;
	}
	return MSR_OK;
}

uint64_t msr_slice_blocks_last(const struct msr_slice_blocks *b, uint64_t pa8)
{
	if (!b->cap)
		return UINT64_MAX;
	size_t m = b->cap - 1, i = (size_t)mix64(pa8) & m;

	while (b->key[i]) {
		if (b->key[i] == pa8 + 1)
			return b->last[i];
		i = (i + 1) & m;
	}
	return UINT64_MAX;
}

int msr_slice_push_u64(uint64_t **a, size_t *n, size_t *cap, uint64_t v)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		uint64_t *g = realloc(*a, nc * sizeof(*g));

		if (!g)
			return MSR_E_NOMEM;
		*a = g;
		*cap = nc;
	}
	(*a)[(*n)++] = v;
	return MSR_OK;
}

int msr_slice_report_lookup(const char *report, const char *vid, char fp[17],
			    struct msr_error *err)
{
	FILE *f = fopen(report, "r");
	yaml_parser_t ps;
	yaml_event_t ev;
	char key[32] = "", id[32] = "";
	bool want = false, done = false, found = false, keyturn = true;
	int depth = 0, rc = MSR_OK;

	if (!f)
		return msr_error_set(err, MSR_E_IO, "slice", report, "cannot open: %s",
				     strerror(errno));
	if (!yaml_parser_initialize(&ps)) {
		fclose(f);
		return msr_error_set(err, MSR_E_NOMEM, "slice", report, "out of memory");
	}
	yaml_parser_set_input_file(&ps, f);
	while (!done) {
		if (!yaml_parser_parse(&ps, &ev)) {
			char where[200];

			snprintf(where, sizeof(where), "%s:%zu:%zu", report,
				 ps.problem_mark.line + 1, ps.problem_mark.column + 1);
			rc = msr_error_set(err, MSR_E_FORMAT, "slice", where, "bad yaml: %s",
					   ps.problem ? ps.problem : "syntax error");
			break;
		}
		/* violations are mappings at depth 3: doc map > violations seq > map */
		switch (ev.type) {
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			depth++;
			keyturn = true;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			depth--;
			keyturn = true;
			break;
		case YAML_SCALAR_EVENT: {
			const char *val = (const char *)ev.data.scalar.value;

			if (depth != 3) {
				break;
			}
			if (keyturn) {
				snprintf(key, sizeof(key), "%s", val);
			} else if (!strcmp(key, "id")) {
				snprintf(id, sizeof(id), "%s", val);
				want = !strcmp(id, vid);
			} else if (!strcmp(key, "fingerprint") && want) {
				snprintf(fp, 17, "%s", val);
				found = true;
				done = true;
			}
			keyturn = !keyturn;
			break;
		}
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&ps);
	fclose(f);
	if (!rc && !found)
		rc = msr_error_set(err, MSR_E_USAGE, "slice", report,
				   "no violation id=%s with a fingerprint in the report", vid);
	return rc;
}

