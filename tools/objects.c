/*
 * tabletrack-objects - the object library: learn objects by their look,
 * list them, recognise them in a picture, and test recognition on
 * synthesised scenes with truth.
 *
 *   tabletrack-objects learn NAME IMAGE [--id N] [--library FILE] [--keypoints N]
 *   tabletrack-objects list [--library FILE]
 *   tabletrack-objects remove NAME [--library FILE]
 *   tabletrack-objects check IMAGE [--library FILE]
 *   tabletrack-objects synth DIR [--seed N] [--objects N] [--scenes N] [--clutter N]
 *   tabletrack-objects score DIR [--library FILE] [--verbose]
 *
 * learn: the whole IMAGE is the object; its SIFT keypoints (the strongest
 * --keypoints, default 1000) go into the library (default
 * ./tabletrack.objects, created when missing) under NAME, which replaces
 * an object of that name. Without --id the object takes the lowest free ID
 * of the configured range (object_id_min..object_id_max, their defaults
 * unless --config FILE names a configuration).
 * check: prints one line an object recognised: ID NAME X Y ANGLE(deg) SCALE INLIERS.
 * synth: writes DIR/object-K.png (procedural textures: shapes of many
 * sizes and greys), DIR/objects.txt ("NAME FILE ID" a line, to learn) and
 * scenes DIR/scene-NNN.png with DIR/truth.txt: learned objects rotated
 * (any angle), scaled 0.5-2x (at least 150 px across), up to 30% covered
 * by a flat occluder, under uneven light and sensor noise, among clutter
 * (textures that were never learned) and amoeba fiducials; --clutter
 * scenes hold clutter and fiducials only.
 * truth.txt: "scene FILE" then "object ID X Y ANGLE_DEG SCALE COVERED" lines.
 * score: recognises every scene of DIR/truth.txt with the library and
 * prints recall, false recognitions (a detection whose ID is not in the
 * scene, or farther than 10 px from it), and the position (px) and angle
 * (degrees) errors of the correct ones: mean and maximum.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/config/config.h"
#include "../src/core/err.h"
#include "../src/core/image.h"
#include "../src/core/image_io.h"
#include "../src/core/log.h"
#include "../src/fiducial/render.h"
#include "../src/fiducial/trees.h"
#include "../src/objects/objects.h"
#include "../src/objects/recognise.h"
#include "../src/objects/sift.h"

#define DEFAULT_LIBRARY "tabletrack.objects"
#define SCENE_KEYPOINTS 4000
#define MAX_DETS 64

static void usage(void)
{
	fprintf(stderr,
		"usage: tabletrack-objects learn NAME IMAGE [--id N] [--library FILE] [--keypoints N] [--config FILE]\n"
		"       tabletrack-objects list [--library FILE]\n"
		"       tabletrack-objects remove NAME [--library FILE]\n"
		"       tabletrack-objects check IMAGE [--library FILE]\n"
		"       tabletrack-objects synth DIR [--seed N] [--objects N] [--scenes N] [--clutter N]\n"
		"       tabletrack-objects score DIR [--library FILE] [--verbose]\n");
}

struct args {
	const char *cmd;
	const char *pos[2];
	int n_pos;
	const char *library;
	const char *config;
	int id;
	int keypoints;
	unsigned seed;
	int n_objects, n_scenes, n_clutter;
	int verbose;
};

static int parse_int_arg(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	memset(a, 0, sizeof *a);
	a->library = DEFAULT_LIBRARY;
	a->id = -1;
	a->keypoints = 1000;
	a->seed = 17;
	a->n_objects = 6;
	a->n_scenes = 24;
	a->n_clutter = 6;
	if (argc < 2)
		return -1;
	a->cmd = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		int n;
		if (strcmp(o, "--verbose") == 0) {
			a->verbose = 1;
			continue;
		}
		if (o[0] == '-' && o[1] == '-' && !v) {
			fprintf(stderr, "tabletrack-objects: %s wants a value\n", o);
			return -1;
		}
		if (strcmp(o, "--library") == 0)
			a->library = v;
		else if (strcmp(o, "--config") == 0)
			a->config = v;
		else if (strcmp(o, "--id") == 0) {
			if (parse_int_arg(v, 0, OBJECTS_MAX_ID, &a->id)) {
				fprintf(stderr, "tabletrack-objects: --id %s: not a number in 0..%d\n", v, OBJECTS_MAX_ID);
				return -1;
			}
		} else if (strcmp(o, "--keypoints") == 0) {
			if (parse_int_arg(v, 1, OBJECTS_MAX_KEYPOINTS, &a->keypoints))
				return -1;
		} else if (strcmp(o, "--seed") == 0) {
			if (parse_int_arg(v, 0, 1 << 30, &n))
				return -1;
			a->seed = (unsigned)n;
		} else if (strcmp(o, "--objects") == 0) {
			if (parse_int_arg(v, 1, 64, &a->n_objects))
				return -1;
		} else if (strcmp(o, "--scenes") == 0) {
			if (parse_int_arg(v, 0, 10000, &a->n_scenes))
				return -1;
		} else if (strcmp(o, "--clutter") == 0) {
			if (parse_int_arg(v, 0, 10000, &a->n_clutter))
				return -1;
		} else if (o[0] == '-' && o[1] == '-') {
			fprintf(stderr, "tabletrack-objects: unknown option %s\n", o);
			return -1;
		} else {
			if (a->n_pos == 2)
				return -1;
			a->pos[a->n_pos++] = o;
			continue;
		}
		i++;
	}
	return 0;
}

/* The library at path, or an empty one when the file does not exist. */
static int open_library(const char *path, int create, struct objects_library **lib)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		if (!create) {
			fprintf(stderr, "tabletrack-objects: %s: no such library\n", path);
			return ERR_IO;
		}
		*lib = objects_library_new();
		return *lib ? 0 : ERR_NOMEM;
	}
	fclose(f);
	return objects_library_load(path, lib);
}

