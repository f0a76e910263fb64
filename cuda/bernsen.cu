/* The GPU threshold stage: see bernsen_cuda.h for the contract. */
#include "bernsen_cuda.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "../src/core/err.h"
#include "../src/core/log.h"
}

#include "cuda_check.cuh"

#define MAX_RADIUS 32
#define TILE_W 64 /* one 64-bit mask word a tile row */
#define THREADS 256
#define MAX_REGISTERED 16
#define MAX_BANDS 8
/* enum threshold_mode (src/threshold/threshold.h), whose bit-exact rules the
 * local-mean kernels follow (threshold_mean_cpu there). */
#define MODE_BERNSEN 0
#define MODE_TILED 1
#define MODE_MEAN 2
#define MODE_GATED 3
#define MODE_EITHER 4
#define MODE_BOTH 5
#define MODE_SAUVOLA 6
#define MAX_MEAN_RADIUS 63
#define MAX_MEAN_BIAS 50
#define MAX_SAUVOLA_K 100
#define MAX_SAUVOLA_RANGE 255
#define SAUVOLA_CHUNK 1024 /* columns a block of the Sauvola row kernel decides (32 mask words) */
#define MEAN_COL_ROWS 64 /* rows a thread of the column-sum kernel slides down */

struct registered {
	const uint8_t *p;
	size_t n;
	bool owned; /* registered by this stage (else by another stage of the process) */
};

/* A frame's launch sequence (upload, kernels, download), captured once as
 * a CUDA graph for one source buffer, size, mask pair slot and
 * configuration, and launched as one call: on the H200 host each CUDA call
 * cost 10-20 us of the submitting thread's CPU, a graph of three nodes
 * about as much as one. The Bernsen gate, which follows the frame
 * (src/pipeline's frame gate), is set in the exec's kernel node instead of
 * keying a graph. */
struct thr_graph {
	const uint8_t *src;
	int src_stride, width, height, cur;
	bool download, extremes;
	struct cuda_threshold_config cfg; /* gate zero where gate_nodes carry it */
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	/* The Bernsen kernel's nodes, one a band (none: the gate is part of the key). */
	cudaGraphNode_t gate_nodes[MAX_BANDS];
	int n_gate_nodes;
	int gate; /* the gate the exec's kernel nodes hold */
	uint64_t used;             /* for replacing the least recently used */
};
/* Three capture ring slots x two mask slots make six in a steady stream. */
#define THR_GRAPHS 8

struct cuda_threshold {
	struct cuda_threshold_config cfg;
	/* Kernels run on `stream`. A frame cut into bands uploads on s_up and
	 * downloads on s_down, so that band i's kernel overlaps band i+1's
	 * upload and band i-1's download; events order the three. */
	cudaStream_t stream, s_up, s_down;
	cudaEvent_t ev_up[MAX_BANDS], ev_k[MAX_BANDS];
	/* A banded frame forks s_up and s_down from `stream` and joins them
	 * back, so that the whole of it can be captured into one graph. */
	cudaEvent_t ev_split, ev_merge;
	uint8_t *d_grey, *d_pre_a, *d_pre_b;
	uint16_t *d_gauss_tmp;
	uint8_t *d_tile_lo, *d_tile_hi, *d_tile_t;
	uint16_t *d_mean_col;  /* local mean: column sums over the window's rows */
	uint32_t *d_sq_col;    /* Sauvola: column sums of the squares */
	uint32_t *d_mean_mask; /* local mean's verdict, laid out as d_mask (fused modes) */
	/* Two device masks alternating per submit, as the host ones: the GPU
	 * segmenter (or a late fetch) still reads one frame's mask while the
	 * next frame's kernels write the other. */
	uint32_t *d_masks[2];
	uint32_t *d_mask; /* d_masks[cur] */
	uint8_t *h_grey;  /* pinned staging for frames not registered */
	/* Two pinned host masks, alternating per submit: the mask a collect
	 * hands out (collect_view) is still being read while the next frame's
	 * submit downloads into the other one. */
	uint64_t *h_masks[2];
	uint64_t *h_mask; /* h_masks[cur]: the one the last submit fills */
	int cur;
	bool skip_download; /* cuda_threshold_set_download(t, 0): submits leave the mask on the GPU */
	bool download;      /* the frame in flight's mask is queued for the host */
	/* Block extremes (cuda_threshold_set_extremes): computed from the
	 * uploaded grey on s_ext, a branch beside the threshold's kernels
	 * (forked after the upload, joined before ev_done), into d_ext and
	 * back into h_ext[cur], which alternate like the masks. */
	bool want_extremes, extremes;
	cudaStream_t s_ext;
	cudaEvent_t ev_fork, ev_join;
	uint8_t *d_ext, *h_ext[2];
	const uint8_t *done_ext; /* the frame last collected's, or NULL */
	/* The frame last collected, for cuda_threshold_fetch_mask. */
	const uint32_t *done_d;
	uint64_t *done_h;
	bool done_down;
	int done_words, done_height;
	cudaStream_t s_fetch; /* late fetches: not behind the next frame's work */
	int width, height, words; /* the frame in flight; words = 64-bit words a mask row */
	int src_stride;           /* bytes a row of the frame being uploaded */
	bool pending, timed;
	cudaStream_t last; /* the stream of the frame's last operation */
	/* Recorded on `last` at the end of a submit: collect waits for it, not
	 * for the stream, behind which a GPU consumer of the mask (the
	 * segmenter) may have queued its own work. */
	cudaEvent_t ev_done;
	cudaEvent_t ev[4]; /* profile: before upload, after upload, after kernels, after download */
	struct registered reg[MAX_REGISTERED];
	int n_reg;
	struct thr_graph graphs[THR_GRAPHS];
	int n_graphs;
	uint64_t n_launch;
	bool no_graph; /* a capture failed once: kernel by kernel from then on */
};

/* ---- kernels ---- */

static __device__ __forceinline__ int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

static __device__ __forceinline__ bool bernsen_white(int lo, int hi, int v, int gate)
{
	int t = (lo + hi) >> 1;
	if (hi - lo < gate)
		t = t < 128 ? 255 : 0;
	return v > t;
}

/* The tile and its apron (iw x ih pixels from frame position tx, ty, edges
 * clamped, which equals cropping the window) into s_in, row pitch pi.
 * Eight loads in flight a thread: one at a time left the block waiting on
 * memory latency for most of its life. */
static __device__ __forceinline__ void load_tile(const uint8_t *__restrict__ d_in, int pitch, int w, int h, int tx,
						 int ty, int iw, int ih, uint8_t *s_in, int pi)
{
	const int n_in = iw * ih, tid = threadIdx.x;
	for (int base = 0; base < n_in; base += 8 * THREADS) {
		uint8_t v[8];
#pragma unroll
		for (int j = 0; j < 8; j++) {
			int i = base + j * THREADS + tid;
			if (i < n_in) {
				int row = i / iw, col = i - row * iw;
				int gy = clampi(ty + row, 0, h - 1), gx = clampi(tx + col, 0, w - 1);
				v[j] = d_in[(size_t)gy * pitch + gx];
			}
		}
#pragma unroll
		for (int j = 0; j < 8; j++) {
			int i = base + j * THREADS + tid;
			if (i < n_in) {
				int row = i / iw;
				s_in[row * pi + i - row * iw] = v[j];
			}
		}
	}
}

/* Frame pixel (gx, gy) of grey v, its window's extremes lo and hi, by the
 * rule of `mode`: Bernsen's (§1), or where the window passes the gate the
 * other mask's bit (d_mw) alone, or with Bernsen's. */
static __device__ __forceinline__ bool tile_white(int lo, int hi, int v, int gate, int gx, int gy, int mode,
						  const uint32_t *__restrict__ d_mw, int mask_words32)
{
	bool white = bernsen_white(lo, hi, v, gate);
	if (mode != MODE_BERNSEN && hi - lo >= gate) {
		bool mw = (d_mw[(size_t)gy * mask_words32 + gx / 32] >> (gx & 31)) & 1u;
		white = mode == MODE_GATED ? mw : mode == MODE_EITHER ? (white || mw) : (white && mw);
	}
	return white;
}

/* The tile's th rows of TILE_W pixels into the mask, a warp a 32-pixel
 * segment of a row turned into one ballot: white(y, x) tells tile pixel
 * (x, y), asked only for pixels inside the frame. */
template <typename F>
static __device__ __forceinline__ void emit_tile(int th, int x0, int y0, int w, int h, uint32_t *__restrict__ d_mask,
						 int mask_words32, F white_at)
{
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	for (int seg = warp; seg < th * (TILE_W / 32); seg += THREADS / 32) {
		int y = seg / (TILE_W / 32), xs = (seg % (TILE_W / 32)) * 32, x = xs + lane;
		int gy = y0 + y;
		bool white = x0 + x < w && gy < h && white_at(y, x);
		unsigned bits = __ballot_sync(0xffffffffu, white);
		if (lane == 0 && gy < h)
			d_mask[(size_t)gy * mask_words32 + (x0 + xs) / 32] = bits;
	}
}

/* Shared-memory row pitch whose 4-byte word count is odd, so that a warp
 * walking down 32 different rows of one column hits 32 different banks. */
static __host__ __device__ __forceinline__ int odd_word_pitch(int n)
{
	int p = (n + 3) & ~3;
	return ((p >> 2) & 1) ? p : p + 4;
}

