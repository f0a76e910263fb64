/* The GPU Canny: see canny_cuda.h for the contract and the kernels. */
#include "canny_cuda.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "../src/core/err.h"
#include "../src/core/log.h"
}

#include "cuda_check.cuh"

#define R_MAX CUDA_CANNY_MAX_RADIUS
#define TW 32 /* tile of the gradient kernel */
#define TH 32
#define THREADS 512
#define EDGE_BLOCKS 528 /* four a multiprocessor of an H100 */
#define MAG_MAX 2040
/* enum canny_dir and the classes of src/outline/canny.c */
#define DIR_H 0
#define DIR_DIAG 1
#define DIR_V 2
#define DIR_ANTI 3
#define CLS_WEAK 1
#define CLS_STRONG 2
#define CAND 2   /* d_cls: a candidate */
#define STRONG 1 /* d_cls: a tile root whose tile component holds a strong pixel; also the edge byte's 1 */

struct taps {
	int w[R_MAX + 1];
	int r;
};

struct rect {
	int x0, y0, x1, y1; /* half-open, inside the frame */
};

struct cuda_canny {
	struct cuda_canny_config cfg;
	cudaStream_t stream;
	uint8_t *d_grey, *d_dir;
	/* A byte a pixel of the rectangle: 0 no candidate, CAND a candidate,
	 * CAND | STRONG a tile root whose tile component holds a strong pixel.
	 * The border kernel reads candidacy here, a byte, and follows d_label
	 * (written for candidates only) just for candidates: most pixels are
	 * none. The edges kernel then rewrites each candidate's byte to its
	 * edge value (1 or 0), in place: the array downloaded as the edges. */
	uint8_t *d_cls;
	/* The candidates' count, two of them: a frame counts into one and its
	 * edges kernel clears the other for the next frame (no memset a frame). */
	int32_t *d_count;
	unsigned frames; /* frames submitted: which count is this frame's */
	bool counts_stale; /* a submit failed between its kernels: both counts are cleared first */
	int32_t *d_cand; /* the frame indices of the candidates, in no order (*count of them) */
	uint16_t *d_mag;
	int32_t *d_label;
	uint8_t *h_grey, *h_edge, *h_dir; /* pinned */
	uint16_t *h_mag;                  /* pinned */
	int width, height;
	struct rect r;
	bool pending, timed;
	bool pdl; /* the border and edges kernels launch while the kernel before them ends (sm_90 on) */
	cudaEvent_t ev[4]; /* profile: before upload, after upload, after kernels, after download */
};

/* Programmatic dependent launch (sm_90 on; no-ops where a kernel was not
 * launched with it): a kernel lets the next one in the stream launch once
 * all its blocks have started (launch_dependents), and the next one waits
 * for the whole of it, memory included, before it reads anything (wait).
 * The border and edges kernels are short: their launch, not their work,
 * was a good part of their time. */
static __device__ __forceinline__ void pdl_launch_dependents(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.launch_dependents;");
#endif
}

static __device__ __forceinline__ void pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

static __device__ __forceinline__ int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

static __device__ __forceinline__ int find_root(const int32_t *label, int x)
{
	const volatile int32_t *l = label;
	int y;
	while ((y = l[x]) != x)
		x = y;
	return x;
}

/* find_root with path halving (each label on the way is pointed at its
 * grandparent). The border kernel's unions chain tile roots across tiles,
 * up to a link a tile along a long edge, and every candidate of those
 * tiles walks the chain; halving it serves the threads that come later.
 * Safe while unions run (as in ECL-CC): a union changes a label only
 * where it is a root, once, by compare-and-swap, and this writes only
 * labels that are no roots, each to an ancestor of its node (every label
 * comes before its node in the order the unions hook by), so a write here
 * never undoes a union and a race between two of them leaves an ancestor
 * either way. */
static __device__ __forceinline__ int find_halving(int32_t *label, int x)
{
	volatile int32_t *l = label;
	int y;
	while ((y = l[x]) != x) {
		const int z = l[y];
		if (z != y)
			l[x] = z;
		x = z;
	}
	return x;
}

