/*
 * mem_guard.c - the memory limit of the replaying commands
 * (mem-guard-internal.h).
 */
#include "mem-guard-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define MGUARD_CGROUP_ROOT "/sys/fs/cgroup"
#define MGUARD_PATH_MAX 4096

/* The whole of a small file as a string; false when it cannot be read. */
static bool read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return false;
	while (len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return len > 0;
}

uint64_t mguard_cgroup_value(const char *text)
{
	char *end;
	unsigned long long v;

	if (text[0] < '0' || text[0] > '9')
		return UINT64_MAX; /* "max", or nothing we understand */
	v = strtoull(text, &end, 10);
	if ((*end && *end != '\n') || v >= (1ULL << 62))
		return UINT64_MAX;
	return v;
}

/* The smallest `file` limit from `dir` up to `top` (a prefix of dir). */
static uint64_t limit_upwards(char *dir, size_t top, const char *file)
{
	uint64_t best = UINT64_MAX;
	char path[MGUARD_PATH_MAX + 32], text[64];

	for (;;) {
		char *slash;

		snprintf(path, sizeof(path), "%s/%s", dir, file);
		if (read_small(path, text, sizeof(text))) {
			uint64_t v = mguard_cgroup_value(text);

			if (v < best)
				best = v;
		}
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < top)
			return best;
		*slash = '\0';
	}
}

