/* label.cu - the GPU segmenter's launches (label_cuda.h); the kernel bodies
 * are in label_kernels.h, shared with the CPU simulation. */
#include "label_cuda.h"

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "../src/core/err.h"
#include "../src/core/image.h"
#include "../src/core/log.h"
}
#include "label_kernels.h"

#include "cuda_check.cuh"

#define THREADS 256

/* One grid-stride __global__ a kernel body: domain n (the host's upper
 * bound, fixed in the graph), cut at the frame's live end read on the
 * device (lk_live_NAME), so a few blocks a multiprocessor cover it. */
#define LK_GLOBAL(name)                                                                   \
	static __global__ void __launch_bounds__(THREADS) g_##name(const struct lk_args g, int64_t n) \
	{                                                                                 \
		const int64_t live = lk_live_##name(&g);                                  \
		if (live < n)                                                             \
			n = live;                                                         \
		for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < n;   \
		     t += (int64_t)gridDim.x * blockDim.x)                                \
			lk_k_##name(&g, t);                                               \
	}
LK_GLOBAL(start)
LK_GLOBAL(cut)
LK_GLOBAL(union)
LK_GLOBAL(squash)
LK_GLOBAL(join)
LK_GLOBAL(flatten)
LK_GLOBAL(open)
LK_GLOBAL(stats)
LK_GLOBAL(pairs)
LK_GLOBAL(export)
LK_GLOBAL(frag)
LK_GLOBAL(finish)

/* ---- the whole frame in one cooperative launch ----
 *
 * The chain above costs the GPU a launch's drain and refill between every
 * two kernels (a 640x480 frame of 4807 runs took 64 us of GPU time, most
 * of it between kernels). The fused kernel runs the same bodies, in the
 * same order, over the same live domains, with a grid-wide barrier where
 * one step must have finished before the next starts, and does the two
 * prefix sums itself: each block sums a contiguous chunk, and after a
 * barrier scans it from the sum of the chunks before it. A
 * cooperative launch keeps every block resident, which the barriers need;
 * the grid is at most half the blocks that fit, so that two scales'
 * labellings on two streams fit side by side. */
namespace cg = cooperative_groups;

union fused_smem {
	cub::BlockScan<int64_t, THREADS>::TempStorage scan;
	cub::BlockReduce<int64_t, THREADS>::TempStorage reduce;
};

/* The two halves of a prefix sum across the grid over [0, m), each block
 * a contiguous chunk of it:
 *   scan_sum:  each block runs value(i) over its chunk (a kernel body that
 *              writes the element, returning it) and leaves the chunk's
 *              sum in bsum; a grid barrier follows.
 *   scan_out:  each block scans its chunk of in (the elements just
 *              written) into out, from the sum of the chunks before it.
 * So a body that feeds a scan (count, flatten) needs no barrier of its
 * own, and one that reads only its chunk's sums (open) none before it. */
static __device__ void chunk_of(int64_t m, int64_t *lo, int64_t *hi)
{
	const int64_t chunk = (m + gridDim.x - 1) / gridDim.x;
	*lo = min(m, (int64_t)blockIdx.x * chunk);
	*hi = min(m, *lo + chunk);
}

template <typename Value>
static __device__ void scan_sum(fused_smem &sm, int64_t m, int64_t *bsum, Value value)
{
	int64_t lo, hi, s = 0;
	chunk_of(m, &lo, &hi);
	for (int64_t i = lo + threadIdx.x; i < hi; i += THREADS)
		s += value(i);
	s = cub::BlockReduce<int64_t, THREADS>(sm.reduce).Sum(s);
	if (threadIdx.x == 0)
		bsum[blockIdx.x] = s;
}