/* The order the frame's unions hook roots by: the roots of strong tile
 * components first, then by index. A component's root is then strong as
 * soon as any tile root in it is, and the edges kernel reads the answer
 * at the root: no kernel marks roots after the unions. A candidate that
 * is no tile root is CAND alone and its label (its tile root) comes
 * first in this order too. */
static __device__ __forceinline__ unsigned frame_key(const uint8_t *cls, int x)
{
	return (unsigned)x | (((const volatile uint8_t *)cls)[x] & STRONG ? 0u : 1u << 30);
}

/* Lock-free union: hook the later root (by index in a tile, labels in
 * shared memory, cls NULL; by frame_key across tiles) under the earlier
 * with a compare-and-swap that holds only while it is a root; when
 * another thread hooked it first, find both roots again (halving the
 * paths on the way, find_halving). Generic pointers: the tiles' labels in
 * shared memory and the frame's in global memory go through the same
 * functions. */
static __device__ void unite(int32_t *label, const uint8_t *cls, int a, int b)
{
	for (;;) {
		a = find_halving(label, a);
		b = find_halving(label, b);
		if (a == b)
			return;
		if (cls ? frame_key(cls, a) > frame_key(cls, b) : a > b) {
			int t = a;
			a = b;
			b = t;
		}
		if (atomicCAS(&label[b], b, a) == b)
			return;
	}
}

/* G outputs of one Gaussian pass (taps tp, sums not yet scaled) from the
 * G + 2R samples of src spaced step apart, each read once into registers. */
template <int R, int G, typename T>
static __device__ __forceinline__ void gauss_run(const T *src, int step, const struct taps &tp, unsigned out[G])
{
	unsigned v[G + 2 * R];
#pragma unroll
	for (int j = 0; j < G + 2 * R; j++)
		v[j] = src[j * step];
#pragma unroll
	for (int o = 0; o < G; o++) {
		unsigned acc = (unsigned)tp.w[0] * v[o + R];
#pragma unroll
		for (int k = 1; k <= R; k++)
			acc += (unsigned)tp.w[k] * (v[o + R + k] + v[o + R - k]);
		out[o] = acc;
	}
}

/*
 * Kernel 1, one instance a Gaussian radius R (the apron's size and the taps'
 * loops fixed at compile time: index arithmetic by constants, unrolled
 * taps, shared arrays no larger than R needs). Shared arrays, all in
 * tile-local coordinates whose origin is the tile's top-left minus the apron:
 *   s_in  (TW + 4 + 2R) x (TH + 4 + 2R)  input, clamped coordinates
 *   s_t   (TW + 4) x (TH + 4 + 2R)      Gaussian row pass
 *   s_s   (TW + 4) x (TH + 4)           smoothed
 *   s_m   (TW + 2) x (TH + 2)           magnitude (0 outside the frame)
 *   s_d   (TW + 2) x (TH + 2)           sector
 * Positions outside the frame in s_t / s_s hold values nobody reads: the
 * Sobel reads S at clamped frame coordinates, which always fall inside.
 */
/* Four blocks a multiprocessor where one holds 2048 threads (A100, H100,
 * B200): at the 34 registers ptxas picks unbounded only three fit, and
 * 2040 tiles of a 1080p frame ran as six waves instead of four (H200,
 * std-1080's 8 frames, three interleaved runs: 83.5 -> 80.4 us of kernels,
 * median; at 640x480 45.7 -> 45.4; 256 or 1024 threads, 64 x 32 tiles or
 * border pixels in full blocks were all slower). Other multiprocessors
 * hold fewer threads, and the registers fit what they hold. */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000)
