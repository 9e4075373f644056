/*
 * msgdef.c - the layout of every message code the testbench can send.
 *
 * This table is the single source of truth for message lengths and field
 * order (trace-format.md, pli-other.md). Decoders, encoders and the text
 * form all derive from it; a code missing here is an unknown code.
 */
#include "trace.h"

#include <string.h>

#define F(...) {__VA_ARGS__, MSR_F_END}

static const struct msr_msgdef defs[] = {
	{MSR_QUIT, 1, false, "QUIT", {MSR_F_END}, 0, 0},
	{MSR_SSTEP, 2, true, "SSTEP", F(MSR_F_TNUM), 0, 0},
	{MSR_IHWTW, 13, false, "IHWTW", {MSR_F_END}, 1, 2},
	{MSR_DHWTW, 14, false, "DHWTW", {MSR_F_END}, 1, 2},
	{MSR_ITLBREAD, 6, false, "ITLBREAD", {MSR_F_END}, 1, 2},
	{MSR_DTLBREAD, 6, false, "DTLBREAD", {MSR_F_END}, 1, 2},
	{MSR_ITLBWRITE, 7, false, "ITLBWRITE", {MSR_F_END}, 1, 2},
	{MSR_DTLBWRITE, 7, false, "DTLBWRITE", {MSR_F_END}, 1, 2},
	{MSR_TLBLOOKUP, 7, false, "TLBLOOKUP", {MSR_F_END}, 1, 2},
	{MSR_DTLBREAD_POP, 6, false, "DTLBREAD_POP", {MSR_F_END}, 1, 2},
	{MSR_ST_ISSUE, 21, true, "ST_ISSUE",
	 F(MSR_F_TNUM, MSR_F_PA, MSR_F_DATA, MSR_F_BMASK, MSR_F_ITYPE, MSR_F_TS), 0, 0},
	{MSR_ST_COMMIT, 17, true, "ST_COMMIT",
	 F(MSR_F_TNUM, MSR_F_PA, MSR_F_BMASK, MSR_F_INVVEC, MSR_F_L2HIT, MSR_F_TS), 0, 0},
	{MSR_ST_INV, 12, true, "ST_INV", F(MSR_F_CID, MSR_F_TNUM, MSR_F_PA, MSR_F_TS), 0, 0},
	{MSR_ST_UPDATE, 11, true, "ST_UPDATE", F(MSR_F_TNUM, MSR_F_PA, MSR_F_TS), 0, 0},
	{MSR_ST_ACK, 7, true, "ST_ACK", F(MSR_F_TNUM, MSR_F_RMO, MSR_F_TS), 0, 0},
	{MSR_LD_ISSUE, 13, true, "LD_ISSUE",
	 F(MSR_F_TNUM, MSR_F_PA, MSR_F_SIZE, MSR_F_ITYPE, MSR_F_TS), 0, 0},
	{MSR_LD_DATA, 12, true, "LD_DATA", F(MSR_F_TNUM, MSR_F_PA, MSR_F_DSRC, MSR_F_TS), 0, 0},
	{MSR_LD_FILL, 11, true, "LD_FILL", F(MSR_F_TNUM, MSR_F_PA, MSR_F_TS), 0, 0},
	{MSR_EVICT, 14, true, "EVICT", F(MSR_F_PA, MSR_F_INVVEC, MSR_F_TS), 0, 0},
	{MSR_EVICT_INV, 7, true, "EVICT_INV", F(MSR_F_CID, MSR_F_BANK, MSR_F_TS), 0, 0},
	{MSR_MEM_SLAM, 19, true, "MEM_SLAM", F(MSR_F_PA, MSR_F_DATA, MSR_F_BMASK, MSR_F_TS), 0, 0},
	{MSR_LD_POP, 2, true, "LD_POP", F(MSR_F_TNUM), 0, 0},
	{MSR_ST_POP, 2, true, "ST_POP", F(MSR_F_TNUM), 0, 0},
	{MSR_MEM_CHECK, 70, true, "MEM_CHECK", F(MSR_F_PA, MSR_F_PAYLOAD64), 0, 0},
	{MSR_DMA_ST, 21, true, "DMA_ST",
	 F(MSR_F_PA, MSR_F_DATA, MSR_F_BMASK, MSR_F_INV, MSR_F_TOTAL, MSR_F_TS), 0, 0},
	{MSR_INT_INTP, 3, false, "INT_INTP", {MSR_F_END}, 1, 0},
	{MSR_ASR_WRITE, 11, false, "ASR_WRITE", {MSR_F_END}, 1, 0},
	{MSR_ASI_WRITE, 19, false, "ASI_WRITE", {MSR_F_END}, 1, 0},
	{MSR_ASI_READ, 19, false, "ASI_READ", {MSR_F_END}, 1, 0},
	{MSR_CMP_WRITE, 10, false, "CMP_WRITE", {MSR_F_END}, 0, 0},
	{MSR_ASR_READ, 11, false, "ASR_READ", {MSR_F_END}, 1, 0},
	{MSR_CSR_READ, 18, false, "CSR_READ", {MSR_F_END}, 0, 0},
	{MSR_PIO_READ, 19, false, "PIO_READ", {MSR_F_END}, 0, 0},
	{MSR_REGDELTA, 0, false, "REGDELTA", {MSR_F_END}, 0, 0},
	{MSR_REGDELTA_END, 1, false, "REGDELTA_END", {MSR_F_END}, 0, 0},
};

