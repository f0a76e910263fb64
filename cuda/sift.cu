/* The GPU SIFT: see sift_cuda.h for the contract and the kernels, sift_math.h for the arithmetic. */
#include "sift_cuda.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bernsen_cuda.h"
#include "sift_math.h"

extern "C" {
#include "../src/core/err.h"
#include "../src/core/log.h"
}

#include "cuda_check.cuh"

#define MAX_OCTAVES 16
#define RMAX SIFT_MAX_TAPS_RADIUS
#define ROW_W 128 /* row pass: outputs a block row */
#define ROW_H 4   /* row pass: rows a block */
#define COL_W 32  /* column pass: tile width */
#define COL_H 64  /* column pass: tile height */
#define COL_T 8   /* column pass: thread rows */
#define WARPS 4   /* warps a block of the orientation and descriptor kernels */
#define DEFAULT_SLOTS 65536

struct oct_info {
	int w, h;
	long long off; /* first float of the octave's level 0 in the pyramid */
};

struct cuda_sift {
	struct cuda_sift_config cfg;
	int slots;
	cudaStream_t stream;
	cudaEvent_t ev[4];
	bool timed;
	/* per frame size */
	int alloc_w, alloc_h;      /* the largest frame the buffers hold */
	int cur_w, cur_h;          /* the frame the octave table describes */
	int n_oct;
	struct oct_info oct[MAX_OCTAVES];
	uint8_t *d_grey;
	float *d_pyr, *d_tmp;
	struct oct_info *d_oct;
	/* per slot */
	struct sift_cand *d_cand;
	struct sift_key *d_key;
	uint8_t *d_desc;
	int *d_count;             /* [0] candidates, [1] keypoints */
	int *h_count;             /* pinned */
	struct sift_key *h_key;   /* pinned */
	uint8_t *h_desc;          /* pinned */
	struct sift_order_item *order;  /* host */
	int64_t overflows;
	int sms;
};

__constant__ float c_taps[SIFT_LEVELS][RMAX + 1];

/* ---- kernels ---------------------------------------------------------------------------- */

/* The frame doubled: OpenCV's INTER_LINEAR resize at scale 2 (source x =
 * X / 2 - 0.25, clamped at the edges). Exact in float. */
__global__ void upscale_kernel(const uint8_t *__restrict__ grey, int w, int h, float *__restrict__ out)
{
	const int X = blockIdx.x * blockDim.x + threadIdx.x, Y = blockIdx.y * blockDim.y + threadIdx.y;
	const int W = 2 * w, H = 2 * h;
	if (X >= W || Y >= H)
		return;
	float fx = X * 0.5f - 0.25f, fy = Y * 0.5f - 0.25f;
	int sx = (int)floorf(fx), sy = (int)floorf(fy);
	fx -= sx;
	fy -= sy;
	if (sx < 0) {
		sx = 0;
		fx = 0;
	}
	if (sx >= w - 1) {
		sx = w - 1;
		fx = 0;
	}
	if (sy < 0) {
		sy = 0;
		fy = 0;
	}
	if (sy >= h - 1) {
		sy = h - 1;
		fy = 0;
	}
	const int sx1 = sx + 1 < w ? sx + 1 : sx, sy1 = sy + 1 < h ? sy + 1 : sy;
	const uint8_t *r0 = grey + (size_t)sy * w, *r1 = grey + (size_t)sy1 * w;
	float a = r0[sx] * (1 - fx) + r0[sx1] * fx;
	float b = r1[sx] * (1 - fx) + r1[sx1] * fx;
	out[(size_t)Y * W + X] = a * (1 - fy) + b * fy;
}

/* Row pass of the blur with taps `level`: a block ROW_H rows of ROW_W
 * outputs, the rows plus R pixels each side in shared memory. */
