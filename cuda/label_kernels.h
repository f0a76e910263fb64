/*
 * label_kernels.h - the GPU segmenter's kernel bodies, shared by the CUDA
 * build (cuda/label.cu) and a CPU simulation (tests/test_label_sim.c).
 *
 * Every kernel is a function of (arguments, thread index) over global
 * memory only: no shared memory, no barriers, no warp intrinsics. Threads
 * of one kernel cooperate through atomic operations alone, and each kernel
 * gives the same result whatever order its threads run in (the simulation
 * runs them in ascending, descending and random orders). Under nvcc the
 * atomics are CUDA's; compiled as C they are plain memory operations, so
 * the test runs the very logic the GPU runs. The launch sequence, with two
 * exclusive prefix sums between kernels (CUB on the GPU, a loop in the
 * simulation), is in label.cu and mirrored by the simulation:
 *
 *   start   (table slots or rows + 1, the larger) two kernels in one launch:
 *     clear                empties the pair-table slots the last frame used
 *     count                runs per row; resets the frame header (the
 *                          pair count is reset by cut: clear reads it)
 *   scan    row counts     -> rf64 (first run of each row, 64-bit)
 *   cut     (rows x words) runs cut from the colour changes of each word;
 *                          rows whose runs pass max_runs are dropped (the
 *                          first such row is y_run)
 *   union   (runs)         run lengths; same-coloured runs overlapping in
 *                          the row above joined by a lock-free union-find
 *                          (compare-and-swap links the larger root under the
 *                          smaller, so a set's root is its smallest run),
 *                          inside strips of LK_STRIP rows only
 *   squash  (runs)         every run points at its strip's root
 *   join    (runs)         the first row of each strip joined with the row
 *                          above, as in union
 *   flatten (runs + 1)     every run points at its root; roots flagged
 *   scan    root flags     -> rid (region number of each root = roots
 *                          before it: regions numbered by first run)
 *   open    (runs)         regions opened by their roots; the root ranked
 *                          max_regions, if any, cuts the frame at its row
 *                          (y_cut), as the serial segmenter does
 *   stats   (runs)         run regions, statistics by atomics (bbox; area and
 *                          moments into LK_REPS replicas), REGION_BORDER, and every contact
 *                          (left/right in a row, different colours
 *                          overlapping the row above) into a hash table of
 *                          region pairs keeping the pair's first contact
 *                          key (row, phase, x) with a 64-bit atomicMin
 *   pairs   (pairs)        degrees; each region's first adj_cap
 *                          neighbours with their keys into its slots
 *   export  (runs)         the runs and the header into the host tree
 *   frag    (pairs)        REGION_FRAGMENTED on each neighbour of a region
 *                          of more than adj_cap neighbours
 *   finish  (regions x adj_cap, rows + 1) lists sorted by first contact
 *                          (each slot placed by its rank; the serial
 *                          pass's order: rows top to bottom, in a row the
 *                          left/right contacts left to right, then the
 *                          contacts with the row above left to right);
 *                          saturated regions; flags; row_first_run;
 *                          the regions and lists into the host tree
 *
 * The serial pass's saturation rule is a property of the neighbour sets:
 * a region with more than adj_cap distinct neighbours is SATURATED with an
 * empty list, every neighbour of such a region is FRAGMENTED, and any
 * other region lists all its neighbours in order of first contact. That is
 * what the pair table computes. The table holds at most 3 x max_regions
 * pairs (the region adjacency graph is a minor of the pixel grid, so
 * planar) and is sized twice that, a power of two.
 *
 * Union-find chains grow by a link a row when every run's union runs at
 * once (a run links under the run above before that one found its root),
 * and each find walks them: the strips bound a chain by LK_STRIP rows
 * inside a strip and by the number of strips across them, where one pass
 * over every row's runs would walk up to the frame's height.
 *
 * Thread domains are upper bounds known on the host; each kernel reads the
 * frame's real counts from the header and idles past them, so a frame
 * needs no host round trip before its download. lk_live_NAME(g) is that
 * count for each kernel (the end of the domain where every thread past it
 * returns at once; read from what earlier kernels wrote, and written by no
 * thread of the kernel itself): the GPU's grid-stride loops stop there,
 * so a launch of a few blocks a multiprocessor covers a sparse frame in
 * one pass and a dense one in a few, and the simulation runs only the
 * threads below it.
 */
