/* label.cu - the GPU segmenter's launches (label_cuda.h); the kernel bodies
 * are in label_kernels.h, shared with the CPU simulation. */
#include "label_cuda.h"

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
LK_GLOBAL(frag)
LK_GLOBAL(finish)

/* A frame's tree on the host, pinned. */
struct host_tree {
	struct lk_hdr *hdr;
	struct run *runs;
	int32_t *rf, *adj;
	struct region *regions;
};

/* The launch sequence of one mask, size and host tree, captured once as a
 * CUDA graph with the tree's downloads behind the kernels. The three
 * downloads whose size follows the counts (runs, regions, adjacency) are
 * changed in the exec when the speculative size changes. */
struct graph_entry {
	const uint64_t *mask;
	int width, height, stride_words, tree;
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	cudaGraphNode_t copy_runs, copy_regions, copy_adj;
	int32_t spec_runs, spec_regions; /* the sizes the exec downloads now */
};
/* The threshold alternates two device masks and the segmenter two host
 * trees, in step: two graphs a steady stream; room for the other phase
 * and a size change. */
#define GRAPHS 6

struct cuda_label {
	struct cuda_label_config cfg;
	struct lk_args g;          /* device pointers; mask and size set a frame */
	uint32_t slots;
	int max_blocks;
	cudaStream_t own, stream;  /* stream: the frame's (own or the caller's) */
	uint64_t *d_own_mask;
	int own_stride;
	void *d_temp;
	size_t temp_bytes;
	/* Pinned host trees, alternating per submit: the tree handed out for
	 * one frame is still read (the matcher) while the next frame's submit
	 * already queues its downloads into the other. */
	struct host_tree h[2];
	int cur;
	/* Downloads queued with the kernels, sized from the last frame's
	 * counts with a margin, so that collect usually waits once: only a
	 * frame with more runs or regions than that fetches the rest. */
	int32_t spec_runs, spec_regions;
	int32_t hint_runs, hint_regions;
	struct graph_entry graphs[GRAPHS];
	int n_graphs, next_graph;
	bool no_graph; /* configured, or capture failed once: launch one by one */
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
	void *dev[] = {g->hdr,      g->row_count, g->rf64,  g->row_of,  g->xend,     g->parent,      g->above,
		       g->root_flag, g->rid,      g->runs,  g->rf_out,  g->regions,  g->sums,  g->flags,  g->deg,
		       g->slot_key,  g->slot_nb,  g->adj,   g->table_pair, g->table_first, g->used, l->d_own_mask,
		       l->d_temp};
	for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
		if (dev[i])
			cudaFree(dev[i]);
	void *host[] = {l->h[0].hdr, l->h[0].runs, l->h[0].rf, l->h[0].adj, l->h[0].regions,
			l->h[1].hdr, l->h[1].runs, l->h[1].rf, l->h[1].adj, l->h[1].regions};
	for (size_t i = 0; i < sizeof host / sizeof *host; i++)
		if (host[i])
			cudaFreeHost(host[i]);
	for (int i = 0; i < l->n_graphs; i++) {
		cudaGraphExecDestroy(l->graphs[i].exec);
		cudaGraphDestroy(l->graphs[i].graph);
	}
	if (l->own)
		cudaStreamDestroy(l->own);
	free(l);
}

