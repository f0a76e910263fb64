/* test_contours.c - the outline stage on drawn scenes run through the real
 * segmenter: crack tracing of a square is exact; sub-pixel outlines of
 * sharp and blurred discs lie on the true circle; sharpness tells a sharp
 * disc from a blurred one; Douglas-Peucker keeps every point within its
 * tolerance and honours the point cap; fingers, blobs and holes get their
 * contours within the frame's caps; a hand gets its fingertips (touching
 * and hovering told apart), the palm is never a finger. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/detect.h"
#include "../src/core/err.h"
#include "../src/core/image.h"
#include "../src/outline/outline.h"
#include "../src/segment/segment.h"
#include "../src/threshold/threshold.h"

#define W 400
#define H 300
#define BG 40.0f
#define FG 200.0f
#define SS 4

/* A drawing: coverage (0..1) of shapes, each with its own blur, mixed
 * into a grey frame, then thresholded at mid-grey and segmented. */
struct scene {
	float *cov, *acc, *tmp;
	struct image_u8 grey;
	struct bitmask mask;
	struct segment *seg;
	const struct region_tree *tree;
};

struct capsule {
	float x0, y0, x1, y1, r;
};

static float capsule_dist(const struct capsule *c, float x, float y)
{
	float vx = c->x1 - c->x0, vy = c->y1 - c->y0, wx = x - c->x0, wy = y - c->y0;
	float l2 = vx * vx + vy * vy;
	float u = l2 > 0 ? (wx * vx + wy * vy) / l2 : 0;
	u = u < 0 ? 0 : u > 1 ? 1 : u;
	return hypotf(wx - u * vx, wy - u * vy) - c->r;
}

static void scene_init(struct scene *s)
{
	memset(s, 0, sizeof *s);
	s->cov = calloc(W * H, sizeof(float));
	s->acc = calloc(W * H, sizeof(float));
	s->tmp = calloc(W * H, sizeof(float));
	assert_non_null(s->cov);
	assert_non_null(s->acc);
	assert_non_null(s->tmp);
	assert_int_equal(image_u8_alloc(&s->grey, W, H), 0);
	assert_int_equal(bitmask_alloc(&s->mask, W, H), 0);
	struct segment_config sc = {.max_width = W, .max_height = H, .adj_cap = 19};
	int err = 0;
	s->seg = segment_create(&sc, &err);
	assert_non_null(s->seg);
}

static void scene_free(struct scene *s)
{
	segment_destroy(s->seg);
	bitmask_free(&s->mask);
	image_u8_free(&s->grey);
	free(s->cov);
	free(s->acc);
	free(s->tmp);
}

static void blur(float *v, float *tmp, float sigma)
{
	if (sigma <= 0)
		return;
	int r = (int)ceilf(3 * sigma);
	float k[64];
	float sum = 0;
	for (int i = -r; i <= r; i++)
		sum += k[i + r] = expf(-0.5f * (float)(i * i) / (sigma * sigma));
	for (int i = 0; i <= 2 * r; i++)
		k[i] /= sum;
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			float a = 0;
			for (int i = -r; i <= r; i++) {
				int xx = x + i < 0 ? 0 : x + i >= W ? W - 1 : x + i;
				a += k[i + r] * v[y * W + xx];
			}
			tmp[y * W + x] = a;
		}
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			float a = 0;
			for (int i = -r; i <= r; i++) {
				int yy = y + i < 0 ? 0 : y + i >= H ? H - 1 : y + i;
				a += k[i + r] * tmp[yy * W + x];
			}
			v[y * W + x] = a;
		}
}

/* Adds the union of capsules (a disc is a capsule of length 0), blurred
 * by sigma, at brightness level (0..1 of FG - BG), taking the max with
 * what is there. hole: a capsule cut out of the first ones. */
static void scene_add(struct scene *s, const struct capsule *caps, int n, const struct capsule *hole, float sigma,
		      float level)
{
	memset(s->cov, 0, W * H * sizeof(float));
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			int in = 0;
			for (int sy = 0; sy < SS; sy++)
				for (int sx = 0; sx < SS; sx++) {
					float px = (float)x - 0.5f + ((float)sx + 0.5f) / SS;
					float py = (float)y - 0.5f + ((float)sy + 0.5f) / SS;
					bool inside = false;
					for (int c = 0; c < n && !inside; c++)
						inside = capsule_dist(&caps[c], px, py) <= 0;
					if (inside && hole && capsule_dist(hole, px, py) <= 0)
						inside = false;
					in += inside;
				}
			s->cov[y * W + x] = (float)in / (SS * SS);
		}
	blur(s->cov, s->tmp, sigma);
	for (int i = 0; i < W * H; i++)
		s->acc[i] = fmaxf(s->acc[i], level * s->cov[i]);
}

