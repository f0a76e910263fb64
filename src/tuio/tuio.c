#include "tuio.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <lo/lo.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/err.h"
#include "../core/log.h"
#include "tuio_encode.h"
#include "tuio_net.h"

#define DEFAULT_MAX_CLIENTS 16
#define QUEUE_BYTES (256u << 10)
#define MAX_RECORD ((64u << 10) + 16)
#define RBUF_BYTES 4096
#define HANDSHAKE_TIMEOUT_NS 3000000000LL
#define STALL_TIMEOUT_NS 3000000000LL
#define CONTROL_BURST 16.0
#define CONTROL_PER_S 8.0
#define CONNECT_TIMEOUT_NS 5000000000LL
#define CLOSING_TIMEOUT_NS 2000000000LL
#define BACKOFF_MIN_NS 250000000LL
#define BACKOFF_MAX_NS 8000000000LL
#define UDP_QUIET_NS 2000000000LL
#define READS_PER_SERVICE 4
#define ACCEPTS_PER_SERVICE 8

enum conn_state { CONN_FREE = 0, CONN_CONNECTING, CONN_HANDSHAKE, CONN_OPEN, CONN_CLOSING };

struct conn {
	int fd;
	enum conn_state state;
	int64_t since_ns;
	struct sockaddr_storage peer; /* address only is compared (per-address limit) */
	struct tuio_queue q;          /* allocated on first use, kept until destroy */
	uint64_t dropped_seen;
	int64_t progress_ns; /* last time the queue was empty or a byte left */
	uint8_t rbuf[RBUF_BYTES];
	size_t rlen;
	uint64_t skip;        /* payload bytes of an ignored client data frame */
	bool in_message;      /* a fragmented client data message is open */
	double control_tokens; /* token bucket for client control frames */
	int64_t control_ns;
	bool pong_due; /* the latest ping of this read burst, answered once */
	uint8_t pong_len;
	uint8_t pong[125];
};

struct sink {
	struct tuio_target tg;
	char name[TUIO_TARGET_LEN];
	int fd; /* UDP socket or listening socket */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	struct conn *conns;
	int n_conns;
	int64_t next_try_ns, backoff_ns, last_err_ns;
	bool logged_err, logged_full, logged_evict, logged_flood, logged_stall;
};

struct tuio {
	struct tuio_config cfg;
	struct tuio_encoder *enc[2]; /* TUIO 1.1, TUIO 2.0 */
	struct sink sinks[TUIO_MAX_TARGETS];
	int n_sinks;
	bool want_full;
	int64_t last_full_ns;
	int32_t last_fseq;
	bool logged_truncated, logged_oversize;
	int max_clients, per_address;
	uint8_t *nest; /* one frame's packets as one bundle, for TCP and WebSocket */
	size_t nest_cap;
	_Atomic uint64_t packets, bytes, dropped, send_errors, truncated, oversize, evicted;
	_Atomic int clients;
};

/* --- target parsing -------------------------------------------------- */

static int parse_fail(const char *spec, const char *why)
{
	log_error("tuio: bad target '%s': %s (expected udp:HOST:PORT, tcp:HOST:PORT, "
	          "tcp:listen:ADDR:PORT or ws:listen:ADDR:PORT, optionally ',tuio2')",
	          spec, why);
	return ERR_CONFIG;
}

int tuio_target_parse(const char *spec, struct tuio_target *out)
{
	if (!spec || !out)
		return ERR_CONFIG;
	char buf[TUIO_TARGET_LEN];
	if (!spec[0])
		return parse_fail(spec, "empty");
	if (strlen(spec) >= sizeof buf)
		return parse_fail(spec, "too long");
	strcpy(buf, spec);
	struct tuio_target t = {0};
	char *comma = strchr(buf, ',');
	if (comma) {
		*comma = 0;
		if (strcmp(comma + 1, "tuio2") == 0)
			t.tuio2 = true;
		else if (strcmp(comma + 1, "tuio1") != 0)
			return parse_fail(spec, "unknown option after ',' (only tuio2 or tuio1)");
	}
	char *rest = buf;
	bool listen_role = false;
	if (strncmp(rest, "udp:", 4) == 0) {
		t.transport = TUIO_UDP;
		rest += 4;
	} else if (strncmp(rest, "tcp:", 4) == 0) {
		rest += 4;
		listen_role = strncmp(rest, "listen:", 7) == 0;
		t.transport = listen_role ? TUIO_TCP_LISTEN : TUIO_TCP_CONNECT;
		if (listen_role)
			rest += 7;
	} else if (strncmp(rest, "ws:", 3) == 0) {
		rest += 3;
		if (strncmp(rest, "listen:", 7) != 0)
			return parse_fail(spec, "WebSocket is a server only: ws:listen:ADDR:PORT");
		rest += 7;
		listen_role = true;
		t.transport = TUIO_WS_LISTEN;
	} else {
		t.transport = TUIO_UDP; /* bare HOST:PORT */
	}
	char *host = rest, *port;
	if (*rest == '[') {
		char *close = strchr(rest, ']');
		if (!close || close[1] != ':')
			return parse_fail(spec, "IPv6 address needs [ADDR]:PORT");
		host = rest + 1;
		*close = 0;
		port = close + 2;
	} else {
		char *colon = strrchr(rest, ':');
		if (!colon)
			return parse_fail(spec, "missing :PORT");
		*colon = 0;
		port = colon + 1;
		if (strchr(host, ':'))
			return parse_fail(spec, "unknown transport or stray ':' in the host");
	}
	if (!host[0])
		return parse_fail(spec, "empty host");
	if (strlen(host) >= sizeof t.host)
		return parse_fail(spec, "host too long");
	if (!port[0] || strspn(port, "0123456789") != strlen(port) || strlen(port) > 5)
		return parse_fail(spec, "port is not a number");
	t.port = atoi(port);
	if (t.port > 65535 || (t.port == 0 && !listen_role))
		return parse_fail(spec, "port out of range 1..65535 (0 only for listen)");
	strcpy(t.host, host);
	*out = t;
	return 0;
}

