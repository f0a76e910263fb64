/*
 * test_tuio.c - the TUIO room: target parsing, encoder sizes and bytes
 * (checked against liblo's own serialisation), splitting, TUIO 2.0, the
 * WebSocket helpers and queue, and real loopback UDP / TCP / WebSocket
 * sends decoded by build/tests/tuio_decode (oscpack, independent of our
 * encoder; the tests skip when it is not built).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <lo/lo.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/core/err.h"
#include "../src/tuio/tuio.h"
#include "../src/tuio/tuio_encode.h"
#include "../src/tuio/tuio_net.h"
#include "common/testutil.h"

#define DECODER "build/tests/tuio_decode"
#define SOURCE23 "tabletrack@192.168.1.20" /* 23 characters, as in tuio.md */

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* --- fixtures -------------------------------------------------------- */

#define MAX_ITEMS 512
static struct tracked_object g_obj[MAX_ITEMS];
static struct tracked_cursor g_cur[MAX_ITEMS];
static struct tracked_blob g_blb[MAX_ITEMS];

static struct tracked_state make_state(uint64_t frame, int n_obj, int n_cur, int n_blb)
{
	for (int i = 0; i < n_obj; i++) {
		g_obj[i] = (struct tracked_object){.session_id = (uint32_t)(1 + i),
		                                   .class_id = i % 200,
		                                   .x = 0.1f + 0.001f * (float)i,
		                                   .y = 0.5f,
		                                   .angle = 1.0f,
		                                   .X = 0.25f,
		                                   .changed = true};
	}
	for (int i = 0; i < n_cur; i++) {
		g_cur[i] = (struct tracked_cursor){.session_id = (uint32_t)(1000 + i),
		                                   .x = 0.3f,
		                                   .y = 0.2f + 0.001f * (float)i,
		                                   .diameter = 0.02f,
		                                   .changed = true};
	}
	for (int i = 0; i < n_blb; i++) {
		g_blb[i] = (struct tracked_blob){.session_id = (uint32_t)(2000 + i),
		                                 .x = 0.7f,
		                                 .y = 0.7f,
		                                 .angle = 0.5f,
		                                 .w = 0.1f,
		                                 .h = 0.05f,
		                                 .area = 0.004f,
		                                 .changed = true};
	}
	struct tracked_state s = {.frame = frame,
	                          .width = 640,
	                          .height = 480,
	                          .n_objects = n_obj,
	                          .n_cursors = n_cur,
	                          .n_blobs = n_blb,
	                          .objects = g_obj,
	                          .cursors = g_cur,
	                          .blobs = g_blb};
	return s;
}

static struct tuio_encoder *make_encoder(bool tuio2, int max_datagram, size_t buffer)
{
	struct tuio_encoder_config ec = {.max_datagram = max_datagram,
	                                 .tuio2 = tuio2,
	                                 .send_objects = true,
	                                 .send_cursors = true,
	                                 .send_blobs = true,
	                                 .buffer_bytes = buffer};
	strcpy(ec.source, SOURCE23);
	int err = 0;
	struct tuio_encoder *e = tuio_encoder_create(&ec, &err);
	assert_non_null(e);
	return e;
}

/* A bundle decoded with liblo's message parser: one entry per element. */
struct dmsg {
	char path[32];
	char types[700];
	int argc;
	char word[64];     /* first string argument (TUIO 1.1 kind) */
	int32_t ints[600]; /* int arguments in order */
	int n_ints;
	float floats[16];
	int n_floats;
};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int decode_bundle(const uint8_t *p, size_t n, struct dmsg *out, int cap)
{
	assert_true(n >= 16);
	assert_memory_equal(p, "#bundle\0", 8);
	size_t off = 16;
	int k = 0;
	while (off < n) {
		assert_true(off + 4 <= n);
		uint32_t len = (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 |
		               (uint32_t)p[off + 2] << 8 | p[off + 3];
		off += 4;
		assert_true(len % 4 == 0 && off + len <= n);
		assert_true(k < cap);
		int res = 0;
		lo_message m = lo_message_deserialise((void *)(p + off), len, &res);
		assert_non_null(m);
		assert_int_equal(res, 0);
		struct dmsg *d = &out[k++];
		memset(d, 0, sizeof *d);
		snprintf(d->path, sizeof d->path, "%s", (const char *)(p + off));
		snprintf(d->types, sizeof d->types, "%s", lo_message_get_types(m));
		d->argc = lo_message_get_argc(m);
		lo_arg **argv = lo_message_get_argv(m);
		for (int i = 0; i < d->argc; i++) {
			char t = d->types[i];
			/* liblo's argument pointers are only 4-byte aligned. */
			if (t == 's' && !d->word[0])
				snprintf(d->word, sizeof d->word, "%s", (const char *)argv[i]);
			else if (t == 'i' && d->n_ints < 600)
				memcpy(&d->ints[d->n_ints++], argv[i], 4);
			else if (t == 'f' && d->n_floats < 16)
				memcpy(&d->floats[d->n_floats++], argv[i], 4);
		}
		lo_message_free(m);
		off += len;
	}
	return k;
}

/* --- target parsing -------------------------------------------------- */

static void test_target_parse_good(void **state)
{
	(void)state;
	struct tuio_target t;
	assert_int_equal(tuio_target_parse("udp:127.0.0.1:3333", &t), 0);
	assert_int_equal(t.transport, TUIO_UDP);
	assert_string_equal(t.host, "127.0.0.1");
	assert_int_equal(t.port, 3333);
	assert_false(t.tuio2);

	assert_int_equal(tuio_target_parse("tcp:example.org:3000,tuio2", &t), 0);
	assert_int_equal(t.transport, TUIO_TCP_CONNECT);
	assert_string_equal(t.host, "example.org");
	assert_int_equal(t.port, 3000);
	assert_true(t.tuio2);

	assert_int_equal(tuio_target_parse("tcp:listen:127.0.0.1:3334", &t), 0);
	assert_int_equal(t.transport, TUIO_TCP_LISTEN);
	assert_string_equal(t.host, "127.0.0.1");

	assert_int_equal(tuio_target_parse("ws:listen:0.0.0.0:0", &t), 0);
	assert_int_equal(t.transport, TUIO_WS_LISTEN);
	assert_int_equal(t.port, 0);

	assert_int_equal(tuio_target_parse("udp:[::1]:3333", &t), 0);
	assert_string_equal(t.host, "::1");
	assert_int_equal(t.port, 3333);

	assert_int_equal(tuio_target_parse("192.168.1.255:3333", &t), 0);
	assert_int_equal(t.transport, TUIO_UDP);
	assert_string_equal(t.host, "192.168.1.255");
}

static void test_target_parse_bad(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "",
	    "udp:",
	    "udp:127.0.0.1",
	    "udp:127.0.0.1:",
	    "udp::3333",
	    "udp:127.0.0.1:0",
	    "udp:127.0.0.1:65536",
	    "udp:127.0.0.1:33a",
	    "udp:127.0.0.1:-1",
	    "tcp:listen:3333",
	    "ws:127.0.0.1:3333",
	    "sctp:127.0.0.1:3333",
	    "udp:127.0.0.1:3333,tuio3",
	    "udp:[::1:3333",
	    "tcp:127.0.0.1:0",
	};
	struct tuio_target t;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = tuio_target_parse(bad[i], &t);
		if (rc != ERR_CONFIG)
			fail_msg("'%s' was accepted", bad[i]);
	}
	assert_int_equal(tuio_target_parse(NULL, &t), ERR_CONFIG);
	char longspec[400];
	memset(longspec, 'a', sizeof longspec - 1);
	longspec[sizeof longspec - 1] = 0;
	assert_int_equal(tuio_target_parse(longspec, &t), ERR_CONFIG);
}

/* --- encoder --------------------------------------------------------- */