/* Grey frame, mask at `thr_level` of the contrast, region tree. */
static void scene_finish(struct scene *s, float thr_level)
{
	struct image_u8 bin;
	assert_int_equal(image_u8_alloc(&bin, W, H), 0);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			float v = s->acc[y * W + x];
			image_u8_row(&s->grey, y)[x] = (uint8_t)lrintf(BG + (FG - BG) * v);
			image_u8_row(&bin, y)[x] = v > thr_level ? 255 : 0;
		}
	bitmask_from_image(&s->mask, &bin);
	image_u8_free(&bin);
	assert_int_equal(segment_process(s->seg, &s->mask, &s->tree), 0);
}

static int32_t region_at(const struct region_tree *t, int x, int y)
{
	for (int32_t k = t->row_first_run[y]; k < t->row_first_run[y + 1]; k++)
		if (x >= t->runs[k].x && x < t->runs[k].x + t->runs[k].len)
			return t->runs[k].region;
	return -1;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

static float median(float *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_float);
	return v[n / 2];
}

/* A 10 x 6 rectangle: 32 cracks, each midpoint half a pixel outside a
 * pixel centre of the rectangle, the walk closed and clockwise on screen. */
static void test_trace_rectangle(void **state)
{
	(void)state;
	struct scene s;
	scene_init(&s);
	for (int y = 50; y < 56; y++)
		for (int x = 20; x < 30; x++)
			s.acc[y * W + x] = 1;
	scene_finish(&s, 0.5f);
	int32_t reg = region_at(s.tree, 22, 52);
	assert_true(reg >= 0);
	uint8_t *mask = malloc((W + 2) * (H + 2));
	struct outline_point pts[256];
	int n = outline_trace(s.tree, reg, mask, pts, 256);
	assert_int_equal(n, 32);
	assert_int_equal(outline_trace(s.tree, reg, mask, pts, 31), -1);
	double area2 = 0;
	for (int i = 0; i < n; i++) {
		const struct outline_point *p = &pts[i], *q = &pts[(i + 1) % n];
		/* On a pixel edge: one coordinate a half-integer. */
		float fx = p->x - floorf(p->x), fy = p->y - floorf(p->y);
		assert_true((fabsf(fx - 0.5f) < 1e-6f) != (fabsf(fy - 0.5f) < 1e-6f));
		assert_true(p->x >= 19.5f && p->x <= 29.5f && p->y >= 49.5f && p->y <= 55.5f);
		/* the inside pixel is half a pixel against the normal */
		int ix = (int)lrintf(p->x - 0.5f * p->nx), iy = (int)lrintf(p->y - 0.5f * p->ny);
		assert_true(ix >= 20 && ix < 30 && iy >= 50 && iy < 56);
		area2 += (double)p->x * q->y - (double)q->x * p->y;
		assert_true(hypotf(q->x - p->x, q->y - p->y) <= 1.0f + 1e-5f);
	}
	/* Shoelace over the midpoints: clockwise on screen (y down) is positive. */
	assert_true(area2 > 0);
	free(mask);
	scene_free(&s);
}

/* Discs at sub-pixel centres, sharp (sigma 0.7) and blurred (sigma 3):
 * refined points lie on the true circle (median error < 0.2 px sharp,
 * < 0.5 px blurred), and the median sharpness tells them apart. */
static void test_refine_discs(void **state)
{
	(void)state;
	struct scene s;
	scene_init(&s);
	struct capsule sharp = {100.3f, 120.6f, 100.3f, 120.6f, 14.2f};
	struct capsule soft = {260.7f, 140.2f, 260.7f, 140.2f, 14.2f};
	scene_add(&s, &sharp, 1, NULL, 0.7f, 1.0f);
	scene_add(&s, &soft, 1, NULL, 3.0f, 1.0f);
	scene_finish(&s, 0.5f);
	uint8_t *mask = malloc((W + 2) * (H + 2));
	static struct outline_point pts[4096];
	static float sh[4096], err[4096], off[4096];
	float med_sharp[2];
	const struct capsule *discs[2] = {&sharp, &soft};
	for (int k = 0; k < 2; k++) {
		int32_t reg = region_at(s.tree, (int)discs[k]->x0, (int)discs[k]->y0);
		assert_true(reg >= 0);
		int n = outline_trace(s.tree, reg, mask, pts, 4096);
		assert_true(n > 60);
		float before[4096];
		for (int i = 0; i < n; i++)
			before[i] = fabsf(capsule_dist(discs[k], pts[i].x, pts[i].y));
		outline_refine(&s.grey, true, pts, n, sh, off);
		for (int i = 0; i < n; i++)
			err[i] = fabsf(capsule_dist(discs[k], pts[i].x, pts[i].y));
		float med_err = median(err, n), med_before = median(before, n);
		med_sharp[k] = median(sh, n);
		print_message("disc %d: crack error %.3f px, refined %.3f px, sharpness %.3f /px\n", k,
			      (double)med_before, (double)med_err, (double)med_sharp[k]);
		assert_true(med_err < (k == 0 ? 0.2f : 0.5f));
	}
	assert_true(med_sharp[0] > 0.35f);
	assert_true(med_sharp[1] < 0.25f);
	free(mask);
	scene_free(&s);
}