#define GRADIENT_MIN_BLOCKS 4
#else
#define GRADIENT_MIN_BLOCKS 1
#endif
template <int R>
__global__ void __launch_bounds__(THREADS, GRADIENT_MIN_BLOCKS)
	gradient_kernel(const uint8_t *__restrict__ d_in, int w, int h, struct rect r, struct taps tp, int low, int high,
			uint16_t *__restrict__ d_mag, uint8_t *__restrict__ d_dir,
			int32_t *__restrict__ d_label, uint8_t *__restrict__ d_cls, int32_t *__restrict__ d_count,
			int32_t *__restrict__ d_cand)
{
	constexpr int iw = TW + 4 + 2 * R, ih = TH + 4 + 2 * R, sw = TW + 4, sh = TH + 4;
	/* s_in's rows are whole 32-bit words (sp bytes, the apron's at byte
	 * a of its row), so an aligned tile loads a word a thread. */
	constexpr int nw = (iw + 6) / 4, sp = 4 * nw;
	__shared__ uint32_t s_in32[ih * nw];
	uint8_t *const s_in = (uint8_t *)s_in32;
	__shared__ uint16_t s_t[ih * sw];
	__shared__ uint8_t s_s[sh * sw];
	__shared__ uint16_t s_m[(TH + 2) * (TW + 2)];
	__shared__ uint8_t s_d[(TH + 2) * (TW + 2)];
	__shared__ uint8_t s_c[TH * TW];   /* class */
	__shared__ int s_l[TH * TW];       /* tile-local union-find */
	__shared__ uint8_t s_str[TH * TW]; /* a local root whose component holds a strong pixel */
	__shared__ uint16_t s_cand[TH * TW];
	__shared__ int s_ncand, s_base;
	const int tid = threadIdx.x;
	pdl_launch_dependents();
	const int gx0 = r.x0 + blockIdx.x * TW, gy0 = r.y0 + blockIdx.y * TH;
	if (tid == 0)
		s_ncand = 0;
	const int ox = gx0 - 2 - R, oy = gy0 - 2 - R; /* frame position of s_in[0] */

	/* A tile whose apron lies inside the frame (most of them) needs no
	 * clamping, here or in the Sobel step; the test is the same for the
	 * whole block. */
	const bool inside = ox >= 0 && oy >= 0 && ox + iw <= w && oy + ih <= h;
	int a = 0;
	if (inside && (w & 3) == 0) {
		/* Words of the frame's rows (w a multiple of 4, so rows start on
		 * words): those holding [ox, ox + iw), never past the row. */
		a = ox & 3;
		const int nwn = ((ox + iw + 3) >> 2) - (ox >> 2);
		const uint32_t *src = (const uint32_t *)d_in + (((size_t)oy * w + ox) >> 2);
		const int wrow = w >> 2;
		for (int i = tid; i < ih * nw; i += THREADS) {
			const int row = i / nw, k = i - row * nw;
			if (k < nwn)
				s_in32[i] = src[(size_t)row * wrow + k];
		}
	} else if (inside) {
		for (int i = tid; i < iw * ih; i += THREADS) {
			const int row = i / iw, col = i - row * iw;
			s_in[row * sp + col] = d_in[(size_t)(oy + row) * w + ox + col];
		}
	} else {
		for (int i = tid; i < iw * ih; i += THREADS) {
			const int row = i / iw, col = i - row * iw;
			s_in[row * sp + col] = d_in[(size_t)clampi(oy + row, 0, h - 1) * w + clampi(ox + col, 0, w - 1)];
		}
	}
	__syncthreads();
	/* Both Gaussian passes give G outputs a thread from one window of
	 * G + 2R samples (gauss_run); sw and sh are multiples of G. */
	constexpr int G = 4;
	static_assert(sw % G == 0 && sh % G == 0, "tile + 4 must be a multiple of G");
	for (int i = tid; i < (sw / G) * ih; i += THREADS) {
		const int row = i / (sw / G), col = (i - row * (sw / G)) * G;
		unsigned out[G];
		gauss_run<R, G>(s_in + row * sp + a + col, 1, tp, out);
#pragma unroll
		for (int o = 0; o < G; o++)
			s_t[row * sw + col + o] = (uint16_t)out[o];
	}
	__syncthreads();
	/* S at frame row y reads T at clamped rows. s_t's row j holds T of frame
	 * row clamp(oy + j), as s_in's does, so frame row y + k is s_t row
	 * y + k - oy whether or not it lies outside the frame: no clamping
	 * here. Rows of S outside the frame are never read (see above). S's
	 * row `row` is frame row gy0 - 2 + row, s_t's row row + R. */
	for (int i = tid; i < sw * (sh / G); i += THREADS) {
		const int grp = i / sw, col = i - grp * sw, row = grp * G;
		unsigned out[G];
		gauss_run<R, G>(s_t + row * sw + col, sw, tp, out);
#pragma unroll
		for (int o = 0; o < G; o++)
			s_s[(row + o) * sw + col] = (uint8_t)((out[o] + 32768u) >> 16);
	}
	__syncthreads();
	const int mw = TW + 2, mh = TH + 2, sx0 = gx0 - 2, sy0 = gy0 - 2;
	for (int i = tid; i < mw * mh; i += THREADS) {
		int row = i / mw, col = i - row * mw, x = gx0 - 1 + col, y = gy0 - 1 + row;
		int m = 0, d = DIR_H;
		if (inside || (x >= 0 && y >= 0 && x < w && y < h)) {
			const int c = x - sx0, l = inside ? c - 1 : clampi(x - 1, 0, w - 1) - sx0,
				  rr = inside ? c + 1 : clampi(x + 1, 0, w - 1) - sx0;
			const uint8_t *mid = s_s + (y - sy0) * sw;
			const uint8_t *up = inside ? mid - sw : s_s + (clampi(y - 1, 0, h - 1) - sy0) * sw;
			const uint8_t *dn = inside ? mid + sw : s_s + (clampi(y + 1, 0, h - 1) - sy0) * sw;
			int gx = (up[rr] + 2 * mid[rr] + dn[rr]) - (up[l] + 2 * mid[l] + dn[l]);
			int gy = (dn[l] + 2 * dn[c] + dn[rr]) - (up[l] + 2 * up[c] + up[rr]);
			int ax = abs(gx), ay = abs(gy);
			if (128 * ay <= 53 * ax)
				d = DIR_H;
			else if (128 * ax <= 53 * ay)
				d = DIR_V;
			else
				d = (gx > 0) == (gy > 0) ? DIR_DIAG : DIR_ANTI;
			m = ax + ay;
		}
		s_m[i] = (uint16_t)m;
		s_d[i] = (uint8_t)d;
	}
	__syncthreads();
	for (int i = tid; i < TW * TH; i += THREADS) {
		int ty = i / TW, tx = i - ty * TW, x = gx0 + tx, y = gy0 + ty;
		s_l[i] = i;
		s_str[i] = 0;
		s_c[i] = 0;
		if (x >= r.x1 || y >= r.y1)
			continue;
		int li = (ty + 1) * mw + tx + 1, m = s_m[li], d = s_d[li], cls = 0;
		if (m >= low) {
			/* first / second neighbours of enum canny_dir, as offsets in s_m */
			int off = d == DIR_H ? -1 : d == DIR_DIAG ? -mw - 1 : d == DIR_V ? -mw : -mw + 1;
			if (m > s_m[li + off] && m >= s_m[li - off])
				cls = m >= high ? CLS_STRONG : CLS_WEAK;
		}
		const size_t p = (size_t)y * w + x;
		d_mag[p] = (uint16_t)m;
		d_dir[p] = (uint8_t)d;
		s_c[i] = (uint8_t)cls;
	}
	__syncthreads();
	/* Hysteresis inside the tile first, in shared memory: each candidate
	 * unites with its candidate neighbours left, up-left, up and up-right
	 * in the tile (the tile's cells outside the rectangle are no
	 * candidates). The border_kernel joins the tiles. */
	for (int i = tid; i < TW * TH; i += THREADS) {
		if (!s_c[i])
			continue;
		int ty = i / TW, tx = i - ty * TW;
		if (tx > 0 && s_c[i - 1])
			unite(s_l, NULL, i, i - 1);
		if (ty > 0) {
			if (tx > 0 && s_c[i - TW - 1])
				unite(s_l, NULL, i, i - TW - 1);
			if (s_c[i - TW])
				unite(s_l, NULL, i, i - TW);
			if (tx + 1 < TW && s_c[i - TW + 1])
				unite(s_l, NULL, i, i - TW + 1);
		}
	}
	__syncthreads();
	for (int i = tid; i < TW * TH; i += THREADS)
		if (s_c[i]) {
			int root = find_root(s_l, i);
			s_l[i] = root;
			if (s_c[i] == CLS_STRONG)
				s_str[root] = 1;
		}
	__syncthreads();
	/* Global labels: a candidate points at its tile root's frame index;
	 * each pixel's class byte is written (CAND | STRONG for a strong tile
	 * root: the key of the frame's unions), the candidates' bytes become
	 * edge bytes in kernel 3 and the others stay 0. */
	for (int i = tid; i < TW * TH; i += THREADS) {
		int ty = i / TW, tx = i - ty * TW, x = gx0 + tx, y = gy0 + ty;
		if (x >= r.x1 || y >= r.y1)
			continue;
		size_t p = (size_t)y * w + x;
		int root = s_l[i], ry = root / TW, rx = root - ry * TW;
		if (s_c[i])
			d_label[p] = (gy0 + ry) * w + gx0 + rx;
		d_cls[p] = s_c[i] ? (root == i && s_str[i] ? CAND | STRONG : CAND) : 0;
		if (s_c[i])
			s_cand[atomicAdd(&s_ncand, 1)] = (uint16_t)i;
	}
	/* The tile's candidates join the frame's list: one global atomic a
	 * tile for its place, then contiguous writes. */
	__syncthreads();
	if (tid == 0)
		s_base = s_ncand ? atomicAdd(d_count, s_ncand) : 0;
	__syncthreads();
	for (int j = tid; j < s_ncand; j += THREADS) {
		const int i = s_cand[j], ty = i / TW, tx = i - ty * TW;
		d_cand[s_base + j] = (gy0 + ty) * w + gx0 + tx;
	}
}


