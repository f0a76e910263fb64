/* Threshold room: the fast CPU paths against brute-force references, the bit
 * packing, the object API, and (where a GPU works) CUDA against the CPU. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda/bernsen_cuda.h"
#include "../src/core/err.h"
#include "../src/fiducial/render.h"
#include "../src/fiducial/trees.h"
#include "../src/threshold/closing.h"
#include "../src/threshold/deblur.h"
#include "../src/threshold/upsample.h"
#include "../src/threshold/threshold.h"
#include "../src/threshold/threshold_cpu.h"
#include "common/testutil.h"

static const int sizes[][2] = {{1, 1},   {1, 37},  {37, 1},  {65, 3},  {3, 70},  {64, 64}, {97, 41},
				{130, 20}, {200, 7}, {31, 9},  {32, 5},  {33, 34}, {255, 3}};
#define N_SIZES ((int)(sizeof sizes / sizeof sizes[0]))

/* The kernels' instruction sets; each test runs every one this CPU has. */
static const char *const isas[] = {"avx2", "sse2", "scalar"};
#define N_ISAS ((int)(sizeof isas / sizeof isas[0]))

/* Sets isas[i] on c; false when this CPU or build lacks it. */
static bool use_isa(struct threshold_cpu *c, int i)
{
	int e = threshold_cpu_set_isa(c, isas[i]);
	if (e == 0)
		assert_string_equal(threshold_cpu_isa(c), isas[i]);
	else
		assert_int_equal(e, ERR_UNSUPPORTED);
	return e == 0;
}

/* Random content of several kinds: full-range noise, low-contrast noise
 * around a random level (where the gate decides), and a gradient with noise. */
static void fill_frame(struct image_u8 *img, uint32_t *rng, int kind)
{
	if (kind == 0) {
		test_fill_random(img, rng, 0, 255);
	} else if (kind == 1) {
		int base = (int)(test_rand(rng) % 256), span = 1 + (int)(test_rand(rng) % 48);
		int lo = base - span / 2 < 0 ? 0 : base - span / 2, hi = lo + span > 255 ? 255 : lo + span;
		test_fill_random(img, rng, lo, hi);
	} else {
		for (int y = 0; y < img->height; y++)
			for (int x = 0; x < img->width; x++) {
				int v = (x * 255) / (img->width + 1) + (int)(test_rand(rng) % 9) - 4;
				image_u8_row(img, y)[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
			}
	}
}

/* Window lo/hi the slow, obvious way. */
static void ref_window(const struct image_u8 *in, int r, uint8_t *lo, uint8_t *hi)
{
	int w = in->width, h = in->height;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			int a = 255, b = 0;
			for (int j = y - r; j <= y + r; j++)
				for (int i = x - r; i <= x + r; i++) {
					if (j < 0 || j >= h || i < 0 || i >= w)
						continue;
					int v = image_u8_row(in, j)[i];
					a = v < a ? v : a;
					b = v > b ? v : b;
				}
			lo[y * w + x] = (uint8_t)a;
			hi[y * w + x] = (uint8_t)b;
		}
}

static int ref_pixel(int lo, int hi, int v, int gate)
{
	int t = (lo + hi) / 2;
	if (hi - lo < gate)
		t = t < 128 ? 255 : 0;
	return v > t ? 255 : 0;
}

/* Compares out with the reference from lo/hi; returns the first bad index or -1. */
static int check_bernsen(const struct image_u8 *in, const uint8_t *lo, const uint8_t *hi, int gate,
			 const struct image_u8 *out)
{
	for (int y = 0; y < in->height; y++)
		for (int x = 0; x < in->width; x++) {
			int i = y * in->width + x;
			if (image_u8_row(out, y)[x] != ref_pixel(lo[i], hi[i], image_u8_row(in, y)[x], gate))
				return i;
		}
	return -1;
}

static void check_mask_equals_image(const struct bitmask *m, const struct image_u8 *img)
{
	for (int y = 0; y < img->height; y++) {
		for (int x = 0; x < img->width; x++)
			assert_int_equal(bitmask_get(m, x, y), image_u8_row(img, y)[x] ? 1 : 0);
		int used = img->width & 63;
		if (used)
			assert_int_equal(bitmask_row(m, y)[img->width / 64] >> used, 0);
	}
}

static void test_bernsen_matches_brute_force(void **state)
{
	(void)state;
	static const int gates[] = {0, 1, 2, 31, 32, 33, 64, 127, 128, 200, 254, 255};
	uint32_t rng = 12345;
	for (int s = 0; s < N_SIZES; s++) {
		int w = sizes[s][0], h = sizes[s][1];
		struct image_u8 in, out;
		struct bitmask m;
		assert_int_equal(image_u8_alloc(&in, w, h), 0);
		assert_int_equal(image_u8_alloc(&out, w, h), 0);
		assert_int_equal(bitmask_alloc(&m, w, h), 0);
		int err = 0;
		struct threshold_cpu *c = threshold_cpu_create(w, h, &err);
		assert_non_null(c);
		uint8_t *lo = malloc((size_t)w * h), *hi = malloc((size_t)w * h);
		assert_non_null(lo);
		assert_non_null(hi);
		for (int r = 1; r <= THRESHOLD_MAX_RADIUS; r++) {
			fill_frame(&in, &rng, (r + s) % 3);
			ref_window(&in, r, lo, hi);
			for (int ii = 0; ii < N_ISAS; ii++) {
				if (!use_isa(c, ii))
					continue;
				bool all_gates = r == 1 || r == 6 || r == 32 || (r == 13 && s == N_SIZES - 1);
				int n_g = all_gates ? 256 : (int)(sizeof gates / sizeof gates[0]);
				for (int gi = 0; gi < n_g; gi++) {
					int gate = all_gates ? gi : gates[gi];
					threshold_cpu_bernsen(c, &in, r, gate, &out, NULL);
					int bad = check_bernsen(&in, lo, hi, gate, &out);
					if (bad >= 0)
						fail_msg("%s %dx%d r=%d gate=%d: pixel (%d,%d) differs", isas[ii], w, h,
							 r, gate, bad % w, bad / w);
					if (gi % 5 == 0) {
						memset(m.bits, 0xa5, (size_t)m.stride_words * (size_t)h * 8);
						threshold_cpu_bernsen(c, &in, r, gate, NULL, &m);
						check_mask_equals_image(&m, &out);
					}
				}
			}
		}
		bernsen_cpu(&in, 32, 32, &out); /* the one-shot wrapper */
		assert_int_equal(check_bernsen(&in, lo, hi, 32, &out), -1);
		free(lo);
		free(hi);
		threshold_cpu_destroy(c);
		bitmask_free(&m);
		image_u8_free(&out);
		image_u8_free(&in);
	}
}

/* Window sums the slow, obvious way (cropped at the border). */
static void ref_box(const struct image_u8 *in, int m, int32_t *sum, int32_t *cnt)
{
	int w = in->width, h = in->height;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			int32_t s = 0, n = 0;
			for (int j = y - m; j <= y + m; j++)
				for (int i = x - m; i <= x + m; i++) {
					if (j < 0 || j >= h || i < 0 || i >= w)
						continue;
					s += image_u8_row(in, j)[i];
					n++;
				}
			sum[y * w + x] = s;
			cnt[y * w + x] = n;
		}
}

/* threshold.h's rules, written out in 64-bit arithmetic. */
static int ref_mean_pixel(int mode, int lo, int hi, int v, int gate, int64_t s, int64_t n, int bias)
{
	bool mw = 100 * (int64_t)v * n > (int64_t)(100 - bias) * s;
	bool bw = ref_pixel(lo, hi, v, gate) != 0, steep = hi - lo >= gate;
	bool white;
	if (mode == THRESHOLD_MEAN)
		white = mw && s >= (int64_t)gate * n;
	else if (mode == THRESHOLD_GATED)
		white = steep ? mw : bw;
	else if (mode == THRESHOLD_EITHER)
		white = steep ? (mw || bw) : bw;
	else
		white = steep ? (mw && bw) : bw;
	return white ? 255 : 0;
}

static void test_mean_modes_match_brute_force(void **state)
{
	(void)state;
	static const int mradii[] = {1, 2, 3, 8, 16, 31, 63};
	static const int biases[] = {0, 1, 16, 50};
	static const int gates[] = {0, 1, 32, 128, 255};
	static const int modes[] = {THRESHOLD_MEAN, THRESHOLD_GATED, THRESHOLD_EITHER, THRESHOLD_BOTH};
	uint32_t rng = 777;
	for (int si = 0; si < N_SIZES; si++) {
		int w = sizes[si][0], h = sizes[si][1];
		struct image_u8 in, out;
		struct bitmask m;
		assert_int_equal(image_u8_alloc(&in, w, h), 0);
		assert_int_equal(image_u8_alloc(&out, w, h), 0);
		assert_int_equal(bitmask_alloc(&m, w, h), 0);
		int err = 0;
		struct threshold_cpu *c = threshold_cpu_create(w, h, &err);
		assert_non_null(c);
		uint8_t *lo = malloc((size_t)w * h), *hi = malloc((size_t)w * h);
		int32_t *sum = malloc(sizeof(int32_t) * (size_t)w * h), *cnt = malloc(sizeof(int32_t) * (size_t)w * h);
		assert_true(lo && hi && sum && cnt);
		for (size_t mi = 0; mi < sizeof mradii / sizeof mradii[0]; mi++) {
			int mr = mradii[mi], r = 1 + (int)(test_rand(&rng) % THRESHOLD_MAX_RADIUS);
			fill_frame(&in, &rng, (int)(mi + (size_t)si) % 3);
			ref_window(&in, r, lo, hi);
			ref_box(&in, mr, sum, cnt);
			for (int ii = 0; ii < N_ISAS; ii++) {
				if (!use_isa(c, ii))
					continue;
				for (size_t mo = 0; mo < 4; mo++)
					for (size_t bi = 0; bi < 4; bi++)
						for (size_t gi = 0; gi < 5; gi++) {
							int mode = modes[mo], bias = biases[bi], gate = gates[gi];
							threshold_cpu_mean(c, &in, mode, r, gate, mr, bias, &out, NULL);
							for (int y = 0; y < h; y++)
								for (int x = 0; x < w; x++) {
									int i = y * w + x;
									int want = ref_mean_pixel(
									    mode, lo[i], hi[i], image_u8_row(&in, y)[x], gate,
									    sum[i], cnt[i], bias);
									if (image_u8_row(&out, y)[x] != want)
										fail_msg("%s %dx%d mode %d r=%d gate=%d m=%d "
											 "bias=%d: pixel (%d,%d) differs",
											 isas[ii], w, h, mode, r, gate, mr,
											 bias, x, y);
								}
							if ((bi + gi) % 3 == 0) {
								memset(m.bits, 0xa5, (size_t)m.stride_words * (size_t)h * 8);
								threshold_cpu_mean(c, &in, mode, r, gate, mr, bias, NULL, &m);
								check_mask_equals_image(&m, &out);
							}
						}
			}
		}
		free(lo);
		free(hi);
		free(sum);
		free(cnt);
		threshold_cpu_destroy(c);
		bitmask_free(&m);
		image_u8_free(&out);
		image_u8_free(&in);
	}
}

/* The largest window sums stay exact: a white frame of 255 with the widest window. */
static void test_mean_extremes(void **state)
{
	(void)state;
	struct image_u8 in, out;
	assert_int_equal(image_u8_alloc(&in, 300, 200), 0);
	assert_int_equal(image_u8_alloc(&out, 300, 200), 0);
	for (int y = 0; y < 200; y++)
		memset(image_u8_row(&in, y), 255, 300);
	/* v * n == S: white only while the bias is above 0 */
	threshold_mean_cpu(&in, THRESHOLD_MEAN, 6, 32, 63, 1, &out);
	for (int y = 0; y < 200; y++)
		for (int x = 0; x < 300; x++)
			assert_int_equal(image_u8_row(&out, y)[x], 255);
	threshold_mean_cpu(&in, THRESHOLD_MEAN, 6, 32, 63, 0, &out);
	for (int y = 0; y < 200; y++)
		for (int x = 0; x < 300; x++)
			assert_int_equal(image_u8_row(&out, y)[x], 0);
	/* a dark flat frame: black in every mode (MEAN by the mean floor, the others by the flat rule) */
	for (int y = 0; y < 200; y++)
		memset(image_u8_row(&in, y), 20, 300);
	for (int mode = THRESHOLD_MEAN; mode <= THRESHOLD_BOTH; mode++) {
		threshold_mean_cpu(&in, mode, 6, 32, 16, 16, &out);
		for (int y = 0; y < 200; y++)
			for (int x = 0; x < 300; x++)
				assert_int_equal(image_u8_row(&out, y)[x], 0);
	}
	image_u8_free(&in);
	image_u8_free(&out);
}

/* Window sum, sum of squares and count the slow way, at one pixel. */
static void ref_box_sq(const struct image_u8 *in, int m, int x, int y, int64_t *s, int64_t *q, int64_t *n)
{
	*s = *q = *n = 0;
	for (int j = y - m; j <= y + m; j++)
		for (int i = x - m; i <= x + m; i++) {
			if (j < 0 || j >= in->height || i < 0 || i >= in->width)
				continue;
			int v = image_u8_row(in, j)[i];
			*s += v;
			*q += v * v;
			(*n)++;
		}
}

/* floor(sqrt(v)) by bisection: no floating point, so it checks the
 * header's claim that the double square root is exact. */
