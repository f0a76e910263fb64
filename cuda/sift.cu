/* The GPU SIFT: see sift_cuda.h for the contract and the kernels, sift_math.h for the arithmetic. */
#include "sift_cuda.h"

#include <cub/cub.cuh>
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
#define BLUR_W 32  /* blur: output tile width */
#define BLUR_H 32  /* blur: output tile height */
#define BLUR_T 8   /* blur: thread rows */
#define SEL_THREADS 256 /* selection kernels: threads a block */
#define WARPS 8   /* warps a block of the orientation and descriptor kernels */
static_assert(WARPS * 32 >= SIFT_DESC_LEN, "the descriptor kernel gives each element a thread");
#define DEFAULT_SLOTS 65536
#define MAX_REGISTERED 8

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
	float *d_pyr;
	struct oct_info *d_oct;
	/* per slot */
	struct sift_cand *d_cand;
	struct sift_key *d_key;
	int *d_count;             /* [0] candidates, [1] keypoints, [2] kept */
	int *h_count;             /* pinned, 3 */
	/* selection, per slot */
	struct sift_order_item *d_item;
	uint32_t *d_sort_key[2];  /* response order keys, in and sorted */
	int *d_sort_idx[2];       /* keypoint indices, in and sorted */
	int *d_ord;               /* keypoint at each place of the final order */
	int *d_flag, *d_place;    /* 1 for a kept (not duplicate) place; its place among the kept */
	int *d_sel;               /* max_keypoints: keypoint of each output */
	void *d_temp;             /* CUB's scratch */
	size_t temp_bytes;
	struct objects_keypoint *d_out, *h_out; /* max_keypoints, device and pinned */
	int64_t overflows;
	int sms;
	/* the graph of the last frame size and cap */
	cudaGraphExec_t graph;
	int graph_w, graph_h, graph_cap;
	bool no_graph; /* configured, or a capture failed once */
	int extract_cap; /* the cap of the frame being enqueued */
	int width, height; /* the frame being enqueued */
	void *reg[MAX_REGISTERED]; /* page-locked by cuda_sift_register, unlocked at destroy */
	int n_reg;
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

/* The separable blur with taps `level` in one kernel: a block a BLUR_W x
 * BLUR_H tile of outputs; the tile and its apron of R pixels (reflected,
 * 101) come to shared memory, the row pass fills the tile's columns for
 * every row of the apron, then the column pass makes the outputs. The
 * arithmetic, and its order, is that of a row pass over the whole level
 * followed by a column pass (tests/common/sift_sim.h). */