/* The instances, indexed by the radius (R_MAX = 12). */
typedef void (*gradient_fn)(const uint8_t *, int, int, struct rect, struct taps, int, int, uint16_t *, uint8_t *,
			    int32_t *, uint8_t *, int32_t *, int32_t *);
static const gradient_fn gradient_kernels[R_MAX + 1] = {
	gradient_kernel<0>, gradient_kernel<1>, gradient_kernel<2>,  gradient_kernel<3>, gradient_kernel<4>,
	gradient_kernel<5>, gradient_kernel<6>, gradient_kernel<7>,  gradient_kernel<8>, gradient_kernel<9>,
	gradient_kernel<10>, gradient_kernel<11>, gradient_kernel<12>};

/* Kernel 2: one block a tile; its threads take the tile's top row and its
 * left and right columns, and unite each candidate there with its
 * candidate neighbours left, up-left, up and up-right that lie in another
 * tile of the rectangle (the neighbours inside the tile were united in
 * kernel 1), hooking roots in frame_key's order. */
#define BORDER_THREADS (TW + 2 * (TH - 1))
__global__ void __launch_bounds__(BORDER_THREADS)
	border_kernel(int32_t *d_label, const uint8_t *d_cls, int w, struct rect r)
{
	const int t = threadIdx.x, gx0 = r.x0 + blockIdx.x * TW, gy0 = r.y0 + blockIdx.y * TH;
	int x, y;
	pdl_wait();
	pdl_launch_dependents();
	if (t < TW) {
		x = gx0 + t;
		y = gy0;
	} else if (t < TW + TH - 1) {
		x = gx0;
		y = gy0 + 1 + (t - TW);
	} else {
		x = gx0 + TW - 1;
		y = gy0 + 1 + (t - TW - (TH - 1));
	}
	if (x >= r.x1 || y >= r.y1)
		return;
	const int p = y * w + x;
	if (!d_cls[p])
		return;
	const int nx[4] = {-1, -1, 0, 1}, ny[4] = {0, -1, -1, -1};
#pragma unroll
	for (int k = 0; k < 4; k++) {
		int qx = x + nx[k], qy = y + ny[k];
		if (qx < r.x0 || qx >= r.x1 || qy < r.y0)
			continue;
		if (qx >= gx0 && qx < gx0 + TW && qy >= gy0)
			continue; /* same tile */
		int q = qy * w + qx;
		if (d_cls[q])
			unite(d_label, d_cls, p, q);
	}
}