static void target_name(const struct tuio_target *tg, char *buf, size_t cap)
{
	static const char *const scheme[] = {"udp:", "tcp:", "tcp:listen:", "ws:listen:"};
	bool v6 = strchr(tg->host, ':') != NULL;
	snprintf(buf, cap, "%s%s%s%s:%d%s", scheme[tg->transport], v6 ? "[" : "", tg->host, v6 ? "]" : "",
	         tg->port, tg->tuio2 ? ",tuio2" : "");
}

void tuio_default_source(char *buf, size_t cap)
{
	char host[100] = "localhost";
	if (gethostname(host, sizeof host - 1) != 0 || !host[0])
		strcpy(host, "localhost");
	host[sizeof host - 1] = 0;
	snprintf(buf, cap, "tabletrack@%s", host);
}

/* --- sockets --------------------------------------------------------- */

static int resolve(struct sink *k, bool passive, int socktype, struct addrinfo **res)
{
	struct addrinfo hints = {0};
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = socktype;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	char port[8];
	snprintf(port, sizeof port, "%d", k->tg.port);
	const char *host = k->tg.host;
	if (passive && strcmp(host, "*") == 0)
		host = NULL;
	int rc = getaddrinfo(host, port, &hints, res);
	if (rc != 0) {
		log_error("tuio: %s: cannot resolve host '%s': %s", k->name, k->tg.host, gai_strerror(rc));
		return ERR_NET;
	}
	return 0;
}

static void set_nodelay(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int open_udp(struct sink *k)
{
	struct addrinfo *res = NULL;
	int rc = resolve(k, false, SOCK_DGRAM, &res);
	if (rc)
		return rc;
	rc = ERR_NET;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		int fd = socket(a->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof one);
		/* Connected, so that ICMP "port unreachable" comes back as
		 * ECONNREFUSED and can be reported; sendto() would hide it. */
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
			k->fd = fd;
			rc = 0;
			break;
		}
		log_error("tuio: %s: %s", k->name, strerror(errno));
		close(fd);
	}
	freeaddrinfo(res);
	return rc;
}

static int open_listen(struct sink *k)
{
	struct addrinfo *res = NULL;
	int rc = resolve(k, true, SOCK_STREAM, &res);
	if (rc)
		return rc;
	rc = ERR_NET;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		int fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		int one = 1, rcvbuf = 16384;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		/* Inherited by accepted clients: what they send (a handshake,
		 * pings) is small, and a small receive buffer keeps a flooder's
		 * bytes in its own kernel, so reading and closing it stay cheap. */
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
		if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 64) == 0) {
			k->fd = fd;
			rc = 0;
			break;
		}
		log_error("tuio: %s: cannot listen: %s", k->name, strerror(errno));
		close(fd);
	}
	freeaddrinfo(res);
	return rc;
}

