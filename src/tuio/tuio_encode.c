#include "tuio_encode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "../core/log.h"

#define TWO_PI_F 6.28318530717958647692f
#define ONE_BELOW_1 0.99999994f

struct packet {
	uint32_t offset, length;
	int profile;
};

struct tuio_encoder {
	struct tuio_encoder_config cfg;
	char source2[160]; /* TUIO 2.0 source "name:0@address" */
	uint8_t *buf;
	size_t cap;
	struct packet *packets;
	int max_packets;
	uint32_t dims; /* last width<<16|height, for empty frames */
	uint32_t n_full; /* TUIO 2.0 full frames so far: picks the refresh nudge */
	struct tuio_encode_info info;
};

/* Writes into the encoder buffer; sizes are computed before writing, so the
 * bound check here is only a guard. */
struct writer {
	uint8_t *p;
	size_t len, cap;
};

static size_t osc_str_size(const char *s)
{
	return (strlen(s) + 4) & ~(size_t)3;
}

static void w_u32(struct writer *w, uint32_t v)
{
	if (w->len + 4 > w->cap)
		return;
	uint8_t *p = w->p + w->len;
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	w->len += 4;
}

static void w_i32(struct writer *w, int32_t v)
{
	w_u32(w, (uint32_t)v);
}

static void w_f32(struct writer *w, float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	w_u32(w, u);
}

static void w_u64(struct writer *w, uint64_t v)
{
	w_u32(w, (uint32_t)(v >> 32));
	w_u32(w, (uint32_t)v);
}

static void w_str(struct writer *w, const char *s)
{
	size_t n = strlen(s), padded = (n + 4) & ~(size_t)3;
	if (w->len + padded > w->cap)
		return;
	memcpy(w->p + w->len, s, n);
	memset(w->p + w->len + n, 0, padded - n);
	w->len += padded;
}

/* Starts a bundle element: reserves the size word, returns where it is. */
static size_t w_elem_begin(struct writer *w)
{
	size_t at = w->len;
	w_u32(w, 0);
	return at;
}

static void w_elem_end(struct writer *w, size_t at)
{
	if (at + 4 > w->len)
		return;
	uint32_t n = (uint32_t)(w->len - at - 4);
	uint8_t *p = w->p + at;
	p[0] = (uint8_t)(n >> 24);
	p[1] = (uint8_t)(n >> 16);
	p[2] = (uint8_t)(n >> 8);
	p[3] = (uint8_t)n;
}

static void w_bundle_header(struct writer *w, uint64_t timetag)
{
	w_str(w, "#bundle");
	w_u64(w, timetag);
}

/* Type tag string of ',' + prefix + n_i 'i': written without building it. */
static void w_tags_ints(struct writer *w, const char *prefix, int n_i)
{
	size_t lp = strlen(prefix), n = 1 + lp + (size_t)n_i, padded = (n + 4) & ~(size_t)3;
	if (w->len + padded > w->cap)
		return;
	uint8_t *p = w->p + w->len;
	p[0] = ',';
	memcpy(p + 1, prefix, lp);
	memset(p + 1 + lp, 'i', (size_t)n_i);
	memset(p + n, 0, padded - n);
	w->len += padded;
}

static size_t tags_ints_size(const char *prefix, int n_i)
{
	return (1 + strlen(prefix) + (size_t)n_i + 4) & ~(size_t)3;
}

static float clamp01(float v)
{
	if (!isfinite(v) || v < 0.0f)
		return 0.0f;
	return v < ONE_BELOW_1 ? v : ONE_BELOW_1;
}

static float finite_or0(float v)
{
	return isfinite(v) ? v : 0.0f;
}

static float wrap_angle(float a)
{
	if (!isfinite(a))
		return 0.0f;
	a = fmodf(a, TWO_PI_F);
	if (a < 0.0f)
		a += TWO_PI_F;
	if (!(a < TWO_PI_F) || a < 0.0f)
		a = 0.0f;
	return a;
}

