/* Tests of src/pipeline/service.c: signal flags and sd_notify messages,
 * received on a fake NOTIFY_SOCKET that the test binds itself. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../src/pipeline/service.h"
#include "common/testutil.h"

/* Notifications need libsystemd; their tests skip in a build without. */
#if TT_HAVE_SYSTEMD
#define NEED_SYSTEMD()
#else
#define NEED_SYSTEMD() skip()
#endif

#define SEC_NS 1000000000LL

struct fake_systemd {
	int fd;
	char dir[512];
	char path[600];
};

static int setup_socket(void **state)
{
	struct fake_systemd *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	const char *dir = test_tmpdir();
	assert_non_null(dir);
	snprintf(f->dir, sizeof(f->dir), "%s", dir);
	snprintf(f->path, sizeof(f->path), "%s/notify", f->dir);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	assert_true(strlen(f->path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
	f->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(f->fd >= 0);
	assert_int_equal(bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(setenv("NOTIFY_SOCKET", f->path, 1), 0);
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	*state = f;
	return 0;
}

static int teardown_socket(void **state)
{
	struct fake_systemd *f = *state;
	close(f->fd);
	unlink(f->path);
	rmdir(f->dir);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	free(f);
	return 0;
}

/* The next datagram, or NULL when none is queued. sd_notify() sends
 * synchronously, so whatever it sent is queued when it returns: no waiting. */
static const char *next_message(struct fake_systemd *f)
{
	static char buf[1024];
	ssize_t n = recv(f->fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	if (n < 0) {
		assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

static void test_signals_set_flags(void **state)
{
	(void)state;
	service_install_signals();

	struct sigaction sa;
	assert_int_equal(sigaction(SIGTERM, NULL, &sa), 0);
	assert_true(sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
	assert_int_equal(sa.sa_flags & SA_RESTART, 0);
	assert_int_equal(sigaction(SIGINT, NULL, &sa), 0);
	assert_true(sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
	assert_int_equal(sigaction(SIGHUP, NULL, &sa), 0);
	assert_true(sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
	assert_int_equal(sa.sa_flags & SA_RESTART, 0);
	assert_int_equal(sigaction(SIGPIPE, NULL, &sa), 0);
	assert_true(sa.sa_handler == SIG_IGN);

	assert_false(service_take_reload());
	assert_int_equal(raise(SIGHUP), 0);
	assert_true(service_take_reload());
	assert_false(service_take_reload());
	assert_int_equal(raise(SIGHUP), 0);
	assert_int_equal(raise(SIGHUP), 0);
	assert_true(service_take_reload());
	assert_false(service_take_reload());

	assert_int_equal(raise(SIGPIPE), 0); /* ignored: we are still here */

	assert_false(service_should_stop());
	assert_int_equal(raise(SIGTERM), 0);
	assert_true(service_should_stop());
	assert_true(service_should_stop());
	assert_false(service_take_reload());
}

static void test_request_stop(void **state)
{
	(void)state;
	service_request_stop();
	assert_true(service_should_stop());
}

static void test_ready_status_stopping(void **state)
{
	NEED_SYSTEMD();
	struct fake_systemd *f = *state;
	assert_null(next_message(f));
	service_notify_ready();
	assert_string_equal(next_message(f), "READY=1");
	service_notify_status("tracking %d objects at %.1f fps", 7, 29.5);
	assert_string_equal(next_message(f), "STATUS=tracking 7 objects at 29.5 fps");
	service_notify_status("two\nlines");
	assert_string_equal(next_message(f), "STATUS=two lines");
	service_notify_stopping();
	assert_string_equal(next_message(f), "STOPPING=1");
	assert_null(next_message(f));
}

static void test_watchdog_rate_limited(void **state)
{
	NEED_SYSTEMD();
	struct fake_systemd *f = *state;
	assert_int_equal(setenv("WATCHDOG_USEC", "2000000", 1), 0); /* 2 s: ping every 1 s */
	int64_t t = 1000 * SEC_NS;
	service_notify_watchdog(t);
	assert_string_equal(next_message(f), "WATCHDOG=1");
	service_notify_watchdog(t + SEC_NS / 10);
	service_notify_watchdog(t + SEC_NS / 2);
	service_notify_watchdog(t + SEC_NS - 1);
	assert_null(next_message(f));
	service_notify_watchdog(t + SEC_NS);
	assert_string_equal(next_message(f), "WATCHDOG=1");
	service_notify_watchdog(t + SEC_NS + 1);
	assert_null(next_message(f));
	service_notify_watchdog(t + 5 * SEC_NS);
	assert_string_equal(next_message(f), "WATCHDOG=1");
	assert_null(next_message(f));

	/* WATCHDOG_PID naming another process: the watchdog is not ours. */
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid() + 1);
	assert_int_equal(setenv("WATCHDOG_PID", pid, 1), 0);
	service_notify_watchdog(t + 100 * SEC_NS);
	assert_null(next_message(f));
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	assert_int_equal(setenv("WATCHDOG_PID", pid, 1), 0);
	service_notify_watchdog(t + 200 * SEC_NS);
	assert_string_equal(next_message(f), "WATCHDOG=1");
}

static void test_no_watchdog_when_disabled(void **state)
{
	NEED_SYSTEMD();
	struct fake_systemd *f = *state;
	/* No WATCHDOG_USEC: never a ping, however often it is called. */
	for (int i = 0; i < 100; i++)
		service_notify_watchdog(5000 * SEC_NS + (int64_t)i * 10 * SEC_NS);
	assert_null(next_message(f));
	assert_int_equal(setenv("WATCHDOG_USEC", "0", 1), 0);
	service_notify_watchdog(9000 * SEC_NS);
	assert_null(next_message(f));
	assert_int_equal(setenv("WATCHDOG_USEC", "garbage", 1), 0);
	service_notify_watchdog(9100 * SEC_NS);
	assert_null(next_message(f));
	/* Other notifications still go through. */
	service_notify_ready();
	assert_string_equal(next_message(f), "READY=1");
	assert_null(next_message(f));
}

static void test_no_socket_is_a_no_op(void **state)
{
	(void)state;
	unsetenv("NOTIFY_SOCKET");
	setenv("WATCHDOG_USEC", "1000000", 1);
	service_notify_ready();
	service_notify_status("nobody listens");
	service_notify_watchdog(20000 * SEC_NS);
	service_notify_stopping();
	unsetenv("WATCHDOG_USEC");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_signals_set_flags),
	    cmocka_unit_test(test_request_stop),
	    cmocka_unit_test_setup_teardown(test_ready_status_stopping, setup_socket, teardown_socket),
	    cmocka_unit_test_setup_teardown(test_watchdog_rate_limited, setup_socket, teardown_socket),
	    cmocka_unit_test_setup_teardown(test_no_watchdog_when_disabled, setup_socket, teardown_socket),
	    cmocka_unit_test(test_no_socket_is_a_no_op),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
