#include "windows.h"

#include "../threshold/threshold.h"

#include <math.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define T WINDOWS_TILE
/* A decoded symbol's box: its centre +- BOX_HALF_X100 / 100 of its size
 * (the root's box side) + BOX_MARGIN pixels: the card's white margin
 * reaches past the root, and the centre is the leaves', not the box's. */
#define BOX_HALF_X100 85
#define BOX_MARGIN 4
/* A region with a symbol's branching (live_region()): pixels of it and of
 * each of at least MIN_BRANCHES of its neighbours; noise specks do not
 * count. */
#define MIN_AREA 16
#define MIN_BRANCHES 3
/* saturated_live: a streaked symbol's root of about 16 px a side or more. */
#define SATURATED_MIN_AREA 256
/* ... and whose branches other than the largest (a root's surround: the
 * table or the card's ring) hold at least 1 / MIN_BRANCH_SHARE of its own
 * pixels (windows_find's rule only): a symbol's root holds its blobs, a
 * node its leaves, a few per cent of it at the least (2 % and more for
 * nearly every live region under 130 px on our sets). A bright hand on a
 * DI table is a region of hundreds of pixels a side whose fingers' noisy,
 * blurred edges leave it a few holes of 20-50 pixels: enough to branch,
 * 0.15-0.4 % of its pixels (the di preset, seed 11: frame 8, a 477 px
 * hand with holes of 20 and 32 px, 0.15 %; frame 26, 315 px, 0.36 %), and
 * a region that large asks for windows of its own size down the whole
 * radius ladder (19 windows over 3.9 times the frame) and the closing
 * pass's. At 1 / 200 no read changed on any of our sets (the windows of
 * the regions it takes there, 171-332 px at 0.18-0.44 %, added nothing
 * that stood; the lowest share of a region kept live: 0.53 %); at 1 / 100
 * reads moved (four symbols on sheet-half seed 519 frame 14, one each on
 * shadow-small and phone-half). */
#define MIN_BRANCH_SHARE 200
/* The same for small structure (windows_find_small): pixels of each
 * neighbour that counts. */
#define SMALL_MIN_AREA 4
/* ... and for a region of at least SQUEEZED_MIN_PX on its box's longer
 * side, also neighbours of SQUEEZED_MIN_AREA pixels: a barrel lens
 * squeezes a 33 px symbol near the frame's edge until the first scale
 * keeps of its blob's holes and dots only specks of 2-3 px, so that its
 * root touches just its surround and its blob at 4 px (barrel, our set,
 * seed 32, frame 30: a 107 had no window). Not for smaller regions: on
 * the small preset (our set, seed 36, 48 frames) a window so opened
 * around a 21 px 147 had the upsampled pass's Lanczos read take it for
 * 110. */
#define SQUEEZED_MIN_PX 28
#define SQUEEZED_MIN_AREA 2
/* Islands (windows_find_islands): regions of at least ISLAND_MIN_AREA
 * pixels and at most ISLAND_MAX_SIDE a side that touch one region only,
 * as a symbol's holes and dots do; a tile is live where the tiles around
 * it (3 x 3) hold at least ISLAND_MIN_COUNT of them. */
#define ISLAND_MIN_AREA 4
#define ISLAND_MAX_SIDE 10
#define ISLAND_MIN_COUNT 8
/* Ink (windows_ink): blocks of INK_BLOCK pixels a side whose darkest grey
 * is at most (100 - INK_PCT) percent of their brightest. */
#define INK_BLOCK 16
#define INK_PCT 75
/* ... and whose paper a brighter light within the first scale's radius
 * (paper_lost): at least INK_STEP_PCT percent of the paper's grey. */
#define INK_STEP_PCT 140
/* ... and that hold a stroke (stroke()): a pixel under the block's
 * mid-grey with paper of at least 5/2 of its grey within INK_STROKE_REACH
 * pixels on each side along the row (5/2: the vector path works out
 * 2 x + x / 2 rounded up; only a grey up to INK_STROKE_MAX_INK has paper
 * that bright). A reach of 4 lost a 124 px symbol of the shadow-large
 * preset (our set, seed 52, frame 4), whose walls are 8 px: 6 read it,
 * every other figure and the di frames' cost the same. */
#define INK_STROKE_REACH 6
#define INK_STROKE_MAX_INK 102

static int tiles_x(int width)
{
	return (width + T - 1) / T;
}

/* The scratch holds four int32 a tile (the finds' live tiles and flood
 * stack, which hold the scan's index of symbols' boxes while it runs; the
 * scan's islands a tile, the ink tiles), then a verdict a region. */
size_t windows_scratch_len(int width, int height, int32_t max_regions)
{
	return 4 * (size_t)tiles_x(width) * (size_t)((height + T - 1) / T) + (size_t)(max_regions > 0 ? max_regions : 0);
}

static int max_i(int a, int b)
{
	return a > b ? a : b;
}

static int min_i(int a, int b)
{
	return a < b ? a : b;
}

/* Whether region g's box lies in the square of half side half around (x, y). */
static bool inside(const struct region *g, float x, float y, float half)
{
	return (float)g->x0 >= x - half && (float)g->x1 <= x + half && (float)g->y0 >= y - half && (float)g->y1 <= y + half;
}

/* Whether the grey in region g's box has a standard deviation of at least
 * sd levels. */