static struct sift *open_sift(int max_keypoints)
{
	struct sift_config sc;
	sift_config_default(&sc);
	sc.max_keypoints = max_keypoints;
	sc.threads = 0;
	int err;
	struct sift *s = sift_create(&sc, "auto", &err);
	if (!s)
		fprintf(stderr, "tabletrack-objects: no SIFT here: %s\n", err_str(err));
	return s;
}

static int cmd_learn(const struct args *a)
{
	if (a->n_pos != 2) {
		usage();
		return 2;
	}
	const char *name = a->pos[0], *file = a->pos[1];
	if (!objects_name_valid(name)) {
		fprintf(stderr, "tabletrack-objects: name '%s': 1..%d characters of A-Z a-z 0-9 _ . -\n", name,
			OBJECTS_NAME_MAX);
		return 2;
	}
	struct tt_config cfg;
	config_defaults(&cfg);
	if (a->config && config_load_file(&cfg, a->config)) {
		fprintf(stderr, "tabletrack-objects: %s\n", config_last_error());
		return CONFIG_EX_CONFIG;
	}
	struct objects_library *lib = NULL;
	struct image_u8 img = {0};
	struct objects_keypoint *kp = NULL;
	struct sift *s = NULL;
	int rc = 1, err;
	if ((err = open_library(a->library, 1, &lib)))
		goto done;
	int old = objects_library_find_name(lib, name);
	int id = a->id;
	if (id < 0 && old >= 0) {
		struct objects_object ob;
		objects_library_get(lib, old, &ob);
		id = ob.id;
	}
	if (old >= 0)
		objects_library_remove(lib, old);
	if (id < 0) {
		for (id = cfg.object_id_min; id <= cfg.object_id_max && objects_library_find_id(lib, id) >= 0; id++)
			;
		if (id > cfg.object_id_max) {
			fprintf(stderr, "tabletrack-objects: every ID of %d..%d is used\n", cfg.object_id_min,
				cfg.object_id_max);
			goto done;
		}
	} else if (id < cfg.object_id_min || id > cfg.object_id_max) {
		fprintf(stderr, "tabletrack-objects: warning: ID %d is outside the configured range %d..%d\n", id,
			cfg.object_id_min, cfg.object_id_max);
	}
	if (objects_library_find_id(lib, id) >= 0) {
		fprintf(stderr, "tabletrack-objects: ID %d is already used\n", id);
		goto done;
	}
	if ((err = image_read(file, &img)))
		goto done;
	if (!(s = open_sift(a->keypoints)))
		goto done;
	kp = malloc(sizeof *kp * (size_t)a->keypoints);
	int n = 0;
	if (!kp || (err = sift_extract(s, &img, kp, a->keypoints, &n)))
		goto done;
	if (n < 10)
		fprintf(stderr, "tabletrack-objects: warning: only %d keypoints: a plain object is hard to recognise\n",
			n);
	if ((err = objects_library_add(lib, id, name, img.width, img.height, kp, n))) {
		fprintf(stderr, "tabletrack-objects: cannot add %s: %s\n", name, err_str(err));
		goto done;
	}
	if ((err = objects_library_save(lib, a->library)))
		goto done;
	printf("%s: %s, ID %d, %dx%d, %d keypoints\n", a->library, name, id, img.width, img.height, n);
	rc = 0;
done:
	free(kp);
	sift_destroy(s);
	image_u8_free(&img);
	objects_library_free(lib);
	return rc;
}