static float seg_dist(float px, float py, const struct outline_point *a, const struct outline_point *b)
{
	struct capsule c = {a->x, a->y, b->x, b->y, 0};
	return capsule_dist(&c, px, py);
}

/* A polygon of 400 points on a wobbly circle: every point lies within the
 * tolerance of the simplified polygon; a cap of 8 gives at most 8. */
static void test_simplify(void **state)
{
	(void)state;
	enum { N = 400 };
	static struct outline_point pts[N];
	static int keep[N], scratch[N];
	static float fscratch[2 * N];
	for (int i = 0; i < N; i++) {
		float a = 2.0f * (float)M_PI * (float)i / N;
		float r = 50.0f + 3.0f * sinf(5 * a);
		pts[i] = (struct outline_point){100 + r * cosf(a), 100 + r * sinf(a), cosf(a), sinf(a)};
	}
	for (int t = 0; t < 3; t++) {
		float tol = t == 0 ? 0.25f : t == 1 ? 1.0f : 3.0f;
		int m = outline_simplify(pts, N, tol, true, N, keep, scratch, fscratch);
		assert_true(m >= 3 && m < N);
		for (int k = 1; k < m; k++)
			assert_true(keep[k] > keep[k - 1]);
		for (int i = 0; i < N; i++) {
			float best = 1e9f;
			for (int k = 0; k < m; k++)
				best = fminf(best, seg_dist(pts[i].x, pts[i].y, &pts[keep[k]], &pts[keep[(k + 1) % m]]));
			assert_true(best <= tol + 1e-3f);
		}
		print_message("tolerance %.2f px: %d of %d points\n", (double)tol, m, N);
	}
	int m = outline_simplify(pts, N, 0.25f, true, 8, keep, scratch, fscratch);
	assert_true(m >= 3 && m <= 8);
	/* Eight points of a 50 px circle sag 3.8 px between them, the
	 * wobble adds 3: every point stays within 12 px. */
	for (int i = 0; i < N; i++) {
		float best = 1e9f;
		for (int k = 0; k < m; k++)
			best = fminf(best, seg_dist(pts[i].x, pts[i].y, &pts[keep[k]], &pts[keep[(k + 1) % m]]));
		assert_true(best <= 12.0f);
	}
}

static struct outline_config config(void)
{
	return (struct outline_config){.contours = true, .tolerance_px = 0.5f, .max_points = 24,
				       .max_contours = 64, .touch_sharpness = 0, .hands = false,
				       .finger_size_px = 20};
}

/* Two fingers (one sharp, one blurred), a ring blob: contours for all,
 * an inner contour for the ring's hole, every point near the truth; the
 * point cap holds; touch_sharpness marks the blurred finger hovering;
 * max_contours 1 keeps one and raises overflow. Nothing when nothing is
 * asked. */