template <typename In, typename Out>
static __device__ void scan_out(fused_smem &sm, int64_t *carry, const In *in, Out *out, int64_t m,
				const int64_t *bsum)
{
	int64_t lo, hi, off = 0;
	chunk_of(m, &lo, &hi);
	for (unsigned j = threadIdx.x; j < blockIdx.x; j += THREADS)
		off += bsum[j];
	off = cub::BlockReduce<int64_t, THREADS>(sm.reduce).Sum(off);
	if (threadIdx.x == 0)
		*carry = off;
	__syncthreads();
	off = *carry;
	for (int64_t base = lo; base < hi; base += THREADS) {
		const int64_t i = base + threadIdx.x;
		int64_t ex, total;
		cub::BlockScan<int64_t, THREADS>(sm.scan).ExclusiveSum(i < hi ? (int64_t)in[i] : 0, ex, total);
		if (i < hi)
			out[i] = (Out)(off + ex);
		off += total;
		__syncthreads();
	}
}

/* Kernel NAME's body over [0, min(n, live)) in the fused kernel. */
#define LK_RUN(name, n, live)                                                              \
	do {                                                                               \
		const int64_t n_ = (n), l_ = (live), m_ = l_ < n_ ? l_ : n_;               \
		for (int64_t t = first; t < m_; t += step)                                 \
			lk_k_##name(&g, t);                                                \
	} while (0)

/* The chain's bodies with eleven grid barriers where the chain has
 * fourteen launches (twelve kernels, two scans): count and flatten feed
 * their scans' sums directly, and open runs on the chunk its block has
 * just numbered. */
static __global__ void __launch_bounds__(THREADS, 4) g_fused(const struct lk_args g, int64_t *bsum)
{
	cg::grid_group grid = cg::this_grid();
	__shared__ fused_smem sm;
	__shared__ int64_t carry;
	const int64_t first = (int64_t)blockIdx.x * THREADS + threadIdx.x, step = (int64_t)gridDim.x * THREADS;
	const int64_t rows = (int64_t)g.height + 1, runs = g.cap_runs, slots = (int64_t)g.table_mask + 1;
	const int64_t fin = (int64_t)g.cap_regions * g.adj_cap;
	/* start: clear over the last frame's pairs, count by chunks of rows */
	LK_RUN(clear, slots, g.hdr->n_pairs);
	scan_sum(sm, rows, bsum, [&](int64_t y) {
		lk_k_count(&g, y);
		return g.row_count[y];
	});
	grid.sync();
	scan_out(sm, &carry, g.row_count, g.rf64, rows, bsum);
	grid.sync();
	LK_RUN(cut, (int64_t)g.height * g.n_words, lk_live_cut(&g));
	grid.sync();
	LK_RUN(union, runs, lk_live_union(&g));
	grid.sync();
	LK_RUN(squash, runs, lk_live_squash(&g));
	grid.sync();
	LK_RUN(join, runs, lk_live_join(&g));
	grid.sync();
	/* The chain's scan covers every run slot; this one only the live runs
	 * and the one past them, whose zero flag makes rid[n] the region count. */
	const int64_t flagged = g.rf64[g.hdr->y_run] + 1;
	scan_sum(sm, flagged, bsum, [&](int64_t k) {
		lk_k_flatten(&g, k);
		return (int64_t)g.root_flag[k];
	});
	grid.sync();
	scan_out(sm, &carry, g.root_flag, g.rid, flagged, bsum);
	{
		int64_t lo, hi;
		chunk_of(flagged, &lo, &hi);
		for (int64_t k = lo + threadIdx.x; k < hi; k += THREADS)
			lk_k_open(&g, k);
	}
	grid.sync();
	LK_RUN(stats, runs, lk_live_stats(&g));
	grid.sync();
	LK_RUN(pairs, slots, lk_live_pairs(&g));
	LK_RUN(export, runs, lk_live_export(&g));
	grid.sync();
	LK_RUN(frag, slots, lk_live_frag(&g));
	grid.sync();
	LK_RUN(finish, fin > rows ? fin : rows, lk_live_finish(&g));
}

/* A frame's tree on the host: pinned, mapped, written by the kernels. */
struct host_tree {
	struct lk_hdr *hdr;
	struct run *runs;
	int32_t *rf, *adj;
	struct region *regions;
};