static bool grey_varies(const struct image_u8 *grey, const struct region *g, int sd)
{
	int64_t n = 0, sum = 0, sum2 = 0;
	for (int y = g->y0; y <= g->y1; y++) {
		const uint8_t *row = grey->data + (size_t)y * (size_t)grey->stride;
		for (int x = g->x0; x <= g->x1; x++) {
			sum += row[x];
			sum2 += (int64_t)row[x] * row[x];
		}
		n += g->x1 - g->x0 + 1;
	}
	/* In doubles: n * sum2 overflows 64 bits for boxes of a few thousand
	 * pixels a side. */
	const double mean = (double)sum / (double)n;
	return (double)sum2 / (double)n - mean * mean >= (double)sd * (double)sd;
}

/* Whether region g lies in a finger's box. */
static bool a_finger(const struct region *g, const struct detections *d)
{
	for (int i = 0; i < d->n_fingers; i++)
		if (inside(g, d->fingers[i].x, d->fingers[i].y, 0.5f * d->fingers[i].diameter_px + BOX_MARGIN))
			return true;
	return false;
}

/* Half the side of decoded symbol f's box. */
static float fid_half(const struct fiducial_det *f)
{
	return (float)BOX_HALF_X100 / 100.0f * f->size_px + BOX_MARGIN;
}

/* The decoded symbols' boxes by place (windows_scan judges hundreds of
 * regions against tens of symbols): the frame in cells of BOXES_CELL
 * pixels a side, each listing the symbols whose box meets it. A region in
 * a box has its own box's top left corner in it, so only its corner's
 * cell's symbols are tried. */
#define BOXES_CELL 128

struct boxes {
	const struct detections *d;
	const int32_t *start; /* cell c's symbols: idx[start[c]] .. idx[start[c + 1] - 1] */
	const int32_t *idx;
	int ncx;              /* cells a row; 0: no cells (every symbol is tried) */
};

/* The cell of coordinate v among n cells, clamped to them. */
static int cell_of(float v, int n)
{
	return v < 0.0f ? 0 : v >= (float)n * BOXES_CELL ? n - 1 : (int)(v / BOXES_CELL);
}

/* The cells c[0] <= x <= c[1], c[2] <= y <= c[3] of ncx x ncy that symbol
 * f's box meets; false for none (NaN or a negative size: it holds no
 * region). */
static bool box_cells(const struct fiducial_det *f, int ncx, int ncy, int c[4])
{
	const float half = fid_half(f);
	const float x0 = f->x - half, x1 = f->x + half, y0 = f->y - half, y1 = f->y + half;
	if (!(x0 <= x1 && y0 <= y1))
		return false;
	c[0] = cell_of(x0, ncx);
	c[1] = cell_of(x1, ncx);
	c[2] = cell_of(y0, ncy);
	c[3] = cell_of(y1, ncy);
	return true;
}

/* d's boxes in cells over a w x h frame, in room (len int32); without
 * cells where room is too short. */
static struct boxes boxes_index(const struct detections *d, int w, int h, int32_t *room, size_t len)
{
	struct boxes b = {.d = d};
	const int ncx = (w + BOXES_CELL - 1) / BOXES_CELL, ncy = (h + BOXES_CELL - 1) / BOXES_CELL;
	const size_t nc = (size_t)ncx * (size_t)ncy;
	if (len < nc + 1)
		return b;
	int32_t *start = room, *idx = room + nc + 1;
	int c[4];
	/* Each cell's symbols counted, the counts summed up to each cell's
	 * end, and the symbols placed from the last back: that leaves start[c]
	 * at cell c's first, each cell's symbols in their order. */
	for (size_t k = 0; k <= nc; k++)
		start[k] = 0;
	for (int i = 0; i < d->n_fids; i++)
		if (box_cells(&d->fids[i], ncx, ncy, c))
			for (int cy = c[2]; cy <= c[3]; cy++)
				for (int cx = c[0]; cx <= c[1]; cx++)
					start[(size_t)cy * (size_t)ncx + (size_t)cx]++;
	for (size_t k = 1; k <= nc; k++)
		start[k] += start[k - 1];
	if ((size_t)start[nc] > len - (nc + 1))
		return b;
	for (int i = d->n_fids - 1; i >= 0; i--)
		if (box_cells(&d->fids[i], ncx, ncy, c))
			for (int cy = c[2]; cy <= c[3]; cy++)
				for (int cx = c[0]; cx <= c[1]; cx++)
					idx[--start[(size_t)cy * (size_t)ncx + (size_t)cx]] = i;
	b.start = start;
	b.idx = idx;
	b.ncx = ncx;
	return b;
}

/* Whether region r lies in a decoded symbol's box or a finger's. */
static bool explained(const struct region_tree *t, int32_t r, const struct boxes *b)
{
	const struct region *g = &t->regions[r];
	const struct detections *d = b->d;
	if (b->ncx) {
		const size_t c = (size_t)(g->y0 / BOXES_CELL) * (size_t)b->ncx + (size_t)(g->x0 / BOXES_CELL);
		for (int32_t k = b->start[c]; k < b->start[c + 1]; k++) {
			const struct fiducial_det *f = &d->fids[b->idx[k]];
			if (inside(g, f->x, f->y, fid_half(f)))
				return true;
		}
	} else {
		for (int i = 0; i < d->n_fids; i++)
			if (inside(g, d->fids[i].x, d->fids[i].y, fid_half(&d->fids[i])))
				return true;
	}
	return a_finger(g, d);
}

/* Whether neighbour g of a region is a branch of new structure: not a
 * found finger, and not a decoded symbol's card (a region in that symbol's
 * box whose box holds its centre). The dark rim Bernsen draws around a
 * card joins the rim of a fingertip, a hand or a shadow next to it; that
 * region touches the table, the card and the other thing, as a symbol's
 * root touches its surround and two children, and reaches past the
 * decoded symbol's box. A leaf of an undecoded symbol beside a decoded
 * one never holds the decoded one's centre. */