__global__ void __launch_bounds__(ROW_W *ROW_H)
	blur_rows_kernel(const float *__restrict__ src, float *__restrict__ dst, int w, int h, int level, int R)
{
	__shared__ float s[ROW_H][ROW_W + 2 * RMAX];
	const int tx = threadIdx.x, ty = threadIdx.y;
	const int x0 = blockIdx.x * ROW_W, y = blockIdx.y * ROW_H + ty;
	if (y < h)
		for (int i = tx; i < ROW_W + 2 * R; i += ROW_W)
			s[ty][i] = src[(size_t)y * w + sift_reflect101(x0 - R + i, w)];
	__syncthreads();
	const int x = x0 + tx;
	if (y >= h || x >= w)
		return;
	const float *p = &s[ty][tx + R];
	float acc = c_taps[level][0] * p[0];
	for (int k = 1; k <= R; k++)
		acc += c_taps[level][k] * (p[-k] + p[k]);
	dst[(size_t)y * w + x] = acc;
}

/* Column pass: a block a COL_W x COL_H tile, its rows plus R above and
 * below in shared memory. */
__global__ void __launch_bounds__(COL_W *COL_T)
	blur_cols_kernel(const float *__restrict__ src, float *__restrict__ dst, int w, int h, int level, int R)
{
	__shared__ float s[COL_H + 2 * RMAX][COL_W];
	const int tx = threadIdx.x, ty = threadIdx.y;
	const int x = blockIdx.x * COL_W + tx, y0 = blockIdx.y * COL_H;
	if (x < w)
		for (int i = ty; i < COL_H + 2 * R; i += COL_T)
			s[i][tx] = src[(size_t)sift_reflect101(y0 - R + i, h) * w + x];
	__syncthreads();
	if (x >= w)
		return;
	for (int j = ty; j < COL_H; j += COL_T) {
		const int y = y0 + j;
		if (y >= h)
			break;
		float acc = c_taps[level][0] * s[j + R][tx];
		for (int k = 1; k <= R; k++)
			acc += c_taps[level][k] * (s[j + R - k][tx] + s[j + R + k][tx]);
		dst[(size_t)y * w + x] = acc;
	}
}

/* Level 0 of the next octave: every other pixel (OpenCV's INTER_NEAREST halving). */
__global__ void down_kernel(const float *__restrict__ src, int sw, float *__restrict__ dst, int w, int h)
{
	const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < w && y < h)
		dst[(size_t)y * w + x] = src[(size_t)(2 * y) * sw + 2 * x];
}

/* One thread a pixel of DoG layer blockIdx.z + 1. */
__global__ void extrema_kernel(const float *__restrict__ pyr, struct oct_info o, int octave, float thr,
			       float contrast, struct sift_cand *__restrict__ cand, int *__restrict__ count, int cap)
{
	const int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
	const int layer = blockIdx.z + 1;
	if (c < SIFT_BORDER || c >= o.w - SIFT_BORDER || r < SIFT_BORDER || r >= o.h - SIFT_BORDER)
		return;
	const float *g = pyr + o.off;
	if (!sift_is_extremum(g, (long)o.w * o.h, o.w, layer, r, c, thr))
		return;
	struct sift_cand k;
	if (!sift_refine(g, o.w, o.h, octave, layer, r, c, contrast, &k))
		return;
	const int idx = atomicAdd(count, 1);
	if (idx < cap)
		cand[idx] = k;
}

/* One warp a candidate: its orientation histogram, then a keypoint a peak. */
__global__ void __launch_bounds__(WARPS * 32)
	orient_kernel(const float *__restrict__ pyr, const struct oct_info *__restrict__ oct,
		      const struct sift_cand *__restrict__ cand, int *__restrict__ counts, int cap,
		      struct sift_key *__restrict__ keys)
{
	__shared__ sift_acc s_raw[WARPS][SIFT_ORI_BINS];
	const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
	const int n = min(counts[0], cap);
	for (int i = blockIdx.x * WARPS + wid; i < n; i += gridDim.x * WARPS) {
		for (int b = lane; b < SIFT_ORI_BINS; b += 32)
			s_raw[wid][b] = 0;
		__syncwarp();
		const struct sift_cand k = cand[i];
		const struct oct_info o = oct[k.octave];
		const float *img = pyr + o.off + (long long)k.layer * o.w * o.h;
		const float scl = sift_scale(&k);
		const int R = sift_ori_radius(scl), side = 2 * R + 1;
		for (int t = lane; t < side * side; t += 32)
			sift_ori_sample(img, o.w, o.h, k.c, k.r, t / side - R, t % side - R, scl, s_raw[wid]);
		__syncwarp();
		if (lane == 0) {
			float ang[SIFT_ORI_BINS];
			const int m = sift_ori_peaks(s_raw[wid], ang);
			const int base = atomicAdd(&counts[1], m);
			for (int q = 0; q < m && base + q < cap; q++) {
				struct sift_key key;
				key.octave = k.octave;
				key.layer = k.layer;
				key.ox = (float)k.c + k.xc;
				key.oy = (float)k.r + k.xr;
				key.scl = scl;
				key.angle = ang[q];
				key.response = k.response;
				keys[base + q] = key;
			}
		}
		__syncwarp();
	}
}

