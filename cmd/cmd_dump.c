/*
 * cmd_dump.c - msync-replay dump (being built; see README).
 */
#include "cmd.h"

#include <stdio.h>

int msr_cmd_dump(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "msync-replay dump: not available in this build yet\n");
	return MSR_EXIT_UNUSABLE;
}
