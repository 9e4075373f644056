/*
 * trace_test_util.h - helpers shared by the trace/ unit tests: a sample of
 * every event kind with edge values, temporary files, whole-file reads.
 */
#ifndef MSR_TRACE_TEST_UTIL_H
#define MSR_TRACE_TEST_UTIL_H

#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fill evs[] (room for 64) with one event of every code and edge values. */
static inline size_t tt_sample_events(struct msr_event *evs)
{
	size_t n = 0;
	struct msr_event *e;

#define NEW(c) (e = &evs[n++], memset(e, 0, sizeof(*e)), e->code = (uint16_t)(c))
	NEW(MSR_ST_ISSUE); e->tnum = 63; e->pa = 0xFFFFFFFFFFull; e->data = 0xFFFFFFFFFFFFFFFFull;
	e->bmask = 0xFF; e->itype = MSR_IT_BLK_INIT_ST; e->ts = 0xFFFFFFFFu;
	NEW(MSR_ST_ISSUE); e->tnum = 0; e->pa = 0x102008; e->data = 0xdeadbeef; e->bmask = 0x0f;
	e->itype = MSR_IT_STORE; e->ts = 1220;
	NEW(MSR_ST_COMMIT); e->tnum = 3; e->pa = 0x102008; e->bmask = 0; e->invvec = 0xFFFFFFFFu;
	e->l2hit = 1; e->ts = 1240;
	NEW(MSR_ST_INV); e->cid = 7; e->tnum = 3; e->pa = 0x102000; e->ts = 1245;
	NEW(MSR_ST_UPDATE); e->tnum = 3; e->pa = 0x102000; e->ts = 1245;
	NEW(MSR_ST_ACK); e->tnum = 3; e->rmo = 1; e->ts = 1241;
	for (unsigned it = 0; it < MSR_IT_COUNT; it++) {
		NEW(MSR_LD_ISSUE); e->tnum = (uint8_t)it; e->pa = 0x8000000000ull | it;
		e->size = 3; e->itype = (uint8_t)it; e->ts = 1200 + it;
	}
	for (unsigned d = 1; d <= 3; d++) {
		NEW(MSR_LD_DATA); e->tnum = 5; e->pa = 0x40; e->dsrc = (uint8_t)d; e->ts = d;
	}
	NEW(MSR_LD_FILL); e->tnum = 5; e->pa = 0x40; e->ts = 9;
	NEW(MSR_EVICT); e->pa = 0xFFFFFFFFF0ull; e->invvec = 0x81; e->ts = 10;
	NEW(MSR_EVICT_INV); e->cid = 7; e->bank = 7; e->ts = 11;
	NEW(MSR_MEM_SLAM); e->pa = 0x1000; e->data = 0x0123456789abcdefull; e->bmask = 0x80; e->ts = 0;
	NEW(MSR_LD_POP); e->tnum = 1;
	NEW(MSR_ST_POP); e->tnum = 2;
	NEW(MSR_MEM_CHECK); e->pa = 0x2000; e->nbytes = 64;
	for (int i = 0; i < 64; i++)
		e->bytes[i] = (uint8_t)(i * 7 + 1);
	NEW(MSR_DMA_ST); e->pa = 0x3000; e->data = 1; e->bmask = 0xFF; e->inv = 1; e->total = 64; e->ts = 77;
	NEW(MSR_SSTEP); e->tnum = 63;
	static const unsigned others[] = {
		MSR_IHWTW, MSR_DHWTW, MSR_ITLBREAD, MSR_DTLBREAD, MSR_ITLBWRITE,
		MSR_DTLBWRITE, MSR_TLBLOOKUP, MSR_DTLBREAD_POP, MSR_INT_INTP,
		MSR_ASR_WRITE, MSR_ASI_WRITE, MSR_ASI_READ, MSR_CMP_WRITE,
		MSR_ASR_READ, MSR_CSR_READ, MSR_PIO_READ};
	for (size_t k = 0; k < sizeof(others) / sizeof(others[0]); k++) {
		const struct msr_msgdef *def = msr_msgdef_get(others[k]);

		NEW(others[k]);
		e->nbytes = (uint8_t)(def->length - 1);
		for (int i = 0; i < e->nbytes; i++)
			e->bytes[i] = (uint8_t)(0xF0 + i);
		if (def->other_tnum_at)
			e->bytes[def->other_tnum_at - 1] = 9; /* a valid strand */
	}
	/* register deltas: header G, continuation C and G (ambiguous), W, X, F */
	NEW(MSR_REGDELTA); e->flags = MSR_EVF_RD_HEADER; e->rd_tid = 9999; e->rd_type = 'G';
	e->rd_extra = 2; e->rd_reg = 7; e->data = 0x1122334455667788ull;
	NEW(MSR_REGDELTA); e->rd_type = 'C'; e->rd_reg = 3; e->data = 1; e->flags = MSR_EVF_RD_AMBIGUOUS;
	NEW(MSR_REGDELTA); e->rd_type = 'G'; e->rd_extra = 1; e->rd_reg = 1; e->data = 2;
	e->flags = MSR_EVF_RD_AMBIGUOUS;
	NEW(MSR_REGDELTA); e->rd_type = 'W'; e->rd_extra = 7; e->rd_reg = 31; e->data = ~0ull;
	NEW(MSR_REGDELTA); e->rd_type = 'F'; e->rd_reg = 63; e->data = 0;
	NEW(MSR_REGDELTA_END);
	NEW(MSR_REGDELTA); e->flags = MSR_EVF_RD_HEADER; e->rd_tid = 12; e->rd_type = 'X';
	e->rd_extra = 0; e->rd_reg = 0xE7; e->data = 0;
	NEW(MSR_REGDELTA); e->rd_type = 'X'; e->rd_extra = 3; e->rd_reg = 99; e->data = 0x0abc;
	NEW(MSR_REGDELTA_END);
	NEW(MSR_QUIT);
#undef NEW
	for (size_t i = 0; i < n; i++)
		if (!msr_msgdef_get(evs[i].code)->memory && evs[i].code < 0x100) {
			/* named fields the decoder derives from the payload */
			const struct msr_msgdef *def = msr_msgdef_get(evs[i].code);

			if (def->other_tnum_at)
				evs[i].tnum = evs[i].bytes[def->other_tnum_at - 1];
			if (def->other_ts_at) {
				const uint8_t *b = evs[i].bytes + def->other_ts_at - 1;

				evs[i].ts = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
					    (uint32_t)b[2] << 8 | b[3];
			}
			if (def->code == MSR_CSR_READ || def->code == MSR_PIO_READ) {
				uint64_t pa = 0, d = 0;

				for (int k = 0; k < 8; k++) {
					pa = pa << 8 | evs[i].bytes[k];
					d = d << 8 | evs[i].bytes[8 + k];
				}
				evs[i].pa = pa;
				evs[i].data = d;
			}
		}
	return n;
}