#ifndef TT_CUDA_LABEL_KERNELS_H
#define TT_CUDA_LABEL_KERNELS_H

#include <stdint.h>

#include "../src/core/regions.h"

#ifdef __CUDACC__
#define LK_FN static __device__ __forceinline__
#else
#define LK_FN static inline
#endif

#define LK_EMPTY (~(uint64_t)0)
#define LK_STRIP 32 /* rows a strip of the union (about the square root of 1080) */
/* A large region's runs would all add into the same few addresses, and
 * atomics on one address wait for each other: run k adds its area and
 * moments into replica k mod LK_REPS of its region's sums, and finish adds
 * the replicas up. */
#define LK_REPS 8
#define LK_SUMS 6 /* area, x, y, xx, yy, xy */

struct lk_hdr {
	int32_t y_run;     /* first row dropped for want of run slots (height: none) */
	int32_t y_cut;     /* first row dropped for any reason (height: none) */
	int32_t n_runs, n_regions;
	int32_t n_pairs;   /* distinct touching region pairs (pair-table slots in use) */
	int32_t error;     /* pair table full: cannot happen for a planar graph; checked anyway */
};

struct lk_args {
	const uint64_t *mask;
	int stride_words, width, height, n_words;
	int32_t cap_runs, cap_regions, adj_cap;
	uint32_t table_mask;      /* pair-table slots - 1 (a power of two - 1) */
	struct lk_hdr *hdr;
	int64_t *row_count;       /* height + 1 */
	int64_t *rf64;            /* height + 1: exclusive prefix sum of row_count */
	int32_t *row_of;          /* cap_runs: a run's row */
	int32_t *xend;            /* cap_runs: x + len */
	int32_t *parent;          /* cap_runs: union-find */
	int32_t *above;           /* cap_runs: first run of the row above ending right of the run's x */
	int32_t *root_flag;       /* cap_runs + 1 */
	int32_t *rid;             /* cap_runs + 1: exclusive prefix sum of root_flag */
	struct run *runs;         /* cap_runs */
	struct region *regions;   /* cap_regions */
	int64_t *sums;            /* LK_REPS x cap_regions x LK_SUMS: area and moment sums, by replica */
	uint32_t *flags;          /* cap_regions */
	int32_t *deg;             /* cap_regions: distinct neighbours */
	uint64_t *slot_key;       /* cap_regions x adj_cap */
	int32_t *slot_nb;         /* cap_regions x adj_cap */
	uint64_t *table_pair;     /* table_mask + 1: lo << 32 | hi, LK_EMPTY when free */
	uint64_t *table_first;    /* table_mask + 1: first contact key, LK_EMPTY when free */
	int32_t *used;            /* table_mask + 1: slots in use, in no particular order */
	/* The tree itself, written where the host reads it (pinned host
	 * memory mapped into the GPU's address space): no copy behind the
	 * kernels, and exactly the frame's counts cross the bus. */
	struct lk_hdr *out_hdr;
	struct run *out_runs;      /* cap_runs */
	int32_t *out_rf;           /* height + 1: row_first_run */
	struct region *out_regions; /* cap_regions */
	int32_t *out_adj;          /* cap_regions x adj_cap: the first n_adj of each list */
};

/* ---- atomics: CUDA's on the GPU, plain operations in the simulation ---- */