static const char *const PROFILE_ADDR[3] = {"/tuio/2Dobj", "/tuio/2Dcur", "/tuio/2Dblb"};
#if TUIO_BLB_SET_FLOATS == 11
#define BLB_SET_TAGS                                                                                         \
	",si"                                                                                                \
	"ffffff"                                                                                             \
	"fffff"
#elif TUIO_BLB_SET_FLOATS == 12
#define BLB_SET_TAGS                                                                                         \
	",si"                                                                                                \
	"ffffff"                                                                                             \
	"ffffff"
#else
#error "TUIO_BLB_SET_FLOATS must be 11 or 12"
#endif
static const char *const PROFILE_SET_TAGS[3] = {",sii"
                                                "ffffffff",
                                                ",si"
                                                "fffff",
                                                BLB_SET_TAGS};
static const size_t PROFILE_SET_SIZE[3] = {TUIO_SIZE_OBJ_SET, TUIO_SIZE_CUR_SET, TUIO_SIZE_BLB_SET};

/* s_id tu_id c_id x y a X Y A m r */
#define TUIO2_TOK_TAGS                                                                                       \
	",iii"                                                                                               \
	"ffffffff"
/* s_id tu_id c_id x y angle shear radius pressure X Y P m p */
#define TUIO2_PTR_TAGS                                                                                       \
	",iii"                                                                                               \
	"ffffff"                                                                                             \
	"fffff"
/* s_id x y angle width height area X Y A m r */
#define TUIO2_BND_TAGS                                                                                       \
	",i"                                                                                                 \
	"ffffff"                                                                                             \
	"fffff"

/* Element size prefix + address (all "/tuio2/xxx" pad to 12) + tags + one
 * 4-byte word per argument. */
#define TUIO2_MSG_SIZE(tags) (4 + 12 + ((sizeof(tags) + 3) & ~(size_t)3) + 4 * (sizeof(tags) - 2))

/* --- TUIO 1.1 -------------------------------------------------------- */

static size_t t1_fixed_size(const struct tuio_encoder *e, int n_alive)
{
	const size_t addr = 12; /* every "/tuio/2Dxxx" pads to 12 */
	size_t src = 4 + addr + 4 + 8 + osc_str_size(e->cfg.source);
	size_t alive = 4 + addr + tags_ints_size("s", n_alive) + 8 + 4 * (size_t)n_alive;
	size_t fseq = 4 + addr + 4 + 8 + 4;
	return 16 + src + alive + fseq;
}

size_t tuio_encoder_bundle_size(const struct tuio_encoder *e, enum tuio_profile p, int n_alive, int n_sets)
{
	if (!e || p < TUIO_PROFILE_OBJ || p > TUIO_PROFILE_BLB || n_alive < 0 || n_sets < 0)
		return 0;
	return t1_fixed_size(e, n_alive) + PROFILE_SET_SIZE[p] * (size_t)n_sets;
}

static uint32_t session_at(const struct tracked_state *s, int p, int i)
{
	switch (p) {
	case TUIO_PROFILE_OBJ:
		return s->objects[i].session_id;
	case TUIO_PROFILE_CUR:
		return s->cursors[i].session_id;
	default:
		return s->blobs[i].session_id;
	}
}

static bool changed_at(const struct tracked_state *s, int p, int i)
{
	switch (p) {
	case TUIO_PROFILE_OBJ:
		return s->objects[i].changed;
	case TUIO_PROFILE_CUR:
		return s->cursors[i].changed;
	default:
		return s->blobs[i].changed;
	}
}

/* An angle moved by `steps` units in the last place, towards the inside of
 * [0, 2pi) (see tuio_encode.h, TUIO 2.0 refresh): at most 16 steps, about
 * 8e-6 rad. */
static float nudged(float a, int steps)
{
	float towards = a >= 1.0f ? 0.0f : 1.0f;
	for (int i = 0; i < steps; i++)
		a = nextafterf(a, towards);
	return a;
}

/* TUIO 1.1 2Dobj "set" and TUIO 2.0 /tuio2/tok carry an object's pose and
 * motion in the same order: x y a X Y A m r. */