static void test_process(void **state)
{
	(void)state;
	struct scene s;
	scene_init(&s);
	struct capsule f1 = {80.4f, 80.2f, 80.4f, 80.2f, 9.6f}, f2 = {180.1f, 80.7f, 180.1f, 80.7f, 9.6f};
	struct capsule ring = {300, 200, 300, 200, 30}, hole = {300, 200, 300, 200, 14};
	scene_add(&s, &f1, 1, NULL, 0.7f, 1.0f);
	scene_add(&s, &f2, 1, NULL, 2.5f, 1.0f);
	scene_add(&s, &ring, 1, &hole, 0.7f, 1.0f);
	scene_finish(&s, 0.5f);
	struct detections det;
	assert_int_equal(detections_alloc(&det, 16), 0);
	struct outline_config oc = config();
	assert_int_equal(detections_alloc_outlines(&det, oc.max_contours, oc.max_points), 0);
	det.width = W;
	det.height = H;
	const struct capsule *fc[2] = {&f1, &f2};
	for (int i = 0; i < 2; i++)
		det.fingers[det.n_fingers++] = (struct finger_det){
			.x = fc[i]->x0, .y = fc[i]->y0, .diameter_px = 19,
			.region = region_at(s.tree, (int)fc[i]->x0, (int)fc[i]->y0)};
	det.blobs[det.n_blobs++] = (struct blob_det){.x = 300, .y = 200, .region = region_at(s.tree, 300, 171)};
	int err = 0;
	struct outline *o = outline_create(&oc, W, H, 1, &err);
	assert_non_null(o);

	oc.contours = false;
	assert_int_equal(outline_set_config(o, &oc), 0);
	assert_false(outline_needed(&oc));
	assert_int_equal(outline_process(o, s.tree, &s.grey, &det), 0);
	assert_int_equal(det.n_contours, 0);

	oc.contours = true;
	oc.touch_sharpness = 0.3f;
	assert_int_equal(outline_set_config(o, &oc), 0);
	assert_int_equal(outline_process(o, s.tree, &s.grey, &det), 0);
	assert_false(det.overflow);
	assert_int_equal(det.n_contours, 4);
	int holes = 0;
	for (int c = 0; c < det.n_contours; c++) {
		const struct contour_det *cd = &det.contours[c];
		assert_true(cd->n >= 3 && cd->n <= oc.max_points);
		const struct capsule *truth = cd->owner_kind == CONTOUR_FINGER ? fc[cd->owner] : cd->hole ? &hole : &ring;
		holes += cd->hole;
		if (cd->hole)
			assert_int_equal(cd->owner_kind, CONTOUR_BLOB);
		for (int i = 0; i < cd->n; i++) {
			const struct contour_point *p = &det.points[cd->first + i];
			/* A small disc blurred by 2.5 px has its steepest grey
			 * a little inside the true circle. */
			float tol = truth == &f2 ? 1.0f : 0.6f;
			assert_true(fabsf(capsule_dist(truth, p->x, p->y)) < tol);
		}
	}
	assert_int_equal(holes, 1);
	/* The stage refines only the points it keeps, and each is exactly the
	 * point outline_refine() makes of that crack over the whole outline. */
	uint8_t *scratch = calloc((W + 2) * (H + 2), 1);
	struct outline_point *all = malloc(4096 * sizeof *all);
	float *sh = malloc(4096 * sizeof *sh), *off = malloc(4096 * sizeof *off);
	assert_true(scratch && all && sh && off);
	for (int c = 0; c < det.n_contours; c++) {
		const struct contour_det *cd = &det.contours[c];
		int32_t reg = cd->owner_kind == CONTOUR_FINGER ? det.fingers[cd->owner].region
			      : cd->hole			  ? region_at(s.tree, (int)hole.x0, (int)hole.y0)
								  : det.blobs[cd->owner].region;
		int n = outline_trace(s.tree, reg, scratch, all, 4096);
		assert_true(n > 0);
		outline_refine(&s.grey, s.tree->regions[reg].colour != 0, all, n, sh, off);
		for (int i = 0; i < cd->n; i++) {
			const struct contour_point *p = &det.points[cd->first + i];
			bool found = false;
			for (int j = 0; j < n && !found; j++)
				found = all[j].x == p->x && all[j].y == p->y;
			assert_true(found);
		}
	}
	free(scratch);
	free(all);
	free(sh);
	free(off);
	print_message("sharpness: sharp finger %.3f, blurred %.3f\n", (double)det.fingers[0].sharpness,
		      (double)det.fingers[1].sharpness);
	assert_false(det.fingers[0].hover);
	assert_true(det.fingers[1].hover);

	det.n_contours = det.n_points = 0;
	oc.max_contours = 1;
	assert_int_equal(outline_set_config(o, &oc), 0);
	assert_int_equal(outline_process(o, s.tree, &s.grey, &det), 0);
	assert_int_equal(det.n_contours, 1);
	assert_true(det.overflow);

	outline_destroy(o);
	detections_free(&det);
	scene_free(&s);
}

/* A hand: palm, an arm to the border, four fingers; two fingertips lie
 * sharp on the surface, two hover (blurred, dimmer). The hand becomes a
 * blob with the hand flag, its four tips fingers of that hand at their
 * tip centres, touching and hovering told apart; no finger on the palm or
 * the arm. */
