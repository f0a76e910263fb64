/*
 * sift_math.h - the arithmetic of the GPU SIFT (cuda/sift.cu) as plain C
 * functions that compile both for the GPU (nvcc, __host__ __device__) and
 * for the CPU (any C11 compiler), so that tests/test_sift_sim.c runs the
 * same per-pixel and per-sample code on the CPU against OpenCV's SIFT.
 *
 * It follows OpenCV 4.6's SIFT (features2d, sift.simd.hpp) step by step
 * with the parameters the OpenCV backend uses (src/objects/sift_opencv.cpp:
 * 3 layers an octave, sigma 1.6, edge threshold 10, the picture doubled
 * first):
 *   - octave images are float grey levels 0..255, L + 3 Gaussian levels an
 *     octave stored one after another (plane = width x height floats,
 *     rows packed); DoG level l is level l + 1 minus level l;
 *   - sift_is_extremum: |D| > the integer prefilter threshold
 *     floor(0.5 * contrast / L * 255) and D >= (or <=, when negative) all 26
 *     neighbours, at pixels 5 .. side - 6 (SIFT_IMG_BORDER);
 *   - sift_refine: up to 5 Newton steps of the quadratic fit, moving to the rounded offset while any
 *     component is >= 0.5 (3 x 3 solve by Cramer's rule, as OpenCV's
 *     Matx::solve); then the contrast test |D(x^)| * L >= contrast
 *     and the edge test tr^2 * r < (r + 1)^2 * det with det > 0;
 *   - sift_ori_sample / sift_ori_peaks: the 36-bin gradient orientation
 *     histogram in a radius round(4.5 s) (s = the keypoint's scale in the
 *     octave), Gaussian weight of sigma 1.5 s, bins by rounding half to
 *     even, smoothed by [1 4 6 4 1] / 16 circularly; every local maximum
 *     >= 0.8 x the highest gives a keypoint, its bin refined by a parabola;
 *     the keypoint angle is 360 - 10 x bin (OpenCV's convention);
 *   - sift_desc_sample / sift_desc_add / sift_desc_finish: 4 x 4 cells of
 *     8 orientation bins over a square of 3 s a cell, rotated to the
 *     keypoint, samples weighted by a Gaussian of sigma 2 cells and spread
 *     trilinearly into (4 + 2) x (4 + 2) x (8 + 2) bins; the wrap bins are
 *     folded back, the vector clamped at 0.2 of its norm, renormalised to
 *     512 and rounded to bytes (saturated at 255);
 *   - angles come from OpenCV's fastAtan2 polynomial (degrees, 0..360), so
 *     that bins fall where OpenCV's fall.
 * Everything is single-precision float as in OpenCV; the GPU's and the
 * CPU's results may still differ in the last bits (fused multiply-add,
 * expf, summation order of the histograms).
 */
#ifndef TT_CUDA_SIFT_MATH_H
#define TT_CUDA_SIFT_MATH_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define SIFT_HD static __host__ __device__ __forceinline__
#else
#define SIFT_HD static inline
#endif

/* Histograms (orientation and descriptor) add in fixed point, 2^-20 a
 * unit, 64 bits: integer addition does not depend on the order, so the
 * warp's atomics on the GPU give the same sums as the CPU's loop, and
 * every run the same keypoints. */
typedef long long sift_acc;
#define SIFT_ACC_SCALE 1048576.0f
#define SIFT_FIX(v) ((sift_acc)llrintf((v) * SIFT_ACC_SCALE))
#ifdef __CUDA_ARCH__
#define SIFT_ADD(p, q) atomicAdd((unsigned long long *)(p), (unsigned long long)(q))
#else
#define SIFT_ADD(p, q) (*(p) += (q))
#endif
#define SIFT_ACC(p, v) SIFT_ADD(p, SIFT_FIX(v))