/* One warp a keypoint: the 4 x 4 x 8 histogram, then lane 0 makes the bytes. */
__global__ void __launch_bounds__(WARPS * 32)
	desc_kernel(const float *__restrict__ pyr, const struct oct_info *__restrict__ oct,
		    const struct sift_key *__restrict__ keys, const int *__restrict__ counts, int cap,
		    uint8_t *__restrict__ desc)
{
	__shared__ sift_acc s_hist[WARPS][SIFT_HIST_LEN];
	const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
	const int n = min(counts[1], cap);
	for (int i = blockIdx.x * WARPS + wid; i < n; i += gridDim.x * WARPS) {
		for (int b = lane; b < SIFT_HIST_LEN; b += 32)
			s_hist[wid][b] = 0;
		__syncwarp();
		const struct sift_key k = keys[i];
		const struct oct_info o = oct[k.octave];
		const float *img = pyr + o.off + (long long)k.layer * o.w * o.h;
		struct sift_desc_geom gm;
		sift_desc_setup(&k, o.w, o.h, &gm);
		const int side = 2 * gm.radius + 1;
		for (int t = lane; t < side * side; t += 32)
			sift_desc_sample(img, o.w, o.h, &gm, t / side - gm.radius, t % side - gm.radius, s_hist[wid]);
		__syncwarp();
		if (lane == 0)
			sift_desc_finish(s_hist[wid], desc + (size_t)i * SIFT_DESC_LEN);
		__syncwarp();
	}
}

/* ---- host side -------------------------------------------------------------------------- */

extern "C" int cuda_sift_probe(char *why, size_t cap)
{
	return cuda_threshold_probe(why, cap);
}

static void free_frame_buffers(struct cuda_sift *s)
{
	cudaFree(s->d_grey);
	cudaFree(s->d_pyr);
	cudaFree(s->d_tmp);
	s->d_grey = NULL;
	s->d_pyr = s->d_tmp = NULL;
	s->alloc_w = s->alloc_h = 0;
	s->cur_w = s->cur_h = 0;
}

extern "C" void cuda_sift_destroy(struct cuda_sift *s)
{
	if (!s)
		return;
	if (s->stream)
		cudaStreamSynchronize(s->stream);
	free_frame_buffers(s);
	cudaFree(s->d_oct);
	cudaFree(s->d_cand);
	cudaFree(s->d_key);
	cudaFree(s->d_desc);
	cudaFree(s->d_count);
	cudaFreeHost(s->h_count);
	cudaFreeHost(s->h_key);
	cudaFreeHost(s->h_desc);
	for (int i = 0; i < 4; i++)
		if (s->ev[i])
			cudaEventDestroy(s->ev[i]);
	if (s->stream)
		cudaStreamDestroy(s->stream);
	free(s->order);
	free(s);
}