__global__ void __launch_bounds__(BLUR_W *BLUR_T)
	blur_kernel(const float *__restrict__ src, float *__restrict__ dst, int w, int h, int level, int R)
{
	__shared__ float s_in[BLUR_H + 2 * RMAX][BLUR_W + 2 * RMAX];
	__shared__ float s_mid[BLUR_H + 2 * RMAX][BLUR_W];
	const int tx = threadIdx.x, ty = threadIdx.y;
	const int x0 = blockIdx.x * BLUR_W, y0 = blockIdx.y * BLUR_H;
	const int rows = BLUR_H + 2 * R, cols = BLUR_W + 2 * R;
	for (int j = ty; j < rows; j += BLUR_T) {
		const float *row = src + (size_t)sift_reflect101(y0 - R + j, h) * w;
		for (int i = tx; i < cols; i += BLUR_W)
			s_in[j][i] = row[sift_reflect101(x0 - R + i, w)];
	}
	__syncthreads();
	for (int j = ty; j < rows; j += BLUR_T) {
		const float *p = &s_in[j][tx + R];
		float acc = c_taps[level][0] * p[0];
		for (int k = 1; k <= R; k++)
			acc += c_taps[level][k] * (p[-k] + p[k]);
		s_mid[j][tx] = acc;
	}
	__syncthreads();
	const int x = x0 + tx;
	if (x >= w)
		return;
	for (int j = ty; j < BLUR_H; j += BLUR_T) {
		const int y = y0 + j;
		if (y >= h)
			break;
		float acc = c_taps[level][0] * s_mid[j + R][tx];
		for (int k = 1; k <= R; k++)
			acc += c_taps[level][k] * (s_mid[j + R - k][tx] + s_mid[j + R + k][tx]);
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

/*
 * One block a keypoint for the orientation and descriptor histograms: the
 * block's threads take the samples in contiguous chunks, so the lanes of a
 * warp sit across the square and rarely add to one bin at once (with one
 * warp a keypoint and neighbouring samples in neighbouring lanes, their
 * shared atomics met in the same bins and the largest keypoints' warps
 * held each kernel for a millisecond); each warp adds into a histogram of
 * its own (chunk(t0, t1, warp's histogram) takes a thread's samples), and
 * the block sums them. The bins are fixed-point integers, so
 * the sums do not depend on who added what in which order: the same
 * histogram as one thread's loop (sift_math.h). Leaves the sum in
 * hist[0], seen by every thread of the block.
 */
template <int LEN, class Chunk>
static __device__ void block_histogram(int samples, sift_acc (*hist)[LEN], Chunk chunk)
{
	const int tid = threadIdx.x, nt = blockDim.x;
	for (int b = tid; b < WARPS * LEN; b += nt)
		(&hist[0][0])[b] = 0;
	__syncthreads();
	const int per = (samples + nt - 1) / nt;
	chunk(min(tid * per, samples), min((tid + 1) * per, samples), hist[tid >> 5]);
	__syncthreads();
	for (int b = tid; b < LEN; b += nt) {
		sift_acc v = hist[0][b];
		for (int w = 1; w < WARPS; w++)
			v += hist[w][b];
		hist[0][b] = v;
	}
	__syncthreads();
}

/* One block a candidate: its orientation histogram, then a keypoint a peak. */
__global__ void __launch_bounds__(WARPS * 32)
	orient_kernel(const float *__restrict__ pyr, const struct oct_info *__restrict__ oct,
		      const struct sift_cand *__restrict__ cand, int *__restrict__ counts, int cap,
		      struct sift_key *__restrict__ keys)
{
	__shared__ sift_acc s_raw[WARPS][SIFT_ORI_BINS];
	const int n = min(counts[0], cap);
	for (int i = blockIdx.x; i < n; i += gridDim.x) {
		const struct sift_cand k = cand[i];
		const struct oct_info o = oct[k.octave];
		const float *img = pyr + o.off + (long long)k.layer * o.w * o.h;
		const float scl = sift_scale(&k);
		const int R = sift_ori_radius(scl), side = 2 * R + 1;
		block_histogram<SIFT_ORI_BINS>(side * side, s_raw, [&](int t0, int t1, sift_acc *h) {
			for (int t = t0; t < t1; t++)
				sift_ori_sample(img, o.w, o.h, k.c, k.r, t / side - R, t % side - R, scl, h);
		});
		if (threadIdx.x == 0) {
			float ang[SIFT_ORI_BINS];
			const int m = sift_ori_peaks(s_raw[0], ang);
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
		__syncthreads();
	}
}

/* ---- selection: the strongest keypoints, in the host order of sift_math.h ---------------- */

/* Order items and radix keys of every slot: the keypoints' responses
 * (non-negative floats, whose bits order as the values) inverted, so that
 * an ascending sort puts the strongest first; empty slots last. */
__global__ void order_items_kernel(const struct sift_key *__restrict__ keys, const int *__restrict__ counts, int slots,
				   struct sift_order_item *__restrict__ items, uint32_t *__restrict__ sort_key,
				   int *__restrict__ sort_idx)
{
	const int n = min(counts[1], slots);
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < slots; i += gridDim.x * blockDim.x) {
		if (i < n) {
			struct sift_order_item it;
			sift_order_fill(&keys[i], i, &it);
			items[i] = it;
			sort_key[i] = ~__float_as_uint(it.response);
		} else {
			sort_key[i] = 0xffffffffu;
		}
		sort_idx[i] = i;
	}
}

/* After the (stable) sort by response alone: each place's keypoint moves
 * to its rank among the run of equal responses it belongs to, by the
 * whole order (y, x, size, angle, index), so the final order is the
 * host's total order. Runs are short (one extremum's orientations). */
__global__ void order_ties_kernel(const struct sift_order_item *__restrict__ items, const uint32_t *__restrict__ key,
				  const int *__restrict__ idx, const int *__restrict__ counts, int slots,
				  int *__restrict__ ord)
{
	const int n = min(counts[1], slots);
	for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x) {
		const uint32_t k = key[p];
		int lo = p, hi = p + 1;
		while (lo > 0 && key[lo - 1] == k)
			lo--;
		while (hi < n && key[hi] == k)
			hi++;
		const struct sift_order_item me = items[idx[p]];
		int rank = 0;
		for (int q = lo; q < hi; q++)
			if (q != p && sift_order_compare(&items[idx[q]], &me) < 0)
				rank++;
		ord[lo + rank] = idx[p];
	}
}

/* 1 for a place that keeps its keypoint: not a duplicate of the place before. */
__global__ void order_flags_kernel(const struct sift_order_item *__restrict__ items, const int *__restrict__ ord,
				   const int *__restrict__ counts, int slots, int *__restrict__ flag)
{
	const int n = min(counts[1], slots);
	for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < slots; p += gridDim.x * blockDim.x)
		flag[p] = p < n && !(p > 0 && sift_order_same(&items[ord[p - 1]], &items[ord[p]]));
}

