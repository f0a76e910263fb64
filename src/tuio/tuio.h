/*
 * tuio.h - TUIO 1.1 (and 2.0) output over UDP, TCP and WebSocket.
 *
 * The only room that uses liblo. Per frame and profile (2Dobj, 2Dcur,
 * 2Dblb) one bundle: source, full alive, the sets of items that changed
 * (all of them on a periodic refresh), fseq; split into several bundles with
 * the same fseq and the full alive when a datagram would exceed
 * max_datagram bytes (TUIO specification §2).
 *
 * Targets (tuio_target_parse):
 *     udp:HOST:PORT            UDP datagrams (unicast, broadcast, multicast)
 *     tcp:HOST:PORT            connect to a listening client (length-prefixed)
 *     tcp:listen:ADDR:PORT     serve every connected client
 *     ws:listen:ADDR:PORT      WebSocket server (RFC 6455), one binary frame a packet
 * each optionally followed by ",tuio2" for TUIO 2.0.
 *
 * Sending never blocks the pipeline: TCP/WS clients have a bounded queue,
 * oldest packets dropped and counted. Unreachable targets are logged once.
 *
 * Usage (pipeline thread):
 *     struct tuio *t = tuio_create(&cfg, &err);   targets parsed with
 *     tuio_send_empty(t, 0);                      tuio_target_parse()
 *     per frame: tuio_send_frame(t, &tracked);    idle: tuio_service(t)
 *     tuio_destroy(t);                            sends the empty frame
 *
 * Encoding is tuio_encode.h (pure, also used by the bench tool); this file
 * sends the packets. There is no thread of our own: accepting clients,
 * WebSocket handshakes, ping/pong/close, TCP reconnects and queue flushes
 * all run non-blocking inside tuio_send_frame / tuio_service.
 *
 * Transports:
 *   UDP: one connected, non-blocking socket per target (SO_BROADCAST set, so
 *     broadcast and multicast addresses work; multicast TTL is the kernel
 *     default, 1). Connected so that "port unreachable" surfaces as
 *     ECONNREFUSED, which is logged once and counted in send_errors.
 *   TCP: each frame is ONE record, 4-byte big-endian length + packet (a
 *     bundle of the profile bundles; the reference TCP receivers drop a
 *     read holding more than one packet), written with ONE send() (see
 *     tuio_net.h). Client role connects non-blocking and reconnects with
 *     back-off (250 ms doubling to 8 s). Server role serves max_clients per
 *     target (default 16), at most clients_per_address from one address
 *     (its newest replaces its oldest). With every slot taken a newcomer
 *     evicts the oldest half-open handshake, closing client or client whose
 *     queue has not moved for 1 s; otherwise it is refused (logged once).
 *     A client whose queue makes no progress for 3 s is dropped. Evictions
 *     are counted (stats.evicted) and logged once per target and reason.
 *     A new connection forces a full-state frame.
 *   WebSocket: RFC 6455 server (handshake with our own SHA-1/base64, first
 *     requested subprotocol echoed when it is a token), each frame one
 *     unmasked binary frame; pings answered once per read burst (the
 *     latest), control frames limited to a burst of 16 and 8/s per client
 *     (beyond that the client is evicted), close answered, protocol errors
 *     (continuation without a start, 1-byte close) closed with 1002, client
 *     data frames skipped without buffering; request header at most 4 KiB
 *     and 3 s. Accepted sockets take a 16 KiB receive buffer.
 *   Listening targets bind to the ADDR given ("*" = every interface);
 *   loopback (127.0.0.1) is recommended unless clients are remote.
 *
 * Memory: per TUIO version in use one encoder (1 MiB packet buffer); per
 * TCP/WS client slot a 256 KiB queue plus a 64 KiB in-flight record,
 * allocated by tuio_create (address space: a page becomes resident when a
 * client's data first reaches it) and kept until tuio_destroy. Nothing a
 * client sends can grow memory. No allocation per frame.
 *
 * Work per call (tuio_send_frame, tuio_service): at most 8 new connections
 * are accepted (a connection storm waits in the kernel's backlog of 64 and
 * is spread over frames); per client at most 4 non-blocking reads and one
 * send() per queued record; no call ever blocks.
 *
 * Performance (AMD EPYC, gcc -O2): encoding 16 objects + 10 cursors +
 * 5 blobs takes 1.5 us (3 packets, 2.7 KB); 100 objects + 15 others 6.5 us
 * (12 packets, 15 KB). Sending is one send() per packet and target.
 */
