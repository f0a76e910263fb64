/* Tests of the symbol renderer (src/fiducial/render.h): layout errors,
 * decodability after thresholding, truth geometry and the rotation
 * convention. Decoding uses a tiny flood-fill segmenter written here, so the
 * renderer is checked independently of the project's segmenter. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/err.h"
#include "../src/core/image.h"
#include "../src/fiducial/render.h"
#include "common/testutil.h"

#define PI 3.14159265358979

static const char *const trees[] = {
	"w01222222221111",       /* our small set's first */
	"w01222122121111",
	"b01222222221111",
	"w0122222212212121111",  /* default-set shape: 6-hole blob, 4 dots */
	"b0122212221222121111",
	"w0122221222121111111111", /* 23 nodes, many dots */
	"w012211",               /* two holes, two dots: tiny */
};

/* ---- a minimal segmenter ------------------------------------------------ */

struct seg {
	int w, h, n;
	int32_t *label;
	uint8_t colour[4096];
	int x0[4096], y0[4096], x1[4096], y1[4096];
	uint8_t border[4096];
	/* adjacency as a bit matrix over the first 4096 labels */
	uint8_t *adj;
};

static void seg_run(struct seg *s, const struct image_u8 *img, int thr)
{
	s->w = img->width;
	s->h = img->height;
	s->n = 0;
	s->label = malloc(sizeof(int32_t) * (size_t)(s->w * s->h));
	s->adj = calloc(4096 * 4096 / 8, 1);
	int32_t *stack = malloc(sizeof(int32_t) * (size_t)(s->w * s->h));
	assert_non_null(s->label);
	assert_non_null(s->adj);
	assert_non_null(stack);
	for (int i = 0; i < s->w * s->h; i++)
		s->label[i] = -1;
	for (int y = 0; y < s->h; y++)
		for (int x = 0; x < s->w; x++) {
			if (s->label[y * s->w + x] >= 0)
				continue;
			int id = s->n++;
			assert_true(id < 4096);
			uint8_t col = image_u8_row(img, y)[x] >= thr;
			s->colour[id] = col;
			s->x0[id] = s->x1[id] = x;
			s->y0[id] = s->y1[id] = y;
			s->border[id] = 0;
			int sp = 0;
			stack[sp++] = y * s->w + x;
			s->label[y * s->w + x] = id;
			while (sp) {
				int p = stack[--sp], px = p % s->w, py = p / s->w;
				if (px < s->x0[id]) s->x0[id] = px;
				if (px > s->x1[id]) s->x1[id] = px;
				if (py < s->y0[id]) s->y0[id] = py;
				if (py > s->y1[id]) s->y1[id] = py;
				if (px == 0 || py == 0 || px == s->w - 1 || py == s->h - 1)
					s->border[id] = 1;
				const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
				for (int k = 0; k < 4; k++) {
					int qx = px + dx[k], qy = py + dy[k];
					if (qx < 0 || qy < 0 || qx >= s->w || qy >= s->h)
						continue;
					int q = qy * s->w + qx;
					if (s->label[q] >= 0)
						continue;
					if ((image_u8_row(img, qy)[qx] >= thr) != col)
						continue;
					s->label[q] = id;
					stack[sp++] = q;
				}
			}
		}
	for (int y = 0; y < s->h; y++)
		for (int x = 0; x < s->w; x++) {
			int a = s->label[y * s->w + x];
			if (x + 1 < s->w) {
				int b = s->label[y * s->w + x + 1];
				if (a != b) {
					s->adj[(a * 4096 + b) / 8] |= (uint8_t)(1u << ((a * 4096 + b) % 8));
					s->adj[(b * 4096 + a) / 8] |= (uint8_t)(1u << ((b * 4096 + a) % 8));
				}
			}
			if (y + 1 < s->h) {
				int b = s->label[(y + 1) * s->w + x];
				if (a != b) {
					s->adj[(a * 4096 + b) / 8] |= (uint8_t)(1u << ((a * 4096 + b) % 8));
					s->adj[(b * 4096 + a) / 8] |= (uint8_t)(1u << ((b * 4096 + a) % 8));
				}
			}
		}
	free(stack);
}

static int seg_adj(const struct seg *s, int a, int b)
{
	return (s->adj[(a * 4096 + b) / 8] >> ((a * 4096 + b) % 8)) & 1;
}

