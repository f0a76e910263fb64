/*
 * service.h - running as a service: signals, systemd notification, watchdog.
 *
 * Signal handlers only set flags (SIGTERM/SIGINT: stop; SIGHUP: reload).
 * sd_notify (libsystemd) reports READY=1 once frames flow, STATUS= lines and
 * WATCHDOG=1 pings, which the pipeline sends only while it makes progress,
 * so systemd restarts a hung daemon. Without NOTIFY_SOCKET every call is a
 * cheap no-op.
 */
#ifndef TT_PIPELINE_SERVICE_H
#define TT_PIPELINE_SERVICE_H

#include <stdbool.h>
#include <stdint.h>

/* Installs SIGTERM/SIGINT/SIGHUP handlers (SA_RESTART off) and ignores SIGPIPE. */
void service_install_signals(void);
bool service_should_stop(void);
void service_request_stop(void);
/* True once per received SIGHUP. */
bool service_take_reload(void);

void service_notify_ready(void);
void service_notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sends WATCHDOG=1 when the watchdog is enabled and at most every half period;
 * call after each processed frame. */
void service_notify_watchdog(int64_t now_ns);
void service_notify_stopping(void);

#endif