/* Kernel 3: each candidate of the list is an edge when its final root is
 * strong (grid-stride: the list's length is known only on the GPU); its
 * class byte becomes its edge byte. In place and race-free: the only
 * bytes read are final roots', and a final root's new byte is its own
 * STRONG bit, so every read sees the bit it needs before or after the
 * write. Kernel 1 wrote 0 for every other pixel: a 1080p frame has a few
 * percent of its pixels as candidates, and a thread a pixel of the frame
 * cost more (H200: 2.3 us less a 1080p frame, 0.7 us more at 640x480).
 * Block 0 also clears the next frame's count. */
__global__ void edges_kernel(const int32_t *__restrict__ d_count, int32_t *__restrict__ d_next_count,
			     const int32_t *__restrict__ d_cand, int32_t *d_label, uint8_t *d_cls)
{
	pdl_wait();
	const int n = *d_count;
	if (blockIdx.x == 0 && threadIdx.x == 0)
		*d_next_count = 0;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		const int p = d_cand[i];
		d_cls[p] = d_cls[find_halving(d_label, d_label[p])] & STRONG;
	}
}

/* ---- host side ---- */

static bool config_ok(const struct cuda_canny_config *c)
{
	if (c->max_width < 1 || c->max_height < 1 || c->max_width > 8192 || c->max_height > 8192 ||
	    c->gauss_radius < 0 || c->gauss_radius > R_MAX || c->low < 1 || c->high < c->low || c->high > MAG_MAX)
		return false;
	int sum = c->gauss_taps[0];
	for (int i = 1; i <= R_MAX; i++) {
		if (c->gauss_taps[i] < 0 || (i > c->gauss_radius && c->gauss_taps[i] != 0))
			return false;
		sum += 2 * c->gauss_taps[i];
	}
	return sum == 256;
}

