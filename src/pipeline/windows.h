/*
 * windows.h - where the third threshold scale can add a symbol: windows
 * of the frame, found from the first scale's region tree and symbols.
 *
 * The third scale's symbols count only where the first scales found none
 * (engine.c merges them so), and a symbol leaves structure in the first
 * scale's mask even where a shadow edge cut its tree. So the third scale
 * need not see the whole frame: only the places with structure that no
 * decoded symbol explains.
 *
 * Algorithm: the frame is cut into tiles of WINDOWS_TILE pixels a side;
 * a tile is live when it meets a region of the first scale's tree that
 * branches as a symbol's do (at least 16 pixels and no larger than a
 * symbol, touching at least three regions of 16 pixels or more: its
 * surround and two children; a root, or a node holding two leaves, even
 * where a shadow cut the symbol's tree), whose branches other than the
 * largest hold at least 1/200 of its pixels (a symbol's root holds its
 * blobs, a few per cent of it at least; a bright hand on a DI table, a
 * region of hundreds of pixels a side, holds only the few 20-50 px holes
 * its blurred fingers' edges leave) and is not explained: its box lies
 * in no decoded symbol's box (its centre +- 0.85 of its size + 4 px: the
 * card's margin reaches past the root) nor a finger's. A finger (looked
 * for or not), a hand, a card's or a shadow's edge is a boundary or a
 * chain of nested rings, noise a speck: none branches, so none costs a
 * window. Nor are a decoded symbol's card and a found finger branches of
 * a region that touches them: the dark rims Bernsen draws around a card
 * and a fingertip (or a hand, a shadow) beside it join, and that region,
 * touching the table, the card and the fingertip, would branch and reach
 * past the symbol's box. Regions rather than tiles are explained, so that
 * a symbol beside a decoded one keeps a window although that one's box
 * covers its tiles.
 * Live tiles joined by an edge or corner form a group; each group's box,
 * grown by `pad` pixels on every side (so that a symbol whose shadowed
 * part is uniform in the first mask still lies inside), clamped to the
 * frame, is a window; windows that overlap are joined into their common
 * box until none do. When that leaves more than `cap` windows, or their
 * area is more than half the frame, the answer is the whole frame.
 *
 * Radius by the symbol's scale: a local-mean threshold separates a
 * symbol's leaves from its ring best with a window a fixed fraction of the
 * symbol across (a larger one, in a hard shadow's penumbra, closes holes of
 * small symbols; a smaller one breaks the rings of large ones). Given a
 * radius rule, each group of tiles gets the radius of its longest branching
 * region's box side (that of the root of the largest symbol in it; the
 * rule's ratio of it, rounded, clamped to [min, max]); windows are then
 * joined only with windows of the same radius, and the answer is never the
 * whole frame (windows that overlap but differ in radius are thresholded
 * separately, each with its own radius, so their area may exceed half the
 * frame).
 *
 * A window is decoded like a frame of its own (third.c): a symbol that
 * the window's edge cuts touches the edge and is skipped, as the matcher
 * skips symbols on the frame's border.
 *
 * Memory: the caller's scratch of windows_scratch_len() int32 for the
 * frame size and region capacity (each region's verdict is worked out
 * once a frame); nothing is allocated.
 */
#ifndef TT_PIPELINE_WINDOWS_H
#define TT_PIPELINE_WINDOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/detect.h"
#include "../core/image.h"
#include "../core/regions.h"

#define WINDOWS_TILE 32

/* A window: pixels x0 <= x < x1, y0 <= y < y1; radius: the radius rule's
 * radius for it (0 without a rule). */
struct window {
	int x0, y0, x1, y1;
	int radius;
};

/* radius = ratio * the longest side in pixels, rounded, clamped to
 * [min, max]. */
struct windows_radius {
	float ratio;
	int min, max;
};

/* Whether windows a and b share a pixel. */
bool windows_overlap(const struct window *a, const struct window *b);

/* The rule's radius for a region whose box's longest side is side pixels. */
int windows_radius(const struct windows_radius *rule, int side);

/* int32 entries of scratch that windows_scan needs for a frame of w x h
 * whose tree has at most max_regions regions. */
size_t windows_scratch_len(int width, int height, int32_t max_regions);