#define SIFT_LAYERS 3                      /* nOctaveLayers */
#define SIFT_LEVELS (SIFT_LAYERS + 3)      /* Gaussian levels an octave */
#define SIFT_SIGMA 1.6f
#define SIFT_INIT_SIGMA 0.5f
#define SIFT_EDGE 10.0f
#define SIFT_BORDER 5
#define SIFT_MAX_STEPS 5
#define SIFT_ORI_BINS 36
#define SIFT_ORI_SIG 1.5f
#define SIFT_ORI_RADIUS (3 * SIFT_ORI_SIG)
#define SIFT_ORI_PEAK 0.8f
#define SIFT_D 4
#define SIFT_N 8
#define SIFT_DESC_SCL 3.0f
#define SIFT_DESC_MAG_THR 0.2f
#define SIFT_DESC_INT 512.0f
#define SIFT_HIST_LEN ((SIFT_D + 2) * (SIFT_D + 2) * (SIFT_N + 2)) /* 360 */
#define SIFT_DESC_LEN (SIFT_D * SIFT_D * SIFT_N)                   /* 128 */
#define SIFT_MAX_TAPS_RADIUS 16 /* Gaussian radius of the blurs, at most */

/* A keypoint found and refined in an octave (before its orientation). */
struct sift_cand {
	int octave, layer, r, c; /* octave index (0 = the doubled picture), layer 1..L, pixel */
	float xc, xr, xi;        /* sub-pixel, sub-layer offsets, each in (-0.5, 0.5) */
	float response;          /* |D(x^)| */
};

/* A keypoint with its orientation, before its descriptor. */
struct sift_key {
	int octave, layer;
	float ox, oy;    /* position in the octave's pixels: c + xc, r + xr */
	float scl;       /* scale in the octave: sigma 2^((layer + xi) / L) */
	float angle;     /* OpenCV's keypoint angle, degrees */
	float response;
};

/* OpenCV's borderInterpolate for BORDER_REFLECT_101 (any distance). */
SIFT_HD int sift_reflect101(int p, int n)
{
	if (n == 1)
		return 0;
	while (p < 0 || p >= n)
		p = p < 0 ? -p : 2 * n - 2 - p;
	return p;
}

/* cv::fastAtan2: degrees 0..360 of (y, x), a 7th-order polynomial. */
SIFT_HD float sift_atan_deg(float y, float x)
{
	const float p1 = 0.9997878412794807f * 57.29577951308232f, p3 = -0.3258083974640975f * 57.29577951308232f,
		    p5 = 0.1555786518463281f * 57.29577951308232f, p7 = -0.04432655554792128f * 57.29577951308232f;
	const float eps = 2.220446049250313e-16f;
	float ax = fabsf(x), ay = fabsf(y), a, c, c2;
	if (ax >= ay) {
		c = ay / (ax + eps);
		c2 = c * c;
		a = (((p7 * c2 + p5) * c2 + p3) * c2 + p1) * c;
	} else {
		c = ax / (ay + eps);
		c2 = c * c;
		a = 90.f - (((p7 * c2 + p5) * c2 + p3) * c2 + p1) * c;
	}
	if (x < 0)
		a = 180.f - a;
	if (y < 0)
		a = 360.f - a;
	return a;
}

/* The integer prefilter threshold of the DoG extrema. */
SIFT_HD float sift_prefilter(float contrast)
{
	return floorf(0.5f * contrast / SIFT_LAYERS * 255.0f);
}

/* DoG level l at (r, c) of an octave whose levels start at g. */
SIFT_HD float sift_dog(const float *g, long plane, int w, int l, int r, int c)
{
	long i = (long)r * w + c;
	return g[(long)(l + 1) * plane + i] - g[(long)l * plane + i];
}

/* Whether DoG layer l (1..L) has an extremum at (r, c); the caller keeps
 * r, c inside SIFT_BORDER .. side - SIFT_BORDER - 1. */
SIFT_HD int sift_is_extremum(const float *g, long plane, int w, int l, int r, int c, float thr)
{
	float v = sift_dog(g, plane, w, l, r, c);
	if (!(fabsf(v) > thr))
		return 0;
	for (int dl = -1; dl <= 1; dl++)
		for (int dr = -1; dr <= 1; dr++)
			for (int dc = -1; dc <= 1; dc++) {
				if (!dl && !dr && !dc)
					continue;
				float n = sift_dog(g, plane, w, l + dl, r + dr, c + dc);
				if (v > 0 ? !(v >= n) : !(v <= n))
					return 0;
			}
	return 1;
}

/* Solves H x = b as OpenCV's Matx::solve does for 3 x 3 (Cramer's rule,
 * in float). Returns 0 with x = 0 when the determinant is zero. */
