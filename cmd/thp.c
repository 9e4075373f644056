/*
 * thp.c - transparent huge pages off for this process (thp-internal.h).
 */
#include "thp-internal.h"

#include <errno.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

int thp_disable(void)
{
#ifdef PR_SET_THP_DISABLE
	return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0 ? 0 : errno;
#else
	return ENOSYS; /* no such switch: nor are there huge pages to turn off */
#endif
}