static void test_hand(void **state)
{
	(void)state;
	struct scene s;
	scene_init(&s);
	const float fr = 8.0f;
	struct capsule palm[3] = {{200, 180, 200, 200, 30}, {200, 210, 200, 299, 22}, {0, 0, 0, 0, 0}};
	struct capsule fing[4] = {{180, 160, 150, 100, fr}, {198, 155, 195, 80, fr}, {215, 158, 232, 90, fr},
				  {230, 175, 280, 150, fr}};
	const bool touching[4] = {true, false, true, false};
	struct capsule hand[6];
	memcpy(hand, palm, 2 * sizeof *palm);
	memcpy(hand + 2, fing, sizeof fing);
	scene_add(&s, hand, 6, NULL, 2.5f, 0.6f);
	for (int i = 0; i < 4; i++)
		if (touching[i]) {
			struct capsule tip = {fing[i].x1, fing[i].y1, fing[i].x1, fing[i].y1, fr};
			scene_add(&s, &tip, 1, NULL, 0.6f, 1.0f);
		}
	scene_finish(&s, 0.3f);
	struct detections det;
	assert_int_equal(detections_alloc(&det, 16), 0);
	struct outline_config oc = config();
	oc.hands = true;
	oc.finger_size_px = 2 * fr;
	oc.touch_sharpness = 0.3f;
	assert_int_equal(detections_alloc_outlines(&det, oc.max_contours, oc.max_points), 0);
	det.width = W;
	det.height = H;
	int err = 0;
	struct outline *o = outline_create(&oc, W, H, 1, &err);
	assert_non_null(o);
	assert_int_equal(outline_process(o, s.tree, &s.grey, &det), 0);
	assert_int_equal(det.n_blobs, 1);
	assert_true(det.blobs[0].hand);
	assert_int_equal(det.n_fingers, 4);
	bool seen[4] = {false};
	for (int i = 0; i < det.n_fingers; i++) {
		const struct finger_det *f = &det.fingers[i];
		assert_true(f->in_hand);
		assert_int_equal(f->hand, 0);
		int best = -1;
		float bd = 1e9f;
		for (int k = 0; k < 4; k++) {
			float d = hypotf(f->x - fing[k].x1, f->y - fing[k].y1);
			if (d < bd) {
				bd = d;
				best = k;
			}
		}
		print_message("tip %d at %.1f %.1f: truth %d at %.1f px, sharpness %.3f, %s\n", i, (double)f->x,
			      (double)f->y, best, (double)bd, (double)f->sharpness, f->hover ? "hover" : "touch");
		assert_true(bd < 2.5f);
		assert_false(seen[best]);
		seen[best] = true;
		assert_int_equal(f->hover, !touching[best]);
	}
	/* The hand's outline came with it, near the truth union. */
	assert_true(det.n_contours >= 1);
	assert_int_equal(det.contours[0].owner_kind, CONTOUR_BLOB);
	outline_destroy(o);
	detections_free(&det);
	scene_free(&s);
}

/* The AVX2 tests' pseudo-random numbers (a 24-bit LCG) and note. */
static uint32_t lcg(uint32_t *seed)
{
	*seed = *seed * 1664525u + 1013904223u;
	return *seed >> 8;
}

static void note_avx2(void)
{
	if (!outline_have_avx2())
		print_message("no AVX2 on this CPU: both paths are the scalar one\n");
}

/* g filled with one of three greys: random (kind 0), a smooth ramp (1) or a
 * hard step (2). */
static void fill_grey(struct image_u8 *g, int kind, uint32_t *seed)
{
	for (int y = 0; y < g->height; y++)
		for (int x = 0; x < g->width; x++)
			image_u8_row(g, y)[x] = kind == 0 ? (uint8_t)lcg(seed)
						 : kind == 1 ? (uint8_t)((x * 7 + y * 3) & 255)
							     : (uint8_t)(x + y > (g->width + g->height) / 2 ? 220 : 30);
}

/* The vector profile gives the bits of the scalar one: random frames of
 * random grey, smooth ramps and hard steps, at random points and normals
 * all over them, edges and corners included, both polarities. */
static void test_profile_avx2(void **state)
{
	(void)state;
	note_avx2();
	uint32_t seed = 12345;
#define RND() lcg(&seed)
	const int sizes[4][2] = {{40, 30}, {64, 48}, {17, 200}, {300, 9}};
	long compared = 0, vector = 0;
	for (int si = 0; si < 4; si++) {
		struct image_u8 g;
		assert_int_equal(image_u8_alloc(&g, sizes[si][0], sizes[si][1]), 0);
		for (int kind = 0; kind < 3; kind++) {
			fill_grey(&g, kind, &seed);
			for (int i = 0; i < 4000; i++) {
				const float px = (float)(RND() % 10000) / 10000.0f * (float)(g.width + 2) - 1.0f;
				const float py = (float)(RND() % 10000) / 10000.0f * (float)(g.height + 2) - 1.0f;
				const float a = (float)(RND() % 10000) / 10000.0f * 6.2831853f;
				const float nx = cosf(a), ny = sinf(a);
				const bool bright = RND() & 1;
				float r[2][3];
				outline_profile(&g, bright, false, px, py, nx, ny, &r[0][0], &r[0][1], &r[0][2]);
				outline_profile(&g, bright, true, px, py, nx, ny, &r[1][0], &r[1][1], &r[1][2]);
				assert_memory_equal(r[0], r[1], sizeof r[0]);
				compared++;
				vector += px - 8 >= 0 && px + 8 < g.width - 1 && py - 8 >= 0 && py + 8 < g.height - 2;
			}
		}
		image_u8_free(&g);
	}
#undef RND
	print_message("%ld profiles equal, about %ld of them on the vector path\n", compared, vector);
	assert_true(vector > 1000);
}