static size_t bernsen_smem_bytes(int r, int th)
{
	int iw = TILE_W + 2 * r, ih = th + 2 * r, pi = odd_word_pitch(iw), po = odd_word_pitch(TILE_W);
	return (size_t)ih * pi + 2 * (size_t)th * pi + 2 * (size_t)th * po;
}

template <bool MAX> static __device__ __forceinline__ int pick(int a, int b) { return MAX ? max(a, b) : min(a, b); }

/* Suffix of one block [start, end) of a strided line; entries below n_out are stored. */
template <bool MAX>
static __device__ __forceinline__ void scan_suffix(const uint8_t *src, uint8_t *dst, int step, int start, int end,
						   int n_out)
{
	int acc = MAX ? 0 : 255, i = end - 1;
	for (; i >= n_out; i--)
		acc = pick<MAX>(acc, src[i * step]);
#pragma unroll 4
	for (; i >= start; i--) {
		acc = pick<MAX>(acc, src[i * step]);
		dst[i * step] = (uint8_t)acc;
	}
}

/* Prefix of one block, joined into the output one window (k) back. */
template <bool MAX>
static __device__ __forceinline__ void scan_prefix(const uint8_t *src, uint8_t *dst, int step, int start, int end,
						   int k, int n_out)
{
	int acc = MAX ? 0 : 255, stop = min(end, n_out + k - 1);
#pragma unroll 4
	for (int i = start; i < stop; i++) {
		acc = pick<MAX>(acc, src[i * step]);
		int o = (i - k + 1) * step;
		dst[o] = (uint8_t)pick<MAX>(dst[o], acc);
	}
}

/*
 * Per-pixel Bernsen, fused: one block makes a 64 x TH tile of the mask. It
 * loads the tile and its r-pixel apron (edges clamped, which equals cropping
 * the window), runs van Herk / Gil-Werman min and max down the columns then
 * along the rows in shared memory (each thread scans one block of 2r+1
 * pixels for min or for max: suffix pass, barrier, prefix pass), and each
 * warp turns 32 pixels of the §1 rule into one 32-bit ballot. RT > 0 makes
 * the radius a compile-time constant (loop bounds, divisions); RT == 0 takes
 * any radius. TH is smaller for small radii: more blocks, less apron.
 */
template <int RT, int TH>
__global__ void __launch_bounds__(THREADS) bernsen_kernel(const uint8_t *__restrict__ d_in, int pitch, int w, int h,
							   int r_run, int gate, uint32_t *__restrict__ d_mask,
							   int mask_words32, int row0, const uint32_t *__restrict__ d_mw,
							   int mode)
{
	extern __shared__ uint8_t smem[];
	const int r = RT > 0 ? RT : r_run;
	const int k = 2 * r + 1, iw = TILE_W + 2 * r, ih = TH + 2 * r;
	const int pi = odd_word_pitch(iw), po = odd_word_pitch(TILE_W);
	uint8_t *s_in = smem;
	uint8_t *s_vmin = s_in + ih * pi, *s_vmax = s_vmin + TH * pi;
	uint8_t *s_hmin = s_vmax + TH * pi, *s_hmax = s_hmin + TH * po;
	const int x0 = blockIdx.x * TILE_W, y0 = row0 + blockIdx.y * TH, tid = threadIdx.x;

	load_tile(d_in, pitch, w, h, x0 - r, y0 - r, iw, ih, s_in, pi);
	__syncthreads();

	/* Columns. Min and max are separate tasks: twice the threads, half the chain. */
	const int nbv = (TH + k - 1) / k;
	for (int task = tid; task < 2 * iw * nbv; task += THREADS) {
		int which = task >= iw * nbv, rest = which ? task - iw * nbv : task;
		int col = rest % iw, start = (rest / iw) * k, end = min(start + k, ih);
		if (which)
			scan_suffix<true>(s_in + col, s_vmax + col, pi, start, end, TH);
		else
			scan_suffix<false>(s_in + col, s_vmin + col, pi, start, end, TH);
	}
	__syncthreads();
	const int nbf = (TH - 1 + k - 1) / k; /* block b >= 1 reaches outputs ((b-1)k, bk] */
	for (int task = tid; task < 2 * iw * nbf; task += THREADS) {
		int which = task >= iw * nbf, rest = which ? task - iw * nbf : task;
		int col = rest % iw, start = (rest / iw + 1) * k, end = min(start + k, ih);
		if (which)
			scan_prefix<true>(s_in + col, s_vmax + col, pi, start, end, k, TH);
		else
			scan_prefix<false>(s_in + col, s_vmin + col, pi, start, end, k, TH);
	}
	__syncthreads();

	/* Rows, on the column result; a warp's lanes take different rows. */
	const int nbh = (TILE_W + k - 1) / k;
	for (int task = tid; task < 2 * TH * nbh; task += THREADS) {
		int which = task >= TH * nbh, rest = which ? task - TH * nbh : task;
		int row = rest % TH, start = (rest / TH) * k, end = min(start + k, iw);
		if (which)
			scan_suffix<true>(s_vmax + row * pi, s_hmax + row * po, 1, start, end, TILE_W);
		else
			scan_suffix<false>(s_vmin + row * pi, s_hmin + row * po, 1, start, end, TILE_W);
	}
	__syncthreads();
	const int nbhf = (TILE_W - 1 + k - 1) / k;
	for (int task = tid; task < 2 * TH * nbhf; task += THREADS) {
		int which = task >= TH * nbhf, rest = which ? task - TH * nbhf : task;
		int row = rest % TH, start = (rest / TH + 1) * k, end = min(start + k, iw);
		if (which)
			scan_prefix<true>(s_vmax + row * pi, s_hmax + row * po, 1, start, end, k, TILE_W);
		else
			scan_prefix<false>(s_vmin + row * pi, s_hmin + row * po, 1, start, end, k, TILE_W);
	}
	__syncthreads();

	emit_tile(TH, x0, y0, w, h, d_mask, mask_words32, [&](int y, int x) {
		return tile_white(s_hmin[y * po + x], s_hmax[y * po + x], s_in[(y + r) * pi + x + r], gate, x0 + x,
				  y0 + y, mode, d_mw, mask_words32);
	});
}

/*
 * Per-pixel Bernsen for radii 1..8, the radius a compile-time
 * constant: the tile, apron and shared arrays of bernsen_kernel at its
 * tile height (16 rows), but each window's extremes read straight from
 * shared memory, down the columns four outputs a thread from 2R + 4
 * samples in registers, then along the rows fused with the rule and the
 * ballot. Two barriers instead of five, and no serial scan chains: at
 * these radii the 2R comparisons a pixel that van Herk saves cost less
 * than its chains and barriers.
 */
template <int R>
__global__ void __launch_bounds__(THREADS) bernsen_small_kernel(const uint8_t *__restrict__ d_in, int pitch, int w,
								 int h, int r_run, int gate, uint32_t *__restrict__ d_mask,
								 int mask_words32, int row0,
								 const uint32_t *__restrict__ d_mw, int mode)
{
	(void)r_run;
	extern __shared__ uint8_t smem[];
	constexpr int TH = 16, K = 2 * R + 1, IW = TILE_W + 2 * R, IH = TH + 2 * R, G = 4;
	const int pi = odd_word_pitch(IW);
	uint8_t *s_in = smem, *s_vmin = s_in + IH * pi, *s_vmax = s_vmin + TH * pi;
	const int x0 = blockIdx.x * TILE_W, y0 = row0 + blockIdx.y * TH, tid = threadIdx.x;
	load_tile(d_in, pitch, w, h, x0 - R, y0 - R, IW, IH, s_in, pi);
	__syncthreads();

	for (int task = tid; task < IW * (TH / G); task += THREADS) {
		const int col = task % IW, y = (task / IW) * G;
		int v[G + 2 * R];
#pragma unroll
		for (int j = 0; j < G + 2 * R; j++)
			v[j] = s_in[(y + j) * pi + col];
#pragma unroll
		for (int o = 0; o < G; o++) {
			int lo = v[o], hi = v[o];
#pragma unroll
			for (int j = 1; j < K; j++) {
				lo = min(lo, v[o + j]);
				hi = max(hi, v[o + j]);
			}
			s_vmin[(y + o) * pi + col] = (uint8_t)lo;
			s_vmax[(y + o) * pi + col] = (uint8_t)hi;
		}
	}
	__syncthreads();

	emit_tile(TH, x0, y0, w, h, d_mask, mask_words32, [&](int y, int x) {
		int lo = 255, hi = 0;
#pragma unroll
		for (int j = 0; j < K; j++) {
			lo = min(lo, (int)s_vmin[y * pi + x + j]);
			hi = max(hi, (int)s_vmax[y * pi + x + j]);
		}
		return tile_white(lo, hi, s_in[(y + R) * pi + x + R], gate, x0 + x, y0 + y, mode, d_mw, mask_words32);
	});
}