struct cuda_canny *cuda_canny_create(const struct cuda_canny_config *cfg, int *err)
{
	struct cuda_canny *k;
	size_t px;
	if (!config_ok(cfg)) {
		*err = ERR_RANGE;
		return NULL;
	}
	k = (struct cuda_canny *)calloc(1, sizeof *k);
	if (!k) {
		*err = ERR_NOMEM;
		return NULL;
	}
	k->cfg = *cfg;
	px = (size_t)cfg->max_width * cfg->max_height;
	CUDA_CHECK(cudaStreamCreateWithFlags(&k->stream, cudaStreamNonBlocking));
	CUDA_CHECK(cudaMalloc(&k->d_grey, px));
	CUDA_CHECK(cudaMalloc(&k->d_dir, px));
	{
		int dev, major;
		CUDA_CHECK(cudaGetDevice(&dev));
		CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
		k->pdl = major >= 9;
	}
	CUDA_CHECK(cudaMalloc(&k->d_count, 2 * sizeof(int32_t)));
	CUDA_CHECK(cudaMemset(k->d_count, 0, 2 * sizeof(int32_t)));
	CUDA_CHECK(cudaMalloc(&k->d_cand, px * sizeof(int32_t)));
	CUDA_CHECK(cudaMalloc(&k->d_cls, px));
	CUDA_CHECK(cudaMalloc(&k->d_mag, px * sizeof(uint16_t)));
	CUDA_CHECK(cudaMalloc(&k->d_label, px * sizeof(int32_t)));
	CUDA_CHECK(cudaHostAlloc(&k->h_grey, px, cudaHostAllocDefault));
	CUDA_CHECK(cudaHostAlloc(&k->h_edge, px, cudaHostAllocDefault));
	CUDA_CHECK(cudaHostAlloc(&k->h_dir, px, cudaHostAllocDefault));
	CUDA_CHECK(cudaHostAlloc(&k->h_mag, px * sizeof(uint16_t), cudaHostAllocDefault));
	for (int i = 0; i < 4; i++)
		CUDA_CHECK(cudaEventCreate(&k->ev[i]));
	*err = 0;
	return k;
fail:
	cuda_canny_destroy(k);
	*err = ERR_DEVICE;
	return NULL;
}