static int cmd_list(const struct args *a)
{
	struct objects_library *lib = NULL;
	if (open_library(a->library, 0, &lib))
		return 1;
	printf("%s: %d objects\n", a->library, objects_library_count(lib));
	for (int i = 0; i < objects_library_count(lib); i++) {
		struct objects_object ob;
		objects_library_get(lib, i, &ob);
		printf("%d %s %dx%d %d keypoints\n", ob.id, ob.name, ob.width, ob.height, ob.n_keypoints);
	}
	objects_library_free(lib);
	return 0;
}

static int cmd_remove(const struct args *a)
{
	if (a->n_pos != 1) {
		usage();
		return 2;
	}
	struct objects_library *lib = NULL;
	if (open_library(a->library, 0, &lib))
		return 1;
	int i = objects_library_find_name(lib, a->pos[0]);
	int rc = 1;
	if (i < 0)
		fprintf(stderr, "tabletrack-objects: %s: no object named %s\n", a->library, a->pos[0]);
	else if (objects_library_remove(lib, i) == 0 && objects_library_save(lib, a->library) == 0)
		rc = 0;
	objects_library_free(lib);
	return rc;
}

/* ---- recognition of one picture -------------------------------------------------------- */

/* Matching runs where the daemon's does (stage.c): on the SIFT backend's
 * device when it has a matcher (cuda), else on the CPU; both give the same
 * nearest pairs, so check and score report what the daemon would. */
struct recog {
	struct objects_library *lib;
	struct sift *sift;
	struct objects_recogniser *rec;
	struct sift_nearest *nearest; /* NULL: matching on the CPU */
	struct objects_nearest *nn;   /* SCENE_KEYPOINTS */
	struct objects_keypoint *kp;
};

static void recog_close(struct recog *r)
{
	sift_nearest_destroy(r->nearest);
	free(r->nn);
	objects_recogniser_destroy(r->rec);
	sift_destroy(r->sift);
	objects_library_free(r->lib);
	free(r->kp);
}

static int recog_open(struct recog *r, const char *library)
{
	memset(r, 0, sizeof *r);
	int err;
	if (open_library(library, 0, &r->lib))
		return -1;
	if (!(r->sift = open_sift(SCENE_KEYPOINTS)))
		return -1;
	struct objects_match_config mc;
	objects_match_config_default(&mc);
	if (!(r->rec = objects_recogniser_create(r->lib, &mc, SCENE_KEYPOINTS, &err)))
		return -1;
	int n_lib_kp;
	const struct objects_keypoint *lk = objects_library_keypoints(r->lib, &n_lib_kp);
	r->nearest = sift_nearest_create(r->sift, lk, n_lib_kp, SCENE_KEYPOINTS);
	r->kp = malloc(sizeof *r->kp * SCENE_KEYPOINTS);
	r->nn = malloc(sizeof *r->nn * SCENE_KEYPOINTS);
	return r->kp && r->nn ? 0 : -1;
}

static int recog_run(struct recog *r, const char *file, struct objects_detection *dets, int *n_dets, int *n_kp)
{
	struct image_u8 img = {0};
	int err = image_read(file, &img);
	if (!err)
		err = sift_extract(r->sift, &img, r->kp, SCENE_KEYPOINTS, n_kp);
	if (!err && r->nearest && sift_nearest(r->nearest, r->kp, *n_kp, r->nn) == 0)
		err = objects_recognise_nearest(r->rec, r->kp, *n_kp, r->nn, dets, MAX_DETS, n_dets);
	else if (!err)
		err = objects_recognise(r->rec, r->kp, *n_kp, dets, MAX_DETS, n_dets);
	image_u8_free(&img);
	return err;
}

