#include "segment.h"

#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "../core/log.h"
#include "../core/pool.h"

#define SEGMENT_MAX_THREADS 64
_Static_assert(SEGMENT_MAX_THREADS <= POOL_MAX_WORKERS + 1, "a band a thread");
#define BAND_MIN_ROWS 32
/* Fewest pixels a band: below this a band's work is shorter than waking
 * its worker and the serial seam steps (the third scale's windows, small
 * frames on many cores). */
#define BAND_MIN_PIXELS 65536
/* Slots of the adjacency pair cache (a power of two). A frame has a few
 * thousand distinct touching pairs among ~10^5 contacts. */
#define PAIR_CACHE_BITS 10
#define PAIR_CACHE (1 << PAIR_CACHE_BITS)

enum phase { PHASE_COUNT, PHASE_RUNS, PHASE_LABEL, PHASE_ADJ };

struct band {
	int y0, y1;           /* rows [y0, y1) */
	int32_t r0, r1;       /* runs [r0, r1) */
	int32_t n_roots;      /* union-find roots among the band's runs */
	int32_t n_demoted;    /* of those, joined to another band's region at a seam */
	int32_t g0;           /* the band's first region */
	int32_t *span_n;      /* per spanning region: entries in span_adj, -1 = over adj_cap */
	int32_t *span_adj;    /* per spanning region: adj_cap neighbours met in this band */
	uint64_t *pairs;      /* the band's pair cache (PAIR_CACHE keys) */
	char pad[64];         /* keeps bands' hot fields off each other's cache lines */
};

struct segment {
	struct segment_config cfg;
	int32_t cap_runs, cap_regions;
	struct run *runs;
	int32_t *parent;        /* union-find over run indices */
	int32_t *xend;          /* per run: x + len, for the merge walks */
	int32_t *row_first_run; /* max_height + 1 */
	struct region *regions;
	int32_t *adj;
	int64_t *sq;            /* max_width + 1: sq[i] = 0^2 + ... + (i - 1)^2 */
	uint64_t *pairs;        /* pair cache of the serial pass (PAIR_CACHE keys) */
	uint8_t *row_spans;     /* max_height: row y has a run of the span of one above it, of the other colour */
	struct region_tree tree;
	bool overflow_logged;
	int64_t n_overflows;

	/* Banded mode (n_threads > 1) only. */
	int n_threads, band_min_rows, n_bands;
	int64_t band_min_px;
	bool has_popcnt;
	struct band *bands;
	const struct bitmask *mask; /* the frame being segmented */
	int32_t slot_cap, n_slots;  /* seam-demoted roots */
	int32_t *slot_run;          /* the demoted root run */
	int32_t *slot_region;       /* the region it joined */
	struct region *slot_part;   /* its band's part of that region, when the region's root lies above */
	int32_t *span_of;           /* per region: index among the spanning regions, or -1 */
	int32_t *span_region;       /* per spanning region: its region */
	int32_t n_span;

	struct pool *pool;          /* n_threads - 1 workers: bands 1 .. n_bands - 1 */
	enum phase phase;           /* the phase being run */
};

struct segment *segment_create(const struct segment_config *cfg, int *err)
{
	return segment_create_threaded(cfg, 1, err);
}

struct segment *segment_create_threaded(const struct segment_config *cfg, int n_threads, int *err)
{
	struct segment *s = NULL;
	int e = ERR_RANGE;
	if (!cfg || cfg->max_width < 1 || cfg->max_height < 1 || cfg->max_width > IMAGE_MAX_SIDE ||
	    cfg->max_height > IMAGE_MAX_SIDE || cfg->adj_cap < 2 || cfg->adj_cap > 64 || cfg->max_runs < 0 ||
	    cfg->max_runs > REGIONS_MAX_CAPACITY || cfg->max_regions < 0 || cfg->max_regions > REGIONS_MAX_CAPACITY ||
	    n_threads < 0 ||
	    n_threads > SEGMENT_MAX_THREADS) {
		log_error("segment: bad config (size %dx%d, adj_cap %d, n_threads %d)", cfg ? cfg->max_width : 0,
			  cfg ? cfg->max_height : 0, cfg ? cfg->adj_cap : 0, n_threads);
		goto fail;
	}
	e = ERR_NOMEM;
	s = calloc(1, sizeof *s);
	if (!s)
		goto fail;
	s->cfg = *cfg;
	s->cap_runs = cfg->max_runs > 0 ? cfg->max_runs : regions_run_capacity(cfg->max_width, cfg->max_height);
	s->cap_regions = cfg->max_regions > 0 ? cfg->max_regions
					      : regions_region_capacity(cfg->max_width, cfg->max_height);
	s->runs = malloc((size_t)s->cap_runs * sizeof *s->runs);
	s->parent = malloc((size_t)s->cap_runs * sizeof *s->parent);
	s->xend = malloc((size_t)s->cap_runs * sizeof *s->xend);
	s->row_first_run = malloc(((size_t)cfg->max_height + 1) * sizeof *s->row_first_run);
	s->regions = malloc((size_t)s->cap_regions * sizeof *s->regions);
	s->adj = malloc((size_t)s->cap_regions * (size_t)cfg->adj_cap * sizeof *s->adj);
	s->sq = malloc(((size_t)cfg->max_width + 1) * sizeof *s->sq);
	s->pairs = malloc(PAIR_CACHE * sizeof *s->pairs);
	s->row_spans = malloc((size_t)cfg->max_height);
	if (!s->runs || !s->parent || !s->xend || !s->row_first_run || !s->regions || !s->adj || !s->sq || !s->pairs ||
	    !s->row_spans)
		goto fail;
	for (int64_t i = 0; i <= cfg->max_width; i++)
		s->sq[i] = (i - 1) * i * (2 * i - 1) / 6;

