/*
 * regions.h - the segmenter's output: row runs and the region adjacency tree.
 *
 * Regions are 4-connected sets of pixels of one colour. Two regions are
 * adjacent when they touch (4-neighbourhood); for nested clean shapes the
 * adjacency graph is the containment tree (see the amoeba symbol specification, §2).
 *
 * Everything is addressed by int32_t index into flat arrays owned by the
 * segmenter and sized at create time for the configured maximum frame; a
 * struct region_tree handed out by segment_process() is borrowed and valid
 * until the next segment_process() or segment_destroy().
 *
 * Adjacency is stored in fixed slots: region i's neighbours are
 * adj[i * adj_cap .. i * adj_cap + n_adj - 1]. A region whose neighbour count
 * would exceed adj_cap is SATURATED (n_adj = 0, its list dropped) and every
 * region it touches is FRAGMENTED; neither can be part of a symbol. Big
 * background regions saturate at once, which keeps the search small.
 */
#ifndef TT_CORE_REGIONS_H
#define TT_CORE_REGIONS_H

#include <stdbool.h>
#include <stdint.h>

/* A horizontal run of one colour in one row: pixels [x, x + len). */
struct run {
	int32_t x, len;
	int32_t region;   /* index of the region the run belongs to */
	uint8_t colour;   /* 0 black, 255 white */
};

enum region_flags {
	REGION_BORDER = 1u << 0,     /* touches the image border */
	REGION_SATURATED = 1u << 1,  /* more neighbours than adj_cap */
	REGION_FRAGMENTED = 1u << 2, /* touches a saturated region */
};

struct region {
	uint8_t colour;          /* 0 or 255 */
	uint8_t flags;           /* enum region_flags */
	int32_t n_adj;           /* neighbours stored in adj slots */
	int32_t x0, y0, x1, y1;  /* bounding box, inclusive */
	int32_t area;            /* pixel count */
	int64_t sum_x, sum_y;    /* pixel coordinate sums (centroid = sum / area) */
	int64_t sum_xx, sum_yy, sum_xy; /* second moments, for ellipse and oriented box fits */
};

struct region_tree {
	int width, height;

	int32_t n_regions;
	struct region *regions;
	int32_t adj_cap;         /* slots a region */
	int32_t *adj;            /* n_regions * adj_cap */

	int32_t n_runs;
	struct run *runs;        /* all runs, row by row, left to right */
	int32_t *row_first_run;  /* height + 1 entries: runs of row y are [row_first_run[y], row_first_run[y+1]) */

	bool overflow;           /* capacity reached: the tree is incomplete this frame */
};

/* Default capacities for a max_width x max_height frame, used where the
 * configuration sets none (max_runs, max_regions = 0): runs an eighth of
 * the pixels, regions a sixty-fourth, far above any camera frame (a 1080p
 * table frame has about 50k runs and 1.3k regions; a noisy 640x480 one
 * 20k runs) while a frame of fine detail (a pixel checkerboard) cannot
 * take memory beyond them. The segmenter allocates that many and later
 * stages size their per-region scratch arrays to match; a frame needing
 * more sets tree->overflow. */
#define REGIONS_MAX_CAPACITY (INT32_MAX / 2)

static inline int32_t regions_run_capacity(int max_width, int max_height)
{
	int64_t n = (int64_t)max_width * max_height / 8 + 2 * (int64_t)max_height + 4096;
	return n > REGIONS_MAX_CAPACITY ? REGIONS_MAX_CAPACITY : (int32_t)n;
}

static inline int32_t regions_region_capacity(int max_width, int max_height)
{
	int64_t n = (int64_t)max_width * max_height / 64 + 4096;
	return n > REGIONS_MAX_CAPACITY ? REGIONS_MAX_CAPACITY : (int32_t)n;
}

static inline const int32_t *region_adj(const struct region_tree *t, int32_t r)
{
	return t->adj + (int64_t)r * t->adj_cap;
}

#endif