static int64_t isqrt_ref(int64_t v)
{
	int64_t lo = 0, hi = 1 << 22;
	while (lo < hi) {
		int64_t mid = (lo + hi + 1) / 2;
		if (mid * mid <= v)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* threshold_sauvola_cpu()'s rule as threshold.h writes it. */
static int ref_sauvola_pixel(int v, int64_t s, int64_t q, int64_t n, int k, int range, int gate)
{
	int64_t d = isqrt_ref(n * q - s * s), b = 100 * n * v - (int64_t)(100 - k) * s;
	return b > 0 && s >= (int64_t)gate * n && n * range * b > (int64_t)k * s * d ? 255 : 0;
}

static void test_sauvola_matches_brute_force(void **state)
{
	(void)state;
	static const int mradii[] = {1, 2, 3, 8, 16, 31, 63};
	static const int ks[] = {0, 1, 20, 50, 100};
	static const int ranges[] = {1, 64, 128, 255};
	static const int gates[] = {0, 32, 255};
	uint32_t rng = 4242;
	for (int si = 0; si < N_SIZES; si++) {
		int w = sizes[si][0], h = sizes[si][1];
		struct image_u8 in, out;
		struct bitmask m;
		assert_int_equal(image_u8_alloc(&in, w, h), 0);
		assert_int_equal(image_u8_alloc(&out, w, h), 0);
		assert_int_equal(bitmask_alloc(&m, w, h), 0);
		int err = 0;
		struct threshold_cpu *c = threshold_cpu_create(w, h, &err);
		assert_non_null(c);
		int64_t *box = malloc(sizeof(int64_t) * 3 * (size_t)w * h);
		assert_non_null(box);
		for (size_t mi = 0; mi < sizeof mradii / sizeof mradii[0]; mi++) {
			int mr = mradii[mi];
			fill_frame(&in, &rng, (int)(mi + (size_t)si) % 3);
			for (int y = 0; y < h; y++)
				for (int x = 0; x < w; x++) {
					int64_t *b = box + 3 * ((size_t)y * w + x);
					ref_box_sq(&in, mr, x, y, b, b + 1, b + 2);
				}
			for (int ii = 0; ii < N_ISAS; ii++) {
				if (!use_isa(c, ii))
					continue;
				for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
					for (size_t ri = 0; ri < sizeof ranges / sizeof ranges[0]; ri++)
						for (size_t gi = 0; gi < sizeof gates / sizeof gates[0]; gi++) {
							int k = ks[ki], range = ranges[ri], gate = gates[gi];
							threshold_cpu_sauvola(c, &in, mr, k, range, gate, &out, NULL);
							for (int y = 0; y < h; y++)
								for (int x = 0; x < w; x++) {
									const int64_t *b = box + 3 * ((size_t)y * w + x);
									int want = ref_sauvola_pixel(
									    image_u8_row(&in, y)[x], b[0], b[1], b[2], k,
									    range, gate);
									if (image_u8_row(&out, y)[x] != want)
										fail_msg("%s %dx%d m=%d k=%d R=%d gate=%d: "
											 "pixel (%d,%d) differs",
											 isas[ii], w, h, mr, k, range, gate, x,
											 y);
								}
							if ((ki + ri + gi) % 3 == 0) {
								memset(m.bits, 0xa5, (size_t)m.stride_words * (size_t)h * 8);
								threshold_cpu_sauvola(c, &in, mr, k, range, gate, NULL, &m);
								check_mask_equals_image(&m, &out);
							}
						}
			}
		}
		free(box);
		threshold_cpu_destroy(c);
		bitmask_free(&m);
		image_u8_free(&out);
		image_u8_free(&in);
	}
}

static int count_white(const struct image_u8 *img, int x0, int x1, int y0, int y1)
{
	int n = 0;
	for (int y = y0; y < y1; y++)
		for (int x = x0; x < x1; x++)
			n += image_u8_row(img, y)[x] != 0;
	return n;
}

/* Flat frames, a step, a checkerboard of 0 and 255 (the largest deviation)
 * as wide as a 4K frame with the widest window, and the clamped settings. */
static void test_sauvola_edge_cases(void **state)
{
	(void)state;
	const int w = 3840, h = 140;
	struct image_u8 in, out;
	assert_int_equal(image_u8_alloc(&in, w, h), 0);
	assert_int_equal(image_u8_alloc(&out, w, h), 0);
	/* flat: D = 0 and B = K n v, so white iff K > 0, v > 0 and the mean reaches gate */
	for (int y = 0; y < h; y++)
		memset(image_u8_row(&in, y), 255, (size_t)w);
	threshold_sauvola_cpu(&in, 63, 1, 255, 255, &out);
	assert_int_equal(count_white(&out, 0, w, 0, h), w * h);
	threshold_sauvola_cpu(&in, 63, 0, 128, 32, &out);
	assert_int_equal(count_white(&out, 0, w, 0, h), 0);
	for (int y = 0; y < h; y++)
		memset(image_u8_row(&in, y), 40, (size_t)w);
	threshold_sauvola_cpu(&in, 16, 20, 128, 40, &out);
	assert_int_equal(count_white(&out, 0, w, 0, h), w * h);
	threshold_sauvola_cpu(&in, 16, 20, 128, 41, &out); /* darker on average than gate: black */
	assert_int_equal(count_white(&out, 0, w, 0, h), 0);
	/* a step 30 | 220: each side keeps its colour up to the edge (the flat
	 * dark side by the gate: without it a flat window is white) */
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			image_u8_row(&in, y)[x] = x < 1000 ? 30 : 220;
	threshold_sauvola_cpu(&in, 16, 20, 128, 32, &out);
	assert_int_equal(count_white(&out, 0, 1000, 0, h), 0);
	assert_int_equal(count_white(&out, 1000, w, 0, h), (w - 1000) * h);
	threshold_sauvola_cpu(&in, 16, 20, 128, 0, &out);
	assert_int_equal(count_white(&out, 0, 900, 0, h), 900 * h);
	assert_int_equal(count_white(&out, 984, 1000, 0, h), 0); /* the dark side next to the edge */
	assert_int_equal(count_white(&out, 1000, w, 0, h), (w - 1000) * h);
	/* the largest sums and deviation: 0/255 checkerboard, m = 63, against
	 * the reference at the borders, the corners and a stripe inside */
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			image_u8_row(&in, y)[x] = (uint8_t)((x + y) & 1 ? 255 : 0);
	static const int params[][3] = {{100, 1, 0}, {100, 255, 0}, {50, 128, 32}, {0, 128, 0}, {20, 200, 128}};
	for (size_t p = 0; p < sizeof params / sizeof params[0]; p++) {
		int k = params[p][0], range = params[p][1], gate = params[p][2];
		threshold_sauvola_cpu(&in, 63, k, range, gate, &out);
		for (int y = 0; y < h; y += 3)
			for (int x = 0; x < w; x++) {
				if (x > 70 && x < w - 70 && (x < 1900 || x > 1910))
					continue;
				int64_t s, q, n;
				ref_box_sq(&in, 63, x, y, &s, &q, &n);
				int want = ref_sauvola_pixel(image_u8_row(&in, y)[x], s, q, n, k, range, gate);
				if (image_u8_row(&out, y)[x] != want)
					fail_msg("checkerboard k=%d R=%d gate=%d: pixel (%d,%d) differs", k, range, gate,
						 x, y);
			}
	}
	/* out-of-range settings are clamped: k 101 is 100, range 0 is 1, radius 64 is 63 */
	struct image_u8 a;
	assert_int_equal(image_u8_alloc(&a, w, h), 0);
	threshold_sauvola_cpu(&in, 63, 100, 1, 0, &a);
	threshold_sauvola_cpu(&in, 64, 101, 0, -5, &out);
	for (int y = 0; y < h; y++)
		assert_memory_equal(image_u8_row(&a, y), image_u8_row(&out, y), (size_t)w);
	image_u8_free(&a);
	image_u8_free(&in);
	image_u8_free(&out);
}

/* The input may be a view into a larger buffer with a stride past its width. */
static void test_bernsen_on_view(void **state)
{
	(void)state;
	uint32_t rng = 99;
	struct image_u8 big, out, ref;
	assert_int_equal(image_u8_alloc(&big, 300, 90), 0);
	test_fill_random(&big, &rng, 0, 255);
	struct image_u8 view = {.width = 171, .height = 77, .stride = big.stride, .data = big.data + 3 * big.stride + 50};
	struct image_u8 copy;
	assert_int_equal(image_u8_alloc(&copy, 171, 77), 0);
	image_u8_copy(&copy, &view);
	assert_int_equal(image_u8_alloc(&out, 171, 77), 0);
	assert_int_equal(image_u8_alloc(&ref, 171, 77), 0);
	bernsen_cpu(&view, 9, 20, &out);
	bernsen_cpu(&copy, 9, 20, &ref);
	for (int y = 0; y < 77; y++)
		assert_memory_equal(image_u8_row(&out, y), image_u8_row(&ref, y), 171);
	image_u8_free(&big);
	image_u8_free(&copy);
	image_u8_free(&out);
	image_u8_free(&ref);
}

/* Bits of row y past m's width are zero. */
static void assert_row_tail_zero(const struct bitmask *m, int y)
{
	for (int x = m->width; x < m->stride_words * 64; x++)
		assert_int_equal((int)((m->bits[(size_t)y * m->stride_words + x / 64] >> (x % 64)) & 1u), 0);
}

/* m and want hold the same bits, row by row, and m's bits past its width
 * are zero. */
static void assert_masks_equal(const struct bitmask *m, const struct bitmask *want)
{
	for (int y = 0; y < m->height; y++) {
		assert_memory_equal(m->bits + (size_t)y * (size_t)m->stride_words,
				    want->bits + (size_t)y * (size_t)want->stride_words,
				    (size_t)m->stride_words * sizeof *m->bits);
		assert_row_tail_zero(m, y);
	}
}

/* The closing threshold (closing.h) against its rule computed the slow way:
 * D = the max over the square of radius r (cropped at the border), C = the
 * min of D over the same square, white = 100 v > pct C and C >= gate; on
 * every size of the list (a view into a larger image, so the stride
 * differs from the width), random radii, percentages and gates, and
 * random, low-contrast and gradient content; bits past the width zero.
 * Run once for each copy of the row loops (*state: closing_set_isa's
 * name), skipped where this CPU lacks it. */
static void test_closing_matches_brute_force(void **state)
{
	uint32_t rng = 4242;
	int err = 0;
	struct closing *c = closing_create(300, 300, &err);
	assert_non_null(c);
	assert_int_equal(closing_set_isa(c, "neon9"), ERR_UNSUPPORTED);
	if (closing_set_isa(c, *state) != 0) {
		closing_destroy(c);
		skip();
	}
	struct image_u8 big, dil;
	assert_int_equal(image_u8_alloc(&big, 300, 300), 0);
	assert_int_equal(image_u8_alloc(&dil, 300, 300), 0);
	for (int si = 0; si < N_SIZES; si++)
		for (int rep = 0; rep < 6; rep++) {
			const int w = sizes[si][0], h = sizes[si][1];
			struct image_u8 in = {.width = w, .height = h, .stride = big.stride, .data = big.data + 5 * big.stride + 7};
			fill_frame(&in, &rng, rep % 3);
			const int r = rep == 0 ? 1 : rep == 1 ? CLOSING_MAX_RADIUS : 1 + (int)(test_rand(&rng) % 12);
			const int pct = rep == 2 ? 100 : rep == 3 ? 0 : (int)(test_rand(&rng) % 101);
			const int gate = rep == 4 ? 0 : (int)(test_rand(&rng) % 256);
			struct bitmask m;
			assert_int_equal(bitmask_alloc(&m, w, h), 0);
			memset(m.bits, 0xff, (size_t)m.stride_words * (size_t)h * sizeof *m.bits);
			assert_int_equal(closing_process(c, &in, r, pct, gate, &m), 0);
			for (int y = 0; y < h; y++)
				for (int x = 0; x < w; x++) {
					int d = 0;
					for (int yy = y - r < 0 ? 0 : y - r; yy <= y + r && yy < h; yy++)
						for (int xx = x - r < 0 ? 0 : x - r; xx <= x + r && xx < w; xx++)
							d = image_u8_row(&in, yy)[xx] > d ? image_u8_row(&in, yy)[xx] : d;
					image_u8_row(&dil, y)[x] = (uint8_t)d;
				}
			for (int y = 0; y < h; y++) {
				for (int x = 0; x < w; x++) {
					int cl = 255;
					for (int yy = y - r < 0 ? 0 : y - r; yy <= y + r && yy < h; yy++)
						for (int xx = x - r < 0 ? 0 : x - r; xx <= x + r && xx < w; xx++)
							cl = image_u8_row(&dil, yy)[xx] < cl ? image_u8_row(&dil, yy)[xx] : cl;
					const int v = image_u8_row(&in, y)[x];
					assert_int_equal(bitmask_get(&m, x, y), 100 * v > pct * cl && cl >= gate);
				}
				assert_row_tail_zero(&m, y);
			}
			bitmask_free(&m);
		}
	struct bitmask m;
	assert_int_equal(bitmask_alloc(&m, 20, 20), 0);
	struct image_u8 in = {.width = 20, .height = 20, .stride = big.stride, .data = big.data};
	assert_int_equal(closing_process(c, &in, 0, 50, 0, &m), ERR_RANGE);
	assert_int_equal(closing_process(c, &in, CLOSING_MAX_RADIUS + 1, 50, 0, &m), ERR_RANGE);
	assert_int_equal(closing_process(c, &in, 3, 101, 0, &m), ERR_RANGE);
	in.width = 21;
	assert_int_equal(closing_process(c, &in, 3, 50, 0, &m), ERR_SIZE);
	bitmask_free(&m);
	image_u8_free(&big);
	image_u8_free(&dil);
	closing_destroy(c);
	assert_null(closing_create(0, 5, &err));
	assert_int_equal(err, ERR_RANGE);
}

/* Two closing objects (one under test, one the reference) and a 300 x 300
 * image to take views of: the state of the closing tests that compare. */
struct closing_pair {
	struct closing *c, *ref;
	struct image_u8 big;
};

static int pair_setup(void **state)
{
	struct closing_pair *p = calloc(1, sizeof *p);
	int err = 0;
	if (!p)
		return -1;
	p->c = closing_create(300, 300, &err);
	p->ref = closing_create(300, 300, &err);
	*state = p;
	return p->c && p->ref && image_u8_alloc(&p->big, 300, 300) == 0 ? 0 : -1;
}

static int pair_teardown(void **state)
{
	struct closing_pair *p = *state;
	image_u8_free(&p->big);
	closing_destroy(p->c);
	closing_destroy(p->ref);
	free(p);
	return 0;
}

/* closing_again() after closing_process() gives the bits closing_process()
 * gives at the other percentage and gate (a second closing object as the
 * reference), on every size of the list (views into a larger image),
 * random radii, percentages and gates; bits past the width zero. Without
 * a closing held (none yet, a closing_ratio() since, another size) it
 * refuses (ERR_SIZE), as for a mask of another size; a percentage or gate
 * out of range is ERR_RANGE. */
static void test_closing_again(void **state)
{
	const struct closing_pair *pair = *state;
	struct closing *c = pair->c, *ref = pair->ref;
	const struct image_u8 big = pair->big;
	uint32_t rng = 5151;
	struct bitmask m0, m;
	assert_int_equal(bitmask_alloc(&m0, 20, 20), 0);
	struct image_u8 small = {.width = 20, .height = 20, .stride = big.stride, .data = big.data};
	assert_int_equal(closing_again(c, &small, 50, 0, &m0), ERR_SIZE);
	for (int si = 0; si < N_SIZES; si++)
		for (int rep = 0; rep < 4; rep++) {
			const int w = sizes[si][0], h = sizes[si][1];
			struct image_u8 in = {.width = w, .height = h, .stride = big.stride, .data = big.data + 2 * big.stride + 5};
			fill_frame(&in, &rng, rep % 3);
			const int r = 1 + (int)(test_rand(&rng) % 12);
			const int pct = (int)(test_rand(&rng) % 101), pct2 = rep == 3 ? 0 : (int)(test_rand(&rng) % 101);
			const int gate = (int)(test_rand(&rng) % 256), gate2 = rep == 2 ? 0 : (int)(test_rand(&rng) % 256);
			struct bitmask want;
			assert_int_equal(bitmask_alloc(&m, w, h), 0);
			assert_int_equal(bitmask_alloc(&want, w, h), 0);
			assert_int_equal(closing_process(c, &in, r, pct, gate, &m), 0);
			memset(m.bits, 0xff, (size_t)m.stride_words * (size_t)h * sizeof *m.bits);
			assert_int_equal(closing_again(c, &in, pct2, gate2, &m), 0);
			assert_int_equal(closing_process(ref, &in, r, pct2, gate2, &want), 0);
			assert_masks_equal(&m, &want);
			assert_int_equal(closing_again(c, &in, 101, gate2, &m), ERR_RANGE);
			assert_int_equal(closing_again(c, &in, pct2, 256, &m), ERR_RANGE);
			if (w != 20 || h != 20)
				assert_int_equal(closing_again(c, &small, pct2, gate2, &m0), ERR_SIZE);
			bitmask_free(&want);
			bitmask_free(&m);
		}
	assert_int_equal(closing_process(c, &small, 3, 70, 32, &m0), 0);
	assert_int_equal(closing_again(c, &small, 65, 32, &m0), 0);
	assert_int_equal(closing_ratio(c, &small, 3, 16, 32, &m0), 0);
	assert_int_equal(closing_again(c, &small, 65, 32, &m0), ERR_SIZE);
	bitmask_free(&m0);
}

/* closing_median() gives closing_process()'s bits on the 3 x 3 median
 * (median_cpu(), the reference) of its input, on every size of the list
 * (views into a larger image), random radii, percentages and gates and
 * random, low-contrast and gradient content; it leaves no closing for
 * closing_again(); errors as closing_process(). */
static void test_closing_median(void **state)
{
	const struct closing_pair *pair = *state;
	struct closing *c = pair->c, *ref = pair->ref;
	const struct image_u8 big = pair->big;
	uint32_t rng = 6262;
	struct bitmask m0;
	assert_int_equal(bitmask_alloc(&m0, 20, 20), 0);
	const struct image_u8 small = {.width = 20, .height = 20, .stride = big.stride, .data = big.data};
	assert_int_equal(closing_median(c, &small, 3, 70, 32, &m0), ERR_UNSUPPORTED);
	assert_int_equal(closing_median_on(c), 0);
	assert_int_equal(closing_median_on(c), 0);
	bitmask_free(&m0);
	for (int si = 0; si < N_SIZES; si++)
		for (int rep = 0; rep < 3; rep++) {
			const int w = sizes[si][0], h = sizes[si][1];
			struct image_u8 in = {.width = w, .height = h, .stride = big.stride, .data = big.data + 3 * big.stride + 4};
			fill_frame(&in, &rng, rep);
			struct image_u8 med;
			assert_int_equal(image_u8_alloc(&med, w, h), 0);
			median_cpu(&in, 3, &med);
			const int r = 1 + (int)(test_rand(&rng) % 12), pct = (int)(test_rand(&rng) % 101);
			const int gate = (int)(test_rand(&rng) % 256);
			struct bitmask m, want;
			assert_int_equal(bitmask_alloc(&m, w, h), 0);
			assert_int_equal(bitmask_alloc(&want, w, h), 0);
			memset(m.bits, 0xff, (size_t)m.stride_words * (size_t)h * sizeof *m.bits);
			assert_int_equal(closing_median(c, &in, r, pct, gate, &m), 0);
			assert_int_equal(closing_process(ref, &med, r, pct, gate, &want), 0);
			assert_masks_equal(&m, &want);
			assert_int_equal(closing_again(c, &in, pct, gate, &m), ERR_SIZE);
			assert_int_equal(closing_median(c, &in, 0, pct, gate, &m), ERR_RANGE);
			assert_int_equal(closing_median(c, &in, r, 101, gate, &m), ERR_RANGE);
			bitmask_free(&m);
			bitmask_free(&want);
			image_u8_free(&med);
		}
}

/* The ratio rule (closing_ratio(), closing.h) against its rule computed
 * the slow way: lo and hi over the square of radius r (cropped at the
 * border); under the gate Bernsen's flat-area rule, else (v + offset)^2 >
 * (lo + offset) (hi + offset); on every size of the list (a view into a
 * larger image), random radii, offsets and gates (the extremes too), and
 * random, low-contrast and gradient content; bits past the width zero.
 * Once for each copy of the row loops, as above. */
static void test_ratio_matches_brute_force(void **state)
{
	uint32_t rng = 777;
	int err = 0;
	struct closing *c = closing_create(300, 300, &err);
	assert_non_null(c);
	if (closing_set_isa(c, *state) != 0) {
		closing_destroy(c);
		skip();
	}
	struct image_u8 big;
	assert_int_equal(image_u8_alloc(&big, 300, 300), 0);
	for (int si = 0; si < N_SIZES; si++)
		for (int rep = 0; rep < 6; rep++) {
			const int w = sizes[si][0], h = sizes[si][1];
			struct image_u8 in = {.width = w, .height = h, .stride = big.stride, .data = big.data + 3 * big.stride + 9};
			fill_frame(&in, &rng, rep % 3);
			const int r = rep == 0 ? 1 : rep == 1 ? CLOSING_MAX_RADIUS : 1 + (int)(test_rand(&rng) % 12);
			const int offset = rep == 2 ? 0 : rep == 3 ? CLOSING_MAX_OFFSET : (int)(test_rand(&rng) % 65);
			const int gate = rep == 4 ? 0 : rep == 5 ? 255 : (int)(test_rand(&rng) % 256);
			struct bitmask m;
			assert_int_equal(bitmask_alloc(&m, w, h), 0);
			memset(m.bits, 0xff, (size_t)m.stride_words * (size_t)h * sizeof *m.bits);
			assert_int_equal(closing_ratio(c, &in, r, offset, gate, &m), 0);
			for (int y = 0; y < h; y++) {
				for (int x = 0; x < w; x++) {
					int lo = 255, hi = 0;
					for (int yy = y - r < 0 ? 0 : y - r; yy <= y + r && yy < h; yy++)
						for (int xx = x - r < 0 ? 0 : x - r; xx <= x + r && xx < w; xx++) {
							const int g = image_u8_row(&in, yy)[xx];
							lo = g < lo ? g : lo;
							hi = g > hi ? g : hi;
						}
					const int v = image_u8_row(&in, y)[x];
					const int t = (lo + hi) / 2;
					const int white = hi - lo < gate ? v > (t < 128 ? 255 : 0)
									 : (v + offset) * (v + offset) > (lo + offset) * (hi + offset);
					assert_int_equal(bitmask_get(&m, x, y), white);
				}
				assert_row_tail_zero(&m, y);
			}
			bitmask_free(&m);
		}
	struct bitmask m;
	assert_int_equal(bitmask_alloc(&m, 20, 20), 0);
	struct image_u8 in = {.width = 20, .height = 20, .stride = big.stride, .data = big.data};
	assert_int_equal(closing_ratio(c, &in, 0, 16, 32, &m), ERR_RANGE);
	assert_int_equal(closing_ratio(c, &in, CLOSING_MAX_RADIUS + 1, 16, 32, &m), ERR_RANGE);
	assert_int_equal(closing_ratio(c, &in, 8, CLOSING_MAX_OFFSET + 1, 32, &m), ERR_RANGE);
	assert_int_equal(closing_ratio(c, &in, 8, 16, 256, &m), ERR_RANGE);
	in.width = 21;
	assert_int_equal(closing_ratio(c, &in, 8, 16, 32, &m), ERR_SIZE);
	bitmask_free(&m);
	image_u8_free(&big);
	closing_destroy(c);
}

/* Four symbols of the built-in set, 90 px, turned every way, on light
 * paper: what the deblurring pass sees. */
static void draw_symbols(struct image_u8 *img)
{
	struct tree_set *set = NULL;
	assert_int_equal(tree_set_parse(tree_set_builtin_text, strlen(tree_set_builtin_text), "built-in", &set), 0);
	for (int y = 0; y < img->height; y++)
		memset(image_u8_row(img, y), 200, (size_t)img->width);
	for (int k = 0; k < 4; k++)
		assert_int_equal(render_symbol(tree_set_token(set, 3 * k + 1), 90.0f, 0.7f + 1.3f * (float)k,
					       (float)(55 + 100 * (k % 2)), (float)(55 + 100 * (k / 2)), img, NULL),
				 0);
	tree_set_free(set);
}

/* Regions of one colour, 4-connected, of at least 4 pixels: the nodes a
 * symbol's tree is made of. */
static int mask_regions(const struct bitmask *m)
{
	static int32_t stack[1 << 16];
	static uint8_t seen[1 << 16];
	const int w = m->width, h = m->height;
	assert_true(w * h <= (1 << 16));
	memset(seen, 0, (size_t)(w * h));
	int n = 0;
	for (int p0 = 0; p0 < w * h; p0++) {
		if (seen[p0])
			continue;
		const int c = bitmask_get(m, p0 % w, p0 / w);
		int top = 0, area = 0;
		stack[top++] = p0;
		seen[p0] = 1;
		while (top) {
			const int p = stack[--top], x = p % w, y = p / w;
			area++;
			const int nb[4][2] = {{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}};
			for (int k = 0; k < 4; k++) {
				const int qx = nb[k][0], qy = nb[k][1];
				if (qx < 0 || qy < 0 || qx >= w || qy >= h || seen[qy * w + qx] || bitmask_get(m, qx, qy) != c)
					continue;
				seen[qy * w + qx] = 1;
				stack[top++] = qy * w + qx;
			}
		}
		n += area >= 4;
	}
	return n;
}

/* The deblurring tests' bench: a deblur, a sharp and a working image, two
 * masks, all 210 x 210. */
struct deblur_bench {
	struct deblur *d;
	struct image_u8 sharp, img;
	struct bitmask got, again;
};

static void deblur_bench_open(struct deblur_bench *t)
{
	int err = 0;
	t->d = deblur_create(210, 210, &err);
	assert_non_null(t->d);
	assert_int_equal(image_u8_alloc(&t->sharp, 210, 210), 0);
	assert_int_equal(image_u8_alloc(&t->img, 210, 210), 0);
	assert_int_equal(bitmask_alloc(&t->got, 210, 210), 0);
	assert_int_equal(bitmask_alloc(&t->again, 210, 210), 0);
}

/* The bench's sharp image: the four symbols; its working image: them
 * under a streak of length px at angle (noise +-3). */
static void deblur_bench_streak(struct deblur_bench *t, float length, float angle, uint32_t *rng)
{
	draw_symbols(&t->sharp);
	for (int y = 0; y < 210; y++)
		memcpy(image_u8_row(&t->img, y), image_u8_row(&t->sharp, y), 210);
	test_streak(&t->img, length, angle, 3, rng);
}

static void deblur_bench_close(struct deblur_bench *t)
{
	bitmask_free(&t->got);
	bitmask_free(&t->again);
	image_u8_free(&t->sharp);
	image_u8_free(&t->img);
	deblur_destroy(t->d);
}

/* The deblurring threshold (deblur.h) on four symbols: the sharp window
 * has no streak; under a streak of 6 or 9 px (which merges a quarter to
 * half of the symbols' 101 regions in the local-mean threshold), whatever
 * its direction, the direction is found within 0.08 rad and the length
 * within 1 px, and the deconvolved threshold's region count (at the pass's
 * bias, deblur3_bias's 7) is at least 1.5 times as close to the sharp
 * window's as the streaked window's own (the local mean at 16) is;
 * the same input gives the same bits; bad sizes and ranges are refused. */
static void test_deblur(void **state)
{
	(void)state;
	int err = 0;
	struct deblur_bench t;
	deblur_bench_open(&t);
	struct bitmask want, plain;
	assert_int_equal(bitmask_alloc(&want, 210, 210), 0);
	assert_int_equal(bitmask_alloc(&plain, 210, 210), 0);
	uint32_t rng = 99;
	draw_symbols(&t.sharp);
	struct deblur_streak s;
	assert_int_equal(deblur_estimate(t.d, &t.sharp, &s), 0);
	assert_int_equal(deblur_process(t.d, &t.sharp, NULL, 8, 16, 32, false, &t.got, NULL), 0);
	struct threshold_cpu *tc = threshold_cpu_create(210, 210, &err);
	assert_non_null(tc);
	threshold_cpu_mean(tc, &t.sharp, THRESHOLD_MEAN, 1, 32, 8, 16, NULL, &want);
	const float angles[] = {0.0f, 0.5f, 1.2f, 1.9f, 2.8f};
	const float lengths[] = {6.0f, 9.0f};
	for (int ai = 0; ai < 5; ai++)
		for (int li = 0; li < 2; li++) {
			for (int y = 0; y < 210; y++)
				memcpy(image_u8_row(&t.img, y), image_u8_row(&t.sharp, y), 210);
			test_streak(&t.img, lengths[li], angles[ai], 3, &rng);
			assert_int_equal(deblur_estimate(t.d, &t.img, &s), 1);
			float da = fabsf(s.angle - angles[ai]);
			da = da > 1.5708f ? 3.14159265f - da : da;
			assert_true(da < 0.08f);
			assert_true(fabsf(s.length - lengths[li]) < 1.0f);
			assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 7, 32, false, &t.got, NULL), 1);
			assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 7, 32, true, &t.again, NULL), DEBLUR_STREAK);
			assert_memory_equal(t.got.bits, t.again.bits, (size_t)t.got.stride_words * 210 * sizeof *t.got.bits);
			threshold_cpu_mean(tc, &t.img, THRESHOLD_MEAN, 1, 32, 8, 16, NULL, &plain);
			const int sharp_n = mask_regions(&want);
			assert_true(3 * abs(mask_regions(&t.got) - sharp_n) <= 2 * abs(mask_regions(&plain) - sharp_n));
		}
	struct bitmask small;
	assert_int_equal(bitmask_alloc(&small, 20, 20), 0);
	assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 16, 32, false, &small, NULL), ERR_SIZE);
	assert_int_equal(deblur_process(t.d, &t.img, NULL, 0, 16, 32, false, &t.got, NULL), ERR_RANGE);
	assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 51, 32, false, &t.got, NULL), ERR_RANGE);
	assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 16, 256, false, &t.got, NULL), ERR_RANGE);
	const struct deblur_box all = {0, 0, 210, 210}, outside = {0, 0, 211, 210}, empty = {5, 5, 5, 9};
	assert_int_equal(deblur_process(t.d, &t.img, &outside, 8, 16, 32, false, &t.got, NULL), ERR_RANGE);
	assert_int_equal(deblur_process(t.d, &t.img, &empty, 8, 16, 32, false, &t.got, NULL), ERR_RANGE);
	/* The whole input as the core is the same as none; outside a core the
	 * grey is the input's: past the mean's radius, without the hysteresis
	 * (which joins pixels across the core's edge), the plain threshold. */
	deblur_seed_bias(t.d, 0);
	assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 16, 32, false, &t.got, NULL), 1);
	assert_int_equal(deblur_process(t.d, &t.img, &all, 8, 16, 32, false, &t.again, NULL), 1);
	assert_memory_equal(t.got.bits, t.again.bits, (size_t)t.got.stride_words * 210 * sizeof *t.got.bits);
	const struct deblur_box left = {0, 0, 60, 210};
	assert_int_equal(deblur_process(t.d, &t.img, &left, 8, 16, 32, false, &t.again, NULL), 1);
	for (int y = 0; y < 210; y++)
		for (int x = 60 + 8 + 1; x < 210; x++)
			assert_int_equal((t.again.bits[(size_t)y * t.again.stride_words + x / 64] >> (x % 64)) & 1,
					 (plain.bits[(size_t)y * plain.stride_words + x / 64] >> (x % 64)) & 1);
	bitmask_free(&small);
	bitmask_free(&want);
	bitmask_free(&plain);
	threshold_cpu_destroy(tc);
	deblur_bench_close(&t);
	assert_null(deblur_create(0, 5, &err));
	assert_int_equal(err, ERR_RANGE);
}