/* The first `cap` kept places become the output; counts[2] their number. */
__global__ void order_select_kernel(const int *__restrict__ ord, const int *__restrict__ flag,
				    const int *__restrict__ place, int *__restrict__ counts, int slots, int cap,
				    int *__restrict__ sel)
{
	const int n = min(counts[1], slots);
	for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x) {
		if (flag[p] && place[p] < cap)
			sel[place[p]] = ord[p];
		if (p == n - 1)
			counts[2] = min(cap, place[p] + flag[p]);
	}
}

/* One block an output keypoint: the 4 x 4 x 8 histogram, then its bytes
 * and the keypoint's pose in the frame. */
__global__ void __launch_bounds__(WARPS * 32)
	desc_kernel(const float *__restrict__ pyr, const struct oct_info *__restrict__ oct,
		    const struct sift_key *__restrict__ keys, const struct sift_order_item *__restrict__ items,
		    const int *__restrict__ sel, const int *__restrict__ counts, struct objects_keypoint *__restrict__ out)
{
	__shared__ sift_acc s_hist[WARPS][SIFT_HIST_LEN];
	const int n = counts[2];
	for (int i = blockIdx.x; i < n; i += gridDim.x) {
		const int ki = sel[i];
		const struct sift_key k = keys[ki];
		const struct oct_info o = oct[k.octave];
		const float *img = pyr + o.off + (long long)k.layer * o.w * o.h;
		struct sift_desc_geom gm;
		sift_desc_setup(&k, o.w, o.h, &gm);
		const int side = 2 * gm.radius + 1;
		block_histogram<SIFT_HIST_LEN>(side * side, s_hist, [&](int t0, int t1, sift_acc *h) {
			/* Neighbouring samples often fall in the same eight bins: they
			 * are summed here and added to shared memory once a run. */
			int cur = -1;
			sift_acc acc[8];
			for (int t = t0; t < t1; t++) {
				int idx;
				sift_acc v[8];
				if (!sift_desc_contrib(img, o.w, o.h, &gm, t / side - gm.radius, t % side - gm.radius,
						       &idx, v))
					continue;
				if (idx != cur && cur >= 0)
					for (int q = 0; q < 8; q++)
						SIFT_ADD(&h[cur + sift_desc_off(q)], acc[q]);
				for (int q = 0; q < 8; q++)
					acc[q] = idx == cur ? acc[q] + v[q] : v[q];
				cur = idx;
			}
			if (cur >= 0)
				for (int q = 0; q < 8; q++)
					SIFT_ADD(&h[cur + sift_desc_off(q)], acc[q]);
		});
		/* sift_desc_finish spread over the block: the norms' sums stay on
		 * one thread, in their order; the 128 values wait in the second
		 * warp's histogram, which is summed and free by now. */
		struct objects_keypoint *dst = &out[i];
		float *vals = (float *)s_hist[1];
		__shared__ float scale;
		if (threadIdx.x < SIFT_DESC_LEN)
			vals[threadIdx.x] = sift_desc_unfold(s_hist[0], threadIdx.x);
		__syncthreads();
		if (threadIdx.x == 0) {
			scale = sift_desc_norms(vals);
			const struct sift_order_item it = items[ki];
			dst->x = it.x;
			dst->y = it.y;
			dst->size = it.size;
			dst->angle_deg = it.angle;
			dst->response = it.response;
		}
		__syncthreads();
		if (threadIdx.x < SIFT_DESC_LEN)
			dst->desc[threadIdx.x] = sift_desc_byte(vals[threadIdx.x], scale);
		__syncthreads();
	}
}

/* ---- host side -------------------------------------------------------------------------- */

extern "C" int cuda_sift_probe(char *why, size_t cap)
{
	return cuda_threshold_probe(why, cap);
}

static void drop_graph(struct cuda_sift *s)
{
	if (s->graph)
		cudaGraphExecDestroy(s->graph);
	s->graph = NULL;
}

static void free_frame_buffers(struct cuda_sift *s)
{
	drop_graph(s);
	cudaFree(s->d_grey);
	cudaFree(s->d_pyr);
	s->d_grey = NULL;
	s->d_pyr = NULL;
	s->alloc_w = s->alloc_h = 0;
	s->cur_w = s->cur_h = 0;
}