/* A random wobbly outline of 4 to max - 1 points into pts, on a
 * half-pixel grid (many equal distances, so the first of the farthest
 * matters), with repeated points (segments of length 0); returns n. */
static int wobbly_outline(struct outline_point *pts, int max, uint32_t *seed)
{
	const int n = 4 + (int)(lcg(seed) % (uint32_t)(max - 4));
	const float r = 5.0f + (float)(lcg(seed) % 200), wob = (float)(lcg(seed) % 8);
	for (int i = 0; i < n; i++) {
		if (i > 0 && lcg(seed) % 6 == 0) {
			pts[i] = pts[i - 1];
			continue;
		}
		const float a = 2.0f * (float)M_PI * (float)i / (float)n;
		const float rr = r + wob * (float)(lcg(seed) % 100) / 100.0f;
		pts[i] = (struct outline_point){roundf(2 * (300 + rr * cosf(a))) / 2, roundf(2 * (300 + rr * sinf(a))) / 2,
						cosf(a), sinf(a)};
	}
	return n;
}

/* Douglas-Peucker with AVX2 keeps the points the scalar path keeps:
 * random wobbly outlines on a half-pixel grid (many equal distances, so
 * the first of the farthest matters) with repeated points (segments of
 * length 0), several tolerances and caps. */
static void test_simplify_avx2(void **state)
{
	(void)state;
	note_avx2();
	uint32_t seed = 4242;
#define RND() lcg(&seed)
	enum { N = 700 };
	static struct outline_point pts[N];
	static int keep[2][N], scratch[N];
	static float fscratch[2 * N];
	long kept = 0;
	for (int t = 0; t < 300; t++) {
		const int n = wobbly_outline(pts, N, &seed);
		const float tol = 0.25f * (float)(1 + RND() % 12);
		const int cap = RND() % 2 ? n : 4 + (int)(RND() % 60);
		int m[2];
		for (int v = 0; v < 2; v++)
			m[v] = outline_simplify(pts, n, tol, v == 1, cap, keep[v], scratch, fscratch);
		assert_int_equal(m[0], m[1]);
		assert_memory_equal(keep[0], keep[1], (size_t)m[0] * sizeof keep[0][0]);
		kept += m[0];
	}
#undef RND
	print_message("300 outlines, %ld points kept alike\n", kept);
}

/* With a tolerance above 0, Douglas-Peucker takes its spans largest value
 * first and stops at the cap; at tolerance 0 it takes every point's value
 * and selects the (cap + 1)-th largest. Where the cap binds at tolerance t
 * (fewer points kept with it than without), that threshold is above t, so
 * both must keep the same points; where it does not, the capped call keeps
 * what the uncapped one keeps. Random outlines as above, both paths. */
static void test_simplify_best_first(void **state)
{
	(void)state;
	uint32_t seed = 977;
#define RND() lcg(&seed)
	enum { N = 900 };
	static struct outline_point pts[N];
	static int keep[3][N], scratch[N];
	static float fscratch[2 * N];
	int bound = 0;
	for (int t = 0; t < 400; t++) {
		const int n = wobbly_outline(pts, N, &seed);
		const float tol = 0.125f * (float)(1 + RND() % 16);
		const bool avx2 = RND() % 2;
		const int all = outline_simplify(pts, n, tol, avx2, n, keep[0], scratch, fscratch);
		const int cap = 1 + (int)(RND() % (unsigned)(all + 2));
		const int m = outline_simplify(pts, n, tol, avx2, cap, keep[1], scratch, fscratch);
		if (cap >= all) {
			assert_int_equal(m, all);
			assert_memory_equal(keep[1], keep[0], (size_t)m * sizeof keep[0][0]);
			continue;
		}
		const int full = outline_simplify(pts, n, 0.0f, avx2, cap, keep[2], scratch, fscratch);
		assert_int_equal(m, full);
		assert_memory_equal(keep[1], keep[2], (size_t)m * sizeof keep[0][0]);
		assert_true(m <= cap);
		bound++;
	}
#undef RND
	assert_true(bound > 100);
	print_message("400 outlines, the cap bound %d of them: the same points as the full pass\n", bound);
}

/* A hand's profiles eight at a time (one a lane) equal outline_profile()
 * one at a time, bit for bit: the near offsets, and the offsets and
 * sharpness; runs of points well inside the frame (the vector path), then
 * points anywhere (runs broken by points near or beyond the edge), on
 * noise, a ramp and a step, both ways round. */
