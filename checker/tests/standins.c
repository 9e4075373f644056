/*
 * standins.c - minimal versions of the engine's name tables and the event
 * history, so the report tests build before the engine is in the tree.
 * Linear scans: tests only.
 */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const vnames[MSR_V_COUNT] = {
	"load-value", "store-data", "mem-check", "unmatched-ld-data",
	"unmatched-ld-fill", "unmatched-st-commit", "unmatched-st-ack",
	"unmatched-st-inv", "unmatched-st-update", "unmatched-evict-inv",
	"address-mismatch", "bypass-not-covered", "l1-hit-not-present",
	"pop-empty", "data-not-ready", "step-kind-mismatch", "step-log-short",
	"step-log-long", "order-assumption", "leftover", "tso-store-order",
	"tso-load-order", "tso-load-store", "tso-membar", "tso-atomicity",
	"tso-coherence", "tso-value",
};

const char *msr_vkind_name(enum msr_vkind kind)
{
	return (unsigned)kind < MSR_V_COUNT ? vnames[kind] : NULL;
}

enum msr_vkind msr_vkind_by_name(const char *name)
{
	for (unsigned k = 0; k < MSR_V_COUNT; k++)
		if (!strcmp(vnames[k], name))
			return (enum msr_vkind)k;
	return MSR_V_COUNT;
}

const char *msr_rel_name(enum msr_rel rel)
{
	static const char *const n[] = {"", "po", "rf", "co", "fr"};

	return (unsigned)rel < 5 ? n[rel] : "?";
}

struct msr_history {
	size_t cap, n;
	struct msr_event *ev;
};

int msr_history_create(size_t ring_events, struct msr_history **out,
		       struct msr_error *err)
{
	struct msr_history *h = calloc(1, sizeof(*h));

	(void)err;
	h->cap = ring_events;
	h->ev = calloc(ring_events, sizeof(*h->ev));
	*out = h;
	return MSR_OK;
}

void msr_history_add(struct msr_history *h, const struct msr_event *ev)
{
	h->ev[h->n++ % h->cap] = *ev;
}

size_t msr_history_context(const struct msr_history *h, int strand,
			   uint64_t pa8, uint64_t at, size_t n,
			   struct msr_event *out)
{
	size_t got = 0, first = h->n > h->cap ? h->n - h->cap : 0;

	for (size_t i = h->n; i-- > first && got < n;) {
		const struct msr_event *e = &h->ev[i % h->cap];

		if (e->index > at)
			continue;
		if ((strand >= 0 && e->tnum == strand) ||
		    (pa8 != UINT64_MAX && (e->pa & ~7ULL) == pa8))
			out[got++] = *e;
	}
	for (size_t i = 0; i < got / 2; i++) {
		struct msr_event t = out[i];

		out[i] = out[got - 1 - i];
		out[got - 1 - i] = t;
	}
	return got;
}

void msr_history_destroy(struct msr_history *h)
{
	free(h->ev);
	free(h);
}
