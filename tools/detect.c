/*
 * tabletrack-detect - offline detector and scorer for tuning the matcher.
 *
 *   tabletrack-detect --trees FILE [--radius R] [--gate G] [--gauss SIGMA]
 *                     [--median 3|5] [--adj-cap N] [--closing R PCT] [--verbose]
 *                     [--dump FRAME FILE]
 *                     SCENE_DIR
 *
 * Reads SCENE_DIR/truth.json and SCENE_DIR/frame_NNNNN.png, runs each frame
 * through bernsen_cpu -> bitmask -> segment -> match (no tracker), and
 * scores the detections like ../shared/tools/evaluate.py: a symbol is found
 * when a detection with its ID lies within 0.3 x its size of the true
 * centre; detections matching nothing are false positives. Prints one line:
 * recall, wrong IDs, false positives, position error median/p95 (px),
 * angle error median/p95 (degrees). Defaults: radius 4, gate 48 (the best
 * balance found on the shared scenes). --verbose also lists every miss
 * (twice: with the tree strings of the regions around it);
 * --dump writes the thresholded image of one frame. --closing thresholds
 * the whole frame against a grey closing of radius R instead (the third
 * scale's closing pass, threshold/closing.h: white above PCT percent of the
 * closing, --gate its floor), to see what that rule reads without windows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/detect.h"
#include "../src/core/err.h"
#include "../src/core/image.h"
#include "../src/core/image_io.h"
#include "../src/core/log.h"
#include "../src/fiducial/match.h"
#include "../src/fiducial/trees.h"
#include "../src/segment/segment.h"
#include "../src/threshold/closing.h"
#include "../src/threshold/threshold.h"

/* ---- a tiny JSON scanner for truth.json ---- */

struct truth_fid {
	int id;
	double x, y, angle, size;
	int has_angle;
};

struct truth_frame {
	int frame;
	int n_fids;
	struct truth_fid fids[256];
};

struct scan {
	const char *p, *end;
	int bad;
};

static void ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
		s->p++;
}

static int eat(struct scan *s, char c)
{
	ws(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return 1;
	}
	return 0;
}

static void string_read(struct scan *s, char *buf, size_t cap)
{
	size_t n = 0;
	ws(s);
	if (!eat(s, '"')) {
		s->bad = 1;
		return;
	}
	while (s->p < s->end && *s->p != '"') {
		if (*s->p == '\\' && s->p + 1 < s->end)
			s->p++;
		if (n + 1 < cap)
			buf[n++] = *s->p;
		s->p++;
	}
	if (cap)
		buf[n] = 0;
	if (!eat(s, '"'))
		s->bad = 1;
}

/* A number, or null (returns NAN). */
static double number_read(struct scan *s)
{
	ws(s);
	if (s->end - s->p >= 4 && strncmp(s->p, "null", 4) == 0) {
		s->p += 4;
		return NAN;
	}
	char *e;
	double v = strtod(s->p, &e);
	if (e == s->p)
		s->bad = 1;
	s->p = e;
	return v;
}

/* Steps through an object's members; *n counts the calls (start it at 0).
 * The first call reads the '{', later ones the ',' after the previous value;
 * each then reads the next key and its ':' and returns 1. Returns 0 once the
 * closing '}' is read, or with s->bad set. */
static int member_next(struct scan *s, int *n, char *key, size_t cap)
{
	if ((*n)++ == 0) {
		if (!eat(s, '{')) {
			s->bad = 1;
			return 0;
		}
		if (eat(s, '}'))
			return 0;
	} else if (s->bad || !eat(s, ',')) {
		if (!eat(s, '}'))
			s->bad = 1;
		return 0;
	}
	string_read(s, key, cap);
	if (!eat(s, ':'))
		s->bad = 1;
	return 1;
}

/* The same for an array: returns 1 before each element, 0 once the closing
 * ']' is read or with s->bad set. */
static int element_next(struct scan *s, int *n)
{
	if ((*n)++ == 0) {
		if (!eat(s, '[')) {
			s->bad = 1;
			return 0;
		}
		return !eat(s, ']');
	}
	if (!s->bad && eat(s, ','))
		return 1;
	if (!eat(s, ']'))
		s->bad = 1;
	return 0;
}

