/*
 * main.c - msync-replay entry point: git-style subcommand dispatch.
 */
#include "cmd.h"
#include "msr_version.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{"check", msr_cmd_check, "replay a trace (and step log) and check it; write a violation report"},
	{"diff", msr_cmd_diff, "compare two violation reports: new, fixed, unchanged"},
	{"dump", msr_cmd_dump, "print a trace as canonical text, one event per line"},
	{"encode", msr_cmd_encode, "turn canonical text back into the binary message stream"},
	{"stat", msr_cmd_stat, "count events per message code and per strand"},
	{"slice", msr_cmd_slice, "cut a small reproducer out of a big dump around one violation"},
	{"tracediff", msr_cmd_tracediff, "compare two traces per strand; show where they part ways"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: msync-replay <command> [options] [args]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'msync-replay <command> --help' describes a command's options.\n"
		   "Exit codes: 0 clean, 1 violations found, 2 unusable input or usage error\n"
		   "(125 instead of 2 with check --bisect).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return MSR_EXIT_UNUSABLE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return MSR_EXIT_CLEAN;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("msync-replay %s\n", MSR_VERSION);
		return MSR_EXIT_CLEAN;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "msync-replay: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return MSR_EXIT_UNUSABLE;
}