static bool a_branch(const struct region *g, const struct detections *d)
{
	for (int i = 0; i < d->n_fids; i++) {
		const struct fiducial_det *f = &d->fids[i];
		if ((float)g->x0 <= f->x && (float)g->x1 >= f->x && (float)g->y0 <= f->y && (float)g->y1 >= f->y &&
		    inside(g, f->x, f->y, fid_half(f)))
			return false;
	}
	return !a_finger(g, d);
}

/* Whether region r's branches (a_branch(), of MIN_AREA pixels or more)
 * other than the largest hold at least 1 / MIN_BRANCH_SHARE of its pixels.
 */
static bool branches_hold(const struct region_tree *t, int32_t r, const struct detections *d)
{
	const struct region *g = &t->regions[r];
	const int32_t *adj = region_adj(t, r);
	int64_t sum = 0;
	int32_t largest = 0;
	for (int i = 0; i < g->n_adj; i++) {
		const struct region *a = &t->regions[adj[i]];
		if (a->area < MIN_AREA || !a_branch(a, d))
			continue;
		sum += a->area;
		largest = a->area > largest ? a->area : largest;
	}
	return MIN_BRANCH_SHARE * (sum - largest) >= (int64_t)g->area;
}

/* Whether region r is structure that no decoded symbol or finger explains
 * and that branches as a symbol's regions do: its box under max_side a
 * side, touching at least MIN_BRANCHES branches (a_branch()) of min_area
 * pixels or more. With min_area MIN_AREA: the root or a node holding two
 * leaves of a symbol (its surround and two children); a finger, a hand, a
 * card edge or a shadow edge is a boundary or a chain of nested rings,
 * noise a speck: none of them branches. With SMALL_MIN_AREA, small
 * structure: the root of a symbol under about 30 px, whose dots are 2-5
 * px, touches its blob and its dots, but only one region of MIN_AREA. */
static bool live_region(const struct region_tree *t, int32_t r, int max_side, int32_t min_area,
			const struct boxes *b)
{
	const struct region *g = &t->regions[r];
	if (g->area < min_area || g->n_adj < MIN_BRANCHES || g->x1 - g->x0 >= max_side || g->y1 - g->y0 >= max_side)
		return false;
	/* The cheap tests first: most regions fail them. */
	const int32_t *adj = region_adj(t, r);
	int n = 0;
	for (int i = 0; i < g->n_adj && n < MIN_BRANCHES; i++)
		n += t->regions[adj[i]].area >= min_area;
	if (n < MIN_BRANCHES || explained(t, r, b))
		return false;
	n = 0;
	for (int i = 0; i < g->n_adj && n < MIN_BRANCHES; i++)
		n += t->regions[adj[i]].area >= min_area && a_branch(&t->regions[adj[i]], b->d);
	return n >= MIN_BRANCHES && (min_area != MIN_AREA || branches_hold(t, r, b->d));
}

/* Whether saturated region r (more neighbours than its list holds, none
 * listed, so live_region() never takes it) is structure of a symbol's
 * size that no decoded symbol explains: the root of a streaked symbol
 * whose leaves a motion streak's hairlines shattered into specks
 * (windows_find_saturated). */
static bool saturated_live(const struct region_tree *t, int32_t r, int max_side, const struct boxes *b)
{
	const struct region *g = &t->regions[r];
	return (g->flags & REGION_SATURATED) && g->area >= SATURATED_MIN_AREA && g->x1 - g->x0 < max_side &&
	       g->y1 - g->y0 < max_side && !explained(t, r, b);
}

/* The longer side of region g's box. */
static int box_side(const struct region *g)
{
	return max_i(g->x1 - g->x0, g->y1 - g->y0) + 1;
}

/* Verdict bits of a region (windows_scan): structure by windows_find's
 * rule, by windows_find_small's. */
#define LIVE 1
#define LIVE_SMALL 2
/* ... and an island the scan counted (windows_blobs may take it back). */
#define ISLAND 4
/* ... and a saturated region of a symbol's size (saturated_live). */
#define SATURATED 8

/* Whether region r is an island (ISLAND_*) that no decoded symbol or
 * finger explains. */
static bool island(const struct region_tree *t, int32_t r, const struct boxes *b)
{
	const struct region *g = &t->regions[r];
	return g->n_adj == 1 && g->area >= ISLAND_MIN_AREA && g->x1 - g->x0 < ISLAND_MAX_SIDE &&
	       g->y1 - g->y0 < ISLAND_MAX_SIDE && !explained(t, r, b);
}