extern "C" struct cuda_sift *cuda_sift_create(const struct cuda_sift_config *cfg, int *err)
{
	struct cuda_sift *s = NULL;
	char why[200];
	float taps[SIFT_LEVELS][RMAX + 1];
	int dev = 0;
	*err = ERR_RANGE;
	if (!cfg || cfg->max_keypoints < 1 || cfg->max_keypoints > OBJECTS_MAX_KEYPOINTS ||
	    !(cfg->contrast_threshold >= 0.0f && cfg->contrast_threshold <= 1.0f) || cfg->max_candidates < 0 ||
	    cfg->max_candidates > (1 << 22))
		return NULL;
	memset(taps, 0, sizeof taps);
	for (int i = 0; i < SIFT_LEVELS; i++)
		if (sift_gauss_taps(sift_level_sigma(i), taps[i], RMAX) < 0)
			return NULL;
	if (cuda_sift_probe(why, sizeof why) < 0) {
		log_error("SIFT cuda: %s", why);
		*err = ERR_DEVICE;
		return NULL;
	}
	*err = ERR_NOMEM;
	s = (struct cuda_sift *)calloc(1, sizeof *s);
	if (!s)
		return NULL;
	*err = ERR_DEVICE;
	s->cfg = *cfg;
	s->slots = cfg->max_candidates ? cfg->max_candidates : DEFAULT_SLOTS;
	if (s->slots < cfg->max_keypoints)
		s->slots = cfg->max_keypoints;
	s->order = (struct sift_order_item *)malloc(sizeof *s->order * (size_t)s->slots);
	if (!s->order) {
		*err = ERR_NOMEM;
		goto fail;
	}
	CUDA_CHECK(cudaGetDevice(&dev));
	CUDA_CHECK(cudaDeviceGetAttribute(&s->sms, cudaDevAttrMultiProcessorCount, dev));
	CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
	for (int i = 0; i < 4; i++)
		CUDA_CHECK(cudaEventCreate(&s->ev[i]));
	CUDA_CHECK(cudaMemcpyToSymbol(c_taps, taps, sizeof taps));
	CUDA_CHECK(cudaMalloc(&s->d_oct, sizeof(struct oct_info) * MAX_OCTAVES));
	CUDA_CHECK(cudaMalloc(&s->d_cand, sizeof(struct sift_cand) * (size_t)s->slots));
	CUDA_CHECK(cudaMalloc(&s->d_key, sizeof(struct sift_key) * (size_t)s->slots));
	CUDA_CHECK(cudaMalloc(&s->d_desc, (size_t)SIFT_DESC_LEN * (size_t)s->slots));
	CUDA_CHECK(cudaMalloc(&s->d_count, 2 * sizeof(int)));
	CUDA_CHECK(cudaHostAlloc(&s->h_count, 2 * sizeof(int), cudaHostAllocDefault));
	CUDA_CHECK(cudaHostAlloc(&s->h_key, sizeof(struct sift_key) * (size_t)s->slots, cudaHostAllocDefault));
	CUDA_CHECK(cudaHostAlloc(&s->h_desc, (size_t)SIFT_DESC_LEN * (size_t)s->slots, cudaHostAllocDefault));
	*err = 0;
	return s;
fail:
	cuda_sift_destroy(s);
	return NULL;
}

/* Octave sizes and offsets of a w x h frame; the buffers grown when needed. */
static int prepare(struct cuda_sift *s, int w, int h)
{
	if (w == s->cur_w && h == s->cur_h)
		return 0;
	int n = sift_octaves(w, h, MAX_OCTAVES);
	long long total = 0;
	int ow = 2 * w, oh = 2 * h, k = 0;
	for (; k < n && ow >= 1 && oh >= 1; k++) {
		s->oct[k].w = ow;
		s->oct[k].h = oh;
		s->oct[k].off = total;
		total += (long long)SIFT_LEVELS * ow * oh;
		ow /= 2;
		oh /= 2;
	}
	s->n_oct = k;
	if (w > s->alloc_w || h > s->alloc_h) {
		int aw = w > s->alloc_w ? w : s->alloc_w, ah = h > s->alloc_h ? h : s->alloc_h;
		free_frame_buffers(s);
		/* Octave 0 of the largest frame bounds every smaller frame's pyramid: each
		 * octave is at most a quarter of the previous one. */
		size_t px0 = (size_t)(2 * aw) * (size_t)(2 * ah);
		CUDA_CHECK(cudaMalloc(&s->d_grey, (size_t)aw * (size_t)ah));
		CUDA_CHECK(cudaMalloc(&s->d_pyr, sizeof(float) * (size_t)SIFT_LEVELS * (px0 + px0 / 3 + 64)));
		CUDA_CHECK(cudaMalloc(&s->d_tmp, sizeof(float) * px0));
		s->alloc_w = aw;
		s->alloc_h = ah;
	}
	if (n > 0)
		CUDA_CHECK(cudaMemcpy(s->d_oct, s->oct, sizeof(struct oct_info) * (size_t)s->n_oct,
				      cudaMemcpyHostToDevice));
	s->cur_w = w;
	s->cur_h = h;
	return 0;
fail:
	free_frame_buffers(s);
	return ERR_DEVICE;
}