/* A streak's threshold with its hysteresis (deblur_threshold), on paper of
 * 200 at mean radius 8, bias 7: a blob of 40 (black at the seeds' bias,
 * DEBLUR_SEED_BIAS) with a 2 px tail of 150 running 16 px from it and a
 * pixel of 150 touching the tail's end corner to corner (black at 7 only),
 * and three specks of 150 on the paper, alone: the blob, the tail and that
 * pixel stay black, the specks turn white; with the seeds' bias at 0 (no
 * hysteresis) the specks are black too, the bits the plain local mean
 * gives. */
static void test_deblur_hysteresis(void **state)
{
	(void)state;
	int err = 0;
	struct deblur *d = deblur_create(64, 64, &err);
	assert_non_null(d);
	struct image_u8 g;
	struct bitmask got, plain;
	assert_int_equal(image_u8_alloc(&g, 64, 64), 0);
	assert_int_equal(bitmask_alloc(&got, 64, 64), 0);
	assert_int_equal(bitmask_alloc(&plain, 64, 64), 0);
	for (int y = 0; y < 64; y++)
		for (int x = 0; x < 64; x++)
			image_u8_row(&g, y)[x] = (x - 16) * (x - 16) + (y - 20) * (y - 20) <= 9 ? 40 : 200;
	for (int x = 19; x < 36; x++)
		image_u8_row(&g, 20)[x] = image_u8_row(&g, 21)[x] = 150;
	image_u8_row(&g, 22)[36] = 150;
	const int specks[3][2] = {{50, 50}, {12, 48}, {40, 8}};
	for (int k = 0; k < 3; k++)
		image_u8_row(&g, specks[k][1])[specks[k][0]] = 150;
	assert_int_equal(deblur_threshold(d, &g, 8, 7, 32, &got), 0);
	assert_int_equal(bitmask_get(&got, 16, 20), 0);
	for (int x = 19; x < 36; x++)
		assert_int_equal(bitmask_get(&got, x, 20) | bitmask_get(&got, x, 21), 0);
	assert_int_equal(bitmask_get(&got, 36, 22), 0);
	for (int k = 0; k < 3; k++)
		assert_int_equal(bitmask_get(&got, specks[k][0], specks[k][1]), 1);
	deblur_seed_bias(d, 0);
	assert_int_equal(deblur_threshold(d, &g, 8, 7, 32, &got), 0);
	for (int k = 0; k < 3; k++)
		assert_int_equal(bitmask_get(&got, specks[k][0], specks[k][1]), 0);
	struct threshold_cpu *tc = threshold_cpu_create(64, 64, &err);
	assert_non_null(tc);
	threshold_cpu_mean(tc, &g, THRESHOLD_MEAN, 1, 32, 8, 7, NULL, &plain);
	assert_memory_equal(got.bits, plain.bits, (size_t)got.stride_words * 64 * sizeof *got.bits);
	struct bitmask big;
	assert_int_equal(bitmask_alloc(&big, 65, 64), 0);
	assert_int_equal(deblur_threshold(d, &g, 8, 7, 32, &big), ERR_SIZE);
	assert_int_equal(deblur_threshold(d, &g, 8, 51, 32, &got), ERR_RANGE);
	bitmask_free(&big);
	threshold_cpu_destroy(tc);
	bitmask_free(&got);
	bitmask_free(&plain);
	image_u8_free(&g);
	deblur_destroy(d);
}