void windows_scan(struct windows_scan *s, const struct region_tree *t, const struct detections *d, int max_symbol_px,
		  int small_px, const struct image_u8 *grey, int min_sd, int32_t *scratch, size_t scratch_len)
{
	*s = (struct windows_scan){.tree = t, .d = d, .grey = grey, .scratch = scratch, .scratch_len = scratch_len};
	if (t->overflow || scratch_len < windows_scratch_len(t->width, t->height, t->n_regions)) {
		s->whole = true;
		return;
	}
	const int ntx = tiles_x(t->width);
	const size_t nt = (size_t)ntx * (size_t)((t->height + T - 1) / T);
	int32_t *islands = scratch + 2 * nt, *memo = scratch + 4 * nt;
	for (size_t i = 0; i < nt; i++)
		islands[i] = 0;
	/* The finds' tiles are free until the scan is done. */
	const struct boxes b = boxes_index(d, t->width, t->height, scratch, 2 * nt);
	for (int32_t r = 0; r < t->n_regions; r++) {
		memo[r] = 0;
		/* Most regions touch one or two others (leaves, rings): no
		 * rule's branches, and only an island to look for. */
		if (t->regions[r].n_adj >= MIN_BRANCHES) {
			memo[r] = live_region(t, r, max_symbol_px, MIN_AREA, &b) ? LIVE : 0;
			if (small_px > 0 &&
			    (live_region(t, r, small_px, SMALL_MIN_AREA, &b) ||
			     (box_side(&t->regions[r]) >= SQUEEZED_MIN_PX &&
			      live_region(t, r, small_px, SQUEEZED_MIN_AREA, &b))) &&
			    (!grey || grey_varies(grey, &t->regions[r], min_sd)))
				memo[r] |= LIVE_SMALL;
		}
		if (small_px > 0 && island(t, r, &b)) {
			const struct region *g = &t->regions[r];
			islands[(g->y0 + g->y1) / 2 / T * ntx + (g->x0 + g->x1) / 2 / T]++;
			s->n_islands++;
			memo[r] |= ISLAND;
		}
		/* A saturated region lists no neighbours (n_adj 0): judged by
		 * its size alone. */
		if (saturated_live(t, r, max_symbol_px, &b))
			memo[r] |= SATURATED;
		s->n_live += (memo[r] & LIVE) != 0;
		s->n_saturated += (memo[r] & SATURATED) != 0;
		s->n_small += (memo[r] & LIVE_SMALL) != 0;
	}
}

/* A white region of the first scale at least the local mean's window in
 * area (four times reach squared) raises the mean around it as a found
 * blob does, blob or not: with outlines off, a DI table's hand wider than
 * blob_max, or with more holes than a blob may have, is no blob, and its
 * rim opened island windows (the 1080p DI frames 0, 2 and 8: 3.3-14 ms of
 * third scale on the 2-core build machine). Such a region counts only
 * where at least RIM_MIN_ISLANDS islands lie in what surrounds it within
 * reach: a rim's specks (those frames: 45-113 a hand), not the few pieces
 * of an unread symbol beside a sheet or a card, which the local mean on
 * front-lit scenes leaves 1-23 of (sv and the oblique and sheet-half
 * seeds read with --threshold mean: a 21 px symbol lost without the
 * count). */
#define RIM_MIN_ISLANDS 32
/* windows_blobs' marks in memo's upper bits, cleared before it returns:
 * a found blob's region, a bright one, and from RIM_ONE up the islands
 * around a marked region. */
#define BLOB 16
#define BRIGHT 32
#define RIM_ONE 64

/* Marks near[] (one int32 a tile) with 1 + r for the tiles within reach
 * pixels of run rn (of region r). */
static void run_mark(const struct region_tree *t, const struct run *rn, int y, int reach, int32_t *near)
{
	const int ntx = tiles_x(t->width);
	const int ty0 = max_i(0, y - reach) / T, ty1 = min_i(t->height - 1, y + reach) / T;
	const int tx0 = max_i(0, rn->x - reach) / T, tx1 = min_i(t->width - 1, rn->x + rn->len - 1 + reach) / T;
	for (int ty = ty0; ty <= ty1; ty++)
		for (int tx = tx0; tx <= tx1; tx++)
			near[ty * ntx + tx] = rn->region + 1;
}

/* near[] for windows_blobs: 1 + the region of a blob of d, or else of a
 * white region of at least four times reach squared (BRIGHT in memo),
 * with a pixel within reach of the tile (a blob's where both are); 0
 * elsewhere. The bright regions' runs are walked in one sweep of the
 * tree's, each blob's in the rows it spans. Blobs are marked BLOB in memo.
 * False: nothing marked. */
static bool blobs_mark(const struct region_tree *t, const struct detections *d, int reach, int32_t *memo,
		       int32_t *near)
{
	const int ntx = tiles_x(t->width), nty = (t->height + T - 1) / T;
	for (int i = 0; i < ntx * nty; i++)
		near[i] = 0;
	bool any = false;
	const int64_t bright = 4 * (int64_t)reach * reach;
	for (int32_t r = 0; r < t->n_regions; r++)
		if (t->regions[r].colour == 255 && t->regions[r].area >= bright) {
			memo[r] |= BRIGHT;
			any = true;
		}
	for (int y = 0; any && y < t->height; y++)
		for (int32_t k = t->row_first_run[y]; k < t->row_first_run[y + 1]; k++)
			if (memo[t->runs[k].region] & BRIGHT)
				run_mark(t, &t->runs[k], y, reach, near);
	for (int i = 0; i < d->n_blobs; i++) {
		const int32_t r = d->blobs[i].region;
		if (r < 0 || r >= t->n_regions)
			continue;
		const struct region *g = &t->regions[r];
		for (int y = g->y0; y <= g->y1; y++)
			for (int32_t k = t->row_first_run[y]; k < t->row_first_run[y + 1]; k++)
				if (t->runs[k].region == r)
					run_mark(t, &t->runs[k], y, reach, near);
		memo[r] |= BLOB;
		any = true;
	}
	return any;
}