static void test_encode_sizes(void **state)
{
	(void)state;
	struct tuio_encoder *e = make_encoder(false, 0, 0);
	assert_int_equal(tuio_encoder_bundle_size(e, TUIO_PROFILE_OBJ, 0, 0), 128);
	assert_int_equal(tuio_encoder_bundle_size(e, TUIO_PROFILE_OBJ, 0, 1), 128 + 76);
	assert_int_equal(tuio_encoder_bundle_size(e, TUIO_PROFILE_CUR, 0, 1), 128 + 56);
	assert_int_equal(tuio_encoder_bundle_size(e, TUIO_PROFILE_BLB, 0, 1),
	                 128 + (TUIO_BLB_SET_FLOATS == 12 ? 88 : 84));
	assert_int_equal(tuio_encoder_bundle_size(e, TUIO_PROFILE_OBJ, 4, 0), 128 + 20);

	struct tracked_state s = make_state(7, 0, 0, 0);
	assert_int_equal(tuio_encode_frame(e, &s, false, 0), 3);
	for (int i = 0; i < 3; i++) {
		size_t n = 0;
		assert_non_null(tuio_encoder_packet(e, i, &n));
		assert_int_equal(n, 128);
		assert_int_equal(tuio_encoder_packet_profile(e, i), i);
	}
	assert_null(tuio_encoder_packet(e, 3, NULL));

	/* One alive ID and its set: 208 / 188 / 220 bytes (216 with 11 blob floats). */
	s = make_state(8, 1, 1, 1);
	assert_int_equal(tuio_encode_frame(e, &s, false, 0), 3);
	size_t n;
	tuio_encoder_packet(e, 0, &n);
	assert_int_equal(n, 128 + 4 + 76);
	tuio_encoder_packet(e, 1, &n);
	assert_int_equal(n, 128 + 4 + 56);
	tuio_encoder_packet(e, 2, &n);
	assert_int_equal(n, 128 + 4 + TUIO_SIZE_BLB_SET);

	/* 16 objects, 22 cursors, 15 blobs (14 with 12 blob floats) fit one
	 * 1472-byte datagram. */
	assert_true(tuio_encoder_bundle_size(e, TUIO_PROFILE_OBJ, 16, 16) <= 1472);
	assert_true(tuio_encoder_bundle_size(e, TUIO_PROFILE_OBJ, 17, 17) > 1472);
	assert_true(tuio_encoder_bundle_size(e, TUIO_PROFILE_CUR, 22, 22) <= 1472);
	const int n_blb = TUIO_BLB_SET_FLOATS == 12 ? 14 : 15;
	assert_true(tuio_encoder_bundle_size(e, TUIO_PROFILE_BLB, n_blb, n_blb) <= 1472);
	assert_true(tuio_encoder_bundle_size(e, TUIO_PROFILE_BLB, n_blb + 1, n_blb + 1) > 1472);
	s = make_state(9, 16, 22, n_blb);
	assert_int_equal(tuio_encode_frame(e, &s, false, 0), 3);
	tuio_encoder_destroy(e);
}

/* Our bytes must equal liblo's serialisation of the same bundle. */
static void test_encode_matches_liblo(void **state)
{
	(void)state;
	struct tuio_encoder *e = make_encoder(false, 0, 0);
	struct tracked_state s = make_state(42, 2, 0, 0);
	g_obj[1].changed = false;
	assert_int_equal(tuio_encode_frame(e, &s, false, 0), 3);
	size_t n;
	const uint8_t *mine = tuio_encoder_packet(e, 0, &n);

	lo_bundle b = lo_bundle_new(LO_TT_IMMEDIATE);
	lo_message m = lo_message_new();
	lo_message_add_string(m, "source");
	lo_message_add_string(m, SOURCE23);
	lo_bundle_add_message(b, "/tuio/2Dobj", m);
	lo_message a = lo_message_new();
	lo_message_add_string(a, "alive");
	lo_message_add_int32(a, 1);
	lo_message_add_int32(a, 2);
	lo_bundle_add_message(b, "/tuio/2Dobj", a);
	lo_message st = lo_message_new();
	const struct tracked_object *o = &g_obj[0];
	lo_message_add_string(st, "set");
	lo_message_add_int32(st, (int32_t)o->session_id);
	lo_message_add_int32(st, o->class_id);
	lo_message_add_float(st, o->x);
	lo_message_add_float(st, o->y);
	lo_message_add_float(st, o->angle);
	lo_message_add_float(st, o->X);
	lo_message_add_float(st, o->Y);
	lo_message_add_float(st, o->A);
	lo_message_add_float(st, o->m);
	lo_message_add_float(st, o->r);
	lo_bundle_add_message(b, "/tuio/2Dobj", st);
	lo_message f = lo_message_new();
	lo_message_add_string(f, "fseq");
	lo_message_add_int32(f, 42);
	lo_bundle_add_message(b, "/tuio/2Dobj", f);
	size_t ln = 0;
	void *theirs = lo_bundle_serialise(b, NULL, &ln);
	assert_non_null(theirs);
	assert_int_equal(ln, n);
	assert_int_equal(lo_bundle_length(b), n);
	assert_memory_equal(mine, theirs, n);
	free(theirs);
	lo_bundle_free_recursive(b);
	tuio_encoder_destroy(e);
}

static void test_encode_split(void **state)
{
	(void)state;
	struct tuio_encoder *e = make_encoder(false, 0, 0);
	const int N = 100;
	struct tracked_state s = make_state(5, N, 0, 0);
	int np = tuio_encode_frame(e, &s, false, 0);
	assert_true(np >= 2 + 1 + 1); /* several 2Dobj bundles, 2Dcur, 2Dblb */
	struct tuio_encode_info info;
	tuio_encoder_get_info(e, &info);
	assert_false(info.truncated);
	assert_false(info.oversize);
	assert_int_equal(info.n_sets, N);
	static struct dmsg msgs[64];
	bool seen[MAX_ITEMS] = {0};
	int n_obj_bundles = 0, total_sets = 0;
	for (int i = 0; i < np; i++) {
		size_t n;
		const uint8_t *p = tuio_encoder_packet(e, i, &n);
		assert_true(n <= 1472);
		int k = decode_bundle(p, n, msgs, 64);
		assert_true(k >= 3);
		for (int j = 1; j < k; j++)
			assert_string_equal(msgs[j].path, msgs[0].path); /* never mixed */
		assert_string_equal(msgs[0].word, "source");
		assert_string_equal(msgs[1].word, "alive");
		assert_string_equal(msgs[k - 1].word, "fseq");
		assert_int_equal(msgs[k - 1].ints[0], 5);
		if (strcmp(msgs[0].path, "/tuio/2Dobj") != 0) {
			assert_int_equal(k, 3);
			continue;
		}
		n_obj_bundles++;
		assert_int_equal(msgs[1].n_ints, N); /* full alive in every bundle */
		for (int j = 0; j < N; j++)
			assert_int_equal(msgs[1].ints[j], j + 1);
		for (int j = 2; j < k - 1; j++) {
			assert_string_equal(msgs[j].word, "set");
			assert_string_equal(msgs[j].types, "siiffffffff");
			int sid = msgs[j].ints[0];
			assert_true(sid >= 1 && sid <= N);
			assert_false(seen[sid]);
			seen[sid] = true;
			total_sets++;
		}
	}
	assert_true(n_obj_bundles >= 2);
	assert_int_equal(total_sets, N);

	/* Only changed items get a set; a full refresh sends them all. */
	for (int i = 0; i < N; i++)
		g_obj[i].changed = i == 3;
	tuio_encode_frame(e, &s, false, 0);
	tuio_encoder_get_info(e, &info);
	assert_int_equal(info.n_sets, 1);
	assert_int_equal(info.n_packets, 3);
	tuio_encode_frame(e, &s, true, 0);
	tuio_encoder_get_info(e, &info);
	assert_int_equal(info.n_sets, N);
	tuio_encoder_destroy(e);
}

static void test_encode_values(void **state)
{
	(void)state;
	struct tuio_encoder *e = make_encoder(false, 0, 0);
	struct tracked_state s = make_state(1, 4, 0, 0);
	g_obj[0].angle = -0.5f;
	g_obj[1].angle = 7.0f;
	g_obj[2].angle = NAN;
	g_obj[2].x = 1.5f;
	g_obj[3].x = -0.2f;
	g_obj[3].X = INFINITY;
	tuio_encode_frame(e, &s, false, 0);
	size_t n;
	const uint8_t *p = tuio_encoder_packet(e, 0, &n);
	static struct dmsg msgs[16];
	int k = decode_bundle(p, n, msgs, 16);
	assert_int_equal(k, 7);
	const float two_pi = 6.2831853f;
	assert_float_equal(msgs[2].floats[2], two_pi - 0.5f, 1e-5);
	assert_float_equal(msgs[3].floats[2], 7.0f - two_pi, 1e-5);
	assert_float_equal(msgs[4].floats[2], 0.0f, 0);
	assert_true(msgs[4].floats[0] < 1.0f && msgs[4].floats[0] > 0.999f);
	assert_float_equal(msgs[5].floats[0], 0.0f, 0);
	assert_float_equal(msgs[5].floats[3], 0.0f, 0);
	for (int j = 2; j < 6; j++)
		assert_true(msgs[j].floats[2] >= 0.0f && msgs[j].floats[2] < two_pi);
	/* fseq -1 for a redundant frame. */
	s.frame = UINT64_MAX;
	tuio_encode_frame(e, &s, false, 0);
	p = tuio_encoder_packet(e, 0, &n);
	k = decode_bundle(p, n, msgs, 16);
	assert_int_equal(msgs[k - 1].ints[0], -1);
	/* Bad states are errors, not crashes. */
	s.n_objects = -1;
	assert_int_equal(tuio_encode_frame(e, &s, false, 0), ERR_FORMAT);
	assert_int_equal(tuio_encode_frame(e, NULL, false, 0), ERR_FORMAT);
	s.n_objects = 3;
	s.objects = NULL;
	assert_int_equal(tuio_encode_frame(e, &s, false, 0), ERR_FORMAT);
	tuio_encoder_destroy(e);
}