/* src -> dst (w x h) through d_tmp with the taps of `level`. */
static int blur(struct cuda_sift *s, const float *src, float *dst, int w, int h, int level, int R)
{
	blur_rows_kernel<<<dim3((unsigned)((w + ROW_W - 1) / ROW_W), (unsigned)((h + ROW_H - 1) / ROW_H)),
			   dim3(ROW_W, ROW_H), 0, s->stream>>>(src, s->d_tmp, w, h, level, R);
	CUDA_CHECK(cudaGetLastError());
	blur_cols_kernel<<<dim3((unsigned)((w + COL_W - 1) / COL_W), (unsigned)((h + COL_H - 1) / COL_H)),
			   dim3(COL_W, COL_T), 0, s->stream>>>(s->d_tmp, dst, w, h, level, R);
	CUDA_CHECK(cudaGetLastError());
	return 0;
fail:
	return ERR_DEVICE;
}

extern "C" int cuda_sift_extract(struct cuda_sift *s, const uint8_t *grey, int width, int height, int stride,
				 struct objects_keypoint *out, int cap, int *n_out)
{
	int R[SIFT_LEVELS], nc, nk, n = 0, blocks;
	float thr;
	if (n_out)
		*n_out = 0;
	if (!s || !grey || !n_out || width < 1 || height < 1 || stride < width || cap < 0 || (cap > 0 && !out))
		return ERR_RANGE;
	if (cap > s->cfg.max_keypoints)
		cap = s->cfg.max_keypoints;
	for (int i = 0; i < SIFT_LEVELS; i++) {
		float t[RMAX + 1];
		R[i] = sift_gauss_taps(sift_level_sigma(i), t, RMAX);
	}
	if (prepare(s, width, height) < 0)
		return ERR_DEVICE;
	s->timed = false;
	CUDA_CHECK(cudaMemsetAsync(s->d_count, 0, 2 * sizeof(int), s->stream));
	CUDA_CHECK(cudaMemcpy2DAsync(s->d_grey, (size_t)width, grey, (size_t)stride, (size_t)width, (size_t)height,
				     cudaMemcpyHostToDevice, s->stream));
	CUDA_CHECK(cudaEventRecord(s->ev[0], s->stream));
	for (int o = 0; o < s->n_oct; o++) {
		const struct oct_info *oc = &s->oct[o];
		float *g = s->d_pyr + oc->off;
		const size_t plane = (size_t)oc->w * (size_t)oc->h;
		const dim3 b16(32, 8), g16((unsigned)((oc->w + 31) / 32), (unsigned)((oc->h + 7) / 8));
		if (o == 0) {
			/* level 1's room holds the doubled frame until level 1 is made */
			upscale_kernel<<<g16, b16, 0, s->stream>>>(s->d_grey, width, height, g + plane);
			CUDA_CHECK(cudaGetLastError());
			if (blur(s, g + plane, g, oc->w, oc->h, 0, R[0]) < 0)
				goto fail;
		} else {
			const struct oct_info *pr = &s->oct[o - 1];
			down_kernel<<<g16, b16, 0, s->stream>>>(
				s->d_pyr + pr->off + (size_t)SIFT_LAYERS * (size_t)pr->w * (size_t)pr->h, pr->w, g, oc->w,
				oc->h);
			CUDA_CHECK(cudaGetLastError());
		}
		for (int i = 1; i < SIFT_LEVELS; i++)
			if (blur(s, g + (size_t)(i - 1) * plane, g + (size_t)i * plane, oc->w, oc->h, i, R[i]) < 0)
				goto fail;
	}
	CUDA_CHECK(cudaEventRecord(s->ev[1], s->stream));
	thr = sift_prefilter(s->cfg.contrast_threshold);
	for (int o = 0; o < s->n_oct; o++) {
		const struct oct_info *oc = &s->oct[o];
		if (oc->w <= 2 * SIFT_BORDER || oc->h <= 2 * SIFT_BORDER)
			continue;
		extrema_kernel<<<dim3((unsigned)((oc->w + 31) / 32), (unsigned)((oc->h + 7) / 8), SIFT_LAYERS),
				 dim3(32, 8), 0, s->stream>>>(s->d_pyr, *oc, o, thr, s->cfg.contrast_threshold,
							      s->d_cand, s->d_count, s->slots);
		CUDA_CHECK(cudaGetLastError());
	}
	blocks = s->sms * 8;
	if (blocks < 1)
		blocks = 1;
	orient_kernel<<<blocks, WARPS * 32, 0, s->stream>>>(s->d_pyr, s->d_oct, s->d_cand, s->d_count, s->slots,
							    s->d_key);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaEventRecord(s->ev[2], s->stream));
	desc_kernel<<<blocks, WARPS * 32, 0, s->stream>>>(s->d_pyr, s->d_oct, s->d_key, s->d_count, s->slots,
							  s->d_desc);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaEventRecord(s->ev[3], s->stream));
	CUDA_CHECK(cudaMemcpyAsync(s->h_count, s->d_count, 2 * sizeof(int), cudaMemcpyDeviceToHost, s->stream));
	CUDA_CHECK(cudaStreamSynchronize(s->stream));
	s->timed = true;
	nc = s->h_count[0];
	nk = s->h_count[1];
	if (nc > s->slots || nk > s->slots) {
		if (s->overflows++ == 0)
			log_warn("SIFT cuda: %d extrema and %d keypoints for %d slots: keypoints lost (logged once)",
				 nc, nk, s->slots);
	}
	nk = nk < s->slots ? nk : s->slots;
	if (nk > 0) {
		CUDA_CHECK(cudaMemcpyAsync(s->h_key, s->d_key, sizeof(struct sift_key) * (size_t)nk,
					   cudaMemcpyDeviceToHost, s->stream));
		CUDA_CHECK(cudaMemcpyAsync(s->h_desc, s->d_desc, (size_t)SIFT_DESC_LEN * (size_t)nk,
					   cudaMemcpyDeviceToHost, s->stream));
		CUDA_CHECK(cudaStreamSynchronize(s->stream));
	}
	for (int i = 0; i < nk; i++) {
		struct sift_order_item *it = &s->order[i];
		sift_frame_pose(&s->h_key[i], &it->x, &it->y, &it->size);
		float a = fmodf(s->h_key[i].angle, 360.0f);
		if (a < 0)
			a += 360.0f;
		it->angle = a >= 360.0f ? 0.0f : a;
		it->response = s->h_key[i].response;
		it->idx = i;
	}
	qsort(s->order, (size_t)nk, sizeof *s->order, sift_order_cmp);
	for (int i = 0; i < nk && n < cap; i++) {
		const struct sift_order_item *it = &s->order[i];
		if (i > 0) {
			const struct sift_order_item *p = &s->order[i - 1];
			if (p->x == it->x && p->y == it->y && p->size == it->size && p->angle == it->angle)
				continue; /* the same extremum reached twice by the refinement */
		}
		struct objects_keypoint *o = &out[n++];
		o->x = it->x;
		o->y = it->y;
		o->size = it->size;
		o->angle_deg = it->angle;
		o->response = it->response;
		memcpy(o->desc, s->h_desc + (size_t)it->idx * SIFT_DESC_LEN, SIFT_DESC_LEN);
	}
	*n_out = n;
	return 0;
fail:
	return ERR_DEVICE;
}

extern "C" int64_t cuda_sift_overflows(const struct cuda_sift *s)
{
	return s ? s->overflows : 0;
}

extern "C" int cuda_sift_stage_times(const struct cuda_sift *s, float *pyramid_us, float *detect_us,
				     float *describe_us)
{
	float a = 0, b = 0, c = 0;
	if (!s || !s->timed)
		return ERR_AGAIN;
	if (cudaEventElapsedTime(&a, s->ev[0], s->ev[1]) != cudaSuccess ||
	    cudaEventElapsedTime(&b, s->ev[1], s->ev[2]) != cudaSuccess ||
	    cudaEventElapsedTime(&c, s->ev[2], s->ev[3]) != cudaSuccess)
		return ERR_DEVICE;
	*pyramid_us = a * 1000;
	*detect_us = b * 1000;
	*describe_us = c * 1000;
	return 0;
}