extern "C" void cuda_sift_destroy(struct cuda_sift *s)
{
	if (!s)
		return;
	if (s->stream)
		cudaStreamSynchronize(s->stream);
	for (int i = 0; i < s->n_reg; i++)
		cudaHostUnregister(s->reg[i]);
	free_frame_buffers(s);
	cudaFree(s->d_oct);
	cudaFree(s->d_cand);
	cudaFree(s->d_key);
	cudaFree(s->d_count);
	cudaFree(s->d_item);
	for (int i = 0; i < 2; i++) {
		cudaFree(s->d_sort_key[i]);
		cudaFree(s->d_sort_idx[i]);
	}
	cudaFree(s->d_ord);
	cudaFree(s->d_flag);
	cudaFree(s->d_place);
	cudaFree(s->d_sel);
	cudaFree(s->d_temp);
	cudaFree(s->d_out);
	cudaFreeHost(s->h_count);
	cudaFreeHost(s->h_out);
	for (int i = 0; i < 4; i++)
		if (s->ev[i])
			cudaEventDestroy(s->ev[i]);
	if (s->stream)
		cudaStreamDestroy(s->stream);
	free(s);
}

extern "C" struct cuda_sift *cuda_sift_create(const struct cuda_sift_config *cfg, int *err)
{
	struct cuda_sift *s = NULL;
	char why[200];
	float taps[SIFT_LEVELS][RMAX + 1];
	int dev = 0;
	size_t sort_bytes = 0, scan_bytes = 0;
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
	s->no_graph = cfg->no_graph != 0;
	s->slots = cfg->max_candidates ? cfg->max_candidates : DEFAULT_SLOTS;
	if (s->slots < cfg->max_keypoints)
		s->slots = cfg->max_keypoints;
	{
		const size_t slots = (size_t)s->slots, mk = (size_t)cfg->max_keypoints;
		CUDA_CHECK(cudaGetDevice(&dev));
		CUDA_CHECK(cudaDeviceGetAttribute(&s->sms, cudaDevAttrMultiProcessorCount, dev));
		CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
		for (int i = 0; i < 4; i++)
			CUDA_CHECK(cudaEventCreate(&s->ev[i]));
		CUDA_CHECK(cudaMemcpyToSymbol(c_taps, taps, sizeof taps));
		CUDA_CHECK(cudaMalloc(&s->d_oct, sizeof(struct oct_info) * MAX_OCTAVES));
		CUDA_CHECK(cudaMalloc(&s->d_cand, sizeof(struct sift_cand) * slots));
		CUDA_CHECK(cudaMalloc(&s->d_key, sizeof(struct sift_key) * slots));
		CUDA_CHECK(cudaMalloc(&s->d_count, 3 * sizeof(int)));
		CUDA_CHECK(cudaMalloc(&s->d_item, sizeof(struct sift_order_item) * slots));
		for (int i = 0; i < 2; i++) {
			CUDA_CHECK(cudaMalloc(&s->d_sort_key[i], sizeof(uint32_t) * slots));
			CUDA_CHECK(cudaMalloc(&s->d_sort_idx[i], sizeof(int) * slots));
		}
		CUDA_CHECK(cudaMalloc(&s->d_ord, sizeof(int) * slots));
		CUDA_CHECK(cudaMalloc(&s->d_flag, sizeof(int) * slots));
		CUDA_CHECK(cudaMalloc(&s->d_place, sizeof(int) * slots));
		CUDA_CHECK(cudaMalloc(&s->d_sel, sizeof(int) * mk));
		CUDA_CHECK(cudaMalloc(&s->d_out, sizeof(struct objects_keypoint) * mk));
		CUDA_CHECK(cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, s->d_sort_key[0], s->d_sort_key[1],
							   s->d_sort_idx[0], s->d_sort_idx[1], s->slots, 0, 32,
							   s->stream));
		CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, s->d_flag, s->d_place, s->slots, s->stream));
		s->temp_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
		CUDA_CHECK(cudaMalloc(&s->d_temp, s->temp_bytes));
		CUDA_CHECK(cudaHostAlloc(&s->h_count, 3 * sizeof(int), cudaHostAllocDefault));
		CUDA_CHECK(cudaHostAlloc(&s->h_out, sizeof(struct objects_keypoint) * mk, cudaHostAllocDefault));
	}
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
	drop_graph(s);
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

static unsigned grid_for(int n, int threads, int max_blocks)
{
	int b = (n + threads - 1) / threads;
	return (unsigned)(b < 1 ? 1 : b > max_blocks ? max_blocks : b);
}

/* Every kernel of one frame (the frame already in d_grey, its size in
 * s->width x s->height, the cap in s->extract_cap) on stream st, ending
 * with the counters' copy to the host. The stage events are recorded only
 * when `events` (kernel by kernel): a plain event record inside a capture
 * would become a graph dependency, not a timestamp, and an external one
 * outside a capture is refused by the runtime. */