void cuda_canny_destroy(struct cuda_canny *k)
{
	if (!k)
		return;
	if (k->stream)
		cudaStreamSynchronize(k->stream);
	cudaFree(k->d_grey);
	cudaFree(k->d_dir);
	cudaFree(k->d_count);
	cudaFree(k->d_cand);
	cudaFree(k->d_cls);
	cudaFree(k->d_mag);
	cudaFree(k->d_label);
	cudaFreeHost(k->h_grey);
	cudaFreeHost(k->h_edge);
	cudaFreeHost(k->h_dir);
	cudaFreeHost(k->h_mag);
	for (int i = 0; i < 4; i++)
		if (k->ev[i])
			cudaEventDestroy(k->ev[i]);
	if (k->stream)
		cudaStreamDestroy(k->stream);
	free(k);
}

int cuda_canny_set_config(struct cuda_canny *k, const struct cuda_canny_config *cfg)
{
	if (!config_ok(cfg) || cfg->max_width > k->cfg.max_width || cfg->max_height > k->cfg.max_height)
		return ERR_RANGE;
	int mw = k->cfg.max_width, mh = k->cfg.max_height;
	k->cfg = *cfg;
	k->cfg.max_width = mw;
	k->cfg.max_height = mh;
	return 0;
}

int cuda_canny_submit(struct cuda_canny *k, const uint8_t *grey, int width, int height, int stride, int x, int y,
		      int w, int h)
{
	const struct cuda_canny_config *c = &k->cfg;
	struct rect r;
	if (width < 1 || height < 1 || width > c->max_width || height > c->max_height || stride < width)
		return ERR_SIZE;
	if (k->pending)
		CUDA_CHECK(cudaStreamSynchronize(k->stream)); /* a submit without collect: the old frame is dropped */
	k->pending = false;
	r.x0 = x < 0 ? 0 : x;
	r.y0 = y < 0 ? 0 : y;
	r.x1 = (long)x + w > width ? width : x + w;
	r.y1 = (long)y + h > height ? height : y + h;
	if (w <= 0 || h <= 0 || r.x0 >= r.x1 || r.y0 >= r.y1)
		r.x0 = r.y0 = r.x1 = r.y1 = 0;
	k->r = r;
	k->width = width;
	k->height = height;
	k->timed = c->profile != 0;
	if (r.x1 > r.x0) {
		/* pageable memory: the DMA engine needs a pinned copy */
		for (int j = 0; j < height; j++)
			memcpy(k->h_grey + (size_t)j * width, grey + (size_t)j * stride, (size_t)width);
		struct taps tp;
		tp.r = c->gauss_radius;
		memcpy(tp.w, c->gauss_taps, sizeof tp.w);
		int rw = r.x1 - r.x0, rh = r.y1 - r.y0;
		dim3 g1((rw + TW - 1) / TW, (rh + TH - 1) / TH);
		if (c->profile)
			CUDA_CHECK(cudaEventRecord(k->ev[0], k->stream));
		CUDA_CHECK(cudaMemcpyAsync(k->d_grey, k->h_grey, (size_t)width * height, cudaMemcpyHostToDevice,
					   k->stream));
		if (c->profile)
			CUDA_CHECK(cudaEventRecord(k->ev[1], k->stream));
		if (k->counts_stale)
			CUDA_CHECK(cudaMemsetAsync(k->d_count, 0, 2 * sizeof(int32_t), k->stream));
		int32_t *count = k->d_count + (k->frames & 1), *next = k->d_count + (~k->frames & 1);
		k->frames++;
		k->counts_stale = true;
		gradient_kernels[tp.r]<<<g1, THREADS, 0, k->stream>>>(k->d_grey, width, height, r, tp, c->low,
								       c->high, k->d_mag, k->d_dir, k->d_label, k->d_cls,
								       count, k->d_cand);
		cudaLaunchAttribute pdl;
		pdl.id = cudaLaunchAttributeProgrammaticStreamSerialization;
		pdl.val.programmaticStreamSerializationAllowed = 1;
		cudaLaunchConfig_t lc = {};
		lc.stream = k->stream;
		lc.attrs = &pdl;
		lc.numAttrs = k->pdl ? 1 : 0;
		lc.gridDim = g1;
		lc.blockDim = dim3(BORDER_THREADS);
		CUDA_CHECK(cudaLaunchKernelEx(&lc, border_kernel, k->d_label, (const uint8_t *)k->d_cls, width, r));
		lc.gridDim = dim3(EDGE_BLOCKS);
		lc.blockDim = dim3(256);
		CUDA_CHECK(cudaLaunchKernelEx(&lc, edges_kernel, (const int32_t *)count, next, (const int32_t *)k->d_cand,
					      k->d_label, k->d_cls));
		CUDA_CHECK(cudaGetLastError());
		k->counts_stale = false;
		if (c->profile)
			CUDA_CHECK(cudaEventRecord(k->ev[2], k->stream));
	} else {
		k->timed = false;
	}
	k->pending = true;
	return 0;
fail:
	return ERR_DEVICE;
}