/* The launch sequence of one mask, size and host tree, captured once. */
struct graph_entry {
	const uint64_t *mask;
	int width, height, stride_words, tree;
	cudaGraphExec_t exec;
};
/* The threshold alternates two device masks and the segmenter two host
 * trees, in step: two graphs a steady stream; room for the other phase
 * and a size change. */
#define GRAPHS 6

struct cuda_label {
	struct cuda_label_config cfg;
	struct lk_args g;          /* device pointers; mask, size and host tree set a frame */
	uint32_t slots;
	int max_blocks;
	int fused_blocks;          /* the fused kernel's grid; 0: the chain */
	int64_t *d_bsum;           /* fused_blocks partial sums of its scans */
	cudaStream_t own, stream;  /* stream: the frame's (own or the caller's) */
	uint64_t *d_own_mask;
	int own_stride;
	void *d_temp;
	size_t temp_bytes;
	/* Host trees, alternating per submit: the tree handed out for one
	 * frame is still read (the matcher) while the next frame's kernels
	 * already write the other. */
	struct host_tree h[2];
	int cur;
	struct graph_entry graphs[GRAPHS];
	int n_graphs, next_graph;
	bool no_graph; /* configured, or capture failed once: launch one by one */
	cudaEvent_t ev[2];         /* config timing: before and after the kernels */
	struct region_tree tree;
	bool pending, overflow_logged;
	int64_t n_overflows;
};

static int blocks_for(const struct cuda_label *l, int64_t n)
{
	int64_t b = (n + THREADS - 1) / THREADS;
	if (b > l->max_blocks)
		b = l->max_blocks;
	return b < 1 ? 1 : (int)b;
}

void cuda_label_destroy(struct cuda_label *l)
{
	if (!l)
		return;
	if (l->own)
		cudaStreamSynchronize(l->own);
	/* The frame's stream is the caller's, which may be gone already (a
	 * threshold that fell back to the CPU destroys its stream): wait for
	 * the whole device instead. */
	if (l->pending)
		cudaDeviceSynchronize();
	struct lk_args *g = &l->g;
	void *dev[] = {g->hdr,      g->row_count, g->rf64,  g->row_of,  g->xend,      g->parent,     g->above,
		       g->root_flag, g->rid,      g->runs,  g->regions, g->sums,      g->flags,      g->deg,
		       g->slot_key,  g->slot_nb,  g->table_pair, g->table_first, g->used, l->d_own_mask, l->d_temp,
		       l->d_bsum};
	for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
		if (dev[i])
			cudaFree(dev[i]);
	void *host[] = {l->h[0].hdr, l->h[0].runs, l->h[0].rf, l->h[0].adj, l->h[0].regions,
			l->h[1].hdr, l->h[1].runs, l->h[1].rf, l->h[1].adj, l->h[1].regions};
	for (size_t i = 0; i < sizeof host / sizeof *host; i++)
		if (host[i])
			cudaFreeHost(host[i]);
	for (int i = 0; i < l->n_graphs; i++)
		cudaGraphExecDestroy(l->graphs[i].exec);
	for (int i = 0; i < 2; i++)
		if (l->ev[i])
			cudaEventDestroy(l->ev[i]);
	if (l->own)
		cudaStreamDestroy(l->own);
	free(l);
}

/* Pinned host memory the kernels write (mapped: under unified addressing
 * the host pointer is the device's too). */
static cudaError_t host_alloc(void *p, size_t bytes)
{
	return cudaHostAlloc((void **)p, bytes, cudaHostAllocMapped);
}