static int open_connect_target(struct sink *k)
{
	struct addrinfo *res = NULL;
	int rc = resolve(k, false, SOCK_STREAM, &res);
	if (rc)
		return rc;
	memcpy(&k->addr, res->ai_addr, res->ai_addrlen);
	k->addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void conn_close(struct tuio *t, struct conn *c)
{
	(void)t;
	if (c->fd >= 0) {
		/* Unread input makes close() send a reset, which can cost the
		 * client the last packets it has not read yet. */
		uint8_t scratch[1024];
		for (int i = 0; i < 8 && recv(c->fd, scratch, sizeof scratch, MSG_DONTWAIT) > 0; i++)
			;
		close(c->fd);
	}
	c->fd = -1;
	c->state = CONN_FREE;
	c->rlen = 0;
	c->skip = 0;
	c->in_message = false;
	c->pong_due = false;
	if (c->q.ring) {
		c->dropped_seen = c->q.dropped;
		tuio_queue_clear(&c->q);
	}
}

/* --- TCP client target ----------------------------------------------- */

static void connect_failed(struct tuio *t, struct sink *k, struct conn *c, int64_t now, int e)
{
	log_once(&k->logged_err, LOG_WARN, "tuio: %s: %s; retrying with back-off", k->name, strerror(e));
	atomic_fetch_add_explicit(&t->send_errors, 1, memory_order_relaxed);
	conn_close(t, c);
	k->next_try_ns = now + k->backoff_ns;
	k->backoff_ns = k->backoff_ns * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : k->backoff_ns * 2;
}

static void connect_established(struct tuio *t, struct sink *k, struct conn *c)
{
	c->state = CONN_OPEN;
	set_nodelay(c->fd);
	tuio_queue_clear(&c->q);
	k->backoff_ns = BACKOFF_MIN_NS;
	t->want_full = true;
	if (k->logged_err)
		log_once_reset(&k->logged_err, "tuio: %s: connected", k->name);
	else
		log_info("tuio: %s: connected", k->name);
}

static void service_connect(struct tuio *t, struct sink *k, int64_t now)
{
	struct conn *c = &k->conns[0];
	if (c->state == CONN_FREE) {
		if (now < k->next_try_ns)
			return;
		c->fd = socket(k->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->fd < 0) {
			connect_failed(t, k, c, now, errno);
			return;
		}
		c->since_ns = now;
		if (connect(c->fd, (struct sockaddr *)&k->addr, k->addrlen) == 0) {
			connect_established(t, k, c);
		} else if (errno == EINPROGRESS) {
			c->state = CONN_CONNECTING;
		} else {
			connect_failed(t, k, c, now, errno);
			return;
		}
	}
	if (c->state == CONN_CONNECTING) {
		struct pollfd p = {.fd = c->fd, .events = POLLOUT};
		if (poll(&p, 1, 0) > 0) {
			int e = 0;
			socklen_t el = sizeof e;
			if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
				e = errno;
			if (e)
				connect_failed(t, k, c, now, e);
			else
				connect_established(t, k, c);
		} else if (now - c->since_ns > CONNECT_TIMEOUT_NS) {
			connect_failed(t, k, c, now, ETIMEDOUT);
		}
	}
}

/* --- servers --------------------------------------------------------- */

static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
		              sizeof(struct in6_addr)) == 0;
	return false;
}

/* Drops a client to make room or because it misbehaves; counted, and logged
 * once per target and reason so a flood of them cannot flood the log. */
static void conn_evict(struct tuio *t, struct sink *k, struct conn *c, bool *logged, const char *why)
{
	atomic_fetch_add_explicit(&t->evicted, 1, memory_order_relaxed);
	log_once(logged, LOG_WARN, "tuio: %s: client dropped: %s (counted in evicted; logged once)", k->name, why);
	/* A misbehaving client gets no graceful close: its unread input
	 * makes close() reset the connection, which is what it deserves. */
	close(c->fd);
	c->fd = -1;
	conn_close(t, c);
}

/* The client to give up for a newcomer: a half-open handshake first (the
 * oldest), then one already closing, then one whose queue has not moved for
 * a second (not reading). With only_from set (its address is at the
 * per-address limit) the oldest of that address goes if none of those
 * does: an address competes only with itself. NULL: nobody to evict. */
static struct conn *pick_victim(struct sink *k, const struct sockaddr_storage *only_from, int64_t now)
{
	struct conn *best = NULL;
	int best_rank = 0;
	int64_t best_since = 0;
	for (int i = 0; i < k->n_conns; i++) {
		struct conn *c = &k->conns[i];
		if (c->state == CONN_FREE || (only_from && !same_address(&c->peer, only_from)))
			continue;
		int rank = c->state == CONN_HANDSHAKE                                       ? 4
		           : c->state == CONN_CLOSING                                       ? 3
		           : !tuio_queue_empty(&c->q) && now - c->progress_ns > 1000000000LL ? 2
		           : only_from                                                      ? 1
		                                                                            : 0;
		int64_t since = rank == 2 ? c->progress_ns : c->since_ns;
		if (rank > best_rank || (rank == best_rank && rank > 0 && since < best_since)) {
			best = c;
			best_rank = rank;
			best_since = since;
		}
	}
	return best;
}