static void w_object_pose(struct writer *w, const struct tracked_object *o, int nudge)
{
	w_f32(w, clamp01(o->x));
	w_f32(w, clamp01(o->y));
	w_f32(w, nudged(wrap_angle(o->angle), nudge));
	w_f32(w, finite_or0(o->X));
	w_f32(w, finite_or0(o->Y));
	w_f32(w, finite_or0(o->A));
	w_f32(w, finite_or0(o->m));
	w_f32(w, finite_or0(o->r));
}

/* TUIO 1.1 2Dblb "set" and TUIO 2.0 /tuio2/bnd carry the same fields in the
 * same order: s x y a w h f X Y A m r. */
static void w_blob_fields(struct writer *w, const struct tracked_blob *b, int nudge)
{
	w_i32(w, (int32_t)b->session_id);
	w_f32(w, clamp01(b->x));
	w_f32(w, clamp01(b->y));
	w_f32(w, nudged(wrap_angle(b->angle), nudge));
	w_f32(w, clamp01(b->w));
	w_f32(w, clamp01(b->h));
	w_f32(w, clamp01(b->area));
	w_f32(w, finite_or0(b->X));
	w_f32(w, finite_or0(b->Y));
	w_f32(w, finite_or0(b->A));
	w_f32(w, finite_or0(b->m));
	w_f32(w, finite_or0(b->r));
}

static void t1_write_set(struct writer *w, const struct tracked_state *s, int p, int i)
{
	size_t at = w_elem_begin(w);
	w_str(w, PROFILE_ADDR[p]);
	w_str(w, PROFILE_SET_TAGS[p]);
	w_str(w, "set");
	if (p == TUIO_PROFILE_OBJ) {
		const struct tracked_object *o = &s->objects[i];
		w_i32(w, (int32_t)o->session_id);
		w_i32(w, o->class_id);
		w_object_pose(w, o, 0);
	} else if (p == TUIO_PROFILE_CUR) {
		const struct tracked_cursor *c = &s->cursors[i];
		w_i32(w, (int32_t)c->session_id);
		w_f32(w, clamp01(c->x));
		w_f32(w, clamp01(c->y));
		w_f32(w, finite_or0(c->X));
		w_f32(w, finite_or0(c->Y));
		w_f32(w, finite_or0(c->m));
	} else {
		const struct tracked_blob *b = &s->blobs[i];
		w_blob_fields(w, b, 0);
		if (TUIO_BLB_SET_FLOATS == 12)
			w_f32(w, 0.0f);
	}
	w_elem_end(w, at);
}

static bool packet_begin(struct tuio_encoder *e, struct writer *w, size_t size)
{
	if (e->info.n_packets >= e->max_packets || e->info.bytes + size > e->cap) {
		e->info.truncated = true;
		return false;
	}
	w->p = e->buf + e->info.bytes;
	w->len = 0;
	w->cap = size;
	return true;
}

static void packet_end(struct tuio_encoder *e, struct writer *w, int profile)
{
	struct packet *pk = &e->packets[e->info.n_packets++];
	pk->offset = (uint32_t)e->info.bytes;
	pk->length = (uint32_t)w->len;
	pk->profile = profile;
	e->info.bytes += w->len;
	if (w->len > e->info.max_packet)
		e->info.max_packet = w->len;
	if (w->len > (size_t)e->cfg.max_datagram)
		e->info.oversize = true;
}

/* One bundle of profile p with the sets of items [from, to) that are due;
 * returns the index after the last set written. */
