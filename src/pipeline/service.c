/* Signals and systemd notification: see service.h. */
#include "service.h"

#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if TT_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "../core/log.h"

/* Lock-free atomics are async-signal-safe, and an exchange lets
 * service_take_reload() consume a SIGHUP without losing one that arrives
 * between a read and a clear. */
static atomic_int stop_requested;
static atomic_int reload_requested;

/* Last WATCHDOG=1 sent, in the caller's clock; only the pipeline thread
 * pings, so a plain variable would do, but an atomic costs nothing here. */
static _Atomic int64_t watchdog_last_ns = INT64_MIN;

static void on_stop(int sig)
{
	(void)sig;
	atomic_store(&stop_requested, 1);
}

static void on_reload(int sig)
{
	(void)sig;
	atomic_store(&reload_requested, 1);
}

static void install(int sig, void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocking read or sleep returns EINTR so that the
	 * loop sees the flag at once rather than at the next frame. */
	sa.sa_flags = 0;
	if (sigaction(sig, &sa, NULL))
		log_warn("service: cannot install the handler for signal %d", sig);
}

void service_install_signals(void)
{
	install(SIGTERM, on_stop);
	install(SIGINT, on_stop);
	install(SIGHUP, on_reload);
	install(SIGPIPE, SIG_IGN);
}

bool service_should_stop(void)
{
	return atomic_load(&stop_requested) != 0;
}

void service_request_stop(void)
{
	atomic_store(&stop_requested, 1);
}

bool service_take_reload(void)
{
	return atomic_exchange(&reload_requested, 0) != 0;
}

#if !TT_HAVE_SYSTEMD
/* Without libsystemd nothing is sent; a unit that waits for READY=1 or
 * watchdog pings is told once why they never come. */
static int sd_notify(int unset_environment, const char *msg)
{
	(void)unset_environment;
	(void)msg;
	static bool logged;
	if (getenv("NOTIFY_SOCKET"))
		log_once(&logged, LOG_WARN,
			 "service: built without libsystemd: no READY/WATCHDOG notifications "
			 "(use Type=simple and no WatchdogSec=)");
	return 0;
}

static int sd_watchdog_enabled(int unset_environment, uint64_t *usec)
{
	(void)unset_environment;
	*usec = 0;
	return 0;
}
#endif

static void notify(const char *msg)
{
	int rc = sd_notify(0, msg);
	if (rc < 0) {
		static bool logged;
		log_once(&logged, LOG_WARN, "service: sd_notify failed: %s", strerror(-rc));
	}
}

void service_notify_ready(void)
{
	notify("READY=1");
}

void service_notify_status(const char *fmt, ...)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "STATUS=");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	/* A newline would start a new assignment in the notify protocol. */
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	notify(buf);
}

void service_notify_watchdog(int64_t now_ns)
{
	uint64_t usec = 0;
	/* Read each time, not cached: it is a getenv and a getpid, and it
	 * keeps the behaviour right when the environment changes (tests). */
	if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
		return;
	int64_t half_ns = (int64_t)(usec * 1000 / 2);
	int64_t last = atomic_load(&watchdog_last_ns);
	if (last != INT64_MIN && now_ns - last < half_ns && now_ns >= last)
		return;
	atomic_store(&watchdog_last_ns, now_ns);
	notify("WATCHDOG=1");
}

void service_notify_stopping(void)
{
	notify("STOPPING=1");
}