#ifdef __CUDACC__
LK_FN int32_t lk_min_i32(int32_t *p, int32_t v) { return atomicMin((int *)p, (int)v); }
LK_FN int32_t lk_max_i32(int32_t *p, int32_t v) { return atomicMax((int *)p, (int)v); }
LK_FN int32_t lk_add_i32(int32_t *p, int32_t v) { return atomicAdd((int *)p, (int)v); }
LK_FN int32_t lk_cas_i32(int32_t *p, int32_t cmp, int32_t v) { return atomicCAS((int *)p, (int)cmp, (int)v); }
LK_FN void lk_add_i64(int64_t *p, int64_t v)
{
	atomicAdd((unsigned long long *)p, (unsigned long long)v);
}
LK_FN void lk_min_u64(uint64_t *p, uint64_t v) { atomicMin((unsigned long long *)p, (unsigned long long)v); }
LK_FN uint64_t lk_cas_u64(uint64_t *p, uint64_t cmp, uint64_t v)
{
	return (uint64_t)atomicCAS((unsigned long long *)p, (unsigned long long)cmp, (unsigned long long)v);
}
LK_FN void lk_or_u32(uint32_t *p, uint32_t v) { atomicOr((unsigned int *)p, (unsigned int)v); }
LK_FN int lk_popc(uint64_t x) { return __popcll((unsigned long long)x); }
LK_FN int lk_ctz(uint64_t x) { return __ffsll((long long)x) - 1; }
#else
LK_FN int32_t lk_min_i32(int32_t *p, int32_t v)
{
	int32_t o = *p;
	if (v < o)
		*p = v;
	return o;
}
LK_FN int32_t lk_max_i32(int32_t *p, int32_t v)
{
	int32_t o = *p;
	if (v > o)
		*p = v;
	return o;
}
LK_FN int32_t lk_add_i32(int32_t *p, int32_t v)
{
	int32_t o = *p;
	*p = o + v;
	return o;
}
LK_FN int32_t lk_cas_i32(int32_t *p, int32_t cmp, int32_t v)
{
	int32_t o = *p;
	if (o == cmp)
		*p = v;
	return o;
}
LK_FN void lk_add_i64(int64_t *p, int64_t v) { *p = (int64_t)((uint64_t)*p + (uint64_t)v); }
LK_FN void lk_min_u64(uint64_t *p, uint64_t v)
{
	if (v < *p)
		*p = v;
}
LK_FN uint64_t lk_cas_u64(uint64_t *p, uint64_t cmp, uint64_t v)
{
	uint64_t o = *p;
	if (o == cmp)
		*p = v;
	return o;
}
LK_FN void lk_or_u32(uint32_t *p, uint32_t v) { *p |= v; }
LK_FN int lk_popc(uint64_t x) { return __builtin_popcountll(x); }
LK_FN int lk_ctz(uint64_t x) { return __builtin_ctzll(x); }
#endif

/* Pair-table slots for a frame of at most cap_regions regions: a power of
 * two of at least twice the 3 x cap_regions + 1 pairs a planar graph of
 * that many vertices can have. */
static inline uint32_t lk_table_slots(int32_t cap_regions)
{
	const int64_t need = 6 * (int64_t)cap_regions + 2;
	int64_t n = 64;
	while (n < need && n < ((int64_t)1 << 31))
		n <<= 1;
	return (uint32_t)n;
}

/* One run to the host tree: on the GPU one 16-byte store, so that a
 * warp's stores fill whole lines of the bus (the struct's own copy is a
 * store a field). */
typedef char lk_run_is_16_bytes[sizeof(struct run) == 16 ? 1 : -1];
#ifdef __CUDACC__
LK_FN void lk_copy_run(struct run *dst, const struct run *src)
{
	*(uint4 *)dst = *(const uint4 *)src;
}
#else
LK_FN void lk_copy_run(struct run *dst, const struct run *src) { *dst = *src; }
#endif

/* A value other threads may change during the kernel, read afresh. */
LK_FN int32_t lk_load_i32(const int32_t *p) { return *(const volatile int32_t *)p; }
LK_FN uint64_t lk_load_u64(const uint64_t *p) { return *(const volatile uint64_t *)p; }