static int t1_write_bundle(struct tuio_encoder *e, const struct tracked_state *s, int p, int n, int32_t fseq,
                           bool full, int from, int *n_due_left)
{
	size_t fixed = t1_fixed_size(e, n), set = PROFILE_SET_SIZE[p];
	size_t room = (size_t)e->cfg.max_datagram > fixed ? (size_t)e->cfg.max_datagram - fixed : 0;
	int fit = (int)(room / set);
	if (fit < 1)
		fit = 1;
	int n_sets = *n_due_left < fit ? *n_due_left : fit;
	struct writer w;
	bool cut = false;
	if (!packet_begin(e, &w, fixed + set * (size_t)n_sets)) {
		/* Out of memory for sets: still close the frame with a valid
		 * bundle (full alive, fseq) so the client stays consistent. */
		if (n_sets == 0 || !packet_begin(e, &w, fixed))
			return -1;
		n_sets = 0;
		cut = true;
	}
	w_bundle_header(&w, 1);

	size_t at = w_elem_begin(&w);
	w_str(&w, PROFILE_ADDR[p]);
	w_str(&w, ",ss");
	w_str(&w, "source");
	w_str(&w, e->cfg.source);
	w_elem_end(&w, at);

	at = w_elem_begin(&w);
	w_str(&w, PROFILE_ADDR[p]);
	w_tags_ints(&w, "s", n);
	w_str(&w, "alive");
	for (int i = 0; i < n; i++)
		w_i32(&w, (int32_t)session_at(s, p, i));
	w_elem_end(&w, at);

	int i = from, written = 0;
	for (; i < n && written < n_sets; i++) {
		if (!full && !changed_at(s, p, i))
			continue;
		t1_write_set(&w, s, p, i);
		written++;
	}
	*n_due_left -= written;
	e->info.n_sets += written;

	at = w_elem_begin(&w);
	w_str(&w, PROFILE_ADDR[p]);
	w_str(&w, ",si");
	w_str(&w, "fseq");
	w_i32(&w, fseq);
	w_elem_end(&w, at);

	packet_end(e, &w, p);
	return cut ? -1 : i;
}

static void t1_encode_profile(struct tuio_encoder *e, const struct tracked_state *s, int p, int n,
                              int32_t fseq, bool full)
{
	int due = 0;
	for (int i = 0; i < n; i++)
		due += full || changed_at(s, p, i);
	int from = 0;
	do {
		from = t1_write_bundle(e, s, p, n, fseq, full, from, &due);
		if (from < 0) {
			e->info.truncated = true;
			return;
		}
	} while (due > 0);
}

/* --- TUIO 2.0 -------------------------------------------------------- */

static size_t t2_fixed_size(const struct tuio_encoder *e, int n_alive)
{
	size_t frm = 4 + 12 + 8 + 4 + 8 + 4 + osc_str_size(e->source2);
	size_t alv = 4 + 12 + tags_ints_size("", n_alive) + 4 * (size_t)n_alive;
	return 16 + frm + alv;
}

struct t2_item {
	int kind; /* TUIO_PROFILE_OBJ/CUR/BLB */
	int index;
};

static size_t t2_item_size(int kind)
{
	return kind == TUIO_PROFILE_OBJ   ? TUIO2_MSG_SIZE(TUIO2_TOK_TAGS)
	       : kind == TUIO_PROFILE_CUR ? TUIO2_MSG_SIZE(TUIO2_PTR_TAGS)
	                                  : TUIO2_MSG_SIZE(TUIO2_BND_TAGS);
}

/* nudge: 0 for an item sent because it changed; 1..16 for one only
 * repeated by a full refresh (tuio_encode.h). */
/* tu_id of an object: its type in the high 16 bits (tuio_encoder_config), user 0. */
static int32_t tok_type_user(const struct tuio_encoder_config *c, int32_t class_id)
{
	bool recognised = class_id >= c->object_id_min && class_id <= c->object_id_max;
	return recognised ? (int32_t)((uint32_t)(c->object_type_id & 0xffff) << 16) : 0;
}