SIFT_HD int sift_solve3(const float a[9], const float b[3], float x[3])
{
#define A_(i, j) a[(i) * 3 + (j)]
	float d = A_(0, 0) * (A_(1, 1) * A_(2, 2) - A_(2, 1) * A_(1, 2)) - A_(0, 1) * (A_(1, 0) * A_(2, 2) - A_(2, 0) * A_(1, 2)) +
		  A_(0, 2) * (A_(1, 0) * A_(2, 1) - A_(2, 0) * A_(1, 1));
	x[0] = x[1] = x[2] = 0.0f;
	if (d == 0)
		return 0;
	d = 1 / d;
	x[0] = d * (b[0] * (A_(1, 1) * A_(2, 2) - A_(1, 2) * A_(2, 1)) - A_(0, 1) * (b[1] * A_(2, 2) - A_(1, 2) * b[2]) +
		    A_(0, 2) * (b[1] * A_(2, 1) - A_(1, 1) * b[2]));
	x[1] = d * (A_(0, 0) * (b[1] * A_(2, 2) - A_(1, 2) * b[2]) - b[0] * (A_(1, 0) * A_(2, 2) - A_(1, 2) * A_(2, 0)) +
		    A_(0, 2) * (A_(1, 0) * b[2] - b[1] * A_(2, 0)));
	x[2] = d * (A_(0, 0) * (A_(1, 1) * b[2] - b[1] * A_(2, 1)) - A_(0, 1) * (A_(1, 0) * b[2] - b[1] * A_(2, 0)) +
		    b[0] * (A_(1, 0) * A_(2, 1) - A_(1, 1) * A_(2, 0)));
#undef A_
	return 1;
}

/* Gradient dD and Hessian H (scaled to grey 0..1) of the DoG at (l, r, c). */
SIFT_HD void sift_derivs(const float *g, long plane, int w, int l, int r, int c, float dD[3], float H[9], float *v)
{
	const float img_scale = 1.0f / 255.0f, deriv = img_scale * 0.5f, second = img_scale, cross = img_scale * 0.25f;
#define D_(dl, dr, dc) sift_dog(g, plane, w, l + (dl), r + (dr), c + (dc))
	float v2 = D_(0, 0, 0) * 2;
	*v = D_(0, 0, 0);
	dD[0] = (D_(0, 0, 1) - D_(0, 0, -1)) * deriv;
	dD[1] = (D_(0, 1, 0) - D_(0, -1, 0)) * deriv;
	dD[2] = (D_(1, 0, 0) - D_(-1, 0, 0)) * deriv;
	float dxx = (D_(0, 0, 1) + D_(0, 0, -1) - v2) * second;
	float dyy = (D_(0, 1, 0) + D_(0, -1, 0) - v2) * second;
	float dss = (D_(1, 0, 0) + D_(-1, 0, 0) - v2) * second;
	float dxy = (D_(0, 1, 1) - D_(0, 1, -1) - D_(0, -1, 1) + D_(0, -1, -1)) * cross;
	float dxs = (D_(1, 0, 1) - D_(1, 0, -1) - D_(-1, 0, 1) + D_(-1, 0, -1)) * cross;
	float dys = (D_(1, 1, 0) - D_(1, -1, 0) - D_(-1, 1, 0) + D_(-1, -1, 0)) * cross;
#undef D_
	H[0] = dxx, H[1] = dxy, H[2] = dxs;
	H[3] = dxy, H[4] = dyy, H[5] = dys;
	H[6] = dxs, H[7] = dys, H[8] = dss;
}

/* OpenCV's adjustLocalExtrema for the extremum at (layer, r, c) of octave
 * `octave` (levels at g, w x h): 1 with *out filled when it survives. */