	s->n_threads = n_threads > 1 ? n_threads : 1;
#if defined(__x86_64__) && !defined(__POPCNT__)
	s->has_popcnt = __builtin_cpu_supports("popcnt");
#endif
	s->band_min_rows = BAND_MIN_ROWS;
	s->band_min_px = BAND_MIN_PIXELS;
	if (s->n_threads == 1)
		goto done;
	/* Seams of a camera frame are crossed by a few dozen regions; a frame
	 * needing more slots than this is segmented by the calling thread. */
	s->slot_cap = cfg->max_width + 256;
	s->slot_run = malloc((size_t)s->slot_cap * sizeof *s->slot_run);
	s->slot_region = malloc((size_t)s->slot_cap * sizeof *s->slot_region);
	s->slot_part = malloc((size_t)s->slot_cap * sizeof *s->slot_part);
	s->span_region = malloc((size_t)s->slot_cap * sizeof *s->span_region);
	s->span_of = malloc((size_t)s->cap_regions * sizeof *s->span_of);
	s->bands = calloc((size_t)s->n_threads, sizeof *s->bands);
	if (!s->slot_run || !s->slot_region || !s->slot_part || !s->span_region || !s->span_of || !s->bands)
		goto fail;
	for (int b = 0; b < s->n_threads; b++) {
		s->bands[b].span_n = malloc((size_t)s->slot_cap * sizeof(int32_t));
		s->bands[b].span_adj = malloc((size_t)s->slot_cap * (size_t)cfg->adj_cap * sizeof(int32_t));
		s->bands[b].pairs = malloc(PAIR_CACHE * sizeof(uint64_t));
		if (!s->bands[b].span_n || !s->bands[b].span_adj || !s->bands[b].pairs)
			goto fail;
	}
	s->pool = pool_create(s->n_threads - 1, &e);
	if (!s->pool) {
		log_error("segment: cannot start %d worker threads", s->n_threads - 1);
		goto fail;
	}
done:
	if (err)
		*err = 0;
	return s;
fail:
	segment_destroy(s);
	if (err)
		*err = e;
	return NULL;
}

void segment_destroy(struct segment *s)
{
	if (!s)
		return;
	pool_destroy(s->pool);
	if (s->bands)
		for (int b = 0; b < s->n_threads; b++) {
			free(s->bands[b].span_n);
			free(s->bands[b].span_adj);
			free(s->bands[b].pairs);
		}
	free(s->bands);
	free(s->slot_run);
	free(s->slot_region);
	free(s->slot_part);
	free(s->span_region);
	free(s->span_of);
	free(s->runs);
	free(s->parent);
	free(s->xend);
	free(s->row_first_run);
	free(s->regions);
	free(s->adj);
	free(s->sq);
	free(s->pairs);
	free(s->row_spans);
	free(s);
}

int segment_set_band_min_rows(struct segment *s, int rows)
{
	if (!s || rows < 0)
		return ERR_RANGE;
	s->band_min_rows = rows > 0 ? rows : BAND_MIN_ROWS;
	s->band_min_px = rows > 0 ? 0 : BAND_MIN_PIXELS;
	return 0;
}

/* ---- shared by both modes ------------------------------------------------ */