static int cmd_check(const struct args *a)
{
	if (a->n_pos != 1) {
		usage();
		return 2;
	}
	struct recog r;
	int rc = 1;
	struct objects_detection dets[MAX_DETS];
	int n = 0, n_kp = 0;
	if (recog_open(&r, a->library) == 0 && recog_run(&r, a->pos[0], dets, &n, &n_kp) == 0) {
		printf("# %s: %d keypoints, %d matches, %d objects\n", a->pos[0], n_kp,
		       objects_recogniser_last_matches(r.rec), n);
		for (int i = 0; i < n; i++) {
			struct objects_object ob;
			objects_library_get(r.lib, dets[i].index, &ob);
			printf("%d %s %.2f %.2f %.2f %.3f %d\n", dets[i].id, ob.name, (double)dets[i].x,
			       (double)dets[i].y, (double)dets[i].angle * 180.0 / M_PI, (double)dets[i].scale,
			       dets[i].n_inliers);
		}
		rc = 0;
	}
	recog_close(&r);
	return rc;
}

/* ---- synthesis ------------------------------------------------------------------------- */

static uint32_t rng_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

static double rng_unit(uint64_t *s)
{
	return rng_next(s) / 2147483648.0;
}

static double rng_range(uint64_t *s, double lo, double hi)
{
	return lo + (hi - lo) * rng_unit(s);
}