/* Position + 1 of each code in defs[] (0 = unknown), for O(1) lookups. */
static const uint8_t def_index[MSR_CODE_LIMIT] = {
	[MSR_QUIT] = 1, [MSR_SSTEP] = 2, [MSR_IHWTW] = 3, [MSR_DHWTW] = 4,
	[MSR_ITLBREAD] = 5, [MSR_DTLBREAD] = 6, [MSR_ITLBWRITE] = 7,
	[MSR_DTLBWRITE] = 8, [MSR_TLBLOOKUP] = 9, [MSR_DTLBREAD_POP] = 10,
	[MSR_ST_ISSUE] = 11, [MSR_ST_COMMIT] = 12, [MSR_ST_INV] = 13,
	[MSR_ST_UPDATE] = 14, [MSR_ST_ACK] = 15, [MSR_LD_ISSUE] = 16,
	[MSR_LD_DATA] = 17, [MSR_LD_FILL] = 18, [MSR_EVICT] = 19,
	[MSR_EVICT_INV] = 20, [MSR_MEM_SLAM] = 21, [MSR_LD_POP] = 22,
	[MSR_ST_POP] = 23, [MSR_MEM_CHECK] = 24, [MSR_DMA_ST] = 25,
	[MSR_INT_INTP] = 26, [MSR_ASR_WRITE] = 27, [MSR_ASI_WRITE] = 28,
	[MSR_ASI_READ] = 29, [MSR_CMP_WRITE] = 30, [MSR_ASR_READ] = 31,
	[MSR_CSR_READ] = 32, [MSR_PIO_READ] = 33, [MSR_REGDELTA] = 34,
	[MSR_REGDELTA_END] = 35,
};

const struct msr_msgdef *msr_msgdef_get(unsigned code)
{
	if (code >= MSR_CODE_LIMIT || !def_index[code])
		return NULL;
	return &defs[def_index[code] - 1];
}

const struct msr_msgdef *msr_msgdef_by_name(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
		if (strlen(defs[i].name) == len && memcmp(defs[i].name, name, len) == 0)
			return &defs[i];
	return NULL;
}

static const char *const itype_names[MSR_IT_COUNT] = {
	"NONE", "LOAD", "BLOCK_LOAD", "DOUBLE_LOAD", "QUAD_LOAD",
	"PREFETCH", "STORE", "BLOCK_STORE", "ATOMIC", "BLK_INIT_ST",
};

const char *msr_itype_name(unsigned itype)
{
	return itype < MSR_IT_COUNT ? itype_names[itype] : NULL;
}

const char *msr_dsrc_name(unsigned dsrc)
{
	static const char *const names[] = {NULL, "STB", "L1", "L2"};

	return dsrc >= 1 && dsrc <= 3 ? names[dsrc] : NULL;
}

const char *msr_field_name(enum msr_field f)
{
	static const char *const names[] = {
		[MSR_F_END] = "", [MSR_F_TNUM] = "tnum", [MSR_F_CID] = "cid",
		[MSR_F_BANK] = "bank", [MSR_F_PA] = "pa", [MSR_F_DATA] = "data",
		[MSR_F_BMASK] = "bmask", [MSR_F_ITYPE] = "itype",
		[MSR_F_SIZE] = "size", [MSR_F_DSRC] = "dsrc",
		[MSR_F_INVVEC] = "invvec", [MSR_F_L2HIT] = "l2hit",
		[MSR_F_RMO] = "rmo", [MSR_F_INV] = "inv", [MSR_F_TOTAL] = "total",
		[MSR_F_TS] = "ts", [MSR_F_PAYLOAD64] = "data",
	};

	return (unsigned)f < sizeof(names) / sizeof(names[0]) ? names[f] : "";
}

unsigned msr_event_has(const struct msr_event *ev)
{
	enum { T = MSR_EVHAS_TNUM, P = MSR_EVHAS_PA, S = MSR_EVHAS_TS };

	/* A switch rather than the table: this runs once per event in stat. */
	switch (ev->code) {
	case MSR_ST_ISSUE: case MSR_ST_COMMIT: case MSR_ST_INV: case MSR_ST_UPDATE:
	case MSR_LD_ISSUE: case MSR_LD_DATA: case MSR_LD_FILL:
		return T | P | S;
	case MSR_ST_ACK:
		return T | S;
	case MSR_EVICT: case MSR_MEM_SLAM: case MSR_DMA_ST:
		return P | S;
	case MSR_EVICT_INV:
		return S;
	case MSR_MEM_CHECK: case MSR_CSR_READ: case MSR_PIO_READ:
		return P;
	case MSR_SSTEP: case MSR_LD_POP: case MSR_ST_POP:
	case MSR_INT_INTP: case MSR_ASR_WRITE: case MSR_ASI_WRITE: case MSR_ASI_READ:
	case MSR_ASR_READ:
		return T;
	case MSR_IHWTW: case MSR_DHWTW: case MSR_ITLBREAD: case MSR_DTLBREAD:
	case MSR_ITLBWRITE: case MSR_DTLBWRITE: case MSR_TLBLOOKUP: case MSR_DTLBREAD_POP:
		return T | S;
	default:
		return 0;
	}
}
