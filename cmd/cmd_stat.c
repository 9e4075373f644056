/*
 * cmd_stat.c - msync-replay stat (being built; see README).
 */
#include "cmd.h"

#include <stdio.h>

int msr_cmd_stat(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "msync-replay stat: not available in this build yet\n");
	return MSR_EXIT_UNUSABLE;
}