SIFT_HD int sift_refine(const float *g, int w, int h, int octave, int layer, int r, int c, float contrast,
			struct sift_cand *out)
{
	const long plane = (long)w * h;
	float xi = 0, xr = 0, xc = 0, dD[3], H[9], X[3], v;
	int i = 0;
	for (; i < SIFT_MAX_STEPS; i++) {
		sift_derivs(g, plane, w, layer, r, c, dD, H, &v);
		sift_solve3(H, dD, X);
		xi = -X[2];
		xr = -X[1];
		xc = -X[0];
		if (fabsf(xi) < 0.5f && fabsf(xr) < 0.5f && fabsf(xc) < 0.5f)
			break;
		if (fabsf(xi) > (float)(2147483647 / 3) || fabsf(xr) > (float)(2147483647 / 3) ||
		    fabsf(xc) > (float)(2147483647 / 3))
			return 0;
		c += (int)rintf(xc);
		r += (int)rintf(xr);
		layer += (int)rintf(xi);
		if (layer < 1 || layer > SIFT_LAYERS || c < SIFT_BORDER || c >= w - SIFT_BORDER || r < SIFT_BORDER ||
		    r >= h - SIFT_BORDER)
			return 0;
	}
	if (i >= SIFT_MAX_STEPS)
		return 0;
	sift_derivs(g, plane, w, layer, r, c, dD, H, &v);
	float t = dD[0] * xc + dD[1] * xr + dD[2] * xi;
	float contr = v * (1.0f / 255.0f) + t * 0.5f;
	if (fabsf(contr) * SIFT_LAYERS < contrast)
		return 0;
	float tr = H[0] + H[4], det = H[0] * H[4] - H[1] * H[1];
	if (det <= 0 || tr * tr * SIFT_EDGE >= (SIFT_EDGE + 1) * (SIFT_EDGE + 1) * det)
		return 0;
	out->octave = octave;
	out->layer = layer;
	out->r = r;
	out->c = c;
	out->xc = xc;
	out->xr = xr;
	out->xi = xi;
	out->response = fabsf(contr);
	return 1;
}

/* The keypoint's scale in its octave (OpenCV: kpt.size / 2 / 2^octave). */
SIFT_HD float sift_scale(const struct sift_cand *k)
{
	return SIFT_SIGMA * powf(2.0f, ((float)k->layer + k->xi) / SIFT_LAYERS);
}

/* Orientation: the radius of the square of samples, and one sample (i, j)
 * around pixel (px, py) of level img (w x h). Adds its weighted magnitude
 * to raw[36]; nothing for samples on or outside the picture's edge. */
SIFT_HD int sift_ori_radius(float scl)
{
	return (int)rintf(SIFT_ORI_RADIUS * scl);
}

SIFT_HD void sift_ori_sample(const float *img, int w, int h, int px, int py, int i, int j, float scl, sift_acc *raw)
{
	int y = py + i, x = px + j;
	if (y <= 0 || y >= h - 1 || x <= 0 || x >= w - 1)
		return;
	float sig = SIFT_ORI_SIG * scl, expf_scale = -1.f / (2.f * sig * sig);
	float dx = img[(long)y * w + x + 1] - img[(long)y * w + x - 1];
	float dy = img[(long)(y - 1) * w + x] - img[(long)(y + 1) * w + x];
	float wt = expf((float)(i * i + j * j) * expf_scale);
	float ori = sift_atan_deg(dy, dx), mag = sqrtf(dx * dx + dy * dy);
	int bin = (int)rintf((SIFT_ORI_BINS / 360.f) * ori);
	if (bin >= SIFT_ORI_BINS)
		bin -= SIFT_ORI_BINS;
	if (bin < 0)
		bin += SIFT_ORI_BINS;
	SIFT_ACC(&raw[bin], wt * mag);
}

/* Smooths raw[36] and writes OpenCV's keypoint angle of every peak into
 * angles (at most 18: peaks are strict local maxima); returns their number. */