/* deblur_rethreshold(): the last streak's deconvolved grey thresholded
 * again gives the bits deblur_process() gives at that radius (the
 * deconvolution does not depend on it), at the same radius the same bits
 * as the call's own; after a call that deconvolved no streak (a sharp
 * window, a defocus) there is nothing to threshold; bad sizes and ranges
 * are refused. */
static void test_deblur_rethreshold(void **state)
{
	(void)state;
	struct deblur_bench t;
	deblur_bench_open(&t);
	uint32_t rng = 7;
	assert_int_equal(deblur_rethreshold(t.d, 4, 16, 32, &t.again), ERR_AGAIN);
	deblur_bench_streak(&t, 6.0f, 0.7f, &rng);
	const size_t bytes = (size_t)t.got.stride_words * 210 * sizeof *t.got.bits;
	for (int r = 3; r <= 12; r += 3) {
		assert_int_equal(deblur_process(t.d, &t.img, NULL, r, 16, 32, false, &t.got, NULL), 1);
		assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 16, 32, false, &t.again, NULL), 1);
		assert_int_equal(deblur_rethreshold(t.d, r, 16, 32, &t.again), 0);
		assert_memory_equal(t.got.bits, t.again.bits, bytes);
	}
	assert_int_equal(deblur_rethreshold(t.d, 0, 16, 32, &t.again), ERR_RANGE);
	assert_int_equal(deblur_rethreshold(t.d, 4, 51, 32, &t.again), ERR_RANGE);
	struct bitmask small;
	assert_int_equal(bitmask_alloc(&small, 20, 20), 0);
	assert_int_equal(deblur_rethreshold(t.d, 4, 16, 32, &small), ERR_SIZE);
	bitmask_free(&small);
	assert_int_equal(deblur_process(t.d, &t.sharp, NULL, 8, 16, 32, false, &t.got, NULL), 0);
	assert_int_equal(deblur_rethreshold(t.d, 4, 16, 32, &t.again), ERR_AGAIN);
	const struct deblur_streak blur = {.sigma = 2.0f};
	assert_int_equal(deblur_apply(t.d, &t.img, NULL, 8, 16, 32, DEBLUR_DEFOCUS, &blur, &t.got), DEBLUR_DEFOCUS);
	assert_int_equal(deblur_rethreshold(t.d, 4, 16, 32, &t.again), ERR_AGAIN);
	deblur_bench_close(&t);
}

/* deblur_continue(): a streak's deconvolution taken on from its
 * DEBLUR_ITERATIONS rounds to more, in two steps, gives the bits
 * deblur_apply() gives with those rounds (in a core, the grey outside it
 * kept), and deblur_rethreshold() then reads that grey; so does a
 * defocus's; fewer rounds than were run, more than DEBLUR_MAX_ROUNDS, or
 * nothing deconvolved are refused. deblur_long_rounds(): none up to DEBLUR_LONG_FROM,
 * then DEBLUR_LONG_ROUNDS_PER_PX a pixel, capped. */
static void test_deblur_continue(void **state)
{
	(void)state;
	struct deblur_bench t;
	deblur_bench_open(&t);
	uint32_t rng = 11;
	deblur_bench_streak(&t, 9.0f, 1.1f, &rng);
	const size_t bytes = (size_t)t.got.stride_words * 210 * sizeof *t.got.bits;
	const struct deblur_box core = {30, 20, 180, 190};
	struct deblur_streak s;
	assert_int_equal(deblur_continue(t.d, 12, 8, 16, 32, &t.again), ERR_AGAIN);
	assert_int_equal(deblur_process(t.d, &t.img, &core, 8, 16, 32, false, &t.got, &s), DEBLUR_STREAK);
	assert_int_equal(s.rounds, 0);
	struct deblur_streak same = s;
	same.rounds = DEBLUR_ITERATIONS;
	assert_int_equal(deblur_apply(t.d, &t.img, &core, 8, 16, 32, DEBLUR_STREAK, &same, &t.again), DEBLUR_STREAK);
	assert_memory_equal(t.got.bits, t.again.bits, bytes);
	const int rounds[] = {14, 20, DEBLUR_MAX_ROUNDS};
	for (int i = 0; i < 3; i++) {
		struct deblur_streak more = s;
		more.rounds = rounds[i];
		assert_int_equal(deblur_apply(t.d, &t.img, &core, 8, 16, 32, DEBLUR_STREAK, &more, &t.got), DEBLUR_STREAK);
		assert_int_equal(deblur_process(t.d, &t.img, &core, 8, 16, 32, false, &t.again, NULL), DEBLUR_STREAK);
		assert_memory_not_equal(t.got.bits, t.again.bits, bytes);
		assert_int_equal(deblur_continue(t.d, rounds[i] - 2, 8, 16, 32, &t.again), 0);
		assert_int_equal(deblur_continue(t.d, rounds[i], 8, 16, 32, &t.again), 0);
		assert_memory_equal(t.got.bits, t.again.bits, bytes);
		assert_int_equal(deblur_rethreshold(t.d, 5, 16, 32, &t.again), 0);
		assert_int_equal(deblur_apply(t.d, &t.img, &core, 5, 16, 32, DEBLUR_STREAK, &more, &t.got), DEBLUR_STREAK);
		assert_memory_equal(t.got.bits, t.again.bits, bytes);
		assert_int_equal(deblur_continue(t.d, rounds[i] - 1, 8, 16, 32, &t.again), ERR_RANGE);
	}
	assert_int_equal(deblur_continue(t.d, DEBLUR_MAX_ROUNDS + 1, 8, 16, 32, &t.again), ERR_RANGE);
	assert_int_equal(deblur_continue(t.d, DEBLUR_MAX_ROUNDS, 0, 16, 32, &t.again), ERR_RANGE);
	struct deblur_streak bad = s;
	bad.rounds = DEBLUR_MAX_ROUNDS + 1;
	assert_int_equal(deblur_apply(t.d, &t.img, &core, 8, 16, 32, DEBLUR_STREAK, &bad, &t.got), ERR_RANGE);
	bad.rounds = -1;
	assert_int_equal(deblur_apply(t.d, &t.img, &core, 8, 16, 32, DEBLUR_STREAK, &bad, &t.got), ERR_RANGE);
	/* A defocus's deconvolution taken on likewise, thresholded as its
	 * kind is (Bernsen); after a window with nothing deconvolved, none. */
	const struct deblur_streak blur = {.sigma = 2.0f}, blur12 = {.sigma = 2.0f, .rounds = 12};
	assert_int_equal(deblur_apply(t.d, &t.img, &core, 8, 16, 32, DEBLUR_DEFOCUS, &blur12, &t.got), DEBLUR_DEFOCUS);
	assert_int_equal(deblur_apply(t.d, &t.img, &core, 8, 16, 32, DEBLUR_DEFOCUS, &blur, &t.again), DEBLUR_DEFOCUS);
	assert_memory_not_equal(t.got.bits, t.again.bits, bytes);
	assert_int_equal(deblur_rethreshold(t.d, 5, 16, 32, &t.again), ERR_AGAIN);
	assert_int_equal(deblur_continue(t.d, 12, 8, 16, 32, &t.again), 0);
	assert_memory_equal(t.got.bits, t.again.bits, bytes);
	assert_int_equal(deblur_process(t.d, &t.sharp, NULL, 8, 16, 32, true, &t.got, NULL), 0);
	assert_int_equal(deblur_continue(t.d, 12, 8, 16, 32, &t.again), ERR_AGAIN);
	assert_int_equal(deblur_long_rounds(3.0f), 0);
	assert_int_equal(deblur_long_rounds(DEBLUR_LONG_FROM), 0);
	assert_int_equal(deblur_long_rounds(DEBLUR_LONG_FROM + 1.0f), DEBLUR_ITERATIONS + DEBLUR_LONG_ROUNDS_PER_PX);
	assert_int_equal(deblur_long_rounds(DEBLUR_LONG_FROM + 2.0f), DEBLUR_ITERATIONS + 2 * DEBLUR_LONG_ROUNDS_PER_PX);
	assert_int_equal(deblur_long_rounds((float)DEBLUR_MAX_LENGTH), DEBLUR_MAX_ROUNDS);
	deblur_bench_close(&t);
}

/* deblur_rethreshold_encoded(): the grey a defocus's deconvolution holds,
 * encoded with DEBLUR_ENCODE_GAMMA and thresholded by Bernsen at
 * DEBLUR_DEFOCUS_RADIUS: outside the core, past that radius (the input's
 * grey there), Bernsen's bits over the input encoded here; inside, other
 * bits than the plain read's (a dim window: the midpoints differ); the
 * held deconvolution left as it was (taken on afterwards, the bits
 * deblur_apply() gives with those rounds, and encoded again the same as
 * after that call); nothing after a streak's deconvolution or none; bad
 * sizes and gates refused. */
static void test_deblur_rethreshold_encoded(void **state)
{
	(void)state;
	int err = 0;
	struct deblur_bench t;
	deblur_bench_open(&t);
	uint32_t rng = 13;
	const size_t bytes = (size_t)t.got.stride_words * 210 * sizeof *t.got.bits;
	assert_int_equal(deblur_rethreshold_encoded(t.d, 32, &t.again), ERR_AGAIN);
	draw_symbols(&t.sharp);
	for (int y = 0; y < 210; y++)
		for (int x = 0; x < 210; x++)
			image_u8_row(&t.img, y)[x] = (uint8_t)(image_u8_row(&t.sharp, y)[x] * 2 / 5);
	test_defocus(&t.img, 2.0f, 3, &rng);
	const struct deblur_box core = {30, 20, 180, 190};
	const struct deblur_streak blur = {.sigma = 2.0f}, blur12 = {.sigma = 2.0f, .rounds = 12};
	struct bitmask enc, enc12;
	assert_int_equal(bitmask_alloc(&enc, 210, 210), 0);
	assert_int_equal(bitmask_alloc(&enc12, 210, 210), 0);
	assert_int_equal(deblur_apply(t.d, &t.img, &core, 8, 16, 32, DEBLUR_DEFOCUS, &blur, &t.got), DEBLUR_DEFOCUS);
	assert_int_equal(deblur_rethreshold_encoded(t.d, 32, &enc), 0);
	assert_memory_not_equal(t.got.bits, enc.bits, bytes);
	struct image_u8 coded;
	assert_int_equal(image_u8_alloc(&coded, 210, 210), 0);
	for (int y = 0; y < 210; y++)
		for (int x = 0; x < 210; x++)
			image_u8_row(&coded, y)[x] = (uint8_t)(255.0 * pow(image_u8_row(&t.img, y)[x] / 255.0,
									     1.0 / DEBLUR_ENCODE_GAMMA) +
								 0.5);
	struct threshold_cpu *tc = threshold_cpu_create(210, 210, &err);
	assert_non_null(tc);
	threshold_cpu_bernsen(tc, &coded, DEBLUR_DEFOCUS_RADIUS, 32, NULL, &t.again);
	const int r = DEBLUR_DEFOCUS_RADIUS;
	int outside = 0;
	for (int y = 0; y < 210; y++)
		for (int x = 0; x < 210; x++) {
			if (x >= core.x0 - r && x < core.x1 + r && y >= core.y0 - r && y < core.y1 + r)
				continue;
			outside++;
			assert_int_equal((enc.bits[(size_t)y * enc.stride_words + x / 64] >> (x % 64)) & 1,
					 (t.again.bits[(size_t)y * t.again.stride_words + x / 64] >> (x % 64)) & 1);
		}
	assert_true(outside > 0);
	assert_int_equal(deblur_continue(t.d, 12, 8, 16, 32, &t.again), 0);
	assert_int_equal(deblur_rethreshold_encoded(t.d, 32, &enc12), 0);
	assert_int_equal(deblur_apply(t.d, &t.img, &core, 8, 16, 32, DEBLUR_DEFOCUS, &blur12, &t.got), DEBLUR_DEFOCUS);
	assert_memory_equal(t.got.bits, t.again.bits, bytes);
	assert_int_equal(deblur_rethreshold_encoded(t.d, 32, &t.again), 0);
	assert_memory_equal(enc12.bits, t.again.bits, bytes);
	assert_memory_not_equal(enc.bits, enc12.bits, bytes);
	struct bitmask small;
	assert_int_equal(bitmask_alloc(&small, 20, 20), 0);
	assert_int_equal(deblur_rethreshold_encoded(t.d, 32, &small), ERR_SIZE);
	assert_int_equal(deblur_rethreshold_encoded(t.d, 256, &t.again), ERR_RANGE);
	assert_int_equal(deblur_rethreshold_encoded(t.d, -1, &t.again), ERR_RANGE);
	deblur_bench_streak(&t, 6.0f, 0.7f, &rng);
	assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 16, 32, false, &t.got, NULL), DEBLUR_STREAK);
	assert_int_equal(deblur_rethreshold_encoded(t.d, 32, &t.again), ERR_AGAIN);
	assert_int_equal(deblur_process(t.d, &t.sharp, NULL, 8, 16, 32, true, &t.got, NULL), 0);
	assert_int_equal(deblur_rethreshold_encoded(t.d, 32, &t.again), ERR_AGAIN);
	bitmask_free(&small);
	bitmask_free(&enc);
	bitmask_free(&enc12);
	image_u8_free(&coded);
	threshold_cpu_destroy(tc);
	deblur_bench_close(&t);
}

