/*
 * tuio_encode.h - the pure TUIO encoder: tracked state in, OSC packets out.
 *
 * Purpose: turn one frame of tracker output (struct tracked_state) into the
 * exact bytes TUIO clients expect (TUIO specification), without sending
 * anything. tuio.c sends what this produces; the bench tool and the tests
 * call it directly to measure or inspect the bytes.
 *
 * Usage:
 *     struct tuio_encoder_config ec = { .source = "tabletrack@host",
 *                                       .send_objects = true, ... };
 *     struct tuio_encoder *e = tuio_encoder_create(&ec, &err);
 *     int n = tuio_encode_frame(e, &state, full_refresh, 0);
 *     for (int i = 0; i < n; i++) {
 *         size_t len; const uint8_t *p = tuio_encoder_packet(e, i, &len);
 *         ...send p, len...
 *     }
 *     tuio_encoder_destroy(e);
 *
 * TUIO 1.1 (the default): per enabled profile (/tuio/2Dobj, /tuio/2Dcur,
 * /tuio/2Dblb, in that order) one bundle of `source`, `alive` (every session
 * ID of the profile), the `set`s of the items whose `changed` flag is up (all
 * items when `full` is true), and `fseq`. Every enabled profile gets its
 * bundle every frame, even with nothing alive. Types are exactly those of
 * tuio.md §1: 2Dobj set ",siiffffffff", 2Dcur ",sifffff", 2Dblb
 * ",siffffffffffff" (see TUIO_BLB_SET_FLOATS); alive ",s" + one 'i' per
 * ID; fseq ",si"; source ",ss".
 * The bundle time tag is "immediately" (1).
 *
 * TUIO 2.0 (config.tuio2): one bundle per frame, /tuio2/frm first
 * (",itis": frame id, capture time as an NTP time tag, width<<16|height,
 * source "name:0@address"), then /tuio2/tok (objects, ",iiiffffffff"),
 * /tuio2/ptr (cursors, ",iiiffffffffffff": shear 0, radius = diameter/2,
 * pressure 0, pressure speed 0, pressure acceleration 0) and /tuio2/bnd
 * (blobs, ",ifffffffffff"), /tuio2/alv (every session ID of all kinds) last.
 * Velocities are sent in the same units as TUIO 1.1 (A in turns/s).
 * Hovering fingers (tracked_state.n_hover) go out as ptr after the
 * touching ones, only on TUIO 2.0; a ptr's pressure is 1 for a finger
 * measured touching, else 0; its c_id is the session of the hand it is a
 * fingertip of (0: none). With send_contours, each session's outlines
 * follow its tok/ptr/bnd in the same bundle, whenever one of those is
 * sent: /tuio2/ocg (outer) and /tuio2/icg (holes), ",i" + "ff" per point,
 * s_id then x y pairs normalised like positions (4 + 12 + tags + 4 + 8 n
 * bytes; 32 points: 344 bytes).
 *
 * TUIO 2.0 refresh: the reference TUIO 2.0 client keeps a new item in its
 * "added" state until a tok/ptr/bnd brings a value different from the one
 * it holds; an identical repeat while "added" makes it insert the item a
 * second time into its list and later free it twice. So an item that a
 * full frame repeats without a change goes out with its angle moved by
 * 1..16 units in the last place (at most about 8e-6 rad; cursors' angle
 * field is 0 plus that), the count cycling with each full frame: every
 * refresh differs from the previous ones, so the client takes it as an
 * update. Items sent because they changed carry their exact values.
 *
 * TUIO 2.0 sessions: that client also inserts an item a second time when a
 * component (tok, ptr, bnd) arrives for a session it already lists, and it
 * takes every bundle as a frame. So an object's or finger's own blob
 * (tracked.h) goes out right after its tok/ptr, in the same bundle, and a
 * split never separates one session's messages: a new session arrives with
 * all its components at once.
 *
 * Splitting (algorithm): every message size is known in advance (OSC pads
 * strings to 4 bytes, each number is 4 bytes), so the encoder computes the
 * fixed part of a bundle (header, source, full alive, fseq; or frm and alv)
 * and fills each bundle greedily with as many sets as fit in max_datagram.
 * Each further bundle repeats source, the full alive and the same fseq; no
 * bundle ever holds two profiles. When the fixed part plus one set does not
 * fit (hundreds of live items), the bundle carries one set anyway and
 * info.oversize is raised: alive must stay complete, and an oversized
 * datagram (IP fragmentation) is better than a wrong alive.
 *
 * Values: x, y, w, h, area are clamped into [0, 1); angles are wrapped into
 * [0, 2pi); NaN or infinite inputs are sent as 0. Session IDs go out as
 * int32 (the tracker's counter never gets near 2^31 in practice). fseq is
 * the frame counter modulo 2^31.
 *
 * Memory: all packet bytes live in one buffer and the packet table in one
 * array, both sized at create time (buffer_bytes, max_packets); encoding
 * never allocates. When a frame does not fit, the remaining sets are left
 * out, info.truncated is raised, and every bundle emitted is still a valid,
 * complete bundle (the next full refresh repairs the client's state).
 *
 * Sizes (measured, and checked byte for byte against liblo's
 * lo_bundle_serialise in tests/test_tuio.c): a TUIO 1.1 bundle with
 * source "tabletrack@192.168.1.20", empty alive and fseq is 128 bytes; each
 * 2Dobj set adds 76, 2Dcur 56, 2Dblb 88 (84 with 11 floats); alive IDs add
 * 4 bytes each plus 4 per 4 IDs of type tags. 16 objects, 22 cursors or 14
 * blobs (15 with 11 floats) fit one 1472-byte datagram.
 *
 * Performance (AMD EPYC, gcc -O2, 200k frames): 16 objects + 10 cursors +
 * 5 blobs, all changed: 1.5 us a frame (3 packets, 2732 bytes); 100
 * objects + 10 + 5: 6.5 us (12 packets, 15116 bytes). Straight-line byte
 * writes, no allocation.
 */