static void accept_clients(struct tuio *t, struct sink *k, int64_t now)
{
	/* A few a call: a connection storm is spread over frames (the
	 * kernel's backlog holds the rest), so no frame pays for all of it. */
	for (int tries = 0; tries < ACCEPTS_PER_SERVICE; tries++) {
		struct sockaddr_storage sa;
		socklen_t sl = sizeof sa;
		memset(&sa, 0, sizeof sa);
		int fd = accept4(k->fd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct conn *c = NULL;
		int n_same = 0;
		for (int i = 0; i < k->n_conns; i++) {
			struct conn *o = &k->conns[i];
			if (o->state == CONN_FREE)
				c = c ? c : o;
			else
				n_same += same_address(&o->peer, &sa);
		}
		if (t->per_address > 0 && n_same >= t->per_address) {
			struct conn *v = pick_victim(k, &sa, now);
			if (v) {
				conn_evict(t, k, v, &k->logged_evict, "its address holds too many connections");
				c = c ? c : v;
			}
		} else if (!c) {
			c = pick_victim(k, NULL, now);
			if (c)
				conn_evict(t, k, c, &k->logged_evict, "half-open or not reading, and every slot is taken");
		}
		if (!c) {
			log_once(&k->logged_full, LOG_WARN, "tuio: %s: client refused (at most %d clients)",
			         k->name, k->n_conns);
			close(fd);
			continue;
		}
		char host[64] = "?", serv[16] = "?";
		getnameinfo((struct sockaddr *)&sa, sl, host, sizeof host, serv, sizeof serv,
		            NI_NUMERICHOST | NI_NUMERICSERV);
		log_info("tuio: %s: client %s:%s connected", k->name, host, serv);
		set_nodelay(fd);
		c->fd = fd;
		c->peer = sa;
		c->since_ns = now;
		c->progress_ns = now;
		c->rlen = 0;
		c->skip = 0;
		c->in_message = false;
		c->pong_due = false;
		c->control_tokens = CONTROL_BURST;
		c->control_ns = now;
		tuio_queue_clear(&c->q);
		if (k->tg.transport == TUIO_WS_LISTEN) {
			c->state = CONN_HANDSHAKE;
		} else {
			c->state = CONN_OPEN;
			t->want_full = true;
		}
	}
}

static void ws_send_control(struct conn *c, uint8_t op, const uint8_t *payload, size_t n)
{
	uint8_t hdr[10];
	size_t hl = tuio_ws_frame_header(op, n, hdr);
	tuio_queue_push(&c->q, hdr, hl, payload, n);
}

static void ws_fail(struct conn *c, uint16_t code, int64_t now)
{
	uint8_t p[2] = {(uint8_t)(code >> 8), (uint8_t)code};
	ws_send_control(c, TUIO_WS_OP_CLOSE, p, 2);
	c->state = CONN_CLOSING;
	c->since_ns = now;
}

/* Takes one control frame from the client's bucket; false when it is
 * empty (the client sends pings faster than any keep-alive needs). */
static bool control_allowed(struct conn *c, int64_t now)
{
	c->control_tokens += (double)(now - c->control_ns) * (CONTROL_PER_S / 1e9);
	c->control_ns = now;
	if (c->control_tokens > CONTROL_BURST)
		c->control_tokens = CONTROL_BURST;
	if (c->control_tokens < 1.0)
		return false;
	c->control_tokens -= 1.0;
	return true;
}

/* Consumes complete client frames from rbuf. Returns false when the client
 * was evicted (flooding). */
static bool ws_process_frames(struct tuio *t, struct sink *k, struct conn *c, int64_t now)
{
	size_t off = 0;
	while (c->state == CONN_OPEN) {
		if (c->skip) {
			size_t n = c->rlen - off < c->skip ? c->rlen - off : (size_t)c->skip;
			off += n;
			c->skip -= n;
			if (c->skip)
				break;
		}
		struct tuio_ws_frame f;
		int rc = tuio_ws_parse_header(c->rbuf + off, c->rlen - off, &f);
		if (rc == 0)
			break;
		if (rc < 0) {
			ws_fail(c, 1002, now);
			break;
		}
		if (f.opcode < TUIO_WS_OP_CLOSE) {
			/* A continuation needs an open message, a new message
			 * needs none (RFC 6455 5.4). */
			if ((f.opcode == TUIO_WS_OP_CONT) != c->in_message) {
				ws_fail(c, 1002, now);
				break;
			}
			c->in_message = !f.fin;
			/* Client data is not part of TUIO: skipped unbuffered. */
			off += f.header_len;
			c->skip = f.payload_len;
			continue;
		}
		if (c->rlen - off < f.header_len + f.payload_len)
			break;
		uint8_t *p = c->rbuf + off + f.header_len;
		for (size_t i = 0; i < f.payload_len; i++)
			p[i] ^= f.mask[i & 3];
		if (f.opcode == TUIO_WS_OP_CLOSE) {
			uint16_t code = f.payload_len >= 2 ? (uint16_t)(p[0] << 8 | p[1]) : 1000;
			if (f.payload_len == 1 || (f.payload_len >= 2 && !tuio_ws_close_code_valid(code))) {
				ws_fail(c, 1002, now);
				break;
			}
			ws_send_control(c, TUIO_WS_OP_CLOSE, p, f.payload_len >= 2 ? 2 : 0);
			c->state = CONN_CLOSING;
			c->since_ns = now;
		} else if (!control_allowed(c, now)) {
			conn_evict(t, k, c, &k->logged_flood, "WebSocket control frame flood");
			return false;
		} else if (f.opcode == TUIO_WS_OP_PING) {
			/* Answered once per read burst, for the latest ping
			 * (RFC 6455 5.5.3 allows it). */
			memcpy(c->pong, p, (size_t)f.payload_len);
			c->pong_len = (uint8_t)f.payload_len;
			c->pong_due = true;
		}
		off += f.header_len + f.payload_len;
	}
	memmove(c->rbuf, c->rbuf + off, c->rlen - off);
	c->rlen -= off;
	return true;
}

static void ws_handshake_step(struct tuio *t, struct sink *k, struct conn *c, int64_t now)
{
	char resp[512];
	size_t rl = 0;
	int rc = tuio_ws_handshake((const char *)c->rbuf, c->rlen, resp, sizeof resp, &rl);
	if (rc == 0) {
		if (c->rlen == sizeof c->rbuf) {
			log_warn("tuio: %s: WebSocket request header too large; closed", k->name);
			conn_close(t, c);
		}
		return;
	}
	tuio_queue_push(&c->q, resp, rl, NULL, 0);
	if (rc < 0) {
		log_warn("tuio: %s: not a WebSocket upgrade request; answered %.*s", k->name,
		         (int)strcspn(resp + 9, "\r"), resp + 9);
		c->state = CONN_CLOSING;
		c->since_ns = now;
		return;
	}
	const uint8_t *end = memmem(c->rbuf, c->rlen, "\r\n\r\n", 4);
	size_t used = (size_t)(end - c->rbuf) + 4;
	memmove(c->rbuf, c->rbuf + used, c->rlen - used);
	c->rlen -= used;
	c->state = CONN_OPEN;
	c->progress_ns = now;
	t->want_full = true;
	ws_process_frames(t, k, c, now);
}

/* Reads what the client sent: TCP input is discarded, WebSocket input is
 * the handshake and control frames. EOF or an error closes the client. */
static void conn_read(struct tuio *t, struct sink *k, struct conn *c, int64_t now)
{
	bool ws = k->tg.transport == TUIO_WS_LISTEN;
	for (int i = 0; i < READS_PER_SERVICE && c->state != CONN_FREE; i++) {
		uint8_t scratch[2048];
		uint8_t *dst = scratch;
		size_t cap = sizeof scratch;
		if (ws && c->state != CONN_CLOSING) {
			dst = c->rbuf + c->rlen;
			cap = sizeof c->rbuf - c->rlen;
			if (cap == 0)
				break;
		}
		ssize_t n = recv(c->fd, dst, cap, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			break;
		if (n <= 0) {
			if (k->tg.transport == TUIO_TCP_CONNECT) {
				connect_failed(t, k, c, now, n == 0 ? ECONNRESET : errno);
			} else {
				log_info("tuio: %s: client disconnected", k->name);
				conn_close(t, c);
			}
			return;
		}
		if (!ws || c->state == CONN_CLOSING)
			continue;
		c->rlen += (size_t)n;
		if (c->state == CONN_HANDSHAKE)
			ws_handshake_step(t, k, c, now);
		else if (c->state == CONN_OPEN && !ws_process_frames(t, k, c, now))
			return;
	}
	if (c->pong_due && c->state == CONN_OPEN) {
		ws_send_control(c, TUIO_WS_OP_PONG, c->pong, c->pong_len);
		c->pong_due = false;
	}
}

static void conn_flush(struct tuio *t, struct sink *k, struct conn *c, int64_t now)
{
	if (c->state == CONN_FREE || c->state == CONN_CONNECTING)
		return;
	uint64_t bytes = 0, records = 0;
	int e = 0;
	int rc = tuio_queue_flush(&c->q, c->fd, &bytes, &records, &e);
	atomic_fetch_add_explicit(&t->bytes, bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&t->packets, records, memory_order_relaxed);
	if (bytes > 0 || rc == 0)
		c->progress_ns = now;
	if (c->q.dropped != c->dropped_seen) {
		atomic_fetch_add_explicit(&t->dropped, c->q.dropped - c->dropped_seen, memory_order_relaxed);
		c->dropped_seen = c->q.dropped;
	}
	if (rc == ERR_NET) {
		if (k->tg.transport == TUIO_TCP_CONNECT) {
			connect_failed(t, k, c, now, e);
		} else {
			atomic_fetch_add_explicit(&t->send_errors, 1, memory_order_relaxed);
			log_info("tuio: %s: client lost: %s", k->name, strerror(e));
			conn_close(t, c);
		}
		return;
	}
	if (c->state == CONN_CLOSING && (rc == 0 || now - c->since_ns > CLOSING_TIMEOUT_NS)) {
		conn_close(t, c);
	} else if (c->state == CONN_OPEN && k->tg.transport != TUIO_TCP_CONNECT &&
	           now - c->progress_ns > STALL_TIMEOUT_NS) {
		/* Its socket has been full this long: it does not read. */
		conn_evict(t, k, c, &k->logged_stall, "not reading (send buffer full for 3 s)");
	}
}

static void service_at(struct tuio *t, int64_t now)
{
	int clients = 0;
	for (int s = 0; s < t->n_sinks; s++) {
		struct sink *k = &t->sinks[s];
		if (k->tg.transport == TUIO_UDP)
			continue;
		if (k->tg.transport == TUIO_TCP_CONNECT)
			service_connect(t, k, now);
		else
			accept_clients(t, k, now);
		for (int i = 0; i < k->n_conns; i++) {
			struct conn *c = &k->conns[i];
			if (c->state == CONN_FREE || c->state == CONN_CONNECTING)
				continue;
			conn_read(t, k, c, now);
			if (c->state == CONN_HANDSHAKE && now - c->since_ns > HANDSHAKE_TIMEOUT_NS)
				conn_evict(t, k, c, &k->logged_evict, "WebSocket handshake not finished in 3 s");
			clients += c->state == CONN_OPEN;
		}
	}
	atomic_store_explicit(&t->clients, clients, memory_order_relaxed);
}

static void flush_all(struct tuio *t, int64_t now)
{
	for (int s = 0; s < t->n_sinks; s++)
		for (int i = 0; i < t->sinks[s].n_conns; i++)
			conn_flush(t, &t->sinks[s], &t->sinks[s].conns[i], now);
}

/* --- sending --------------------------------------------------------- */

/* One packet of n bytes sent to UDP sink k, send()'s result r (-1 with
 * errno set): counted as sent, dropped (a full buffer) or failed, the
 * failure logged once until a quiet spell. */
static void udp_sent(struct tuio *t, struct sink *k, ssize_t r, size_t n, int64_t now)
{
	if (r == (ssize_t)n) {
		atomic_fetch_add_explicit(&t->packets, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&t->bytes, n, memory_order_relaxed);
		/* A connected UDP socket reports a refusal on the send after it,
		 * so success alone proves nothing: wait for a quiet spell. */
		if (now - k->last_err_ns > UDP_QUIET_NS)
			log_once_reset(&k->logged_err, "tuio: %s: sending again", k->name);
		return;
	}
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
		atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
		return;
	}
	atomic_fetch_add_explicit(&t->send_errors, 1, memory_order_relaxed);
	k->last_err_ns = now;
	log_once(&k->logged_err, LOG_WARN, "tuio: %s: %s (still sending; logged once)", k->name,
	         r < 0 ? strerror(errno) : "short send");
}

/* A frame's packets to a UDP sink in one system call each UDP_BATCH
 * (sendmmsg): each packet counted as send() would count it. */
#define UDP_BATCH 16
static void udp_send_packets(struct tuio *t, struct sink *k, const struct tuio_encoder *e, int n_packets, int64_t now)
{
	struct mmsghdr msg[UDP_BATCH];
	struct iovec iov[UDP_BATCH];
	for (int done = 0; done < n_packets;) {
		const int n = n_packets - done < UDP_BATCH ? n_packets - done : UDP_BATCH;
		for (int i = 0; i < n; i++) {
			size_t len;
			iov[i].iov_base = (void *)tuio_encoder_packet(e, done + i, &len);
			iov[i].iov_len = len;
			memset(&msg[i], 0, sizeof msg[i]);
			msg[i].msg_hdr.msg_iov = &iov[i];
			msg[i].msg_hdr.msg_iovlen = 1;
		}
		const int r = sendmmsg(k->fd, msg, (unsigned)n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r <= 0) {
			/* The first packet's error (none said: a short send); the
			 * next go in the next call. */
			udp_sent(t, k, r, iov[0].iov_len, now);
			done++;
			continue;
		}
		for (int i = 0; i < r; i++)
			udp_sent(t, k, (ssize_t)msg[i].msg_len, iov[i].iov_len, now);
		done += r;
	}
}

static void stream_send(struct sink *k, const uint8_t *p, size_t n)
{
	uint8_t hdr[10];
	size_t hl;
	if (k->tg.transport == TUIO_WS_LISTEN) {
		hl = tuio_ws_frame_header(TUIO_WS_OP_BINARY, n, hdr);
	} else {
		hdr[0] = (uint8_t)(n >> 24);
		hdr[1] = (uint8_t)(n >> 16);
		hdr[2] = (uint8_t)(n >> 8);
		hdr[3] = (uint8_t)n;
		hl = 4;
	}
	for (int i = 0; i < k->n_conns; i++)
		if (k->conns[i].state == CONN_OPEN)
			tuio_queue_push(&k->conns[i].q, hdr, hl, p, n);
}

static void send_encoded(struct tuio *t, int which, int n_packets, int64_t now)
{
	const struct tuio_encoder *e = t->enc[which];
	struct tuio_encode_info info;
	tuio_encoder_get_info(e, &info);
	if (info.truncated) {
		atomic_fetch_add_explicit(&t->truncated, 1, memory_order_relaxed);
		log_once(&t->logged_truncated, LOG_WARN,
		         "tuio: too many items for the packet buffer; some sets left out");
	}
	if (info.oversize) {
		atomic_fetch_add_explicit(&t->oversize, 1, memory_order_relaxed);
		log_once(&t->logged_oversize, LOG_WARN,
		         "tuio: alive list alone exceeds max_datagram %d; sending %zu-byte "
		         "datagrams (IP fragmentation)",
		         t->cfg.max_datagram, info.max_packet);
	}
	/* Stream receivers (the reference TCP clients) handle a read only
	 * when it holds exactly one packet, so streams get the whole frame as
	 * one bundle of the per-profile bundles; only a frame too large for
	 * one record goes out packet by packet. */
	size_t nest_len = tuio_encoder_nested(e, t->nest, t->nest_cap);
	for (int s = 0; s < t->n_sinks; s++) {
		struct sink *k = &t->sinks[s];
		if (k->tg.tuio2 != (which == 1))
			continue;
		if (k->tg.transport != TUIO_UDP && nest_len > 0) {
			stream_send(k, t->nest, nest_len);
			continue;
		}
		if (k->tg.transport == TUIO_UDP) {
			udp_send_packets(t, k, e, n_packets, now);
			continue;
		}
		for (int i = 0; i < n_packets; i++) {
			size_t n;
			const uint8_t *p = tuio_encoder_packet(e, i, &n);
			stream_send(k, p, n);
		}
	}
}

/* The capture time as an NTP time tag, for TUIO 2.0 frm. */
static uint64_t ntp_of_capture(int64_t t_capture_ns, int64_t now)
{
	lo_timetag tt;
	lo_timetag_now(&tt);
	uint64_t ntp = (uint64_t)tt.sec << 32 | tt.frac;
	int64_t age = now - t_capture_ns;
	if (t_capture_ns <= 0 || age < 0 || age > 60000000000LL)
		return ntp;
	return ntp - (uint64_t)((double)age * 4.294967296);
}

static int send_state(struct tuio *t, const struct tracked_state *s, bool empty, int32_t fseq)
{
	int64_t now = clock_now_ns();
	service_at(t, now);
	bool full = false;
	if (!empty) {
		full = t->want_full ||
		       (t->cfg.refresh_ms > 0 && now - t->last_full_ns >= t->cfg.refresh_ms * 1000000LL);
		if (full) {
			t->want_full = false;
			t->last_full_ns = now;
		}
	}
	uint64_t ntp = ntp_of_capture(s ? s->t_capture_ns : 0, now);
	for (int w = 0; w < 2; w++) {
		if (!t->enc[w])
			continue;
		int n = empty ? tuio_encode_empty(t->enc[w], fseq, ntp)
		              : tuio_encode_frame(t->enc[w], s, full, ntp);
		if (n < 0)
			return n;
		send_encoded(t, w, n, now);
	}
	flush_all(t, now);
	return 0;
}

int tuio_send_frame(struct tuio *t, const struct tracked_state *state)
{
	if (!t || !state)
		return ERR_FORMAT;
	int rc = send_state(t, state, false, 0);
	if (rc == 0 && state->frame != UINT64_MAX)
		t->last_fseq = (int32_t)(state->frame & 0x7fffffffu);
	return rc;
}

int tuio_send_empty(struct tuio *t, uint64_t fseq)
{
	if (!t)
		return ERR_FORMAT;
	int32_t f = fseq == UINT64_MAX ? -1 : (int32_t)(fseq & 0x7fffffffu);
	int rc = send_state(t, NULL, true, f);
	if (rc == 0 && f >= 0)
		t->last_fseq = f;
	return rc;
}

int tuio_service(struct tuio *t)
{
	if (!t)
		return 0;
	int64_t now = clock_now_ns();
	service_at(t, now);
	flush_all(t, now);
	return 0;
}

void tuio_get_stats(const struct tuio *t, struct tuio_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof *out);
	if (!t)
		return;
	out->packets = atomic_load_explicit(&t->packets, memory_order_relaxed);
	out->bytes = atomic_load_explicit(&t->bytes, memory_order_relaxed);
	out->dropped = atomic_load_explicit(&t->dropped, memory_order_relaxed);
	out->send_errors = atomic_load_explicit(&t->send_errors, memory_order_relaxed);
	out->truncated = atomic_load_explicit(&t->truncated, memory_order_relaxed);
	out->oversize = atomic_load_explicit(&t->oversize, memory_order_relaxed);
	out->clients = atomic_load_explicit(&t->clients, memory_order_relaxed);
	out->evicted = atomic_load_explicit(&t->evicted, memory_order_relaxed);
}

