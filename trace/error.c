/*
 * error.c - the caller-owned error chain shared by every module.
 *
 * An error is a small fixed struct (no allocation), so it can be filled on
 * any path, including out-of-memory ones. Never prints; the CLI does.
 */
#include "trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void msr_error_clear(struct msr_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}

static __attribute__((format(printf, 4, 0))) void
cause_fill(struct msr_error_cause *c, const char *module,
		       const char *where, const char *fmt, va_list ap)
{
	snprintf(c->module, sizeof(c->module), "%s", module ? module : "");
	snprintf(c->where, sizeof(c->where), "%s", where ? where : "");
	vsnprintf(c->text, sizeof(c->text), fmt, ap);
}

int msr_error_set(struct msr_error *err, int status, const char *module,
		  const char *where, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return status;
	memset(err, 0, sizeof(*err));
	err->status = status;
	err->ncauses = 1;
	va_start(ap, fmt);
	cause_fill(&err->cause[0], module, where, fmt, ap);
	va_end(ap);
	return status;
}

int msr_error_wrap(struct msr_error *err, const char *module, const char *where,
		   const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return MSR_E_INTERNAL;
	if (err->ncauses == 0)
		err->status = err->status ? err->status : MSR_E_INTERNAL;
	if (err->ncauses >= MSR_ERROR_MAX_CAUSES)
		return err->status; /* keep the innermost causes: they are precise */
	va_start(ap, fmt);
	cause_fill(&err->cause[err->ncauses++], module, where, fmt, ap);
	va_end(ap);
	return err->status;
}

static size_t append(char *buf, size_t size, size_t pos, const char *s)
{
	size_t n = strlen(s);

	if (pos + 1 >= size)
		return pos;
	if (n > size - pos - 1)
		n = size - pos - 1;
	memcpy(buf + pos, s, n);
	buf[pos + n] = '\0';
	return pos + n;
}

char *msr_error_format(const struct msr_error *err, char *buf, size_t size)
{
	size_t pos = 0;
	bool first = true;

	if (!size)
		return buf;
	buf[0] = '\0';
	if (!err || err->ncauses == 0)
		return buf;
	for (unsigned i = err->ncauses; i-- > 0;) {
		const struct msr_error_cause *c = &err->cause[i];
		const char *parts[2] = {c->where, c->text};

		for (int p = 0; p < 2; p++) {
			if (!parts[p][0])
				continue;
			if (!first)
				pos = append(buf, size, pos, ": ");
			pos = append(buf, size, pos, parts[p]);
			first = false;
		}
	}
	return buf;
}