SIFT_HD int sift_ori_peaks(const sift_acc *acc, float *angles)
{
	const int n = SIFT_ORI_BINS;
	float hist[SIFT_ORI_BINS], raw[SIFT_ORI_BINS];
	for (int i = 0; i < n; i++)
		raw[i] = (float)((double)acc[i] / SIFT_ACC_SCALE);
	for (int i = 0; i < n; i++) {
		float m2 = raw[(i + n - 2) % n], m1 = raw[(i + n - 1) % n], p1 = raw[(i + 1) % n], p2 = raw[(i + 2) % n];
		hist[i] = (m2 + p2) * (1.f / 16.f) + (m1 + p1) * (4.f / 16.f) + raw[i] * (6.f / 16.f);
	}
	float omax = hist[0];
	for (int i = 1; i < n; i++)
		omax = fmaxf(omax, hist[i]);
	float thr = omax * SIFT_ORI_PEAK;
	int k = 0;
	for (int j = 0; j < n; j++) {
		int l = j > 0 ? j - 1 : n - 1, r2 = j < n - 1 ? j + 1 : 0;
		if (hist[j] > hist[l] && hist[j] > hist[r2] && hist[j] >= thr) {
			float bin = j + 0.5f * (hist[l] - hist[r2]) / (hist[l] - 2 * hist[j] + hist[r2]);
			bin = bin < 0 ? n + bin : bin >= n ? bin - n : bin;
			float a = 360.f - (360.f / n) * bin;
			if (fabsf(a - 360.f) < 1.1920929e-7f)
				a = 0.f;
			angles[k++] = a;
		}
	}
	return k;
}

/* Descriptor geometry of a keypoint (scale scl in its octave, OpenCV angle). */
struct sift_desc_geom {
	int px, py, radius;
	float cos_t, sin_t; /* divided by the cell width */
	float ori;          /* the descriptor's reference angle, degrees */
};

SIFT_HD void sift_desc_setup(const struct sift_key *k, int w, int h, struct sift_desc_geom *gm)
{
	float ori = 360.f - k->angle;
	if (fabsf(ori - 360.f) < 1.1920929e-7f)
		ori = 0.f;
	gm->ori = ori;
	gm->px = (int)rintf(k->ox);
	gm->py = (int)rintf(k->oy);
	float hist_width = SIFT_DESC_SCL * k->scl;
	int radius = (int)rintf(hist_width * 1.4142135623730951f * (SIFT_D + 1) * 0.5f);
	int diag = (int)sqrt((double)w * w + (double)h * h);
	gm->radius = radius < diag ? radius : diag;
	gm->cos_t = cosf(ori * (float)(3.14159265358979323846 / 180)) / hist_width;
	gm->sin_t = sinf(ori * (float)(3.14159265358979323846 / 180)) / hist_width;
}

/* Sample (i, j) of the descriptor square, spread trilinearly: its eight
 * contributions in fixed point (v[k] goes to hist[*idx + sift_desc_off(k)],
 * k's bits: row, column, orientation), false when it adds nothing (outside
 * the square, or no gradient: adding zeros changes no bin). */
SIFT_HD bool sift_desc_contrib(const float *img, int w, int h, const struct sift_desc_geom *gm, int i, int j,
			       int *idx, sift_acc *v)
{
	const int d = SIFT_D, n = SIFT_N;
	float c_rot = j * gm->cos_t - i * gm->sin_t, r_rot = j * gm->sin_t + i * gm->cos_t;
	float rbin = r_rot + d / 2 - 0.5f, cbin = c_rot + d / 2 - 0.5f;
	int r = gm->py + i, c = gm->px + j;
	if (!(rbin > -1 && rbin < d && cbin > -1 && cbin < d && r > 0 && r < h - 1 && c > 0 && c < w - 1))
		return false;
	float dx = img[(long)r * w + c + 1] - img[(long)r * w + c - 1];
	float dy = img[(long)(r - 1) * w + c] - img[(long)(r + 1) * w + c];
	if (dx == 0.f && dy == 0.f)
		return false;
	const float exp_scale = -1.f / (d * d * 0.5f);
	float wt = expf((c_rot * c_rot + r_rot * r_rot) * exp_scale);
	float obin = (sift_atan_deg(dy, dx) - gm->ori) * (n / 360.f);
	float mag = sqrtf(dx * dx + dy * dy) * wt;
	int r0 = (int)floorf(rbin), c0 = (int)floorf(cbin), o0 = (int)floorf(obin);
	rbin -= r0;
	cbin -= c0;
	obin -= o0;
	if (o0 < 0)
		o0 += n;
	if (o0 >= n)
		o0 -= n;
	float v_r1 = mag * rbin, v_r0 = mag - v_r1;
	float v_rc11 = v_r1 * cbin, v_rc10 = v_r1 - v_rc11;
	float v_rc01 = v_r0 * cbin, v_rc00 = v_r0 - v_rc01;
	float v_rco111 = v_rc11 * obin, v_rco110 = v_rc11 - v_rco111;
	float v_rco101 = v_rc10 * obin, v_rco100 = v_rc10 - v_rco101;
	float v_rco011 = v_rc01 * obin, v_rco010 = v_rc01 - v_rco011;
	float v_rco001 = v_rc00 * obin, v_rco000 = v_rc00 - v_rco001;
	*idx = ((r0 + 1) * (d + 2) + c0 + 1) * (n + 2) + o0;
	v[0] = SIFT_FIX(v_rco000);
	v[1] = SIFT_FIX(v_rco001);
	v[2] = SIFT_FIX(v_rco010);
	v[3] = SIFT_FIX(v_rco011);
	v[4] = SIFT_FIX(v_rco100);
	v[5] = SIFT_FIX(v_rco101);
	v[6] = SIFT_FIX(v_rco110);
	v[7] = SIFT_FIX(v_rco111);
	return true;
}