static double rng_gauss(uint64_t *s)
{
	double u = rng_unit(s) * 0.999999 + 1e-6, v = rng_unit(s);
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* Smooth random field in 0..1: bilinear value noise on a grid of `cell` px. */
static double value_noise(const float *grid, int gw, double x, double y, double cell)
{
	double gx = x / cell, gy = y / cell;
	int ix = (int)gx, iy = (int)gy;
	double fx = gx - ix, fy = gy - iy;
	fx = fx * fx * (3 - 2 * fx);
	fy = fy * fy * (3 - 2 * fy);
	const float *r0 = grid + iy * gw, *r1 = r0 + gw;
	return (r0[ix] * (1 - fx) + r0[ix + 1] * fx) * (1 - fy) + (r1[ix] * (1 - fx) + r1[ix + 1] * fx) * fy;
}

/* A procedural texture: a smooth base, then shapes of many sizes and
 * greys (discs, rings, boxes, strokes, triangles) that give SIFT blobs and
 * corners at every scale. */
static int make_texture(struct image_u8 *img, int w, int h, uint64_t seed)
{
	int err = image_u8_alloc(img, w, h);
	if (err)
		return err;
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
	float grid[40 * 40];
	for (int i = 0; i < 40 * 40; i++)
		grid[i] = (float)rng_unit(&s);
	double base = rng_range(&s, 60, 190), amp = rng_range(&s, 40, 90);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			image_u8_row(img, y)[x] = (uint8_t)(base + amp * (value_noise(grid, 40, x, y, 48) - 0.5));
	int n_shapes = 70 + (int)(rng_unit(&s) * 50);
	for (int k = 0; k < n_shapes; k++) {
		int kind = (int)(rng_unit(&s) * 5);
		double cx = rng_range(&s, 0, w), cy = rng_range(&s, 0, h);
		double r = exp(rng_range(&s, log(3.0), log(w / 5.0)));
		double g = rng_range(&s, 0, 255), g2 = rng_range(&s, 0, 255);
		double ang = rng_range(&s, 0, M_PI), ca = cos(ang), sa = sin(ang);
		double ex = cx + ca * r * 2, ey = cy + sa * r * 2;
		double ax = rng_range(&s, -r, r), ay = rng_range(&s, -r, r), bx = rng_range(&s, -r, r),
		       by = rng_range(&s, -r, r);
		int x0 = (int)floor(cx - 2.5 * r - 2), x1 = (int)ceil(cx + 2.5 * r + 2);
		int y0 = (int)floor(cy - 2.5 * r - 2), y1 = (int)ceil(cy + 2.5 * r + 2);
		image_u8_clip_box(img, &x0, &y0, &x1, &y1);
		for (int y = y0; y <= y1; y++) {
			uint8_t *row = image_u8_row(img, y);
			for (int x = x0; x <= x1; x++) {
				double dx = x - cx, dy = y - cy, v = -1;
				switch (kind) {
				case 0: /* disc */
					if (dx * dx + dy * dy <= r * r)
						v = g;
					break;
				case 1: { /* ring with a differently grey core */
					double d = sqrt(dx * dx + dy * dy);
					if (d <= r)
						v = d > 0.6 * r ? g : g2;
					break;
				}
				case 2: { /* rotated box */
					double u = dx * ca + dy * sa, t = -dx * sa + dy * ca;
					if (fabs(u) <= r && fabs(t) <= 0.6 * r)
						v = g;
					break;
				}
				case 3: { /* stroke */
					double lx = ex - cx, ly = ey - cy, l2 = lx * lx + ly * ly;
					double t = l2 > 0 ? (dx * lx + dy * ly) / l2 : 0;
					t = t < 0 ? 0 : t > 1 ? 1 : t;
					double px = dx - t * lx, py = dy - t * ly;
					if (px * px + py * py <= (0.15 * r + 1) * (0.15 * r + 1))
						v = g;
					break;
				}
				default: { /* triangle (0,0), (ax, ay), (bx, by) around the centre */
					double d1 = (ax * dy - ay * dx), d2 = ((bx - ax) * (dy - ay) - (by - ay) * (dx - ax)),
					       d3 = (-bx * (dy - by) + by * (dx - bx));
					if ((d1 >= 0 && d2 >= 0 && d3 >= 0) || (d1 <= 0 && d2 <= 0 && d3 <= 0))
						v = g;
					break;
				}
				}
				if (v >= 0)
					row[x] = (uint8_t)v;
			}
		}
	}
	return 0;
}

struct placement {
	double x, y, angle, scale; /* centre in the scene, rad clockwise, scale */
	double cover;              /* fraction covered */
	double cut_cos, cut_sin, cut_t; /* covered where (u, v) . (cos, sin) > cut_t (object coords from centre) */
};

/* Draws tex into scene at the placement: scene = s R (p - c) + C, sampled
 * bilinearly with 3x3 supersampling on the picture's edge. */
static void draw_object(struct image_u8 *scene, const struct image_u8 *tex, const struct placement *pl,
			uint64_t *s)
{
	double c = cos(pl->angle), sn = sin(pl->angle);
	double hw = (tex->width - 1) * 0.5, hh = (tex->height - 1) * 0.5;
	double rad = pl->scale * sqrt((hw + 1) * (hw + 1) + (hh + 1) * (hh + 1)) + 2;
	int x0 = (int)floor(pl->x - rad), x1 = (int)ceil(pl->x + rad), y0 = (int)floor(pl->y - rad),
	    y1 = (int)ceil(pl->y + rad);
	image_u8_clip_box(scene, &x0, &y0, &x1, &y1);
	double occ = rng_range(s, 30, 80);
	for (int y = y0; y <= y1; y++) {
		uint8_t *row = image_u8_row(scene, y);
		for (int x = x0; x <= x1; x++) {
			double acc = 0;
			int hit = 0;
			for (int sy = 0; sy < 3; sy++)
				for (int sx = 0; sx < 3; sx++) {
					double qx = x + (sx - 1) / 3.0 - pl->x, qy = y + (sy - 1) / 3.0 - pl->y;
					double u = (c * qx + sn * qy) / pl->scale, v = (-sn * qx + c * qy) / pl->scale;
					if (u < -hw - 0.5 || u > hw + 0.5 || v < -hh - 0.5 || v > hh + 0.5)
						continue;
					hit++;
					if (pl->cover > 0 && u * pl->cut_cos + v * pl->cut_sin > pl->cut_t)
						acc += occ;
					else
						acc += image_u8_sample(tex, u + hw, v + hh);
				}
			if (hit)
				row[x] = (uint8_t)((acc + row[x] * (9 - hit)) / 9.0 + 0.5);
		}
	}
}

/* Chooses the cut line that covers `cover` of the picture's area. */
static void choose_cut(struct placement *pl, const struct image_u8 *tex, uint64_t *s)
{
	double phi = rng_range(s, 0, 2 * M_PI);
	pl->cut_cos = cos(phi);
	pl->cut_sin = sin(phi);
	double hw = (tex->width - 1) * 0.5, hh = (tex->height - 1) * 0.5;
	enum { G = 48 };
	double t[G * G];
	for (int j = 0; j < G; j++)
		for (int i = 0; i < G; i++) {
			double u = -hw + (2 * hw) * (i + 0.5) / G, v = -hh + (2 * hh) * (j + 0.5) / G;
			t[j * G + i] = u * pl->cut_cos + v * pl->cut_sin;
		}
	/* The (1 - cover) quantile, by sorting (small). */
	for (int i = 1; i < G * G; i++) {
		double x = t[i];
		int k = i;
		while (k > 0 && t[k - 1] > x) {
			t[k] = t[k - 1];
			k--;
		}
		t[k] = x;
	}
	int q = (int)((1.0 - pl->cover) * (G * G - 1));
	pl->cut_t = t[q];
}

static int write_image(const char *dir, const char *name, const struct image_u8 *img, char *path, size_t cap)
{
	snprintf(path, cap, "%s/%s", dir, name);
	return image_write(path, img);
}

static int cmd_synth(const struct args *a)
{
	if (a->n_pos != 1) {
		usage();
		return 2;
	}
	const char *dir = a->pos[0];
	const char *ext = TT_HAVE_PNG ? "png" : "pgm";
	struct tt_config cfg;
	config_defaults(&cfg);
	struct tree_set *trees = NULL;
	if (tree_set_parse(tree_set_builtin_text, strlen(tree_set_builtin_text), "built-in", &trees))
		return 1;
	int n_tex = a->n_objects + 12; /* the last 12 are clutter, never learned */
	struct image_u8 *tex = calloc((size_t)n_tex, sizeof *tex);
	char path[1024], name[64];
	FILE *list = NULL, *truth = NULL;
	int rc = 1;
	uint64_t s = a->seed * 7919ull + 3;
	if (!tex)
		goto done;
	snprintf(path, sizeof path, "%s/objects.txt", dir);
	if (!(list = fopen(path, "w"))) {
		perror(path);
		goto done;
	}
	for (int k = 0; k < n_tex; k++) {
		int w = (int)rng_range(&s, 300, 340), h = (int)rng_range(&s, 220, 300);
		if (make_texture(&tex[k], w, h, a->seed * 1000u + (unsigned)k))
			goto done;
		if (k < a->n_objects) {
			snprintf(name, sizeof name, "object-%d.%s", k, ext);
			if (write_image(dir, name, &tex[k], path, sizeof path))
				goto done;
			fprintf(list, "object%d %s %d\n", k, path, cfg.object_id_min + k);
		}
	}
	snprintf(path, sizeof path, "%s/truth.txt", dir);
	if (!(truth = fopen(path, "w"))) {
		perror(path);
		goto done;
	}
	const int W = 1280, H = 720;
	struct image_u8 scene = {0};
	if (image_u8_alloc(&scene, W, H))
		goto done;
	float grid[40 * 40];
	for (int n = 0; n < a->n_scenes + a->n_clutter; n++) {
		int clutter_only = n >= a->n_scenes;
		for (int i = 0; i < 40 * 40; i++)
			grid[i] = (float)rng_unit(&s);
		double table = rng_range(&s, 90, 170);
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++)
				image_u8_row(&scene, y)[x] = (uint8_t)(table + 30 * (value_noise(grid, 40, x, y, 64) - 0.5));
		/* Occupied discs, so objects do not overlap each other. */
		double occ_x[16], occ_y[16], occ_r[16];
		int n_occ = 0;
		struct placement pl[16];
		int which[16];
		int n_place = clutter_only ? 0 : 1 + (int)(rng_unit(&s) * 2);
		int n_clut = 2 + (int)(rng_unit(&s) * 2);
		for (int k = 0; k < n_place + n_clut; k++) {
			int is_obj = k < n_place;
			int t = is_obj ? (int)(rng_unit(&s) * a->n_objects) : a->n_objects + (int)(rng_unit(&s) * 12);
			if (is_obj)
				for (int j = 0; j < k; j++)
					if (which[j] == t)
						t = (t + 1) % a->n_objects;
			double hw = tex[t].width * 0.5, hh = tex[t].height * 0.5;
			/* Scale 0.5-2 (log-uniform), kept at >= 150 px across. */
			double lo = 150.0 / (2 * (hw > hh ? hw : hh));
			lo = lo > 0.5 ? lo : 0.5;
			struct placement p = {0};
			int placed = 0;
			for (int attempt = 0; attempt < 60 && !placed; attempt++) {
				double hi = attempt < 30 ? 2.0 : 1.2;
				p.scale = exp(rng_range(&s, log(lo), log(hi)));
				p.angle = rng_range(&s, 0, 2 * M_PI);
				double rad = p.scale * sqrt(hw * hw + hh * hh);
				if (2 * rad + 4 > H)
					continue;
				p.x = rng_range(&s, rad + 2, W - rad - 2);
				p.y = rng_range(&s, rad + 2, H - rad - 2);
				placed = 1;
				for (int j = 0; j < n_occ; j++) {
					double dx = p.x - occ_x[j], dy = p.y - occ_y[j];
					if (sqrt(dx * dx + dy * dy) < rad + occ_r[j])
						placed = 0;
				}
				if (placed) {
					occ_x[n_occ] = p.x;
					occ_y[n_occ] = p.y;
					occ_r[n_occ] = rad;
					n_occ++;
				}
			}
			if (!placed)
				continue;
			p.cover = is_obj ? rng_range(&s, 0, 0.3) : 0;
			if (p.cover > 0)
				choose_cut(&p, &tex[t], &s);
			draw_object(&scene, &tex[t], &p, &s);
			if (is_obj) {
				pl[k] = p;
				which[k] = t;
			} else {
				which[k] = -1;
			}
		}
		/* Fiducials in the free space (a few tries each). */
		for (int f = 0; f < 6; f++) {
			double size = rng_range(&s, 60, 110);
			for (int attempt = 0; attempt < 20; attempt++) {
				double x = rng_range(&s, size, W - size), y = rng_range(&s, size, H - size);
				int free_spot = 1;
				for (int j = 0; j < n_occ; j++)
					if (hypot(x - occ_x[j], y - occ_y[j]) < occ_r[j] + size)
						free_spot = 0;
				if (!free_spot || n_occ == 16)
					continue;
				int id = (int)(rng_unit(&s) * tree_set_count(trees));
				render_symbol(tree_set_token(trees, id), (float)size, (float)rng_range(&s, 0, 2 * M_PI),
					      (float)x, (float)y, &scene, NULL);
				occ_x[n_occ] = x;
				occ_y[n_occ] = y;
				occ_r[n_occ] = size;
				n_occ++;
				break;
			}
		}
		/* Uneven light (a slope and a bright spot) and sensor noise. */
		double gx = rng_range(&s, -0.35, 0.35), gy = rng_range(&s, -0.35, 0.35);
		double sx = rng_range(&s, 0, W), sy = rng_range(&s, 0, H), sr = rng_range(&s, 300, 700);
		for (int y = 0; y < H; y++) {
			uint8_t *row = image_u8_row(&scene, y);
			for (int x = 0; x < W; x++) {
				double d2 = ((x - sx) * (x - sx) + (y - sy) * (y - sy)) / (sr * sr);
				double gain = 0.8 + gx * (x - W / 2.0) / W + gy * (y - H / 2.0) / H + 0.3 * exp(-d2);
				double v = row[x] * gain + 3.0 * rng_gauss(&s);
				row[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5);
			}
		}
		snprintf(name, sizeof name, "scene-%03d.%s", n, ext);
		if (write_image(dir, name, &scene, path, sizeof path)) {
			image_u8_free(&scene);
			goto done;
		}
		fprintf(truth, "scene %s\n", path);
		for (int k = 0; k < n_place; k++) {
			if (which[k] < 0 || pl[k].scale == 0)
				continue;
			double ang = pl[k].angle * 180.0 / M_PI;
			fprintf(truth, "object %d %.3f %.3f %.3f %.4f %.3f\n", cfg.object_id_min + which[k], pl[k].x,
				pl[k].y, ang, pl[k].scale, pl[k].cover);
		}
	}
	image_u8_free(&scene);
	printf("%s: %d objects to learn (objects.txt), %d scenes with objects, %d with clutter only (truth.txt)\n",
	       dir, a->n_objects, a->n_scenes, a->n_clutter);
	rc = 0;
done:
	if (list)
		fclose(list);
	if (truth)
		fclose(truth);
	for (int k = 0; tex && k < n_tex; k++)
		image_u8_free(&tex[k]);
	free(tex);
	tree_set_free(trees);
	return rc;
}

