/*
 * segment.h - bitmask -> row runs -> region adjacency tree.
 *
 * Runs are found a 64-bit word at a time; runs of one colour that overlap in
 * x on consecutive rows are joined with union-find (path compression) into
 * 4-connected regions; touching runs of different colours (left/right in a
 * row, overlapping above/below) make the adjacency lists (core/regions.h).
 * Region statistics (bbox, area, moments) are accumulated per run.
 *
 * Memory: all arrays are allocated by segment_create() for max_width x
 * max_height and the configured max_runs and max_regions (by default
 * regions_run_capacity() and regions_region_capacity() in core/regions.h:
 * an eighth and a sixty-fourth of the pixels, far above any camera frame);
 * segment_process() allocates nothing, so memory is bounded by the
 * configuration whatever the picture. When a frame has more runs or
 * regions than that, the tree is cut short at a row boundary (the rows
 * above are segmented as usual: a degraded frame, not a lost one),
 * tree->overflow is set, the frame is counted (segment_overflows()) and
 * the warning is logged once.
 *
 * Algorithm, in two passes over the runs:
 *  1. Per row, runs are cut from the bitmask: the colour changes of a
 *     64-bit word (w ^ (w << 1 | carry)) are taken one set bit at a time
 *     with count-trailing-zeros, so a run costs one step whatever its
 *     length. Each row is merge-walked against the row above (both cover
 *     [0, width) with alternating colours, so the walk visits exactly the
 *     overlapping pairs, whether a pair's colours agree follows from the
 *     parity of the steps, and both rows end on the same step);
 *     same-coloured pairs are joined in a union-find over run indices whose
 *     root is always the smallest index (path halving). The root of the run
 *     above is looked up once while that run stays in the walk, and a new
 *     run is its own root until joined, so most pairs need no find.
 *  2. Row by row: a run's parent lies before it, so its region is its
 *     parent's (a run that is its own root opens a region: regions are
 *     numbered by first run in raster order); bbox, area and moments are
 *     accumulated in closed form per run (a table of sums of squares);
 *     the first and last run of a row, and every run of the first and last
 *     row, set REGION_BORDER. Then the row's contacts, in raster order:
 *     left/right neighbours, then different-coloured overlaps with the row
 *     above, each added to both regions' lists. A direct-mapped cache of
 *     the pairs seen this frame (1024 slots) skips nearly all repeats (a
 *     1080p frame: ~70k contacts, ~2k distinct pairs); a pair not in the
 *     cache is searched for in the list (at most adj_cap slots). A list
 *     that would exceed adj_cap saturates: dropped, REGION_SATURATED, and
 *     every neighbour, past and future, is REGION_FRAGMENTED. An
 *     unsaturated region lists all its neighbours, saturated ones included.
 *
 * Threads (segment_create_threaded): the frame is cut into up to N
 * horizontal bands of at least 32 rows and 65536 pixels (smaller ones
 * cost more to hand out than they save); N - 1 parked workers and the
 * calling thread each take one. Four parallel phases, each followed by a
 * short serial step on the caller: count runs per row (popcount of colour
 * changes, with the popcnt instruction where the CPU has it), then re-cut
 * the bands to equal run counts; cut runs in place
 * and union them within the band; join the regions across each seam
 * (last row of band k against first row of band k + 1); label and
 * accumulate statistics (a region crossing a seam gets a partial per band,
 * merged serially); build adjacency (a region inside one band is listed by
 * that band alone; a region crossing seams gets a list per band, merged in
 * band order). Regions are numbered by first run in raster order and lists
 * hold neighbours in raster order of first contact, as in the serial pass,
 * so the tree is identical to the single-threaded one, array for array (the
 * matcher's leaf sums depend on list order). A frame that overflows, or
 * that has more seam crossings than width + 256, is segmented by the
 * calling thread alone, with the same result.
 *
 * Memory, on top of the runs (16 bytes a run) and regions: one int32 a
 * run for the union-find and one for the run ends (the merge walks read
 * those alone), a table of max_width + 1 int64, 8 KB of pair cache a band.
 * Banded, allocated at create time on top of the serial arrays:
 * n_threads x (max_width + 256) x (adj_cap + 1) int32 for the per-band
 * lists, plus one int32 a region slot (1080p, adj_cap 19, 16 threads: 4 MB).
 *
 * Wake-up: the workers are a core/pool.h pool: parked between phases and
 * frames, they spin a few microseconds and then sleep, so an idle
 * segmenter costs no CPU time; a frame pays for waking sleepers.
 *
 * Choosing n_threads: each band's thread does about 1/N of the work, plus
 * the short serial steps; leave cores for the rest of the daemon.
 *
 * Helpers over a finished tree, for later stages that need more than the
 * adjacency lists hold (the matcher's repair of saturated lists): the runs
 * of a row near a column and the neighbours of a region read back from the
 * runs (walk.c), and the sum of several regions' statistics (the merge the
 * banded pass uses for regions that cross a seam).
 */
#ifndef TT_SEGMENT_H
#define TT_SEGMENT_H

#include <stdint.h>

#include "../core/image.h"
#include "../core/regions.h"

struct segment_config {
	int max_width, max_height;
	int adj_cap;          /* neighbour slots a region: the largest tree's node count (>= 2, <= 64) */
	int32_t max_runs;     /* runs a frame; 0 = regions_run_capacity(max_width, max_height) */
	int32_t max_regions;  /* regions a frame; 0 = regions_region_capacity(max_width, max_height) */
};

struct segment;

/* Single-threaded segmenter; the same as segment_create_threaded(cfg, 1, err).
 * Owned by the caller: free with segment_destroy(). */
