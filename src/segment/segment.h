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
 * Performance (callgrind, std-1080 frame 0: 1920x1080, 30 symbols, Bernsen
 * r 4 gate 48, 43k runs, 705 regions): 15.3 M instructions a frame (the
 * reacTIVision 1.6 segmenter: 49 M); about 2 ms wall a frame with the
 * matcher on the 2-core AMD EPYC development VM.
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

struct segment *segment_create(const struct segment_config *cfg, int *err);
void segment_destroy(struct segment *s);  /* NULL-safe */

/* Segments `mask`. *out points into the segmenter's arrays, valid until the
 * next call or destroy. Returns 0, or ERR_SIZE when mask exceeds the max. */
int segment_process(struct segment *s, const struct bitmask *mask, const struct region_tree **out);

#endif