/* ---- scoring --------------------------------------------------------------------------- */

struct truth_obj {
	int id;
	double x, y, angle, scale, cover;
	int found;
};

static double angle_diff_deg(double a, double b)
{
	double d = fmod(a - b, 360.0);
	if (d > 180)
		d -= 360;
	if (d < -180)
		d += 360;
	return fabs(d);
}

static int score_scene(struct recog *r, const char *file, struct truth_obj *t, int n_t, int verbose, int *found,
		       int *false_pos, double *sum_pos, double *max_pos, double *sum_ang, double *max_ang)
{
	struct objects_detection dets[MAX_DETS];
	int n = 0, n_kp = 0;
	if (recog_run(r, file, dets, &n, &n_kp)) {
		fprintf(stderr, "tabletrack-objects: %s: cannot recognise\n", file);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int hit = -1;
		for (int j = 0; j < n_t; j++)
			if (t[j].id == dets[i].id && !t[j].found && hypot(dets[i].x - t[j].x, dets[i].y - t[j].y) <= 10)
				hit = j;
		double ang = dets[i].angle * 180.0 / M_PI;
		if (hit < 0) {
			(*false_pos)++;
			printf("false: %s: ID %d at %.1f %.1f angle %.1f scale %.2f, %d inliers\n", file, dets[i].id,
			       (double)dets[i].x, (double)dets[i].y, ang, (double)dets[i].scale, dets[i].n_inliers);
			continue;
		}
		t[hit].found = 1;
		(*found)++;
		double pe = hypot(dets[i].x - t[hit].x, dets[i].y - t[hit].y), ae = angle_diff_deg(ang, t[hit].angle);
		*sum_pos += pe;
		*sum_ang += ae;
		*max_pos = pe > *max_pos ? pe : *max_pos;
		*max_ang = ae > *max_ang ? ae : *max_ang;
		if (verbose)
			printf("found: %s: ID %d position error %.2f px, angle error %.2f deg, scale %.2f, covered "
			       "%.0f%%, %d inliers of %d matches\n",
			       file, t[hit].id, pe, ae, t[hit].scale, 100 * t[hit].cover, dets[i].n_inliers,
			       dets[i].n_matches);
	}
	for (int j = 0; j < n_t; j++)
		if (!t[j].found)
			printf("missed: %s: ID %d at %.1f %.1f angle %.1f scale %.2f covered %.0f%% (%d keypoints, %d "
			       "matches)\n",
			       file, t[j].id, t[j].x, t[j].y, t[j].angle, t[j].scale, 100 * t[j].cover, n_kp,
			       objects_recogniser_last_matches(r->rec));
	return 0;
}

