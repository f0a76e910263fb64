/*
 * tabletrack-fiducials - make, print, check and learn amoeba symbol sets.
 *
 *   generate [--small] [--nodes N] [--distance D] [--min-feature F] [-o SET.trees]
 *   render SET.trees -o sheet.svg|sheet.pdf|sheet.png [--size-mm S] [--dpi D] [--dir DIR]
 *   check SET.trees [--min-distance D]
 *   learn -o SET.trees SHEET.png...
 *
 * generate enumerates every depth-2 tree of the node count (children as a
 * multiset of hole counts, most holes first) that has enough dots and holes
 * for a precise angle and whose drawing (src/fiducial/render.h) has holes of
 * at least F of the card side, links trees fewer than
 * D leaf edits apart (tools/common/treefile.h), and keeps a large set of
 * pairwise distant trees by greedy maximum independent set, least-linked
 * first. learn thresholds each sheet at mid-grey, segments it
 * (src/segment), takes every region of height 2 (root, children,
 * grandchildren) as a symbol, writes match_canonical_string() of each in
 * reading order, and reports symbols whose node count is not the sheet's.
 *
 * See fiducials/README.md for the set design and how to print and learn.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../src/core/err.h"
#include "../src/core/image.h"
#include "../src/core/image_io.h"
#include "../src/core/log.h"
#include "../src/core/regions.h"
#include "../src/fiducial/match.h"
#include "../src/fiducial/render.h"
#include "../src/segment/segment.h"
#include "common/sheet.h"
#include "common/treefile.h"

#define MAX_CHILDREN 32
/* Smallest feature (hole diameter, card units) a tree of our sets may
 * have: chosen where the renderer's feature sizes leave a wide step, so
 * that rounding cannot move a tree across. */
#define LARGE_MIN_FEATURE 0.07744
#define SMALL_MIN_FEATURE 0.0924

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tabletrack-fiducials COMMAND ...\n"
		"  generate [--small] [--nodes N] [--distance D] [--min-feature F] [--min-dots K]\n"
		"           [--min-holes K] [--max-holes K] [--count K] [-o SET.trees]\n"
		"      our own set: depth-2 trees of N nodes, any two at least D leaf edits\n"
		"      apart, drawn with holes of at least F card sides; w variants then the\n"
		"      same trees as b (inverted print). Default (large): 24 nodes, D 4,\n"
		"      F 0.07744, >= 3 dots, >= 2 holes, <= 16 holes a blob; --small: 14\n"
		"      nodes, F 0.0924, 12 trees.\n"
		"  render SET.trees -o SHEET.svg|.pdf|.png [--size-mm S] [--cols C] [--dpi D]\n"
		"         [--dir DIR]\n"
		"      printable sheet (A4, ID labels, cut marks, S mm cards, default 50);\n"
		"      .png: raster pages at D dpi (default 100), no labels, for tests;\n"
		"      --dir writes one SVG a symbol as DIR/fid_NNN.svg too.\n"
		"  check SET.trees [--min-distance D]\n"
		"      canonical tokens, duplicates, ambiguous pairs (fewer than D leaf edits\n"
		"      apart, default 2), nodes, depth. Exit 1 on errors.\n"
		"  learn -o SET.trees SHEET.png...\n"
		"      segment printed sheets, write each symbol's canonical tree in reading\n"
		"      order; unreadable symbols are reported. Exit 1 when any is unreadable.\n");
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "tabletrack-fiducials: '%s' is not a number in [%d, %d]\n", s, lo, hi);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* ---- generate ------------------------------------------------------------ */

struct gen_params {
	int nodes, distance, min_dots, min_holes, max_holes, count;
	double min_feature; /* card units */
};

struct cand {
	int n;
	int holes[MAX_CHILDREN];
	float feature; /* the renderer's feature size, card units */
};

struct gen_state {
	const struct gen_params *p;
	struct cand *c;
	int n, cap;
	int holes[MAX_CHILDREN];
};

