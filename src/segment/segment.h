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
 * max_height; segment_process() allocates nothing. When a frame has more
 * runs or regions than the capacity (regions_run_capacity() and
 * regions_region_capacity() in core/regions.h: a quarter and an eighth of
 * the pixels, far above any camera frame), the tree is cut short at a row
 * boundary, tree->overflow is set and the warning is logged once.
 *
 * Algorithm, in three passes over the runs:
 *  1. Per row, runs are cut from the bitmask: XOR with the current colour
 *     and count-trailing-zeros find the next change, so a long run costs
 *     one step a 64-pixel word. Each row is merge-walked against the row
 *     above (both cover [0, width) with alternating colours, so the walk
 *     visits exactly the overlapping pairs); same-coloured pairs are joined
 *     in a union-find over run indices whose root is always the smallest
 *     index (path halving).
 *  2. Runs in order: a run that is its own root opens a region (the root is
 *     always labelled before its members); bbox, area and moments are
 *     accumulated in closed form per run; runs in the first/last row or at
 *     x = 0 / width-1 set REGION_BORDER.
 *  3. Left/right neighbours in a row and different-coloured overlaps with
 *     the row above are added to both regions' lists (a one-pair cache
 *     skips the common repeat; otherwise a linear search of at most adj_cap
 *     slots). A list that would exceed adj_cap saturates: dropped,
 *     REGION_SATURATED, and every neighbour, past and future, is
 *     REGION_FRAGMENTED. An unsaturated region lists all its neighbours,
 *     saturated ones included.
 *
 * Threads (segment_create_threaded): the frame is cut into up to N
 * horizontal bands of at least 32 rows; N - 1 parked workers and the
 * calling thread each take one. Four parallel phases, each followed by a
 * short serial step on the caller: count runs per row (popcount of colour
 * changes), then re-cut the bands to equal run counts; cut runs in place
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
 * Memory, banded, allocated at create time on top of the serial arrays:
 * n_threads x (max_width + 256) x (adj_cap + 1) int32 for the per-band
 * lists, plus one int32 a region slot (1080p, adj_cap 19, 16 threads: 4 MB).
 *
 * Performance, std-1080 frame 0 (1920x1080, 30 symbols, Bernsen r 4 gate
 * 48, 43k runs, 705 regions). Instructions (callgrind): serial 15.3 M (the
 * reacTIVision 1.6 segmenter: 49 M); the
 * banded version does 18.1 M in all (count phase 0.9 M, extra bookkeeping),
 * with a critical path (slowest band each phase + serial steps) of 9.1 M
 * at 2 threads, 4.6 M at 4 and 1.4 M at 16, of which 0.24 M serial. Wall,
 * median (p99), on the 16-core Xeon host of the H100 machine, frames back
 * to back: serial 3.4 ms (3.7); 2 threads 2.0 (2.1); 4: 1.04 (1.24);
 * 8: 0.60 (0.71); 12: 0.46 (0.94); 16: 0.39 (0.55). With 3 ms idle
 * between frames (workers asleep): 8: 0.73 (1.6); 16: 0.55 (1.3). Leave
 * cores for the rest of the daemon: 8 is a good default on 16 cores.
 */
#ifndef TT_SEGMENT_H
#define TT_SEGMENT_H

#include <stdint.h>

#include "../core/image.h"
#include "../core/regions.h"

struct segment_config {
	int max_width, max_height;
	int adj_cap;          /* neighbour slots a region: the largest tree's node count (>= 2, <= 64) */
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

/* Fewest rows a band (0: the default, 32). For tests, which put seams
 * everywhere with small values; not while segment_process() runs. Returns
 * 0 or ERR_RANGE. */
int segment_set_band_min_rows(struct segment *s, int rows);

/* Segments `mask`. *out points into the segmenter's arrays, valid until the
 * next call or destroy. Returns 0, or ERR_SIZE when mask exceeds the max. */
int segment_process(struct segment *s, const struct bitmask *mask, const struct region_tree **out);

#endif