void windows_blobs(struct windows_scan *s, int reach)
{
	if (s->whole || !s->n_islands)
		return;
	const struct region_tree *t = s->tree;
	const int ntx = tiles_x(t->width);
	const size_t nt = (size_t)ntx * (size_t)((t->height + T - 1) / T);
	/* The ink tiles' room is free until windows_ink. */
	int32_t *islands = s->scratch + 2 * nt, *near = s->scratch + 3 * nt, *memo = s->scratch + 4 * nt;
	if (!blobs_mark(t, s->d, reach, memo, near))
		return;
	/* First each marked region's surrounding islands are counted, then
	 * those of blobs and of regions with a rim's count are taken back. */
	for (int pass = 0; pass < 2; pass++)
		for (int32_t r = 0; r < t->n_regions; r++) {
			if (!(memo[r] & ISLAND))
				continue;
			const struct region *g = &t->regions[r];
			const size_t tile =
				(size_t)((g->y0 + g->y1) / 2 / T) * (size_t)ntx + (size_t)((g->x0 + g->x1) / 2 / T);
			if (!near[tile])
				continue;
			/* Its one neighbour: within the marked region's box, a
			 * structure the region holds (an unread symbol's card taken
			 * for a blob), which keeps it; reaching past it, what
			 * surrounds the region. */
			const int32_t m = near[tile] - 1;
			const struct region *a = &t->regions[region_adj(t, r)[0]], *q = &t->regions[m];
			if (a->x0 >= q->x0 && a->x1 <= q->x1 && a->y0 >= q->y0 && a->y1 <= q->y1)
				continue;
			if (pass == 0) {
				if (memo[m] / RIM_ONE < RIM_MIN_ISLANDS)
					memo[m] += RIM_ONE;
				continue;
			}
			if (!(memo[m] & BLOB) && memo[m] / RIM_ONE < RIM_MIN_ISLANDS)
				continue;
			memo[r] &= ~ISLAND;
			islands[tile]--;
			s->n_islands--;
		}
	for (int32_t r = 0; r < t->n_regions; r++)
		memo[r] &= BLOB - 1;
}

/* live[i] = the longest box side of the regions that meet tile i and whose
 * verdict has bit `bit` (for LIVE_SMALL, whose box is also under small_px
 * a side); 0: none. Regions, not tiles, are explained: a symbol beside a
 * decoded one, whose tiles that one's box covers, still has regions of
 * its own outside the box. One pass over the tree's runs in the rows the
 * live regions span, where only the runs of live regions walk their
 * tiles. */
static void tiles_mark(const struct region_tree *t, const int32_t *memo, int32_t bit, int small_px, int32_t *live)
{
	const int ntx = tiles_x(t->width), nty = (t->height + T - 1) / T;
	for (int i = 0; i < ntx * nty; i++)
		live[i] = 0;
	int ylo = t->height, yhi = -1; /* the rows live regions span */
	for (int32_t r = 0; r < t->n_regions; r++)
		if (memo[r] & bit) {
			ylo = min_i(ylo, t->regions[r].y0);
			yhi = max_i(yhi, t->regions[r].y1);
		}
	for (int y = ylo; y <= yhi; y++) {
		int32_t *row = live + (size_t)(y / T) * (size_t)ntx;
		for (int32_t k = t->row_first_run[y]; k < t->row_first_run[y + 1]; k++) {
			const struct run *rn = &t->runs[k];
			if (!(memo[rn->region] & bit))
				continue;
			const struct region *g = &t->regions[rn->region];
			const int side = max_i(g->x1 - g->x0, g->y1 - g->y0) + 1; /* boxes are inclusive */
			if (bit == LIVE_SMALL && side > small_px)
				continue;
			for (int tx = rn->x / T; tx * T < rn->x + rn->len; tx++)
				row[tx] = max_i(row[tx], side);
		}
	}
}

/* Leaves live (as 1) only the tiles that were not and whose 3 x 3 tiles
 * hold at least ISLAND_MIN_COUNT islands (windows_scan's count a tile);
 * sum: scratch of one int32 a tile. Each tile with islands adds them to
 * its neighbours' sums: few tiles have any. */
static void islands_mark(int ntx, int nty, const int32_t *islands, int32_t *live, int32_t *sum)
{
	for (int i = 0; i < ntx * nty; i++)
		sum[i] = 0;
	for (int ty = 0; ty < nty; ty++)
		for (int tx = 0; tx < ntx; tx++) {
			const int32_t n = islands[ty * ntx + tx];
			if (!n)
				continue;
			for (int y = max_i(0, ty - 1); y <= min_i(nty - 1, ty + 1); y++)
				for (int x = max_i(0, tx - 1); x <= min_i(ntx - 1, tx + 1); x++)
					sum[y * ntx + x] += n;
		}
	for (int i = 0; i < ntx * nty; i++)
		live[i] = !live[i] && sum[i] >= ISLAND_MIN_COUNT;
}