/* Forgetful selection with compile-time indices, so v stays in registers. */
template <int N> static __device__ __forceinline__ int median_select(int *v)
{
	const int n = N * N;
#pragma unroll
	for (int i = 0; i < n / 2; i++) {
		const int m = n / 2 + 2 - i;
#pragma unroll
		for (int j = 1; j < m; j++) {
			int a = v[i], b = v[i + j];
			v[i] = min(a, b);
			v[i + j] = max(a, b);
		}
#pragma unroll
		for (int j = 1; j < m - 1; j++) {
			int a = v[i + j], b = v[i + m - 1];
			v[i + j] = min(a, b);
			v[i + m - 1] = max(a, b);
		}
		if (i < n / 2 - 1)
			v[i + m - 1] = v[n / 2 + 2 + i];
	}
	return v[n / 2];
}

/* Rows [row0, row1) of the output; the window is clamped to the whole frame. */
template <int N>
__global__ void median_kernel(const uint8_t *__restrict__ d_in, uint8_t *__restrict__ d_out, int pitch, int w, int h,
			      int row0, int row1)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = row0 + blockIdx.y * blockDim.y + threadIdx.y;
	if (x >= w || y >= row1)
		return;
	int v[N * N];
#pragma unroll
	for (int j = 0; j < N; j++) {
		const uint8_t *row = d_in + (size_t)clampi(y + j - N / 2, 0, h - 1) * pitch;
#pragma unroll
		for (int i = 0; i < N; i++)
			v[j * N + i] = row[clampi(x + i - N / 2, 0, w - 1)];
	}
	d_out[(size_t)y * pitch + x] = (uint8_t)median_select<N>(v);
}

struct gauss_taps {
	int w[CUDA_GAUSS_MAX_RADIUS + 1];
	int r;
};

__global__ void gauss_rows_kernel(const uint8_t *__restrict__ d_in, uint16_t *__restrict__ d_tmp, int pitch, int w,
				  int h, gauss_taps taps)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x >= w || y >= h)
		return;
	const uint8_t *row = d_in + (size_t)y * pitch;
	unsigned acc = (unsigned)taps.w[0] * row[x];
	for (int i = 1; i <= taps.r; i++)
		acc += (unsigned)taps.w[i] * ((unsigned)row[clampi(x + i, 0, w - 1)] + row[clampi(x - i, 0, w - 1)]);
	d_tmp[(size_t)y * pitch + x] = (uint16_t)acc;
}

__global__ void gauss_cols_kernel(const uint16_t *__restrict__ d_tmp, uint8_t *__restrict__ d_out, int pitch, int w,
				  int h, gauss_taps taps)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x >= w || y >= h)
		return;
	unsigned acc = (unsigned)taps.w[0] * d_tmp[(size_t)y * pitch + x];
	for (int j = 1; j <= taps.r; j++)
		acc += (unsigned)taps.w[j] * ((unsigned)d_tmp[(size_t)clampi(y + j, 0, h - 1) * pitch + x] +
					      d_tmp[(size_t)clampi(y - j, 0, h - 1) * pitch + x]);
	d_out[(size_t)y * pitch + x] = (uint8_t)((acc + 32768u) >> 16);
}

__global__ void tile_minmax_kernel(const uint8_t *__restrict__ d_in, int pitch, int w, int h, int s, int ntx, int nty,
				   uint8_t *__restrict__ d_lo, uint8_t *__restrict__ d_hi)
{
	int tx = blockIdx.x * blockDim.x + threadIdx.x, ty = blockIdx.y * blockDim.y + threadIdx.y;
	if (tx >= ntx || ty >= nty)
		return;
	int lo = 255, hi = 0, x1 = min((tx + 1) * s, w), y1 = min((ty + 1) * s, h);
	for (int y = ty * s; y < y1; y++)
		for (int x = tx * s; x < x1; x++) {
			int v = d_in[(size_t)y * pitch + x];
			lo = min(lo, v);
			hi = max(hi, v);
		}
	d_lo[ty * ntx + tx] = (uint8_t)lo;
	d_hi[ty * ntx + tx] = (uint8_t)hi;
}

__global__ void tile_threshold_kernel(const uint8_t *__restrict__ d_lo, const uint8_t *__restrict__ d_hi, int ntx,
				      int nty, int gate, uint8_t *__restrict__ d_t)
{
	int tx = blockIdx.x * blockDim.x + threadIdx.x, ty = blockIdx.y * blockDim.y + threadIdx.y;
	if (tx >= ntx || ty >= nty)
		return;
	int lo = 255, hi = 0;
	for (int j = max(ty - 1, 0); j <= min(ty + 1, nty - 1); j++)
		for (int i = max(tx - 1, 0); i <= min(tx + 1, ntx - 1); i++) {
			lo = min(lo, (int)d_lo[j * ntx + i]);
			hi = max(hi, (int)d_hi[j * ntx + i]);
		}
	int t = (lo + hi) >> 1;
	if (hi - lo < gate)
		t = t < 128 ? 255 : 0;
	d_t[ty * ntx + tx] = (uint8_t)t;
}

/* One warp a 32-pixel run of a row; grid covers every 32-bit mask word so the padding is written too. */
__global__ void tile_compare_kernel(const uint8_t *__restrict__ d_in, int pitch, int w, int h, int s, int ntx,
				    const uint8_t *__restrict__ d_t, uint32_t *__restrict__ d_mask, int mask_words32)
{
	int word = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x & 31, y = blockIdx.y;
	if (word >= mask_words32)
		return;
	int x = word * 32 + lane;
	bool white = x < w && d_in[(size_t)y * pitch + x] > d_t[(y / s) * ntx + x / s];
	unsigned bits = __ballot_sync(0xffffffffu, white);
	if (lane == 0)
		d_mask[(size_t)y * mask_words32 + word] = bits;
	(void)h;
}

/* Local mean, pass 1: the sum down each column over the window's rows
 * (cropped), one thread a column and MEAN_COL_ROWS rows, sliding. At most
 * 127 rows of 255: 16 bits. With d_sq (Sauvola) also the sum of the
 * squares: at most 127 * 65025, 32 bits. */
__global__ void mean_cols_kernel(const uint8_t *__restrict__ d_in, int pitch, int w, int h, int m,
				 uint16_t *__restrict__ d_col, uint32_t *__restrict__ d_sq)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x, y0 = blockIdx.y * MEAN_COL_ROWS;
	if (x >= w)
		return;
	int y1 = min(y0 + MEAN_COL_ROWS, h), s = 0;
	unsigned q = 0;
	for (int j = max(y0 - m, 0); j <= min(y0 + m, h - 1); j++) {
		unsigned v = d_in[(size_t)j * pitch + x];
		s += v;
		q += v * v;
	}
	for (int y = y0; y < y1; y++) {
		d_col[(size_t)y * w + x] = (uint16_t)s;
		if (d_sq)
			d_sq[(size_t)y * w + x] = q;
		if (y + m + 1 < h) {
			unsigned v = d_in[(size_t)(y + m + 1) * pitch + x];
			s += v;
			q += v * v;
		}
		if (y - m >= 0) {
			unsigned v = d_in[(size_t)(y - m) * pitch + x];
			s -= v;
			q -= v * v;
		}
	}
}

/* Sauvola, pass 2: one block a SAUVOLA_CHUNK-column piece of a row. Prefix
 * sums of the column sums and of the squares' column sums over the piece
 * and its m-column aprons in shared memory (the squares' modulo 2^32: a
 * window's difference is exact, its true sum is below 2^31), then 32
 * verdicts a warp by ballot, the rule of threshold_sauvola_cpu() in the
 * same 64-bit integers and the same IEEE double square root (exact: the
 * argument is below 2^42). Every mask word of the row is written, padding
 * bits zero. */
__global__ void __launch_bounds__(THREADS) sauvola_rows_kernel(const uint8_t *__restrict__ d_in, int pitch, int w,
							       int h, int m, int k, int range, int mean_min,
							       const uint16_t *__restrict__ d_col,
							       const uint32_t *__restrict__ d_sq,
							       uint32_t *__restrict__ d_out, int mask_words32)
{
	__shared__ int s_pre[SAUVOLA_CHUNK + 2 * MAX_MEAN_RADIUS + 1];
	__shared__ unsigned s_qpre[SAUVOLA_CHUNK + 2 * MAX_MEAN_RADIUS + 1];
	__shared__ int s_run[THREADS];
	__shared__ unsigned s_qrun[THREADS];
	const int y = blockIdx.y, tid = threadIdx.x, cx = blockIdx.x * SAUVOLA_CHUNK;
	const int base = max(cx - m, 0), len = min(cx + SAUVOLA_CHUNK + m, w) - base;
	const uint16_t *col = d_col + (size_t)y * w + base;
	const uint32_t *sq = d_sq + (size_t)y * w + base;
	const int per = (len + THREADS - 1) / THREADS, a = min(tid * per, len), b = min(a + per, len);
	int acc = 0;
	unsigned qacc = 0;
	for (int i = a; i < b; i++) {
		acc += col[i];
		qacc += sq[i];
	}
	s_run[tid] = acc;
	s_qrun[tid] = qacc;
	__syncthreads();
	if (tid == 0) {
		int t = 0;
		unsigned tq = 0;
		for (int i = 0; i < THREADS; i++) {
			int v = s_run[i];
			unsigned vq = s_qrun[i];
			s_run[i] = t;
			s_qrun[i] = tq;
			t += v;
			tq += vq;
		}
	}
	__syncthreads();
	acc = s_run[tid];
	qacc = s_qrun[tid];
	if (tid == 0) {
		s_pre[0] = 0;
		s_qpre[0] = 0;
	}
	for (int i = a; i < b; i++) {
		acc += col[i];
		qacc += sq[i];
		s_pre[i + 1] = acc;
		s_qpre[i + 1] = qacc;
	}
	__syncthreads();
	const int ny = min(y + m, h - 1) - max(y - m, 0) + 1;
	const uint8_t *row = d_in + (size_t)y * pitch;
	const int lane = tid & 31;
	for (int wi = tid >> 5; wi < SAUVOLA_CHUNK / 32; wi += THREADS / 32) {
		int word = blockIdx.x * (SAUVOLA_CHUNK / 32) + wi;
		if (word >= mask_words32)
			break;
		int x = word * 32 + lane;
		bool white = false;
		if (x < w) {
			int x0 = max(x - m, 0), x1 = min(x + m + 1, w);
			long long n = (long long)(x1 - x0) * ny, s = s_pre[x1 - base] - s_pre[x0 - base];
			long long q = (unsigned)(s_qpre[x1 - base] - s_qpre[x0 - base]);
			long long bb = 100 * n * row[x] - (long long)(100 - k) * s;
			if (bb > 0 && s >= mean_min * n) {
				long long d = (long long)sqrt((double)(n * q - s * s));
				white = n * range * bb > (long long)k * s * d;
			}
		}
		unsigned bits = __ballot_sync(0xffffffffu, white);
		if (lane == 0)
			d_out[(size_t)y * mask_words32 + word] = bits;
	}
}