static int cmd_score(const struct args *a)
{
	if (a->n_pos != 1) {
		usage();
		return 2;
	}
	char path[1024], line[1024], scene[1024] = "";
	snprintf(path, sizeof path, "%s/truth.txt", a->pos[0]);
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 1;
	}
	struct recog r;
	if (recog_open(&r, a->library)) {
		recog_close(&r);
		fclose(f);
		return 1;
	}
	struct truth_obj t[16];
	int n_t = 0, n_truth = 0, found = 0, false_pos = 0, n_scenes = 0, rc = 0;
	double sum_pos = 0, max_pos = 0, sum_ang = 0, max_ang = 0;
	for (int more = 1; more;) {
		more = fgets(line, sizeof line, f) != NULL;
		if (!more || strncmp(line, "scene ", 6) == 0) {
			if (scene[0]) {
				if (score_scene(&r, scene, t, n_t, a->verbose, &found, &false_pos, &sum_pos, &max_pos,
						&sum_ang, &max_ang))
					rc = 1;
				n_scenes++;
				n_truth += n_t;
			}
			if (more)
				snprintf(scene, sizeof scene, "%s", line + 6);
			scene[strcspn(scene, "\r\n")] = 0;
			n_t = 0;
		} else if (n_t < 16 && sscanf(line, "object %d %lf %lf %lf %lf %lf", &t[n_t].id, &t[n_t].x, &t[n_t].y,
					      &t[n_t].angle, &t[n_t].scale, &t[n_t].cover) == 6) {
			t[n_t].found = 0;
			n_t++;
		}
	}
	fclose(f);
	recog_close(&r);
	printf("objects: %d scenes, recall %.3f (%d of %d), false recognitions %d, position error mean %.2f max "
	       "%.2f px, angle error mean %.2f max %.2f deg\n",
	       n_scenes, n_truth ? (double)found / n_truth : 0.0, found, n_truth, false_pos,
	       found ? sum_pos / found : 0.0, max_pos, found ? sum_ang / found : 0.0, max_ang);
	return rc;
}

int main(int argc, char **argv)
{
	struct args a;
	if (parse_args(argc, argv, &a)) {
		usage();
		return 2;
	}
	if (strcmp(a.cmd, "learn") == 0)
		return cmd_learn(&a);
	if (strcmp(a.cmd, "list") == 0)
		return cmd_list(&a);
	if (strcmp(a.cmd, "remove") == 0)
		return cmd_remove(&a);
	if (strcmp(a.cmd, "check") == 0)
		return cmd_check(&a);
	if (strcmp(a.cmd, "synth") == 0)
		return cmd_synth(&a);
	if (strcmp(a.cmd, "score") == 0)
		return cmd_score(&a);
	usage();
	return 2;
}
