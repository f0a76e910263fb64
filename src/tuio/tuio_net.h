/*
 * tuio_net.h - building blocks of the TUIO stream senders (internal to
 * src/tuio): a bounded packet queue for TCP/WebSocket clients, the RFC 6455
 * server handshake and framing, and the SHA-1 and base64 it needs.
 *
 * Queue (struct tuio_queue): a byte ring of whole records (each one packet
 * with its framing: a 4-byte big-endian length for TCP, a WebSocket frame
 * header for WS) plus an "in flight" buffer holding the record being
 * written. Pushing a record into a full ring drops the oldest queued records
 * (never the one in flight, so the stream framing stays intact) and counts
 * them. Flushing copies the next record into the in-flight buffer and hands
 * it to the kernel with ONE send() call (MSG_DONTWAIT | MSG_NOSIGNAL), so a
 * record's length prefix and body always leave together; a partial write is
 * finished by later flushes. The memory is allocated once, at
 * tuio_queue_init, and bounded by ring_bytes + max_record.
 *
 * WebSocket: tuio_ws_handshake() parses a complete HTTP upgrade request
 * (bounded by the caller's buffer) and writes the 101 response with
 * Sec-WebSocket-Accept = base64(SHA-1(key + RFC 6455 GUID)), echoing the
 * first requested subprotocol (browsers fail the connection otherwise), or a
 * 400/426 error response. A Sec-WebSocket-Protocol value that is not a list
 * of HTTP tokens (a CR, LF or any other control byte in it) gets 400, so
 * nothing but a token is ever echoed into the response. tuio_ws_parse_header() decodes one client frame
 * header (clients must mask). tuio_ws_frame_header() writes a server frame
 * header (FIN set, unmasked).
 *
 * SHA-1 follows FIPS 180-4 and is only used for the handshake (not for
 * security). Tested against the FIPS vectors and RFC 6455's example key.
 */
#ifndef TT_TUIO_NET_H
#define TT_TUIO_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void tuio_sha1(const void *data, size_t len, uint8_t out[20]);
/* Writes base64 of data plus a NUL into out. Returns the length written
 * (without NUL) or -1 when cap is too small. */
int tuio_base64(const uint8_t *data, size_t len, char *out, size_t cap);
/* Sec-WebSocket-Accept for a client key (28 characters + NUL). */
void tuio_ws_accept(const char *key, char out[29]);

/* Parses the HTTP upgrade request in req[0..len). Returns 0 when the header
 * is not complete yet (no blank line), 1 when it is a valid upgrade (the 101
 * response is in resp), -1 when it is not (an error response is in resp; the
 * caller sends it and closes). *resp_len is set whenever 1 or -1 is
 * returned. */
int tuio_ws_handshake(const char *req, size_t len, char *resp, size_t cap, size_t *resp_len);

struct tuio_ws_frame {
	bool fin, masked;
	uint8_t opcode;
	uint8_t mask[4];
	uint64_t payload_len;
	size_t header_len;
};
/* Decodes one frame header from buf. Returns 1 (complete, *f filled), 0
 * (need more bytes) or -1 (protocol error: unmasked client frame, reserved
 * bits, fragmented or oversized control frame, unknown opcode). */
int tuio_ws_parse_header(const uint8_t *buf, size_t len, struct tuio_ws_frame *f);
/* Whether a close frame's status code may be sent by a peer (RFC 6455
 * 7.4: 1000-1003, 1007-1011, 3000-4999). */
bool tuio_ws_close_code_valid(uint16_t code);
/* Server frame header (FIN, opcode, unmasked length) into hdr; returns its
 * length (2, 4 or 10). */
size_t tuio_ws_frame_header(uint8_t opcode, uint64_t payload_len, uint8_t hdr[10]);

#define TUIO_WS_OP_CONT 0x0
#define TUIO_WS_OP_TEXT 0x1
#define TUIO_WS_OP_BINARY 0x2
#define TUIO_WS_OP_CLOSE 0x8
#define TUIO_WS_OP_PING 0x9
#define TUIO_WS_OP_PONG 0xA

struct tuio_queue {
	uint8_t *ring;
	size_t cap, head, used;
	uint8_t *inflight;
	size_t inflight_cap, inflight_len, inflight_off;
	uint64_t dropped;
};

/* Allocates the ring (ring_bytes) and the in-flight buffer (max_record).
 * Returns 0 or ERR_NOMEM. Free with tuio_queue_free (safe on a zeroed or
 * freed queue). */
int tuio_queue_init(struct tuio_queue *q, size_t ring_bytes, size_t max_record);
void tuio_queue_free(struct tuio_queue *q);
/* Forgets every queued record (a new connection starts clean). */
void tuio_queue_clear(struct tuio_queue *q);
bool tuio_queue_empty(const struct tuio_queue *q);
/* Queues hdr + data as one record, dropping the oldest queued records when
 * the ring is full. Returns false (and counts a drop) when the record is
 * larger than max_record. Never allocates. */
bool tuio_queue_push(struct tuio_queue *q, const void *hdr, size_t hdr_len, const void *data, size_t len);
/* Writes queued records to fd, one send() per record, until the queue is
 * empty or the socket is full. Returns 0 (all written), ERR_AGAIN (socket
 * full; try later) or ERR_NET (connection broken; *err_no = errno). Adds the
 * bytes handed to the kernel to *bytes and the records completed to
 * *records. */
int tuio_queue_flush(struct tuio_queue *q, int fd, uint64_t *bytes, uint64_t *records, int *err_no);

#endif