int tuio_get_port(const struct tuio *t, int i)
{
	if (!t || i < 0 || i >= t->n_sinks)
		return -1;
	const struct sink *k = &t->sinks[i];
	if (k->tg.transport == TUIO_TCP_LISTEN || k->tg.transport == TUIO_WS_LISTEN) {
		struct sockaddr_storage sa;
		socklen_t sl = sizeof sa;
		if (k->fd >= 0 && getsockname(k->fd, (struct sockaddr *)&sa, &sl) == 0)
			return ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
			                                      : ((struct sockaddr_in *)&sa)->sin_port);
	}
	return k->tg.port;
}

/* --- life cycle ------------------------------------------------------ */

struct tuio *tuio_create(const struct tuio_config *cfg, int *err)
{
	int rc = ERR_CONFIG;
	struct tuio *t = NULL;
	if (!cfg || cfg->n_targets < 0 || cfg->n_targets > TUIO_MAX_TARGETS) {
		log_error("tuio: between 0 and %d targets", TUIO_MAX_TARGETS);
		goto fail;
	}
	if (cfg->refresh_ms < 0) {
		log_error("tuio: refresh_ms %d is negative", cfg->refresh_ms);
		goto fail;
	}
	if (cfg->max_clients < 0 || cfg->max_clients > TUIO_MAX_CLIENTS || cfg->clients_per_address < 0) {
		log_error("tuio: max_clients %d (0..%d) or clients_per_address %d (>= 0) out of range",
		          cfg->max_clients, TUIO_MAX_CLIENTS, cfg->clients_per_address);
		goto fail;
	}
	rc = ERR_NOMEM;
	t = calloc(1, sizeof *t);
	if (!t)
		goto fail;
	t->cfg = *cfg;
	if (t->cfg.max_datagram <= 0)
		t->cfg.max_datagram = TUIO_DEFAULT_MAX_DATAGRAM;
	t->max_clients = cfg->max_clients ? cfg->max_clients : DEFAULT_MAX_CLIENTS;
	t->per_address = cfg->clients_per_address;
	t->nest_cap = MAX_RECORD - 16;
	t->nest = malloc(t->nest_cap);
	if (!t->nest)
		goto fail;
	for (int s = 0; s < TUIO_MAX_TARGETS; s++)
		t->sinks[s].fd = -1;