static void test_profiles_avx2(void **state)
{
	(void)state;
	note_avx2();
	uint32_t seed = 777;
#define RND() lcg(&seed)
#define UNIT() ((float)(RND() % 10000) / 10000.0f)
	enum { N = 4000 };
	static struct outline_point pts[N];
	static float got[N], got_sharp[N];
	struct image_u8 g;
	assert_int_equal(image_u8_alloc(&g, 120, 90), 0);
	long compared = 0;
	for (int kind = 0; kind < 3; kind++) {
		fill_grey(&g, kind, &seed);
		for (int i = 0; i < N; i++) {
			const bool inside = i < N / 2;
			const float a = UNIT() * 6.2831853f;
			pts[i].x = inside ? 9.0f + UNIT() * (float)(g.width - 21) : UNIT() * (float)(g.width + 2) - 1.0f;
			pts[i].y = inside ? 9.0f + UNIT() * (float)(g.height - 22) : UNIT() * (float)(g.height + 2) - 1.0f;
			pts[i].nx = cosf(a);
			pts[i].ny = sinf(a);
		}
		for (int bright = 0; bright < 2; bright++) {
			outline_profiles(&g, bright, true, pts, N, got, NULL);
			for (int i = 0; i < N; i++) {
				float off, sharp, want;
				outline_profile(&g, bright, false, pts[i].x, pts[i].y, pts[i].nx, pts[i].ny, &off, &sharp,
						&want);
				assert_memory_equal(&got[i], &want, sizeof want);
				compared++;
			}
			outline_profiles(&g, bright, true, pts, N, got, got_sharp);
			for (int i = 0; i < N; i++) {
				float off, sharp, near;
				outline_profile(&g, bright, false, pts[i].x, pts[i].y, pts[i].nx, pts[i].ny, &off, &sharp,
						&near);
				assert_memory_equal(&got[i], &off, sizeof off);
				assert_memory_equal(&got_sharp[i], &sharp, sizeof sharp);
				compared++;
			}
		}
	}
	image_u8_free(&g);
#undef UNIT
#undef RND
	print_message("%ld profiles equal\n", compared);
}

/* Field by field: padding may differ between a copied and a built struct. */
static void assert_same_detections(const struct detections *a, const struct detections *b)
{
	assert_int_equal(a->n_fingers, b->n_fingers);
	for (int32_t i = 0; i < a->n_fingers; i++) {
		const struct finger_det *p = &a->fingers[i], *q = &b->fingers[i];
		assert_true(p->x == q->x && p->y == q->y && p->diameter_px == q->diameter_px &&
			    p->roundness == q->roundness && p->region == q->region && p->sharpness == q->sharpness);
		assert_true(p->hover == q->hover && p->in_hand == q->in_hand && p->hand == q->hand);
	}
	assert_int_equal(a->n_blobs, b->n_blobs);
	for (int32_t i = 0; i < a->n_blobs; i++) {
		const struct blob_det *p = &a->blobs[i], *q = &b->blobs[i];
		assert_true(p->x == q->x && p->y == q->y && p->angle == q->angle && p->w == q->w && p->h == q->h);
		assert_true(p->region == q->region && p->hand == q->hand);
	}
	assert_int_equal(a->n_contours, b->n_contours);
	for (int32_t i = 0; i < a->n_contours; i++) {
		const struct contour_det *p = &a->contours[i], *q = &b->contours[i];
		assert_true(p->owner_kind == q->owner_kind && p->hole == q->hole && p->owner == q->owner);
		assert_true(p->first == q->first && p->n == q->n);
	}
	assert_int_equal(a->n_points, b->n_points);
	for (int32_t i = 0; i < a->n_points; i++)
		assert_true(a->points[i].x == b->points[i].x && a->points[i].y == b->points[i].y);
	assert_int_equal(a->overflow, b->overflow);
}

/* The stage on 4 tasks gives exactly what it gives on one, and so does it
 * with outline_begin() called before the matcher's fingers and blobs are
 * known (as the engine does): two hands, two lone fingers and a ring blob
 * with its hole, with room for everything and with the frame's lists too
 * small (contours, points, fingertips), where what is kept and the
 * overflow flag depend on the order; and with one hand's region reported
 * by the matcher as a finger, which makes it no hand though
 * outline_begin() ran it as one. */