/* Local mean, pass 2: one block a row. Prefix sums of the row's column sums
 * in shared memory (each thread scans a run, the run totals are scanned,
 * then added back), then each warp packs 32 verdicts with a ballot:
 * white = 100 v n > (100 - bias) S and S >= mean_min n, in 32-bit integers as
 * on the CPU. Every mask word of the row is written, padding bits zero. */
__global__ void __launch_bounds__(THREADS) mean_rows_kernel(const uint8_t *__restrict__ d_in, int pitch, int w, int h,
							    int m, int bias, int mean_min,
							    const uint16_t *__restrict__ d_col,
							    uint32_t *__restrict__ d_out, int mask_words32)
{
	extern __shared__ int s_pre[]; /* w + 1 prefix sums, then THREADS run totals */
	int *s_run = s_pre + w + 1;
	const int y = blockIdx.x, tid = threadIdx.x;
	const uint16_t *col = d_col + (size_t)y * w;
	const int per = (w + THREADS - 1) / THREADS, a = min(tid * per, w), b = min(a + per, w);
	int acc = 0;
	for (int x = a; x < b; x++)
		acc += col[x];
	s_run[tid] = acc;
	__syncthreads();
	if (tid == 0) {
		int t = 0;
		for (int i = 0; i < THREADS; i++) {
			int v = s_run[i];
			s_run[i] = t;
			t += v;
		}
	}
	__syncthreads();
	acc = s_run[tid];
	if (tid == 0)
		s_pre[0] = 0;
	for (int x = a; x < b; x++) {
		acc += col[x];
		s_pre[x + 1] = acc;
	}
	__syncthreads();
	const int ny = min(y + m, h - 1) - max(y - m, 0) + 1, k = 100 - bias;
	const uint8_t *row = d_in + (size_t)y * pitch;
	const int lane = tid & 31;
	for (int word = tid >> 5; word < mask_words32; word += THREADS / 32) {
		int x = word * 32 + lane;
		bool white = false;
		if (x < w) {
			int x0 = max(x - m, 0), x1 = min(x + m + 1, w);
			int s = s_pre[x1] - s_pre[x0], n = (x1 - x0) * ny;
			white = 100 * (int)row[x] * n > k * s && s >= mean_min * n;
		}
		unsigned bits = __ballot_sync(0xffffffffu, white);
		if (lane == 0)
			d_out[(size_t)y * mask_words32 + word] = bits;
	}
}

/* Block extremes (bernsen_cuda.h): one thread a block of
 * CUDA_EXTREMES_BLOCK pixels a side, its darkest and brightest grey over
 * every other row from its top, cut short at the frame's edges. */
__global__ void extremes_kernel(const uint8_t *__restrict__ d_in, int pitch, int w, int h, int cols,
				uint8_t *__restrict__ d_out)
{
	const int bx = blockIdx.x * blockDim.x + threadIdx.x, by = blockIdx.y;
	if (bx >= cols)
		return;
	const int x0 = bx * CUDA_EXTREMES_BLOCK, x1 = min(w, x0 + CUDA_EXTREMES_BLOCK);
	const int y0 = by * CUDA_EXTREMES_BLOCK, y1 = min(h, y0 + CUDA_EXTREMES_BLOCK);
	int lo = 255, hi = 0;
	for (int y = y0; y < y1; y += 2) {
		const uint8_t *p = d_in + (size_t)y * pitch;
		for (int x = x0; x < x1; x++) {
			const int v = p[x];
			lo = min(lo, v);
			hi = max(hi, v);
		}
	}
	const size_t i = 2 * ((size_t)by * cols + bx);
	d_out[i] = (uint8_t)lo;
	d_out[i + 1] = (uint8_t)hi;
}

__global__ void probe_kernel(int *d_out) { *d_out = 42; }

typedef void (*bernsen_fn)(const uint8_t *, int, int, int, int, int, uint32_t *, int, int, const uint32_t *, int);
#define BERNSEN_ARGS 11 /* bernsen_fn's parameters */
#define BERNSEN_GATE_ARG 5
/* Tile height by radius: 16 rows up to r = 8, 32 up to 16, then 64. */
static int tile_h_for(int r) { return r == 0 ? 64 : r <= 8 ? 16 : r <= 16 ? 32 : 64; }
/* Radii up to 8 (tile height 16) take bernsen_small_kernel, in the same
 * tile and shared memory; van Herk's bernsen_kernel the larger ones. */
#define BK(n) bernsen_kernel<n, (n <= 16 ? 32 : 64)>
#define BS(n) bernsen_small_kernel<n>
#define B4(n) BK(n), BK(n + 1), BK(n + 2), BK(n + 3)
static const bernsen_fn bernsen_by_radius[MAX_RADIUS + 1] = {
	bernsen_kernel<0, 64>, BS(1), BS(2), BS(3), BS(4), BS(5), BS(6), BS(7), BS(8), B4(9), B4(13), B4(17), B4(21),
	B4(25), B4(29),
};

/* ---- host side ---- */

static bool gauss_on(const struct cuda_threshold_config *c)
{
	return c->gauss_taps[0] != 0;
}

/* Taps off (all zero), or a radius in range whose taps sum to 256. */
/* The per-pixel Bernsen mode without a Gaussian: the banded, fused kernel
 * path (launch_bernsen), whose kernel alone reads the gate. */
static bool per_pixel_bernsen(const struct cuda_threshold_config *c) { return c->mode == MODE_BERNSEN && !gauss_on(c); }

static bool gauss_ok(const struct cuda_threshold_config *c)
{
	if (c->gauss_radius < 0 || c->gauss_radius > CUDA_GAUSS_MAX_RADIUS)
		return false;
	int sum = c->gauss_taps[0];
	for (int i = 1; i <= CUDA_GAUSS_MAX_RADIUS; i++) {
		if (c->gauss_taps[i] < 0 || (i > c->gauss_radius && c->gauss_taps[i] != 0))
			return false;
		sum += 2 * c->gauss_taps[i];
	}
	return gauss_on(c) ? sum == 256 : sum == 0 && c->gauss_radius == 0;
}

static int config_ok(const struct cuda_threshold_config *c)
{
	return c->max_width >= 1 && c->max_height >= 1 && c->max_width <= 8192 && c->max_height <= 8192 &&
	       c->mode >= MODE_BERNSEN && c->mode <= MODE_SAUVOLA &&
	       (c->mode < MODE_MEAN || (c->mean_radius >= 1 && c->mean_radius <= MAX_MEAN_RADIUS &&
					c->mean_bias >= 0 && c->mean_bias <= MAX_MEAN_BIAS)) &&
	       (c->mode != MODE_SAUVOLA || (c->sauvola_k >= 0 && c->sauvola_k <= MAX_SAUVOLA_K &&
					    c->sauvola_range >= 1 && c->sauvola_range <= MAX_SAUVOLA_RANGE)) &&
	       c->radius >= 1 && c->radius <= MAX_RADIUS && c->gate >= 0 &&
	       c->gate <= 255 && c->tile >= 2 && c->tile <= 64 && (c->median == 0 || c->median == 3 || c->median == 5) &&
	       gauss_ok(c) && c->bands >= 0 && c->bands <= MAX_BANDS;
}

/* Every wait for the GPU in this process (collect, the segmenter's tree,
 * the other stages' streams) sleeps on a primitive instead of spinning a
 * core: with the default (auto) scheduling a process with fewer contexts
 * than cores spins in every wait. Called before the first call that
 * creates the primary context (the probe's allocation), where the flag is
 * sure to take; again at create, for a caller that never probed. A
 * failure only costs CPU. */
static void blocking_waits(void)
{
	if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess)
		(void)cudaGetLastError();
}

/* How the primary context waits, for the probe's description. */
static const char *wait_mode(void)
{
	unsigned int flags = 0;
	if (cudaGetDeviceFlags(&flags) != cudaSuccess) {
		(void)cudaGetLastError();
		return "waits unknown";
	}
	switch (flags & cudaDeviceScheduleMask) {
	case cudaDeviceScheduleBlockingSync:
		return "waits block";
	case cudaDeviceScheduleSpin:
		return "waits spin";
	case cudaDeviceScheduleYield:
		return "waits yield";
	default:
		return "waits auto (spin)";
	}
}