/* A fresh temporary path (file created, empty); caller unlinks and frees. */
static inline char *tt_tmpfile(const char *suffix)
{
	char tmpl[256];
	int fd;

	snprintf(tmpl, sizeof(tmpl), "/tmp/msr-trace-test-XXXXXX%s", suffix);
	fd = mkstemps(tmpl, (int)strlen(suffix));
	if (fd < 0)
		return NULL;
	close(fd);
	return strdup(tmpl);
}

static inline void tt_write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	fwrite(p, 1, n, f);
	fclose(f);
}

/* Whole file into a malloc'd buffer (tests only). */
static inline uint8_t *tt_read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	size_t cap = 0, len = 0, r;

	if (!f)
		return NULL;
	do {
		if (len == cap) {
			cap = cap ? 2 * cap : 4096;
			p = realloc(p, cap);
		}
		r = fread(p + len, 1, cap - len, f);
		len += r;
	} while (r);
	fclose(f);
	*n = len;
	return p;
}

/* Compare the fields that identify an event (not index/offset/line). */
static inline int tt_event_cmp(const struct msr_event *a, const struct msr_event *b)
{
	struct msr_event x = *a, y = *b;

	x.index = y.index = 0;
	x.offset = y.offset = 0;
	x.line = y.line = 0;
	if (x.nbytes == 0)
		memset(x.bytes, 0, sizeof(x.bytes));
	if (y.nbytes == 0)
		memset(y.bytes, 0, sizeof(y.bytes));
	return memcmp(&x, &y, sizeof(x));
}

#endif /* MSR_TRACE_TEST_UTIL_H */