static void seg_free(struct seg *s)
{
	free(s->label);
	free(s->adj);
}

static int cmp_desc(const void *a, const void *b)
{
	return strcmp((const char *)b, (const char *)a);
}

struct leaf_sum {
	double cx, cy, cw, bx, by, bw;
};

/* Canonical string of node r below parent p; accumulates leaf truth. */
static void canon(const struct seg *s, int r, int p, int depth, char *out, struct leaf_sum *ls)
{
	char kids[64][128];
	int n = 0;
	for (int q = 0; q < s->n; q++)
		if (q != p && q != r && seg_adj(s, r, q)) {
			assert_true(n < 64);
			canon(s, q, r, depth + 1, kids[n++], ls);
		}
	qsort(kids, (size_t)n, sizeof kids[0], cmp_desc);
	out[0] = (char)('0' + depth);
	out[1] = 0;
	for (int i = 0; i < n; i++)
		strcat(out, kids[i]);
	if (n == 0) {
		double w = PI * (depth + 0.5) * (depth + 0.5);
		double mx = 0.5 * (s->x0[r] + s->x1[r]), my = 0.5 * (s->y0[r] + s->y1[r]);
		ls->cx += w * mx;
		ls->cy += w * my;
		ls->cw += w;
		if (!s->colour[r]) {
			ls->bx += w * mx;
			ls->by += w * my;
			ls->bw += w;
		}
	}
}

/* Decodes the symbol drawn around (cx, cy): the ring is the region at the
 * card-local point (0, -0.43) rotated; the root is its neighbour inside it. */
static void decode(const struct image_u8 *img, float size, float angle, float cx, float cy,
		   char *tree, float *x, float *y, float *a)
{
	struct seg *s = calloc(1, sizeof *s);
	assert_non_null(s);
	seg_run(s, img, 128);
	float lx = 0.0f, ly = -0.43f * size;
	int px = (int)lrintf(cx + lx * cosf(angle) - ly * sinf(angle));
	int py = (int)lrintf(cy + lx * sinf(angle) + ly * cosf(angle));
	int ring = s->label[py * s->w + px];
	int root = -1;
	for (int q = 0; q < s->n; q++)
		if (q != ring && seg_adj(s, ring, q) && s->x0[q] > s->x0[ring] &&
		    s->x1[q] < s->x1[ring] && s->y0[q] > s->y0[ring] && s->y1[q] < s->y1[ring])
			root = q;
	assert_true(root >= 0);
	struct leaf_sum ls = {0};
	tree[0] = s->colour[root] ? 'w' : 'b';
	canon(s, root, ring, 0, tree + 1, &ls);
	*x = (float)(ls.cx / ls.cw);
	*y = (float)(ls.cy / ls.cw);
	*a = render_wrap_angle(
		(float)(atan2(*y - ls.by / ls.bw, *x - ls.bx / ls.bw) - PI / 2));
	seg_free(s);
	free(s);
}

static float angle_diff(float a, float b)
{
	float d = fmodf(fabsf(a - b), (float)(2 * PI));
	return d > (float)PI ? (float)(2 * PI) - d : d;
}

/* ---- tests -------------------------------------------------------------- */

static void test_layout_errors(void **state)
{
	(void)state;
	struct render_layout l;
	assert_int_equal(render_layout_tree(NULL, &l), ERR_FORMAT);
	assert_int_equal(render_layout_tree("", &l), ERR_FORMAT);
	assert_int_equal(render_layout_tree("w0", &l), ERR_FORMAT);
	assert_int_equal(render_layout_tree("x0121", &l), ERR_FORMAT);
	assert_int_equal(render_layout_tree("w0131", &l), ERR_FORMAT);
	assert_int_equal(render_layout_tree("w012a", &l), ERR_FORMAT);
	assert_int_equal(render_layout_tree("w01231", &l), ERR_UNSUPPORTED);
	char big[RENDER_MAX_NODES + 8];
	big[0] = 'w';
	big[1] = '0';
	for (int i = 2; i < RENDER_MAX_NODES + 4; i++)
		big[i] = '1';
	big[RENDER_MAX_NODES + 4] = 0;
	assert_int_equal(render_layout_tree(big, &l), ERR_RANGE);
	assert_int_equal(render_layout_tree("0121", &l), 0);
	assert_int_equal(l.colour, 'w');
	assert_int_equal(l.n_nodes, 4);
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, 32, 32), 0);
	assert_int_equal(render_symbol("w0121", 0.0f, 0, 16, 16, &img, NULL), ERR_RANGE);
	assert_int_equal(render_symbol("w0121", NAN, 0, 16, 16, &img, NULL), ERR_RANGE);
	assert_int_equal(render_symbol("w0121", 20.0f, INFINITY, 16, 16, &img, NULL), ERR_RANGE);
	image_u8_free(&img);
}