/* Queues the rectangle of one frame-indexed device array into pinned memory. */
static cudaError_t download(struct cuda_canny *k, void *h, const void *d, size_t elem)
{
	const struct rect *r = &k->r;
	size_t pitch = (size_t)k->width * elem, off = ((size_t)r->y0 * k->width + r->x0) * elem;
	return cudaMemcpy2DAsync((uint8_t *)h + off, pitch, (const uint8_t *)d + off, pitch,
				 (size_t)(r->x1 - r->x0) * elem, (size_t)(r->y1 - r->y0), cudaMemcpyDeviceToHost,
				 k->stream);
}

int cuda_canny_collect(struct cuda_canny *k, uint8_t *edge, uint16_t *mag, uint8_t *dir, int stride)
{
	const struct rect r = k->r;
	if (!k->pending)
		return ERR_AGAIN;
	if (stride < k->width)
		return ERR_SIZE;
	if (!edge)
		return ERR_RANGE;
	k->pending = false;
	if (r.x1 > r.x0) {
		CUDA_CHECK(download(k, k->h_edge, k->d_cls, 1));
		if (mag)
			CUDA_CHECK(download(k, k->h_mag, k->d_mag, sizeof(uint16_t)));
		if (dir)
			CUDA_CHECK(download(k, k->h_dir, k->d_dir, 1));
		if (k->timed)
			CUDA_CHECK(cudaEventRecord(k->ev[3], k->stream));
	}
	CUDA_CHECK(cudaStreamSynchronize(k->stream));
	for (int y = r.y0; y < r.y1; y++) {
		size_t src = (size_t)y * k->width + r.x0, dst = (size_t)y * stride + r.x0, n = (size_t)(r.x1 - r.x0);
		memcpy(edge + dst, k->h_edge + src, n);
		if (mag)
			memcpy(mag + dst, k->h_mag + src, n * sizeof *mag);
		if (dir)
			memcpy(dir + dst, k->h_dir + src, n);
	}
	return 0;
fail:
	return ERR_DEVICE;
}

int cuda_canny_stage_times(struct cuda_canny *k, float *upload_us, float *kernels_us, float *download_us)
{
	float ms[3];
	*upload_us = *kernels_us = *download_us = 0.0f;
	if (!k->timed || k->pending)
		return ERR_AGAIN;
	for (int i = 0; i < 3; i++)
		CUDA_CHECK(cudaEventElapsedTime(&ms[i], k->ev[i], k->ev[i + 1]));
	*upload_us = ms[0] * 1000.0f;
	*kernels_us = ms[1] * 1000.0f;
	*download_us = ms[2] * 1000.0f;
	return 0;
fail:
	return ERR_DEVICE;
}