static void cand_string(const struct cand *c, char colour, char *buf, size_t cap)
{
	size_t len = 0;
	buf[len++] = colour;
	buf[len++] = '0';
	for (int i = 0; i < c->n && len + 2 < cap; i++) {
		buf[len++] = '1';
		for (int h = 0; h < c->holes[i] && len + 2 < cap; h++)
			buf[len++] = '2';
	}
	buf[len] = 0;
}

static int cand_accept(const struct gen_params *p, struct cand *c)
{
	int dots = 0, holes = 0, blobs = 0;
	for (int i = 0; i < c->n; i++) {
		if (c->holes[i] == 0)
			dots++;
		else
			blobs++;
		holes += c->holes[i];
	}
	if (dots < p->min_dots || holes < p->min_holes || blobs < 1)
		return 0;
	char s[TREEFILE_MAX_TOKEN];
	cand_string(c, 'w', s, sizeof s);
	struct render_layout l;
	if (render_layout_tree(s, &l))
		return 0;
	c->feature = l.cell;
	return (double)l.cell >= p->min_feature;
}

/* Children in non-increasing hole count: every multiset once, in
 * descending lexicographic (= descending canonical string) order. */
static int gen_enum(struct gen_state *g, int idx, int maxh, int left)
{
	if (left == 0) {
		struct cand c = {.n = idx};
		memcpy(c.holes, g->holes, sizeof c.holes);
		if (!cand_accept(g->p, &c))
			return 0;
		if (g->n == g->cap) {
			int nc = g->cap ? g->cap * 2 : 256;
			struct cand *t = realloc(g->c, (size_t)nc * sizeof *t);
			if (!t)
				return ERR_NOMEM;
			g->c = t;
			g->cap = nc;
		}
		g->c[g->n++] = c;
		return 0;
	}
	if (idx >= MAX_CHILDREN)
		return 0;
	int top = maxh < left - 1 ? maxh : left - 1;
	for (int h = top; h >= 0; h--) {
		g->holes[idx] = h;
		int rc = gen_enum(g, idx + 1, h, left - h - 1);
		if (rc)
			return rc;
	}
	return 0;
}

static int cand_dist(const struct cand *a, const struct cand *b)
{
	return treefile_holes_distance(a->holes, a->n, b->holes, b->n);
}

