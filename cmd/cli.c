/*
 * cli.c - helpers shared by the subcommands: error printing, number
 * parsing for options, and --no-huge-pages.
 */
#include "cmd.h"
#include "thp-internal.h"
#include "utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void msr_cli_print_message(const char *msg)
{
	char *copy;
	const char *t = msr_utf8_clean(msg, &copy);

	fprintf(stderr, "msync-replay: %s\n", t ? t : msg);
	free(copy);
}

void msr_cli_print_error(const struct msr_error *err)
{
	char buf[2048];

	msr_cli_print_message(msr_error_format(err, buf, sizeof(buf)));
}

int msr_cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "msync-replay %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'msync-replay %s --help'.\n", cmd);
	return MSR_EXIT_UNUSABLE;
}

bool msr_cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

void msr_cli_no_huge_pages(const char *cmd)
{
	int rc = thp_disable();

	/* the report does not depend on it: say so and go on */
	if (rc)
		fprintf(stderr, "msync-replay %s: --no-huge-pages: this system cannot turn "
			"huge pages off for one process (%s); going on with its "
			"setting\n", cmd, strerror(rc));
}