bool windows_overlap(const struct window *a, const struct window *b)
{
	return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

int windows_radius(const struct windows_radius *rule, int side)
{
	const int r = (int)(rule->ratio * (float)side + 0.5f);
	return r < rule->min ? rule->min : r > rule->max ? rule->max : r;
}

/* Groups the live tiles (live[i] > 0: the longest side there; cleared
 * here) of a w x h frame into windows (see windows.h); stack: scratch of
 * one int32 a tile. */
static int group(int w, int h, int32_t *live, int32_t *stack, int pad, const struct windows_radius *rule,
		 struct window *out, int cap)
{
	const int ntx = tiles_x(w), nty = (h + T - 1) / T;
	const size_t nt = (size_t)ntx * (size_t)nty;
	int n = 0;
	for (size_t i = 0; i < nt; i++) {
		if (!live[i])
			continue;
		/* Flood the group of tile i; its box in tiles, its longest side. */
		int sp = 0, bx0 = ntx, by0 = nty, bx1 = -1, by1 = -1, side = 0;
		stack[sp++] = (int32_t)i;
		side = live[i];
		live[i] = 0;
		while (sp) {
			const int k = stack[--sp], kx = k % ntx, ky = k / ntx;
			bx0 = min_i(bx0, kx);
			bx1 = max_i(bx1, kx);
			by0 = min_i(by0, ky);
			by1 = max_i(by1, ky);
			for (int dy = -1; dy <= 1; dy++)
				for (int dx = -1; dx <= 1; dx++) {
					const int x = kx + dx, y = ky + dy;
					if (x < 0 || y < 0 || x >= ntx || y >= nty || !live[y * ntx + x])
						continue;
					side = max_i(side, live[y * ntx + x]);
					live[y * ntx + x] = 0;
					stack[sp++] = y * ntx + x;
				}
		}
		struct window g = {max_i(0, bx0 * T - pad), max_i(0, by0 * T - pad), min_i(w, (bx1 + 1) * T + pad),
				   min_i(h, (by1 + 1) * T + pad), rule ? windows_radius(rule, side) : 0};
		/* Join g with every window of its radius it overlaps, until it
		 * overlaps none. */
		for (int j = 0; j < n;) {
			if (!windows_overlap(&g, &out[j]) || out[j].radius != g.radius) {
				j++;
				continue;
			}
			g.x0 = min_i(g.x0, out[j].x0);
			g.y0 = min_i(g.y0, out[j].y0);
			g.x1 = max_i(g.x1, out[j].x1);
			g.y1 = max_i(g.y1, out[j].y1);
			out[j] = out[--n];
			j = 0;
		}
		if (n >= cap)
			return -1;
		out[n++] = g;
	}
	if (rule)
		return n;
	int64_t area = 0;
	for (int j = 0; j < n; j++)
		area += (int64_t)(out[j].x1 - out[j].x0) * (out[j].y1 - out[j].y0);
	return 2 * area > (int64_t)w * h ? -1 : n;
}

static int find(const struct windows_scan *s, int32_t bit, int small_px, bool islands, int pad,
		const struct windows_radius *rule, struct window *out, int cap)
{
	if (s->whole)
		return -1;
	if (islands ? s->n_islands < ISLAND_MIN_COUNT
		    : !(bit == LIVE ? s->n_live : bit == LIVE_SMALL ? s->n_small : s->n_saturated))
		return 0;
	const struct region_tree *tree = s->tree;
	const int w = tree->width, h = tree->height, ntx = tiles_x(w), nty = (h + T - 1) / T;
	const size_t nt = (size_t)ntx * (size_t)nty;
	int32_t *live = s->scratch, *stack = s->scratch + nt;
	if (s->n_small || bit != LIVE_SMALL)
		tiles_mark(tree, s->scratch + 4 * nt, bit, small_px, live);
	else
		for (size_t i = 0; i < nt; i++)
			live[i] = 0;
	if (islands)
		islands_mark(ntx, nty, s->scratch + 2 * nt, live, stack);
	return group(w, h, live, stack, pad, rule, out, cap);
}

int windows_live_side(const struct windows_scan *s, const struct window *w)
{
	if (s->whole)
		return INT32_MAX;
	const struct region_tree *t = s->tree;
	const size_t nt = (size_t)tiles_x(t->width) * (size_t)((t->height + T - 1) / T);
	const int32_t *memo = s->scratch + 4 * nt;
	int side = 0;
	for (int32_t r = 0; r < t->n_regions && s->n_live; r++) {
		const struct region *g = &t->regions[r];
		if ((memo[r] & LIVE) && g->x0 >= w->x0 && g->x1 < w->x1 && g->y0 >= w->y0 && g->y1 < w->y1)
			side = max_i(side, max_i(g->x1 - g->x0, g->y1 - g->y0) + 1);
	}
	return side;
}

int windows_find(const struct windows_scan *s, int pad, const struct windows_radius *rule, struct window *out, int cap)
{
	return find(s, LIVE, 0, false, pad, rule, out, cap);
}

int windows_find_saturated(const struct windows_scan *s, int pad, const struct windows_radius *rule, struct window *out,
			   int cap)
{
	return find(s, SATURATED, 0, false, pad, rule, out, cap);
}

int windows_find_small(const struct windows_scan *s, int small_px, int pad, struct window *out, int cap)
{
	return find(s, LIVE_SMALL, small_px, false, pad, NULL, out, cap);
}

int windows_find_islands(const struct windows_scan *s, int small_px, int pad, struct window *out, int cap)
{
	return find(s, LIVE_SMALL, small_px, true, pad, NULL, out, cap);
}

/* Whether (x, y) lies in decoded symbol i's box. */
static bool in_fid(const struct detections *d, int i, float x, float y)
{
	const float half = fid_half(&d->fids[i]);
	return fabsf(x - d->fids[i].x) <= half && fabsf(y - d->fids[i].y) <= half;
}

/* Whether (x, y) lies in a decoded symbol's box or a finger's. *last: the
 * symbol that explained the block before (or -1), tried first and updated:
 * a symbol's blocks come one after another along its rows. */
static bool point_explained(const struct detections *d, float x, float y, int *last)
{
	if (*last >= 0 && in_fid(d, *last, x, y))
		return true;
	for (int i = 0; i < d->n_fids; i++)
		if (in_fid(d, i, x, y)) {
			*last = i;
			return true;
		}
	for (int i = 0; i < d->n_fingers; i++) {
		const float half = 0.5f * d->fingers[i].diameter_px + BOX_MARGIN;
		if (fabsf(x - d->fingers[i].x) <= half && fabsf(y - d->fingers[i].y) <= half)
			return true;
	}
	return false;
}

/* The largest of the n bytes at p (0 for none): 16 at a time where SSE2
 * is. */
static int bytes_max(const uint8_t *p, int n)
{
	int i = 0, most = 0;
#ifdef __SSE2__
	if (n >= 16) {
		__m128i v = _mm_setzero_si128();
		for (; i + 16 <= n; i += 16)
			v = _mm_max_epu8(v, _mm_loadu_si128((const __m128i *)(p + i)));
		v = _mm_max_epu8(v, _mm_srli_si128(v, 8));
		v = _mm_max_epu8(v, _mm_srli_si128(v, 4));
		v = _mm_max_epu8(v, _mm_srli_si128(v, 2));
		v = _mm_max_epu8(v, _mm_srli_si128(v, 1));
		most = _mm_cvtsi128_si32(v) & 0xff;
	}
#endif
	for (; i < n; i++)
		most = max_i(most, p[i]);
	return most;
}

/* Whether the first scale painted paper black in the block at (x, y),
 * whose darkest grey is lo and brightest hi, because its window reached
 * brighter light: a pixel of the block (read as windows_ink reads, on
 * every other row) in a black run, paper rather than ink (at least a
 * third of the way from lo to hi, and twice lo), with a grey of at least
 * INK_STEP_PCT percent of it within radius. Beside print Bernsen's window
 * holds ink and paper and puts the paper white; a shadow's lit side
 * within its reach makes the threshold the mean of lit paper and ink,
 * over the shadowed paper. */
static bool paper_lost(const struct region_tree *t, const struct image_u8 *g, int x, int y, int lo, int hi,
		       int radius)
{
	const int x0 = max_i(0, x - radius), x1 = min_i(t->width, x + INK_BLOCK + radius);
	int light = 0;
	for (int yy = max_i(0, y - radius); yy < min_i(t->height, y + INK_BLOCK + radius); yy += 2)
		light = max_i(light, bytes_max(g->data + (size_t)yy * (size_t)g->stride + x0, x1 - x0));
	const int paper = max_i(lo + (hi - lo) / 3, 2 * lo), bx1 = min_i(t->width, x + INK_BLOCK);
	for (int yy = y; yy < min_i(t->height, y + INK_BLOCK); yy += 2) {
		const uint8_t *row = g->data + (size_t)yy * (size_t)g->stride;
		int32_t k = t->row_first_run[yy];
		for (int i = x; i < bx1; i++) {
			if (row[i] < paper || 100 * light < INK_STEP_PCT * row[i])
				continue;
			while (k < t->row_first_run[yy + 1] && t->runs[k].x + t->runs[k].len <= i)
				k++;
			if (k < t->row_first_run[yy + 1] && t->runs[k].x <= i && t->runs[k].colour == 0)
				return true;
		}
	}
	return false;
}

/* Whether a row of the block at (x, y) (read as windows_ink reads) holds
 * a stroke: a pixel darker than the mean of the block's darkest grey lo
 * and brightest hi, with paper (at least that mean, and 5/2 of its grey)
 * within INK_STROKE_REACH pixels on each side, in the block. Print has
 * strokes and dots on paper, ink a small fraction of its paper's light
 * beside it, in the light and in a shadow alike; the edge of a hand or a
 * shadow is one step, a finger a bright run between dark ones. Dark
 * between bright anywhere along the row is not enough: along a soft edge
 * the noise crosses the mean back and forth, and on a
 * diffuse-illumination table every dim, blurred edge of a hand beside its
 * brighter palm (which the first scale paints black) made such "strokes"
 * a few grey levels deep: ink windows over a tenth of the frame that read
 * nothing. */
static bool stroke(const struct image_u8 *g, int x, int y, int lo, int hi)
{
	const int mid = (lo + hi) / 2, x1 = min_i(g->width, x + INK_BLOCK);
	if (mid == 0) /* nothing is darker (and vdark below would wrap) */
		return false;
#ifdef __SSE2__
	/* 16 pixels at once: the brightest of the INK_STROKE_REACH on each
	 * side (zeros past the block's ends, no paper), against each pixel's
	 * paper. */
	const __m128i vmid = _mm_set1_epi8((char)mid);
	const __m128i vdark = _mm_set1_epi8((char)(min_i(mid, INK_STROKE_MAX_INK + 1) - 1));
#endif
	for (int yy = y; yy < min_i(g->height, y + INK_BLOCK); yy += 2) {
		const uint8_t *row = g->data + (size_t)yy * (size_t)g->stride;
#ifdef __SSE2__
		if (x1 - x == INK_BLOCK) {
			const __m128i v = _mm_loadu_si128((const __m128i *)(row + x));
			__m128i l = _mm_slli_si128(v, 1), r = _mm_srli_si128(v, 1);
			l = _mm_max_epu8(l, _mm_slli_si128(v, 2));
			r = _mm_max_epu8(r, _mm_srli_si128(v, 2));
			l = _mm_max_epu8(l, _mm_slli_si128(v, 3));
			r = _mm_max_epu8(r, _mm_srli_si128(v, 3));
			l = _mm_max_epu8(l, _mm_slli_si128(v, 4));
			r = _mm_max_epu8(r, _mm_srli_si128(v, 4));
			l = _mm_max_epu8(l, _mm_slli_si128(v, 5));
			r = _mm_max_epu8(r, _mm_srli_si128(v, 5));
			l = _mm_max_epu8(l, _mm_slli_si128(v, 6));
			r = _mm_max_epu8(r, _mm_srli_si128(v, 6));
			const __m128i side = _mm_min_epu8(l, r);
			const __m128i paper = _mm_max_epu8(
				vmid, _mm_adds_epu8(_mm_adds_epu8(v, v), _mm_avg_epu8(v, _mm_setzero_si128())));
			const __m128i ok = _mm_and_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, vdark), v),
							 _mm_cmpeq_epi8(_mm_max_epu8(side, paper), side));
			if (_mm_movemask_epi8(ok))
				return true;
			continue;
		}
