/*
 * names.c - report names of violation kinds and proof relations, and the
 * UltraSPARC T2 default configuration.
 *
 * The names are part of the report format (semantics.md section 6): never
 * rename one, only add.
 */
#include "engine-internal.h"

#include <string.h>

static const char *const vkind_names[MSR_V_COUNT] = {
	[MSR_V_LOAD_VALUE] = "load-value",
	[MSR_V_STORE_DATA] = "store-data",
	[MSR_V_MEM_CHECK] = "mem-check",
	[MSR_V_UNMATCHED_LD_DATA] = "unmatched-ld-data",
	[MSR_V_UNMATCHED_LD_FILL] = "unmatched-ld-fill",
	[MSR_V_UNMATCHED_ST_COMMIT] = "unmatched-st-commit",
	[MSR_V_UNMATCHED_ST_ACK] = "unmatched-st-ack",
	[MSR_V_UNMATCHED_ST_INV] = "unmatched-st-inv",
	[MSR_V_UNMATCHED_ST_UPDATE] = "unmatched-st-update",
	[MSR_V_UNMATCHED_EVICT_INV] = "unmatched-evict-inv",
	[MSR_V_ADDRESS_MISMATCH] = "address-mismatch",
	[MSR_V_BYPASS_NOT_COVERED] = "bypass-not-covered",
	[MSR_V_L1_HIT_NOT_PRESENT] = "l1-hit-not-present",
	[MSR_V_POP_EMPTY] = "pop-empty",
	[MSR_V_DATA_NOT_READY] = "data-not-ready",
	[MSR_V_STEP_KIND_MISMATCH] = "step-kind-mismatch",
	[MSR_V_STEP_LOG_SHORT] = "step-log-short",
	[MSR_V_STEP_LOG_LONG] = "step-log-long",
	[MSR_V_ORDER_ASSUMPTION] = "order-assumption",
	[MSR_V_LEFTOVER] = "leftover",
	[MSR_V_TSO_STORE_ORDER] = "tso-store-order",
	[MSR_V_TSO_LOAD_ORDER] = "tso-load-order",
	[MSR_V_TSO_LOAD_STORE] = "tso-load-store",
	[MSR_V_TSO_MEMBAR] = "tso-membar",
	[MSR_V_TSO_ATOMICITY] = "tso-atomicity",
	[MSR_V_TSO_COHERENCE] = "tso-coherence",
	[MSR_V_TSO_VALUE] = "tso-value",
};

const char *msr_vkind_name(enum msr_vkind kind)
{
	if ((unsigned)kind >= MSR_V_COUNT)
		return "unknown";
	return vkind_names[kind];
}

enum msr_vkind msr_vkind_by_name(const char *name)
{
	if (!name)
		return MSR_V_COUNT;
	for (unsigned k = 0; k < MSR_V_COUNT; k++)
		if (strcmp(vkind_names[k], name) == 0)
			return (enum msr_vkind)k;
	return MSR_V_COUNT;
}

const char *msr_rel_name(enum msr_rel rel)
{
	switch (rel) {
	case MSR_REL_NONE:
		return "";
	case MSR_REL_PO:
		return "po";
	case MSR_REL_RF:
		return "rf";
	case MSR_REL_CO:
		return "co";
	case MSR_REL_FR:
		return "fr";
	}
	return "?";
}

void msr_config_default(struct msr_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cores = 8;
	cfg->threads_per_core = 8;
	cfg->l1_line = 16;
	cfg->l2_line = 64;
	cfg->l2_banks = 8;
	cfg->context_len = 8;
	cfg->context_after = 8;
	cfg->max_violations = 0;
	cfg->step_lookahead = (size_t)1 << 20;
	cfg->max_inflight = (size_t)1 << 16;
	cfg->mab_window = MSR_DEFAULT_MAB_WINDOW;
}
