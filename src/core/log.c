#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static enum log_level g_level = LOG_INFO;

void log_set_level(enum log_level level) { g_level = level; }
enum log_level log_get_level(void) { return g_level; }

const char *log_level_name(enum log_level level)
{
	switch (level) {
	case LOG_ERROR: return "error";
	case LOG_WARN: return "warning";
	case LOG_INFO: return "info";
	case LOG_DEBUG: return "debug";
	}
	return "?";
}

static void log_v(enum log_level level, const char *fmt, va_list ap)
{
	if (level > g_level)
		return;
	char line[1024];
	int n = 0;
	/* Built in one buffer and written with one call so lines from several
	 * threads never interleave. */
	if (getenv("JOURNAL_STREAM"))
		n = snprintf(line, sizeof line, "<%d>", (int)level);
	n += snprintf(line + n, sizeof line - (size_t)n, "tabletrack: %s: ", log_level_name(level));
	if (n < (int)sizeof line)
		n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	if (n > (int)sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, (size_t)n);
	(void)w;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_v(level, fmt, ap);
	va_end(ap);
}

void log_once(bool *flag, enum log_level level, const char *fmt, ...)
{
	if (*flag)
		return;
	*flag = true;
	va_list ap;
	va_start(ap, fmt);
	log_v(level, fmt, ap);
	va_end(ap);
}

void log_once_reset(bool *flag, const char *fmt, ...)
{
	if (!*flag)
		return;
	*flag = false;
	va_list ap;
	va_start(ap, fmt);
	log_v(LOG_INFO, fmt, ap);
	va_end(ap);
}
