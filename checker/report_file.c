/*
 * report_file.c - how every report file reaches the disk: written to a
 * temporary file in the target's directory and renamed into place, so that a
 * report file that exists is always complete.
 *
 * Only a regular file is ever replaced by renaming: a device (/dev/null), a
 * FIFO or a symbolic link is written in place, and "-" is standard output.
 * Never leaves a temporary file behind on a failure it can see.
 */
#include "report-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int close_checked(FILE *f, int rc, const char *module, const char *path,
			 const char *what, struct msr_error *err)
{
	if (fclose(f) && !rc)
		rc = msr_error_set(err, MSR_E_IO, module, path,
				   "cannot write the %s: %s", what, strerror(errno));
	return rc;
}

static int write_in_place(const char *path, const struct report_file_sink *s,
			  struct msr_error *err)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return msr_error_set(err, MSR_E_IO, s->module, path,
				     "cannot open the %s for writing: %s", s->what,
				     strerror(errno));
	return close_checked(f, s->body(f, s->ctx, path, err), s->module, path,
			     s->what, err);
}

int report_file_write(const char *path, const struct report_file_sink *s,
		      struct msr_error *err)
{
	char tmp[4096];
	const char *slash;
	struct stat st;
	mode_t mask;
	FILE *f;
	int fd, rc;

	if (!path || !strcmp(path, "-"))
		return s->body(stdout, s->ctx, "<stdout>", err);
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return write_in_place(path, s, err);
	slash = strrchr(path, '/');
	if (slash)
		rc = snprintf(tmp, sizeof(tmp), "%.*s/.%s.XXXXXX",
			      (int)(slash - path), path, slash + 1);
	else
		rc = snprintf(tmp, sizeof(tmp), ".%s.XXXXXX", path);
	if (rc < 0 || (size_t)rc >= sizeof(tmp))
		return msr_error_set(err, MSR_E_IO, s->module, path, "path too long");
	fd = mkstemp(tmp);
	if (fd < 0)
		return msr_error_set(err, MSR_E_IO, s->module, path,
				     "cannot create a temporary file in the %s's "
				     "directory: %s", s->what, strerror(errno));
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) || !(f = fdopen(fd, "w"))) {
		rc = msr_error_set(err, MSR_E_IO, s->module, tmp, "%s", strerror(errno));
		close(fd);
		unlink(tmp);
		return rc;
	}
	rc = close_checked(f, s->body(f, s->ctx, path, err), s->module, path,
			   s->what, err);
	if (!rc && rename(tmp, path))
		rc = msr_error_set(err, MSR_E_IO, s->module, path,
				   "cannot rename %s into place: %s", tmp,
				   strerror(errno));
	if (rc)
		unlink(tmp);
	return rc;
}