static cudaError_t enqueue(struct cuda_sift *s, cudaStream_t st, bool events)
{
	int R[SIFT_LEVELS];
	cudaError_t e;
	size_t tb;
	const int blocks = s->sms * 8 > 0 ? s->sms * 8 : 1;
	const int sel_blocks = s->sms * 4 > 0 ? s->sms * 4 : 1;
	for (int i = 0; i < SIFT_LEVELS; i++) {
		float t[RMAX + 1];
		R[i] = sift_gauss_taps(sift_level_sigma(i), t, RMAX);
	}
	if ((e = cudaMemsetAsync(s->d_count, 0, 3 * sizeof(int), st)) != cudaSuccess)
		return e;
	if (events && (e = cudaEventRecord(s->ev[0], st)) != cudaSuccess)
		return e;
	for (int o = 0; o < s->n_oct; o++) {
		const struct oct_info *oc = &s->oct[o];
		float *g = s->d_pyr + oc->off;
		const size_t plane = (size_t)oc->w * (size_t)oc->h;
		const dim3 b16(32, 8), g16((unsigned)((oc->w + 31) / 32), (unsigned)((oc->h + 7) / 8));
		const dim3 bb(BLUR_W, BLUR_T),
			gb((unsigned)((oc->w + BLUR_W - 1) / BLUR_W), (unsigned)((oc->h + BLUR_H - 1) / BLUR_H));
		if (o == 0) {
			/* level 1's room holds the doubled frame until level 1 is made */
			upscale_kernel<<<g16, b16, 0, st>>>(s->d_grey, s->width, s->height, g + plane);
			blur_kernel<<<gb, bb, 0, st>>>(g + plane, g, oc->w, oc->h, 0, R[0]);
		} else {
			const struct oct_info *pr = &s->oct[o - 1];
			down_kernel<<<g16, b16, 0, st>>>(
				s->d_pyr + pr->off + (size_t)SIFT_LAYERS * (size_t)pr->w * (size_t)pr->h, pr->w, g, oc->w,
				oc->h);
		}
		for (int i = 1; i < SIFT_LEVELS; i++)
			blur_kernel<<<gb, bb, 0, st>>>(g + (size_t)(i - 1) * plane, g + (size_t)i * plane, oc->w, oc->h, i,
						       R[i]);
	}
	if (events && (e = cudaEventRecord(s->ev[1], st)) != cudaSuccess)
		return e;
	const float thr = sift_prefilter(s->cfg.contrast_threshold);
	for (int o = 0; o < s->n_oct; o++) {
		const struct oct_info *oc = &s->oct[o];
		if (oc->w <= 2 * SIFT_BORDER || oc->h <= 2 * SIFT_BORDER)
			continue;
		extrema_kernel<<<dim3((unsigned)((oc->w + 31) / 32), (unsigned)((oc->h + 7) / 8), SIFT_LAYERS),
				 dim3(32, 8), 0, st>>>(s->d_pyr, *oc, o, thr, s->cfg.contrast_threshold, s->d_cand,
						       s->d_count, s->slots);
	}
	orient_kernel<<<blocks, WARPS * 32, 0, st>>>(s->d_pyr, s->d_oct, s->d_cand, s->d_count, s->slots, s->d_key);
	if (events && (e = cudaEventRecord(s->ev[2], st)) != cudaSuccess)
		return e;
	const unsigned gs = grid_for(s->slots, SEL_THREADS, sel_blocks);
	order_items_kernel<<<gs, SEL_THREADS, 0, st>>>(s->d_key, s->d_count, s->slots, s->d_item, s->d_sort_key[0],
						       s->d_sort_idx[0]);
	tb = s->temp_bytes;
	if ((e = cub::DeviceRadixSort::SortPairs(s->d_temp, tb, s->d_sort_key[0], s->d_sort_key[1], s->d_sort_idx[0],
						 s->d_sort_idx[1], s->slots, 0, 32, st)) != cudaSuccess)
		return e;
	order_ties_kernel<<<gs, SEL_THREADS, 0, st>>>(s->d_item, s->d_sort_key[1], s->d_sort_idx[1], s->d_count,
						      s->slots, s->d_ord);
	order_flags_kernel<<<gs, SEL_THREADS, 0, st>>>(s->d_item, s->d_ord, s->d_count, s->slots, s->d_flag);
	tb = s->temp_bytes;
	if ((e = cub::DeviceScan::ExclusiveSum(s->d_temp, tb, s->d_flag, s->d_place, s->slots, st)) != cudaSuccess)
		return e;
	order_select_kernel<<<gs, SEL_THREADS, 0, st>>>(s->d_ord, s->d_flag, s->d_place, s->d_count, s->slots,
							s->extract_cap, s->d_sel);
	desc_kernel<<<blocks, WARPS * 32, 0, st>>>(s->d_pyr, s->d_oct, s->d_key, s->d_item, s->d_sel, s->d_count,
						   s->d_out);
	if (events && (e = cudaEventRecord(s->ev[3], st)) != cudaSuccess)
		return e;
	if ((e = cudaMemcpyAsync(s->h_count, s->d_count, 3 * sizeof(int), cudaMemcpyDeviceToHost, st)) != cudaSuccess)
		return e;
	return cudaGetLastError();
}