/* ---- helpers -------------------------------------------------------------- */

/* Colour changes of word i of a row, as the CPU segmenter's row_changes():
 * bit x set when pixel x differs from pixel x - 1; never bit 0 of the row,
 * nor bits past width. */
LK_FN uint64_t lk_changes(const uint64_t *row, int i, int n_words, int width)
{
	const uint64_t w = row[i];
	const uint64_t carry = i ? row[i - 1] >> 63 : (row[0] & 1u);
	uint64_t d = w ^ ((w << 1) | carry);
	if (i == n_words - 1 && (width & 63))
		d &= ~(uint64_t)0 >> (64 - (width & 63));
	return d;
}

LK_FN int32_t lk_find(const int32_t *p, int32_t x)
{
	int32_t q = lk_load_i32(&p[x]);
	while (q != x) {
		x = q;
		q = lk_load_i32(&p[x]);
	}
	return x;
}

/* lk_find halving the path on the way (each parent on it pointed at its
 * grandparent), while unions run: lk_unite() changes a parent only where
 * it is a root, once, by compare-and-swap, and this writes only parents
 * of non-roots, each to an ancestor (a parent is always a smaller index
 * than its run), so no write here undoes a union and two racing writes
 * leave an ancestor either way (as ECL-CC does). */
LK_FN int32_t lk_find_halve(int32_t *p, int32_t x)
{
	int32_t y;
	while ((y = lk_load_i32(&p[x])) != x) {
		const int32_t z = lk_load_i32(&p[y]);
		if (z != y)
			*(volatile int32_t *)&p[x] = z;
		x = z;
	}
	return x;
}

/* Joins the sets of a and b; the larger root goes under the smaller, by a
 * compare-and-swap that holds only while it is still a root; where
 * another join hooked it first, both roots are found again. The paths are
 * halved on the way: within a strip a chain grows by a link a row. */
LK_FN void lk_unite(int32_t *p, int32_t a, int32_t b)
{
	for (;;) {
		a = lk_find_halve(p, a);
		b = lk_find_halve(p, b);
		if (a == b)
			return;
		if (a > b) {
			const int32_t t = a;
			a = b;
			b = t;
		}
		if (lk_cas_i32(&p[b], b, a) == b)
			return;
	}
}