#ifndef TT_TUIO_H
#define TT_TUIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/tracked.h"

#define TUIO_MAX_TARGETS 8
#define TUIO_TARGET_LEN 256
#define TUIO_MAX_CLIENTS 256

enum tuio_transport { TUIO_UDP = 0, TUIO_TCP_CONNECT, TUIO_TCP_LISTEN, TUIO_WS_LISTEN };

struct tuio_target {
	enum tuio_transport transport;
	char host[200];
	int port;
	bool tuio2;
};

struct tuio_config {
	int n_targets;
	struct tuio_target targets[TUIO_MAX_TARGETS];
	char source_name[128]; /* "" = tabletrack@<hostname> */
	int max_datagram;      /* bytes, default 1472 */
	int refresh_ms;        /* full-state resend period; 0 = never */
	bool send_cursors, send_blobs;
	bool send_contours;      /* TUIO 2.0 targets: /tuio2/ocg, icg */
	int max_clients;         /* slots per listening target, 1..TUIO_MAX_CLIENTS; 0 = 16 */
	int clients_per_address; /* slots one peer address may hold; 0 = no limit */
	/* Recognised objects (src/objects/): class IDs in object_id_min..max go
	 * out on TUIO 2.0 tok with type object_type_id (tuio_encode.h). */
	int32_t object_id_min, object_id_max;
	int object_type_id;
};

/* Parses one target spec (see above). Returns 0 or ERR_CONFIG. */
int tuio_target_parse(const char *spec, struct tuio_target *out);

struct tuio;

/* Resolves and opens every target; an unresolvable host is ERR_NET with the
 * host named (logged); a port already in use is ERR_NET. Connections to
 * tcp:HOST:PORT are made (and remade, with back-off from 250 ms to 8 s)
 * by tuio_send_frame/tuio_service, so a client that is not up yet is not an
 * error. Owned by the caller; tuio_destroy frees. */
struct tuio *tuio_create(const struct tuio_config *cfg, int *err);
/* Sends empty bundles (for the shutdown; fseq = last sent + 1), sends
 * WebSocket clients a close frame, waits at most ~300 ms for the queues to
 * drain, and closes. NULL-safe. */
void tuio_destroy(struct tuio *t);

/* Sends one frame of every profile. fseq = state->frame; UINT64_MAX means
 * fseq -1 (a redundant bundle that only repeats state, tuio.md §2).
 * Returns 0, or ERR_FORMAT for a bad state; a failing target is logged once
 * and counted, never an error here. state is borrowed for the call. */
int tuio_send_frame(struct tuio *t, const struct tracked_state *state);
/* Sends every profile with an empty alive (start-up, shutdown). Same
 * returns as tuio_send_frame. */
int tuio_send_empty(struct tuio *t, uint64_t fseq);

/* Counters for --stats and the window. packets/bytes: handed to the kernel
 * (per target and client); dropped: packets a full queue or socket threw
 * away; send_errors: failed sends (unreachable host, broken connection);
 * truncated: frames whose sets did not all fit the encoder's buffer;
 * oversize: packets larger than max_datagram (too many alive IDs). */
struct tuio_stats {
	uint64_t packets, bytes, dropped, send_errors;
	int clients;
	uint64_t truncated, oversize;
	uint64_t evicted; /* clients dropped: flood, stalled, half-open, slots */
};
/* Safe to call from another thread (relaxed atomic counters). */
void tuio_get_stats(const struct tuio *t, struct tuio_stats *out);

/* Accepts new TCP/WS clients, completes WebSocket handshakes, answers
 * ping/close, progresses TCP reconnects and flushes queued packets, without
 * sending a frame. tuio_send_frame does this itself; call it when the
 * pipeline is idle (no camera frame) so clients are still served. Never
 * blocks. Same thread as tuio_send_frame. Returns 0. */
int tuio_service(struct tuio *t);
/* The local port of listening target i (useful with port 0, which binds an
 * ephemeral port), else the target's configured port; -1 when i is out of
 * range. */
int tuio_get_port(const struct tuio *t, int i);

/* The default source name "tabletrack@<hostname>" into buf. */
void tuio_default_source(char *buf, size_t cap);

#endif