/* The graph of the current frame size and cap: kept, or captured now.
 * NULL when capture fails: logged once, and the frames are launched
 * kernel by kernel from then on. */
static cudaGraphExec_t graph_for(struct cuda_sift *s)
{
	if (s->graph && s->graph_w == s->width && s->graph_h == s->height && s->graph_cap == s->extract_cap)
		return s->graph;
	drop_graph(s);
	cudaGraphExec_t exec;
	if (!cuda_capture_graph(
		    s->stream, [s](cudaStream_t st) { return enqueue(s, st, false); }, &exec, "SIFT cuda")) {
		s->no_graph = true;
		return NULL;
	}
	s->graph = exec;
	s->graph_w = s->width;
	s->graph_h = s->height;
	s->graph_cap = s->extract_cap;
	return exec;
}

extern "C" int cuda_sift_extract(struct cuda_sift *s, const uint8_t *grey, int width, int height, int stride,
				 struct objects_keypoint *out, int cap, int *n_out)
{
	int nc, nk, n;
	if (n_out)
		*n_out = 0;
	if (!s || !grey || !n_out || width < 1 || height < 1 || stride < width || cap < 0 || (cap > 0 && !out))
		return ERR_RANGE;
	if (cap > s->cfg.max_keypoints)
		cap = s->cfg.max_keypoints;
	if (prepare(s, width, height) < 0)
		return ERR_DEVICE;
	s->timed = false;
	s->width = width;
	s->height = height;
	s->extract_cap = cap;
	CUDA_CHECK(cudaMemcpy2DAsync(s->d_grey, (size_t)width, grey, (size_t)stride, (size_t)width, (size_t)height,
				     cudaMemcpyHostToDevice, s->stream));
	{
		cudaGraphExec_t exec = s->no_graph ? NULL : graph_for(s);
		if (exec)
			CUDA_CHECK(cudaGraphLaunch(exec, s->stream));
		else
			CUDA_CHECK(enqueue(s, s->stream, true));
		s->timed = !exec;
	}
	CUDA_CHECK(cudaStreamSynchronize(s->stream));
	nc = s->h_count[0];
	nk = s->h_count[1];
	n = s->h_count[2];
	if (nc > s->slots || nk > s->slots) {
		if (s->overflows++ == 0)
			log_warn("SIFT cuda: %d extrema and %d keypoints for %d slots: keypoints lost (logged once)",
				 nc, nk, s->slots);
	}
	if (n < 0 || n > cap) {
		log_error("SIFT cuda: %d keypoints selected for at most %d", n, cap);
		return ERR_DEVICE;
	}
	if (n > 0) {
		CUDA_CHECK(cudaMemcpyAsync(s->h_out, s->d_out, sizeof(struct objects_keypoint) * (size_t)n,
					   cudaMemcpyDeviceToHost, s->stream));
		CUDA_CHECK(cudaStreamSynchronize(s->stream));
		memcpy(out, s->h_out, sizeof(struct objects_keypoint) * (size_t)n);
	}
	*n_out = n;
	return 0;
fail:
	return ERR_DEVICE;
}

extern "C" int cuda_sift_register(struct cuda_sift *s, void *data, size_t bytes)
{
	if (!s || !data || !bytes)
		return ERR_RANGE;
	if (s->n_reg == MAX_REGISTERED)
		return ERR_NOMEM;
	cudaError_t e = cudaHostRegister(data, bytes, cudaHostRegisterDefault);
	if (e == cudaErrorHostMemoryAlreadyRegistered) {
		(void)cudaGetLastError(); /* another stage's: DMA-able for us too, theirs to unlock */
		return 0;
	}
	CUDA_CHECK(e);
	s->reg[s->n_reg++] = data;
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
	    cudaEventElapsedTime(&c, s->ev[2], s->ev[3]) != cudaSuccess) {
		cudaGetLastError();
		return ERR_DEVICE;
	}
	*pyramid_us = a * 1000;
	*detect_us = b * 1000;
	*describe_us = c * 1000;
	return 0;
}

/* ---- matching: the nearest two library keypoints ------------------------------------------ */

#define MATCH_Q 128      /* query keypoints a block, one a thread */
#define MATCH_L 64       /* library descriptors a shared tile */
#define MATCH_CHUNKS 64  /* library chunks at most */
#define DESC_WORDS (OBJECTS_DESC_LEN / 4)

