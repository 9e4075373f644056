/*
 * query.c - read-only questions about the engine's state between two
 * events: what a strand still has in flight, and the memory image of one
 * block. Used by tools that cut a trace (slice) to find quiet points and
 * the memory a cut-down trace starts from.
 *
 * These functions never change the engine's state and never emit anything.
 */
#include "engine-internal.h"

#include <string.h>

int msr_engine_strand_inflight(const struct msr_engine *e, unsigned tnum,
			       struct msr_strand_inflight *out)
{
	const struct strand *s;

	memset(out, 0, sizeof(*out));
	if (tnum >= msr_config_strands(&e->cfg))
		return MSR_E_USAGE;
	s = &e->strands[tnum];
	for (uint64_t q = s->ld.head; q < s->ld.tail; q++) {
		const struct ld_ent *le = msr_ring_at(&s->ld, q);

		if (!(le->flags & LDF_POPPED))
			out->loads++;
	}
	for (uint64_t q = s->st.head; q < s->st.tail; q++) {
		const struct st_ent *se = msr_ring_at(&s->st, q);

		if (se->flags & STF_POPPED)
			continue;
		out->stores++;
		if (!(se->flags & STF_ACKED))
			out->unacked++;
		if (!(se->flags & STF_COMMITTED))
			out->uncommitted++;
	}
	out->fills = s->fill_n;
	out->answers = s->pend_n;
	return MSR_OK;
}

void msr_engine_mem_peek(const struct msr_engine *e, uint64_t pa8,
			 uint8_t data[8], uint8_t *known)
{
	struct msr_src src[8];

	/* msr_mem_read only looks up pages (create=false): no state changes */
	msr_mem_read((struct msr_engine *)e, pa8 & ~7ULL, data, known, src);
}