static int cmd_generate(int argc, char **argv)
{
	struct gen_params p = {24, 4, 3, 2, 16, 0, LARGE_MIN_FEATURE};
	const char *out = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int need = i + 1 < argc;
		if (!strcmp(a, "--small")) {
			p.nodes = 14;
			p.min_feature = SMALL_MIN_FEATURE;
			p.count = 12; /* 24 IDs, two A4 pages at 50 mm */
		} else if (!strcmp(a, "-o") && need) {
			out = argv[++i];
		} else if (!strcmp(a, "--nodes") && need) {
			if (parse_int(argv[++i], 4, RENDER_MAX_NODES, &p.nodes))
				return 2;
		} else if (!strcmp(a, "--distance") && need) {
			if (parse_int(argv[++i], 1, 64, &p.distance))
				return 2;
		} else if (!strcmp(a, "--min-feature") && need) {
			char *end;
			p.min_feature = strtod(argv[++i], &end);
			if (*end || end == argv[i] || !(p.min_feature >= 0.0 && p.min_feature < 0.5)) {
				fprintf(stderr, "tabletrack-fiducials: bad --min-feature '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(a, "--min-dots") && need) {
			if (parse_int(argv[++i], 0, 64, &p.min_dots))
				return 2;
		} else if (!strcmp(a, "--min-holes") && need) {
			if (parse_int(argv[++i], 0, 64, &p.min_holes))
				return 2;
		} else if (!strcmp(a, "--max-holes") && need) {
			if (parse_int(argv[++i], 1, 16, &p.max_holes))
				return 2;
		} else if (!strcmp(a, "--count") && need) {
			if (parse_int(argv[++i], 1, 32768, &p.count))
				return 2;
		} else {
			usage(stderr);
			return 2;
		}
	}

	struct gen_state g = {.p = &p};
	uint8_t *conflict = NULL, *alive = NULL;
	int *deg = NULL, *chosen = NULL, rc = 1;
	if (gen_enum(&g, 0, p.max_holes, p.nodes - 1)) {
		fprintf(stderr, "tabletrack-fiducials: out of memory\n");
		goto done;
	}
	if (g.n == 0) {
		fprintf(stderr, "tabletrack-fiducials: no tree of %d nodes meets the constraints\n",
			p.nodes);
		goto done;
	}
	int n = g.n;
	conflict = calloc((size_t)n * (size_t)n, 1);
	alive = malloc((size_t)n);
	deg = calloc((size_t)n, sizeof *deg);
	chosen = calloc((size_t)n, sizeof *chosen);
	if (!conflict || !alive || !deg || !chosen)
		goto done;
	for (int i = 0; i < n; i++) {
		alive[i] = 1;
		for (int j = i + 1; j < n; j++)
			if (cand_dist(&g.c[i], &g.c[j]) < p.distance) {
				conflict[(size_t)i * n + j] = conflict[(size_t)j * n + i] = 1;
				deg[i]++;
				deg[j]++;
			}
	}
	/* Greedy maximum independent set, least-conflicted tree first: far
	 * better than first-come order for packing codes; ties go to the
	 * earlier (larger) tree so the result is deterministic. */
	int n_chosen = 0;
	for (;;) {
		int best = -1;
		for (int i = 0; i < n; i++)
			if (alive[i] && (best < 0 || deg[i] < deg[best]))
				best = i;
		if (best < 0)
			break;
		chosen[best] = 1;
		n_chosen++;
		alive[best] = 0;
		for (int j = 0; j < n; j++) {
			if (!alive[j] || !conflict[(size_t)best * n + j])
				continue;
			alive[j] = 0;
			for (int k = 0; k < n; k++)
				if (alive[k] && conflict[(size_t)j * n + k])
					deg[k]--;
		}
	}
	int limit = p.count && p.count < n_chosen ? p.count : n_chosen;
	int min_d = 1 << 30;
	float min_f = 1.0f;
	int k = 0;
	for (int i = 0; i < n && k < limit; i++) {
		if (!chosen[i])
			continue;
		k++;
		if (g.c[i].feature < min_f)
			min_f = g.c[i].feature;
		int kk = 0;
		for (int j = 0; j < i && kk < limit; j++)
			if (chosen[j]) {
				kk++;
				int d = cand_dist(&g.c[i], &g.c[j]);
				if (d < min_d)
					min_d = d;
			}
	}
	FILE *f = out ? fopen(out, "w") : stdout;
	if (!f) {
		fprintf(stderr, "tabletrack-fiducials: %s: %s\n", out, strerror(errno));
		goto done;
	}
	for (int colour = 0; colour < 2; colour++) {
		k = 0;
		for (int i = 0; i < n && k < limit; i++) {
			if (!chosen[i])
				continue;
			char s[TREEFILE_MAX_TOKEN];
			cand_string(&g.c[i], colour ? 'b' : 'w', s, sizeof s);
			fprintf(f, "%s\n", s);
			k++;
		}
	}
	if (out && fclose(f)) {
		fprintf(stderr, "tabletrack-fiducials: %s: %s\n", out, strerror(errno));
		goto done;
	}
	fprintf(stderr,
		"tabletrack-fiducials: %d topologies (%d IDs: %d w + %d b) of %d nodes, depth 2, "
		"from %d candidates; minimum leaf distance %d (asked %d); smallest feature "
		"%.3f card\n",
		limit, 2 * limit, limit, limit, p.nodes, n, limit > 1 ? min_d : 0, p.distance,
		(double)min_f);
	rc = 0;
done:
	free(g.c);
	free(conflict);
	free(alive);
	free(deg);
	free(chosen);
	return rc;
}

/* ---- check ------------------------------------------------------------- */

static int cmd_check(int argc, char **argv)
{
	const char *path = NULL;
	int min_distance = 2;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--min-distance") && i + 1 < argc) {
			if (parse_int(argv[++i], 1, 64, &min_distance))
				return 2;
		} else if (argv[i][0] != '-' && !path) {
			path = argv[i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	struct treefile tf;
	if (treefile_read(path, &tf))
		return 1;
	int errors = 0, warnings = 0;
	char **canon = calloc((size_t)tf.n + 1, sizeof *canon);
	int *nodes = calloc((size_t)tf.n + 1, sizeof *nodes);
	int *depth = calloc((size_t)tf.n + 1, sizeof *depth);
	if (!canon || !nodes || !depth) {
		fprintf(stderr, "tabletrack-fiducials: out of memory\n");
		errors++;
		goto done;
	}
	if (tf.n == 0) {
		fprintf(stderr, "%s: no symbols\n", path);
		errors++;
	}
	for (int i = 0; i < tf.n; i++) {
		char buf[TREEFILE_MAX_TOKEN + 2];
		const char *t = tf.tokens[i];
		int rc = treefile_canonical(t, buf, sizeof buf);
		if (rc) {
			fprintf(stderr, "%s:%d: ID %d: '%s' is not a tree string (%s)\n", path,
				tf.lines[i], i, t, err_str(rc));
			errors++;
			continue;
		}
		const char *as_written = t;
		char with_colour[TREEFILE_MAX_TOKEN + 2];
		if (t[0] != 'w' && t[0] != 'b') {
			snprintf(with_colour, sizeof with_colour, "w%s", t);
			as_written = with_colour;
		}
		if (strcmp(as_written, buf)) {
			fprintf(stderr, "%s:%d: ID %d: '%s' is not canonical (canonical: %s)\n",
				path, tf.lines[i], i, t, buf);
			errors++;
		}
		canon[i] = strdup(buf);
		if (!canon[i]) {
			errors++;
			goto done;
		}
		treefile_info(buf, &nodes[i], &depth[i]);
	}
	int min_nodes = 1 << 30, max_nodes = 0, min_depth = 1 << 30, max_depth = 0, n_w = 0;
	int valid = 0;
	for (int i = 0; i < tf.n; i++) {
		if (!canon[i])
			continue;
		valid++;
		if (canon[i][0] == 'w')
			n_w++;
		min_nodes = nodes[i] < min_nodes ? nodes[i] : min_nodes;
		max_nodes = nodes[i] > max_nodes ? nodes[i] : max_nodes;
		min_depth = depth[i] < min_depth ? depth[i] : min_depth;
		max_depth = depth[i] > max_depth ? depth[i] : max_depth;
		for (int j = 0; j < i; j++)
			if (canon[j] && !strcmp(canon[i], canon[j])) {
				fprintf(stderr, "%s:%d: ID %d duplicates ID %d (%s)\n", path,
					tf.lines[i], i, j, canon[i]);
				errors++;
				break;
			}
	}
	int min_d = 1 << 30, n_min = 0, ambiguous = 0, compared = 0;
	for (int i = 0; i < tf.n; i++) {
		if (!canon[i] || depth[i] > 2)
			continue;
		for (int j = 0; j < i; j++) {
			if (!canon[j] || depth[j] > 2 || !strcmp(canon[i], canon[j]))
				continue;
			int d = treefile_distance(canon[i], canon[j]);
			if (d < 0)
				continue;
			compared++;
			if (d < min_d) {
				min_d = d;
				n_min = 0;
			}
			if (d == min_d)
				n_min++;
			if (d < min_distance) {
				if (ambiguous < 20)
					fprintf(stderr,
						"%s: IDs %d and %d are ambiguous: %s and %s are %d leaf "
						"edit%s apart (< %d)\n",
						path, j, i, canon[j], canon[i], d, d == 1 ? "" : "s",
						min_distance);
				ambiguous++;
			}
		}
	}
	if (ambiguous) {
		if (ambiguous > 20)
			fprintf(stderr, "%s: ... %d ambiguous pairs in all\n", path, ambiguous);
		errors += ambiguous;
	}
	if (valid && min_nodes != max_nodes) {
		fprintf(stderr,
			"%s: warning: node counts differ (%d..%d): the segmenter's cap and the "
			"matcher's fuzzy search work best with one count\n",
			path, min_nodes, max_nodes);
		warnings++;
	}
	if (valid && max_depth > 2) {
		fprintf(stderr, "%s: warning: trees deeper than 2: no distance check for them\n",
			path);
		warnings++;
	}
	printf("%s: %d symbols (%d w, %d b)", path, tf.n, n_w, valid - n_w);
	if (valid)
		printf(", nodes %d..%d, depth %d..%d", min_nodes, max_nodes, min_depth, max_depth);
	if (compared)
		printf(", minimum leaf distance %d (%d pair%s)", min_d, n_min, n_min == 1 ? "" : "s");
	int half = tf.n / 2, paired = valid == tf.n && tf.n % 2 == 0 && tf.n > 0;
	for (int i = 0; paired && i < half; i++)
		if (canon[i][0] != 'w' || canon[i + half][0] != 'b' ||
		    strcmp(canon[i] + 1, canon[i + half] + 1))
			paired = 0;
	if (paired)
		printf(", b variant of ID k is ID k+%d", half);
	printf("\n%s: %d error%s, %d warning%s\n", path, errors, errors == 1 ? "" : "s", warnings,
	       warnings == 1 ? "" : "s");
done:
	for (int i = 0; canon && i < tf.n; i++)
		free(canon[i]);
	free(canon);
	free(nodes);
	free(depth);
	treefile_free(&tf);
	return errors ? 1 : 0;
}

/* ---- render ------------------------------------------------------------ */

static int cmd_render(int argc, char **argv)
{
	const char *set = NULL, *out = NULL, *dir = NULL;
	struct sheet_params sp;
	sheet_params_default(&sp);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int need = i + 1 < argc;
		if (!strcmp(a, "-o") && need) {
			out = argv[++i];
		} else if (!strcmp(a, "--dir") && need) {
			dir = argv[++i];
		} else if (!strcmp(a, "--size-mm") && need) {
			int mm;
			if (parse_int(argv[++i], 10, 180, &mm))
				return 2;
			sp.card_mm = (float)mm;
		} else if (!strcmp(a, "--dpi") && need) {
			int dpi;
			if (parse_int(argv[++i], 20, 1200, &dpi))
				return 2;
			sp.dpi = (float)dpi;
		} else if (!strcmp(a, "--cols") && need) {
			if (parse_int(argv[++i], 0, 20, &sp.cols))
				return 2;
		} else if (a[0] != '-' && !set) {
			set = a;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!set || (!out && !dir)) {
		usage(stderr);
		return 2;
	}
	struct treefile tf;
	if (treefile_read(set, &tf))
		return 1;
	int rc = 0;
	for (int i = 0; i < tf.n && !rc; i++) {
		struct render_layout l;
		int e = render_layout_tree(tf.tokens[i], &l);
		if (e) {
			fprintf(stderr, "%s:%d: ID %d: cannot draw '%s' (%s)\n", set, tf.lines[i], i,
				tf.tokens[i], err_str(e));
			rc = 1;
		}
	}
	if (!rc && out && sheet_write(out, (const char *const *)tf.tokens, tf.n, &sp))
		rc = 1;
	if (!rc && dir) {
		mkdir(dir, 0777);
		for (int i = 0; i < tf.n && !rc; i++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/fid_%03d.svg", dir, i);
			if (sheet_write_symbol(path, tf.tokens[i], i, sp.card_mm))
				rc = 1;
		}
	}
	if (!rc)
		fprintf(stderr, "tabletrack-fiducials: %d symbols of %.0f mm%s%s%s%s\n", tf.n,
			(double)sp.card_mm, out ? " -> " : "", out ? out : "",
			dir ? ", one a file in " : "", dir ? dir : "");
	treefile_free(&tf);
	return rc;
}

/* ---- learn ------------------------------------------------------------- */

struct found {
	float cx, cy, h;
	int sheet, nodes;
	char tree[TREEFILE_MAX_TOKEN];
};

static int cmp_found_y(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	if (x->sheet != y->sheet)
		return x->sheet - y->sheet;
	return (x->cy > y->cy) - (x->cy < y->cy);
}

static int cmp_found_x(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	return (x->cx > y->cx) - (x->cx < y->cx);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* Height of r in the containment tree (0 for a leaf), children being the
 * neighbours whose parent is r. */
static int region_height(const struct region_tree *t, const int32_t *parent, int8_t *memo,
			 int32_t r, int guard)
{
	if (memo[r] >= 0)
		return memo[r];
	int h = 0;
	const int32_t *l = region_adj(t, r);
	for (int i = 0; i < t->regions[r].n_adj && guard < 64; i++)
		if (parent[l[i]] == r) {
			int c = region_height(t, parent, memo, l[i], guard + 1) + 1;
			h = c > h ? c : h;
		}
	memo[r] = (int8_t)(h > 100 ? 100 : h);
	return h;
}

/* Symbols of one sheet: every region of height 2 (root, children,
 * grandchildren) that is not on the border and has at least 5 nodes (text
 * glyphs and cut marks have height 0 or 1). */
static int learn_one(const char *path, int sheet, struct found **all, int *n_all, int *cap_all)
{
	struct image_u8 grey = {0};
	struct bitmask mask = {0};
	struct segment *seg = NULL;
	int32_t *parent = NULL;
	int8_t *memo = NULL;
	int rc = image_read(path, &grey), found = 0;
	if (rc) {
		fprintf(stderr, "%s: cannot read (%s)\n", path, err_str(rc));
		goto done;
	}
	struct segment_config sc = {.max_width = grey.width, .max_height = grey.height, .adj_cap = 64};
	seg = segment_create(&sc, &rc);
	if (!seg || (rc = bitmask_alloc(&mask, grey.width, grey.height)))
		goto done;
	/* Sheets are clean prints or renders: a global mid-grey threshold. */
	bitmask_from_image(&mask, &grey);
	const struct region_tree *t;
	if ((rc = segment_process(seg, &mask, &t)))
		goto done;
	if (t->overflow) {
		fprintf(stderr, "%s: too many regions for the segmenter\n", path);
		rc = ERR_NOMEM;
		goto done;
	}
	parent = malloc(sizeof *parent * (size_t)(t->n_regions + 1));
	memo = malloc((size_t)t->n_regions + 1);
	if (!parent || !memo) {
		rc = ERR_NOMEM;
		goto done;
	}
	for (int32_t r = 0; r < t->n_regions; r++) {
		const struct region *g = &t->regions[r];
		const int32_t *l = region_adj(t, r);
		parent[r] = -1;
		memo[r] = -1;
		for (int i = 0; i < g->n_adj; i++) {
			const struct region *q = &t->regions[l[i]];
			/* Not by area: a thin ring is smaller than the root it holds. */
			if (q->x0 <= g->x0 && q->y0 <= g->y0 && q->x1 >= g->x1 && q->y1 >= g->y1 &&
			    (q->x0 < g->x0 || q->y0 < g->y0 || q->x1 > g->x1 || q->y1 > g->y1)) {
				parent[r] = l[i];
				break;
			}
		}
	}
	for (int32_t r = 0; r < t->n_regions; r++) {
		const struct region *g = &t->regions[r];
		if ((g->flags & REGION_BORDER) || (g->flags & REGION_SATURATED))
			continue;
		if (region_height(t, parent, memo, r, 0) != 2)
			continue;
		char buf[TREEFILE_MAX_TOKEN];
		int len = match_canonical_string(t, r, parent[r], buf, sizeof buf);
		int nodes = 0;
		if (len < 0) {
			fprintf(stderr, "%s: unreadable symbol at (%d, %d): %s\n", path,
				(g->x0 + g->x1) / 2, (g->y0 + g->y1) / 2, err_str(len));
			snprintf(buf, sizeof buf, "?");
		} else {
			/* A string deeper than the height means the neighbours are not
			 * nested (touching text glyphs): not a symbol. */
			int depth = 0;
			treefile_info(buf, &nodes, &depth);
			if (nodes < 5 || depth != 2 || g->x1 - g->x0 < 12 || g->y1 - g->y0 < 12)
				continue;
		}
		if (*n_all == *cap_all) {
			int nc = *cap_all ? *cap_all * 2 : 256;
			struct found *f = realloc(*all, (size_t)nc * sizeof *f);
			if (!f) {
				rc = ERR_NOMEM;
				goto done;
			}
			*all = f;
			*cap_all = nc;
		}
		struct found *f = &(*all)[(*n_all)++];
		f->cx = 0.5f * (float)(g->x0 + g->x1);
		f->cy = 0.5f * (float)(g->y0 + g->y1);
		f->h = (float)(g->y1 - g->y0 + 1);
		f->sheet = sheet;
		f->nodes = nodes;
		snprintf(f->tree, sizeof f->tree, "%s", buf);
		found++;
	}
	fprintf(stderr, "%s: %d symbols\n", path, found);
done:
	free(parent);
	free(memo);
	segment_destroy(seg);
	bitmask_free(&mask);
	image_u8_free(&grey);
	return rc;
}

static int learn_sheets(const char *out, const char **sheets, int n)
{
	struct found *all = NULL;
	int n_all = 0, cap_all = 0, rc = 0, problems = 0;
	float *heights = NULL;
	for (int s = 0; s < n && !rc; s++)
		rc = learn_one(sheets[s], s, &all, &n_all, &cap_all);
	if (rc)
		goto done;
	if (n_all == 0) {
		fprintf(stderr, "tabletrack-fiducials: no symbols found\n");
		rc = ERR_FORMAT;
		goto done;
	}
	/* Reading order: rows are runs of symbols whose centres lie within half
	 * a (median) symbol height of the row's first, left to right. */
	heights = malloc(sizeof *heights * (size_t)n_all);
	if (!heights) {
		rc = ERR_NOMEM;
		goto done;
	}
	for (int i = 0; i < n_all; i++)
		heights[i] = all[i].h;
	qsort(heights, (size_t)n_all, sizeof *heights, cmp_float);
	float row_tol = 0.5f * heights[n_all / 2];
	qsort(all, (size_t)n_all, sizeof *all, cmp_found_y);
	for (int i = 0; i < n_all;) {
		int j = i + 1;
		while (j < n_all && all[j].sheet == all[i].sheet && all[j].cy - all[i].cy < row_tol)
			j++;
		qsort(all + i, (size_t)(j - i), sizeof *all, cmp_found_x);
		i = j;
	}
	/* The most common node count; others are probably damaged prints. */
	int best = 0, best_n = 0;
	for (int i = 0; i < n_all; i++) {
		int c = 0;
		for (int j = 0; j < n_all; j++)
			c += all[j].nodes == all[i].nodes;
		if (c > best_n) {
			best_n = c;
			best = all[i].nodes;
		}
	}
	FILE *f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "tabletrack-fiducials: %s: %s\n", out, strerror(errno));
		rc = ERR_IO;
		goto done;
	}
	for (int i = 0; i < n_all; i++) {
		fprintf(f, "%s\n", all[i].tree);
		if (all[i].nodes != best) {
			fprintf(stderr,
				"%s: ID %d at (%.0f, %.0f): %s has %d nodes where the others have %d: "
				"unreadable or damaged\n",
				sheets[all[i].sheet], i, (double)all[i].cx, (double)all[i].cy,
				all[i].tree, all[i].nodes, best);
			problems++;
		}
	}
	if (fclose(f)) {
		rc = ERR_IO;
		goto done;
	}
	fprintf(stderr, "tabletrack-fiducials: %d symbols from %d sheet%s -> %s%s\n", n_all, n,
		n == 1 ? "" : "s", out, problems ? " (with problems, see above)" : "");
done:
	free(heights);
	free(all);
	return rc ? rc : problems ? ERR_FORMAT : 0;
}

static int cmd_learn(int argc, char **argv)
{
	const char *out = NULL;
	const char **sheets = calloc((size_t)argc + 1, sizeof *sheets);
	int n = 0, rc = 2;
	if (!sheets)
		return 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (argv[i][0] == '-') {
			usage(stderr);
			goto done;
		} else {
			sheets[n++] = argv[i];
		}
	}
	if (!out || !n) {
		usage(stderr);
		goto done;
	}
	rc = learn_sheets(out, sheets, n) ? 1 : 0;
done:
	free(sheets);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "generate"))
		return cmd_generate(argc - 1, argv + 1);
	if (!strcmp(cmd, "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(cmd, "render"))
		return cmd_render(argc - 1, argv + 1);
	if (!strcmp(cmd, "learn"))
		return cmd_learn(argc - 1, argv + 1);
	fprintf(stderr, "tabletrack-fiducials: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
