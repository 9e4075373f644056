/*
 * cmd_check.c - msync-replay check (being built; see README).
 */
#include "cmd.h"

#include <stdio.h>

int msr_cmd_check(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "msync-replay check: not available in this build yet\n");
	return MSR_EXIT_UNUSABLE;
}