static void t2_write_item(const struct tuio_encoder *e, struct writer *w, const struct tracked_state *s, int kind,
			  int i, int nudge)
{
	size_t at = w_elem_begin(w);
	if (kind == TUIO_PROFILE_OBJ) {
		const struct tracked_object *o = &s->objects[i];
		w_str(w, "/tuio2/tok");
		w_str(w, TUIO2_TOK_TAGS);
		w_i32(w, (int32_t)o->session_id);
		w_i32(w, tok_type_user(&e->cfg, o->class_id));
		w_i32(w, o->class_id);
		w_object_pose(w, o, nudge);
	} else if (kind == TUIO_PROFILE_CUR) {
		const struct tracked_cursor *c = &s->cursors[i];
		w_str(w, "/tuio2/ptr");
		w_str(w, TUIO2_PTR_TAGS);
		w_i32(w, (int32_t)c->session_id);
		w_i32(w, 0);
		w_i32(w, (int32_t)c->hand_session);
		w_f32(w, clamp01(c->x));
		w_f32(w, clamp01(c->y));
		w_f32(w, nudged(0.0f, nudge));
		w_f32(w, 0.0f);
		w_f32(w, clamp01(c->diameter * 0.5f));
		w_f32(w, c->touch_measured && !c->hover ? 1.0f : 0.0f);
		w_f32(w, finite_or0(c->X));
		w_f32(w, finite_or0(c->Y));
		w_f32(w, 0.0f);
		w_f32(w, finite_or0(c->m));
		w_f32(w, 0.0f);
	} else {
		const struct tracked_blob *b = &s->blobs[i];
		w_str(w, "/tuio2/bnd");
		w_str(w, TUIO2_BND_TAGS);
		w_blob_fields(w, b, nudge);
	}
	w_elem_end(w, at);
}

static int t2_count(const struct tuio_encoder *e, const struct tracked_state *s, int kind)
{
	if (!s)
		return 0;
	switch (kind) {
	case TUIO_PROFILE_OBJ:
		return e->cfg.send_objects ? s->n_objects : 0;
	case TUIO_PROFILE_CUR:
		return e->cfg.send_cursors ? s->n_cursors + s->n_hover : 0;
	default:
		return e->cfg.send_blobs ? s->n_blobs : 0;
	}
}

/* /tuio2/ocg and /tuio2/icg: s_id and n (x, y) pairs. */
static size_t t2_contour_size(int32_t n)
{
	return 4 + 12 + ((3 + 2 * (size_t)n + 3) & ~(size_t)3) + 4 + 8 * (size_t)n;
}

static void t2_write_contour(struct writer *w, const struct tracked_state *s, const struct tracked_contour *c)
{
	size_t at = w_elem_begin(w);
	w_str(w, c->hole ? "/tuio2/icg" : "/tuio2/ocg");
	size_t n = 2 + 2 * (size_t)c->n, padded = (n + 4) & ~(size_t)3;
	if (w->len + padded > w->cap)
		return;
	uint8_t *p = w->p + w->len;
	p[0] = ',';
	p[1] = 'i';
	memset(p + 2, 'f', 2 * (size_t)c->n);
	memset(p + n, 0, padded - n);
	w->len += padded;
	w_i32(w, (int32_t)c->session_id);
	for (int32_t i = 0; i < c->n; i++) {
		const struct tracked_point *q = &s->contour_points[c->first + i];
		w_f32(w, clamp01(q->x));
		w_f32(w, clamp01(q->y));
	}
	w_elem_end(w, at);
}

/* Bytes of the contours of session sid (0 when contours are not sent);
 * with w, writes them. */
static size_t t2_contours(const struct tuio_encoder *e, const struct tracked_state *s, uint32_t sid,
			  struct writer *w)
{
	size_t size = 0;
	for (int32_t i = 0; e->cfg.send_contours && i < s->n_contours; i++) {
		const struct tracked_contour *c = &s->contours[i];
		if (c->session_id != sid || c->n <= 0)
			continue;
		size += t2_contour_size(c->n);
		if (w)
			t2_write_contour(w, s, c);
	}
	return size;
}

/* A blob sent for an object or finger (tracked.h) shares its owner's
 * session: in TUIO 2.0 that is one session with two components, listed
 * once in alv. */