/* A frame's verdicts: which regions of its first-scale tree are structure
 * that no decoded symbol explains, by both rules below. The passes of the
 * third scale ask for windows several times a frame; the regions are
 * judged once. */
struct windows_scan {
	const struct region_tree *tree;
	const struct detections *d; /* the first scale's, and the frame: as tree */
	const struct image_u8 *grey;
	int32_t *scratch;      /* the verdicts, the islands and ink a tile, and room for the finds' tiles */
	size_t scratch_len;
	int32_t n_live;        /* regions live by windows_find's rule */
	int32_t n_small;       /* by windows_find_small's, under small_px a side */
	int32_t n_saturated;   /* saturated regions of a symbol's size (windows_find_saturated) */
	int32_t n_islands;     /* islands (windows_find_islands) */
	int32_t n_ink;         /* ink tiles (windows_ink) */
	bool whole;            /* a tree cut short, or scratch too short for its regions */
};

/* Judges the regions of tree (the first scale's region tree) against d
 * (the first scale's detections, same frame) into s, which then holds
 * tree and scratch (scratch_len int32) until the frame's last find: a
 * region whose bounding box reaches max_symbol_px pixels in width or
 * height is no part of a symbol (windows_find's rule); small structure is
 * judged for boxes up to small_px a side (0: none), and, given grey (the
 * frame), only where the grey in the region's box has a standard
 * deviation of at least min_sd levels: on a flat table lit near
 * mid-grey, a noise outlier that reaches the first scale's gate inside
 * Bernsen's window has the noise around it thresholded into a patch of
 * specks, small structure too, but the grey there varies by the noise
 * alone, where a symbol's box holds ink and paper. Allocates nothing. */
void windows_scan(struct windows_scan *s, const struct region_tree *tree, const struct detections *d, int max_symbol_px,
		  int small_px, const struct image_u8 *grey, int min_sd, int32_t *scratch, size_t scratch_len);

/* Windows of the scanned frame where the third scale may find a symbol
 * that the first scale's detections lack. rule: NULL, or each window's
 * radius by the symbol's scale (above). Returns their number (0: none
 * anywhere) into out (at most cap), or -1 for the whole frame (also for a
 * tree cut short, more than cap windows, or scratch too short for its
 * regions). */
int windows_find(const struct windows_scan *s, int pad, const struct windows_radius *rule, struct window *out, int cap);

/* Windows around the scanned frame's regions of a symbol's size that
 * have more neighbours than their lists hold (saturated, so never judged
 * as branching) where no decoded symbol explains them: a motion streak's
 * hairlines shatter a symbol's leaves into specks that saturate its root.
 * As windows_find (-1: the whole frame). */
int windows_find_saturated(const struct windows_scan *s, int pad, const struct windows_radius *rule, struct window *out,
			   int cap);

/* The longest box side of the scanned frame's live regions (windows_find's
 * rule) that lie in w: how large a symbol whose pieces they are may be
 * (0: none); INT32_MAX for a tree cut short (the scan judged nothing). */
int windows_live_side(const struct windows_scan *s, const struct window *w);

/* The same for small symbols: live are regions whose box is at most
 * small_px (no more than windows_scan's) a side and that touch at least
 * three regions of 4 pixels or more (a symbol under about 30 px: its root
 * touches its surround, its blob and its 2-5 px dots, and only the first
 * two reach 16 pixels, so windows_find's rule misses it), where no decoded
 * symbol or finger explains them and the grey varies (windows_scan). No
 * radius rule; -1 for the whole frame as above. */
int windows_find_small(const struct windows_scan *s, int small_px, int pad, struct window *out, int cap);

/* Where islands cluster outside windows_find_small's tiles: islands are
 * regions of 4 pixels or more, at most 10 a side, that touch one region
 * only and that no decoded symbol or finger explains; a tile is live
 * where the 3 x 3 tiles around it hold at least 8 and windows_find_small
 * (small_px) leaves it out. Where the first scale's flat rule or a
 * shadow's band joins a symbol's ring and blobs to the dark table around
 * it, nothing of the symbol branches in the first scale's tree, but its
 * holes and dots are still islands there. -1 for the whole frame as
 * above. */
int windows_find_islands(const struct windows_scan *s, int small_px, int pad, struct window *out, int cap);