static void test_threads_identical(void **state)
{
	(void)state;
	struct scene s;
	scene_init(&s);
	const float fr = 8.0f;
	struct capsule hand1[6] = {{200, 180, 200, 200, 30}, {200, 210, 200, 299, 22}, {180, 160, 150, 100, fr},
				   {198, 155, 195, 80, fr},       {215, 158, 232, 90, fr},    {230, 175, 280, 150, fr}};
	struct capsule hand2[5] = {{70, 225, 70, 235, 24}, {70, 240, 70, 299, 18}, {55, 205, 35, 160, fr},
				   {72, 200, 75, 150, fr}, {90, 208, 110, 170, fr}};
	struct capsule f1 = {40, 40, 40, 40, 9.6f}, f2 = {110, 45, 110, 45, 9.6f};
	struct capsule ring = {340, 60, 340, 60, 30}, hole = {340, 60, 340, 60, 14};
	scene_add(&s, hand1, 6, NULL, 2.5f, 0.6f);
	scene_add(&s, hand2, 5, NULL, 0.7f, 0.6f);
	scene_add(&s, &f1, 1, NULL, 0.7f, 1.0f);
	scene_add(&s, &f2, 1, NULL, 2.5f, 1.0f);
	scene_add(&s, &ring, 1, &hole, 0.7f, 1.0f);
	scene_finish(&s, 0.3f);
	struct outline_config oc = config();
	oc.hands = true;
	oc.finger_size_px = 2 * fr;
	oc.touch_sharpness = 0.3f;
	oc.max_contours = 64;
	struct detections det[3];
	int err = 0;
	/* one task; four; four, begun before the matcher's output */
	struct outline *o[3] = {outline_create(&oc, W, H, 1, &err), outline_create(&oc, W, H, 4, &err),
				outline_create(&oc, W, H, 4, &err)};
	for (int k = 0; k < 3; k++)
		assert_non_null(o[k]);
	/* caps: the frame's fingers, contours a frame (max_contours), the
	 * frame's points (64 contours of this many); the last with the
	 * second hand reported as a finger */
	const int caps[5][3] = {{32, 64, 24}, {32, 3, 24}, {32, 64, 1}, {4, 64, 24}, {32, 64, 24}};
	for (int c = 0; c < 5; c++) {
		for (int k = 0; k < 3; k++) {
			assert_int_equal(detections_alloc(&det[k], caps[c][0]), 0);
			assert_int_equal(detections_alloc_outlines(&det[k], 64, caps[c][2]), 0);
			det[k].width = W;
			det[k].height = H;
			oc.max_contours = caps[c][1];
			assert_int_equal(outline_set_config(o[k], &oc), 0);
			if (k == 2) {
				/* a begun frame dropped, then this one */
				outline_begin(o[k], s.tree, &s.grey);
				outline_cancel(o[k]);
				outline_begin(o[k], s.tree, &s.grey);
			}
			const struct capsule *fc[2] = {&f1, &f2};
			for (int i = 0; i < 2; i++)
				det[k].fingers[det[k].n_fingers++] = (struct finger_det){
					.x = fc[i]->x0, .y = fc[i]->y0, .diameter_px = 19,
					.region = region_at(s.tree, (int)fc[i]->x0, (int)fc[i]->y0)};
			if (c == 4) {
				/* the hand of the lower region index: the merge passes
				 * over its unit to reach the other's */
				const int32_t r1 = region_at(s.tree, 200, 250), r2 = region_at(s.tree, 70, 250);
				det[k].fingers[det[k].n_fingers++] = (struct finger_det){
					.x = r1 < r2 ? 200 : 70, .y = 250, .diameter_px = 36, .region = r1 < r2 ? r1 : r2};
			}
			det[k].blobs[det[k].n_blobs++] =
				(struct blob_det){.x = 340, .y = 60, .region = region_at(s.tree, 340, 31)};
			/* the first hand's palm as the matcher's blob, too */
			det[k].blobs[det[k].n_blobs++] =
				(struct blob_det){.x = 200, .y = 190, .region = region_at(s.tree, 200, 190)};
			assert_int_equal(outline_process(o[k], s.tree, &s.grey, &det[k]), 0);
		}
		int hands = 0;
		for (int32_t i = 0; i < det[0].n_blobs; i++)
			hands += det[0].blobs[i].hand;
		print_message("caps %d/%d/%d: %d hands, %d fingers, %d contours, overflow %d\n", caps[c][0], caps[c][1],
			      caps[c][2], hands, det[0].n_fingers, det[0].n_contours, det[0].overflow);
		assert_true(c == 3 || hands == (c == 4 ? 1 : 2));
		assert_true(c == 0 || c == 4 || det[0].overflow);
		for (int k = 1; k < 3; k++)
			assert_same_detections(&det[0], &det[k]);
		for (int k = 0; k < 3; k++)
			detections_free(&det[k]);
	}
	for (int k = 0; k < 3; k++)
		outline_destroy(o[k]);
	scene_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_rectangle),
		cmocka_unit_test(test_refine_discs),
		cmocka_unit_test(test_simplify),
		cmocka_unit_test(test_process),
		cmocka_unit_test(test_hand),
		cmocka_unit_test(test_threads_identical),
		cmocka_unit_test(test_profile_avx2),
		cmocka_unit_test(test_profiles_avx2),
		cmocka_unit_test(test_simplify_avx2),
		cmocka_unit_test(test_simplify_best_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