/* Where contribution k of sift_desc_contrib goes, from its first bin. */
SIFT_HD int sift_desc_off(int k)
{
	return (k >> 2 & 1) * (SIFT_D + 2) * (SIFT_N + 2) + (k >> 1 & 1) * (SIFT_N + 2) + (k & 1);
}

/* Sample (i, j) of the descriptor square: adds it, trilinearly, to hist[360]. */
SIFT_HD void sift_desc_sample(const float *img, int w, int h, const struct sift_desc_geom *gm, int i, int j,
			      sift_acc *hist)
{
	int idx;
	sift_acc v[8];
	if (!sift_desc_contrib(img, w, h, gm, i, j, &idx, v))
		return;
	for (int k = 0; k < 8; k++)
		SIFT_ADD(&hist[idx + sift_desc_off(k)], v[k]);
}

/* The descriptor's bytes from the histogram, in three steps that the GPU
 * spreads over a block (sift_desc_finish is them in a row): element k
 * with its wrap bin folded back (sift_desc_unfold); the norms over all
 * 128, in this order, clamping each at 0.2 of the first and giving the
 * factor that renormalises to 512 (sift_desc_norms, one thread); element
 * k rounded to a byte (sift_desc_byte). */
SIFT_HD float sift_desc_unfold(const sift_acc *hist, int k)
{
	const int d = SIFT_D, n = SIFT_N, cell = k / n, o = k % n;
	const int idx = ((cell / d + 1) * (d + 2) + (cell % d + 1)) * (n + 2);
	const sift_acc v = hist[idx + o] + (o < 2 ? hist[idx + n + o] : 0);
	return (float)((double)v / SIFT_ACC_SCALE);
}

SIFT_HD float sift_desc_norms(float *dst)
{
	float nrm2 = 0;
	for (int k = 0; k < SIFT_DESC_LEN; k++)
		nrm2 += dst[k] * dst[k];
	float thr = sqrtf(nrm2) * SIFT_DESC_MAG_THR;
	nrm2 = 0;
	for (int k = 0; k < SIFT_DESC_LEN; k++) {
		float val = fminf(dst[k], thr);
		dst[k] = val;
		nrm2 += val * val;
	}
	return SIFT_DESC_INT / fmaxf(sqrtf(nrm2), 1.1920929e-7f);
}