#ifndef TT_TUIO_ENCODE_H
#define TT_TUIO_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/tracked.h"

#define TUIO_DEFAULT_MAX_DATAGRAM 1472
#define TUIO_DEFAULT_BUFFER_BYTES (1u << 20)
#define TUIO_DEFAULT_MAX_PACKETS 1024

/* Exact sizes of TUIO 1.1 bundle parts (bytes, each counted with its 4-byte
 * bundle element size), as liblo and oscpack lay them out. */
#define TUIO_SIZE_OBJ_SET 76
#define TUIO_SIZE_CUR_SET 56
#define TUIO_SIZE_BLB_SET (40 + 4 * TUIO_BLB_SET_FLOATS)

/* Floats in a 2Dblb set. TUIO 1.1 has 11 (x y a w h f X Y A m r), and so do
 * tuio.md §1's field list and its 84-byte size figure; only its type-tag
 * string ",siffffffffffff" shows 12. Clients decode the 11 of the
 * protocol, and a strict one drops a message with an extra argument, so
 * we send 11. Build with -DTUIO_BLB_SET_FLOATS=12 for a listener that
 * insists on the 12-float tag string (the 12th is then 0). */
#ifndef TUIO_BLB_SET_FLOATS
#define TUIO_BLB_SET_FLOATS 11
#endif

enum tuio_profile { TUIO_PROFILE_OBJ = 0, TUIO_PROFILE_CUR, TUIO_PROFILE_BLB, TUIO_PROFILE_TUIO2 };

struct tuio_encoder_config {
	char source[128]; /* "name@address" (required, non-empty) */
	int max_datagram; /* bytes; <= 0 means TUIO_DEFAULT_MAX_DATAGRAM */
	bool tuio2;       /* TUIO 2.0 instead of 1.1 */
	bool send_objects, send_cursors, send_blobs;
	bool send_contours; /* TUIO 2.0: /tuio2/ocg, /tuio2/icg (tracked_state's contours) */
	size_t buffer_bytes; /* packet memory; 0 means TUIO_DEFAULT_BUFFER_BYTES */
	int max_packets;     /* 0 means TUIO_DEFAULT_MAX_PACKETS */
	/* TUIO 2.0 tok's tu_id is (type << 16 | user 0): type object_type_id
	 * for class IDs in object_id_min..object_id_max (objects recognised by
	 * their look), 0 for every other (symbols). min > max: none. */
	int32_t object_id_min, object_id_max;
	int object_type_id;  /* 0..65535 */
};

/* What the last encode produced. */
struct tuio_encode_info {
	int n_packets;
	size_t bytes;      /* all packets together */
	size_t max_packet; /* largest packet */
	int n_sets;        /* set / tok / ptr / bnd messages written */
	bool truncated;    /* buffer or packet table full: some sets left out */
	bool oversize;     /* a packet exceeds max_datagram (too many alive IDs) */
};

struct tuio_encoder;

/* Validates cfg and allocates the buffers. Returns NULL with *err =
 * ERR_CONFIG (bad value, logged) or ERR_NOMEM. Owned by the caller; free with
 * tuio_encoder_destroy (NULL-safe). */
struct tuio_encoder *tuio_encoder_create(const struct tuio_encoder_config *cfg, int *err);
void tuio_encoder_destroy(struct tuio_encoder *e);

/* Encodes one frame (fseq = s->frame mod 2^31; UINT64_MAX gives -1). full: a `set` for every item, not only
 * the changed ones. ntp_time: the frame's time for TUIO 2.0 frm as an OSC/NTP
 * time tag (seconds since 1900 << 32 | fraction); 0 or 1 means "immediately".
 * Returns the number of packets (>= 1), or a negative ERR_* (ERR_FORMAT for a
 * NULL state or negative counts). Previous packets are overwritten. */
int tuio_encode_frame(struct tuio_encoder *e, const struct tracked_state *s, bool full, uint64_t ntp_time);
/* Encodes every enabled profile with an empty alive and the given fseq
 * (start-up and shutdown). Returns the number of packets or ERR_*. */
int tuio_encode_empty(struct tuio_encoder *e, int32_t fseq, uint64_t ntp_time);

/* Packet i of the last encode (0 <= i < n). Borrowed: valid until the next
 * encode or destroy. Returns NULL when i is out of range. */
const uint8_t *tuio_encoder_packet(const struct tuio_encoder *e, int i, size_t *len);
/* Which profile packet i carries (TUIO_PROFILE_*), or -1. */
int tuio_encoder_packet_profile(const struct tuio_encoder *e, int i);
/* All packets of the last encode as ONE OSC packet for stream transports:
 * the single packet as is, or a bundle (time tag "immediately") whose
 * elements are the packets (bundles nest in OSC 1.0; the reference clients
 * take them apart). Writes into out[0..cap); returns the length, or 0 when
 * it does not fit or nothing was encoded. */
size_t tuio_encoder_nested(const struct tuio_encoder *e, uint8_t *out, size_t cap);
void tuio_encoder_get_info(const struct tuio_encoder *e, struct tuio_encode_info *out);

/* Size in bytes of a TUIO 1.1 bundle with source, alive of n_alive IDs, fseq
 * and n_sets sets of the profile, for this encoder's source name. */
size_t tuio_encoder_bundle_size(const struct tuio_encoder *e, enum tuio_profile p, int n_alive, int n_sets);

#endif
