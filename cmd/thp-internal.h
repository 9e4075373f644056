/*
 * thp-internal.h - transparent huge pages off for this process, for the
 * commands that replay a trace (check and slice, --no-huge-pages).
 *
 * The engine's and the TSO pass's tables of 4 MiB or more ask for huge
 * pages (engine/hugepage.h), which makes their first touch cheap where a
 * page fault is dear. Some virtual machines hand freed memory back to
 * their host a few seconds after it is freed; a fresh huge page there
 * costs the host's backing of 2 MiB at once, several times what the same
 * memory costs in small pages, so a replay that does not follow another
 * one closely can run faster without them (docs/performance.md, "Huge
 * pages for the large tables"). The switch is the process's own
 * (PR_SET_THP_DISABLE): the advice then has no effect, in this process
 * and in the children it forks. No global state of ours; never prints or
 * exits. Private to cmd/.
 */
#ifndef MSR_THP_INTERNAL_H
#define MSR_THP_INTERNAL_H

/* Turn transparent huge pages off for this process and the children it
 * forks from now on: 0, or an errno value (the kernel cannot: the
 * system's setting stays). */
int thp_disable(void);

#endif /* MSR_THP_INTERNAL_H */