int cuda_threshold_probe(char *why, size_t cap)
{
	int n = 0, dev = 0, h_out = 0, *d_out = NULL;
	cudaDeviceProp prop;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n == 0) {
		if (cap)
			snprintf(why, cap, "no usable CUDA device (%s)",
				 e != cudaSuccess ? cudaGetErrorString(e) : "none found");
		return ERR_UNSUPPORTED;
	}
	blocking_waits();
	/* A real launch catches a driver too old or a GPU this binary has no code for. */
	if ((e = cudaGetDevice(&dev)) != cudaSuccess || (e = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess ||
	    (e = cudaMalloc(&d_out, sizeof *d_out)) != cudaSuccess)
		goto fail;
	probe_kernel<<<1, 1>>>(d_out);
	if ((e = cudaGetLastError()) != cudaSuccess ||
	    (e = cudaMemcpy(&h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost)) != cudaSuccess)
		goto fail;
	cudaFree(d_out);
	if (h_out != 42) {
		if (cap)
			snprintf(why, cap, "CUDA device %s returned a wrong probe value", prop.name);
		return ERR_DEVICE;
	}
	if (cap)
		snprintf(why, cap, "%s, sm_%d%d, %d SMs, %s", prop.name, prop.major, prop.minor,
			 prop.multiProcessorCount, wait_mode());
	return 0;
fail:
	if (d_out)
		cudaFree(d_out);
	if (cap)
		snprintf(why, cap, "CUDA device present but unusable: %s", cudaGetErrorString(e));
	return ERR_DEVICE;
}

int cuda_device_memory_used(size_t *bytes)
{
	size_t free_b = 0, total_b = 0;
	if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
		return ERR_DEVICE;
	*bytes = total_b - free_b;
	return 0;
}

/* A stream of the frame path, at the device's highest priority: the
 * objects stage's GPU SIFT (default priority, the lowest) shares the GPU,
 * and a frame's threshold and labelling kernels (the labelling graph runs
 * on this stream too) are then scheduled ahead of its waiting blocks
 * rather than behind them. */
static cudaError_t frame_stream(cudaStream_t *s)
{
	int least, greatest;
	cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
	if (e != cudaSuccess)
		return e;
	return cudaStreamCreateWithPriority(s, cudaStreamNonBlocking, greatest);
}

struct cuda_threshold *cuda_threshold_create(const struct cuda_threshold_config *cfg, int *err)
{
	struct cuda_threshold *t = NULL;
	size_t px, tiles, words, blocks;
	if (!config_ok(cfg)) {
		*err = ERR_RANGE;
		return NULL;
	}
	t = (struct cuda_threshold *)calloc(1, sizeof *t);
	if (!t) {
		*err = ERR_NOMEM;
		return NULL;
	}
	t->cfg = *cfg;
	blocking_waits();
	px = (size_t)cfg->max_width * cfg->max_height;
	tiles = ((size_t)cfg->max_width / 2 + 1) * ((size_t)cfg->max_height / 2 + 1);
	words = (size_t)(cfg->max_width + 63) / 64 * cfg->max_height;
	CUDA_CHECK(frame_stream(&t->stream));
	t->last = t->stream;
	CUDA_CHECK(frame_stream(&t->s_up));
	CUDA_CHECK(frame_stream(&t->s_down));
	CUDA_CHECK(cudaStreamCreateWithFlags(&t->s_fetch, cudaStreamNonBlocking));
	CUDA_CHECK(frame_stream(&t->s_ext));
	CUDA_CHECK(cudaEventCreateWithFlags(&t->ev_fork, cudaEventDisableTiming));
	CUDA_CHECK(cudaEventCreateWithFlags(&t->ev_join, cudaEventDisableTiming));
	CUDA_CHECK(cudaEventCreateWithFlags(&t->ev_split, cudaEventDisableTiming));
	CUDA_CHECK(cudaEventCreateWithFlags(&t->ev_merge, cudaEventDisableTiming));
	CUDA_CHECK(cudaEventCreateWithFlags(&t->ev_done, cudaEventDisableTiming));
	for (int i = 0; i < MAX_BANDS; i++) {
		CUDA_CHECK(cudaEventCreateWithFlags(&t->ev_up[i], cudaEventDisableTiming));
		CUDA_CHECK(cudaEventCreateWithFlags(&t->ev_k[i], cudaEventDisableTiming));
	}
	CUDA_CHECK(cudaMalloc(&t->d_grey, px));
	CUDA_CHECK(cudaMalloc(&t->d_pre_a, px));
	CUDA_CHECK(cudaMalloc(&t->d_pre_b, px));
	CUDA_CHECK(cudaMalloc(&t->d_gauss_tmp, px * sizeof(uint16_t)));
	CUDA_CHECK(cudaMalloc(&t->d_tile_lo, tiles));
	CUDA_CHECK(cudaMalloc(&t->d_tile_hi, tiles));
	CUDA_CHECK(cudaMalloc(&t->d_tile_t, tiles));
	for (int i = 0; i < 2; i++)
		CUDA_CHECK(cudaMalloc(&t->d_masks[i], words * sizeof(uint64_t)));
	t->d_mask = t->d_masks[0];
	CUDA_CHECK(cudaMalloc(&t->d_mean_col, px * sizeof(uint16_t)));
	CUDA_CHECK(cudaMalloc(&t->d_sq_col, px * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&t->d_mean_mask, words * sizeof(uint64_t)));
	blocks = (size_t)2 * ((cfg->max_width + CUDA_EXTREMES_BLOCK - 1) / CUDA_EXTREMES_BLOCK) *
		 ((cfg->max_height + CUDA_EXTREMES_BLOCK - 1) / CUDA_EXTREMES_BLOCK);
	CUDA_CHECK(cudaMalloc(&t->d_ext, blocks));
	for (int i = 0; i < 2; i++)
		CUDA_CHECK(cudaHostAlloc(&t->h_ext[i], blocks, cudaHostAllocDefault));
	CUDA_CHECK(cudaHostAlloc(&t->h_grey, px, cudaHostAllocDefault));
	/* Not mapped memory for the kernels to write into: measured on an H100,
	 * 4-byte writes across PCIe cost 30-60 us a 1080p frame, the download
	 * 1.3-12 us. */
	for (int i = 0; i < 2; i++)
		CUDA_CHECK(cudaHostAlloc(&t->h_masks[i], words * sizeof(uint64_t), cudaHostAllocDefault));
	t->h_mask = t->h_masks[0];
	for (int i = 0; i < 4; i++)
		CUDA_CHECK(cudaEventCreate(&t->ev[i]));
	/* r = 32 needs about 43 KB: under the 48 KB default, but say so explicitly. */
	for (int r = 0; r <= MAX_RADIUS; r++)
		CUDA_CHECK(cudaFuncSetAttribute(bernsen_by_radius[r], cudaFuncAttributeMaxDynamicSharedMemorySize,
						(int)bernsen_smem_bytes(MAX_RADIUS, 64)));
	*err = 0;
	return t;
fail:
	cuda_threshold_destroy(t);
	*err = ERR_DEVICE;
	return NULL;
}

static void thr_graphs_drop(struct cuda_threshold *t, const uint8_t *p, size_t n);

void cuda_threshold_destroy(struct cuda_threshold *t)
{
	if (!t)
		return;
	/* Only this stage's streams: another stage (the second scale) may have
	 * a frame in flight on the same device. */
	cudaStream_t streams[5] = {t->stream, t->s_up, t->s_down, t->s_fetch, t->s_ext};
	for (int i = 0; i < 5; i++)
		if (streams[i])
			cudaStreamSynchronize(streams[i]);
	for (int i = 0; i < t->n_reg; i++)
		if (t->reg[i].owned)
			cudaHostUnregister((void *)t->reg[i].p);
	cudaFree(t->d_grey);
	cudaFree(t->d_pre_a);
	cudaFree(t->d_pre_b);
	cudaFree(t->d_gauss_tmp);
	cudaFree(t->d_tile_lo);
	cudaFree(t->d_tile_hi);
	cudaFree(t->d_tile_t);
	cudaFree(t->d_masks[0]);
	cudaFree(t->d_masks[1]);
	cudaFree(t->d_mean_col);
	cudaFree(t->d_sq_col);
	cudaFree(t->d_mean_mask);
	cudaFreeHost(t->h_grey);
	cudaFreeHost(t->h_masks[0]);
	cudaFreeHost(t->h_masks[1]);
	cudaFree(t->d_ext);
	cudaFreeHost(t->h_ext[0]);
	cudaFreeHost(t->h_ext[1]);
	if (t->ev_fork)
		cudaEventDestroy(t->ev_fork);
	if (t->ev_join)
		cudaEventDestroy(t->ev_join);
	if (t->ev_split)
		cudaEventDestroy(t->ev_split);
	if (t->ev_merge)
		cudaEventDestroy(t->ev_merge);
	for (int i = 0; i < 4; i++)
		if (t->ev[i])
			cudaEventDestroy(t->ev[i]);
	if (t->ev_done)
		cudaEventDestroy(t->ev_done);
	for (int i = 0; i < MAX_BANDS; i++) {
		if (t->ev_up[i])
			cudaEventDestroy(t->ev_up[i]);
		if (t->ev_k[i])
			cudaEventDestroy(t->ev_k[i]);
	}
	thr_graphs_drop(t, NULL, 0);
	if (t->s_up)
		cudaStreamDestroy(t->s_up);
	if (t->s_down)
		cudaStreamDestroy(t->s_down);
	if (t->s_fetch)
		cudaStreamDestroy(t->s_fetch);
	if (t->s_ext)
		cudaStreamDestroy(t->s_ext);
	if (t->stream)
		cudaStreamDestroy(t->stream);
	free(t);
}