static void draw_steps(struct image_u8 *img);

/* deblur_process_encoded(): the same estimate, bits and held
 * deconvolution as deblur_process() (defocus set) over the input encoded
 * here with DEBLUR_ENCODE_INPUT_GAMMA (defocused light squares on a dark
 * table: then taken on to 12 rounds alike), other bits than over the
 * input itself;
 * an input larger than the create sizes refused. */
static void test_deblur_process_encoded(void **state)
{
	(void)state;
	struct deblur_bench t;
	deblur_bench_open(&t);
	uint32_t rng = 17;
	const size_t bytes = (size_t)t.got.stride_words * 210 * sizeof *t.got.bits;
	draw_steps(&t.img);
	test_defocus(&t.img, 2.0f, 3, &rng);
	struct image_u8 coded;
	assert_int_equal(image_u8_alloc(&coded, 210, 210), 0);
	uint8_t lut[256];
	for (int v = 0; v < 256; v++)
		lut[v] = (uint8_t)lrint(255.0 * pow(v / 255.0, 1.0 / DEBLUR_ENCODE_INPUT_GAMMA));
	for (int y = 0; y < 210; y++)
		for (int x = 0; x < 210; x++)
			image_u8_row(&coded, y)[x] = lut[image_u8_row(&t.img, y)[x]];
	const struct deblur_box core = {30, 20, 180, 190};
	struct deblur_streak a, b;
	assert_int_equal(deblur_process(t.d, &coded, &core, 8, 16, 32, true, &t.got, &a), DEBLUR_DEFOCUS);
	assert_int_equal(deblur_continue(t.d, 12, 8, 16, 32, &t.got), 0);
	assert_int_equal(deblur_process_encoded(t.d, &t.img, &core, 8, 16, 32, &t.again, &b), DEBLUR_DEFOCUS);
	assert_true(a.sigma == b.sigma);
	assert_int_equal(deblur_continue(t.d, 12, 8, 16, 32, &t.again), 0);
	assert_memory_equal(t.got.bits, t.again.bits, bytes);
	assert_int_equal(deblur_process(t.d, &t.img, &core, 8, 16, 32, true, &t.got, &a), DEBLUR_DEFOCUS);
	assert_int_equal(deblur_continue(t.d, 12, 8, 16, 32, &t.got), 0);
	assert_memory_not_equal(t.got.bits, t.again.bits, bytes);
	struct image_u8 big;
	struct bitmask big_out;
	assert_int_equal(image_u8_alloc(&big, 211, 210), 0);
	assert_int_equal(bitmask_alloc(&big_out, 211, 210), 0);
	assert_int_equal(deblur_process_encoded(t.d, &big, NULL, 8, 16, 32, &big_out, &b), ERR_SIZE);
	bitmask_free(&big_out);
	image_u8_free(&big);
	image_u8_free(&coded);
	deblur_bench_close(&t);
}

/* Light squares of 40 px on a dark table: long steps, flat on both sides. */
static void draw_steps(struct image_u8 *img)
{
	for (int y = 0; y < img->height; y++)
		for (int x = 0; x < img->width; x++) {
			const bool in = x % 70 >= 15 && x % 70 < 55 && y % 70 >= 15 && y % 70 < 55;
			image_u8_row(img, y)[x] = in ? 190 : 60;
		}
}

/* deblur_set_isa: the avx2 and the scalar copies of the kernels give the
 * same streak estimate, the same defocus reading and the same bits, on
 * windows of every width mod 16 (the copies' tails), sharp, streaked,
 * defocused and noise. */
static void test_deblur_isas(void **state)
{
	(void)state;
	struct deblur_bench t;
	deblur_bench_open(&t);
	assert_int_equal(deblur_set_isa(t.d, "neon9"), ERR_UNSUPPORTED);
	assert_int_equal(deblur_set_isa(t.d, "scalar"), 0);
	if (deblur_set_isa(t.d, "avx2") != 0) {
		deblur_bench_close(&t);
		skip();
	}
	uint32_t rng = 31;
	for (int pat = 0; pat < 4; pat++) {
		draw_symbols(&t.img);
		if (pat == 1)
			test_streak(&t.img, 7.0f, 0.7f, 3, &rng);
		else if (pat == 2) {
			draw_steps(&t.img);
			test_defocus(&t.img, 2.2f, 3, &rng);
		} else if (pat == 3)
			for (int y = 0; y < 210; y++)
				for (int x = 0; x < 210; x++)
					image_u8_row(&t.img, y)[x] = (uint8_t)(test_rand(&rng) % 256);
		for (int w = 194; w <= 210; w++) {
			const struct image_u8 win = {.width = w, .height = 210 - (w % 5), .stride = t.img.stride,
						     .data = t.img.data};
			struct deblur_streak s[2];
			float sigma[2], sharp[2];
			int kind[2], found[2];
			for (int isa = 0; isa < 2; isa++) {
				assert_int_equal(deblur_set_isa(t.d, isa ? "avx2" : "scalar"), 0);
				struct bitmask *out = isa ? &t.again : &t.got;
				out->width = win.width;
				out->height = win.height;
				memset(out->bits, 0, (size_t)out->stride_words * 210 * sizeof *out->bits);
				found[isa] = deblur_defocus(t.d, &win, &sigma[isa], &sharp[isa]);
				kind[isa] = deblur_process(t.d, &win, NULL, 8, 7, 32, true, out, &s[isa]);
			}
			assert_int_equal(found[0], found[1]);
			assert_true(sigma[0] == sigma[1] && sharp[0] == sharp[1]);
			assert_int_equal(kind[0], kind[1]);
			assert_memory_equal(&s[0], &s[1], sizeof s[0]);
			assert_memory_equal(t.got.bits, t.again.bits, (size_t)t.got.stride_words * 210 * sizeof *t.got.bits);
			if (pat == 1)
				assert_int_equal(kind[0], DEBLUR_STREAK);
			if (pat == 2)
				assert_int_equal(kind[0], DEBLUR_DEFOCUS);
		}
	}
	t.got.width = t.again.width = t.got.height = t.again.height = 210;
	deblur_bench_close(&t);
}

/* The defocus branch (deblur.h): on sharp squares and on the four
 * symbols, and under a Gaussian of 1 px, the blur read is under
 * DEBLUR_MIN_SIGMA and nothing is done; under 1.8, 2.2 or 2.6 px (noise
 * +-3) the blur is read within 0.25 px, the window is deconvolved
 * (DEBLUR_DEFOCUS) where defocus is asked for and left alone where not,
 * and the same input gives the same bits, as does deblur_apply() with
 * the estimate given; an estimate out of range is refused. (What the deconvolution buys,
 * symbols decoded, is test_engine's.) */
static void test_deblur_defocus(void **state)
{
	(void)state;
	struct deblur_bench t;
	deblur_bench_open(&t);
	float sigma = 0.0f, sharp = 0.0f;
	draw_symbols(&t.img);
	assert_int_equal(deblur_defocus(t.d, &t.img, &sigma, &sharp), 0);
	assert_true(sigma < DEBLUR_MIN_SIGMA);
	assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 16, 32, true, &t.got, NULL), 0);
	draw_steps(&t.sharp);
	assert_int_equal(deblur_defocus(t.d, &t.sharp, &sigma, &sharp), 0);
	assert_true(sigma > 0.0f && sigma < DEBLUR_MIN_SIGMA);
	assert_int_equal(deblur_process(t.d, &t.sharp, NULL, 8, 16, 32, true, &t.got, NULL), 0);
	uint32_t rng = 7;
	const float sigmas[] = {1.0f, 1.8f, 2.2f, 2.6f};
	for (int i = 0; i < 4; i++) {
		for (int y = 0; y < 210; y++)
			memcpy(image_u8_row(&t.img, y), image_u8_row(&t.sharp, y), 210);
		test_defocus(&t.img, sigmas[i], 3, &rng);
		struct deblur_streak s;
		const int found = deblur_defocus(t.d, &t.img, &sigma, &sharp);
		if (i == 0) {
			assert_int_equal(found, 0);
			assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 16, 32, true, &t.got, &s), 0);
			continue;
		}
		assert_int_equal(found, 1);
		assert_true(fabsf(sigma - sigmas[i]) < 0.25f);
		/* Every step is blurred: the sharpest too (1.65-1.85). */
		assert_true(sharp >= 1.5f && sharp <= sigma);
		assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 16, 32, false, &t.got, NULL), 0);
		assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 16, 32, true, &t.got, &s), DEBLUR_DEFOCUS);
		assert_true(s.sigma == sigma);
		assert_int_equal(deblur_process(t.d, &t.img, NULL, 8, 16, 32, true, &t.again, NULL), DEBLUR_DEFOCUS);
		assert_memory_equal(t.got.bits, t.again.bits, (size_t)t.got.stride_words * 210 * sizeof *t.got.bits);
		/* The estimate given: the same bits; a blur given where none
		 * is read here (the sharp squares) is applied all the same. */
		assert_int_equal(deblur_apply(t.d, &t.img, NULL, 8, 16, 32, DEBLUR_DEFOCUS, &s, &t.again), DEBLUR_DEFOCUS);
		assert_memory_equal(t.got.bits, t.again.bits, (size_t)t.got.stride_words * 210 * sizeof *t.got.bits);
		assert_int_equal(deblur_apply(t.d, &t.sharp, NULL, 8, 16, 32, DEBLUR_DEFOCUS, &s, &t.again), DEBLUR_DEFOCUS);
		assert_memory_not_equal(t.got.bits, t.again.bits, (size_t)t.got.stride_words * 210 * sizeof *t.got.bits);
	}
	const struct deblur_streak none = {0}, huge = {.sigma = INFINITY};
	assert_int_equal(deblur_apply(t.d, &t.img, NULL, 8, 16, 32, DEBLUR_DEFOCUS, &none, &t.got), ERR_RANGE);
	assert_int_equal(deblur_apply(t.d, &t.img, NULL, 8, 16, 32, DEBLUR_DEFOCUS, &huge, &t.got), ERR_RANGE);
	assert_int_equal(deblur_apply(t.d, &t.img, NULL, 8, 16, 32, DEBLUR_STREAK, &none, &t.got), ERR_RANGE);
	assert_int_equal(deblur_apply(t.d, &t.img, NULL, 8, 16, 32, 3, &huge, &t.got), ERR_RANGE);
	deblur_bench_close(&t);
}

/* Light squares whose edges are soft ramps of 4 px (a hard shadow's
 * penumbra), each holding sharp print too small to give long flat steps
 * (dots and bars of 2-3 px): the long steps, nearly all the ramps', read a
 * defocus (a blur of about 1.6), but the sharpest steps are the print's
 * and read a sharp edge's blur (under 0.9); without the print the
 * sharpest steps are the ramps' (over 1.2). */
static void draw_soft_squares(struct image_u8 *img, bool print)
{
	for (int y = 0; y < img->height; y++)
		for (int x = 0; x < img->width; x++) {
			const int px = x % 70, py = y % 70;
			/* Distance inside the square (negative outside), the ramp
			 * 4 px wide about the square's edge. */
			const float d = fminf(fminf((float)px - 14.5f, 54.5f - (float)px),
					      fminf((float)py - 14.5f, 54.5f - (float)py));
			const float t = fminf(fmaxf(d / 4.0f + 0.5f, 0.0f), 1.0f);
			int v = (int)(60.0f + 130.0f * t + 0.5f);
			/* Print: a bar 3 px wide, two dots of 2 px. */
			if (print && ((px >= 24 && px < 27 && py >= 22 && py < 48) ||
				      (px >= 34 && px < 36 && py >= 28 && py < 30) || (px >= 42 && px < 44 && py >= 38 && py < 40)))
				v = 30;
			image_u8_row(img, y)[x] = (uint8_t)v;
		}
}

static void test_deblur_defocus_sharp_print(void **state)
{
	(void)state;
	struct deblur_bench t;
	deblur_bench_open(&t);
	float sigma, sharp;
	draw_soft_squares(&t.img, false);
	assert_int_equal(deblur_defocus(t.d, &t.img, &sigma, &sharp), 1);
	assert_true(sigma > 1.4f && sigma < 1.9f);
	assert_true(sharp > 1.2f && sharp <= sigma);
	draw_soft_squares(&t.img, true);
	assert_int_equal(deblur_defocus(t.d, &t.img, &sigma, &sharp), 1);
	assert_true(sigma > 1.4f && sigma < 1.9f);
	assert_true(sharp > 0.0f && sharp < 0.9f);
	deblur_bench_close(&t);
}

/* Frames packed with stride == width in buffers of exactly that size, so a
 * kernel that reads or writes past a row's width shows (ASan for reads, the
 * guard bytes after the output for writes); every instruction set must give
 * the scalar set's bytes. */
static void test_exact_buffers_all_isas(void **state)
{
	(void)state;
	static const int widths[] = {1, 15, 17, 31, 33, 63, 100, 129};
	uint32_t rng = 2024;
	for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
		int w = widths[wi], h = 7;
		size_t n = (size_t)w * (size_t)h;
		uint8_t *src = malloc(n), *dst = malloc(n + 64), *ref = malloc(n);
		assert_non_null(src);
		assert_non_null(dst);
		assert_non_null(ref);
		struct image_u8 in = {.width = w, .height = h, .stride = w, .data = src};
		struct image_u8 out = {.width = w, .height = h, .stride = w, .data = dst};
		test_fill_random(&in, &rng, 0, 255);
		int err;
		struct threshold_cpu *c = threshold_cpu_create(w, h, &err);
		assert_non_null(c);
		for (int op = 0; op < 9; op++) {
			for (int ii = N_ISAS - 1; ii >= 0; ii--) { /* scalar first: the reference */
				if (!use_isa(c, ii))
					continue;
				memset(dst, 0x77, n + 64);
				if (op == 0)
					threshold_cpu_bernsen(c, &in, 6, 20, &out, NULL);
				else if (op == 1)
					threshold_cpu_bernsen(c, &in, 2, 0, &out, NULL);
				else if (op == 2)
					threshold_cpu_median(c, &in, 3, &out);
				else if (op == 3)
					threshold_cpu_median(c, &in, 5, &out);
				else if (op == 4)
					threshold_cpu_gauss(c, &in, 1.0f, &out);
				else
					threshold_cpu_mean(c, &in, THRESHOLD_MEAN + op - 5, 3, 20, 5, 16, &out, NULL);
				for (int g = 0; g < 64; g++)
					assert_int_equal(dst[n + (size_t)g], 0x77);
				if (ii == N_ISAS - 1)
					memcpy(ref, dst, n);
				else if (memcmp(ref, dst, n) != 0)
					fail_msg("%s op %d width %d differs from scalar", isas[ii], op, w);
			}
		}
		threshold_cpu_destroy(c);
		free(src);
		free(dst);
		free(ref);
	}
}