struct cuda_label *cuda_label_create(const struct cuda_label_config *cfg, int *err)
{
	int e = ERR_RANGE;
	struct cuda_label *l = NULL;
	if (!cfg || cfg->max_width < 1 || cfg->max_height < 1 || cfg->max_width > IMAGE_MAX_SIDE ||
	    cfg->max_height > IMAGE_MAX_SIDE || cfg->adj_cap < 2 || cfg->adj_cap > 64 || cfg->max_runs < 0 ||
	    cfg->max_runs > REGIONS_MAX_CAPACITY || cfg->max_regions < 0 || cfg->max_regions > REGIONS_MAX_CAPACITY ||
	    cfg->blocks_per_sm < 0 || cfg->blocks_per_sm > 64 || cfg->path < LABEL_AUTO || cfg->path > LABEL_FUSED) {
		log_error("cuda label: bad config");
		goto fail;
	}
	e = ERR_DEVICE;
	l = (struct cuda_label *)calloc(1, sizeof *l);
	if (!l) {
		e = ERR_NOMEM;
		goto fail;
	}
	{
		l->cfg = *cfg;
		l->no_graph = cfg->no_graph != 0;
		struct lk_args *g = &l->g;
		g->cap_runs = cfg->max_runs > 0 ? cfg->max_runs : regions_run_capacity(cfg->max_width, cfg->max_height);
		g->cap_regions = cfg->max_regions > 0 ? cfg->max_regions
						      : regions_region_capacity(cfg->max_width, cfg->max_height);
		g->adj_cap = cfg->adj_cap;
		l->slots = lk_table_slots(g->cap_regions);
		g->table_mask = l->slots - 1;
		const size_t rows = (size_t)cfg->max_height + 1, runs = (size_t)g->cap_runs,
			     regs = (size_t)g->cap_regions, cap = (size_t)cfg->adj_cap;
		int dev = 0, sms = 0, unified = 0;
		CUDA_CHECK(cudaGetDevice(&dev));
		CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
		CUDA_CHECK(cudaDeviceGetAttribute(&unified, cudaDevAttrUnifiedAddressing, dev));
		if (!unified) {
			log_error("cuda label: the device has no unified addressing");
			goto fail;
		}
		/* Half the resident threads: the live part of a 1080p frame's
		 * run domain in one pass, the rest of the capacity idle blocks
		 * that need not be scheduled. */
		l->max_blocks = sms * 4;
		int coop = 0, fit = 0;
		CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
		CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, g_fused, THREADS, 0));
		const int bps = cfg->blocks_per_sm ? cfg->blocks_per_sm : 1;
		const bool fused = cfg->path == LABEL_FUSED ||
				   (cfg->path == LABEL_AUTO &&
				    (int64_t)cfg->max_width * cfg->max_height <= LABEL_FUSED_MAX_PIXELS);
		if (fused && coop && bps <= fit / 2) {
			l->fused_blocks = sms * bps;
			CUDA_CHECK(cudaMalloc(&l->d_bsum, (size_t)l->fused_blocks * sizeof(int64_t)));
		} else if (fused) {
			log_info("cuda label: no cooperative launch of %d blocks a multiprocessor (%d fit); "
				 "launching the chain of kernels", bps, fit);
		}
		CUDA_CHECK(cudaStreamCreateWithFlags(&l->own, cudaStreamNonBlocking));
		for (int i = 0; cfg->timing && i < 2; i++)
			CUDA_CHECK(cudaEventCreate(&l->ev[i]));
		CUDA_CHECK(cudaMalloc(&g->hdr, sizeof *g->hdr));
		CUDA_CHECK(cudaMalloc(&g->row_count, rows * sizeof(int64_t)));
		CUDA_CHECK(cudaMalloc(&g->rf64, rows * sizeof(int64_t)));
		CUDA_CHECK(cudaMalloc(&g->row_of, runs * sizeof(int32_t)));
		CUDA_CHECK(cudaMalloc(&g->xend, runs * sizeof(int32_t)));
		CUDA_CHECK(cudaMalloc(&g->parent, runs * sizeof(int32_t)));
		CUDA_CHECK(cudaMalloc(&g->above, runs * sizeof(int32_t)));
		CUDA_CHECK(cudaMalloc(&g->runs, runs * sizeof(struct run)));
		CUDA_CHECK(cudaMalloc(&g->root_flag, (runs + 1) * sizeof(int32_t)));
		CUDA_CHECK(cudaMalloc(&g->rid, (runs + 1) * sizeof(int32_t)));
		CUDA_CHECK(cudaMalloc(&g->regions, regs * sizeof(struct region)));
		CUDA_CHECK(cudaMalloc(&g->sums, regs * LK_REPS * LK_SUMS * sizeof(int64_t)));
		CUDA_CHECK(cudaMalloc(&g->flags, regs * sizeof(uint32_t)));
		CUDA_CHECK(cudaMalloc(&g->deg, regs * sizeof(int32_t)));
		CUDA_CHECK(cudaMalloc(&g->slot_key, regs * cap * sizeof(uint64_t)));
		CUDA_CHECK(cudaMalloc(&g->slot_nb, regs * cap * sizeof(int32_t)));
		CUDA_CHECK(cudaMalloc(&g->table_pair, l->slots * sizeof(uint64_t)));
		CUDA_CHECK(cudaMalloc(&g->table_first, l->slots * sizeof(uint64_t)));
		CUDA_CHECK(cudaMalloc(&g->used, l->slots * sizeof(int32_t)));
		CUDA_CHECK(cudaMemset(g->table_pair, 0xff, l->slots * sizeof(uint64_t)));
		CUDA_CHECK(cudaMemset(g->table_first, 0xff, l->slots * sizeof(uint64_t)));
		CUDA_CHECK(cudaMemset(g->hdr, 0, sizeof *g->hdr));
		l->own_stride = (cfg->max_width + 63) / 64;
		CUDA_CHECK(cudaMalloc(&l->d_own_mask, (size_t)l->own_stride * (size_t)cfg->max_height * sizeof(uint64_t)));
		size_t t1 = 0, t2 = 0;
		CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, t1, g->row_count, g->rf64, (int)rows));
		CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, t2, g->root_flag, g->rid, (int)(runs + 1)));
		l->temp_bytes = t1 > t2 ? t1 : t2;
		CUDA_CHECK(cudaMalloc(&l->d_temp, l->temp_bytes));
		for (int i = 0; i < 2; i++) {
			CUDA_CHECK(host_alloc(&l->h[i].hdr, sizeof *l->h[i].hdr));
			CUDA_CHECK(host_alloc(&l->h[i].runs, runs * sizeof(struct run)));
			CUDA_CHECK(host_alloc(&l->h[i].rf, rows * sizeof(int32_t)));
			CUDA_CHECK(host_alloc(&l->h[i].regions, regs * sizeof(struct region)));
			CUDA_CHECK(host_alloc(&l->h[i].adj, regs * cap * sizeof(int32_t)));
		}
		CUDA_CHECK(cudaDeviceSynchronize());
	}
	if (err)
		*err = 0;
	return l;