/* Takes back from the scanned frame's islands (windows_find_islands) those
 * that lie in what surrounds a blob or hand of its detections (d->blobs:
 * their one neighbour's box reaches past the blob region's box), within
 * about reach pixels of the blob's region (by tiles: an island counts in
 * the tile of its box's centre, and a tile is near where a pixel of it
 * lies within reach of one of the region's pixels). Where a bright hand or
 * object on a dark DI table raises the first scale's threshold, the noise
 * of the flat table at about the threshold's radius from its edge is
 * thresholded into a rim of specks, hundreds of islands along it (the
 * local mean's gate line: third.c calls this only for a local-mean first
 * scale). Islands nested in the blob (an unread symbol's card taken for a
 * blob) stay. A white region of the tree at least four times reach squared
 * in area that is no blob (a hand too wide for blob_max) takes back the
 * islands around it only where they are at least a rim's count
 * (windows.c, RIM_MIN_ISLANDS); fewer are an unread symbol's pieces. Call
 * once a frame, after windows_scan and before windows_ink (it uses the ink
 * tiles' scratch). Allocates nothing. */
void windows_blobs(struct windows_scan *s, int reach);

/* A block of windows_ink's that holds ink and paper by its extremes: its
 * darkest grey lo at most a quarter of its brightest hi, hi at least the
 * gate. The rest of the rule is windows_ink's. */
struct windows_block {
	int x, y; /* its top left pixel */
	uint8_t lo, hi;
};

/* The most blocks windows_ink_blocks finds in a frame of width x height. */
int windows_ink_blocks_cap(int width, int height);

/* The blocks of a width x height grey (16 x 16 pixels from the top left,
 * read on every other row; cut short at the frame's right and bottom
 * edges) that hold ink and paper at this gate, from the grey's block
 * extremes lohi (threshold.h: threshold_block_extremes_cpu(), or the GPU's
 * beside its threshold), into out (at most windows_ink_blocks_cap()), row
 * by row from the top, each row from the left; returns their number. The
 * extremes read grey only, so they are found before the frame's first
 * scale is matched (engine.c: at submit, on the GPU or while it
 * thresholds the frame), and leave windows_ink few blocks to judge.
 * Allocates nothing. */
int windows_ink_blocks(const uint8_t *lohi, int width, int height, int gate, struct windows_block *out);

/* Ink that no structure explains: tiles where a block of 16 x 16 pixels
 * of the grey (read on every other row: print's strokes are 2 px and
 * more) holds ink and paper, its darkest grey at most a quarter of its
 * brightest and that at least the gate, a stroke (along a row, a pixel under
 * the block's mid-grey with paper at least 2.5 times as bright within 6
 * px on each side) and paper that the first scale painted black with
 * brighter light within radius, with the block's centre in no decoded
 * symbol's box (as for explained regions) or finger's; tiles where
 * windows_find's structure is, or that lie whole in a decoded symbol's
 * box, are not read. Where a hard shadow's edge crosses a symbol of under
 * about 50 px, Bernsen at the first scale's radius compares the shadowed
 * paper with the lit and paints the whole symbol black with the shadow's
 * band: nothing branches there, and too few holes are left for islands,
 * but the grey still holds the print. A table's grain, a shadow's step
 * (where it keeps more than a quarter of the light), a bright finger on
 * the table and a hand's dim, blurred edge beside its brighter palm (the
 * noise along it crosses the block's mid-grey, but never by 2.5 times)
 * are no ink; black shapes on white are, and cost windows.
 * Marks the scanned frame's ink tiles (none without windows_scan's grey)
 * from the n_blocks blocks that windows_ink_blocks found in that grey;
 * call once a frame, after windows_scan and before windows_find_ink.
 * Allocates nothing. */
void windows_ink(struct windows_scan *s, int radius, const struct windows_block *blocks, int n_blocks);

/* The ink tiles' windows (grown by pad, joined where they overlap), each
 * of the given radius; their number (0: none) into out (at most cap), or
 * -1 (a tree cut short, more than cap windows). */
int windows_find_ink(const struct windows_scan *s, int pad, int radius, struct window *out, int cap);

/* windows_find_ink without the ink tiles whose centre lies in a symbol's
 * box of read (or a finger's). */
int windows_find_ink_unread(const struct windows_scan *s, const struct detections *read, int pad, int radius,
			    struct window *out, int cap);

#endif