static bool t2_blob_has_owner(const struct tuio_encoder *e, const struct tracked_state *s, int i)
{
	uint32_t sid = s->blobs[i].session_id;
	for (int k = TUIO_PROFILE_OBJ; k <= TUIO_PROFILE_CUR; k++)
		for (int j = 0; j < t2_count(e, s, k); j++)
			if (session_at(s, k, j) == sid)
				return true;
	return false;
}

/* The blob of owner (kind, i), an object or cursor, or -1. */
static int t2_owned_blob(const struct tuio_encoder *e, const struct tracked_state *s, int kind, int i)
{
	if (kind == TUIO_PROFILE_BLB)
		return -1;
	uint32_t sid = session_at(s, kind, i);
	for (int j = 0; j < t2_count(e, s, TUIO_PROFILE_BLB); j++)
		if (s->blobs[j].session_id == sid)
			return j;
	return -1;
}

/* One session's messages (tuio_encode.h, TUIO 2.0 sessions): the item
 * (kind, index) and, for an owner, its blob; each part only when due. */
struct t2_unit {
	bool item_due;
	int blob; /* the owner's blob when due, else -1 */
};

static bool t2_unit_at(const struct tuio_encoder *e, const struct tracked_state *s, bool full,
                       const struct t2_item *it, struct t2_unit *u)
{
	u->item_due = full || changed_at(s, it->kind, it->index);
	u->blob = -1;
	if (it->kind == TUIO_PROFILE_BLB)
		return u->item_due && !t2_blob_has_owner(e, s, it->index);
	int b = t2_owned_blob(e, s, it->kind, it->index);
	if (b >= 0 && (full || changed_at(s, TUIO_PROFILE_BLB, b)))
		u->blob = b;
	return u->item_due || u->blob >= 0;
}

static size_t t2_unit_size(const struct tuio_encoder *e, const struct tracked_state *s, const struct t2_item *it,
			   const struct t2_unit *u)
{
	return (u->item_due ? t2_item_size(it->kind) : 0) + (u->blob >= 0 ? t2_item_size(TUIO_PROFILE_BLB) : 0) +
	       t2_contours(e, s, session_at(s, it->kind, it->index), NULL);
}

/* Advances (kind, index) to the next session with something due (into
 * *u), or returns false at the end. */
static bool t2_next_due(const struct tuio_encoder *e, const struct tracked_state *s, bool full,
                        struct t2_item *it, struct t2_unit *u)
{
	for (; it->kind <= TUIO_PROFILE_BLB; it->kind++, it->index = 0) {
		int n = t2_count(e, s, it->kind);
		for (; it->index < n; it->index++)
			if (t2_unit_at(e, s, full, it, u))
				return true;
	}
	return false;
}