struct segment *segment_create(const struct segment_config *cfg, int *err);

/* Segmenter that splits a frame into up to n_threads horizontal bands of
 * at least 32 rows (0 or 1: the calling thread alone, exactly as
 * segment_create). Its n_threads - 1 worker threads start here and wait,
 * parked, between frames; the thread calling segment_process() works one
 * band itself. Errors: ERR_RANGE (bad config, n_threads outside 0..64),
 * ERR_NOMEM (memory, or a thread could not be started). Owned by the
 * caller: free with segment_destroy(), which stops and joins the workers.
 * segment_process() must not be called from two threads at once. */
struct segment *segment_create_threaded(const struct segment_config *cfg, int n_threads, int *err);

void segment_destroy(struct segment *s);  /* NULL-safe; joins the workers */

/* Fewest rows a band (0: the default, 32, with the 65536-pixel minimum).
 * For tests, which put seams everywhere with small values: a value other
 * than 0 also drops the pixel minimum. Not while segment_process() runs.
 * Returns 0 or ERR_RANGE. */
int segment_set_band_min_rows(struct segment *s, int rows);

/* Frames cut short for want of run or region slots since create. */
int64_t segment_overflows(const struct segment *s);

/* The runs (of either colour) segment_process() would cut mask into, by
 * counting alone: a caller can leave a mask too noisy for its purpose
 * unsegmented. mask: at least 1 x 1. */
int64_t segment_count_runs(const struct segment *s, const struct bitmask *mask);

/* The runs a frame the segmenter holds (segment_config.max_runs). */
int32_t segment_run_capacity(const struct segment *s);

/* Segments `mask`. *out points into the segmenter's arrays, valid until the
 * next call or destroy. Returns 0, or ERR_SIZE when mask exceeds the max. */
int segment_process(struct segment *s, const struct bitmask *mask, const struct region_tree **out);

/* ---- the GPU segmenter ------------------------------------------------------
 * The same tree, built on the GPU from a mask that is already there (the
 * CUDA threshold's, threshold_device_mask()): cuda/label_cuda.h behind this
 * stage's plain C interface, so that the pipeline never includes cuda/.
 * The tree handed out equals segment_process()'s for the same mask and
 * configuration, array for array (the CPU segmenter stays the reference
 * and the fallback; cuda/label_kernels.h describes the algorithm). Without
 * nvcc, or without a usable GPU, create fails with ERR_UNSUPPORTED or
 * ERR_DEVICE and the caller segments on the CPU.
 *
 * Memory: device and pinned host arrays sized at create time (as
 * segment_create, plus a pair table); nothing is allocated a frame. */
struct segment_gpu;

struct segment_gpu *segment_gpu_create(const struct segment_config *cfg, int *err);
void segment_gpu_destroy(struct segment_gpu *g);  /* NULL-safe */

/* Queues the segmentation of a device mask: dev_bits (a device pointer, rows
 * of stride_words 64-bit words) as written on stream (opaque: the queue the
 * mask's producer runs on), which must stay unchanged until collect. No
 * wait. 0, ERR_SIZE (larger than the configuration) or ERR_DEVICE. */
int segment_gpu_submit(struct segment_gpu *g, const void *dev_bits, int width, int height, int stride_words,
		       void *stream);

/* Waits for the submitted frame and hands out its tree: *out points into
 * host memory owned by g, valid until the second submit after the frame's
 * own, or destroy (the next frame's submit, overlapped with reading this
 * tree, fills another). ERR_AGAIN without a submit; ERR_DEVICE when
 * the GPU failed (the caller segments the mask on the CPU instead). A frame
 * cut short by the capacities is flagged, counted and logged once, as
 * segment_process() does. */
int segment_gpu_collect(struct segment_gpu *g, const struct region_tree **out);

/* ---- helpers over a finished tree -----------------------------------------
 * The walks take a tree handed out by segment_process() (runs and
 * row_first_run set); they read the tree alone, allocate nothing and may
 * run on any thread while the tree is valid. Coordinates are pixels; regions and runs are
 * indices into the tree's arrays. */

/* The first run of row y (0 <= y < tree->height) that ends right of column
 * x (x < run.x + run.len), or tree->row_first_run[y + 1] when none does.
 * Runs of a row are sorted by x: a binary search, O(log runs in the row). */
int32_t segment_run_first_after(const struct region_tree *tree, int y, int32_t x);

/* Region g's neighbours read from the runs, for a region whose adjacency
 * list was dropped (REGION_SATURATED) or is not trusted. Walks g's runs
 * top to bottom, left to right, and for each meets its left neighbour, the
 * runs of the other colour overlapping it in the row above, then in the
 * row below, then its right neighbour; nb[] gets each region once, in the
 * order first met. Regions of at most small_area pixels are listed but do
 * not count against big_cap. Returns the number written (<= cap), or -1 as
 * soon as more than cap regions, or more than big_cap bigger than
 * small_area, are met: the walk stops early, so a region in textured
 * surroundings costs a few rows, not its whole box. Cost: per run of g, two
 * binary searches and the runs overlapping it above and below. */
int segment_neighbours(const struct region_tree *tree, int32_t g, int32_t *nb, int cap, int32_t small_area,
		       int big_cap);

/* Adds region `from` to `into`, as if their pixels were one region: the
 * bounding box becomes the union, area and moments (sum_x .. sum_xy) the
 * sums, flags the union; colour, n_adj and adjacency are into's. The two
 * should be disjoint sets of pixels, or area and moments count the shared
 * ones twice. */
void segment_region_merge(struct region *into, const struct region *from);

#endif