fail:
	cuda_label_destroy(l);
	if (err)
		*err = e;
	return NULL;
}

int cuda_label_upload(struct cuda_label *l, const uint64_t *bits, int width, int height, int stride_words)
{
	if (!l || !bits || width < 1 || height < 1 || width > l->cfg.max_width || height > l->cfg.max_height ||
	    stride_words < (width + 63) / 64)
		return ERR_SIZE;
	const size_t row = (size_t)((width + 63) / 64) * sizeof(uint64_t);
	CUDA_CHECK(cudaMemcpy2DAsync(l->d_own_mask, (size_t)l->own_stride * sizeof(uint64_t), bits,
				     (size_t)stride_words * sizeof(uint64_t), row, (size_t)height, cudaMemcpyHostToDevice,
				     l->own));
	CUDA_CHECK(cudaStreamSynchronize(l->own));
	return 0;
fail:
	return ERR_DEVICE;
}

static cudaError_t enqueue(struct cuda_label *l, cudaStream_t s);
static struct graph_entry *graph_for(struct cuda_label *l);

int cuda_label_submit(struct cuda_label *l, const void *dev_bits, int width, int height, int stride_words,
		      void *stream)
{
	if (!l || width < 1 || height < 1 || width > l->cfg.max_width || height > l->cfg.max_height ||
	    (dev_bits && stride_words < (width + 63) / 64))
		return ERR_SIZE;
	if (l->pending)
		cudaStreamSynchronize(l->stream);
	struct lk_args *g = &l->g;
	g->mask = dev_bits ? (const uint64_t *)dev_bits : l->d_own_mask;
	g->stride_words = dev_bits ? stride_words : l->own_stride;
	g->width = width;
	g->height = height;
	g->n_words = (width + 63) / 64;
	cudaStream_t s = stream ? (cudaStream_t)stream : l->own;
	l->stream = s;
	l->cur ^= 1;
	const struct host_tree *h = &l->h[l->cur];
	g->out_hdr = h->hdr;
	g->out_runs = h->runs;
	g->out_rf = h->rf;
	g->out_regions = h->regions;
	g->out_adj = h->adj;
	{
		struct graph_entry *ge = l->no_graph ? NULL : graph_for(l);
		if (ge)
			CUDA_CHECK(cudaGraphLaunch(ge->exec, s));
		else
			CUDA_CHECK(enqueue(l, s));
	}
	l->pending = true;
	return 0;
fail:
	return ERR_DEVICE;
}