static void test_encode_limits(void **state)
{
	(void)state;
	/* 400 alive IDs (2000 bytes) cannot fit 1472: oversize, all sets sent. */
	struct tuio_encoder *e = make_encoder(false, 0, 0);
	struct tracked_state s = make_state(3, 400, 0, 0);
	int np = tuio_encode_frame(e, &s, false, 0);
	struct tuio_encode_info info;
	tuio_encoder_get_info(e, &info);
	assert_true(info.oversize);
	assert_false(info.truncated);
	assert_int_equal(info.n_sets, 400);
	assert_int_equal(np, 400 + 2);
	tuio_encoder_destroy(e);

	/* A small buffer truncates; what is emitted is still whole bundles. */
	e = make_encoder(false, 0, 4096);
	s = make_state(3, 100, 0, 0);
	np = tuio_encode_frame(e, &s, false, 0);
	tuio_encoder_get_info(e, &info);
	assert_true(info.truncated);
	assert_true(np >= 1);
	assert_true(info.bytes <= 4096);
	static struct dmsg msgs[64];
	for (int i = 0; i < np; i++) {
		size_t n;
		const uint8_t *p = tuio_encoder_packet(e, i, &n);
		int k = decode_bundle(p, n, msgs, 64);
		assert_string_equal(msgs[k - 1].word, "fseq");
		if (strcmp(msgs[0].path, "/tuio/2Dobj") == 0)
			assert_int_equal(msgs[1].n_ints, 100);
	}
	tuio_encoder_destroy(e);

	struct tuio_encoder_config bad = {0};
	int err = 0;
	assert_null(tuio_encoder_create(&bad, &err));
	assert_int_equal(err, ERR_CONFIG);
	strcpy(bad.source, "x@y");
	bad.max_datagram = 100;
	assert_null(tuio_encoder_create(&bad, &err));
	assert_int_equal(err, ERR_CONFIG);
}

static void test_encode_tuio2(void **state)
{
	(void)state;
	struct tuio_encoder *e = make_encoder(true, 0, 0);
	struct tracked_state s = make_state(11, 2, 1, 1);
	int np = tuio_encode_frame(e, &s, false, 0x0123456789abcdefULL);
	assert_int_equal(np, 1);
	size_t n;
	const uint8_t *p = tuio_encoder_packet(e, 0, &n);
	static struct dmsg msgs[64];
	int k = decode_bundle(p, n, msgs, 64);
	assert_int_equal(k, 6);
	assert_string_equal(msgs[0].path, "/tuio2/frm");
	assert_string_equal(msgs[0].types, "itis");
	assert_int_equal(msgs[0].ints[0], 11);
	assert_int_equal(msgs[0].ints[1], 640 << 16 | 480);
	assert_string_equal(msgs[0].word, "tabletrack:0@192.168.1.20");
	assert_string_equal(msgs[1].path, "/tuio2/tok");
	assert_string_equal(msgs[1].types, "iiiffffffff");
	assert_string_equal(msgs[3].path, "/tuio2/ptr");
	assert_string_equal(msgs[3].types, "iiifffffffffff");
	assert_string_equal(msgs[4].path, "/tuio2/bnd");
	assert_string_equal(msgs[4].types, "ifffffffffff");
	assert_string_equal(msgs[5].path, "/tuio2/alv");
	assert_int_equal(msgs[5].n_ints, 4);
	assert_int_equal(msgs[5].ints[2], 1000);
	assert_int_equal(msgs[5].ints[3], 2000);

	/* Splitting: same frame id, full alv in each. */
	s = make_state(12, 60, 30, 30);
	np = tuio_encode_frame(e, &s, false, 0);
	assert_true(np > 1);
	int items = 0;
	for (int i = 0; i < np; i++) {
		p = tuio_encoder_packet(e, i, &n);
		assert_true(n <= 1472);
		k = decode_bundle(p, n, msgs, 64);
		assert_string_equal(msgs[0].path, "/tuio2/frm");
		assert_int_equal(msgs[0].ints[0], 12);
		assert_string_equal(msgs[k - 1].path, "/tuio2/alv");
		assert_int_equal(msgs[k - 1].n_ints, 120);
		items += k - 2;
	}
	assert_int_equal(items, 120);
	assert_int_equal(tuio_encode_empty(e, 13, 0), 1);
	p = tuio_encoder_packet(e, 0, &n);
	k = decode_bundle(p, n, msgs, 64);
	assert_int_equal(k, 2);
	assert_int_equal(msgs[1].argc, 0);
	tuio_encoder_destroy(e);
}

/* --- WebSocket helpers and queue ------------------------------------- */

