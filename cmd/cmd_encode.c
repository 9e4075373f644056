/*
 * cmd_encode.c - msync-replay encode (being built; see README).
 */
#include "cmd.h"

#include <stdio.h>

int msr_cmd_encode(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "msync-replay encode: not available in this build yet\n");
	return MSR_EXIT_UNUSABLE;
}