static void test_isa_choice(void **state)
{
	(void)state;
	int err;
	struct threshold_cpu *c = threshold_cpu_create(16, 16, &err);
	assert_non_null(c);
	const char *best = threshold_cpu_isa(c);
	bool known = false;
	for (int i = 0; i < N_ISAS; i++)
		known |= strcmp(best, isas[i]) == 0;
	assert_true(known);
	assert_int_equal(threshold_cpu_set_isa(c, "scalar"), 0);
	assert_string_equal(threshold_cpu_isa(c), "scalar");
	assert_int_equal(threshold_cpu_set_isa(c, "neon9"), ERR_UNSUPPORTED);
	assert_string_equal(threshold_cpu_isa(c), "scalar");
	assert_int_equal(threshold_cpu_set_isa(c, best), 0);
#if defined(__x86_64__)
	assert_int_equal(threshold_cpu_set_isa(c, "sse2"), 0); /* every x86-64 has it */
#endif
	threshold_cpu_destroy(c);
}

static void test_tiled_matches_brute_force(void **state)
{
	(void)state;
	static const int tiles[] = {2, 3, 7, 10, 12, 16, 33, 64};
	static const int gates[] = {0, 1, 32, 128, 255};
	uint32_t rng = 777;
	for (int s = 0; s < N_SIZES; s++) {
		int w = sizes[s][0], h = sizes[s][1];
		struct image_u8 in, out;
		struct bitmask m;
		assert_int_equal(image_u8_alloc(&in, w, h), 0);
		assert_int_equal(image_u8_alloc(&out, w, h), 0);
		assert_int_equal(bitmask_alloc(&m, w, h), 0);
		int err;
		struct threshold_cpu *c = threshold_cpu_create(w, h, &err);
		assert_non_null(c);
		for (size_t ti = 0; ti < sizeof tiles / sizeof tiles[0]; ti++) {
			int s_ = tiles[ti];
			fill_frame(&in, &rng, (int)ti % 3);
			for (size_t gi = 0; gi < sizeof gates / sizeof gates[0]; gi++) {
				int gate = gates[gi];
				threshold_cpu_tiled(c, &in, s_, gate, &out, NULL);
				for (int y = 0; y < h; y++)
					for (int x = 0; x < w; x++) {
						int tx = x / s_, ty = y / s_, lo = 255, hi = 0;
						for (int yy = (ty - 1) * s_; yy < (ty + 2) * s_; yy++)
							for (int xx = (tx - 1) * s_; xx < (tx + 2) * s_; xx++) {
								if (yy < 0 || yy >= h || xx < 0 || xx >= w)
									continue;
								int v = image_u8_row(&in, yy)[xx];
								lo = v < lo ? v : lo;
								hi = v > hi ? v : hi;
							}
						int want = ref_pixel(lo, hi, image_u8_row(&in, y)[x], gate);
						if (image_u8_row(&out, y)[x] != want)
							fail_msg("tiled %dx%d s=%d gate=%d (%d,%d)", w, h, s_, gate, x, y);
					}
				threshold_cpu_tiled(c, &in, s_, gate, NULL, &m);
				check_mask_equals_image(&m, &out);
			}
		}
		bernsen_tiled_cpu(&in, 10, 32, &out);
		threshold_cpu_tiled(c, &in, 10, 32, NULL, &m);
		check_mask_equals_image(&m, &out);
		threshold_cpu_destroy(c);
		bitmask_free(&m);
		image_u8_free(&out);
		image_u8_free(&in);
	}
}

static int cmp_u8(const void *a, const void *b) { return *(const uint8_t *)a - *(const uint8_t *)b; }

static void test_median_matches_sort(void **state)
{
	(void)state;
	uint32_t rng = 4242;
	for (int s = 0; s < N_SIZES; s++) {
		int w = sizes[s][0], h = sizes[s][1];
		struct image_u8 in, out;
		assert_int_equal(image_u8_alloc(&in, w, h), 0);
		assert_int_equal(image_u8_alloc(&out, w, h), 0);
		int err;
		struct threshold_cpu *c = threshold_cpu_create(w, h, &err);
		assert_non_null(c);
		for (int size = 3; size <= 5; size += 2) {
			for (int kind = 0; kind < 3; kind++) {
				fill_frame(&in, &rng, kind);
				for (int ii = 0; ii < N_ISAS; ii++) {
					if (!use_isa(c, ii))
						continue;
					memset(out.data, 0x5a, (size_t)out.stride * (size_t)h);
					threshold_cpu_median(c, &in, size, &out);
					int r = size / 2;
					for (int y = 0; y < h; y++)
						for (int x = 0; x < w; x++) {
							uint8_t v[25];
							int n = 0;
							for (int j = -r; j <= r; j++)
								for (int i = -r; i <= r; i++) {
									int yy = y + j < 0 ? 0 : y + j >= h ? h - 1 : y + j;
									int xx = x + i < 0 ? 0 : x + i >= w ? w - 1 : x + i;
									v[n++] = image_u8_row(&in, yy)[xx];
								}
							qsort(v, (size_t)n, 1, cmp_u8);
							if (image_u8_row(&out, y)[x] != v[n / 2])
								fail_msg("%s median%d %dx%d (%d,%d): %d want %d", isas[ii],
									 size, w, h, x, y, image_u8_row(&out, y)[x],
									 v[n / 2]);
						}
				}
			}
		}
		struct image_u8 ref; /* the one-shot wrapper (best set) against the last set run */
		assert_int_equal(image_u8_alloc(&ref, w, h), 0);
		threshold_cpu_median(c, &in, 5, &ref);
		median_cpu(&in, 5, &out);
		for (int y = 0; y < h; y++)
			assert_memory_equal(image_u8_row(&out, y), image_u8_row(&ref, y), (size_t)w);
		threshold_cpu_destroy(c);
		image_u8_free(&ref);
		image_u8_free(&out);
		image_u8_free(&in);
	}
}

static void test_gauss_matches_direct_sum(void **state)
{
	(void)state;
	static const float sigmas[] = {0.3f, 0.7f, 1.0f, 1.4f, 2.5f, 4.0f};
	uint32_t rng = 31337;
	for (size_t si = 0; si < sizeof sigmas / sizeof sigmas[0]; si++) {
		int wk[THRESHOLD_GAUSS_MAX_RADIUS + 1];
		int R = threshold_gauss_taps(sigmas[si], wk);
		assert_true(R >= 1 && R <= THRESHOLD_GAUSS_MAX_RADIUS);
		int sum = wk[0];
		assert_true(wk[0] > 0);
		for (int i = 1; i <= R; i++) {
			sum += 2 * wk[i];
			/* the centre takes the rounding slack and may dip one below its neighbour */
			assert_true(wk[i] <= wk[i - 1] + (i == 1));
		}
		assert_int_equal(sum, 256);
		assert_true(wk[R] > 0);
		for (int s = 0; s < N_SIZES; s++) {
			int w = sizes[s][0], h = sizes[s][1];
			struct image_u8 in, out;
			assert_int_equal(image_u8_alloc(&in, w, h), 0);
			assert_int_equal(image_u8_alloc(&out, w, h), 0);
			fill_frame(&in, &rng, s % 3);
			int err;
			struct threshold_cpu *c = threshold_cpu_create(w, h, &err);
			assert_non_null(c);
			for (int ii = 0; ii <= N_ISAS; ii++) {
				if (ii == N_ISAS)
					gauss_cpu(&in, sigmas[si], &out); /* the one-shot wrapper */
				else if (!use_isa(c, ii))
					continue;
				else
					threshold_cpu_gauss(c, &in, sigmas[si], &out);
				for (int y = 0; y < h; y++)
					for (int x = 0; x < w; x++) {
						uint32_t acc = 0;
						for (int j = -R; j <= R; j++)
							for (int i = -R; i <= R; i++) {
								int yy = y + j < 0 ? 0 : y + j >= h ? h - 1 : y + j;
								int xx = x + i < 0 ? 0 : x + i >= w ? w - 1 : x + i;
								acc += (uint32_t)(wk[abs(j)] * wk[abs(i)]) *
								       image_u8_row(&in, yy)[xx];
							}
						if (image_u8_row(&out, y)[x] != (acc + 32768u) >> 16)
							fail_msg("gauss %s sigma %.1f %dx%d (%d,%d)",
								 ii < N_ISAS ? isas[ii] : "one-shot", (double)sigmas[si], w,
								 h, x, y);
					}
			}
			threshold_cpu_destroy(c);
			image_u8_free(&out);
			image_u8_free(&in);
		}
	}
	int wk[THRESHOLD_GAUSS_MAX_RADIUS + 1];
	assert_int_equal(threshold_gauss_taps(0.0f, wk), 0);
	assert_int_equal(wk[0], 256);
}