static void value_skip(struct scan *s)
{
	ws(s);
	if (s->p >= s->end || s->bad) {
		s->bad = 1;
		return;
	}
	char c = *s->p;
	if (c == '"') {
		char tmp[8];
		string_read(s, tmp, sizeof tmp);
	} else if (c == '{') {
		char key[8];
		for (int n = 0; member_next(s, &n, key, sizeof key);)
			value_skip(s);
	} else if (c == '[') {
		for (int n = 0; element_next(s, &n);)
			value_skip(s);
	} else if (c == 't' || c == 'f' || c == 'n') {
		while (s->p < s->end && *s->p >= 'a' && *s->p <= 'z')
			s->p++;
	} else {
		number_read(s);
	}
}

static void fid_read(struct scan *s, struct truth_fid *f)
{
	memset(f, 0, sizeof *f);
	char key[32];
	for (int n = 0; member_next(s, &n, key, sizeof key);) {
		if (!strcmp(key, "id"))
			f->id = (int)number_read(s);
		else if (!strcmp(key, "x"))
			f->x = number_read(s);
		else if (!strcmp(key, "y"))
			f->y = number_read(s);
		else if (!strcmp(key, "size"))
			f->size = number_read(s);
		else if (!strcmp(key, "angle")) {
			f->angle = number_read(s);
			f->has_angle = !isnan(f->angle);
		} else
			value_skip(s);
	}
}

static void frame_read(struct scan *s, struct truth_frame *fr)
{
	fr->n_fids = 0;
	char key[32];
	for (int n = 0; member_next(s, &n, key, sizeof key);) {
		if (!strcmp(key, "frame")) {
			fr->frame = (int)number_read(s);
		} else if (!strcmp(key, "fiducials")) {
			for (int k = 0; element_next(s, &k);) {
				struct truth_fid f;
				fid_read(s, &f);
				if (fr->n_fids < 256)
					fr->fids[fr->n_fids++] = f;
			}
		} else {
			value_skip(s);
		}
	}
}

/* Reads the whole truth file; returns the frame count or -1. */
static int truth_read(const char *path, struct truth_frame **out)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: cannot open\n", path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *text = malloc((size_t)len + 1);
	if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(text);
		return -1;
	}
	fclose(f);
	struct scan s = {text, text + len, 0};
	int n = 0, cap = 0;
	struct truth_frame *frames = NULL;
	char key[32];
	for (int m = 0; member_next(&s, &m, key, sizeof key);) {
		if (!strcmp(key, "frames")) {
			for (int k = 0; element_next(&s, &k);) {
				if (n == cap) {
					cap = cap ? 2 * cap : 64;
					struct truth_frame *nf = realloc(frames, (size_t)cap * sizeof *frames);
					if (!nf) {
						s.bad = 1;
						break;
					}
					frames = nf;
				}
				frame_read(&s, &frames[n++]);
			}
		} else {
			value_skip(&s);
		}
	}
	long at = len - (long)(s.end - s.p);
	free(text);
	if (s.bad) {
		fprintf(stderr, "%s: malformed JSON near byte %ld\n", path, at);
		free(frames);
		return -1;
	}
	*out = frames;
	return n;
}

/* ---- scoring ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double pct(double *v, int n, double q)
{
	if (!n)
		return NAN;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	int i = (int)(q * n);
	return v[i < n - 1 ? i : n - 1];
}

/* For a miss: the tree strings of the regions that could be its root. */
static void regions_near(const struct region_tree *tree, const struct truth_fid *t)
{
	for (int32_t r = 0; r < tree->n_regions; r++) {
		const struct region *g = &tree->regions[r];
		double w = g->x1 - g->x0 + 1, h = g->y1 - g->y0 + 1;
		if (g->x0 > t->x || g->x1 < t->x || g->y0 > t->y || g->y1 < t->y || w < 0.3 * t->size || h < 0.3 * t->size ||
		    w > 1.5 * t->size || h > 1.5 * t->size)
			continue;
		char buf[TREES_MAX_NODES + 2];
		int n = match_canonical_string(tree, r, -1, buf, sizeof buf);
		printf("    region %d colour %d flags %d box %dx%d n_adj %d: %s\n", r, g->colour, g->flags, (int)w, (int)h,
		       g->n_adj, n > 0 ? buf : "(too big)");
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: tabletrack-detect --trees FILE [--radius R] [--gate G] [--gauss SIGMA] "
			"[--median 3|5] [--adj-cap N] [--closing R PCT] [--verbose] [--dump FRAME FILE.png] "
			"SCENE_DIR\n");
}

