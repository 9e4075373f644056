/*
 * many-junit-internal.h - one JUnit document for `check` on several traces
 * (--junit FILE): a private directory beside FILE where each replay writes
 * its own document, then their merge into FILE in input order
 * (msr_report_junit_merge), with class names that keep traces of the same
 * file name apart. Touches nothing but FILE and that directory; never
 * prints or exits. Private to cmd/.
 */
#ifndef MSR_MANY_JUNIT_INTERNAL_H
#define MSR_MANY_JUNIT_INTERNAL_H

#include "trace.h"

#include <stddef.h>

struct mjunit;

/* Create the directory beside `file` (.msync-replay-junit-XXXXXX) and name
 * a document in it for each of `n` traces; NULL with errno set when it
 * cannot be made. */
struct mjunit *mjunit_open(const char *file, size_t n);

/* Where the replay of trace i (0-based) writes its document. */
const char *mjunit_part(const struct mjunit *j, size_t i);

/*
 * Write the file: a testsuite per trace (traces[i], as given), in order;
 * why[i] says why trace i has none when its replay left no document. Class
 * names are msync-replay.<file name>, or, when file names repeat, keep the
 * fewest trailing directories (the same number for all) that make them
 * distinct. Returns MSR_OK or fills err.
 */
int mjunit_merge(const struct mjunit *j, const char *const *traces,
		 const char *const *why, struct msr_error *err);

/* Remove the directory and everything in it (a replay killed while
 * writing leaves a temporary file there), and free j. NULL is a no-op. */
void mjunit_close(struct mjunit *j);

#endif /* MSR_MANY_JUNIT_INTERNAL_H */