	struct tuio_encoder_config ec = {0};
	if (cfg->source_name[0])
		snprintf(ec.source, sizeof ec.source, "%s", cfg->source_name);
	else
		tuio_default_source(ec.source, sizeof ec.source);
	ec.max_datagram = t->cfg.max_datagram;
	ec.send_objects = true;
	ec.send_cursors = cfg->send_cursors;
	ec.send_blobs = cfg->send_blobs;
	ec.send_contours = cfg->send_contours;
	ec.object_id_min = cfg->object_id_min;
	ec.object_id_max = cfg->object_id_max;
	ec.object_type_id = cfg->object_type_id;
	for (int w = 0; w < 2; w++) {
		bool used = false;
		for (int s = 0; s < cfg->n_targets; s++)
			used |= cfg->targets[s].tuio2 == (w == 1);
		if (!used)
			continue;
		ec.tuio2 = w == 1;
		t->enc[w] = tuio_encoder_create(&ec, &rc);
		if (!t->enc[w])
			goto fail;
	}

	for (int s = 0; s < cfg->n_targets; s++) {
		struct sink *k = &t->sinks[s];
		k->tg = cfg->targets[s];
		k->tg.host[sizeof k->tg.host - 1] = 0;
		char name[sizeof k->name];
		target_name(&k->tg, name, sizeof name);
		memcpy(k->name, name, sizeof name);
		k->backoff_ns = BACKOFF_MIN_NS;
		t->n_sinks = s + 1;
		rc = ERR_CONFIG;
		if (k->tg.port < 0 || k->tg.port > 65535 ||
		    (k->tg.port == 0 &&
		     (k->tg.transport == TUIO_UDP || k->tg.transport == TUIO_TCP_CONNECT))) {
			log_error("tuio: %s: bad port", k->name);
			goto fail;
		}
		switch (k->tg.transport) {
		case TUIO_UDP:
			rc = open_udp(k);
			break;
		case TUIO_TCP_CONNECT:
			k->n_conns = 1;
			rc = open_connect_target(k);
			break;
		case TUIO_TCP_LISTEN:
		case TUIO_WS_LISTEN:
			k->n_conns = t->max_clients;
			rc = open_listen(k);
			break;
		default:
			log_error("tuio: target %d: unknown transport", s);
			goto fail;
		}
		if (rc)
			goto fail;
		if (k->n_conns) {
			rc = ERR_NOMEM;
			k->conns = calloc((size_t)k->n_conns, sizeof *k->conns);
			if (!k->conns)
				goto fail;
			/* Queues now, not in the frame loop; untouched pages
			 * cost no memory until a client uses them. */
			for (int i = 0; i < k->n_conns; i++) {
				k->conns[i].fd = -1;
				if (tuio_queue_init(&k->conns[i].q, QUEUE_BYTES, MAX_RECORD) != 0)
					goto fail;
			}
		}
		log_info("tuio: sending to %s", k->name);
	}
	t->want_full = true;
	return t;
fail:
	if (t) {
		for (int s = 0; s < t->n_sinks; s++) {
			struct sink *k = &t->sinks[s];
			if (k->fd >= 0)
				close(k->fd);
			for (int i = 0; k->conns && i < k->n_conns; i++)
				tuio_queue_free(&k->conns[i].q);
			free(k->conns);
		}
		tuio_encoder_destroy(t->enc[0]);
		tuio_encoder_destroy(t->enc[1]);
		free(t->nest);
		free(t);
	}
	if (err)
		*err = rc;
	return NULL;
}