/* A child's outline as capsules: a dot is one zero-length segment. */
static int child_segments(const struct render_layout *l, const struct render_shape *s,
			  float seg[][4])
{
	if (s->n_seg == 0) {
		seg[0][0] = seg[0][2] = s->x;
		seg[0][1] = seg[0][3] = s->y;
		return 1;
	}
	for (int i = 0; i < s->n_seg; i++) {
		const struct render_segment *g = &l->segs[s->seg0 + i];
		seg[i][0] = g->x0;
		seg[i][1] = g->y0;
		seg[i][2] = g->x1;
		seg[i][3] = g->y1;
	}
	return s->n_seg;
}

static float pt_seg(float px, float py, const float *g)
{
	float vx = g[2] - g[0], vy = g[3] - g[1], wx = px - g[0], wy = py - g[1];
	float vv = vx * vx + vy * vy, t = vv > 0 ? (wx * vx + wy * vy) / vv : 0.0f;
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	return hypotf(wx - t * vx, wy - t * vy);
}

/* Distance between two children's outlines (segments never cross here). */
static float child_gap(const struct render_layout *l, const struct render_shape *a,
		       const struct render_shape *b)
{
	float sa[RENDER_MAX_SEGMENTS][4], sb[RENDER_MAX_SEGMENTS][4];
	int na = child_segments(l, a, sa), nb = child_segments(l, b, sb);
	float m = 1e30f;
	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++) {
			float d[4] = {pt_seg(sa[i][0], sa[i][1], sb[j]), pt_seg(sa[i][2], sa[i][3], sb[j]),
				      pt_seg(sb[j][0], sb[j][1], sa[i]), pt_seg(sb[j][2], sb[j][3], sa[i])};
			for (int k = 0; k < 4; k++)
				if (d[k] < m)
					m = d[k];
		}
	return m - a->radius - b->radius;
}

/* Is (px, py) inside the blob (union of its capsules)? */
static int in_blob(const struct render_layout *l, const struct render_shape *s, float px, float py)
{
	float seg[RENDER_MAX_SEGMENTS][4];
	int n = child_segments(l, s, seg);
	for (int i = 0; i < n; i++)
		if (pt_seg(px, py, seg[i]) <= s->radius)
			return 1;
	return 0;
}

static void test_layout_canonical_and_nested(void **state)
{
	(void)state;
	struct render_layout a, b;
	assert_int_equal(render_layout_tree("w0121221", &a), 0);
	assert_int_equal(render_layout_tree("w0122121", &b), 0);
	assert_int_equal(a.n_shapes, b.n_shapes);
	assert_memory_equal(a.shapes, b.shapes, sizeof a.shapes[0] * (size_t)a.n_shapes);
	/* The b variant is the same drawing, inverted. */
	assert_int_equal(render_layout_tree("b0121221", &b), 0);
	assert_int_equal(a.n_shapes, b.n_shapes);
	for (int i = 0; i < a.n_shapes; i++) {
		assert_true(a.shapes[i].x == b.shapes[i].x && a.shapes[i].y == b.shapes[i].y);
		assert_int_equal(a.shapes[i].white, !b.shapes[i].white);
	}
	/* Every shape lies inside its parent with a margin, siblings keep
	 * the gap, walls around holes are at least 0.45 feature. */
	for (size_t t = 0; t < sizeof trees / sizeof trees[0]; t++) {
		struct render_layout l;
		assert_int_equal(render_layout_tree(trees[t], &l), 0);
		float f = l.cell;
		assert_true(f > 0.05f && f < 0.2f);
		int n_leaves = 0;
		for (int i = 3; i < l.n_shapes; i++) {
			const struct render_shape *s = &l.shapes[i];
			n_leaves += s->leaf;
			assert_true(fabsf(s->x) + s->hw < 0.405f - 0.5f * f);
			assert_true(fabsf(s->y) + s->hh < 0.405f - 0.5f * f);
			if (s->depth != RENDER_CHILD)
				continue;
			for (int j = s->end; j < l.n_shapes; j++)
				if (l.shapes[j].depth == RENDER_CHILD)
					assert_true(child_gap(&l, s, &l.shapes[j]) > 0.55f * f);
			for (int h = i + 1; h < s->end; h++) {
				const struct render_shape *hole = &l.shapes[h];
				assert_int_equal(hole->depth, RENDER_HOLE);
				assert_int_equal(hole->white, !s->white);
				for (int k = 0; k < 16; k++) {
					float an = (float)k * (float)PI / 8.0f;
					float r = hole->radius + 0.45f * f;
					assert_true(in_blob(&l, s, hole->x + r * cosf(an),
							    hole->y + r * sinf(an)));
				}
				for (int h2 = h + 1; h2 < s->end; h2++)
					assert_true(hypotf(hole->x - l.shapes[h2].x,
							   hole->y - l.shapes[h2].y) >
						    2 * hole->radius + 0.45f * f);
			}
		}
		assert_int_equal(n_leaves, l.n_leaves);
	}
}