SIFT_HD uint8_t sift_desc_byte(float v, float scale)
{
	float r = rintf(v * scale);
	return (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
}

/* Folds the wrap bins, clamps at 0.2 of the norm, renormalises to 512 and
 * rounds to bytes. */
SIFT_HD void sift_desc_finish(const sift_acc *hist, uint8_t *out)
{
	float dst[SIFT_DESC_LEN];
	for (int k = 0; k < SIFT_DESC_LEN; k++)
		dst[k] = sift_desc_unfold(hist, k);
	const float scale = sift_desc_norms(dst);
	for (int k = 0; k < SIFT_DESC_LEN; k++)
		out[k] = sift_desc_byte(dst[k], scale);
}

/* The keypoint in the caller's frame (pixel centres at integers): OpenCV's
 * position (c + xc) 2^octave / 2 less the quarter pixel of its doubling
 * (see src/objects/sift_opencv.cpp), size 2 x scale x 2^octave / 2. */
SIFT_HD void sift_frame_pose(const struct sift_key *k, float *x, float *y, float *size)
{
	float f = (float)(1 << k->octave) * 0.5f;
	*x = k->ox * f - 0.25f;
	*y = k->oy * f - 0.25f;
	*size = k->scl * 2.0f * f;
}

/* A keypoint candidate in the host's final order: strongest response
 * first, then position, size and angle, then the candidate's index, so the
 * order is total and the GPU backend and its CPU simulation keep the same
 * keypoints when a cap cuts the list. For qsort. */
struct sift_order_item {
	float response, y, x, size, angle;
	int idx;
};

/* The order above as a three-way comparison (negative: a first), on the
 * host and on the GPU (whose selection kernels rank by it). */
SIFT_HD int sift_order_compare(const struct sift_order_item *a, const struct sift_order_item *b)
{
	if (a->response != b->response)
		return a->response > b->response ? -1 : 1;
	if (a->y != b->y)
		return a->y < b->y ? -1 : 1;
	if (a->x != b->x)
		return a->x < b->x ? -1 : 1;
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	if (a->angle != b->angle)
		return a->angle < b->angle ? -1 : 1;
	return a->idx - b->idx;
}

/* Whether two keypoints in the order are the same extremum reached twice
 * (OpenCV's removeDuplicatedSorted): the later one of a run is dropped. */
SIFT_HD int sift_order_same(const struct sift_order_item *a, const struct sift_order_item *b)
{
	return a->x == b->x && a->y == b->y && a->size == b->size && a->angle == b->angle;
}

/* The order item of keypoint idx: its pose in the frame, its angle in 0..360. */
SIFT_HD void sift_order_fill(const struct sift_key *k, int idx, struct sift_order_item *it)
{
	sift_frame_pose(k, &it->x, &it->y, &it->size);
	float a = fmodf(k->angle, 360.0f);
	if (a < 0)
		a += 360.0f;
	it->angle = a >= 360.0f ? 0.0f : a;
	it->response = k->response;
	it->idx = idx;
}

static inline int sift_order_cmp(const void *pa, const void *pb)
{
	return sift_order_compare((const struct sift_order_item *)pa, (const struct sift_order_item *)pb);
}

/* Host only: the octave count OpenCV takes for a w x h picture doubled
 * (round(log2(min side of the doubled picture)) - 2) + 1), at most max. */
static inline int sift_octaves(int w, int h, int max)
{
	int m = 2 * (w < h ? w : h);
	if (m < 1)
		return 0;
	int n = (int)lrint(log((double)m) / log(2.0) - 2) + 1;
	return n < 0 ? 0 : n > max ? max : n;
}

/* Host only: the blur applied to make Gaussian level i (0: the doubled
 * picture, assumed blurred by 2 x 0.5, to sigma; i >= 1: level i - 1 to
 * level i), as OpenCV computes it. */
static inline double sift_level_sigma(int i)
{
	if (i == 0) {
		float s = SIFT_SIGMA * SIFT_SIGMA - SIFT_INIT_SIGMA * SIFT_INIT_SIGMA * 4;
		return sqrtf(s > 0.01f ? s : 0.01f);
	}
	double k = pow(2.0, 1.0 / SIFT_LAYERS), prev = pow(k, (double)(i - 1)) * 1.6, total = prev * k;
	return sqrt(total * total - prev * prev);
}

/* Host only: OpenCV's Gaussian kernel (computed in double, stored as float) for sigma (size round(8 sigma + 1)
 * made odd): taps[0] the centre .. taps[radius]; returns the radius, or -1
 * when it exceeds max_radius. */
static inline int sift_gauss_taps(double sigma, float *taps, int max_radius)
{
	int n = ((int)lrint(sigma * 4 * 2 + 1)) | 1, r = n / 2;
	if (r > max_radius)
		return -1;
	double cf[2 * SIFT_MAX_TAPS_RADIUS + 1];
	double scale2 = -0.5 / (sigma * sigma), sum = 0;
	for (int i = 0; i < n; i++) {
		double x = i - (n - 1) * 0.5;
		cf[i] = exp(scale2 * x * x);
		sum += cf[i];
	}
	for (int i = 0; i <= r; i++)
		taps[i] = (float)(cf[r + i] / sum);
	return r;
}

#endif