/* Event ev of config timing on stream s (an event node when captured). */
static cudaError_t mark(const struct cuda_label *l, int ev, cudaStream_t s)
{
	if (!l->ev[ev])
		return cudaSuccess;
	cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
	const cudaError_t e = cudaStreamIsCapturing(s, &cs);
	if (e != cudaSuccess)
		return e;
	return cudaEventRecordWithFlags(l->ev[ev], s,
					cs == cudaStreamCaptureStatusActive ? cudaEventRecordExternal : cudaEventRecordDefault);
}

/* The frame's kernels (the mask, size and host tree in l->g) on stream s. */
static cudaError_t enqueue(struct cuda_label *l, cudaStream_t s)
{
	struct lk_args *g = &l->g;
	cudaError_t e = mark(l, 0, s);
	if (e != cudaSuccess)
		return e;
	if (l->fused_blocks) {
		void *args[] = {g, &l->d_bsum};
		e = cudaLaunchCooperativeKernel((const void *)g_fused, dim3(l->fused_blocks), dim3(THREADS), args, 0, s);
		return e == cudaSuccess ? mark(l, 1, s) : e;
	}
	const int height = g->height;
	const int64_t runs = g->cap_runs, rows = (int64_t)height + 1;
	const int64_t slots = (int64_t)g->cap_regions * g->adj_cap, fin = slots > rows ? slots : rows;
	size_t tb = l->temp_bytes;
	const int64_t start = (int64_t)l->slots > rows ? (int64_t)l->slots : rows;
	g_start<<<blocks_for(l, start), THREADS, 0, s>>>(*g, start);
	if ((e = cub::DeviceScan::ExclusiveSum(l->d_temp, tb, g->row_count, g->rf64, (int)rows, s)) != cudaSuccess)
		return e;
	g_cut<<<blocks_for(l, (int64_t)height * g->n_words), THREADS, 0, s>>>(*g, (int64_t)height * g->n_words);
	g_union<<<blocks_for(l, runs), THREADS, 0, s>>>(*g, runs);
	g_squash<<<blocks_for(l, runs), THREADS, 0, s>>>(*g, runs);
	g_join<<<blocks_for(l, runs), THREADS, 0, s>>>(*g, runs);
	g_flatten<<<blocks_for(l, runs + 1), THREADS, 0, s>>>(*g, runs + 1);
	tb = l->temp_bytes;
	if ((e = cub::DeviceScan::ExclusiveSum(l->d_temp, tb, g->root_flag, g->rid, (int)(runs + 1), s)) != cudaSuccess)
		return e;
	g_open<<<blocks_for(l, runs), THREADS, 0, s>>>(*g, runs);
	g_stats<<<blocks_for(l, runs), THREADS, 0, s>>>(*g, runs);
	g_pairs<<<blocks_for(l, l->slots), THREADS, 0, s>>>(*g, l->slots);
	g_export<<<blocks_for(l, runs), THREADS, 0, s>>>(*g, runs);
	g_frag<<<blocks_for(l, l->slots), THREADS, 0, s>>>(*g, l->slots);
	g_finish<<<blocks_for(l, fin), THREADS, 0, s>>>(*g, fin);
	if ((e = cudaGetLastError()) != cudaSuccess)
		return e;
	return mark(l, 1, s);
}