static void test_decode_and_truth(void **state)
{
	(void)state;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, 260, 260), 0);
	uint32_t rng = 12345;
	float worst_pos = 0, worst_ang = 0;
	for (size_t t = 0; t < sizeof trees / sizeof trees[0]; t++) {
		for (int k = 0; k < 6; k++) {
			float size = 90.0f + (float)(test_rand(&rng) % 120);
			float angle = (float)(test_rand(&rng) % 6283) * 0.001f;
			float cx = 130.0f + (float)(test_rand(&rng) % 100) * 0.01f;
			float cy = 129.5f + (float)(test_rand(&rng) % 100) * 0.01f;
			memset(img.data, 90, (size_t)img.stride * (size_t)img.height);
			assert_int_equal(render_symbol(trees[t], size, angle, cx, cy, &img, NULL), 0);
			char want[128], got[128];
			snprintf(want, sizeof want, "%s", trees[t]);
			float tx, ty, ta, dx, dy, da;
			assert_int_equal(render_symbol_truth(trees[t], size, angle, cx, cy, &tx, &ty, &ta),
					 0);
			decode(&img, size, angle, cx, cy, got, &dx, &dy, &da);
			assert_string_equal(got, want);
			float pe = hypotf(dx - tx, dy - ty), ae = angle_diff(da, ta);
			if (pe > worst_pos)
				worst_pos = pe;
			if (ae > worst_ang)
				worst_ang = ae;
			assert_true(pe < 0.5f);
			assert_true(ae < 1.5f * (float)PI / 180.0f);
		}
	}
	print_message("worst truth vs decoded: %.3f px, %.3f deg\n", (double)worst_pos,
		      (double)worst_ang * 180.0 / PI);
	image_u8_free(&img);
}

static void test_rotation_convention(void **state)
{
	(void)state;
	const char *t = "w01222222221111";
	float x0, y0, a0, x1, y1, a1;
	struct render_layout l;
	assert_int_equal(render_layout_tree(t, &l), 0);
	/* Dots (the black leaves of a w tree) are at the top: angle near 0. */
	assert_true(l.black_y < l.centre_y);
	assert_true(angle_diff(l.angle0, 0.0f) < 0.3f);
	assert_int_equal(render_symbol_truth(t, 100, 0.0f, 50, 50, &x0, &y0, &a0), 0);
	for (int k = 1; k < 12; k++) {
		float th = (float)k * 0.5f;
		assert_int_equal(render_symbol_truth(t, 100, th, 50, 50, &x1, &y1, &a1), 0);
		assert_true(angle_diff(a1, render_wrap_angle(a0 + th)) < 1e-4f);
	}
	/* A quarter turn clockwise on screen: the black leaves move from above
	 * the centre to its right, seen in the pixels themselves. */
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, 200, 200), 0);
	memset(img.data, 90, (size_t)img.stride * 200);
	assert_int_equal(render_symbol(t, 150, (float)(PI / 2), 100, 100, &img, NULL), 0);
	char got[64];
	float dx, dy, da;
	decode(&img, 150, (float)(PI / 2), 100, 100, got, &dx, &dy, &da);
	assert_true(angle_diff(da, (float)(PI / 2) + l.angle0) < 0.03f);
	image_u8_free(&img);
	/* b trees: same layout, colours swapped; black leaves are the holes. */
	assert_int_equal(render_layout_tree("b01222222221111", &l), 0);
	assert_true(l.black_y > l.centre_y);
}