#endif
		for (int i = x + 1; i < x1 - 1; i++) {
			if (row[i] >= mid)
				continue;
			bool left = false, right = false;
			for (int k = max_i(x, i - INK_STROKE_REACH); k < i && !left; k++)
				left = row[k] >= mid && 2 * row[k] >= 5 * row[i];
			for (int k = i + 1; k <= min_i(x1 - 1, i + INK_STROKE_REACH) && !right; k++)
				right = row[k] >= mid && 2 * row[k] >= 5 * row[i];
			if (left && right)
				return true;
		}
	}
	return false;
}

_Static_assert(INK_BLOCK == THRESHOLD_BLOCK, "the ink blocks are the threshold's block extremes");

int windows_ink_blocks_cap(int width, int height)
{
	return threshold_blocks_x(width) * threshold_blocks_y(height);
}

int windows_ink_blocks(const uint8_t *lohi, int width, int height, int gate, struct windows_block *out)
{
	const int nbx = threshold_blocks_x(width), nby = threshold_blocks_y(height);
	int n = 0;
	for (int by = 0; by < nby; by++)
		for (int bx = 0; bx < nbx; bx++, lohi += 2) {
			const int lo = lohi[0], hi = lohi[1];
			if (hi >= gate && 100 * (hi - lo) >= INK_PCT * hi)
				out[n++] = (struct windows_block){bx * INK_BLOCK, by * INK_BLOCK, (uint8_t)lo, (uint8_t)hi};
		}
	return n;
}

