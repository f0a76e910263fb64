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
 * runs or regions than the capacity, the tree is cut short and
 * tree->overflow is set.
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
