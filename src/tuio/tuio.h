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
 * host named. */
struct tuio *tuio_create(const struct tuio_config *cfg, int *err);
/* Sends empty bundles (for the shutdown) and closes. NULL-safe. */
void tuio_destroy(struct tuio *t);

/* Sends one frame of every profile. fseq = state->frame. */
int tuio_send_frame(struct tuio *t, const struct tracked_state *state);
/* Sends every profile with an empty alive (start-up, shutdown). */
int tuio_send_empty(struct tuio *t, uint64_t fseq);

/* Counters for --stats and the window. */
struct tuio_stats {
	uint64_t packets, bytes, dropped, send_errors;
	int clients;
};
void tuio_get_stats(const struct tuio *t, struct tuio_stats *out);

#endif