struct match_part {
	uint32_t d1, d2;
	int32_t index;
};

struct cuda_match {
	int n_lib, max_query;
	int sms;
	cudaStream_t stream;
	uint32_t *d_lib;                 /* n_lib x DESC_WORDS */
	struct objects_keypoint *d_query, *h_query; /* max_query */
	struct match_part *d_part;       /* MATCH_CHUNKS x max_query */
	struct objects_nearest *d_out, *h_out; /* max_query */
};

/* Squared distance of two descriptors held as 32 words of 4 bytes each. */
__device__ __forceinline__ uint32_t desc_dist2(const uint32_t *a, const uint32_t *b)
{
	uint32_t acc = 0;
#pragma unroll
	for (int w = 0; w < DESC_WORDS; w++) {
		const uint32_t d = __vabsdiffu4(a[w], b[w]);
		acc = __dp4a(d, d, acc);
	}
	return acc;
}

/* Block (x, y): queries x * MATCH_Q.. against library chunk y (indices
 * y * chunk .. (y + 1) * chunk - 1), scanned in index order. */
__global__ void __launch_bounds__(MATCH_Q)
	nearest_kernel(const uint32_t *__restrict__ lib, int n_lib, int chunk,
		       const struct objects_keypoint *__restrict__ query, int nq, struct match_part *__restrict__ part)
{
	__shared__ uint32_t s_lib[MATCH_L][DESC_WORDS];
	const int q = blockIdx.x * MATCH_Q + threadIdx.x;
	const int first = blockIdx.y * chunk, last = min(n_lib, first + chunk);
	uint32_t qd[DESC_WORDS];
	if (q < nq) {
		const uint32_t *src = (const uint32_t *)query[q].desc;
#pragma unroll
		for (int w = 0; w < DESC_WORDS; w++)
			qd[w] = src[w];
	}
	uint32_t d1 = 0xffffffffu, d2 = 0xffffffffu;
	int best = -1;
	for (int t0 = first; t0 < last; t0 += MATCH_L) {
		const int nt = min(MATCH_L, last - t0);
		__syncthreads();
		for (int i = threadIdx.x; i < nt * DESC_WORDS; i += MATCH_Q)
			s_lib[i / DESC_WORDS][i % DESC_WORDS] = lib[(size_t)t0 * DESC_WORDS + i];
		__syncthreads();
		if (q >= nq)
			continue;
		for (int l = 0; l < nt; l++) {
			const uint32_t d = desc_dist2(qd, s_lib[l]);
			if (d < d1) {
				d2 = d1;
				d1 = d;
				best = t0 + l;
			} else if (d < d2) {
				d2 = d;
			}
		}
	}
	if (q < nq)
		part[(size_t)blockIdx.y * nq + q] = match_part{d1, d2, best};
}

/* The chunks of each query merged in chunk order: a later chunk's nearest
 * wins only when strictly nearer, so ties keep the lower index. */
__global__ void merge_kernel(const struct match_part *__restrict__ part, int chunks, int nq,
			     struct objects_nearest *__restrict__ out)
{
	const int q = blockIdx.x * blockDim.x + threadIdx.x;
	if (q >= nq)
		return;
	uint32_t d1 = 0xffffffffu, d2 = 0xffffffffu;
	int best = -1;
	for (int c = 0; c < chunks; c++) {
		const struct match_part p = part[(size_t)c * nq + q];
		if (p.index < 0)
			continue;
		if (p.d1 < d1) {
			d2 = min(d1, p.d2);
			d1 = p.d1;
			best = p.index;
		} else {
			d2 = min(d2, p.d1);
		}
	}
	out[q] = objects_nearest{best, d1, d2};
}

extern "C" void cuda_match_destroy(struct cuda_match *m)
{
	if (!m)
		return;
	if (m->stream)
		cudaStreamSynchronize(m->stream);
	cudaFree(m->d_lib);
	cudaFree(m->d_query);
	cudaFree(m->d_part);
	cudaFree(m->d_out);
	cudaFreeHost(m->h_query);
	cudaFreeHost(m->h_out);
	if (m->stream)
		cudaStreamDestroy(m->stream);
	free(m);
}