static void test_bitmask_packing(void **state)
{
	(void)state;
	/* a known pattern: white where (x * 7 + y) % 5 == 0, against a flat gate-0 threshold */
	int w = 131, h = 5;
	struct image_u8 in;
	struct bitmask m;
	assert_int_equal(image_u8_alloc(&in, w, h), 0);
	assert_int_equal(bitmask_alloc(&m, w, h), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			image_u8_row(&in, y)[x] = (x * 7 + y) % 5 == 0 ? 200 : 10;
	int err;
	struct threshold_cpu *c = threshold_cpu_create(w, h, &err);
	assert_non_null(c);
	threshold_cpu_bernsen(c, &in, 1, 0, NULL, &m);
	for (int y = 0; y < h; y++) {
		uint64_t word[3] = {0, 0, 0};
		for (int x = 0; x < w; x++)
			if (image_u8_row(&in, y)[x] == 200)
				word[x / 64] |= (uint64_t)1 << (x % 64);
		for (int k = 0; k < 3; k++)
			assert_true(bitmask_row(&m, y)[k] == word[k]);
	}
	threshold_cpu_destroy(c);
	bitmask_free(&m);
	image_u8_free(&in);
}

static struct threshold_config default_config(int w, int h)
{
	struct threshold_config cfg = {.max_width = w, .max_height = h, .mode = THRESHOLD_BERNSEN,
				       .radius = 6, .gate = 32, .tile = 10, .median = 0, .gauss_sigma = 0.0f};
	return cfg;
}

/* The whole CPU chain from the one-shot reference functions. */
static void reference_chain(const struct threshold_config *cfg, const struct image_u8 *in, struct image_u8 *out)
{
	struct image_u8 a, b;
	assert_int_equal(image_u8_alloc(&a, in->width, in->height), 0);
	assert_int_equal(image_u8_alloc(&b, in->width, in->height), 0);
	const struct image_u8 *src = in;
	if (cfg->median) {
		median_cpu(src, cfg->median, &a);
		src = &a;
	}
	if (cfg->gauss_sigma > 0) {
		gauss_cpu(src, cfg->gauss_sigma, &b);
		src = &b;
	}
	if (cfg->mode == THRESHOLD_TILED)
		bernsen_tiled_cpu(src, cfg->tile, cfg->gate, out);
	else if (cfg->mode == THRESHOLD_BERNSEN)
		bernsen_cpu(src, cfg->radius, cfg->gate, out);
	else if (cfg->mode == THRESHOLD_SAUVOLA)
		threshold_sauvola_cpu(src, cfg->mean_radius, cfg->sauvola_k, cfg->sauvola_range, cfg->gate, out);
	else
		threshold_mean_cpu(src, cfg->mode, cfg->radius, cfg->gate, cfg->mean_radius, cfg->mean_bias, out);
	image_u8_free(&a);
	image_u8_free(&b);
}

static void check_object(struct threshold *t, const struct threshold_config *cfg, uint32_t *rng, int w, int h)
{
	struct image_u8 in, ref;
	struct bitmask m;
	assert_int_equal(image_u8_alloc(&in, w, h), 0);
	assert_int_equal(image_u8_alloc(&ref, w, h), 0);
	assert_int_equal(bitmask_alloc(&m, w, h), 0);
	fill_frame(&in, rng, (int)(test_rand(rng) % 3));
	assert_int_equal(threshold_set_config(t, cfg), 0);
	assert_int_equal(threshold_process(t, &in, &m), 0);
	reference_chain(cfg, &in, &ref);
	check_mask_equals_image(&m, &ref);
	/* split submit / collect gives the same */
	memset(m.bits, 0, (size_t)m.stride_words * (size_t)h * 8);
	assert_int_equal(threshold_submit(t, &in), 0);
	assert_int_equal(threshold_collect(t, &m), 0);
	check_mask_equals_image(&m, &ref);
	/* the borrowed view, from a registered buffer */
	struct bitmask view;
	assert_int_equal(threshold_register_buffer(t, in.data, (size_t)in.stride * (size_t)h), 0);
	assert_int_equal(threshold_submit(t, &in), 0);
	assert_int_equal(threshold_collect_view(t, &view), 0);
	assert_int_equal(view.width, w);
	assert_int_equal(view.height, h);
	check_mask_equals_image(&view, &ref);
	assert_int_equal(threshold_unregister_buffer(t, in.data), 0);
	bitmask_free(&m);
	image_u8_free(&ref);
	image_u8_free(&in);
}

static void run_object_api(const char *backend)
{
	struct threshold_config cfg = default_config(320, 240);
	int err = 1;
	struct threshold *t = threshold_create(&cfg, backend, &err);
	assert_non_null(t);
	assert_int_equal(err, 0);
	uint32_t rng = 5;
	check_object(t, &cfg, &rng, 320, 240);
	check_object(t, &cfg, &rng, 97, 1); /* smaller frames fit the same object */
	check_object(t, &cfg, &rng, 1, 33);
	for (int r = 1; r <= 32; r += 31) {
		cfg.radius = r;
		check_object(t, &cfg, &rng, 201, 77);
	}
	cfg.median = 3;
	check_object(t, &cfg, &rng, 131, 67);
	cfg.median = 5;
	cfg.gauss_sigma = 1.2f;
	check_object(t, &cfg, &rng, 131, 67);
	cfg.median = 0;
	cfg.mode = THRESHOLD_TILED;
	cfg.tile = 12;
	check_object(t, &cfg, &rng, 319, 239);
	for (int mode = THRESHOLD_MEAN; mode <= THRESHOLD_BOTH; mode++) {
		cfg.mode = mode;
		cfg.mean_radius = mode == THRESHOLD_MEAN ? 63 : 1 + mode * 5;
		cfg.mean_bias = mode * 7;
		cfg.median = mode == THRESHOLD_GATED ? 3 : 0;
		check_object(t, &cfg, &rng, 301, 211);
		check_object(t, &cfg, &rng, 7, 130);
	}
	cfg.mode = THRESHOLD_SAUVOLA;
	for (int i = 0; i < 3; i++) {
		cfg.mean_radius = i == 0 ? 63 : i == 1 ? 1 : 16;
		cfg.sauvola_k = i == 0 ? 100 : i == 1 ? 0 : 20;
		cfg.sauvola_range = i == 0 ? 255 : i == 1 ? 1 : 128;
		cfg.median = i == 2 ? 3 : 0;
		check_object(t, &cfg, &rng, 301, 211);
		check_object(t, &cfg, &rng, 7, 130);
	}
	threshold_destroy(t);
}

static void test_object_api_cpu(void **state)
{
	(void)state;
	run_object_api("cpu");
	run_object_api("auto");
}

/* upsample2_part: each enlarged pixel is (9 p + 3 q + 3 r + s + 8) / 16
 * of its source pixel and the neighbours on its side, clamped to the
 * frame; a part's pixels equal the whole frame's at the same place; a
 * one-pixel hole (a 1 px bright dot in a dark blob) becomes a 2 x 2 bright
 * core that Bernsen at radius 2 keeps white; bad parts are refused. */
static void test_upsample2(void **state)
{
	(void)state;
	struct image_u8 src, whole, part, bin;
	assert_int_equal(image_u8_alloc(&src, 9, 7), 0);
	assert_int_equal(image_u8_alloc(&whole, 18, 14), 0);
	assert_int_equal(image_u8_alloc(&part, 18, 14), 0);
	for (int y = 0; y < 7; y++)
		for (int x = 0; x < 9; x++)
			image_u8_row(&src, y)[x] = (uint8_t)((37 * x + 91 * y + 11 * x * y) % 251);
	assert_int_equal(upsample2_part(&src, 0, 0, 9, 7, &whole), 0);
	for (int y = 0; y < 14; y++)
		for (int x = 0; x < 18; x++) {
			const int sx = x / 2, sy = y / 2;
			const int nx = x % 2 ? (sx + 1 < 9 ? sx + 1 : 8) : (sx > 0 ? sx - 1 : 0);
			const int ny = y % 2 ? (sy + 1 < 7 ? sy + 1 : 6) : (sy > 0 ? sy - 1 : 0);
			const int v = 9 * image_u8_row(&src, sy)[sx] + 3 * image_u8_row(&src, sy)[nx] +
				      3 * image_u8_row(&src, ny)[sx] + image_u8_row(&src, ny)[nx];
			assert_int_equal(image_u8_row(&whole, y)[x], (v + 8) / 16);
		}
	part.width = 2 * (7 - 3);
	part.height = 2 * (5 - 2);
	assert_int_equal(upsample2_part(&src, 3, 2, 7, 5, &part), 0);
	for (int y = 0; y < part.height; y++)
		assert_memory_equal(image_u8_row(&part, y), image_u8_row(&whole, y + 4) + 6, (size_t)part.width);
	assert_int_equal(upsample2_part(&src, 3, 2, 8, 5, &part), ERR_RANGE);
	assert_int_equal(upsample2_part(&src, 3, 2, 3, 5, &part), ERR_RANGE);
	assert_int_equal(upsample2_part(&src, -1, 2, 3, 5, &part), ERR_RANGE);
	assert_int_equal(upsample2_part(&src, 5, 4, 9, 8, &part), ERR_RANGE);
	/* A dark blob (60) with a 1 px hole (150): enlarged, the hole's 2 x 2
	 * core reads (9 * 150 + 7 * 60 + 8) / 16 = 111, white against the
	 * blob's 60 at radius 2. */
	for (int y = 0; y < 7; y++)
		memset(image_u8_row(&src, y), 60, 9);
	image_u8_row(&src, 3)[4] = 150;
	part.width = 18;
	part.height = 14;
	assert_int_equal(upsample2_part(&src, 0, 0, 9, 7, &part), 0);
	assert_int_equal(image_u8_row(&part, 6)[8], 111);
	assert_int_equal(image_u8_row(&part, 7)[9], 111);
	assert_int_equal(image_u8_alloc(&bin, 18, 14), 0);
	bernsen_cpu(&part, 2, 16, &bin);
	for (int y = 6; y <= 7; y++)
		for (int x = 8; x <= 9; x++)
			assert_int_not_equal(image_u8_row(&bin, y)[x], 0);
	assert_int_equal(image_u8_row(&bin, 3)[3], 0);
	image_u8_free(&src);
	image_u8_free(&whole);
	image_u8_free(&part);
	image_u8_free(&bin);
}

/* upsample2_lanczos_part: each enlarged pixel is the 6 x 6 weighted sum
 * of the header's Lanczos-3 weights (a quarter pixel before or after its
 * source pixel), neighbours clamped to the frame, rounded and clamped to
 * 0..255; a part equals the whole frame at the same place; a flat frame
 * stays flat; two 1 px holes (150) a wall (60) apart in a dark blob keep a
 * darker wall between them than bilinear's, which blends the wall with
 * both holes (why the upsampled pass reads small symbols so); bad parts
 * are refused. */
static void test_upsample2_lanczos(void **state)
{
	(void)state;
	static const int wb[6] = {2, -17, 69, 228, -34, 8};
	int32_t rows[UPSAMPLE2_LANCZOS_ROWS * 18];
	struct image_u8 src, whole, part, lin;
	assert_int_equal(image_u8_alloc(&src, 9, 7), 0);
	assert_int_equal(image_u8_alloc(&whole, 18, 14), 0);
	assert_int_equal(image_u8_alloc(&part, 18, 14), 0);
	assert_int_equal(image_u8_alloc(&lin, 18, 14), 0);
	for (int y = 0; y < 7; y++)
		for (int x = 0; x < 9; x++)
			image_u8_row(&src, y)[x] = (uint8_t)((37 * x + 91 * y + 11 * x * y) % 251);
	assert_int_equal(upsample2_lanczos_part(&src, 0, 0, 9, 7, &whole, rows), 0);
	for (int y = 0; y < 14; y++)
		for (int x = 0; x < 18; x++) {
			/* Taps i - 3 .. i + 2 (even: a quarter pixel before) or
			 * i - 2 .. i + 3 (odd: after, weights mirrored). */
			long v = 0;
			for (int ky = 0; ky < 6; ky++)
				for (int kx = 0; kx < 6; kx++) {
					int sy = y / 2 - 3 + ky + y % 2, sx = x / 2 - 3 + kx + x % 2;
					sy = sy < 0 ? 0 : sy > 6 ? 6 : sy;
					sx = sx < 0 ? 0 : sx > 8 ? 8 : sx;
					v += (long)(y % 2 ? wb[5 - ky] : wb[ky]) * (x % 2 ? wb[5 - kx] : wb[kx]) *
					     image_u8_row(&src, sy)[sx];
				}
			v = (v + 32768) >> 16;
			assert_int_equal(image_u8_row(&whole, y)[x], v < 0 ? 0 : v > 255 ? 255 : v);
		}
	part.width = 2 * (7 - 3);
	part.height = 2 * (5 - 2);
	assert_int_equal(upsample2_lanczos_part(&src, 3, 2, 7, 5, &part, rows), 0);
	for (int y = 0; y < part.height; y++)
		assert_memory_equal(image_u8_row(&part, y), image_u8_row(&whole, y + 4) + 6, (size_t)part.width);
	assert_int_equal(upsample2_lanczos_part(&src, 3, 2, 8, 5, &part, rows), ERR_RANGE);
	assert_int_equal(upsample2_lanczos_part(&src, 3, 2, 3, 5, &part, rows), ERR_RANGE);
	assert_int_equal(upsample2_lanczos_part(&src, -1, 2, 3, 5, &part, rows), ERR_RANGE);
	assert_int_equal(upsample2_lanczos_part(&src, 5, 4, 9, 8, &part, rows), ERR_RANGE);
	part.width = 18;
	part.height = 14;
	for (int y = 0; y < 7; y++)
		memset(image_u8_row(&src, y), 97, 9);
	assert_int_equal(upsample2_lanczos_part(&src, 0, 0, 9, 7, &part, rows), 0);
	for (int y = 0; y < 14; y++)
		for (int x = 0; x < 18; x++)
			assert_int_equal(image_u8_row(&part, y)[x], 97);
	/* Holes at x = 3 and x = 5 of row 3, the 1 px wall at x = 4 between:
	 * the wall's enlarged pixels (x 8 and 9 of rows 6 and 7) stay further
	 * below the holes' than bilinear's. */
	for (int y = 0; y < 7; y++)
		memset(image_u8_row(&src, y), 60, 9);
	image_u8_row(&src, 3)[3] = image_u8_row(&src, 3)[5] = 150;
	assert_int_equal(upsample2_lanczos_part(&src, 0, 0, 9, 7, &part, rows), 0);
	assert_int_equal(upsample2_part(&src, 0, 0, 9, 7, &lin), 0);
	const int lz_step = image_u8_row(&part, 6)[6] - image_u8_row(&part, 6)[8];
	const int lin_step = image_u8_row(&lin, 6)[6] - image_u8_row(&lin, 6)[8];
	assert_true(lz_step > lin_step);
	image_u8_free(&src);
	image_u8_free(&whole);
	image_u8_free(&part);
	image_u8_free(&lin);
}

/* upsample2_part, upsample2_lanczos_part and upsample3_lanczos_part give
 * the same bytes on every instruction set (upsample_set_isa): parts of every width from 1 on, at
 * the frame's edges and inside, of a frame of noise and of one of black
 * and white specks (Lanczos's lobes past 0 and 255, clamped). */
static void test_upsample_isas(void **state)
{
	(void)state;
	const int w = 83, h = 29;
	int32_t rows[UPSAMPLE2_LANCZOS_ROWS * 3 * 83];
	struct image_u8 src, a, b;
	assert_int_equal(image_u8_alloc(&src, w, h), 0);
	assert_int_equal(image_u8_alloc(&a, 3 * w, 3 * h), 0);
	assert_int_equal(image_u8_alloc(&b, 3 * w, 3 * h), 0);
	assert_int_equal(upsample_set_isa("neon9"), ERR_UNSUPPORTED);
	assert_int_equal(upsample_set_isa("scalar"), 0);
	assert_string_equal(upsample_isa(), "scalar");
	if (upsample_set_isa("avx2") != 0) {
		image_u8_free(&src);
		image_u8_free(&a);
		image_u8_free(&b);
		skip();
	}
	assert_string_equal(upsample_isa(), "avx2");
	uint32_t rng = 12345;
	for (int pat = 0; pat < 2; pat++) {
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++)
				image_u8_row(&src, y)[x] =
					(uint8_t)(pat == 0 ? test_rand(&rng) % 256 : test_rand(&rng) % 3 ? 0 : 255);
		for (int x0 = 0; x0 < w; x0 += 1 + x0 / 4)
			for (int x1 = x0 + 1; x1 <= w; x1 += 1 + (x1 - x0) / 5) {
				const int y0 = (x0 + x1) % 7, y1 = h - (x1 % 5);
				for (int kind = 0; kind < 3; kind++) {
					const int k = kind == 2 ? 3 : 2;
					a.width = b.width = k * (x1 - x0);
					a.height = b.height = k * (y1 - y0);
					memset(a.data, 1, (size_t)a.stride * 3 * (size_t)h);
					memset(b.data, 2, (size_t)b.stride * 3 * (size_t)h);
					for (int isa = 0; isa < 2; isa++) {
						struct image_u8 *d = isa ? &b : &a;
						assert_int_equal(upsample_set_isa(isa ? "avx2" : "scalar"), 0);
						assert_int_equal(
							kind == 2   ? upsample3_lanczos_part(&src, x0, y0, x1, y1, d, rows)
							: kind == 1 ? upsample2_lanczos_part(&src, x0, y0, x1, y1, d, rows)
								    : upsample2_part(&src, x0, y0, x1, y1, d),
							0);
					}
					for (int y = 0; y < a.height; y++)
						if (memcmp(image_u8_row(&a, y), image_u8_row(&b, y), (size_t)a.width))
							fail_msg("kind %d pattern %d part %d..%d x %d..%d: row %d differs",
								 kind, pat, x0, x1, y0, y1, y);
				}
			}
	}
	image_u8_free(&src);
	image_u8_free(&a);
	image_u8_free(&b);
}

/* upsample_sharpen_part: every pixel p + halves (p - b) / 2 of its 5 x 5 blur b
 * by the header's weights, neighbours clamped to the frame, rounded and
 * clamped to 0..255 (computed here directly); a part equals the whole
 * frame at the same place; a flat frame stays flat; a 1 px hole (110) in
 * a dark wall (60), blurred by a camera, stands out from the wall by
 * more after it (the point of it); bad parts are refused. */
static void test_upsample_sharpen(void **state)
{
	(void)state;
	static const int wt[5] = {2, 53, 146, 53, 2};
	int32_t rows[UPSAMPLE_SHARPEN_ROWS * 11];
	struct image_u8 src, whole, part;
	assert_int_equal(image_u8_alloc(&src, 11, 9), 0);
	assert_int_equal(image_u8_alloc(&whole, 11, 9), 0);
	assert_int_equal(image_u8_alloc(&part, 11, 9), 0);
	for (int y = 0; y < 9; y++)
		for (int x = 0; x < 11; x++)
			image_u8_row(&src, y)[x] = (uint8_t)((37 * x + 91 * y + 11 * x * y) % 251);
	for (int halves = 1; halves <= 4; halves++) {
		assert_int_equal(upsample_sharpen_part(&src, 0, 0, 11, 9, halves, &whole, rows), 0);
		for (int y = 0; y < 9; y++)
			for (int x = 0; x < 11; x++) {
				long b = 0;
				for (int ky = 0; ky < 5; ky++)
					for (int kx = 0; kx < 5; kx++) {
						int sy = y - 2 + ky, sx = x - 2 + kx;
						sy = sy < 0 ? 0 : sy > 8 ? 8 : sy;
						sx = sx < 0 ? 0 : sx > 10 ? 10 : sx;
						b += (long)wt[ky] * wt[kx] * image_u8_row(&src, sy)[sx];
					}
				b = (b + 32768) >> 16;
				const long d = (2L + halves) * image_u8_row(&src, y)[x] - halves * b + 1;
				assert_int_equal(image_u8_row(&whole, y)[x], d <= 0 ? 0 : d >= 512 ? 255 : d >> 1);
			}
		part.width = 7 - 3;
		part.height = 6 - 2;
		assert_int_equal(upsample_sharpen_part(&src, 3, 2, 7, 6, halves, &part, rows), 0);
		for (int y = 0; y < part.height; y++)
			assert_memory_equal(image_u8_row(&part, y), image_u8_row(&whole, y + 2) + 3, (size_t)part.width);
	}
	assert_int_equal(upsample_sharpen_part(&src, 3, 2, 7, 6, 0, &part, rows), ERR_RANGE);
	assert_int_equal(upsample_sharpen_part(&src, 3, 2, 7, 6, 5, &part, rows), ERR_RANGE);
	assert_int_equal(upsample_sharpen_part(&src, 3, 2, 8, 6, 1, &part, rows), ERR_RANGE);
	assert_int_equal(upsample_sharpen_part(&src, 3, 2, 3, 6, 1, &part, rows), ERR_RANGE);
	assert_int_equal(upsample_sharpen_part(&src, -1, 2, 3, 6, 1, &part, rows), ERR_RANGE);
	assert_int_equal(upsample_sharpen_part(&src, 8, 2, 12, 6, 1, &part, rows), ERR_RANGE);
	part.width = 11;
	part.height = 9;
	for (int y = 0; y < 9; y++)
		memset(image_u8_row(&src, y), 97, 11);
	assert_int_equal(upsample_sharpen_part(&src, 0, 0, 11, 9, 1, &part, rows), 0);
	for (int y = 0; y < 9; y++)
		for (int x = 0; x < 11; x++)
			assert_int_equal(image_u8_row(&part, y)[x], 97);
	/* A blurred hole: 110 at the centre, 85 beside it, the wall 60. */
	for (int y = 0; y < 9; y++)
		memset(image_u8_row(&src, y), 60, 11);
	image_u8_row(&src, 4)[5] = 110;
	image_u8_row(&src, 4)[4] = image_u8_row(&src, 4)[6] = image_u8_row(&src, 3)[5] = image_u8_row(&src, 5)[5] = 85;
	assert_int_equal(upsample_sharpen_part(&src, 0, 0, 11, 9, 1, &part, rows), 0);
	assert_true(image_u8_row(&part, 4)[5] - image_u8_row(&part, 4)[1] > 110 - 60);
	assert_true(image_u8_row(&part, 4)[5] > 110);
	image_u8_free(&src);
	image_u8_free(&whole);
	image_u8_free(&part);
}