uint64_t mguard_cgroup_limit(const char *proc_cgroup, const char *root)
{
	uint64_t best = UINT64_MAX;
	const char *line = proc_cgroup;

	/* v2: "0::/path"; v1: "N:controller,...:/path" with memory among them */
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;

		if (c2 && c2[1] == '/') {
			size_t clen = (size_t)(c2 - c1 - 1), plen = len - (size_t)(c2 + 1 - line);
			bool v2 = clen == 0 && c1 - line == 1 && line[0] == '0';
			bool v1 = false;
			char dir[MGUARD_PATH_MAX];
			int base;

			for (const char *p = c1 + 1; !v2 && p < c2;) {
				const char *comma = memchr(p, ',', (size_t)(c2 - p));
				size_t n = comma ? (size_t)(comma - p) : (size_t)(c2 - p);

				v1 |= n == 6 && !memcmp(p, "memory", 6);
				p += n + 1;
			}
			base = snprintf(dir, sizeof(dir), "%s%s", root, v2 ? "" : "/memory");
			if ((v1 || v2) && base > 0 && (size_t)base + plen < sizeof(dir)) {
				uint64_t v;

				memcpy(dir + base, c2 + 1, plen);
				dir[(size_t)base + plen] = '\0';
				/* "/": the root itself, whose own file (if any) counts */
				if (plen == 1)
					dir[base] = '\0';
				v = limit_upwards(dir, (size_t)base,
						  v2 ? "memory.max" : "memory.limit_in_bytes");
				if (v < best)
					best = v;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return best;
}

uint64_t mguard_auto(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t mem = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize
					      : (uint64_t)4 << 30;
	char text[8192];

	if (read_small("/proc/self/cgroup", text, sizeof(text))) {
		uint64_t cg = mguard_cgroup_limit(text, MGUARD_CGROUP_ROOT);

		if (cg < mem)
			mem = cg;
	}
	return mem / 4 * 3;
}

static size_t board_size(unsigned seats)
{
	return sizeof(struct mguard_board) + (size_t)seats * sizeof(_Atomic uint64_t);
}

struct mguard_board *mguard_board_create(unsigned seats)
{
	struct mguard_board *b;

	if (!seats)
		return NULL;
	b = mmap(NULL, board_size(seats), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
		return NULL;
	b->seats = seats;
	for (unsigned i = 0; i < seats; i++)
		atomic_init(&b->used[i], 0);
	return b;
}

void mguard_board_destroy(struct mguard_board *b)
{
	if (b)
		munmap(b, board_size(b->seats));
}

void mguard_board_clear(struct mguard_board *b, unsigned seat)
{
	if (b && seat < b->seats)
		atomic_store_explicit(&b->used[seat], 0, memory_order_relaxed);
}

void mguard_init(struct mguard *g, uint64_t mib, struct mguard_board *board,
		 unsigned seat, const char *knob)
{
	long psize = sysconf(_SC_PAGESIZE);

	g->knob = mib ? knob : NULL;
	g->limit = mib ? (mib >= (UINT64_MAX >> 20) ? UINT64_MAX : mib << 20)
		       : mguard_auto();
	/* an explicit limit is each replay's own */
	g->board = !mib && board && seat < board->seats ? board : NULL;
	g->seat = seat;
	g->others = 0;
	g->page = psize > 0 ? (uint64_t)psize : 4096;
	g->fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
}

void mguard_close(struct mguard *g)
{
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
	mguard_board_clear(g->board, g->seat);
	g->board = NULL;
}

/* Publish `used` and sum the other seats. */
static uint64_t board_others(struct mguard_board *b, unsigned seat, uint64_t used)
{
	uint64_t sum = 0;

	atomic_store_explicit(&b->used[seat], used, memory_order_relaxed);
	for (unsigned i = 0; i < b->seats; i++)
		if (i != seat)
			sum += atomic_load_explicit(&b->used[i], memory_order_relaxed);
	return sum;
}

/* Over the shared limit: the sum is, and this replay holds more than an
 * even share, so the replays that stop are the ones that made it so. */
static bool over_shared(const struct mguard *g, uint64_t used)
{
	return g->board && used + g->others > g->limit &&
	       used > g->limit / g->board->seats;
}

bool mguard_over(struct mguard *g, uint64_t *used)
{
	*used = 0;
	if (g->fd >= 0) {
		/* "size resident shared ...", in pages */
		char buf[128];
		ssize_t n = pread(g->fd, buf, sizeof(buf) - 1, 0);
		const char *p;

		if (n > 0) {
			buf[n] = '\0';
			p = strchr(buf, ' ');
			if (p)
				*used = strtoull(p + 1, NULL, 10) * g->page;
		}
	} else {
		struct rusage ru;

		if (!getrusage(RUSAGE_SELF, &ru) && ru.ru_maxrss > 0)
			*used = (uint64_t)ru.ru_maxrss << 10; /* KiB on Linux */
	}
	if (g->board && *used)
		g->others = board_others(g->board, g->seat, *used);
	return *used > g->limit || over_shared(g, *used);
}

/* Bytes in MiB, rounded up: over a limit of N MiB reads N + 1. */
static unsigned long long mib_up(uint64_t bytes)
{
	return (unsigned long long)((bytes + (1u << 20) - 1) >> 20);
}

int mguard_error(const struct mguard *g, struct msr_error *err, const char *module,
		 const char *trace, uint64_t events, uint64_t used)
{
	unsigned long long mib = mib_up(used);

	if (used <= g->limit && over_shared(g, used))
		return msr_error_set(err, MSR_E_NOMEM, module, trace,
				     "memory limit reached after %llu events: %llu MiB "
				     "resident, %llu MiB with the replays running beside "
				     "it, over the automatic limit of %llu MiB they share; "
				     "run fewer at once (-j) or give each its own limit "
				     "(--max-memory)",
				     (unsigned long long)events, mib,
				     mib_up(used + g->others),
				     (unsigned long long)(g->limit >> 20));
	return msr_error_set(err, MSR_E_NOMEM, module, trace,
			     "memory limit reached after %llu events: %llu MiB resident, "
			     "the limit is %llu MiB (%s); memory grows with the "
			     "addresses the trace touches: raise the limit if the "
			     "machine has room",
			     (unsigned long long)events, mib,
			     (unsigned long long)(g->limit >> 20),
			     g->knob ? g->knob : "automatic: 3/4 of the machine's or the "
						 "cgroup's memory");
}