extern "C" struct cuda_match *cuda_match_create(const struct objects_keypoint *lib, int n_lib, int max_query, int *err)
{
	struct cuda_match *m = NULL;
	uint32_t *h_lib = NULL;
	char why[200];
	int dev = 0;
	*err = ERR_RANGE;
	if (n_lib < 0 || n_lib > OBJECTS_MAX_TOTAL || (n_lib > 0 && !lib) || max_query < 1 ||
	    max_query > OBJECTS_MAX_TOTAL)
		return NULL;
	if (cuda_sift_probe(why, sizeof why) < 0) {
		log_error("SIFT cuda matching: %s", why);
		*err = ERR_DEVICE;
		return NULL;
	}
	*err = ERR_NOMEM;
	m = (struct cuda_match *)calloc(1, sizeof *m);
	h_lib = (uint32_t *)malloc(sizeof(uint32_t) * DESC_WORDS * (size_t)(n_lib > 0 ? n_lib : 1));
	if (!m || !h_lib) {
		free(m);
		free(h_lib);
		return NULL;
	}
	*err = ERR_DEVICE;
	m->n_lib = n_lib;
	m->max_query = max_query;
	for (int i = 0; i < n_lib; i++)
		memcpy(h_lib + (size_t)i * DESC_WORDS, lib[i].desc, OBJECTS_DESC_LEN);
	{
		const size_t mq = (size_t)max_query;
		CUDA_CHECK(cudaGetDevice(&dev));
		CUDA_CHECK(cudaDeviceGetAttribute(&m->sms, cudaDevAttrMultiProcessorCount, dev));
		CUDA_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
		CUDA_CHECK(cudaMalloc(&m->d_lib, sizeof(uint32_t) * DESC_WORDS * (size_t)(n_lib > 0 ? n_lib : 1)));
		CUDA_CHECK(cudaMemcpy(m->d_lib, h_lib, sizeof(uint32_t) * DESC_WORDS * (size_t)n_lib,
				      cudaMemcpyHostToDevice));
		CUDA_CHECK(cudaMalloc(&m->d_query, sizeof(struct objects_keypoint) * mq));
		CUDA_CHECK(cudaMalloc(&m->d_part, sizeof(struct match_part) * MATCH_CHUNKS * mq));
		CUDA_CHECK(cudaMalloc(&m->d_out, sizeof(struct objects_nearest) * mq));
		CUDA_CHECK(cudaHostAlloc(&m->h_query, sizeof(struct objects_keypoint) * mq, cudaHostAllocDefault));
		CUDA_CHECK(cudaHostAlloc(&m->h_out, sizeof(struct objects_nearest) * mq, cudaHostAllocDefault));
	}
	free(h_lib);
	*err = 0;
	return m;
fail:
	free(h_lib);
	cuda_match_destroy(m);
	return NULL;
}

extern "C" int cuda_match_nearest(struct cuda_match *m, const struct objects_keypoint *query, int n,
				  struct objects_nearest *out)
{
	if (!m || n < 0 || n > m->max_query || (n > 0 && (!query || !out)))
		return ERR_RANGE;
	if (n == 0)
		return 0;
	if (m->n_lib == 0) {
		for (int i = 0; i < n; i++)
			out[i] = objects_nearest{-1, 0xffffffffu, 0xffffffffu};
		return 0;
	}
	{
		/* Enough chunks that the blocks fill the GPU twice over, each chunk a
		 * whole number of tiles. */
		const int qblocks = (n + MATCH_Q - 1) / MATCH_Q;
		const int tiles = (m->n_lib + MATCH_L - 1) / MATCH_L;
		int chunks = (2 * m->sms + qblocks - 1) / qblocks;
		chunks = chunks < 1 ? 1 : chunks > MATCH_CHUNKS ? MATCH_CHUNKS : chunks > tiles ? tiles : chunks;
		const int chunk = (tiles + chunks - 1) / chunks * MATCH_L;
		chunks = (m->n_lib + chunk - 1) / chunk;
		memcpy(m->h_query, query, sizeof(struct objects_keypoint) * (size_t)n);
		CUDA_CHECK(cudaMemcpyAsync(m->d_query, m->h_query, sizeof(struct objects_keypoint) * (size_t)n,
					   cudaMemcpyHostToDevice, m->stream));
		nearest_kernel<<<dim3((unsigned)qblocks, (unsigned)chunks), MATCH_Q, 0, m->stream>>>(
			m->d_lib, m->n_lib, chunk, m->d_query, n, m->d_part);
		CUDA_CHECK(cudaGetLastError());
		merge_kernel<<<(unsigned)((n + 127) / 128), 128, 0, m->stream>>>(m->d_part, chunks, n, m->d_out);
		CUDA_CHECK(cudaGetLastError());
		CUDA_CHECK(cudaMemcpyAsync(m->h_out, m->d_out, sizeof(struct objects_nearest) * (size_t)n,
					   cudaMemcpyDeviceToHost, m->stream));
		CUDA_CHECK(cudaStreamSynchronize(m->stream));
		memcpy(out, m->h_out, sizeof(struct objects_nearest) * (size_t)n);
	}
	return 0;
fail:
	return ERR_DEVICE;
}