static void t2_encode(struct tuio_encoder *e, const struct tracked_state *s, int32_t fseq, bool full,
                      uint64_t ntp_time)
{
	int n_alive = 0;
	for (int k = TUIO_PROFILE_OBJ; k <= TUIO_PROFILE_BLB; k++)
		n_alive += t2_count(e, s, k);
	for (int i = 0; i < t2_count(e, s, TUIO_PROFILE_BLB); i++)
		n_alive -= t2_blob_has_owner(e, s, i);
	size_t fixed = t2_fixed_size(e, n_alive);
	struct t2_item it = {TUIO_PROFILE_OBJ, 0};
	struct t2_unit u;
	bool more = t2_next_due(e, s, full, &it, &u);
	do {
		/* Sizes differ by kind: count the sessions that fit by walking
		 * a copy. A session is never split across bundles. */
		struct t2_item scan = it;
		struct t2_unit su = u;
		size_t size = fixed;
		int n_units = 0;
		bool scan_more = more;
		while (scan_more) {
			size_t add = t2_unit_size(e, s, &scan, &su);
			if (n_units > 0 && size + add > (size_t)e->cfg.max_datagram)
				break;
			size += add;
			n_units++;
			scan.index++;
			scan_more = t2_next_due(e, s, full, &scan, &su);
		}
		struct writer w;
		if (!packet_begin(e, &w, size)) {
			if (!packet_begin(e, &w, fixed))
				return;
			n_units = 0;
			scan_more = false;
		}
		w_bundle_header(&w, 1);
		size_t at = w_elem_begin(&w);
		w_str(&w, "/tuio2/frm");
		w_str(&w, ",itis");
		w_i32(&w, fseq);
		w_u64(&w, ntp_time > 1 ? ntp_time : 1);
		w_i32(&w, (int32_t)e->dims);
		w_str(&w, e->source2);
		w_elem_end(&w, at);
		int nudge = (int)(e->n_full % 16) + 1;
		for (int k = 0; k < n_units; k++) {
			if (u.item_due) {
				t2_write_item(e, &w, s, it.kind, it.index,
				              full && !changed_at(s, it.kind, it.index) ? nudge : 0);
				e->info.n_sets++;
			}
			if (u.blob >= 0) {
				t2_write_item(e, &w, s, TUIO_PROFILE_BLB, u.blob,
				              full && !changed_at(s, TUIO_PROFILE_BLB, u.blob) ? nudge : 0);
				e->info.n_sets++;
			}
			t2_contours(e, s, session_at(s, it.kind, it.index), &w);
			it.index++;
			t2_next_due(e, s, full, &it, &u);
		}
		at = w_elem_begin(&w);
		w_str(&w, "/tuio2/alv");
		w_tags_ints(&w, "", n_alive);
		for (int k = TUIO_PROFILE_OBJ; k <= TUIO_PROFILE_BLB; k++) {
			int n = t2_count(e, s, k);
			for (int i = 0; i < n; i++)
				if (k != TUIO_PROFILE_BLB || !t2_blob_has_owner(e, s, i))
					w_i32(&w, (int32_t)session_at(s, k, i));
		}
		w_elem_end(&w, at);
		packet_end(e, &w, TUIO_PROFILE_TUIO2);
		if (n_units == 0 && more) {
			e->info.truncated = true;
			return;
		}
		more = scan_more;
	} while (more);
}

/* --- public ---------------------------------------------------------- */

struct tuio_encoder *tuio_encoder_create(const struct tuio_encoder_config *cfg, int *err)
{
	int e_ = ERR_CONFIG;
	struct tuio_encoder *e = NULL;
	if (!cfg || !cfg->source[0] || memchr(cfg->source, 0, sizeof cfg->source) == NULL) {
		log_error("tuio: encoder needs a source name");
		goto fail;
	}
	if (cfg->max_datagram > 0 && cfg->max_datagram < 256) {
		log_error("tuio: max_datagram %d is below 256 bytes", cfg->max_datagram);
		goto fail;
	}
	e_ = ERR_NOMEM;
	e = calloc(1, sizeof *e);
	if (!e)
		goto fail;
	e->cfg = *cfg;
	if (e->cfg.max_datagram <= 0)
		e->cfg.max_datagram = TUIO_DEFAULT_MAX_DATAGRAM;
	e->cap = cfg->buffer_bytes ? cfg->buffer_bytes : TUIO_DEFAULT_BUFFER_BYTES;
	if (e->cap > UINT32_MAX)
		e->cap = UINT32_MAX;
	e->max_packets = cfg->max_packets > 0 ? cfg->max_packets : TUIO_DEFAULT_MAX_PACKETS;
	e->buf = malloc(e->cap);
	e->packets = calloc((size_t)e->max_packets, sizeof *e->packets);
	if (!e->buf || !e->packets)
		goto fail;

	const char *at = strchr(e->cfg.source, '@');
	size_t name_len = at ? (size_t)(at - e->cfg.source) : strlen(e->cfg.source);
	if (memchr(e->cfg.source, ':', name_len))
		snprintf(e->source2, sizeof e->source2, "%s", e->cfg.source);
	else
		snprintf(e->source2, sizeof e->source2, "%.*s:0%s", (int)name_len, e->cfg.source,
		         at ? at : "");
	return e;
fail:
	tuio_encoder_destroy(e);
	if (err)
		*err = e_;
	return NULL;
}

void tuio_encoder_destroy(struct tuio_encoder *e)
{
	if (!e)
		return;
	free(e->buf);
	free(e->packets);
	free(e);
}