int main(int argc, char **argv)
{
	const char *trees_path = NULL, *dir = NULL;
	int radius = 4, gate = 48, median = 0, verbose = 0, dump_frame = -1, adj_cap = 0;
	const char *dump_path = NULL;
	float gauss = 0;
	int close_r = 0, close_pct = 70;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--trees") && i + 1 < argc)
			trees_path = argv[++i];
		else if (!strcmp(argv[i], "--radius") && i + 1 < argc)
			radius = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--gate") && i + 1 < argc)
			gate = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--adj-cap") && i + 1 < argc)
			adj_cap = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--gauss") && i + 1 < argc)
			gauss = (float)atof(argv[++i]);
		else if (!strcmp(argv[i], "--closing") && i + 2 < argc) {
			close_r = atoi(argv[++i]);
			close_pct = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--median") && i + 1 < argc)
			median = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dump") && i + 2 < argc) {
			dump_frame = atoi(argv[++i]);
			dump_path = argv[++i];
		} else if (!strcmp(argv[i], "--verbose"))
			verbose++;
		else if (argv[i][0] != '-' && !dir)
			dir = argv[i];
		else {
			usage();
			return 2;
		}
	}
	if (!trees_path || !dir || radius < 1 || radius > 32 || gate < 0 || gate > 255 || close_r < 0 ||
	    close_r > CLOSING_MAX_RADIUS || close_pct < 0 || close_pct > 100) {
		usage();
		return 2;
	}
	struct tree_set *trees = NULL;
	if (tree_set_load(trees_path, &trees) < 0)
		return 1;
	char path[4096];
	snprintf(path, sizeof path, "%s/truth.json", dir);
	struct truth_frame *frames = NULL;
	int n_frames = truth_read(path, &frames);
	if (n_frames < 0)
		return 1;

	struct segment *seg = NULL;
	struct match *mat = NULL;
	struct closing *cl = NULL;
	struct detections det;
	if (detections_alloc(&det, 1024) < 0)
		return 1;
	int cur_w = 0, cur_h = 0;
	int n_t = 0, n_found = 0, n_wrong = 0, n_fp = 0, n_fuzzy = 0;
	int cap_err = 4096, n_err = 0;
	double *pos_err = malloc((size_t)cap_err * sizeof *pos_err), *ang_err = malloc((size_t)cap_err * sizeof *ang_err);
	for (int fi = 0; fi < n_frames; fi++) {
		struct truth_frame *fr = &frames[fi];
		struct image_u8 grey = {0}, tmp = {0}, bin = {0};
		struct bitmask mask = {0};
		snprintf(path, sizeof path, "%s/frame_%05d.png", dir, fr->frame);
		if (image_read(path, &grey) < 0)
			return 1;
		if (grey.width != cur_w || grey.height != cur_h) {
			segment_destroy(seg);
			match_destroy(mat);
			closing_destroy(cl);
			cl = NULL;
			int err;
			struct segment_config sc = {grey.width, grey.height, adj_cap ? adj_cap : tree_set_max_nodes(trees), 0, 0};
			struct match_config mc = {.trees = trees, .max_width = grey.width, .max_height = grey.height};
			seg = segment_create(&sc, &err);
			mat = match_create(&mc, &err);
			if (!seg || !mat)
				return 1;
			if (close_r > 0 && !(cl = closing_create(grey.width, grey.height, &err)))
				return 1;
			cur_w = grey.width;
			cur_h = grey.height;
		}
		if (image_u8_alloc(&tmp, grey.width, grey.height) < 0 || image_u8_alloc(&bin, grey.width, grey.height) < 0 ||
		    bitmask_alloc(&mask, grey.width, grey.height) < 0)
			return 1;
		const struct image_u8 *src = &grey;
		if (median == 3 || median == 5) {
			median_cpu(src, median, &tmp);
			image_u8_copy(&grey, &tmp);
		}
		if (gauss > 0) {
			gauss_cpu(src, gauss, &tmp);
			image_u8_copy(&grey, &tmp);
		}
		if (cl) {
			if (closing_process(cl, src, close_r, close_pct, gate, &mask) < 0)
				return 1;
			bitmask_to_image(&mask, &bin);
		} else {
			bernsen_cpu(src, radius, gate, &bin);
			bitmask_from_image(&mask, &bin);
		}
		if (fr->frame == dump_frame && image_write(dump_path, &bin) < 0)
			return 1;
		const struct region_tree *tree;
		if (segment_process(seg, &mask, &tree) < 0 || match_process(mat, tree, &grey, &det) < 0)
			return 1;
		n_fuzzy += det.n_fuzzy;

		char used[1024] = {0};
		for (int k = 0; k < fr->n_fids; k++) {
			const struct truth_fid *t = &fr->fids[k];
			int best = -1;
			double bd = 1e9;
			n_t++;
			for (int j = 0; j < det.n_fids; j++) {
				double d = hypot(det.fids[j].x - t->x, det.fids[j].y - t->y);
				if (d < bd && !used[j]) {
					bd = d;
					best = j;
				}
			}
			if (best >= 0 && bd < 0.3 * t->size) {
				used[best] = 1;
				if (det.fids[best].id == t->id) {
					n_found++;
					if (n_err < cap_err) {
						pos_err[n_err] = bd;
						ang_err[n_err] = 0;
						if (!t->has_angle) {
							n_err++;
							continue;
						}
						double da = fmod(det.fids[best].angle - t->angle + M_PI, 2 * M_PI);
						if (da < 0)
							da += 2 * M_PI;
						ang_err[n_err++] = fabs((da - M_PI) * 180 / M_PI);
					}
					continue;
				}
				n_wrong++;
				if (verbose)
					printf("frame %d: id %d at %.1f,%.1f decoded as %d\n", fr->frame, t->id, t->x, t->y,
					       det.fids[best].id);
				continue;
			}
			if (verbose) {
				int fz = 0;
				for (int j = 0; j < det.n_fuzzy; j++)
					if (hypot(det.fuzzy[j].x - t->x, det.fuzzy[j].y - t->y) < 0.3 * t->size)
						fz = det.fuzzy[j].n_nodes;
				printf("frame %d: missed id %d (%s) at %.1f,%.1f size %.0f%s%.0d\n", fr->frame, t->id,
				       tree_set_token(trees, t->id), t->x, t->y, t->size, fz ? " fuzzy nodes " : "", fz);
				if (verbose > 1)
					regions_near(tree, t);
			}
		}
		for (int j = 0; j < det.n_fids; j++) {
			if (used[j])
				continue;
			n_fp++;
			if (verbose)
				printf("frame %d: false positive id %d at %.1f,%.1f\n", fr->frame, det.fids[j].id,
				       det.fids[j].x, det.fids[j].y);
		}
		image_u8_free(&grey);
		image_u8_free(&tmp);
		image_u8_free(&bin);
		bitmask_free(&mask);
	}
	const char *name = strrchr(dir, '/');
	name = name && name[1] ? name + 1 : dir;
	int n_ang = n_err;
	printf("%-12s recall=%.3f found=%d/%d wrong_id=%d false_pos=%d pos_med=%.2f pos_p95=%.2f "
	       "ang_med=%.2f ang_p95=%.2f fuzzy=%d (r=%d g=%d)\n",
	       name, n_t ? (double)n_found / n_t : 0.0, n_found, n_t, n_wrong, n_fp, pct(pos_err, n_err, 0.5),
	       pct(pos_err, n_err, 0.95), pct(ang_err, n_ang, 0.5), pct(ang_err, n_ang, 0.95), n_fuzzy, radius, gate);
	free(pos_err);
	free(ang_err);
	free(frames);
	detections_free(&det);
	segment_destroy(seg);
	match_destroy(mat);
	closing_destroy(cl);
	tree_set_free(trees);
	return 0;
}