/* The graph of the current mask, size and host tree: found, or captured
 * now (once per mask buffer, size and tree; the oldest of GRAPHS is
 * replaced). NULL when capture fails: logged once, and the segmenter
 * launches kernel by kernel from then on. */
static struct graph_entry *graph_for(struct cuda_label *l)
{
	const struct lk_args *g = &l->g;
	for (int i = 0; i < l->n_graphs; i++) {
		struct graph_entry *ge = &l->graphs[i];
		if (ge->mask == g->mask && ge->width == g->width && ge->height == g->height &&
		    ge->stride_words == g->stride_words && ge->tree == l->cur)
			return ge;
	}
	cudaGraphExec_t exec;
	if (!cuda_capture_graph(l->own, [l](cudaStream_t st) { return enqueue(l, st); }, &exec, "cuda label")) {
		l->no_graph = true;
		return NULL;
	}
	struct graph_entry *ge;
	if (l->n_graphs < GRAPHS) {
		ge = &l->graphs[l->n_graphs++];
	} else {
		ge = &l->graphs[l->next_graph];
		l->next_graph = (l->next_graph + 1) % GRAPHS;
		cudaGraphExecDestroy(ge->exec);
	}
	*ge = (struct graph_entry){.mask = g->mask, .width = g->width, .height = g->height,
				  .stride_words = g->stride_words, .tree = l->cur, .exec = exec};
	return ge;
}

int cuda_label_collect(struct cuda_label *l, const struct region_tree **out)
{
	if (!l || !out)
		return ERR_RANGE;
	if (!l->pending)
		return ERR_AGAIN;
	l->pending = false;
	struct lk_args *g = &l->g;
	CUDA_CHECK(cudaStreamSynchronize(l->stream));
	{
		struct host_tree *ht = &l->h[l->cur];
		const struct lk_hdr h = *ht->hdr;
		if (h.error || h.n_runs < 0 || h.n_runs > g->cap_runs || h.n_regions < 0 || h.n_regions > g->cap_regions) {
			log_error("cuda label: inconsistent frame counts (runs %d, regions %d, table %d)", h.n_runs,
				  h.n_regions, h.error);
			return ERR_DEVICE;
		}
		struct region_tree *t = &l->tree;
		t->width = g->width;
		t->height = g->height;
		t->n_regions = h.n_regions;
		t->regions = ht->regions;
		t->adj_cap = g->adj_cap;
		t->adj = ht->adj;
		t->n_runs = h.n_runs;
		t->runs = ht->runs;
		t->row_first_run = ht->rf;
		t->overflow = h.y_cut < g->height;
		if (t->overflow) {
			l->n_overflows++;
			log_once(&l->overflow_logged, LOG_WARN,
				 "cuda label: frame has more runs or regions than capacity; tree cut short "
				 "(max_runs %d, max_regions %d)", g->cap_runs, g->cap_regions);
		}
		*out = t;
	}
	return 0;
fail:
	return ERR_DEVICE;
}

int cuda_label_gpu_time(const struct cuda_label *l, float *us)
{
	float ms = 0;
	if (!l || !l->ev[0] || l->pending || cudaEventElapsedTime(&ms, l->ev[0], l->ev[1]) != cudaSuccess) {
		(void)cudaGetLastError();
		return ERR_RANGE;
	}
	*us = ms * 1000.0f;
	return 0;
}

int64_t cuda_label_overflows(const struct cuda_label *l)
{
	return l ? l->n_overflows : 0;
}