void windows_ink(struct windows_scan *s, int radius, const struct windows_block *blocks, int n_blocks)
{
	s->n_ink = 0;
	if (s->whole || !s->grey)
		return;
	const struct region_tree *t = s->tree;
	const int w = t->width, h = t->height, ntx = tiles_x(w), nty = (h + T - 1) / T;
	const size_t nt = (size_t)ntx * (size_t)nty;
	int32_t *skip = s->scratch + nt, *ink = s->scratch + 3 * nt;
	if (s->n_live)
		tiles_mark(t, s->scratch + 4 * nt, LIVE, 0, skip);
	else
		for (size_t i = 0; i < nt; i++)
			skip[i] = 0;
	/* ink[k]: -1 where tile k need not be read (live, or in a decoded
	 * symbol's box), 1 once it holds ink, else 0. */
	for (size_t i = 0; i < nt; i++)
		ink[i] = skip[i] ? -1 : 0;
	for (int i = 0; i < s->d->n_fids; i++) {
		const struct fiducial_det *f = &s->d->fids[i];
		const float half = fid_half(f);
		const int tx0 = (int)ceilf((f->x - half) / T), tx1 = (int)floorf((f->x + half) / T);
		const int ty0 = (int)ceilf((f->y - half) / T), ty1 = (int)floorf((f->y + half) / T);
		for (int ty = max_i(ty0, 0); ty < min_i(ty1, nty); ty++)
			for (int tx = max_i(tx0, 0); tx < min_i(tx1, ntx); tx++)
				ink[(size_t)ty * (size_t)ntx + (size_t)tx] = -1;
	}
	/* The blocks of ink and paper (a few in a frame) where the tile is
	 * read: with a stroke (most of them are in symbols' boxes, not read),
	 * where the first scale lost their paper and nothing explains them. */
	int last = -1;
	for (int i = 0; i < n_blocks; i++) {
		const struct windows_block *b = &blocks[i];
		int32_t *k = ink + (size_t)((unsigned)b->y / T) * (size_t)ntx + (size_t)((unsigned)b->x / T);
		if (!*k && stroke(s->grey, b->x, b->y, b->lo, b->hi) &&
		    paper_lost(t, s->grey, b->x, b->y, b->lo, b->hi, radius) &&
		    !point_explained(s->d, (float)b->x + INK_BLOCK / 2.0f, (float)b->y + INK_BLOCK / 2.0f, &last))
			*k = 1;
	}
	for (size_t i = 0; i < nt; i++) {
		ink[i] = ink[i] > 0;
		s->n_ink += ink[i];
	}
}

int windows_find_ink(const struct windows_scan *s, int pad, int radius, struct window *out, int cap)
{
	if (s->whole)
		return -1;
	if (!s->n_ink)
		return 0;
	const int w = s->tree->width, h = s->tree->height;
	const size_t nt = (size_t)tiles_x(w) * (size_t)((h + T - 1) / T);
	int32_t *live = s->scratch;
	for (size_t i = 0; i < nt; i++)
		live[i] = s->scratch[3 * nt + i];
	const struct windows_radius rule = {0.0f, radius, radius};
	return group(w, h, live, s->scratch + nt, pad, &rule, out, cap);
}

int windows_find_ink_unread(const struct windows_scan *s, const struct detections *read, int pad, int radius,
			    struct window *out, int cap)
{
	if (s->whole)
		return -1;
	if (!s->n_ink)
		return 0;
	const int w = s->tree->width, h = s->tree->height, ntx = tiles_x(w);
	const size_t nt = (size_t)ntx * (size_t)((h + T - 1) / T);
	int32_t *live = s->scratch;
	int last = -1;
	for (size_t i = 0; i < nt; i++) {
		const float cx = (float)((int)(i % (size_t)ntx) * T) + T / 2.0f, cy = (float)((int)(i / (size_t)ntx) * T) + T / 2.0f;
		live[i] = s->scratch[3 * nt + i] && !point_explained(read, cx, cy, &last);
	}
	const struct windows_radius rule = {0.0f, radius, radius};
	return group(w, h, live, s->scratch + nt, pad, &rule, out, cap);
}