static void test_sha1_base64_ws(void **state)
{
	(void)state;
	uint8_t d[20];
	char hex[41];
	tuio_sha1("abc", 3, d);
	for (int i = 0; i < 20; i++)
		sprintf(hex + 2 * i, "%02x", d[i]);
	assert_string_equal(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	tuio_sha1(two, strlen(two), d);
	for (int i = 0; i < 20; i++)
		sprintf(hex + 2 * i, "%02x", d[i]);
	assert_string_equal(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	tuio_sha1("", 0, d);
	for (int i = 0; i < 20; i++)
		sprintf(hex + 2 * i, "%02x", d[i]);
	assert_string_equal(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	char b64[16];
	assert_int_equal(tuio_base64((const uint8_t *)"foob", 4, b64, sizeof b64), 8);
	assert_string_equal(b64, "Zm9vYg==");
	assert_int_equal(tuio_base64((const uint8_t *)"foobar", 6, b64, 8), -1);
	char acc[29];
	tuio_ws_accept("dGhlIHNhbXBsZSBub25jZQ==", acc);
	assert_string_equal(acc, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");

	char resp[512];
	size_t rl = 0;
	const char *req = "GET /chat HTTP/1.1\r\nHost: x\r\nupgrade: WebSocket\r\n"
	                  "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	                  "Sec-WebSocket-Version: 13\r\n\r\n";
	assert_int_equal(tuio_ws_handshake(req, strlen(req) - 2, resp, sizeof resp, &rl), 0);
	assert_int_equal(tuio_ws_handshake(req, strlen(req), resp, sizeof resp, &rl), 1);
	resp[rl] = 0;
	assert_non_null(strstr(resp, "101 Switching Protocols"));
	assert_non_null(strstr(resp, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"));
	const char *nokey = "GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n";
	assert_int_equal(tuio_ws_handshake(nokey, strlen(nokey), resp, sizeof resp, &rl), -1);
	assert_memory_equal(resp, "HTTP/1.1 400", 12);
	const char *v8 = "GET / HTTP/1.1\r\nUpgrade: websocket\r\n"
	                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n";
	assert_int_equal(tuio_ws_handshake(v8, strlen(v8), resp, sizeof resp, &rl), -1);
	assert_memory_equal(resp, "HTTP/1.1 426", 12);

	uint8_t hdr[10];
	assert_int_equal(tuio_ws_frame_header(TUIO_WS_OP_BINARY, 100, hdr), 2);
	assert_int_equal(hdr[0], 0x82);
	assert_int_equal(hdr[1], 100);
	assert_int_equal(tuio_ws_frame_header(TUIO_WS_OP_BINARY, 1472, hdr), 4);
	assert_int_equal(hdr[1], 126);
	assert_int_equal(hdr[2] << 8 | hdr[3], 1472);
	assert_int_equal(tuio_ws_frame_header(TUIO_WS_OP_BINARY, 70000, hdr), 10);

	struct tuio_ws_frame f;
	const uint8_t ping[] = {0x89, 0x82, 1, 2, 3, 4, 't' ^ 1, 't' ^ 2};
	assert_int_equal(tuio_ws_parse_header(ping, 1, &f), 0);
	assert_int_equal(tuio_ws_parse_header(ping, sizeof ping, &f), 1);
	assert_int_equal(f.opcode, TUIO_WS_OP_PING);
	assert_int_equal(f.payload_len, 2);
	assert_int_equal(f.header_len, 6);
	const uint8_t unmasked[] = {0x82, 0x02, 0, 0};
	assert_int_equal(tuio_ws_parse_header(unmasked, sizeof unmasked, &f), -1);
	const uint8_t bigping[] = {0x89, 0xfe, 0x01, 0x00, 0, 0, 0, 0};
	assert_int_equal(tuio_ws_parse_header(bigping, sizeof bigping, &f), -1);
}

static void test_queue_drops_oldest(void **state)
{
	(void)state;
	struct tuio_queue q;
	assert_int_equal(tuio_queue_init(&q, 1000, 300), 0);
	uint8_t pkt[200];
	for (int i = 0; i < 10; i++) {
		memset(pkt, i, sizeof pkt);
		assert_true(tuio_queue_push(&q, "hd", 2, pkt, sizeof pkt));
	}
	/* 206 bytes a record: 4 fit in 1000, the 6 oldest were dropped. */
	assert_int_equal(q.dropped, 6);
	assert_false(tuio_queue_push(&q, "", 0, pkt, 299 + 2));
	assert_int_equal(q.dropped, 7);

	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	uint64_t bytes = 0, records = 0;
	assert_int_equal(tuio_queue_flush(&q, sv[0], &bytes, &records, NULL), 0);
	assert_int_equal(records, 4);
	assert_int_equal(bytes, 4 * 202);
	assert_true(tuio_queue_empty(&q));
	uint8_t got[1024];
	ssize_t n = recv(sv[1], got, sizeof got, MSG_DONTWAIT);
	assert_int_equal(n, 4 * 202);
	assert_memory_equal(got, "hd", 2);
	assert_int_equal(got[2], 6); /* the oldest kept record is #6 */
	assert_int_equal(got[202 + 2], 7);
	close(sv[0]);
	close(sv[1]);
	tuio_queue_free(&q);
	tuio_queue_free(&q);
}

/* --- life cycle and errors ------------------------------------------- */

static void test_create_errors(void **state)
{
	(void)state;
	struct tuio_config cfg = {0};
	cfg.n_targets = 1;
	cfg.targets[0] = (struct tuio_target){.transport = TUIO_UDP, .port = 3333};
	strcpy(cfg.targets[0].host, "no such host.invalid");
	int err = 0;
	assert_null(tuio_create(&cfg, &err));
	assert_int_equal(err, ERR_NET);

	cfg.targets[0].transport = TUIO_TCP_CONNECT;
	assert_null(tuio_create(&cfg, &err));
	assert_int_equal(err, ERR_NET);

	cfg.n_targets = 99;
	assert_null(tuio_create(&cfg, &err));
	assert_int_equal(err, ERR_CONFIG);
	tuio_destroy(NULL);

	/* Two servers on one port: the second is a clear error. */
	cfg.n_targets = 1;
	assert_int_equal(tuio_target_parse("tcp:listen:127.0.0.1:0", &cfg.targets[0]), 0);
	struct tuio *a = tuio_create(&cfg, &err);
	assert_non_null(a);
	snprintf(cfg.targets[0].host, sizeof cfg.targets[0].host, "127.0.0.1");
	cfg.targets[0].port = tuio_get_port(a, 0);
	assert_true(cfg.targets[0].port > 0);
	assert_null(tuio_create(&cfg, &err));
	assert_int_equal(err, ERR_NET);
	tuio_destroy(a);
}

/* An unreachable target at run time is counted, never fatal. */
static void test_unreachable_not_fatal(void **state)
{
	(void)state;
	/* A port nobody listens on: bind one, note it, close it. */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	int port = ntohs(sa.sin_port);
	close(fd);

	struct tuio_config cfg = {.n_targets = 2, .send_cursors = true, .send_blobs = true};
	char spec[64];
	snprintf(spec, sizeof spec, "udp:127.0.0.1:%d", port);
	assert_int_equal(tuio_target_parse(spec, &cfg.targets[0]), 0);
	snprintf(spec, sizeof spec, "tcp:127.0.0.1:%d", port);
	assert_int_equal(tuio_target_parse(spec, &cfg.targets[1]), 0);
	int err = 0;
	struct tuio *t = tuio_create(&cfg, &err);
	assert_non_null(t);
	for (int i = 1; i <= 10; i++) {
		struct tracked_state s = make_state((uint64_t)i, 2, 1, 0);
		assert_int_equal(tuio_send_frame(t, &s), 0);
		sleep_ms(2);
	}
	struct tuio_stats st;
	tuio_get_stats(t, &st);
	assert_true(st.send_errors > 0);
	assert_int_equal(st.clients, 0);
	tuio_destroy(t);
}

/* --- end to end with the independent decoder -------------------------- */

struct child {
	pid_t pid;
	int out; /* its stdout */
	char buf[1 << 18];
	size_t len;
};

static bool decoder_built(void)
{
	struct stat st;
	return stat(DECODER, &st) == 0 && (st.st_mode & S_IXUSR);
}

static void child_start(struct child *c, const char *spec, const char *seconds, const char *frames)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	c->len = 0;
	c->buf[0] = 0;
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		if (frames)
			execl(DECODER, DECODER, spec, "--seconds", seconds, "--frames", frames, (char *)NULL);
		else
			execl(DECODER, DECODER, spec, "--seconds", seconds, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	c->out = p[0];
}

/* Reads what is available within ms milliseconds. */
static void child_read(struct child *c, int ms)
{
	struct pollfd pf = {.fd = c->out, .events = POLLIN};
	while (c->len < sizeof c->buf - 1 && poll(&pf, 1, ms) > 0) {
		ssize_t n = read(c->out, c->buf + c->len, sizeof c->buf - 1 - c->len);
		if (n <= 0)
			break;
		c->len += (size_t)n;
		ms = 0;
	}
	c->buf[c->len] = 0;
}

static int child_first_int(struct child *c, const char *key)
{
	for (int i = 0; i < 300 && !strchr(c->buf, '\n'); i++)
		child_read(c, 10);
	const char *p = strstr(c->buf, key);
	return p ? atoi(p + strlen(key)) : -1;
}

/* Waits (bounded) for the decoder to finish; returns its exit status. */
static int child_wait(struct child *c)
{
	int status = 0;
	for (int i = 0; i < 1000; i++) {
		/* poll() on a pipe at EOF returns at once while the child is
		 * still exiting, so sleep rather than poll to pace the loop. */
		child_read(c, 0);
		sleep_ms(5);
		pid_t r = waitpid(c->pid, &status, WNOHANG);
		if (r == c->pid) {
			child_read(c, 0);
			close(c->out);
			const char *done = strstr(c->buf, "{\"done\"");
			if (done)
				printf("decoder: %s", done);
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		}
	}
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &status, 0);
	close(c->out);
	fail_msg("decoder did not finish");
	return -1;
}

static const char *frame_line(const struct child *c, int fseq)
{
	static char key[32];
	snprintf(key, sizeof key, "{\"fseq\":%d,", fseq);
	return strstr(c->buf, key);
}

static struct tuio *make_tuio(const char *spec, int *port_out)
{
	struct tuio_config cfg = {
	    .n_targets = 1, .send_cursors = true, .send_blobs = true, .refresh_ms = 1000};
	strcpy(cfg.source_name, "tabletrack@test");
	assert_int_equal(tuio_target_parse(spec, &cfg.targets[0]), 0);
	int err = 0;
	struct tuio *t = tuio_create(&cfg, &err);
	assert_non_null(t);
	if (port_out)
		*port_out = tuio_get_port(t, 0);
	return t;
}

/* Sends start-up empty (fseq 0), frames 1..n with n_obj objects that move,
 * then destroy's empty frame n+1. */
static void run_frames(struct tuio *t, int n, int n_obj)
{
	assert_int_equal(tuio_send_empty(t, 0), 0);
	for (int i = 1; i <= n; i++) {
		struct tracked_state s = make_state((uint64_t)i, n_obj, 2, 1);
		for (int j = 0; j < n_obj; j++)
			g_obj[j].x = 0.01f * (float)i + 0.001f * (float)j;
		assert_int_equal(tuio_send_frame(t, &s), 0);
		sleep_ms(3);
	}
}

static void check_output(const struct child *c, int n, int n_obj)
{
	assert_non_null(strstr(c->buf, "\"problems\":0}"));
	assert_non_null(frame_line(c, 0));
	const char *last = frame_line(c, n);
	assert_non_null(last);
	char want[64];
	snprintf(want, sizeof want, "\"%d\":[%d,%.6g,", n_obj, (n_obj - 1) % 200,
	         (double)(0.01f * (float)n + 0.001f * (float)(n_obj - 1)));
	const char *eol = strchr(last, '\n');
	const char *hit = strstr(last, want);
	if (!hit || (eol && hit > eol))
		fail_msg("frame %d lacks object %s", n, want);
	assert_non_null(strstr(last, "\"cursors\":{\"1000\":[0.3,0.2]"));
	const char *end = frame_line(c, n + 1);
	assert_non_null(end);
	assert_non_null(strstr(end, "\"objects\":{},\"cursors\":{},\"blobs\":{}}"));
}

static void test_e2e_udp(void **state)
{
	(void)state;
	if (!decoder_built())
		skip();
	static struct child c;
	for (int round = 0; round < 2; round++) {
		int n_obj = round == 0 ? 3 : 60; /* 60 objects split over 4+ datagrams */
		child_start(&c, "udp:0", "4", round == 0 ? "22" : "12");
		int port = child_first_int(&c, "{\"listening\":");
		assert_true(port > 0);
		char spec[64];
		snprintf(spec, sizeof spec, "udp:127.0.0.1:%d", port);
		struct tuio *t = make_tuio(spec, NULL);
		int n = round == 0 ? 20 : 10;
		run_frames(t, n, n_obj);
		struct tuio_stats st;
		tuio_get_stats(t, &st);
		assert_true(st.packets >= (uint64_t)(3 * (n + 1)));
		tuio_destroy(t);
		assert_int_equal(child_wait(&c), 0);
		check_output(&c, n, n_obj);
		if (round == 1) {
			const char *m = strstr(c.buf, "\"max_size\":");
			assert_non_null(m);
			int max = atoi(m + 11);
			assert_true(max > 1000 && max <= 1472);
		}
	}
}

static void e2e_stream(const char *listen_spec, const char *scheme, int n_obj)
{
	if (!decoder_built())
		skip();
	static struct child c;
	int port = 0;
	struct tuio *t = make_tuio(listen_spec, &port);
	assert_true(port > 0);
	char spec[64];
	snprintf(spec, sizeof spec, "%s:127.0.0.1:%d", scheme, port);
	child_start(&c, spec, "5", NULL);
	struct tuio_stats st = {0};
	for (int i = 0; i < 600 && st.clients < 1; i++) {
		tuio_service(t);
		tuio_get_stats(t, &st);
		sleep_ms(5);
	}
	assert_int_equal(st.clients, 1);
	int n = 15;
	run_frames(t, n, n_obj);
	for (int i = 0; i < 20; i++) { /* let the ping be answered */
		tuio_service(t);
		sleep_ms(2);
	}
	tuio_get_stats(t, &st);
	assert_int_equal(st.dropped, 0);
	tuio_destroy(t);
	assert_int_equal(child_wait(&c), 0);
	check_output(&c, n, n_obj);
}

static void test_e2e_tcp_server(void **state)
{
	(void)state;
	e2e_stream("tcp:listen:127.0.0.1:0", "tcp", 5);
	e2e_stream("tcp:listen:127.0.0.1:0", "tcp", 40);
}

static void test_e2e_ws_server(void **state)
{
	(void)state;
	e2e_stream("ws:listen:127.0.0.1:0", "ws", 5);
	e2e_stream("ws:listen:127.0.0.1:0,tuio2", "ws", 40);
}

static void test_e2e_udp_tuio2(void **state)
{
	(void)state;
	if (!decoder_built())
		skip();
	static struct child c;
	child_start(&c, "udp:0", "4", "12");
	int port = child_first_int(&c, "{\"listening\":");
	assert_true(port > 0);
	char spec[64];
	snprintf(spec, sizeof spec, "udp:127.0.0.1:%d,tuio2", port);
	struct tuio *t = make_tuio(spec, NULL);
	run_frames(t, 10, 30);
	tuio_destroy(t);
	assert_int_equal(child_wait(&c), 0);
	check_output(&c, 10, 30);
}

/* tcp:HOST:PORT: we are the client of a listening TUIO client. */
static void test_tcp_client_target(void **state)
{
	(void)state;
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(ls, 1), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&sa, &sl), 0);
	char spec[64];
	snprintf(spec, sizeof spec, "tcp:127.0.0.1:%d", ntohs(sa.sin_port));
	struct tuio *t = make_tuio(spec, NULL);
	struct tuio_stats st = {0};
	for (int i = 0; i < 400 && st.clients < 1; i++) {
		tuio_service(t);
		tuio_get_stats(t, &st);
		sleep_ms(5);
	}
	assert_int_equal(st.clients, 1);
	int fd = accept(ls, NULL, NULL);
	assert_true(fd >= 0);
	struct tracked_state s = make_state(1, 2, 0, 0);
	assert_int_equal(tuio_send_frame(t, &s), 0);
	/* ONE length-prefixed packet (the reference TCP receivers handle a
	 * read only when it holds exactly one): a bundle of the 3 profile
	 * bundles, 2Dobj with 2 sets, 2Dcur, 2Dblb. */
	static uint8_t buf[8192];
	size_t have = 0;
	/* "tabletrack@test" pads to 8 bytes less than SOURCE23: 120-byte
	 * empty bundles; two alive IDs add 12, two sets 152; the outer
	 * bundle adds its 16-byte header and a size word per element. */
	size_t want = 4 + 16 + 3 * 4 + (120 + 12 + 152) + 120 + 120;
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	while (have < want && poll(&pf, 1, 2000) > 0) {
		ssize_t n = recv(fd, buf + have, sizeof buf - have, 0);
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	assert_int_equal(have, want);
	assert_int_equal(be32(buf), want - 4);
	assert_memory_equal(buf + 4, "#bundle\0\0\0\0\0\0\0\0\1", 16);
	size_t off = 4 + 16;
	static struct dmsg msgs[16];
	for (int i = 0; i < 3; i++) {
		uint32_t n = be32(buf + off);
		int k = decode_bundle(buf + off + 4, n, msgs, 16);
		assert_int_equal(k, i == 0 ? 5 : 3);
		off += 4 + n;
	}
	assert_int_equal(off, want);
	/* The client goes away: sends go on, later it reconnects. */
	close(fd);
	for (int i = 2; i < 10; i++) {
		s = make_state((uint64_t)i, 2, 0, 0);
		assert_int_equal(tuio_send_frame(t, &s), 0);
		sleep_ms(5);
	}
	fd = -1;
	for (int i = 0; i < 400 && fd < 0; i++) {
		tuio_service(t);
		pf.fd = ls;
		if (poll(&pf, 1, 5) > 0)
			fd = accept(ls, NULL, NULL);
	}
	assert_true(fd >= 0);
	tuio_destroy(t);
	close(fd);
	close(ls);
}

/* A plain HTTP request to the WebSocket server gets 400 and is closed. */
static void test_ws_rejects_plain_http(void **state)
{
	(void)state;
	int port = 0;
	struct tuio *t = make_tuio("ws:listen:127.0.0.1:0", &port);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	const char *req = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	char buf[512] = {0};
	size_t have = 0;
	for (int i = 0; i < 200; i++) {
		tuio_service(t);
		ssize_t n = recv(fd, buf + have, sizeof buf - 1 - have, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n > 0)
			have += (size_t)n;
		sleep_ms(5);
	}
	assert_memory_equal(buf, "HTTP/1.1 400", 12);
	struct tuio_stats st;
	tuio_get_stats(t, &st);
	assert_int_equal(st.clients, 0);
	close(fd);
	tuio_destroy(t);
}

/* The decoder must reject what clients reject: a double where a float is
 * expected, mixed profiles, fseq going back. */
static void send_bad_bundle(lo_address a, int fseq, bool use_double, bool mix)
{
	lo_bundle b = lo_bundle_new(LO_TT_IMMEDIATE);
	lo_message m = lo_message_new();
	lo_message_add_string(m, "source");
	lo_message_add_string(m, "x@y");
	lo_bundle_add_message(b, "/tuio/2Dobj", m);
	m = lo_message_new();
	lo_message_add_string(m, "alive");
	lo_message_add_int32(m, 1);
	lo_bundle_add_message(b, "/tuio/2Dobj", m);
	m = lo_message_new();
	lo_message_add_string(m, "set");
	lo_message_add_int32(m, 1);
	lo_message_add_int32(m, 0);
	if (use_double)
		lo_message_add_double(m, 0.5);
	else
		lo_message_add_float(m, 0.5f);
	for (int i = 0; i < 7; i++)
		lo_message_add_float(m, 0.1f);
	lo_bundle_add_message(b, "/tuio/2Dobj", m);
	if (mix) {
		m = lo_message_new();
		lo_message_add_string(m, "alive");
		lo_bundle_add_message(b, "/tuio/2Dcur", m);
	}
	m = lo_message_new();
	lo_message_add_string(m, "fseq");
	lo_message_add_int32(m, fseq);
	lo_bundle_add_message(b, "/tuio/2Dobj", m);
	assert_true(lo_send_bundle(a, b) > 0);
	lo_bundle_free_recursive(b);
}

static void test_decoder_catches_bad(void **state)
{
	(void)state;
	if (!decoder_built())
		skip();
	static struct child c;
	child_start(&c, "udp:0", "1", NULL);
	int port = child_first_int(&c, "{\"listening\":");
	assert_true(port > 0);
	char ps[8];
	snprintf(ps, sizeof ps, "%d", port);
	lo_address a = lo_address_new("127.0.0.1", ps);
	send_bad_bundle(a, 5, false, false); /* fine */
	send_bad_bundle(a, 3, false, false); /* fseq back */
	send_bad_bundle(a, 6, true, false);  /* double */
	send_bad_bundle(a, 7, false, true);  /* mixed */
	send_bad_bundle(a, 8, false, false); /* fine */
	lo_address_free(a);
	assert_int_equal(child_wait(&c), 1);
	const char *done = strstr(c.buf, "\"problems\":");
	assert_non_null(done);
	assert_int_equal(atoi(done + 11), 3);
}

/* A client that never reads: sends never block, the queue drops oldest. */
static void test_slow_client_drops(void **state)
{
	(void)state;
	int port = 0;
	struct tuio *t = make_tuio("tcp:listen:127.0.0.1:0", &port);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int small = 4096;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	struct tuio_stats st = {0};
	for (int i = 0; i < 400 && st.clients < 1; i++) {
		tuio_service(t);
		tuio_get_stats(t, &st);
		sleep_ms(2);
	}
	assert_int_equal(st.clients, 1);
	for (int i = 1; i <= 1500; i++) {
		struct tracked_state s = make_state((uint64_t)i, 40, 0, 0);
		assert_int_equal(tuio_send_frame(t, &s), 0);
	}
	tuio_get_stats(t, &st);
	assert_true(st.dropped > 0);
	assert_int_equal(st.clients, 1);
	close(fd);
	tuio_destroy(t);
}

/* The reference TUIO 2.0 client keeps an item "added" until a message
 * brings a different value, and an identical repeat then adds it twice:
 * a refresh of an unchanged item must differ from every recent send of it,
 * while items that changed go out exact. */
/* Packet 0 of the last encode, decoded. */
static int decode_first(const struct tuio_encoder *e, struct dmsg *msgs)
{
	size_t n = 0;
	const uint8_t *p = tuio_encoder_packet(e, 0, &n);
	assert_non_null(p);
	return decode_bundle(p, n, msgs, 16);
}

static void test_tuio2_refresh_differs(void **state)
{
	(void)state;
	struct tuio_encoder *e = make_encoder(true, 0, 0);
	struct tracked_state s = make_state(1, 1, 1, 1);
	static struct dmsg msgs[16];
	float exact[3], seen[20][3];
	assert_int_equal(tuio_encode_frame(e, &s, true, 0), 1);
	assert_int_equal(decode_first(e, msgs), 5);
	for (int m = 0; m < 3; m++)
		exact[m] = msgs[1 + m].floats[2]; /* tok, ptr, bnd angle */
	assert_true(exact[0] == 1.0f && exact[1] == 0.0f && exact[2] == 0.5f);
	g_obj[0].changed = g_cur[0].changed = g_blb[0].changed = false;
	for (int r = 0; r < 20; r++) {
		s.frame = (uint64_t)(2 + r);
		assert_int_equal(tuio_encode_frame(e, &s, true, 0), 1);
		assert_int_equal(decode_first(e, msgs), 5);
		for (int m = 0; m < 3; m++) {
			float a = msgs[1 + m].floats[2];
			seen[r][m] = a;
			assert_true(a != exact[m]);
			assert_true(fabsf(a - exact[m]) < 1e-5f);
			assert_true(a >= 0.0f && a < 6.2831853f);
			for (int q = r - 1; q >= 0 && q > r - 16; q--)
				assert_true(a != seen[q][m]);
		}
	}
	/* Not a refresh: unchanged items are not sent; changed ones exact. */
	assert_int_equal(tuio_encode_frame(e, &s, false, 0), 1);
	assert_int_equal(decode_first(e, msgs), 2);
	g_obj[0].changed = true;
	assert_int_equal(tuio_encode_frame(e, &s, true, 0), 1);
	assert_int_equal(decode_first(e, msgs), 5);
	assert_true(msgs[1].floats[2] == exact[0]);
	assert_true(msgs[2].floats[2] != exact[1]);
	tuio_encoder_destroy(e);
}

/* The reference TUIO 2.0 client also adds an item twice when a component
 * arrives for a session it already lists, and takes every bundle as a
 * frame: an owner's blob goes right after its tok/ptr, and a split frame
 * never separates one session's messages. */
static void test_tuio2_sessions_whole(void **state)
{
	(void)state;
	struct tuio_encoder *e = make_encoder(true, 0, 0);
	struct tracked_state s = make_state(5, 12, 12, 34);
	for (int i = 0; i < 12; i++) {
		g_blb[i].session_id = g_obj[i].session_id;
		g_blb[12 + i].session_id = g_cur[i].session_id;
	}
	static struct dmsg msgs[64];
	static int bundle_of[3000];
	for (int pass = 0; pass < 2; pass++) {
		memset(bundle_of, 0xff, sizeof bundle_of);
		int np = tuio_encode_frame(e, &s, pass == 0, 0);
		assert_true(pass == 1 || np > 1);
		int n_msgs = 0;
		for (int b = 0; b < np; b++) {
			size_t n;
			const uint8_t *p = tuio_encoder_packet(e, b, &n);
			int k = decode_bundle(p, n, msgs, 64);
			assert_int_equal(msgs[k - 1].n_ints, 12 + 12 + 10);
			for (int m = 1; m < k - 1; m++) {
				int32_t sid = msgs[m].ints[0];
				assert_true(sid > 0 && sid < 3000);
				assert_true(bundle_of[sid] == -1 || bundle_of[sid] == b);
				bundle_of[sid] = b;
				n_msgs++;
				if (pass == 1) {
					assert_string_equal(msgs[m].path, "/tuio2/bnd");
				} else if (strcmp(msgs[m].path, "/tuio2/bnd") == 0 && sid < 2000) {
					/* an owner's blob: right after its owner */
					assert_true(m > 1 && msgs[m - 1].ints[0] == sid);
					assert_true(strcmp(msgs[m - 1].path, "/tuio2/bnd") != 0);
				}
			}
		}
		assert_int_equal(n_msgs, pass == 0 ? 12 + 12 + 34 : 34);
		/* Second pass: nothing changed but the owners' blobs, which go
		 * out alone (the owner's tok/ptr is not repeated). */
		for (int i = 0; i < 12; i++)
			g_obj[i].changed = g_cur[i].changed = false;
	}
	tuio_encoder_destroy(e);
}

/* Outlines (TUIO 2.0): 4 touching and 2 hovering cursors and 3 blobs,
 * each with a 32-point outer contour, a blob with a hole: every ocg/icg
 * decodes with ",i" + 64 'f', follows its owner's message in the owner's
 * bundle, and carries the points; hovering ptrs have pressure 0, touching
 * ones 1 and the hand's session as c_id; no datagram is over the limit.
 * Without send_contours: no ocg at all. TUIO 1.1 never sees hovering
 * cursors. */
static struct tracked_contour g_con[16];
static struct tracked_point g_pts[16 * 32];

static void test_tuio2_contours(void **state)
{
	(void)state;
	struct tracked_state s = make_state(9, 0, 4, 3);
	for (int i = 0; i < 6; i++) {
		g_cur[i] = (struct tracked_cursor){.session_id = (uint32_t)(1000 + i), .x = 0.3f, .y = 0.2f,
		                                   .diameter = 0.02f, .changed = true, .touch_measured = true,
		                                   .hover = i >= 4, .hand_session = 2000};
	}
	s.n_hover = 2;
	int nc = 0, np = 0;
	for (int i = 0; i < 10; i++) {
		uint32_t sid = i < 6 ? (uint32_t)(1000 + i) : i < 9 ? (uint32_t)(2000 + i - 6) : 2000;
		g_con[nc] = (struct tracked_contour){.session_id = sid, .hole = i == 9, .first = np, .n = 32};
		for (int k = 0; k < 32; k++)
			g_pts[np++] = (struct tracked_point){0.5f + 0.01f * (float)i, 0.001f * (float)k};
		nc++;
	}
	s.n_contours = nc;
	s.contours = g_con;
	s.contour_points = g_pts;
	for (int with = 0; with < 2; with++) {
		struct tuio_encoder_config ec = {.tuio2 = true, .send_cursors = true, .send_blobs = true,
		                                 .send_contours = with == 1};
		strcpy(ec.source, SOURCE23);
		int err = 0;
		struct tuio_encoder *e = tuio_encoder_create(&ec, &err);
		assert_non_null(e);
		int n = tuio_encode_frame(e, &s, false, 0);
		assert_true(n >= 1);
		static struct dmsg msgs[64];
		int n_ocg = 0, n_icg = 0, n_ptr = 0;
		for (int b = 0; b < n; b++) {
			size_t len;
			const uint8_t *p = tuio_encoder_packet(e, b, &len);
			assert_true(len <= TUIO_DEFAULT_MAX_DATAGRAM);
			int k = decode_bundle(p, len, msgs, 64);
			for (int m = 1; m < k - 1; m++) {
				if (!strcmp(msgs[m].path, "/tuio2/ptr")) {
					int c = msgs[m].ints[0] - 1000;
					n_ptr++;
					assert_int_equal(msgs[m].ints[2], 2000);
					assert_true(msgs[m].floats[5] == (c >= 4 ? 0.0f : 1.0f));
				}
				bool ocg = !strcmp(msgs[m].path, "/tuio2/ocg"), icg = !strcmp(msgs[m].path, "/tuio2/icg");
				if (!ocg && !icg)
					continue;
				n_ocg += ocg;
				n_icg += icg;
				assert_int_equal(msgs[m].argc, 1 + 64);
				assert_int_equal(strlen(msgs[m].types), 65);
				assert_int_equal(msgs[m].n_floats, 16);
				assert_true(msgs[m].floats[3] == 0.001f);
				/* its owner came just before, in this bundle */
				int o = m - 1;
				while (o > 0 && (!strcmp(msgs[o].path, "/tuio2/ocg") || !strcmp(msgs[o].path, "/tuio2/icg")))
					o--;
				assert_true(o >= 1);
				assert_int_equal(msgs[o].ints[0], msgs[m].ints[0]);
			}
		}
		assert_int_equal(n_ptr, 6);
		assert_int_equal(n_ocg, with ? 9 : 0);
		assert_int_equal(n_icg, with ? 1 : 0);
		struct tuio_encode_info info;
		tuio_encoder_get_info(e, &info);
		assert_false(info.oversize);
		assert_false(info.truncated);
		tuio_encoder_destroy(e);
	}
	/* TUIO 1.1: the four touching cursors only. */
	struct tuio_encoder *e1 = make_encoder(false, 0, 0);
	int n1 = tuio_encode_frame(e1, &s, true, 0);
	int n_set = 0;
	for (int b = 0; b < n1; b++) {
		size_t len;
		const uint8_t *p = tuio_encoder_packet(e1, b, &len);
		static struct dmsg msgs[64];
		int k = decode_bundle(p, len, msgs, 64);
		for (int m = 0; m < k; m++)
			if (!strcmp(msgs[m].path, "/tuio/2Dcur") && !strcmp(msgs[m].word, "set"))
				n_set++;
	}
	assert_int_equal(n_set, 4);
	tuio_encoder_destroy(e1);
}

/* A header value is echoed only when it is a token list: no CR, LF or
 * other control byte can reach the 101 response. */
static void test_ws_handshake_no_injection(void **state)
{
	(void)state;
	char resp[512];
	size_t rl = 0;
	const char *base = "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
	                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
	const char *bad[] = {"tuio\rSet-Cookie: evil=1", "tuio\x01x", "tu\x7fio", "tuio;x"};
	char req[600];
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(req, sizeof req, "%sSec-WebSocket-Protocol: %s\r\n\r\n", base, bad[i]);
		memset(resp, 0, sizeof resp);
		assert_int_equal(tuio_ws_handshake(req, strlen(req), resp, sizeof resp, &rl), -1);
		assert_memory_equal(resp, "HTTP/1.1 400", 12);
		assert_null(strstr(resp, "Set-Cookie"));
		assert_null(strstr(resp, "tuio"));
	}
	snprintf(req, sizeof req, "%sSec-WebSocket-Protocol: tuio, other\r\n\r\n", base);
	assert_int_equal(tuio_ws_handshake(req, strlen(req), resp, sizeof resp, &rl), 1);
	resp[rl] = 0;
	assert_non_null(strstr(resp, "\r\nSec-WebSocket-Protocol: tuio\r\n"));
	assert_non_null(strstr(resp, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
}

static int tcp_connect_loopback(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	return fd;
}

/* Services t until fd has at least want bytes (or ~2 s); returns them. */
static size_t serve_and_read(struct tuio *t, int fd, uint8_t *buf, size_t cap, size_t want)
{
	size_t have = 0;
	for (int i = 0; i < 400 && have < want; i++) {
		tuio_service(t);
		ssize_t n = recv(fd, buf + have, cap - have, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n > 0)
			have += (size_t)n;
		else
			sleep_ms(5);
	}
	return have;
}

/* A WebSocket client past its handshake (response consumed). */
static int ws_open(struct tuio *t, int port)
{
	int fd = tcp_connect_loopback(port);
	const char *req = "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
	                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
	assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	char buf[512] = {0};
	size_t have = 0;
	for (int i = 0; i < 400 && !memmem(buf, have, "\r\n\r\n", 4); i++) {
		tuio_service(t);
		ssize_t n = recv(fd, buf + have, 1, MSG_DONTWAIT); /* stop right after the header */
		if (n > 0)
			have += (size_t)n;
		else
			sleep_ms(2);
	}
	assert_memory_equal(buf, "HTTP/1.1 101", 12);
	return fd;
}

/* A masked client frame (mask 0: payload as is) into out; returns its length. */
static size_t ws_client_frame(uint8_t *out, uint8_t b0, const void *payload, size_t n)
{
	out[0] = b0;
	out[1] = (uint8_t)(0x80 | n);
	memset(out + 2, 0, 4);
	memcpy(out + 6, payload, n);
	return 6 + n;
}

/* Reads server frames until a close; returns its code (0: none, -1: closed
 * without a close frame's code). */
static int ws_read_close(struct tuio *t, int fd)
{
	static uint8_t buf[65536];
	size_t have = 0;
	for (int i = 0; i < 400; i++) {
		tuio_service(t);
		ssize_t n = recv(fd, buf + have, sizeof buf - have, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n > 0)
			have += (size_t)n;
		else
			sleep_ms(5);
		size_t off = 0;
		while (have - off >= 2) {
			size_t len = buf[off + 1] & 0x7f, h = 2;
			if (len == 126) {
				len = (size_t)buf[off + 2] << 8 | buf[off + 3];
				h = 4;
			}
			if (have - off < h + len)
				break;
			if ((buf[off] & 0x0f) == TUIO_WS_OP_CLOSE)
				return len >= 2 ? buf[off + h] << 8 | buf[off + h + 1] : -1;
			off += h + len;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	return 0;
}

static void test_ws_protocol_errors(void **state)
{
	(void)state;
	int port = 0;
	struct tuio *t = make_tuio("ws:listen:127.0.0.1:0", &port);
	uint8_t f[64];
	/* A continuation with no message started. */
	int fd = ws_open(t, port);
	size_t n = ws_client_frame(f, 0x80 | TUIO_WS_OP_CONT, "ab", 2);
	assert_int_equal(send(fd, f, n, 0), (ssize_t)n);
	assert_int_equal(ws_read_close(t, fd), 1002);
	close(fd);
	/* A new message while a fragmented one is open. */
	fd = ws_open(t, port);
	n = ws_client_frame(f, TUIO_WS_OP_TEXT, "ab", 2);
	n += ws_client_frame(f + n, 0x80 | TUIO_WS_OP_TEXT, "cd", 2);
	assert_int_equal(send(fd, f, n, 0), (ssize_t)n);
	assert_int_equal(ws_read_close(t, fd), 1002);
	close(fd);
	/* A close with a 1-byte payload, and one with a reserved code. */
	fd = ws_open(t, port);
	n = ws_client_frame(f, 0x80 | TUIO_WS_OP_CLOSE, "\x03", 1);
	assert_int_equal(send(fd, f, n, 0), (ssize_t)n);
	assert_int_equal(ws_read_close(t, fd), 1002);
	close(fd);
	fd = ws_open(t, port);
	n = ws_client_frame(f, 0x80 | TUIO_WS_OP_CLOSE, "\x03\xed", 2); /* 1005 */
	assert_int_equal(send(fd, f, n, 0), (ssize_t)n);
	assert_int_equal(ws_read_close(t, fd), 1002);
	close(fd);
	/* Fragments that are well formed are skipped; a normal close echoed. */
	fd = ws_open(t, port);
	n = ws_client_frame(f, TUIO_WS_OP_TEXT, "ab", 2);
	n += ws_client_frame(f + n, 0x80 | TUIO_WS_OP_PING, "p", 1);
	n += ws_client_frame(f + n, 0x80 | TUIO_WS_OP_CONT, "cd", 2);
	n += ws_client_frame(f + n, 0x80 | TUIO_WS_OP_CLOSE, "\x03\xe8", 2);
	assert_int_equal(send(fd, f, n, 0), (ssize_t)n);
	assert_int_equal(ws_read_close(t, fd), 1000);
	close(fd);
	tuio_destroy(t);
}

/* Pings in one read burst get one pong (the latest payload); a client
 * that keeps pinging beyond the bucket is evicted and counted. */
static void test_ws_ping_coalesced_and_flood_evicted(void **state)
{
	(void)state;
	int port = 0;
	struct tuio *t = make_tuio("ws:listen:127.0.0.1:0", &port);
	int fd = ws_open(t, port);
	static uint8_t f[8192];
	size_t n = 0;
	for (int i = 0; i < 5; i++) {
		char p = (char)('a' + i);
		n += ws_client_frame(f + n, 0x80 | TUIO_WS_OP_PING, &p, 1);
	}
	assert_int_equal(send(fd, f, n, 0), (ssize_t)n);
	uint8_t got[64];
	size_t have = serve_and_read(t, fd, got, sizeof got, 3);
	for (int i = 0; i < 20; i++) { /* nothing more may come */
		tuio_service(t);
		ssize_t r = recv(fd, got + have, sizeof got - have, MSG_DONTWAIT);
		if (r > 0)
			have += (size_t)r;
		sleep_ms(2);
	}
	assert_int_equal(have, 3);
	assert_int_equal(got[0], 0x80 | TUIO_WS_OP_PONG);
	assert_int_equal(got[1], 1);
	assert_int_equal(got[2], 'e');
	/* A flood: 1000 pings at once. */
	n = 0;
	for (int i = 0; i < 1000; i++)
		n += ws_client_frame(f + n, 0x80 | TUIO_WS_OP_PING, "x", 1);
	assert_int_equal(send(fd, f, n, 0), (ssize_t)n);
	struct tuio_stats st = {0};
	for (int i = 0; i < 200 && st.evicted == 0; i++) {
		tuio_service(t);
		tuio_get_stats(t, &st);
		sleep_ms(2);
	}
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.clients, 0);
	/* At most one pong per read burst went out before the eviction. */
	have = 0;
	for (;;) {
		ssize_t r = recv(fd, f + have, sizeof f - have, MSG_DONTWAIT);
		if (r <= 0)
			break;
		have += (size_t)r;
	}
	assert_true(have <= 3 * 4);
	close(fd);
	tuio_destroy(t);
}

static struct tuio *make_tuio_slots(const char *spec, int max_clients, int per_address, int *port)
{
	struct tuio_config cfg = {.n_targets = 1, .max_clients = max_clients, .clients_per_address = per_address};
	strcpy(cfg.source_name, "tabletrack@test");
	assert_int_equal(tuio_target_parse(spec, &cfg.targets[0]), 0);
	int err = 0;
	struct tuio *t = tuio_create(&cfg, &err);
	assert_non_null(t);
	*port = tuio_get_port(t, 0);
	return t;
}

/* Every slot held by a half-open handshake: a newcomer is still served
 * (the oldest half-open one makes room). */
static void test_half_open_no_lockout(void **state)
{
	(void)state;
	int port = 0;
	struct tuio *t = make_tuio_slots("ws:listen:127.0.0.1:0", 4, 0, &port);
	int idle[4];
	for (int i = 0; i < 4; i++) {
		idle[i] = tcp_connect_loopback(port);
		tuio_service(t);
	}
	sleep_ms(10);
	tuio_service(t);
	int fd = ws_open(t, port);
	struct tuio_stats st;
	tuio_get_stats(t, &st);
	assert_int_equal(st.clients, 1);
	assert_int_equal(st.evicted, 1);
	close(fd);
	for (int i = 0; i < 4; i++)
		close(idle[i]);
	tuio_destroy(t);
}

/* One address holds at most clients_per_address slots; its newest
 * connection replaces its oldest. */
static void test_per_address_limit(void **state)
{
	(void)state;
	int port = 0;
	struct tuio *t = make_tuio_slots("tcp:listen:127.0.0.1:0", 8, 2, &port);
	int fd[3];
	struct tuio_stats st = {0};
	for (int i = 0; i < 3; i++) {
		fd[i] = tcp_connect_loopback(port);
		for (int k = 0; k < 50; k++) {
			tuio_service(t);
			tuio_get_stats(t, &st);
			if (st.clients == (i < 2 ? i + 1 : 2) && (uint64_t)(i == 2) == st.evicted)
				break;
			sleep_ms(2);
		}
	}
	assert_int_equal(st.clients, 2);
	assert_int_equal(st.evicted, 1);
	uint8_t b[4096];
	ssize_t r;
	do /* the oldest sees its connection end (after the start frame, if any) */
		r = recv(fd[0], b, sizeof b, MSG_DONTWAIT);
	while (r > 0);
	assert_true(r == 0 || (r < 0 && errno == ECONNRESET));
	for (int i = 0; i < 3; i++)
		close(fd[i]);
	tuio_destroy(t);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_target_parse_good),
	    cmocka_unit_test(test_target_parse_bad),
	    cmocka_unit_test(test_encode_sizes),
	    cmocka_unit_test(test_encode_matches_liblo),
	    cmocka_unit_test(test_encode_split),
	    cmocka_unit_test(test_encode_values),
	    cmocka_unit_test(test_encode_limits),
	    cmocka_unit_test(test_encode_tuio2),
	    cmocka_unit_test(test_sha1_base64_ws),
	    cmocka_unit_test(test_queue_drops_oldest),
	    cmocka_unit_test(test_create_errors),
	    cmocka_unit_test(test_unreachable_not_fatal),
	    cmocka_unit_test(test_e2e_udp),
	    cmocka_unit_test(test_e2e_udp_tuio2),
	    cmocka_unit_test(test_e2e_tcp_server),
	    cmocka_unit_test(test_e2e_ws_server),
	    cmocka_unit_test(test_tcp_client_target),
	    cmocka_unit_test(test_ws_rejects_plain_http),
	    cmocka_unit_test(test_decoder_catches_bad),
	    cmocka_unit_test(test_slow_client_drops),
	    cmocka_unit_test(test_tuio2_refresh_differs),
	    cmocka_unit_test(test_tuio2_sessions_whole),
	    cmocka_unit_test(test_tuio2_contours),
	    cmocka_unit_test(test_ws_handshake_no_injection),
	    cmocka_unit_test(test_ws_protocol_errors),
	    cmocka_unit_test(test_ws_ping_coalesced_and_flood_evicted),
	    cmocka_unit_test(test_half_open_no_lockout),
	    cmocka_unit_test(test_per_address_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