int cuda_threshold_set_config(struct cuda_threshold *t, const struct cuda_threshold_config *cfg)
{
	if (!config_ok(cfg) || cfg->max_width > t->cfg.max_width || cfg->max_height > t->cfg.max_height)
		return ERR_RANGE;
	int mw = t->cfg.max_width, mh = t->cfg.max_height;
	t->cfg = *cfg;
	t->cfg.max_width = mw;
	t->cfg.max_height = mh;
	return 0;
}

int cuda_threshold_register(struct cuda_threshold *t, void *data, size_t bytes)
{
	if (t->n_reg == MAX_REGISTERED)
		return ERR_NOMEM;
	/* Page-locking is per process: when another stage (the second
	 * threshold scale) already registered this buffer, it is DMA-able for
	 * us too; clear the sticky error and remember not to unregister it. */
	cudaError_t e = cudaHostRegister(data, bytes, cudaHostRegisterDefault);
	bool owned = e == cudaSuccess;
	if (e == cudaErrorHostMemoryAlreadyRegistered)
		(void)cudaGetLastError();
	else
		CUDA_CHECK(e);
	t->reg[t->n_reg].p = (const uint8_t *)data;
	t->reg[t->n_reg].n = bytes;
	t->reg[t->n_reg].owned = owned;
	t->n_reg++;
	return 0;
fail:
	return ERR_DEVICE;
}

int cuda_threshold_unregister(struct cuda_threshold *t, void *data)
{
	for (int i = 0; i < t->n_reg; i++) {
		if (t->reg[i].p != data)
			continue;
		if (t->pending)
			cudaStreamSynchronize(t->last);
		thr_graphs_drop(t, t->reg[i].p, t->reg[i].n);
		if (t->reg[i].owned)
			cudaHostUnregister(data);
		t->reg[i] = t->reg[--t->n_reg];
		return 0;
	}
	return ERR_RANGE;
}

static bool is_registered(const struct cuda_threshold *t, const uint8_t *p, size_t n)
{
	for (int i = 0; i < t->n_reg; i++)
		if (p >= t->reg[i].p && p + n <= t->reg[i].p + t->reg[i].n)
			return true;
	return false;
}

/* Bands a frame is cut into. One band costs the fewest launches and event
 * waits; more let the upload, the kernels and the download overlap, which
 * pays only once the upload is long against those costs. Measured on an
 * H100 (registered frame -> mask, r = 6, median us by band count, two runs):
 * 640x480 33.7 (1), 37.8 (2); 1280x720 52-54 (1), 56-60 (2); 1920x1080 88-89
 * (1), 85-96 (3), 86-87 (4), with a p99 of 100 us in one band and 190-340
 * in 2-4; 3840x2160 263-267 (1), 238 (3), 222 (6), 232 (8). Those were
 * queued call by call; as one graph (two rounds, 2026-12-07): 640x480
 * 32.0-32.1 (1), 32.6-37.9 (2), 45-47 (6); 1920x1080 77.8-82.1 (1),
 * 89.7-92.4 (2), 85.9-87.2 (3), 89-90 (4); 3840x2160 253.6-254.6 (1),
 * 218.9-231.4 (6). Bands still lose below 4K. */
static int bands_for(const struct cuda_threshold_config *c, int width, int height)
{
	if (!per_pixel_bernsen(c))
		return 1; /* the two-pass Gaussian and the tiled mode run whole frames */
	if (c->bands > 0)
		return c->bands;
	return (long)width * height >= 3840L * 2160 * 3 / 4 ? 6 : 1;
}

/* Band i covers rows [i * bh, min((i + 1) * bh, h)). */
static int band_end(int i, int bh, int h) { return min((i + 1) * bh, h); }

/* The block extremes' branch, queued on `up` (the stream that uploaded
 * the frame) once the whole grey is on the GPU: s_ext waits for that
 * point, runs the kernel and brings the extremes back, and the frame's
 * last stream waits for it at the end of launch() (extremes_join). */
static int extremes_fork(struct cuda_threshold *t, cudaStream_t up, int width, int height)
{
	if (!t->extremes)
		return 0;
	const int cols = (width + CUDA_EXTREMES_BLOCK - 1) / CUDA_EXTREMES_BLOCK;
	const int rows = (height + CUDA_EXTREMES_BLOCK - 1) / CUDA_EXTREMES_BLOCK;
	CUDA_CHECK(cudaEventRecord(t->ev_fork, up));
	CUDA_CHECK(cudaStreamWaitEvent(t->s_ext, t->ev_fork, 0));
	extremes_kernel<<<dim3((cols + 63) / 64, rows), 64, 0, t->s_ext>>>(t->d_grey, width, width, height, cols,
									  t->d_ext);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaMemcpyAsync(t->h_ext[t->cur], t->d_ext, (size_t)2 * cols * rows, cudaMemcpyDeviceToHost,
				   t->s_ext));
	CUDA_CHECK(cudaEventRecord(t->ev_join, t->s_ext));
	return 0;
fail:
	return ERR_DEVICE;
}

static int extremes_join(struct cuda_threshold *t)
{
	if (t->extremes)
		CUDA_CHECK(cudaStreamWaitEvent(t->last, t->ev_join, 0));
	return 0;
fail:
	return ERR_DEVICE;
}

/*
 * Banded path (the Bernsen kernel, with or without a median): rows are cut
 * into bands whose height is a multiple of the kernel's tile height. The
 * upload stream copies band after band and records ev_up[i]; the kernel
 * stream waits only for the bands a launch reads (its rows plus the median
 * and Bernsen aprons, clamped), so band i's kernel runs while band i+1 is
 * still crossing PCIe; each band's mask rows go back on the download stream
 * after ev_k[i]. With one band everything is on the kernel stream, as before.
 */
static int launch_bernsen(struct cuda_threshold *t, const uint8_t *src, int width, int height, int words32)
{
	const struct cuda_threshold_config *c = &t->cfg;
	const int kr = c->kernel_variant == 1 ? 0 : c->radius, th = tile_h_for(kr), r = c->radius;
	const int m = c->median / 2; /* median apron */
	int nb = bands_for(c, width, height);
	int bh = (height + nb - 1) / nb;
	bh = (bh + th - 1) / th * th;
	nb = (height + bh - 1) / bh;
	const bool split = nb > 1;
	cudaStream_t sk = t->stream, su = split ? t->s_up : sk, sd = split ? t->s_down : sk;
	const uint8_t *d_src = t->d_grey;
	int up_waited = -1, med_done = 0, mi = 0;
	dim3 b2(32, 8);
	bernsen_fn fn = bernsen_by_radius[kr];

	if (split) {
		CUDA_CHECK(cudaEventRecord(t->ev_split, sk));
		CUDA_CHECK(cudaStreamWaitEvent(su, t->ev_split, 0));
		CUDA_CHECK(cudaStreamWaitEvent(sd, t->ev_split, 0));
	}
	if (c->profile)
		CUDA_CHECK(cudaEventRecord(t->ev[0], su));
	for (int i = 0; i < nb; i++) {
		int y0 = i * bh, y1 = band_end(i, bh, height);
		CUDA_CHECK(cudaMemcpy2DAsync(t->d_grey + (size_t)y0 * width, width, src + (size_t)y0 * t->src_stride,
					     t->src_stride, width, y1 - y0, cudaMemcpyHostToDevice, su));
		if (split)
			CUDA_CHECK(cudaEventRecord(t->ev_up[i], su));
	}
	if (c->profile)
		CUDA_CHECK(cudaEventRecord(t->ev[1], su));
	if (extremes_fork(t, su, width, height))
		goto fail;
	if (m)
		d_src = t->d_pre_a;
	for (int j = 0; j < nb; j++) {
		int y0 = j * bh, y1 = band_end(j, bh, height), need = min(y1 + r, height);
		/* the rows this band reads: prefiltered ones first when there is a median */
		while (m && med_done < need) {
			int my0 = mi * bh, my1 = band_end(mi, bh, height), up_need = min(my1 + m, height);
			int ub = (up_need - 1) / bh;
			if (split && ub > up_waited) {
				CUDA_CHECK(cudaStreamWaitEvent(sk, t->ev_up[ub], 0));
				up_waited = ub;
			}
			dim3 gm((width + 31) / 32, (my1 - my0 + 7) / 8);
			if (c->median == 3)
				median_kernel<3><<<gm, b2, 0, sk>>>(t->d_grey, t->d_pre_a, width, width, height, my0, my1);
			else
				median_kernel<5><<<gm, b2, 0, sk>>>(t->d_grey, t->d_pre_a, width, width, height, my0, my1);
			med_done = my1;
			mi++;
		}
		if (!m) {
			int ub = (need - 1) / bh;
			if (split && ub > up_waited) {
				CUDA_CHECK(cudaStreamWaitEvent(sk, t->ev_up[ub], 0));
				up_waited = ub;
			}
		}
		dim3 gb((width + TILE_W - 1) / TILE_W, (y1 - y0 + th - 1) / th);
		fn<<<gb, THREADS, bernsen_smem_bytes(r, th), sk>>>(d_src, width, width, height, r, c->gate, t->d_mask,
								    words32, y0, t->d_mask, MODE_BERNSEN);
		CUDA_CHECK(cudaGetLastError());
		if (split) {
			CUDA_CHECK(cudaEventRecord(t->ev_k[j], sk));
			CUDA_CHECK(cudaStreamWaitEvent(sd, t->ev_k[j], 0));
		}
		if (c->profile && j == nb - 1)
			CUDA_CHECK(cudaEventRecord(t->ev[2], sk));
		if (t->download)
			CUDA_CHECK(cudaMemcpyAsync(t->h_mask + (size_t)y0 * t->words, t->d_mask + (size_t)y0 * words32,
						   (size_t)t->words * (y1 - y0) * sizeof(uint64_t), cudaMemcpyDeviceToHost,
						   sd));
	}
	if (c->profile)
		CUDA_CHECK(cudaEventRecord(t->ev[3], sd));
	if (split) {
		CUDA_CHECK(cudaEventRecord(t->ev_merge, sd));
		CUDA_CHECK(cudaStreamWaitEvent(sk, t->ev_merge, 0));
	}
	t->last = sk;
	return 0;
fail:
	return ERR_DEVICE;
}