void tuio_destroy(struct tuio *t)
{
	if (!t)
		return;
	tuio_send_empty(t, (uint64_t)t->last_fseq + 1);
	int64_t now = clock_now_ns(), deadline = now + 300000000LL;
	for (int s = 0; s < t->n_sinks; s++) {
		struct sink *k = &t->sinks[s];
		for (int i = 0; i < k->n_conns; i++) {
			struct conn *c = &k->conns[i];
			if (c->state != CONN_OPEN)
				continue;
			if (k->tg.transport == TUIO_WS_LISTEN) {
				ws_fail(c, 1001, now);
			} else {
				c->state = CONN_CLOSING;
				c->since_ns = now;
			}
		}
	}
	for (;;) {
		now = clock_now_ns();
		flush_all(t, now);
		struct pollfd pf[TUIO_MAX_TARGETS * TUIO_MAX_CLIENTS];
		int n = 0;
		for (int s = 0; s < t->n_sinks; s++)
			for (int i = 0; i < t->sinks[s].n_conns; i++) {
				struct conn *c = &t->sinks[s].conns[i];
				if (c->state == CONN_CLOSING)
					pf[n++] = (struct pollfd){.fd = c->fd, .events = POLLOUT};
			}
		if (n == 0 || now >= deadline)
			break;
		poll(pf, (nfds_t)n, 10);
	}
	for (int s = 0; s < t->n_sinks; s++) {
		struct sink *k = &t->sinks[s];
		for (int i = 0; i < k->n_conns; i++) {
			conn_close(t, &k->conns[i]);
			tuio_queue_free(&k->conns[i].q);
		}
		free(k->conns);
		if (k->fd >= 0)
			close(k->fd);
	}
	tuio_encoder_destroy(t->enc[0]);
	tuio_encoder_destroy(t->enc[1]);
	free(t->nest);
	free(t);
}
