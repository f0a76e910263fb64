/*
 * log.h - journald-friendly logging.
 *
 * Lines go to stderr as "<N>tabletrack: LEVEL: message" when stderr is the
 * journal (JOURNAL_STREAM set), else as "tabletrack: LEVEL: message". The
 * <N> prefix lets journald pick the priority. Thread-safe (one write a line).
 *
 * log_once_*() variants take a caller-owned flag so that a recurring fault
 * (lost camera, unreachable host) is logged once until it is cleared with
 * log_once_reset(), which logs the recovery.
 */
#ifndef TT_CORE_LOG_H
#define TT_CORE_LOG_H

#include <stdbool.h>

enum log_level { LOG_ERROR = 3, LOG_WARN = 4, LOG_INFO = 6, LOG_DEBUG = 7 };

/* Messages above this level are dropped. Default LOG_INFO. */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* "error", "warning", "info", "debug" (static string; "?" for others). */
const char *log_level_name(enum log_level level);

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* Logs only when *flag is false, then sets it. */
void log_once(bool *flag, enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* When *flag is set, logs the recovery message at INFO and clears it. */
void log_once_reset(bool *flag, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