/* Gaussian or tiled mode: the whole frame on one stream. */
static int launch_whole(struct cuda_threshold *t, const uint8_t *src, int width, int height, int words32)
{
	const struct cuda_threshold_config *c = &t->cfg;
	const uint8_t *d_src;
	dim3 b2(32, 8), g2((width + 31) / 32, (height + 7) / 8);
	if (c->profile)
		CUDA_CHECK(cudaEventRecord(t->ev[0], t->stream));
	CUDA_CHECK(cudaMemcpy2DAsync(t->d_grey, width, src, t->src_stride, width, height, cudaMemcpyHostToDevice,
				     t->stream));
	if (c->profile)
		CUDA_CHECK(cudaEventRecord(t->ev[1], t->stream));
	if (extremes_fork(t, t->stream, width, height))
		goto fail;
	d_src = t->d_grey;
	if (c->median) {
		if (c->median == 3)
			median_kernel<3><<<g2, b2, 0, t->stream>>>(d_src, t->d_pre_a, width, width, height, 0, height);
		else
			median_kernel<5><<<g2, b2, 0, t->stream>>>(d_src, t->d_pre_a, width, width, height, 0, height);
		d_src = t->d_pre_a;
	}
	if (gauss_on(c)) {
		gauss_taps taps;
		taps.r = c->gauss_radius;
		memcpy(taps.w, c->gauss_taps, sizeof taps.w);
		uint8_t *d_dst = d_src == t->d_pre_a ? t->d_pre_b : t->d_pre_a;
		gauss_rows_kernel<<<g2, b2, 0, t->stream>>>(d_src, t->d_gauss_tmp, width, width, height, taps);
		gauss_cols_kernel<<<g2, b2, 0, t->stream>>>(t->d_gauss_tmp, d_dst, width, width, height, taps);
		d_src = d_dst;
	}
	if (c->mode >= MODE_MEAN && c->mode <= MODE_BOTH) {
		/* the local mean first: into the mask itself, or beside it for the Bernsen kernel to fuse */
		dim3 bm(128), gm((width + 127) / 128, (height + MEAN_COL_ROWS - 1) / MEAN_COL_ROWS);
		int m = c->mean_radius, mean_min = c->mode == MODE_MEAN ? c->gate : 0;
		uint32_t *d_mw = c->mode == MODE_MEAN ? t->d_mask : t->d_mean_mask;
		mean_cols_kernel<<<gm, bm, 0, t->stream>>>(d_src, width, width, height, m, t->d_mean_col, NULL);
		mean_rows_kernel<<<height, THREADS, (size_t)(width + 1 + THREADS) * sizeof(int), t->stream>>>(
			d_src, width, width, height, m, c->mean_bias, mean_min, t->d_mean_col, d_mw, words32);
	} else if (c->mode == MODE_SAUVOLA) {
		dim3 bm(128), gm((width + 127) / 128, (height + MEAN_COL_ROWS - 1) / MEAN_COL_ROWS);
		dim3 gs((width + SAUVOLA_CHUNK - 1) / SAUVOLA_CHUNK, height);
		int m = c->mean_radius;
		mean_cols_kernel<<<gm, bm, 0, t->stream>>>(d_src, width, width, height, m, t->d_mean_col, t->d_sq_col);
		sauvola_rows_kernel<<<gs, THREADS, 0, t->stream>>>(d_src, width, width, height, m, c->sauvola_k,
								   c->sauvola_range, c->gate, t->d_mean_col,
								   t->d_sq_col, t->d_mask, words32);
	}
	if (c->mode == MODE_TILED) {
		int s = c->tile, ntx = (width + s - 1) / s, nty = (height + s - 1) / s;
		dim3 bt(16, 16), gt((ntx + 15) / 16, (nty + 15) / 16);
		tile_minmax_kernel<<<gt, bt, 0, t->stream>>>(d_src, width, width, height, s, ntx, nty, t->d_tile_lo,
							     t->d_tile_hi);
		tile_threshold_kernel<<<gt, bt, 0, t->stream>>>(t->d_tile_lo, t->d_tile_hi, ntx, nty, c->gate,
								t->d_tile_t);
		dim3 bc(256), gc((words32 + 7) / 8, height);
		tile_compare_kernel<<<gc, bc, 0, t->stream>>>(d_src, width, width, height, s, ntx, t->d_tile_t,
							      t->d_mask, words32);
	} else if (c->mode != MODE_MEAN && c->mode != MODE_SAUVOLA) {
		int kr = c->kernel_variant == 1 ? 0 : c->radius, th = tile_h_for(kr);
		dim3 gb((width + TILE_W - 1) / TILE_W, (height + th - 1) / th);
		bernsen_by_radius[kr]<<<gb, THREADS, bernsen_smem_bytes(c->radius, th), t->stream>>>(
			d_src, width, width, height, c->radius, c->gate, t->d_mask, words32, 0, t->d_mean_mask, c->mode);
	}
	CUDA_CHECK(cudaGetLastError());
	if (c->profile)
		CUDA_CHECK(cudaEventRecord(t->ev[2], t->stream));
	if (t->download)
		CUDA_CHECK(cudaMemcpyAsync(t->h_mask, t->d_mask, (size_t)t->words * height * sizeof(uint64_t),
					   cudaMemcpyDeviceToHost, t->stream));
	if (c->profile)
		CUDA_CHECK(cudaEventRecord(t->ev[3], t->stream));
	t->last = t->stream;
	return 0;
fail:
	return ERR_DEVICE;
}

/* The frame's launch sequence, queued call by call. */
static int launch(struct cuda_threshold *t, const uint8_t *src, int width, int height)
{
	const int e = per_pixel_bernsen(&t->cfg) ? launch_bernsen(t, src, width, height, 2 * t->words)
						 : launch_whole(t, src, width, height, 2 * t->words);
	return e ? e : extremes_join(t);
}

/* Whether the frame goes as a graph: no profiling events between its
 * steps. A banded frame's streams fork from and join the kernel stream
 * (launch_bernsen), so its graph has a branch a stream. */
static bool graph_ok(const struct cuda_threshold *t)
{
	return !t->no_graph && !t->cfg.profile;
}

/* Destroys the graphs that upload from [p, p + n) (every one when p is
 * NULL): a buffer unregistered may come back at that address unpinned. */
static void thr_graphs_drop(struct cuda_threshold *t, const uint8_t *p, size_t n)
{
	for (int i = 0; i < t->n_graphs;) {
		struct thr_graph *tg = &t->graphs[i];
		if (p && (tg->src < p || tg->src >= p + n)) {
			i++;
			continue;
		}
		cudaGraphExecDestroy(tg->exec);
		cudaGraphDestroy(tg->graph);
		*tg = t->graphs[--t->n_graphs];
	}
}

/* Sets the gate in a graph's Bernsen kernel nodes (the other arguments as
 * captured). */
static cudaError_t thr_graph_gate(struct thr_graph *tg, int gate)
{
	for (int k = 0; k < tg->n_gate_nodes; k++) {
		cudaKernelNodeParams kp;
		cudaError_t e = cudaGraphKernelNodeGetParams(tg->gate_nodes[k], &kp);
		if (e != cudaSuccess)
			return e;
		if (!kp.kernelParams)
			return cudaErrorInvalidValue;
		void *args[BERNSEN_ARGS];
		for (int i = 0; i < BERNSEN_ARGS; i++)
			args[i] = kp.kernelParams[i];
		args[BERNSEN_GATE_ARG] = &gate;
		kp.kernelParams = args;
		e = cudaGraphExecKernelNodeSetParams(tg->exec, tg->gate_nodes[k], &kp);
		if (e != cudaSuccess)
			return e;
	}
	tg->gate = gate;
	return cudaSuccess;
}