/* upsample_affine_lanczos: the identity map copies the frame; the map of
 * a twofold enlargement (x / 2 - 0.25) gives upsample2_lanczos_part's
 * bytes (its weights are the table's rows 48 and 16); a turned and
 * stretched map of a flat frame stays flat, and one far outside the
 * frame takes its edge; a coefficient that is not finite or an empty
 * output is refused. */
static void test_upsample_affine_lanczos(void **state)
{
	(void)state;
	int32_t rows[UPSAMPLE2_LANCZOS_ROWS * 18];
	struct image_u8 src, out, two;
	assert_int_equal(image_u8_alloc(&src, 9, 7), 0);
	assert_int_equal(image_u8_alloc(&out, 40, 40), 0);
	assert_int_equal(image_u8_alloc(&two, 18, 14), 0);
	for (int y = 0; y < 7; y++)
		for (int x = 0; x < 9; x++)
			image_u8_row(&src, y)[x] = (uint8_t)((37 * x + 91 * y + 11 * x * y) % 251);
	const float identity[6] = {1, 0, 0, 0, 1, 0};
	out.width = 9;
	out.height = 7;
	assert_int_equal(upsample_affine_lanczos(&src, identity, &out), 0);
	for (int y = 0; y < 7; y++)
		assert_memory_equal(image_u8_row(&out, y), image_u8_row(&src, y), 9);
	const float twice[6] = {0.5f, 0, -0.25f, 0, 0.5f, -0.25f};
	out.width = 18;
	out.height = 14;
	assert_int_equal(upsample_affine_lanczos(&src, twice, &out), 0);
	assert_int_equal(upsample2_lanczos_part(&src, 0, 0, 9, 7, &two, rows), 0);
	for (int y = 0; y < 14; y++)
		assert_memory_equal(image_u8_row(&out, y), image_u8_row(&two, y), 18);
	for (int y = 0; y < 7; y++)
		memset(image_u8_row(&src, y), 97, 9);
	const float turned[6] = {0.3f, -0.2f, 4.1f, 0.12f, 0.45f, -1.3f};
	out.width = out.height = 40;
	assert_int_equal(upsample_affine_lanczos(&src, turned, &out), 0);
	for (int y = 0; y < 40; y++)
		for (int x = 0; x < 40; x++)
			assert_int_equal(image_u8_row(&out, y)[x], 97);
	const float nan_map[6] = {NAN, 0, 0, 0, 1, 0};
	assert_int_equal(upsample_affine_lanczos(&src, nan_map, &out), ERR_RANGE);
	out.width = 0;
	assert_int_equal(upsample_affine_lanczos(&src, identity, &out), ERR_RANGE);
	image_u8_free(&src);
	image_u8_free(&out);
	image_u8_free(&two);
}

/* upsample3_lanczos_part: the middle pixel of each three is the source
 * pixel, the other two the 6 x 6 weighted sums of the header's weights (a
 * third of a pixel before or after), neighbours clamped, rounded and
 * clamped to 0..255; a part equals the whole frame at the same place; a
 * flat frame stays flat; a 1 px hole (150) in a dark blob (60) keeps a 3 x 3
 * core that Bernsen at radius 2 reads white where the wall beside it stays
 * black; bad parts are refused. */
static void test_upsample3_lanczos(void **state)
{
	(void)state;
	static const int wb[3][6] = {{3, -24, 98, 208, -37, 8}, {0, 0, 0, 256, 0, 0}, {8, -37, 208, 98, -24, 3}};
	int32_t rows[UPSAMPLE2_LANCZOS_ROWS * 27];
	struct image_u8 src, whole, part, bin;
	assert_int_equal(image_u8_alloc(&src, 9, 7), 0);
	assert_int_equal(image_u8_alloc(&whole, 27, 21), 0);
	assert_int_equal(image_u8_alloc(&part, 27, 21), 0);
	for (int y = 0; y < 7; y++)
		for (int x = 0; x < 9; x++)
			image_u8_row(&src, y)[x] = (uint8_t)((37 * x + 91 * y + 11 * x * y) % 251);
	assert_int_equal(upsample3_lanczos_part(&src, 0, 0, 9, 7, &whole, rows), 0);
	for (int y = 0; y < 21; y++)
		for (int x = 0; x < 27; x++) {
			/* Taps i - 3 .. i + 2 for all three phases (the middle one
			 * the source pixel alone, the last mirrored, shifted). */
			long v = 0;
			for (int ky = 0; ky < 6; ky++)
				for (int kx = 0; kx < 6; kx++) {
					int sy = y / 3 - 3 + ky + (y % 3 == 2), sx = x / 3 - 3 + kx + (x % 3 == 2);
					sy = sy < 0 ? 0 : sy > 6 ? 6 : sy;
					sx = sx < 0 ? 0 : sx > 8 ? 8 : sx;
					v += (long)wb[y % 3][ky] * wb[x % 3][kx] * image_u8_row(&src, sy)[sx];
				}
			v = (v + 32768) >> 16;
			if (x % 3 == 1 && y % 3 == 1)
				assert_int_equal(image_u8_row(&whole, y)[x], image_u8_row(&src, y / 3)[x / 3]);
			assert_true(abs(image_u8_row(&whole, y)[x] - (int)(v < 0 ? 0 : v > 255 ? 255 : v)) <= 1);
		}
	part.width = 3 * (7 - 3);
	part.height = 3 * (5 - 2);
	assert_int_equal(upsample3_lanczos_part(&src, 3, 2, 7, 5, &part, rows), 0);
	for (int y = 0; y < part.height; y++)
		assert_memory_equal(image_u8_row(&part, y), image_u8_row(&whole, y + 6) + 9, (size_t)part.width);
	assert_int_equal(upsample3_lanczos_part(&src, 3, 2, 8, 5, &part, rows), ERR_RANGE);
	assert_int_equal(upsample3_lanczos_part(&src, 3, 2, 3, 5, &part, rows), ERR_RANGE);
	assert_int_equal(upsample3_lanczos_part(&src, -1, 2, 3, 5, &part, rows), ERR_RANGE);
	part.width = 2 * (7 - 3);
	assert_int_equal(upsample3_lanczos_part(&src, 3, 2, 7, 5, &part, rows), ERR_RANGE);
	part.width = 27;
	part.height = 21;
	for (int y = 0; y < 7; y++)
		memset(image_u8_row(&src, y), 97, 9);
	assert_int_equal(upsample3_lanczos_part(&src, 0, 0, 9, 7, &part, rows), 0);
	for (int y = 0; y < 21; y++)
		for (int x = 0; x < 27; x++)
			assert_int_equal(image_u8_row(&part, y)[x], 97);
	for (int y = 0; y < 7; y++)
		memset(image_u8_row(&src, y), 60, 9);
	image_u8_row(&src, 3)[4] = 150;
	assert_int_equal(upsample3_lanczos_part(&src, 0, 0, 9, 7, &part, rows), 0);
	assert_int_equal(image_u8_alloc(&bin, 27, 21), 0);
	bernsen_cpu(&part, 2, 16, &bin);
	for (int y = 9; y <= 11; y++)
		for (int x = 12; x <= 14; x++)
			assert_int_not_equal(image_u8_row(&bin, y)[x], 0);
	assert_int_equal(image_u8_row(&bin, 10)[8], 0);
	image_u8_free(&src);
	image_u8_free(&whole);
	image_u8_free(&part);
	image_u8_free(&bin);
}

static void test_object_api_errors(void **state)
{
	(void)state;
	struct threshold_config cfg = default_config(64, 48);
	int err = 0;
	cfg.radius = 33;
	assert_null(threshold_create(&cfg, "cpu", &err));
	assert_int_equal(err, ERR_RANGE);
	cfg = default_config(64, 48);
	cfg.median = 4;
	assert_null(threshold_create(&cfg, "cpu", &err));
	assert_int_equal(err, ERR_RANGE);
	cfg = default_config(0, 48);
	assert_null(threshold_create(&cfg, "cpu", &err));
	assert_int_equal(err, ERR_RANGE);
	cfg = default_config(64, 48);
	assert_null(threshold_create(&cfg, "opencl", &err));
	assert_int_equal(err, ERR_CONFIG);
	char why[128];
	if (cuda_threshold_probe(why, sizeof why) < 0) {
		assert_null(threshold_create(&cfg, "cuda", &err));
		assert_int_equal(err, ERR_UNSUPPORTED);
	}
	struct threshold *t = threshold_create(&cfg, "cpu", &err);
	assert_non_null(t);
	assert_string_equal(threshold_backend_name(t), "cpu");
	struct image_u8 big, in;
	struct bitmask m, small;
	assert_int_equal(image_u8_alloc(&big, 65, 48), 0);
	assert_int_equal(image_u8_alloc(&in, 64, 48), 0);
	assert_int_equal(bitmask_alloc(&m, 64, 48), 0);
	assert_int_equal(bitmask_alloc(&small, 64, 10), 0);
	assert_int_equal(threshold_collect(t, &m), ERR_AGAIN);
	assert_int_equal(threshold_submit(t, &big), ERR_SIZE);
	assert_int_equal(threshold_process(t, &in, &small), ERR_SIZE);
	struct bitmask wide;
	assert_int_equal(bitmask_alloc(&wide, 65, 48), 0);
	assert_int_equal(threshold_process(t, &in, &wide), ERR_SIZE); /* the mask must be the frame's size */
	bitmask_free(&wide);
	assert_int_equal(threshold_collect_view(t, &wide), ERR_AGAIN);
	assert_int_equal(threshold_process(t, NULL, &m), ERR_SIZE);
	cfg.gate = 256;
	assert_int_equal(threshold_set_config(t, &cfg), ERR_RANGE);
	cfg = default_config(128, 48);
	assert_int_equal(threshold_set_config(t, &cfg), ERR_RANGE);
	cfg = default_config(64, 48);
	cfg.gauss_sigma = 0.1f;
	assert_int_equal(threshold_set_config(t, &cfg), ERR_RANGE);
	cfg = default_config(64, 48);
	cfg.mode = THRESHOLD_MODES;
	assert_int_equal(threshold_set_config(t, &cfg), ERR_RANGE);
	cfg.mode = THRESHOLD_GATED;
	cfg.mean_radius = 0;
	cfg.mean_bias = 16;
	assert_int_equal(threshold_set_config(t, &cfg), ERR_RANGE);
	cfg.mean_radius = 64;
	assert_int_equal(threshold_set_config(t, &cfg), ERR_RANGE);
	cfg.mean_radius = 16;
	cfg.mean_bias = 51;
	assert_int_equal(threshold_set_config(t, &cfg), ERR_RANGE);
	cfg.mean_bias = 50;
	assert_int_equal(threshold_set_config(t, &cfg), 0);
	cfg.mode = THRESHOLD_SAUVOLA;
	cfg.sauvola_k = 101;
	cfg.sauvola_range = 128;
	assert_int_equal(threshold_set_config(t, &cfg), ERR_RANGE);
	cfg.sauvola_k = 20;
	cfg.sauvola_range = 0;
	assert_int_equal(threshold_set_config(t, &cfg), ERR_RANGE);
	cfg.sauvola_range = 256;
	assert_int_equal(threshold_set_config(t, &cfg), ERR_RANGE);
	cfg.sauvola_range = 255;
	assert_int_equal(threshold_set_config(t, &cfg), 0);
	assert_int_equal(threshold_process(t, &in, &m), 0);
	assert_int_equal(threshold_process(t, &in, &m), 0);
	threshold_destroy(t);
	threshold_destroy(NULL);
	bitmask_free(&m);
	bitmask_free(&small);
	image_u8_free(&big);
	image_u8_free(&in);
}

/* CUDA against the CPU on this machine's GPU, if it has one. */
static void test_cuda_matches_cpu(void **state)
{
	(void)state;
	char why[160];
	if (cuda_threshold_probe(why, sizeof why) < 0) {
		print_message("no GPU: %s\n", why);
		skip();
	}
	run_object_api("cuda");
	struct threshold_config cfg = default_config(257, 65);
	int err;
	struct threshold *t = threshold_create(&cfg, "cuda", &err);
	assert_non_null(t);
	uint32_t rng = 1;
	for (int r = 1; r <= 32; r++) {
		cfg.radius = r;
		cfg.gate = r == 1 ? 0 : r == 2 ? 255 : (int)(test_rand(&rng) % 256);
		check_object(t, &cfg, &rng, 257 - r, 65 - r);
	}
	threshold_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bernsen_matches_brute_force),
		cmocka_unit_test(test_mean_modes_match_brute_force),
		cmocka_unit_test(test_mean_extremes),
		cmocka_unit_test(test_sauvola_matches_brute_force),
		cmocka_unit_test(test_sauvola_edge_cases),
		cmocka_unit_test(test_bernsen_on_view),
		cmocka_unit_test(test_exact_buffers_all_isas),
		cmocka_unit_test(test_isa_choice),
		cmocka_unit_test(test_tiled_matches_brute_force),
		cmocka_unit_test(test_median_matches_sort),
		cmocka_unit_test(test_gauss_matches_direct_sum),
		cmocka_unit_test(test_bitmask_packing),
		{"test_closing_matches_brute_force avx2", test_closing_matches_brute_force, NULL, NULL, (void *)"avx2"},
		{"test_closing_matches_brute_force sse2", test_closing_matches_brute_force, NULL, NULL, (void *)"sse2"},
		cmocka_unit_test_setup_teardown(test_closing_again, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_closing_median, pair_setup, pair_teardown),
		{"test_ratio_matches_brute_force avx2", test_ratio_matches_brute_force, NULL, NULL, (void *)"avx2"},
		{"test_ratio_matches_brute_force sse2", test_ratio_matches_brute_force, NULL, NULL, (void *)"sse2"},
		cmocka_unit_test(test_deblur),
		cmocka_unit_test(test_deblur_hysteresis),
		cmocka_unit_test(test_deblur_defocus),
		cmocka_unit_test(test_deblur_isas),
		cmocka_unit_test(test_deblur_defocus_sharp_print),
		cmocka_unit_test(test_deblur_rethreshold),
		cmocka_unit_test(test_deblur_continue),
		cmocka_unit_test(test_deblur_rethreshold_encoded),
		cmocka_unit_test(test_deblur_process_encoded),
		cmocka_unit_test(test_object_api_cpu),
		cmocka_unit_test(test_object_api_errors),
		cmocka_unit_test(test_upsample2),
		cmocka_unit_test(test_upsample2_lanczos),
		cmocka_unit_test(test_upsample3_lanczos),
		cmocka_unit_test(test_upsample_affine_lanczos),
		cmocka_unit_test(test_upsample_sharpen),
		cmocka_unit_test(test_upsample_isas),
		cmocka_unit_test(test_cuda_matches_cpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