static void test_clip_antialias_background(void **state)
{
	(void)state;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, 120, 90), 0);
	memset(img.data, 77, (size_t)img.stride * 90);
	/* Partly outside every edge: must not crash, must clip. */
	assert_int_equal(render_symbol("w0122212111", 200, 0.7f, 5, 5, &img, NULL), 0);
	assert_int_equal(render_symbol("b0122212111", 100, 2.0f, 118, 88, &img, NULL), 0);
	assert_int_equal(render_symbol("w0122212111", 40, 0.0f, -500, -500, &img, NULL), 0);
	memset(img.data, 77, (size_t)img.stride * 90);
	assert_int_equal(render_symbol("w0122212111", 50, 0.3f, 60, 45, &img, NULL), 0);
	/* Outside the card's circumcircle nothing changes. */
	for (int y = 0; y < 90; y++)
		for (int x = 0; x < 120; x++)
			if (hypotf((float)x - 60, (float)y - 45) > 50 * 0.7072f + 1)
				assert_int_equal(image_u8_row(&img, y)[x], 77);
	int mid = 0, black = 0, white = 0;
	for (int y = 0; y < 90; y++)
		for (int x = 0; x < 120; x++) {
			int v = image_u8_row(&img, y)[x];
			mid += v > 10 && v < 245 && v != 77;
			black += v == 0;
			white += v == 255;
		}
	assert_true(mid > 50);
	assert_true(black > 200);
	assert_true(white > 200);
	/* Custom levels. */
	struct render_options opt;
	render_options_default(&opt);
	opt.black = 40;
	opt.white = 200;
	opt.supersample = 2;
	memset(img.data, 77, (size_t)img.stride * 90);
	assert_int_equal(render_symbol("w0122212111", 50, 0.3f, 60, 45, &img, &opt), 0);
	for (int y = 0; y < 90; y++)
		for (int x = 0; x < 120; x++) {
			int v = image_u8_row(&img, y)[x];
			assert_true(v >= 40 && v <= 200);
		}
	image_u8_free(&img);
	assert_true(fabsf(render_wrap_angle(-0.5f) - (float)(2 * PI - 0.5)) < 1e-5f);
	assert_true(render_wrap_angle(7.0f) < (float)(2 * PI));
}

static void test_own_sets_decode(void **state)
{
	(void)state;
	const char *paths[] = {"fiducials/tabletrack.trees", "fiducials/tabletrack-small.trees"};
	int tested = 0;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, 120, 120), 0);
	for (int p = 0; p < 2; p++) {
		FILE *f = fopen(paths[p], "r");
		if (!f)
			continue;
		char tok[128];
		int id = 0;
		while (fscanf(f, "%127s", tok) == 1) {
			if (id++ % 7)
				continue;
			memset(img.data, 90, (size_t)img.stride * 120);
			float ang = (float)id * 0.37f;
			assert_int_equal(render_symbol(tok, 100, ang, 60, 60, &img, NULL), 0);
			char got[128];
			float dx, dy, da, tx, ty, ta;
			decode(&img, 100, ang, 60, 60, got, &dx, &dy, &da);
			assert_string_equal(got, tok);
			render_symbol_truth(tok, 100, ang, 60, 60, &tx, &ty, &ta);
			assert_true(hypotf(dx - tx, dy - ty) < 0.6f);
			/* Small cards (44 px) still give the tree back when sharp. */
			memset(img.data, 90, (size_t)img.stride * 120);
			assert_int_equal(render_symbol(tok, 44, ang, 60, 60, &img, NULL), 0);
			decode(&img, 44, ang, 60, 60, got, &dx, &dy, &da);
			assert_string_equal(got, tok);
			tested++;
		}
		fclose(f);
	}
	image_u8_free(&img);
	if (!tested)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_errors),
		cmocka_unit_test(test_layout_canonical_and_nested),
		cmocka_unit_test(test_decode_and_truth),
		cmocka_unit_test(test_rotation_convention),
		cmocka_unit_test(test_clip_antialias_background),
		cmocka_unit_test(test_own_sets_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