/* The nodes of kernel fn in a captured graph, at most MAX_BANDS: how many
 * (0 when there are more). */
static int kernel_nodes(cudaGraph_t graph, const void *fn, cudaGraphNode_t nodes[MAX_BANDS])
{
	int n = 0;
	cuda_graph_node(graph, cudaGraphNodeTypeKernel, [fn, nodes, &n](cudaGraphNode_t node) {
		cudaKernelNodeParams kp;
		if (cudaGraphKernelNodeGetParams(node, &kp) == cudaSuccess && kp.func == fn)
			n = n < MAX_BANDS ? (nodes[n] = node, n + 1) : MAX_BANDS + 1;
		return false;
	});
	return n <= MAX_BANDS ? n : 0;
}

/* The graph of this frame's source buffer, size, mask slot and
 * configuration, its gate set: found, or captured now (the least recently
 * used of THR_GRAPHS replaced). NULL when capture fails: logged once, and
 * the frames are queued call by call from then on. */
static struct thr_graph *thr_graph_for(struct cuda_threshold *t, const uint8_t *src, int width, int height)
{
	struct cuda_threshold_config key = t->cfg;
	const bool in_node = per_pixel_bernsen(&key); /* the only kernel reading the gate */
	if (in_node)
		key.gate = 0;
	struct thr_graph *tg = NULL;
	for (int i = 0; i < t->n_graphs && !tg; i++) {
		struct thr_graph *g = &t->graphs[i];
		if (g->src == src && g->src_stride == t->src_stride && g->width == width && g->height == height &&
		    g->cur == t->cur && g->download == t->download && g->extremes == t->extremes &&
		    memcmp(&g->cfg, &key, sizeof key) == 0)
			tg = g;
	}
	if (tg && in_node && tg->gate != t->cfg.gate && thr_graph_gate(tg, t->cfg.gate) != cudaSuccess) {
		(void)cudaGetLastError();
		log_warn("cuda threshold: cannot set the gate in a graph; launching kernel by kernel");
		t->no_graph = true;
		return NULL;
	}
	if (tg) {
		tg->used = ++t->n_launch;
		return tg;
	}
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	if (!cuda_capture_graph(
		    t->stream,
		    [&](cudaStream_t) { return launch(t, src, width, height) == 0 ? cudaSuccess : cudaErrorUnknown; },
		    &exec, "cuda threshold", &graph)) {
		t->no_graph = true;
		return NULL;
	}
	cudaGraphNode_t gate_nodes[MAX_BANDS];
	int n_gate_nodes = 0;
	if (in_node) {
		const int kr = key.kernel_variant == 1 ? 0 : key.radius;
		n_gate_nodes = kernel_nodes(graph, (const void *)bernsen_by_radius[kr], gate_nodes);
		if (!n_gate_nodes) {
			log_warn("cuda threshold: no Bernsen kernel in the captured graph; launching kernel by kernel");
			cudaGraphExecDestroy(exec);
			cudaGraphDestroy(graph);
			t->no_graph = true;
			return NULL;
		}
	}
	if (t->n_graphs < THR_GRAPHS) {
		tg = &t->graphs[t->n_graphs++];
	} else {
		tg = &t->graphs[0];
		for (int i = 1; i < THR_GRAPHS; i++)
			if (t->graphs[i].used < tg->used)
				tg = &t->graphs[i];
		cudaGraphExecDestroy(tg->exec);
		cudaGraphDestroy(tg->graph);
	}
	*tg = (struct thr_graph){.src = src, .src_stride = t->src_stride, .width = width, .height = height,
				 .cur = t->cur, .download = t->download, .extremes = t->extremes, .cfg = key,
				 .graph = graph, .exec = exec, .gate_nodes = {}, .n_gate_nodes = n_gate_nodes, .gate = t->cfg.gate,
				 .used = ++t->n_launch};
	memcpy(tg->gate_nodes, gate_nodes, sizeof gate_nodes);
	return tg;
}

int cuda_threshold_submit(struct cuda_threshold *t, const uint8_t *grey, int width, int height, int stride)
{
	const struct cuda_threshold_config *c = &t->cfg;
	const uint8_t *src = grey;
	size_t span;
	int e;
	if (width < 1 || height < 1 || width > c->max_width || height > c->max_height || stride < width)
		return ERR_SIZE;
	if (t->pending)
		CUDA_CHECK(cudaStreamSynchronize(t->last)); /* a submit without collect: the old frame is dropped */
	t->pending = false;
	t->cur ^= 1;
	t->h_mask = t->h_masks[t->cur];
	t->d_mask = t->d_masks[t->cur];
	t->download = !t->skip_download;
	t->extremes = t->want_extremes;
	span = (size_t)stride * (height - 1) + width;
	if (!is_registered(t, grey, span)) {
		/* pageable memory: the DMA engine needs a pinned copy */
		for (int y = 0; y < height; y++)
			memcpy(t->h_grey + (size_t)y * width, grey + (size_t)y * stride, (size_t)width);
		src = t->h_grey;
		stride = width;
	}
	t->src_stride = stride;
	t->words = (width + 63) / 64;
	{
		struct thr_graph *tg = graph_ok(t) ? thr_graph_for(t, src, width, height) : NULL;
		if (tg) {
			CUDA_CHECK(cudaGraphLaunch(tg->exec, t->stream));
			t->last = t->stream;
		} else if ((e = launch(t, src, width, height)) < 0) {
			return e;
		}
	}
	CUDA_CHECK(cudaEventRecord(t->ev_done, t->last));
	t->timed = c->profile != 0;
	t->width = width;
	t->height = height;
	t->pending = true;
	return 0;
fail:
	return ERR_DEVICE;
}

int cuda_threshold_device_mask(struct cuda_threshold *t, const void **dev_bits, int *stride_words, void **stream)
{
	if (!t->width)
		return ERR_AGAIN;
	*dev_bits = t->d_mask;
	*stride_words = t->words;
	*stream = t->stream;
	return 0;
}

int cuda_threshold_collect_view(struct cuda_threshold *t, const uint64_t **bits, int *stride_words)
{
	if (!t->pending)
		return ERR_AGAIN;
	t->pending = false;
	CUDA_CHECK(cudaEventSynchronize(t->ev_done));
	t->done_d = t->d_mask;
	t->done_h = t->h_mask;
	t->done_down = t->download;
	t->done_words = t->words;
	t->done_height = t->height;
	t->done_ext = t->extremes ? t->h_ext[t->cur] : NULL;
	*bits = t->download ? t->h_mask : NULL;
	*stride_words = t->words;
	return 0;
fail:
	return ERR_DEVICE;
}

void cuda_threshold_set_download(struct cuda_threshold *t, int on)
{
	t->skip_download = !on;
}

void cuda_threshold_set_extremes(struct cuda_threshold *t, int on)
{
	t->want_extremes = on != 0;
}

int cuda_threshold_extremes(struct cuda_threshold *t, const uint8_t **lohi)
{
	if (!t->done_ext)
		return ERR_AGAIN;
	*lohi = t->done_ext;
	return 0;
}

int cuda_threshold_fetch_mask(struct cuda_threshold *t, const uint64_t **bits, int *stride_words)
{
	if (!t->done_h)
		return ERR_AGAIN;
	if (!t->done_down) {
		CUDA_CHECK(cudaMemcpyAsync(t->done_h, t->done_d, (size_t)t->done_words * t->done_height * sizeof(uint64_t),
					   cudaMemcpyDeviceToHost, t->s_fetch));
		CUDA_CHECK(cudaStreamSynchronize(t->s_fetch));
		t->done_down = true;
	}
	*bits = t->done_h;
	*stride_words = t->done_words;
	return 0;
fail:
	return ERR_DEVICE;
}

int cuda_threshold_collect(struct cuda_threshold *t, uint64_t *bits, int stride_words)
{
	const uint64_t *src;
	int sw, e;
	if (stride_words < t->words)
		return ERR_SIZE;
	if ((e = cuda_threshold_collect_view(t, &src, &sw)) < 0)
		return e;
	if (!src && (e = cuda_threshold_fetch_mask(t, &src, &sw)) < 0)
		return e;
	if (stride_words == sw) {
		memcpy(bits, src, (size_t)sw * t->height * sizeof(uint64_t));
	} else {
		for (int y = 0; y < t->height; y++)
			memcpy(bits + (size_t)y * stride_words, src + (size_t)y * sw, (size_t)sw * sizeof(uint64_t));
	}
	return 0;
}

int cuda_threshold_stage_times(struct cuda_threshold *t, float *upload_us, float *kernels_us, float *download_us)
{
	float ms[3];
	*upload_us = *kernels_us = *download_us = 0.0f;
	if (!t->timed || t->pending)
		return ERR_AGAIN;
	/* ev[1] sits on the upload stream, which collect does not wait for */
	for (int i = 0; i < 4; i++)
		CUDA_CHECK(cudaEventSynchronize(t->ev[i]));
	for (int i = 0; i < 3; i++)
		CUDA_CHECK(cudaEventElapsedTime(&ms[i], t->ev[i], t->ev[i + 1]));
	*upload_us = ms[0] * 1000.0f;
	*kernels_us = ms[1] * 1000.0f;
	*download_us = ms[2] * 1000.0f;
	return 0;
fail:
	return ERR_DEVICE;
}
