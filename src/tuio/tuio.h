/*
 * tuio.h - TUIO 1.1 (and 2.0) output over UDP, TCP and WebSocket.
 *
 * The only room that uses liblo. Per frame and profile (2Dobj, 2Dcur,
 * 2Dblb) one bundle: source, full alive, the sets of items that changed
 * (all of them on a periodic refresh), fseq; split into several bundles with
 * the same fseq and the full alive when a datagram would exceed
 * max_datagram bytes (../shared/spec/tuio.md §2).
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
 */
#ifndef TT_TUIO_H
#define TT_TUIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/tracked.h"

#define TUIO_MAX_TARGETS 8
#define TUIO_TARGET_LEN 256

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
	char source_name[128];   /* "" = tabletrack@<hostname> */
	int max_datagram;        /* bytes, default 1472 */
	int refresh_ms;          /* full-state resend period; 0 = never */
	bool send_cursors, send_blobs;
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