static inline int popcount64(uint64_t x)
{
#ifdef __POPCNT__
	return __builtin_popcountll(x);
#else
	/* Without the instruction, the builtin is a libgcc call at twice this. */
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (int)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* Colour changes of a row a word at a time: bit x set when pixel x differs
 * from pixel x - 1 (never bit 0 of the row, nor bits past width). */
static inline uint64_t row_changes(const uint64_t *row, int i, int n_words, int width, uint64_t *carry)
{
	const uint64_t w = row[i];
	uint64_t d = w ^ ((w << 1) | *carry);
	*carry = w >> 63;
	if (i == n_words - 1 && (width & 63))
		d &= ~(uint64_t)0 >> (64 - (width & 63));
	return d;
}

static int32_t row_count_runs(const uint64_t *row, int width)
{
	const int n_words = (width + 63) >> 6;
	int32_t n = 1;
	uint64_t carry = row[0] & 1u;
	for (int i = 0; i < n_words; i++)
		n += popcount64(row_changes(row, i, n_words, width, &carry));
	return n;
}

#if defined(__x86_64__) && !defined(__POPCNT__)
/* The same with the popcnt instruction, for CPUs that have it (all x86-64
 * of the last fifteen years; the build targets the baseline): a word costs
 * a handful of instructions instead of a dozen. */
__attribute__((target("popcnt"))) static int32_t row_count_runs_popcnt(const uint64_t *row, int width)
{
	const int n_words = (width + 63) >> 6;
	int32_t n = 1;
	uint64_t carry = row[0] & 1u;
	for (int i = 0; i < n_words; i++)
		n += __builtin_popcountll(row_changes(row, i, n_words, width, &carry));
	return n;
}
#endif

/* Appends the runs of one row at runs[n], each its own union-find root;
 * returns the new run count. The caller has made room for the row. */
static int32_t row_cut(const uint64_t *row, int width, struct run *runs, int32_t *xe, int32_t *p, int32_t n)
{
	const int n_words = (width + 63) >> 6;
	uint64_t carry = row[0] & 1u;
	uint8_t colour = carry ? 255 : 0;
	int32_t x = 0;
	for (int i = 0; i < n_words; i++) {
		uint64_t d = row_changes(row, i, n_words, width, &carry);
		while (d) {
			const int32_t e = (i << 6) + __builtin_ctzll(d);
			d &= d - 1;
			runs[n] = (struct run){.x = x, .len = e - x, .region = 0, .colour = colour};
			xe[n] = e;
			p[n] = n;
			n++;
			x = e;
			colour ^= 255;
		}
	}
	runs[n] = (struct run){.x = x, .len = width - x, .region = 0, .colour = colour};
	xe[n] = width;
	p[n] = n;
	return n + 1;
}

/* The root of x's set, the path halved on the way. Nearly every run is a
 * root or points at one (a run joined to the run above is pointed at that
 * run's root): two loads and a test, no store. */
static inline int32_t uf_find(int32_t *p, int32_t x)
{
	int32_t r = p[x];
	while (p[r] != r) {
		p[x] = p[r];
		x = p[r];
		r = p[x];
	}
	return r;
}

/* One step of a merge walk along two rows' runs (ends xe): the run that
 * ends first is left behind, both where they end together; same (the two
 * current runs share a colour) flips where one alone moves on. */
static inline void walk_step(const int32_t *xe, int32_t *a, int32_t *b, bool *same)
{
	const int32_t ea = xe[*a], eb = xe[*b];
	if (ea < eb) {
		++*a;
		*same = !*same;
	} else if (eb < ea) {
		++*b;
		*same = !*same;
	} else {
		++*a;
		++*b;
	}
}

/* Joins same-coloured runs of two consecutive rows that overlap in x: row
 * y - 1 is runs [a, a_end), row y starts at b (a_end). Both rows cover
 * [0, width) with alternating colours, so a merge walk visits exactly the
 * overlapping pairs, the colours agree or not by the parity of the steps
 * taken alone, and both rows end on the same step. A run of row y is its
 * own root until joined; the root of each current run is kept while it
 * stays current, as only the walk's own joins can move it. Roots stay the
 * smallest index of their set. Returns whether the walk met two runs of
 * different colours over the same columns (both start where the last
 * step moved both walks on: new_contact()). */
static bool rows_union(const struct run *runs, const int32_t *xe, int32_t *p, int32_t a, int32_t a_end, int32_t b)
{
	bool same = runs[a].colour == runs[b].colour, both = true, spans = false;
	int32_t ra = -1, rb = b; /* ra < 0: not looked up yet */
	while (a < a_end) {
		if (same) {
			if (ra < 0)
				ra = uf_find(p, a);
			if (ra < rb) {
				p[rb] = ra;
				rb = ra;
			} else if (rb < ra) {
				p[ra] = rb;
				ra = rb;
			}
		}
		/* A branch a case: about 20 instructions a step, where the
		 * same walk in flag arithmetic (advance flags, masks, selects)
		 * took 35 and compiled to a branch on ea <= eb all the same. */
		const int32_t ea = xe[a], eb = xe[b];
		if (ea < eb) {
			a++;
			ra = -1;
			same = !same;
			both = false;
		} else if (eb < ea) {
			b++;
			rb = b;
			same = !same;
			both = false;
		} else {
			spans |= !same & both;
			both = true;
			a++;
			b++;
			ra = -1;
			rb = b;
		}
	}
	return spans;
}

static inline void region_open(struct region *r, uint8_t colour, int32_t x0, int32_t x1, int y)
{
	r->colour = colour;
	r->flags = 0;
	r->n_adj = 0;
	r->x0 = x0;
	r->x1 = x1;
	r->y0 = y;
	r->y1 = y;
	r->area = 0;
	r->sum_x = r->sum_y = r->sum_xx = r->sum_yy = r->sum_xy = 0;
}

/* Adds a run of row y (rows come in increasing order) to r's statistics;
 * sq is the table of sums of squares. */
static inline void region_add_run(struct region *r, const int64_t *sq, int32_t x0, int32_t len, int y)
{
	const int32_t x1 = x0 + len - 1;
	const int64_t yy = y;
	r->x0 = x0 < r->x0 ? x0 : r->x0;
	r->x1 = x1 > r->x1 ? x1 : r->x1;
	r->y1 = y;
	const int64_t sx = ((int64_t)len * (x0 + x1)) >> 1, sy = len * yy;
	r->area += len;
	r->sum_x += sx;
	r->sum_y += sy;
	r->sum_xx += sq[x1 + 1] - sq[x0];
	r->sum_yy += sy * yy;
	r->sum_xy += sx * yy;
}

static void saturate(struct region *regs, int32_t *adj, int cap, int32_t a)
{
	struct region *r = &regs[a];
	const int32_t *l = adj + (int64_t)a * cap;
	for (int i = 0; i < r->n_adj; i++)
		regs[l[i]].flags |= REGION_FRAGMENTED;
	r->n_adj = 0;
	r->flags |= REGION_SATURATED;
}

/* Records b in a's list; a region with no free slot left saturates. */
static inline void adj_add_one(struct region *regs, int32_t *adj, int cap, int32_t a, int32_t b)
{
	struct region *r = &regs[a];
	if (r->flags & REGION_SATURATED) {
		regs[b].flags |= REGION_FRAGMENTED;
		return;
	}
	int32_t *l = adj + (int64_t)a * cap;
	for (int i = 0; i < r->n_adj; i++)
		if (l[i] == b)
			return;
	if (r->n_adj == cap) {
		saturate(regs, adj, cap, a);
		regs[b].flags |= REGION_FRAGMENTED;
		return;
	}
	l[r->n_adj++] = b;
}

/* Tells whether the pair of different regions a, b was recorded before,
 * and notes it. Recording a pair again changes nothing (it is listed, or
 * the flags it would set are set), and runs along a shared edge repeat the
 * same few pairs: a small direct-mapped cache of pairs skips nearly all
 * repeats for a few instructions, where the list search costs tens. A
 * pair evicted from the cache is searched for in the lists again. */
static inline bool pair_seen(uint64_t *cache, int32_t a, int32_t b)
{
	const uint32_t lo = (uint32_t)(a < b ? a : b), hi = (uint32_t)(a < b ? b : a);
	const uint64_t key = (uint64_t)lo << 32 | hi; /* never 0: hi > lo >= 0 */
	uint64_t *slot = &cache[((lo * 0x9e3779b1u) ^ (hi * 0x85ebca6bu)) >> (32 - PAIR_CACHE_BITS)];
	if (*slot == key)
		return true;
	*slot = key;
	return false;
}

static inline void adj_add(struct segment *s, int32_t a, int32_t b)
{
	if (pair_seen(s->pairs, a, b))
		return;
	adj_add_one(s->regions, s->adj, s->cfg.adj_cap, a, b);
	adj_add_one(s->regions, s->adj, s->cfg.adj_cap, b, a);
}

/* Whether the overlap of runs a (row y - 1) and b (row y), of different
 * colours and ending at ea and eb, can be a pair's first contact: only
 * where the two span the same columns. A run that overlaps two runs of
 * the other row overlaps one of its own colour there, joined with it into
 * one region, so the pair is that row's left/right contact of those two
 * neighbours, met before (row y's left/right contacts come before its
 * contacts with the row above, and row y - 1's before row y's). Skipping
 * the repeat changes no list and no flag; it saves most of the pair
 * lookups of the walk. */
static inline bool new_contact(const struct run *runs, int32_t a, int32_t b, int32_t ea, int32_t eb)
{
	return ea == eb && runs[a].x == runs[b].x;
}

/* ---- single-threaded segmenter ------------------------------------------- */

/* Gives every run its region, accumulates region statistics and builds the
 * adjacency lists, row by row: a run's parent lies before it, so its region
 * is known when the run is reached; the contacts of row y (left/right, then
 * with row y - 1) need only the regions of rows y - 1 and y. Returns the
 * row at which the region capacity ran out, or -1. */
static int label_link(struct segment *s, int height)
{
	struct run *runs = s->runs;
	const int32_t *p = s->parent, *rf = s->row_first_run, *xe = s->xend;
	struct region *regs = s->regions;
	const int64_t *sq = s->sq;
	int32_t n_regions = 0;
	memset(s->pairs, 0, PAIR_CACHE * sizeof *s->pairs);
	for (int y = 0; y < height; y++) {
		const int32_t k0 = rf[y], k1 = rf[y + 1];
		if (k0 == k1)
			break; /* a frame cut short: no runs from here on */
		int32_t left = -1; /* the region of the run before, the row's left/right contacts in order */
		for (int32_t k = k0; k < k1; k++) {
			struct run *rn = &runs[k];
			const int32_t r = p[k];
			int32_t id;
			if (r == k) {
				if (n_regions >= s->cap_regions)
					return y;
				id = n_regions++;
				/* The run added in each branch: added once after
				 * them, the two paths joined, and the compiler loaded
				 * every field of the region on both (a quarter more
				 * instructions a run). */
				region_open(&regs[id], rn->colour, rn->x, rn->x + rn->len - 1, y);
				region_add_run(&regs[id], sq, rn->x, rn->len, y);
			} else {
				id = runs[r].region;
				region_add_run(&regs[id], sq, rn->x, rn->len, y);
			}
			rn->region = id;
			if (left >= 0)
				adj_add(s, left, id);
			left = id;
		}
		if (y == 0 || y == height - 1) {
			for (int32_t k = k0; k < k1; k++)
				regs[runs[k].region].flags |= REGION_BORDER;
		} else {
			regs[runs[k0].region].flags |= REGION_BORDER;
			regs[runs[k1 - 1].region].flags |= REGION_BORDER;
		}
		if (y == 0 || !s->row_spans[y])
			continue;
		/* Both rows cover [0, width): a merge walk of their ends visits
		 * every overlapping pair; only pairs of one span can be new, and
		 * the row unions noted the rows that have any. */
		int32_t a = rf[y - 1], a_end = k0, b = k0;
		while (a < a_end) {
			const int32_t ea = xe[a], eb = xe[b];
			if (new_contact(runs, a, b, ea, eb) && runs[a].colour != runs[b].colour)
				adj_add(s, runs[a].region, runs[b].region);
			a += ea <= eb;
			b += eb <= ea;
		}
	}
	s->tree.n_regions = n_regions;
	return -1;
}

static void segment_serial(struct segment *s, const struct bitmask *mask)
{
	struct region_tree *t = &s->tree;
	const int width = mask->width, height = mask->height;
	int32_t n = 0;
	int y = 0;
	for (; y < height; y++) {
		const uint64_t *row = bitmask_row(mask, y);
		s->row_first_run[y] = n;
		/* A row has at most width runs; near the capacity, count first. */
		if (s->cap_runs - n < width && s->cap_runs - n < row_count_runs(row, width))
			break;
		const int32_t m = row_cut(row, width, s->runs, s->xend, s->parent, n);
		s->row_spans[y] = y > 0 && rows_union(s->runs, s->xend, s->parent, s->row_first_run[y - 1], n, n);
		n = m;
	}
	if (y < height) {
		t->overflow = true;
		for (; y <= height; y++)
			s->row_first_run[y] = n;
	}
	s->row_first_run[height] = n;

	int cut = label_link(s, height);
	if (cut >= 0) {
		/* Out of region slots: keep only the rows before `cut`, whose
		 * regions' roots all lie before it, and label again. */
		t->overflow = true;
		for (int yy = cut; yy <= height; yy++)
			s->row_first_run[yy] = s->row_first_run[cut];
		label_link(s, height);
	}
	t->n_runs = s->row_first_run[height];
}

/* ---- banded segmenter ----------------------------------------------------
 *
 * Phases, each run by every band in parallel and followed by a short serial
 * step on the calling thread:
 *   COUNT  runs per row (popcount of colour changes) -> band run offsets
 *   RUNS   runs cut in place, union-find within the band, every run's
 *          parent made its band-local root          -> seams joined
 *   LABEL  region numbers and statistics             -> seam parts merged
 *   ADJ    adjacency lists                           -> spanning lists merged
 * Regions are numbered by their first run in raster order, and every list
 * gets its neighbours in raster order of first contact, as in the serial
 * segmenter, so the tree is the same array for array. A region lying in one
 * band (owned) is written by that band only. A region crossing a seam
 * (spanning) gets its statistics from the band of its first run plus a
 * partial per other band, and its list from per-band lists merged in band
 * order. Seam contacts are handled by the lower band, except those listed
 * for a region owned by the upper band, which that band adds last. Flags
 * may be set on another band's region (FRAGMENTED), so the ADJ phase
 * touches flags with atomic operations only.
 */

int64_t segment_count_runs(const struct segment *s, const struct bitmask *mask)
{
	int64_t n = 0;
#if defined(__x86_64__) && !defined(__POPCNT__)
	if (s->has_popcnt) {
		for (int y = 0; y < mask->height; y++)
			n += row_count_runs_popcnt(bitmask_row(mask, y), mask->width);
		return n;
	}
#endif
	for (int y = 0; y < mask->height; y++)
		n += row_count_runs(bitmask_row(mask, y), mask->width);
	return n;
}

int32_t segment_run_capacity(const struct segment *s)
{
	return s->cap_runs;
}

static void band_count(struct segment *s, struct band *bd)
{
	const int width = s->mask->width;
	int32_t n = 0;
#if defined(__x86_64__) && !defined(__POPCNT__)
	if (s->has_popcnt) {
		for (int y = bd->y0; y < bd->y1; y++) {
			s->row_first_run[y] = n;
			n += row_count_runs_popcnt(bitmask_row(s->mask, y), width);
		}
		bd->r1 = n;
		return;
	}
#endif
	for (int y = bd->y0; y < bd->y1; y++) {
		s->row_first_run[y] = n;
		n += row_count_runs(bitmask_row(s->mask, y), width);
	}
	bd->r1 = n;
}

static void band_runs(struct segment *s, struct band *bd)
{
	const int width = s->mask->width;
	struct run *runs = s->runs;
	int32_t *p = s->parent;
	for (int y = bd->y0; y < bd->y1; y++) {
		const int32_t a = s->row_first_run[y];
		row_cut(bitmask_row(s->mask, y), width, runs, s->xend, p, a);
		if (y > bd->y0)
			s->row_spans[y] = rows_union(runs, s->xend, p, s->row_first_run[y - 1], a, a);
	}
	/* A parent never follows its child, so one pass in order leaves every
	 * run pointing straight at its band-local root. */
	int32_t n_roots = 0;
	for (int32_t k = bd->r0; k < bd->r1; k++) {
		p[k] = p[p[k]];
		n_roots += p[k] == k;
	}
	bd->n_roots = n_roots;
	bd->n_demoted = 0;
}

/* Joins regions across the seams. A band-local root joined under another
 * gets a slot: runs[root].region = -(slot + 1) marks it for LABEL. Returns
 * false when the slots run out. */
static bool seams_join(struct segment *s)
{
	struct run *runs = s->runs;
	int32_t *p = s->parent;
	s->n_slots = 0;
	for (int b = 0; b + 1 < s->n_bands; b++) {
		const struct band *up = &s->bands[b], *lo = &s->bands[b + 1];
		int32_t a = s->row_first_run[up->y1 - 1], a_end = up->r1, c = lo->r0;
		bool same = runs[a].colour == runs[c].colour;
		while (a < a_end) {
			if (same) {
				/* From the band-local roots, so that uf_find()
				 * rewrites no run's parent but a root's:
				 * band_label() reads every run's band-local root
				 * in p. */
				int32_t ra = uf_find(p, p[a]), rc = uf_find(p, p[c]);
				if (ra != rc) {
					int32_t keep = ra < rc ? ra : rc, gone = ra < rc ? rc : ra;
					if (s->n_slots == s->slot_cap)
						return false;
					p[gone] = keep;
					/* A root never follows its runs: gone lies in band b + 1 or before. */
					int bg = b + 1;
					while (s->bands[bg].r0 > gone)
						bg--;
					s->bands[bg].n_demoted++;
					struct region *part = &s->slot_part[s->n_slots];
					region_open(part, runs[gone].colour, INT32_MAX, -1, INT32_MAX);
					part->y1 = -1;
					s->slot_run[s->n_slots++] = gone;
					runs[gone].region = -s->n_slots;
				}
			}
			walk_step(s->xend, &a, &c, &same);
		}
	}
	for (int32_t i = 0; i < s->n_slots; i++)
		p[s->slot_run[i]] = uf_find(p, s->slot_run[i]);
	return true;
}

/* The region or seam part a labelled run of the band points at. */
static inline struct region *band_region(struct segment *s, int32_t region)
{
	return region >= 0 ? &s->regions[region] : &s->slot_part[-region - 1];
}

static void band_label(struct segment *s, struct band *bd)
{
	const int height = s->mask->height;
	struct run *runs = s->runs;
	const int32_t *p = s->parent;
	const int64_t *sq = s->sq;
	int32_t id = bd->g0;
	for (int y = bd->y0; y < bd->y1; y++) {
		const int32_t k0 = s->row_first_run[y], k1 = s->row_first_run[y + 1];
		for (int32_t k = k0; k < k1; k++) {
			struct run *rn = &runs[k];
			const int32_t r = p[k];
			/* The run added in each branch, as in label_link(): added
			 * once after them, the paths joined, and the compiler
			 * loaded every field of the region on each. */
			if (r == k) {
				rn->region = id;
				s->span_of[id] = -1;
				struct region *reg = &s->regions[id++];
				region_open(reg, rn->colour, rn->x, rn->x + rn->len - 1, y);
				region_add_run(reg, sq, rn->x, rn->len, y);
				continue;
			}
			/* The region's root g: r's parent, r itself where k is a
			 * band-local root joined at a seam (p[k] is the root
			 * then, and a root is its own parent). */
			const int32_t g = p[r];
			if (g >= bd->r0) {
				rn->region = runs[g].region;
				region_add_run(&s->regions[rn->region], sq, rn->x, rn->len, y);
			} else {
				/* The seam part of k's band-local root r, or of k
				 * itself, which seams_join() marked (a run's region
				 * is never negative otherwise). Looked at here only:
				 * most runs take the branch above. */
				if (rn->region >= 0)
					rn->region = runs[r].region;
				struct region *part = &s->slot_part[-rn->region - 1];
				if (part->y0 > y)
					part->y0 = y;
				region_add_run(part, sq, rn->x, rn->len, y);
			}
		}
		/* Only the first and last run of a row touch the left and right
		 * borders; read back after the row, as in label_link(), rather
		 * than tested on every run. */
		if (y == 0 || y == height - 1) {
			for (int32_t k = k0; k < k1; k++)
				band_region(s, runs[k].region)->flags |= REGION_BORDER;
		} else {
			band_region(s, runs[k0].region)->flags |= REGION_BORDER;
			band_region(s, runs[k1 - 1].region)->flags |= REGION_BORDER;
		}
	}
}

void segment_region_merge(struct region *r, const struct region *q)
{
	if (q->x0 < r->x0)
		r->x0 = q->x0;
	if (q->x1 > r->x1)
		r->x1 = q->x1;
	if (q->y0 < r->y0)
		r->y0 = q->y0;
	if (q->y1 > r->y1)
		r->y1 = q->y1;
	r->area += q->area;
	r->sum_x += q->sum_x;
	r->sum_y += q->sum_y;
	r->sum_xx += q->sum_xx;
	r->sum_yy += q->sum_yy;
	r->sum_xy += q->sum_xy;
	r->flags |= q->flags;
}

static inline void fix_runs(struct segment *s, int32_t k, int32_t k_end)
{
	for (; k < k_end; k++)
		if (s->runs[k].region < 0)
			s->runs[k].region = s->slot_region[-s->runs[k].region - 1];
}

/* Merges the seam parts into their regions, numbers the spanning regions
 * and gives the runs of seam rows their final region. */
static void seams_finish(struct segment *s)
{
	s->n_span = 0;
	for (int32_t i = 0; i < s->n_slots; i++) {
		const int32_t gid = s->runs[s->parent[s->slot_run[i]]].region;
		s->slot_region[i] = gid;
		if (s->slot_part[i].area)
			segment_region_merge(&s->regions[gid], &s->slot_part[i]);
		if (s->span_of[gid] < 0) {
			s->span_of[gid] = s->n_span;
			s->span_region[s->n_span++] = gid;
		}
	}
	for (int b = 0; b < s->n_bands; b++) {
		const struct band *bd = &s->bands[b];
		fix_runs(s, bd->r0, s->row_first_run[bd->y0 + 1]);
		if (bd->y1 - 1 > bd->y0)
			fix_runs(s, s->row_first_run[bd->y1 - 1], bd->r1);
	}
}

static inline void flag_set(struct region *r, uint8_t f)
{
	if (!(__atomic_load_n(&r->flags, __ATOMIC_RELAXED) & f))
		__atomic_fetch_or(&r->flags, f, __ATOMIC_RELAXED);
}

/* adj_add_one for a region the band owns. */
static inline __attribute__((always_inline)) void adj_add_owned(struct region *regs, int32_t *adj, int cap, int32_t a, int32_t b)
{
	struct region *r = &regs[a];
	if (__atomic_load_n(&r->flags, __ATOMIC_RELAXED) & REGION_SATURATED) {
		flag_set(&regs[b], REGION_FRAGMENTED);
		return;
	}
	int32_t *l = adj + (int64_t)a * cap;
	for (int i = 0; i < r->n_adj; i++)
		if (l[i] == b)
			return;
	if (r->n_adj == cap) {
		for (int i = 0; i < r->n_adj; i++)
			flag_set(&regs[l[i]], REGION_FRAGMENTED);
		r->n_adj = 0;
		flag_set(r, REGION_SATURATED);
		flag_set(&regs[b], REGION_FRAGMENTED);
		return;
	}
	l[r->n_adj++] = b;
}

/* Records b as a neighbour of a, met in band bd. */
static inline __attribute__((always_inline)) void adj_add_dir(struct segment *s, struct band *bd, int32_t a, int32_t b)
{
	const int cap = s->cfg.adj_cap;
	const int32_t j = s->span_of[a];
	if (j < 0) {
		adj_add_owned(s->regions, s->adj, cap, a, b);
		return;
	}
	int32_t n = bd->span_n[j];
	if (n < 0) {
		flag_set(&s->regions[b], REGION_FRAGMENTED);
		return;
	}
	int32_t *l = bd->span_adj + (int64_t)j * cap;
	for (int i = 0; i < n; i++)
		if (l[i] == b)
			return;
	if (n == cap) {
		for (int i = 0; i < n; i++)
			flag_set(&s->regions[l[i]], REGION_FRAGMENTED);
		flag_set(&s->regions[b], REGION_FRAGMENTED);
		bd->span_n[j] = -1;
		return;
	}
	l[n] = b;
	bd->span_n[j] = n + 1;
}

static inline __attribute__((always_inline)) void adj_add_band(struct segment *s, struct band *bd,
								int32_t a, int32_t b)
{
	if (pair_seen(bd->pairs, a, b))
		return;
	adj_add_dir(s, bd, a, b);
	adj_add_dir(s, bd, b, a);
}

static void band_adjacency(struct segment *s, struct band *bd)
{
	struct run *runs = s->runs;
	const int32_t *rf = s->row_first_run, *xe = s->xend;
	for (int32_t j = 0; j < s->n_span; j++)
		bd->span_n[j] = 0;
	memset(bd->pairs, 0, PAIR_CACHE * sizeof *bd->pairs);
	for (int y = bd->y0; y < bd->y1; y++) {
		const int32_t b = rf[y], b_end = rf[y + 1];
		/* The row's left/right contacts, its runs given their final
		 * region on the way (seam rows have theirs from seams_finish();
		 * no other band reads this band's inner rows): one pass over
		 * the row, and each region read once. */
		int32_t left = -1;
		for (int32_t k = b; k < b_end; k++) {
			int32_t id = runs[k].region;
			if (id < 0) {
				id = s->slot_region[-id - 1];
				runs[k].region = id;
			}
			if (left >= 0)
				adj_add_band(s, bd, left, id);
			left = id;
		}
		if (y == 0)
			continue;
		int32_t a = rf[y - 1], a_end = b;
		if (y > bd->y0) {
			/* As in label_link(): only pairs of one span can be new,
			 * and the row unions noted the rows that have any. */
			if (!s->row_spans[y])
				continue;
			for (int32_t c = b; a < a_end;) {
				const int32_t ea = xe[a], ec = xe[c];
				if (new_contact(runs, a, c, ea, ec) && runs[a].colour != runs[c].colour)
					adj_add_band(s, bd, runs[a].region, runs[c].region);
				a += ea <= ec;
				c += ec <= ea;
			}
			continue;
		}
		/* The upper seam: every contact, the upper band lists this
		 * contact for its own regions. */
		bool same = runs[a].colour == runs[b].colour;
		for (int32_t c = b; a < a_end;) {
			if (!same) {
				const int32_t ra = runs[a].region, rc = runs[c].region;
				adj_add_dir(s, bd, rc, ra);
				if (s->span_of[ra] >= 0)
					adj_add_dir(s, bd, ra, rc);
			}
			walk_step(xe, &a, &c, &same);
		}
	}
	if (bd->y1 == s->mask->height)
		return;
	/* Contacts across the lower seam, last in raster order for the owned
	 * regions of this band's last row. */
	int32_t a = rf[bd->y1 - 1], a_end = rf[bd->y1], b = rf[bd->y1];
	bool same = runs[a].colour == runs[b].colour;
	while (a < a_end) {
		if (!same && s->span_of[runs[a].region] < 0)
			adj_add_owned(s->regions, s->adj, s->cfg.adj_cap, runs[a].region, runs[b].region);
		walk_step(xe, &a, &b, &same);
	}
}

/* Merges the per-band lists of the spanning regions, in band order. */
static void spans_finish(struct segment *s)
{
	const int cap = s->cfg.adj_cap;
	for (int32_t j = 0; j < s->n_span; j++) {
		const int32_t g = s->span_region[j];
		for (int b = 0; b < s->n_bands; b++) {
			const struct band *bd = &s->bands[b];
			const int32_t n = bd->span_n[j];
			if (n < 0) {
				/* That band has marked every neighbour it met. */
				if (!(s->regions[g].flags & REGION_SATURATED))
					saturate(s->regions, s->adj, cap, g);
				continue;
			}
			const int32_t *l = bd->span_adj + (int64_t)j * cap;
			for (int i = 0; i < n; i++)
				adj_add_one(s->regions, s->adj, cap, g, l[i]);
		}
	}
}

static void band_phase(struct segment *s, enum phase ph, int b)
{
	struct band *bd = &s->bands[b];
	switch (ph) {
	case PHASE_COUNT:
		band_count(s, bd);
		break;
	case PHASE_RUNS:
		band_runs(s, bd);
		break;
	case PHASE_LABEL:
		band_label(s, bd);
		break;
	case PHASE_ADJ:
		band_adjacency(s, bd);
		break;
	}
}

static void band_task(void *arg, int b)
{
	struct segment *s = arg;
	band_phase(s, s->phase, b);
}

/* Runs one phase on all bands, band 0 on the calling thread, and waits. */
static void phase_run(struct segment *s, enum phase ph)
{
	s->phase = ph;
	pool_run(s->pool, band_task, s, s->n_bands);
}

/* Returns false when the frame needs the serial segmenter (overflow, or
 * more seam crossings than the slots hold); nothing is published then. */
static bool segment_banded(struct segment *s, const struct bitmask *mask)
{
	const int height = mask->height;
	int nb = s->n_bands;
	s->mask = mask;
	for (int b = 0; b < nb; b++) {
		s->bands[b].y0 = (int)((int64_t)height * b / nb);
		s->bands[b].y1 = (int)((int64_t)height * (b + 1) / nb);
	}

	phase_run(s, PHASE_COUNT);
	int64_t n_runs = 0;
	for (int b = 0; b < nb; b++) {
		const struct band *bd = &s->bands[b];
		n_runs += bd->r1;
		if (n_runs > s->cap_runs)
			return false;
	}
	int32_t *rf = s->row_first_run;
	int32_t off = 0;
	for (int b = 0; b < nb; b++) {
		const struct band *bd = &s->bands[b];
		for (int y = bd->y0; y < bd->y1; y++)
			rf[y] += off;
		off += bd->r1;
	}
	rf[height] = off;
	/* Bands of equal run counts from here on: the work is per run, and
	 * the symbols of a frame are seldom spread evenly over its rows. */
	int y = 0;
	for (int b = 0; b < nb; b++) {
		struct band *bd = &s->bands[b];
		bd->y0 = y;
		if (b == nb - 1) {
			y = height;
		} else {
			const int64_t goal = n_runs * (b + 1) / nb;
			const int y_min = y + s->band_min_rows, y_max = height - (nb - 1 - b) * s->band_min_rows;
			y = y_min;
			while (y < y_max && rf[y] < goal)
				y++;
		}
		bd->y1 = y;
		bd->r0 = rf[bd->y0];
		bd->r1 = rf[bd->y1];
	}

	phase_run(s, PHASE_RUNS);
	if (!seams_join(s))
		return false;
	int64_t n_regions = 0;
	for (int b = 0; b < nb; b++) {
		s->bands[b].g0 = (int32_t)n_regions;
		n_regions += s->bands[b].n_roots - s->bands[b].n_demoted;
	}
	if (n_regions > s->cap_regions)
		return false;

	phase_run(s, PHASE_LABEL);
	seams_finish(s);
	phase_run(s, PHASE_ADJ);
	spans_finish(s);
	s->tree.n_regions = (int32_t)n_regions;
	s->tree.n_runs = (int32_t)n_runs;
	return true;
}

int64_t segment_overflows(const struct segment *s)
{
	return s ? s->n_overflows : 0;
}

int segment_process(struct segment *s, const struct bitmask *mask, const struct region_tree **out)
{
	if (!s || !mask || !out)
		return ERR_RANGE;
	const int width = mask->width, height = mask->height;
	if (width < 1 || height < 1 || width > s->cfg.max_width || height > s->cfg.max_height ||
	    mask->stride_words < (width + 63) / 64) {
		log_error("segment: frame %dx%d exceeds the configured %dx%d", width, height, s->cfg.max_width,
			  s->cfg.max_height);
		return ERR_SIZE;
	}
	struct region_tree *t = &s->tree;
	t->width = width;
	t->height = height;
	t->overflow = false;
	t->adj_cap = s->cfg.adj_cap;
	t->regions = s->regions;
	t->adj = s->adj;
	t->runs = s->runs;
	t->row_first_run = s->row_first_run;

	s->n_bands = s->n_threads;
	if (height / s->band_min_rows < s->n_bands)
		s->n_bands = height / s->band_min_rows;
	if (s->band_min_px && (int64_t)width * height / s->band_min_px < s->n_bands)
		s->n_bands = (int)((int64_t)width * height / s->band_min_px);
	if (s->n_bands < 2 || !segment_banded(s, mask))
		segment_serial(s, mask);
	if (t->overflow) {
		s->n_overflows++;
		log_once(&s->overflow_logged, LOG_WARN, "segment: frame has more runs or regions than capacity; tree cut short "
			 "(max_runs %d, max_regions %d)", s->cap_runs, s->cap_regions);
	}
	*out = t;
	return 0;
}