struct cuda_label *cuda_label_create(const struct cuda_label_config *cfg, int *err)
{
	int e = ERR_RANGE;
	struct cuda_label *l = NULL;
	if (!cfg || cfg->max_width < 1 || cfg->max_height < 1 || cfg->max_width > IMAGE_MAX_SIDE ||
	    cfg->max_height > IMAGE_MAX_SIDE || cfg->adj_cap < 2 || cfg->adj_cap > 64 || cfg->max_runs < 0 ||
	    cfg->max_runs > REGIONS_MAX_CAPACITY || cfg->max_regions < 0 || cfg->max_regions > REGIONS_MAX_CAPACITY) {
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
		int dev = 0, sms = 0;
		CUDA_CHECK(cudaGetDevice(&dev));
		CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
		/* Half the resident threads: the live part of a 1080p frame's
		 * run domain in one pass, the rest of the capacity idle blocks
		 * that need not be scheduled. */
		l->max_blocks = sms * 4;
		CUDA_CHECK(cudaStreamCreateWithFlags(&l->own, cudaStreamNonBlocking));
		CUDA_CHECK(cudaMalloc(&g->hdr, sizeof *g->hdr));
		CUDA_CHECK(cudaMalloc(&g->row_count, rows * sizeof(int64_t)));
		CUDA_CHECK(cudaMalloc(&g->rf64, rows * sizeof(int64_t)));
		CUDA_CHECK(cudaMalloc(&g->rf_out, rows * sizeof(int32_t)));
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
		CUDA_CHECK(cudaMalloc(&g->adj, regs * cap * sizeof(int32_t)));
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
			CUDA_CHECK(cudaMallocHost(&l->h[i].hdr, sizeof *l->h[i].hdr));
			CUDA_CHECK(cudaMallocHost(&l->h[i].runs, runs * sizeof(struct run)));
			CUDA_CHECK(cudaMallocHost(&l->h[i].rf, rows * sizeof(int32_t)));
			CUDA_CHECK(cudaMallocHost(&l->h[i].regions, regs * sizeof(struct region)));
			CUDA_CHECK(cudaMallocHost(&l->h[i].adj, regs * cap * sizeof(int32_t)));
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

/* The speculative download size: the last frame's count and an eighth,
 * rounded up to 1024 slots so that a graph's downloads change only when
 * the counts drift. */
static int32_t spec(int32_t hint, int32_t cap)
{
	int64_t n = ((int64_t)hint + hint / 8 + 512 + 1023) / 1024 * 1024;
	return n > cap ? cap : (int32_t)n;
}

/* Runs [r0, r1) and regions (with their adjacency slots) [g0, g1) to the host. */
static cudaError_t download(struct host_tree *h, const struct lk_args *g, int32_t r0, int32_t r1, int32_t g0,
			    int32_t g1, cudaStream_t s)
{
	cudaError_t e = cudaSuccess;
	const size_t cap = (size_t)g->adj_cap;
	if (r1 > r0)
		e = cudaMemcpyAsync(h->runs + r0, g->runs + r0, (size_t)(r1 - r0) * sizeof(struct run),
				    cudaMemcpyDeviceToHost, s);
	if (e == cudaSuccess && g1 > g0)
		e = cudaMemcpyAsync(h->regions + g0, g->regions + g0, (size_t)(g1 - g0) * sizeof(struct region),
				    cudaMemcpyDeviceToHost, s);
	if (e == cudaSuccess && g1 > g0)
		e = cudaMemcpyAsync(h->adj + (size_t)g0 * cap, g->adj + (size_t)g0 * cap,
				    (size_t)(g1 - g0) * cap * sizeof(int32_t), cudaMemcpyDeviceToHost, s);
	return e;
}

struct graph_entry;
static cudaError_t enqueue(struct cuda_label *l, cudaStream_t s);
static cudaError_t enqueue_downloads(struct cuda_label *l, cudaStream_t s);
static struct graph_entry *graph_for(struct cuda_label *l);
static cudaError_t graph_resize(struct cuda_label *l, struct graph_entry *ge);

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
	l->spec_runs = spec(l->hint_runs, g->cap_runs);
	l->spec_regions = spec(l->hint_regions, g->cap_regions);
	{
		struct graph_entry *ge = l->no_graph ? NULL : graph_for(l);
		if (ge) {
			CUDA_CHECK(graph_resize(l, ge));
			CUDA_CHECK(cudaGraphLaunch(ge->exec, s));
		} else {
			CUDA_CHECK(enqueue(l, s));
			CUDA_CHECK(enqueue_downloads(l, s));
		}
	}
	l->pending = true;
	return 0;
fail:
	return ERR_DEVICE;
}

/* The frame's downloads into the current host tree: the counts, the row
 * index and the speculative part of the compact arrays. */
static cudaError_t enqueue_downloads(struct cuda_label *l, cudaStream_t s)
{
	const struct lk_args *g = &l->g;
	struct host_tree *h = &l->h[l->cur];
	cudaError_t e = cudaMemcpyAsync(h->hdr, g->hdr, sizeof *h->hdr, cudaMemcpyDeviceToHost, s);
	if (e == cudaSuccess)
		e = cudaMemcpyAsync(h->rf, g->rf_out, ((size_t)g->height + 1) * sizeof(int32_t),
				    cudaMemcpyDeviceToHost, s);
	if (e == cudaSuccess)
		e = download(h, g, 0, l->spec_runs, 0, l->spec_regions, s);
	return e;
}

/* Whether a graph's download of have slots serves a frame that wants
 * want: enough, and not half as much again (a larger download costs the
 * frame's PCIe time, a change the submitting thread's). */
static bool fits(int32_t have, int32_t want) { return have >= want && have - want <= want / 2; }

/* Sets a graph's size-following downloads for the frame's speculative
 * sizes where they no longer fit, then makes the exec's sizes the frame's
 * (collect fetches what lies beyond them). */
static cudaError_t graph_resize(struct cuda_label *l, struct graph_entry *ge)
{
	const struct lk_args *g = &l->g;
	const struct host_tree *h = &l->h[ge->tree];
	const size_t cap = (size_t)g->adj_cap;
	cudaError_t e = cudaSuccess;
	if (!fits(ge->spec_runs, l->spec_runs)) {
		e = cudaGraphExecMemcpyNodeSetParams1D(ge->exec, ge->copy_runs, h->runs, g->runs,
						       (size_t)l->spec_runs * sizeof(struct run), cudaMemcpyDeviceToHost);
		if (e != cudaSuccess)
			return e;
		ge->spec_runs = l->spec_runs;
	}
	if (!fits(ge->spec_regions, l->spec_regions)) {
		e = cudaGraphExecMemcpyNodeSetParams1D(ge->exec, ge->copy_regions, h->regions, g->regions,
						       (size_t)l->spec_regions * sizeof(struct region),
						       cudaMemcpyDeviceToHost);
		if (e == cudaSuccess)
			e = cudaGraphExecMemcpyNodeSetParams1D(ge->exec, ge->copy_adj, h->adj, g->adj,
							       (size_t)l->spec_regions * cap * sizeof(int32_t),
							       cudaMemcpyDeviceToHost);
		if (e != cudaSuccess)
			return e;
		ge->spec_regions = l->spec_regions;
	}
	l->spec_runs = ge->spec_runs;
	l->spec_regions = ge->spec_regions;
	return e;
}

/* The frame's kernels (the mask and size in l->g) on stream s. */
static cudaError_t enqueue(struct cuda_label *l, cudaStream_t s)
{
	struct lk_args *g = &l->g;
	const int height = g->height;
	cudaError_t e;
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
	g_frag<<<blocks_for(l, l->slots), THREADS, 0, s>>>(*g, l->slots);
	g_finish<<<blocks_for(l, fin), THREADS, 0, s>>>(*g, fin);
	return cudaGetLastError();
}

/* The node of a captured graph's download into host pointer dst, or NULL. */
static cudaGraphNode_t copy_node(cudaGraph_t graph, const void *dst)
{
	return cuda_graph_node(graph, cudaGraphNodeTypeMemcpy, [dst](cudaGraphNode_t n) {
		cudaMemcpy3DParms p;
		return cudaGraphMemcpyNodeGetParams(n, &p) == cudaSuccess && p.dstPtr.ptr == dst;
	});
}

/* The graph of the current mask, size and host tree: found, or captured
 * now, kernels and downloads (once per mask buffer, size and tree; the
 * oldest of GRAPHS is replaced). NULL when capture fails: logged once,
 * and the segmenter launches kernel by kernel from then on. */
static struct graph_entry *graph_for(struct cuda_label *l)
{
	const struct lk_args *g = &l->g;
	for (int i = 0; i < l->n_graphs; i++) {
		struct graph_entry *ge = &l->graphs[i];
		if (ge->mask == g->mask && ge->width == g->width && ge->height == g->height &&
		    ge->stride_words == g->stride_words && ge->tree == l->cur)
			return ge;
	}
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	if (!cuda_capture_graph(
		    l->own,
		    [l](cudaStream_t st) {
			    cudaError_t e = enqueue(l, st);
			    return e == cudaSuccess ? enqueue_downloads(l, st) : e;
		    },
		    &exec, "cuda label", &graph)) {
		l->no_graph = true;
		return NULL;
	}
	const struct host_tree *h = &l->h[l->cur];
	cudaGraphNode_t runs = copy_node(graph, h->runs), regions = copy_node(graph, h->regions),
			adj = copy_node(graph, h->adj);
	if (!runs || !regions || !adj) {
		log_warn("cuda label: no download in the captured graph; launching kernel by kernel");
		cudaGraphExecDestroy(exec);
		cudaGraphDestroy(graph);
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
		cudaGraphDestroy(ge->graph);
	}
	*ge = (struct graph_entry){.mask = g->mask, .width = g->width, .height = g->height,
				  .stride_words = g->stride_words, .tree = l->cur, .graph = graph, .exec = exec,
				  .copy_runs = runs, .copy_regions = regions, .copy_adj = adj,
				  .spec_runs = l->spec_runs, .spec_regions = l->spec_regions};
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
	cudaStream_t s = l->stream;
	CUDA_CHECK(cudaStreamSynchronize(s));
	{
		struct host_tree *ht = &l->h[l->cur];
		const struct lk_hdr h = *ht->hdr;
		if (h.error || h.n_runs < 0 || h.n_runs > g->cap_runs || h.n_regions < 0 || h.n_regions > g->cap_regions) {
			log_error("cuda label: inconsistent frame counts (runs %d, regions %d, table %d)", h.n_runs,
				  h.n_regions, h.error);
			return ERR_DEVICE;
		}
		l->hint_runs = h.n_runs;
		l->hint_regions = h.n_regions;
		if (h.n_runs > l->spec_runs || h.n_regions > l->spec_regions) {
			int32_t r0 = l->spec_runs < h.n_runs ? l->spec_runs : h.n_runs;
			int32_t g0 = l->spec_regions < h.n_regions ? l->spec_regions : h.n_regions;
			CUDA_CHECK(download(ht, g, r0, h.n_runs, g0, h.n_regions, s));
			CUDA_CHECK(cudaStreamSynchronize(s));
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

int64_t cuda_label_overflows(const struct cuda_label *l)
{
	return l ? l->n_overflows : 0;
}