static void info_reset(struct tuio_encoder *e)
{
	memset(&e->info, 0, sizeof e->info);
}

int tuio_encode_frame(struct tuio_encoder *e, const struct tracked_state *s, bool full, uint64_t ntp_time)
{
	if (!e || !s || s->n_objects < 0 || s->n_cursors < 0 || s->n_blobs < 0 ||
	    (s->n_objects && !s->objects) || (s->n_cursors && !s->cursors) || (s->n_blobs && !s->blobs))
		return ERR_FORMAT;
	info_reset(e);
	int32_t fseq = s->frame == UINT64_MAX ? -1 : (int32_t)(s->frame & 0x7fffffffu);
	if (s->width > 0 && s->height > 0)
		e->dims = ((uint32_t)s->width & 0xffffu) << 16 | ((uint32_t)s->height & 0xffffu);
	if (e->cfg.tuio2) {
		t2_encode(e, s, fseq, full, ntp_time);
		e->n_full += full;
	} else {
		if (e->cfg.send_objects)
			t1_encode_profile(e, s, TUIO_PROFILE_OBJ, s->n_objects, fseq, full);
		if (e->cfg.send_cursors)
			t1_encode_profile(e, s, TUIO_PROFILE_CUR, s->n_cursors, fseq, full);
		if (e->cfg.send_blobs)
			t1_encode_profile(e, s, TUIO_PROFILE_BLB, s->n_blobs, fseq, full);
	}
	return e->info.n_packets;
}

int tuio_encode_empty(struct tuio_encoder *e, int32_t fseq, uint64_t ntp_time)
{
	if (!e)
		return ERR_FORMAT;
	struct tracked_state s = {0};
	s.frame = (uint64_t)(uint32_t)fseq;
	info_reset(e);
	if (e->cfg.tuio2) {
		t2_encode(e, &s, fseq, false, ntp_time);
	} else {
		for (int p = TUIO_PROFILE_OBJ; p <= TUIO_PROFILE_BLB; p++) {
			bool on = p == TUIO_PROFILE_OBJ   ? e->cfg.send_objects
			          : p == TUIO_PROFILE_CUR ? e->cfg.send_cursors
			                                  : e->cfg.send_blobs;
			if (on)
				t1_encode_profile(e, &s, p, 0, fseq, false);
		}
	}
	return e->info.n_packets;
}

const uint8_t *tuio_encoder_packet(const struct tuio_encoder *e, int i, size_t *len)
{
	if (!e || i < 0 || i >= e->info.n_packets)
		return NULL;
	if (len)
		*len = e->packets[i].length;
	return e->buf + e->packets[i].offset;
}

int tuio_encoder_packet_profile(const struct tuio_encoder *e, int i)
{
	if (!e || i < 0 || i >= e->info.n_packets)
		return -1;
	return e->packets[i].profile;
}

size_t tuio_encoder_nested(const struct tuio_encoder *e, uint8_t *out, size_t cap)
{
	if (!e || e->info.n_packets < 1)
		return 0;
	if (e->info.n_packets == 1) {
		if (e->packets[0].length > cap)
			return 0;
		memcpy(out, e->buf + e->packets[0].offset, e->packets[0].length);
		return e->packets[0].length;
	}
	size_t need = 16 + e->info.bytes + 4 * (size_t)e->info.n_packets;
	if (need > cap)
		return 0;
	struct writer w = {out, 0, cap};
	w_bundle_header(&w, 1);
	for (int i = 0; i < e->info.n_packets; i++) {
		w_u32(&w, e->packets[i].length);
		memcpy(out + w.len, e->buf + e->packets[i].offset, e->packets[i].length);
		w.len += e->packets[i].length;
	}
	return w.len;
}

void tuio_encoder_get_info(const struct tuio_encoder *e, struct tuio_encode_info *out)
{
	if (!out)
		return;
	if (!e) {
		memset(out, 0, sizeof *out);
		return;
	}
	*out = e->info;
}