/* First run of [lo, hi) (one row) with xend > x, or hi. */
LK_FN int32_t lk_first_after(const int32_t *xend, int32_t lo, int32_t hi, int32_t x)
{
	while (lo < hi) {
		const int32_t mid = lo + (hi - lo) / 2;
		if (xend[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Records a contact of regions a != b with order key `key` in the pair
 * table: the pair's slot keeps the smallest key. */
LK_FN void lk_contact(const struct lk_args *g, int32_t a, int32_t b, uint64_t key)
{
	const uint32_t lo = (uint32_t)(a < b ? a : b), hi = (uint32_t)(a < b ? b : a);
	const uint64_t pk = (uint64_t)lo << 32 | hi;
	uint32_t h = ((lo * 0x9e3779b1u) ^ (hi * 0x85ebca6bu) ^ (hi >> 15)) & g->table_mask;
	for (uint32_t probe = 0; probe <= g->table_mask; probe++) {
		uint64_t cur = lk_load_u64(&g->table_pair[h]);
		if (cur == LK_EMPTY) {
			cur = lk_cas_u64(&g->table_pair[h], LK_EMPTY, pk);
			if (cur == LK_EMPTY) {
				g->used[lk_add_i32(&g->hdr->n_pairs, 1)] = (int32_t)h;
				lk_min_u64(&g->table_first[h], key);
				return;
			}
		}
		if (cur == pk) {
			/* most contacts of a pair come after its first: skip the atomic */
			if (key < lk_load_u64(&g->table_first[h]))
				lk_min_u64(&g->table_first[h], key);
			return;
		}
		h = (h + 1) & g->table_mask;
	}
	g->hdr->error = 1;
}

/* Order of a contact: rows top to bottom; in a row the left/right contacts
 * (phase 0) before the contacts with the row above (phase 1); within a
 * phase by x (the right run's x, or the start of the overlap). */
LK_FN uint64_t lk_key(int y, int phase, int32_t x)
{
	return (uint64_t)(uint32_t)y << 32 | (uint64_t)phase << 31 | (uint32_t)x;
}

/* ---- kernels ---------------------------------------------------------------- */

/* Domain: table_mask + 1. */
LK_FN void lk_k_clear(const struct lk_args *g, int64_t t)
{
	if (t >= g->hdr->n_pairs)
		return;
	const int32_t h = g->used[t];
	g->table_pair[h] = LK_EMPTY;
	g->table_first[h] = LK_EMPTY;
}

/* Domain: height + 1. */
LK_FN void lk_k_count(const struct lk_args *g, int64_t t)
{
	const int y = (int)t;
	if (y == 0) {
		g->hdr->y_run = g->height;
		g->hdr->error = 0;
	}
	if (y == g->height) {
		g->row_count[y] = 0;
		return;
	}
	const uint64_t *row = g->mask + (int64_t)y * g->stride_words;
	int64_t n = 1;
	for (int i = 0; i < g->n_words; i++)
		n += lk_popc(lk_changes(row, i, g->n_words, g->width));
	g->row_count[y] = n;
}

/* Domain: max(table_mask + 1, height + 1): clear and count in one launch
 * (they touch nothing in common). */
LK_FN void lk_k_start(const struct lk_args *g, int64_t t)
{
	lk_k_clear(g, t);
	if (t <= g->height)
		lk_k_count(g, t);
}

/* Domain: height x n_words. A row is kept when its runs end within
 * cap_runs; as run counts only grow, the kept rows are a prefix. */
LK_FN void lk_k_cut(const struct lk_args *g, int64_t t)
{
	const int y = (int)(t / g->n_words), i = (int)(t % g->n_words);
	if (t == 0)
		g->hdr->n_pairs = 0; /* not in count: start's clear reads it */
	if (g->rf64[y + 1] > g->cap_runs) {
		if (i == 0)
			lk_min_i32(&g->hdr->y_run, y);
		return;
	}
	const uint64_t *row = g->mask + (int64_t)y * g->stride_words;
	const int32_t r0 = (int32_t)g->rf64[y];
	int32_t k = r0 + 1;
	for (int j = 0; j < i; j++)
		k += lk_popc(lk_changes(row, j, g->n_words, g->width));
	if (i == 0) {
		struct run *rn = &g->runs[r0];
		rn->x = 0;
		rn->len = 0;
		rn->region = 0;
		rn->colour = (row[0] & 1u) ? 255 : 0;
		g->row_of[r0] = y;
		g->parent[r0] = r0;
	}
	uint64_t d = lk_changes(row, i, g->n_words, g->width);
	while (d) {
		const int32_t e = (i << 6) + lk_ctz(d);
		d &= d - 1;
		struct run *rn = &g->runs[k];
		rn->x = e;
		rn->len = 0;
		rn->region = 0;
		rn->colour = ((row[i] >> (e & 63)) & 1u) ? 255 : 0;
		g->row_of[k] = y;
		g->parent[k] = k;
		g->xend[k - 1] = e;
		k++;
	}
	if (i == g->n_words - 1)
		g->xend[g->rf64[y + 1] - 1] = g->width;
}

/* Domain: cap_runs. */
LK_FN void lk_k_union(const struct lk_args *g, int64_t t)
{
	const int32_t k = (int32_t)t;
	if (k >= g->rf64[g->hdr->y_run])
		return;
	const int y = g->row_of[k];
	const int32_t x = g->runs[k].x, xe = g->xend[k];
	g->runs[k].len = xe - x;
	if (y == 0)
		return;
	const int32_t a1 = (int32_t)g->rf64[y];
	int32_t a = lk_first_after(g->xend, (int32_t)g->rf64[y - 1], a1, x);
	g->above[k] = a;
	if (y % LK_STRIP == 0)
		return; /* the join kernel's */
	const uint8_t c = g->runs[k].colour;
	for (; a < a1 && g->runs[a].x < xe; a++)
		if (g->runs[a].colour == c)
			lk_unite(g->parent, a, k);
}

/* Domain: cap_runs. */
LK_FN void lk_k_squash(const struct lk_args *g, int64_t t)
{
	const int32_t k = (int32_t)t;
	if (k >= g->rf64[g->hdr->y_run])
		return;
	g->parent[k] = lk_find(g->parent, k);
}

/* Domain: cap_runs. */
LK_FN void lk_k_join(const struct lk_args *g, int64_t t)
{
	const int32_t k = (int32_t)t;
	if (k >= g->rf64[g->hdr->y_run])
		return;
	const int y = g->row_of[k];
	if (y == 0 || y % LK_STRIP != 0)
		return;
	const int32_t a1 = (int32_t)g->rf64[y], xe = g->xend[k];
	const uint8_t c = g->runs[k].colour;
	for (int32_t a = g->above[k]; a < a1 && g->runs[a].x < xe; a++)
		if (g->runs[a].colour == c)
			lk_unite(g->parent, a, k);
}

/* Domain: cap_runs + 1. */
LK_FN void lk_k_flatten(const struct lk_args *g, int64_t t)
{
	const int32_t k = (int32_t)t;
	if (k == 0)
		g->hdr->y_cut = g->hdr->y_run;
	if (k >= g->rf64[g->hdr->y_run]) {
		g->root_flag[k] = 0;
		return;
	}
	const int32_t r = lk_find(g->parent, k);
	g->parent[k] = r;
	g->root_flag[k] = r == k;
}

/* Domain: cap_runs. */
LK_FN void lk_k_open(const struct lk_args *g, int64_t t)
{
	const int32_t k = (int32_t)t;
	if (k >= g->rf64[g->hdr->y_run] || g->parent[k] != k)
		return;
	const int32_t id = g->rid[k];
	if (id == g->cap_regions)
		g->hdr->y_cut = g->row_of[k];
	if (id >= g->cap_regions)
		return;
	struct region *r = &g->regions[id];
	r->colour = g->runs[k].colour;
	r->flags = 0;
	r->n_adj = 0;
	r->x0 = INT32_MAX;
	r->x1 = -1;
	r->y0 = g->row_of[k];
	r->y1 = -1;
	for (int rep = 0; rep < LK_REPS; rep++) {
		int64_t *sm = g->sums + ((int64_t)rep * g->cap_regions + id) * LK_SUMS;
		for (int j = 0; j < LK_SUMS; j++)
			sm[j] = 0;
	}
	g->flags[id] = 0;
	g->deg[id] = 0;
}

/* Sum of squares 0^2 + ... + (n - 1)^2. */
LK_FN int64_t lk_sq(int64_t n) { return (n - 1) * n * (2 * n - 1) / 6; }

/* Domain: cap_runs. */
LK_FN void lk_k_stats(const struct lk_args *g, int64_t t)
{
	const int32_t k = (int32_t)t;
	const int32_t n = (int32_t)g->rf64[g->hdr->y_cut];
	if (k == 0) {
		g->hdr->n_runs = n;
		g->hdr->n_regions = g->rid[n];
	}
	if (k >= n)
		return;
	const int y = g->row_of[k];
	const int32_t id = g->rid[g->parent[k]];
	struct run *rn = &g->runs[k];
	rn->region = id;
	const int32_t x0 = rn->x, len = rn->len, x1 = x0 + len - 1;
	struct region *r = &g->regions[id];
	const int64_t yy = y, sx = ((int64_t)len * (x0 + x1)) >> 1, sy = len * yy;
	/* The box only grows: an atomic that would change nothing is skipped
	 * (most runs of a large region lie inside its box by the time they
	 * come, and every atomic on one address waits for the others). */
	if (x0 < lk_load_i32(&r->x0))
		lk_min_i32(&r->x0, x0);
	if (x1 > lk_load_i32(&r->x1))
		lk_max_i32(&r->x1, x1);
	if (y > lk_load_i32(&r->y1))
		lk_max_i32(&r->y1, y);
	int64_t *sm = g->sums + ((int64_t)(k & (LK_REPS - 1)) * g->cap_regions + id) * LK_SUMS;
	lk_add_i64(&sm[0], len);
	lk_add_i64(&sm[1], sx);
	lk_add_i64(&sm[2], sy);
	lk_add_i64(&sm[3], lk_sq(x1 + 1) - lk_sq(x0));
	lk_add_i64(&sm[4], sy * yy);
	lk_add_i64(&sm[5], sx * yy);
	const int32_t k0 = (int32_t)g->rf64[y], k1 = (int32_t)g->rf64[y + 1];
	if (y == 0 || y == g->height - 1 || k == k0 || k == k1 - 1)
		lk_or_u32(&g->flags[id], REGION_BORDER);
	if (k + 1 < k1)
		lk_contact(g, id, g->rid[g->parent[k + 1]], lk_key(y, 0, g->runs[k + 1].x));
	if (y == 0)
		return;
	const int32_t xe = x0 + len;
	for (int32_t a = g->above[k]; a < k0 && g->runs[a].x < xe; a++)
		if (g->runs[a].colour != rn->colour) {
			const int32_t xa = g->runs[a].x;
			lk_contact(g, g->rid[g->parent[a]], id, lk_key(y, 1, xa > x0 ? xa : x0));
		}
}

LK_FN void lk_slot(const struct lk_args *g, int32_t r, int32_t nb, uint64_t key)
{
	const int32_t s = lk_add_i32(&g->deg[r], 1);
	if (s < g->adj_cap) {
		g->slot_key[(int64_t)r * g->adj_cap + s] = key;
		g->slot_nb[(int64_t)r * g->adj_cap + s] = nb;
	}
}

/* Domain: table_mask + 1. */
LK_FN void lk_k_pairs(const struct lk_args *g, int64_t t)
{
	if (t >= g->hdr->n_pairs)
		return;
	const int32_t h = g->used[t];
	const uint64_t pk = g->table_pair[h], key = g->table_first[h];
	const int32_t lo = (int32_t)(pk >> 32), hi = (int32_t)(uint32_t)pk;
	lk_slot(g, lo, hi, key);
	lk_slot(g, hi, lo, key);
}

/* Domain: table_mask + 1. */
LK_FN void lk_k_frag(const struct lk_args *g, int64_t t)
{
	if (t >= g->hdr->n_pairs)
		return;
	const uint64_t pk = g->table_pair[g->used[t]];
	const int32_t lo = (int32_t)(pk >> 32), hi = (int32_t)(uint32_t)pk;
	if (g->deg[lo] > g->adj_cap)
		lk_or_u32(&g->flags[hi], REGION_FRAGMENTED);
	if (g->deg[hi] > g->adj_cap)
		lk_or_u32(&g->flags[lo], REGION_FRAGMENTED);
}

/* Domain: max(cap_regions x adj_cap, height + 1). Thread id x adj_cap + i
 * places region id's slot i in its list by rank: the slots whose first
 * contact comes before its own (the keys of one region are distinct: two
 * contacts of a region at one (row, phase, x) would need two of its runs
 * to start an overlap at the same x; slot order breaks ties all the same).
 * Thread id x adj_cap also sets the region's flags, list length and sums. */
LK_FN void lk_k_finish(const struct lk_args *g, int64_t t)
{
	if (t <= g->height) {
		const int y = (int)t < g->hdr->y_cut ? (int)t : g->hdr->y_cut;
		g->out_rf[t] = (int32_t)g->rf64[y];
	}
	const int cap = g->adj_cap;
	const int32_t id = (int32_t)(t / cap), i = (int32_t)(t - (int64_t)id * cap);
	if (id >= g->hdr->n_regions)
		return;
	const int32_t d = g->deg[id];
	if (i == 0) {
		struct region *r = &g->regions[id];
		uint32_t f = g->flags[id];
		if (d > cap)
			f |= REGION_SATURATED;
		r->n_adj = d > cap ? 0 : d;
		r->flags = (uint8_t)f;
		int64_t sum[LK_SUMS] = {0};
		for (int rep = 0; rep < LK_REPS; rep++) {
			const int64_t *sm = g->sums + ((int64_t)rep * g->cap_regions + id) * LK_SUMS;
			for (int j = 0; j < LK_SUMS; j++)
				sum[j] += sm[j];
		}
		r->area = (int32_t)sum[0];
		r->sum_x = sum[1];
		r->sum_y = sum[2];
		r->sum_xx = sum[3];
		r->sum_yy = sum[4];
		r->sum_xy = sum[5];
		g->out_regions[id] = *r;
	}
	if (d > cap || i >= d)
		return;
	const uint64_t *key = g->slot_key + (int64_t)id * cap;
	const uint64_t kk = key[i];
	int32_t rank = 0;
	for (int32_t j = 0; j < d; j++)
		rank += key[j] < kk || (key[j] == kk && j < i);
	g->out_adj[(int64_t)id * cap + rank] = g->slot_nb[(int64_t)id * cap + i];
}

/* Domain: cap_runs. The runs and the header to the host tree: final once
 * stats has run (its thread 0 wrote the counts, its contacts the pair
 * count and the error). */
LK_FN void lk_k_export(const struct lk_args *g, int64_t t)
{
	if (t == 0)
		*g->out_hdr = *g->hdr;
	if (t < g->hdr->n_runs)
		lk_copy_run(&g->out_runs[t], &g->runs[t]);
}

/* ---- the live end of each domain (see the header comment) ---- */

#define LK_ALL INT64_MAX
/* clear empties the last frame's pairs, count the rows. */
LK_FN int64_t lk_live_start(const struct lk_args *g)
{
	const int64_t n = g->hdr->n_pairs;
	return n > (int64_t)g->height + 1 ? n : (int64_t)g->height + 1;
}
LK_FN int64_t lk_live_cut(const struct lk_args *g) { (void)g; return LK_ALL; }
LK_FN int64_t lk_live_union(const struct lk_args *g) { return g->rf64[g->hdr->y_run]; }
LK_FN int64_t lk_live_squash(const struct lk_args *g) { return g->rf64[g->hdr->y_run]; }
LK_FN int64_t lk_live_join(const struct lk_args *g) { return g->rf64[g->hdr->y_run]; }
/* Every slot: the zero flags past the runs feed the scan. */
LK_FN int64_t lk_live_flatten(const struct lk_args *g) { (void)g; return LK_ALL; }
LK_FN int64_t lk_live_open(const struct lk_args *g) { return g->rf64[g->hdr->y_run]; }
/* Thread 0 writes the header's counts even for an empty frame. */
LK_FN int64_t lk_live_stats(const struct lk_args *g)
{
	const int64_t n = g->rf64[g->hdr->y_cut];
	return n > 1 ? n : 1;
}
LK_FN int64_t lk_live_export(const struct lk_args *g)
{
	const int64_t n = g->hdr->n_runs;
	return n > 1 ? n : 1;
}
LK_FN int64_t lk_live_pairs(const struct lk_args *g) { return g->hdr->n_pairs; }
LK_FN int64_t lk_live_frag(const struct lk_args *g) { return g->hdr->n_pairs; }
/* Thread t <= height writes row_first_run[t]. */
LK_FN int64_t lk_live_finish(const struct lk_args *g)
{
	const int64_t n = (int64_t)g->hdr->n_regions * g->adj_cap;
	return n > (int64_t)g->height + 1 ? n : (int64_t)g->height + 1;
}

#endif
