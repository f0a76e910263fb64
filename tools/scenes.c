/*
 * tabletrack-scenes - synthetic camera frames with known truth.
 *
 *   tabletrack-scenes -o DIR [--trees SET.trees] [--frames N] [--size W:H]
 *       [--fids N] [--fid-size MIN:MAX] [--fingers N] [--finger-r R]
 *       [--blur SIGMA] [--noise SIGMA] [--light L] [--contrast C]
 *       [--motion PX] [--jpeg Q] [--clutter N] [--move PX] [--seed S]
 *       [--format png|pgm]
 *
 * Writes DIR/frame_NNNNN.png and DIR/truth.json in the format of
 * ../shared/spec/testing.md §2: the symbols' centres and angles are the
 * renderer's truth (amoeba.md §7), fingers are bright round blobs of radius
 * r. Everything is deterministic per seed.
 *
 * A frame is made like a camera would see a lit table: the table's
 * reflectance (grey), printed cards (paper and ink slightly off white and
 * black), distractor shapes (ellipses, strokes, rings) and fingers; then
 * uneven light (a radial fall-off around a random hot spot plus a linear
 * gradient), a contrast squeeze around mid-grey, a motion streak along a
 * random direction, Gaussian blur, Gaussian noise, and optionally a JPEG
 * round trip. Without --move each frame is a fresh random layout; with
 * --move PX symbols and fingers persist and drift about PX pixels a frame
 * (bouncing off each other and the edges), which is what tracker tests need.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>

#include "../src/core/err.h"
#include "../src/core/image.h"
#include "../src/core/image_io.h"
#include "../src/fiducial/render.h"
#include "common/treefile.h"

#define MAX_OBJECTS 512

struct params {
	const char *out, *trees, *format;
	int w, h, frames, fids, fingers, clutter, jpeg;
	float size_min, size_max, finger_r, blur, noise, light, contrast, motion, move;
	unsigned long long seed;
};

struct object {
	int kind;        /* 0 symbol, 1 finger */
	int id;
	float x, y;      /* card centre / finger centre */
	float r;         /* exclusion radius */
	float size, angle, vx, vy, va;
	float grey;      /* finger brightness */
};

/* ---- random numbers (splitmix64: tiny, good, reproducible everywhere) ---- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static float rng_range(uint64_t *s, float lo, float hi)
{
	return lo + (hi - lo) * (float)rng_uniform(s);
}

static double rng_gauss(uint64_t *s)
{
	double u = rng_uniform(s), v = rng_uniform(s);
	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* ---- shapes ---------------------------------------------------------------- */

static int fits(const struct object *objs, int n, int skip, float x, float y, float r,
		const struct params *p)
{
	if (x - r < 2 || y - r < 2 || x + r > (float)p->w - 3 || y + r > (float)p->h - 3)
		return 0;
	for (int i = 0; i < n; i++)
		if (i != skip && hypotf(objs[i].x - x, objs[i].y - y) < objs[i].r + r + 3.0f)
			return 0;
	return 1;
}

/* Paints a shape given by an inside test with 3 x 3 supersampling. */
typedef int (*inside_fn)(const float *shape, float x, float y);

static void paint(struct image_u8 *img, const float *shape, inside_fn inside, float bx0, float by0,
		  float bx1, float by1, float grey)
{
	int x0 = (int)floorf(bx0) - 1, y0 = (int)floorf(by0) - 1;
	int x1 = (int)ceilf(bx1) + 1, y1 = (int)ceilf(by1) + 1;
	x0 = x0 < 0 ? 0 : x0;
	y0 = y0 < 0 ? 0 : y0;
	x1 = x1 > img->width - 1 ? img->width - 1 : x1;
	y1 = y1 > img->height - 1 ? img->height - 1 : y1;
	for (int y = y0; y <= y1; y++) {
		uint8_t *row = image_u8_row(img, y);
		for (int x = x0; x <= x1; x++) {
			int hit = 0;
			for (int j = 0; j < 3; j++)
				for (int i = 0; i < 3; i++)
					hit += inside(shape, (float)x + ((float)i - 1.0f) / 3.0f,
						      (float)y + ((float)j - 1.0f) / 3.0f);
			if (hit) {
				float c = (float)hit / 9.0f;
				row[x] = (uint8_t)lrintf((float)row[x] * (1.0f - c) + grey * c);
			}
		}
	}
}

/* shape: cx, cy, a, b, angle */
static int inside_ellipse(const float *s, float x, float y)
{
	float dx = x - s[0], dy = y - s[1], c = cosf(s[4]), sn = sinf(s[4]);
	float u = (dx * c + dy * sn) / s[2], v = (-dx * sn + dy * c) / s[3];
	return u * u + v * v <= 1.0f;
}

/* shape: x0, y0, x1, y1, half width */
static int inside_stroke(const float *s, float x, float y)
{
	float dx = s[2] - s[0], dy = s[3] - s[1];
	float t = ((x - s[0]) * dx + (y - s[1]) * dy) / (dx * dx + dy * dy + 1e-9f);
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	return hypotf(x - s[0] - t * dx, y - s[1] - t * dy) <= s[4];
}

/* shape: cx, cy, r_in, r_out */
static int inside_ring(const float *s, float x, float y)
{
	float d = hypotf(x - s[0], y - s[1]);
	return d >= s[2] && d <= s[3];
}

static void draw_clutter(struct image_u8 *img, uint64_t *rng, const struct object *objs, int n,
			 const struct params *p)
{
	for (int k = 0; k < p->clutter; k++) {
		float grey = rng_uniform(rng) < 0.5 ? rng_range(rng, 15, 80) : rng_range(rng, 170, 245);
		int kind = (int)(rng_uniform(rng) * 3.0);
		for (int tries = 0; tries < 50; tries++) {
			float x = rng_range(rng, 0, (float)p->w), y = rng_range(rng, 0, (float)p->h);
			float size = rng_range(rng, 6, 40);
			int clear = 1;
			for (int i = 0; i < n && clear; i++)
				if (hypotf(objs[i].x - x, objs[i].y - y) < objs[i].r + size + 3)
					clear = 0;
			if (!clear)
				continue;
			if (kind == 0) {
				float s[5] = {x, y, size, size * rng_range(rng, 0.3f, 1.0f),
					      rng_range(rng, 0, 3.1416f)};
				paint(img, s, inside_ellipse, x - size, y - size, x + size, y + size, grey);
			} else if (kind == 1) {
				float a = rng_range(rng, 0, 6.2832f);
				float s[5] = {x - size * cosf(a), y - size * sinf(a), x + size * cosf(a),
					      y + size * sinf(a), rng_range(rng, 1.5f, 5.0f)};
				paint(img, s, inside_stroke, x - size - 5, y - size - 5, x + size + 5,
				      y + size + 5, grey);
			} else {
				float s[4] = {x, y, size * rng_range(rng, 0.4f, 0.8f), size};
				paint(img, s, inside_ring, x - size, y - size, x + size, y + size, grey);
			}
			break;
		}
	}
}

/* ---- camera effects ---------------------------------------------------- */

/* One pass of the 2r+1 tap kernel k along a line of n samples `step` apart
 * (a row: 1, a column: the width), the edge sample repeated past either end. */
static void convolve_line(const float *src, float *dst, int n, int step, const float *k, int r)
{
	for (int x = 0; x < n; x++) {
		float a = 0;
		for (int i = -r; i <= r; i++) {
			int xx = x + i < 0 ? 0 : x + i >= n ? n - 1 : x + i;
			a += k[i + r] * src[(size_t)xx * step];
		}
		dst[(size_t)x * step] = a;
	}
}

static void blur_gauss(float *img, float *tmp, int w, int h, float sigma)
{
	if (sigma <= 0.05f)
		return;
	int r = (int)ceilf(3.0f * sigma);
	if (r > 64)
		r = 64;
	float k[129], sum = 0;
	for (int i = -r; i <= r; i++)
		sum += k[i + r] = expf(-0.5f * (float)(i * i) / (sigma * sigma));
	for (int i = 0; i <= 2 * r; i++)
		k[i] /= sum;
	for (int y = 0; y < h; y++)
		convolve_line(img + (size_t)y * w, tmp + (size_t)y * w, w, 1, k, r);
	for (int x = 0; x < w; x++)
		convolve_line(tmp + x, img + x, h, w, k, r);
}

static float sample_clamped(const float *img, int w, int h, float x, float y)
{
	x = x < 0 ? 0 : x > (float)(w - 1) ? (float)(w - 1) : x;
	y = y < 0 ? 0 : y > (float)(h - 1) ? (float)(h - 1) : y;
	int x0 = (int)x, y0 = (int)y;
	int x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
	float fx = x - (float)x0, fy = y - (float)y0;
	float a = img[y0 * w + x0] * (1 - fx) + img[y0 * w + x1] * fx;
	float b = img[y1 * w + x0] * (1 - fx) + img[y1 * w + x1] * fx;
	return a * (1 - fy) + b * fy;
}

/* A streak of length len along angle a: the mean of the image over the
 * segment, as a moving camera or object smears it in one exposure. */
static void blur_motion(float *img, float *tmp, int w, int h, float len, float a)
{
	if (len < 0.5f)
		return;
	int n = (int)ceilf(len * 2.0f) + 1;
	float dx = cosf(a), dy = sinf(a);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			float s = 0;
			for (int i = 0; i < n; i++) {
				float t = ((float)i / (float)(n - 1) - 0.5f) * len;
				s += sample_clamped(img, w, h, (float)x + t * dx, (float)y + t * dy);
			}
			tmp[y * w + x] = s / (float)n;
		}
	memcpy(img, tmp, sizeof(float) * (size_t)w * (size_t)h);
}

static int jpeg_roundtrip(struct image_u8 *img, int quality)
{
	tjhandle c = tjInitCompress(), d = tjInitDecompress();
	unsigned char *buf = NULL;
	unsigned long len = 0;
	int rc = ERR_FORMAT;
	if (!c || !d)
		goto done;
	if (tjCompress2(c, img->data, img->width, img->stride, img->height, TJPF_GRAY, &buf, &len,
			TJSAMP_GRAY, quality, TJFLAG_ACCURATEDCT))
		goto done;
	if (tjDecompress2(d, buf, len, img->data, img->width, img->stride, img->height, TJPF_GRAY,
			  TJFLAG_ACCURATEDCT))
		goto done;
	rc = 0;
done:
	if (buf)
		tjFree(buf);
	if (c)
		tjDestroy(c);
	if (d)
		tjDestroy(d);
	return rc;
}

/* ---- scene --------------------------------------------------------------- */

static void place_objects(struct object *objs, int *n_objs, uint64_t *rng, int n_ids,
			  const struct params *p)
{
	int n = 0;
	int *ids = malloc(sizeof(int) * (size_t)n_ids);
	for (int i = 0; i < n_ids && ids; i++)
		ids[i] = i;
	for (int k = 0; k < p->fids && n < MAX_OBJECTS; k++) {
		struct object o = {0};
		/* Without replacement while IDs last, so a frame shows distinct IDs. */
		int pick = k < n_ids ? k + (int)(rng_uniform(rng) * (double)(n_ids - k)) : 0;
		if (ids && k < n_ids) {
			int t = ids[k];
			ids[k] = ids[pick];
			ids[pick] = t;
			o.id = ids[k];
		} else {
			o.id = (int)(rng_uniform(rng) * n_ids);
		}
		o.size = rng_range(rng, p->size_min, p->size_max);
		o.angle = rng_range(rng, 0, 6.2831853f);
		o.r = o.size * 0.7072f;
		float sp = p->move * rng_range(rng, 0.5f, 1.0f), dir = rng_range(rng, 0, 6.2832f);
		o.vx = sp * cosf(dir);
		o.vy = sp * sinf(dir);
		o.va = p->move > 0 ? rng_range(rng, -1.0f, 1.0f) * p->move / o.size : 0;
		for (int tries = 0; tries < 500; tries++) {
			o.x = rng_range(rng, o.r, (float)p->w - o.r);
			o.y = rng_range(rng, o.r, (float)p->h - o.r);
			if (fits(objs, n, -1, o.x, o.y, o.r, p)) {
				objs[n++] = o;
				break;
			}
		}
	}
	for (int k = 0; k < p->fingers && n < MAX_OBJECTS; k++) {
		struct object o = {.kind = 1, .id = -1};
		o.r = p->finger_r * rng_range(rng, 0.8f, 1.2f);
		o.grey = rng_range(rng, 200, 250);
		float sp = p->move * rng_range(rng, 0.5f, 1.5f), dir = rng_range(rng, 0, 6.2832f);
		o.vx = sp * cosf(dir);
		o.vy = sp * sinf(dir);
		for (int tries = 0; tries < 500; tries++) {
			o.x = rng_range(rng, o.r, (float)p->w - o.r);
			o.y = rng_range(rng, o.r, (float)p->h - o.r);
			if (fits(objs, n, -1, o.x, o.y, o.r + 2, p)) {
				objs[n++] = o;
				break;
			}
		}
	}
	free(ids);
	*n_objs = n;
}

static void move_objects(struct object *objs, int n, const struct params *p)
{
	for (int i = 0; i < n; i++) {
		struct object *o = &objs[i];
		float nx = o->x + o->vx, ny = o->y + o->vy;
		float pad = o->kind ? 2.0f : 0.0f;
		if (fits(objs, n, i, nx, ny, o->r + pad, p)) {
			o->x = nx;
			o->y = ny;
		} else {
			o->vx = -o->vx;
			o->vy = -o->vy;
		}
		o->angle = render_wrap_angle(o->angle + o->va);
	}
}

static int parse_pair(const char *s, float *a, float *b)
{
	char *end;
	*a = strtof(s, &end);
	if (*end != ':' && *end != 'x')
		return -1;
	*b = strtof(end + 1, &end);
	return *end || !(*a > 0) || !(*b >= *a) ? -1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tabletrack-scenes -o DIR [options]\n"
		"  --trees SET.trees     symbols to draw (default fiducials/tabletrack.trees)\n"
		"  --frames N            frames (default 24)\n"
		"  --size WxH            frame size (default 640x480)\n"
		"  --fids N              symbols a frame (default 7)\n"
		"  --fid-size MIN:MAX    card side range, px (default 60:110)\n"
		"  --fingers N           fingers a frame (default 5)\n"
		"  --finger-r R          finger radius, px (default 9)\n"
		"  --blur SIGMA          Gaussian blur, px (default 0.7)\n"
		"  --noise SIGMA         Gaussian noise, grey levels (default 3)\n"
		"  --light L             uneven light, 0..1 (default 0.3)\n"
		"  --contrast C          contrast factor (default 1)\n"
		"  --motion PX           motion streak length, px (default 0)\n"
		"  --jpeg Q              JPEG round trip at quality Q, 0 = none (default 0)\n"
		"  --clutter N           distractor shapes a frame (default 0)\n"
		"  --move PX             persistent objects drifting PX px a frame (default 0:\n"
		"                        a fresh layout every frame)\n"
		"  --seed S              random seed (default 1)\n"
		"  --format png|pgm      frame file format (default png)\n");
}

static int parse_args(int argc, char **argv, struct params *p)
{
	*p = (struct params){.trees = "fiducials/tabletrack.trees", .format = "png", .w = 640,
			     .h = 480, .frames = 24, .fids = 7, .fingers = 5, .size_min = 60,
			     .size_max = 110, .finger_r = 9, .blur = 0.7f, .noise = 3,
			     .light = 0.3f, .contrast = 1, .seed = 1};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		}
		if (!v)
			goto bad;
		i++;
		char *end = NULL;
		float fa, fb;
		if (!strcmp(a, "-o"))
			p->out = v;
		else if (!strcmp(a, "--trees"))
			p->trees = v;
		else if (!strcmp(a, "--format"))
			p->format = v;
		else if (!strcmp(a, "--size")) {
			if (parse_pair(v, &fa, &fb) && !(sscanf(v, "%fx%f", &fa, &fb) == 2))
				goto bad;
			p->w = (int)fa;
			p->h = (int)fb;
		} else if (!strcmp(a, "--fid-size")) {
			if (parse_pair(v, &fa, &fb))
				goto bad;
			p->size_min = fa;
			p->size_max = fb;
		} else if (!strcmp(a, "--seed"))
			p->seed = strtoull(v, &end, 10);
		else {
			double d = strtod(v, &end);
			if (!strcmp(a, "--frames"))
				p->frames = (int)d;
			else if (!strcmp(a, "--fids"))
				p->fids = (int)d;
			else if (!strcmp(a, "--fingers"))
				p->fingers = (int)d;
			else if (!strcmp(a, "--finger-r"))
				p->finger_r = (float)d;
			else if (!strcmp(a, "--blur"))
				p->blur = (float)d;
			else if (!strcmp(a, "--noise"))
				p->noise = (float)d;
			else if (!strcmp(a, "--light"))
				p->light = (float)d;
			else if (!strcmp(a, "--contrast"))
				p->contrast = (float)d;
			else if (!strcmp(a, "--motion"))
				p->motion = (float)d;
			else if (!strcmp(a, "--jpeg"))
				p->jpeg = (int)d;
			else if (!strcmp(a, "--clutter"))
				p->clutter = (int)d;
			else if (!strcmp(a, "--move"))
				p->move = (float)d;
			else
				goto bad;
		}
		if (end && *end)
			goto bad;
		continue;
bad:
		fprintf(stderr, "tabletrack-scenes: bad option or value: %s %s\n", a, v ? v : "");
		usage(stderr);
		return -1;
	}
	if (!p->out) {
		usage(stderr);
		return -1;
	}
	if (p->w < 16 || p->h < 16 || p->w > IMAGE_MAX_SIDE || p->h > IMAGE_MAX_SIDE ||
	    p->frames < 1 || p->frames > 100000 || p->fids < 0 || p->fids > 256 ||
	    p->fingers < 0 || p->fingers > 200 || p->clutter < 0 || p->clutter > 10000 ||
	    p->finger_r <= 0 || p->blur < 0 || p->blur > 20 || p->noise < 0 || p->light < 0 ||
	    p->light > 1 || p->contrast <= 0 || p->motion < 0 || p->motion > 100 || p->jpeg < 0 ||
	    p->jpeg > 100 || p->move < 0 || (strcmp(p->format, "png") && strcmp(p->format, "pgm"))) {
		fprintf(stderr, "tabletrack-scenes: a value is out of range (see --help)\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct params p;
	if (parse_args(argc, argv, &p))
		return 2;
	struct treefile tf;
	if (treefile_read(p.trees, &tf))
		return 1;
	int rc = 1;
	struct render_layout *layouts = NULL;
	float *f = NULL, *tmp = NULL;
	struct image_u8 img = {0};
	FILE *truth = NULL;
	if (tf.n == 0 && p.fids > 0) {
		fprintf(stderr, "tabletrack-scenes: %s has no symbols\n", p.trees);
		goto done;
	}
	layouts = calloc((size_t)tf.n + 1, sizeof *layouts);
	if (!layouts)
		goto done;
	for (int i = 0; i < tf.n; i++) {
		int e = render_layout_tree(tf.tokens[i], &layouts[i]);
		if (e) {
			fprintf(stderr, "tabletrack-scenes: %s:%d: cannot draw '%s' (%s)\n", p.trees,
				tf.lines[i], tf.tokens[i], err_str(e));
			goto done;
		}
	}
	if (mkdir(p.out, 0777) && errno != EEXIST) {
		fprintf(stderr, "tabletrack-scenes: %s: %s\n", p.out, strerror(errno));
		goto done;
	}
	size_t npx = (size_t)p.w * (size_t)p.h;
	f = malloc(npx * sizeof *f);
	tmp = malloc(npx * sizeof *tmp);
	if (!f || !tmp || image_u8_alloc(&img, p.w, p.h))
		goto done;
	char path[4096];
	snprintf(path, sizeof path, "%s/truth.json", p.out);
	truth = fopen(path, "w");
	if (!truth) {
		fprintf(stderr, "tabletrack-scenes: %s: %s\n", path, strerror(errno));
		goto done;
	}
	fprintf(truth,
		"{\"w\": %d, \"h\": %d, \"params\": {\"trees\": \"%s\", \"frames\": %d, \"fids\": %d, "
		"\"size\": \"%g:%g\", \"fingers\": %d, \"finger_r\": %g, \"blur\": %g, \"noise\": %g, "
		"\"light\": %g, \"contrast\": %g, \"motion\": %g, \"jpeg\": %d, \"clutter\": %d, "
		"\"move\": %g, \"seed\": %llu},\n \"frames\": [",
		p.w, p.h, p.trees, p.frames, p.fids, (double)p.size_min, (double)p.size_max,
		p.fingers, (double)p.finger_r, (double)p.blur, (double)p.noise, (double)p.light,
		(double)p.contrast, (double)p.motion, p.jpeg, p.clutter, (double)p.move, p.seed);

	uint64_t rng = p.seed * 0x2545f4914f6cdd1dull + 1;
	struct object objs[MAX_OBJECTS];
	int n_objs = 0;
	struct render_options ro;
	render_options_default(&ro);
	for (int fr = 0; fr < p.frames; fr++) {
		if (fr == 0 || p.move <= 0)
			place_objects(objs, &n_objs, &rng, tf.n, &p);
		else
			move_objects(objs, n_objs, &p);
		uint8_t table = (uint8_t)lrintf(rng_range(&rng, 105, 135));
		memset(img.data, table, (size_t)img.stride * (size_t)img.height);
		draw_clutter(&img, &rng, objs, n_objs, &p);
		fprintf(truth, "%s\n  {\"frame\": %d, \"fiducials\": [", fr ? "," : "", fr);
		int first = 1;
		for (int i = 0; i < n_objs; i++) {
			const struct object *o = &objs[i];
			if (o->kind != 0)
				continue;
			ro.black = (uint8_t)lrintf(rng_range(&rng, 10, 35));
			ro.white = (uint8_t)lrintf(rng_range(&rng, 225, 250));
			const struct render_layout *l = &layouts[o->id];
			render_layout_draw(l, o->size, o->angle, o->x, o->y, &img, &ro);
			float tx, ty, ta;
			render_layout_truth(l, o->size, o->angle, o->x, o->y, &tx, &ty, &ta);
			fprintf(truth,
				"%s\n    {\"id\": %d, \"x\": %.4f, \"y\": %.4f, \"angle\": %.6f, "
				"\"size\": %.4f}",
				first ? "" : ",", o->id, (double)tx, (double)ty, (double)ta,
				(double)o->size);
			first = 0;
		}
		fprintf(truth, "],\n   \"fingers\": [");
		first = 1;
		for (int i = 0; i < n_objs; i++) {
			const struct object *o = &objs[i];
			if (o->kind != 1)
				continue;
			float s[5] = {o->x, o->y, o->r, o->r, 0};
			paint(&img, s, inside_ellipse, o->x - o->r, o->y - o->r, o->x + o->r,
			      o->y + o->r, o->grey);
			fprintf(truth, "%s{\"x\": %.4f, \"y\": %.4f, \"r\": %.4f}", first ? "" : ", ",
				(double)o->x, (double)o->y, (double)o->r);
			first = 0;
		}
		fprintf(truth, "]}");

		/* Light and contrast act on reflectance, before the lens blurs. */
		float hx = rng_range(&rng, 0.3f, 0.7f) * (float)p.w;
		float hy = rng_range(&rng, 0.3f, 0.7f) * (float)p.h;
		float ga = rng_range(&rng, 0, 6.2832f), gx = cosf(ga), gy = sinf(ga);
		float diag = hypotf((float)p.w, (float)p.h) * 0.5f;
		for (int y = 0; y < p.h; y++) {
			const uint8_t *row = image_u8_row(&img, y);
			for (int x = 0; x < p.w; x++) {
				float rx = ((float)x - hx) / diag, ry = ((float)y - hy) / diag;
				float lin = (((float)x / (float)p.w - 0.5f) * gx +
					     ((float)y / (float)p.h - 0.5f) * gy);
				float illum = 1.0f - p.light * (0.7f * (rx * rx + ry * ry) + 0.6f * lin);
				if (illum < 0.05f)
					illum = 0.05f;
				float v = 128.0f + ((float)row[x] - 128.0f) * p.contrast;
				f[(size_t)y * (size_t)p.w + (size_t)x] = v * illum;
			}
		}
		blur_motion(f, tmp, p.w, p.h, p.motion, rng_range(&rng, 0, 3.1416f));
		blur_gauss(f, tmp, p.w, p.h, p.blur);
		for (int y = 0; y < p.h; y++) {
			uint8_t *row = image_u8_row(&img, y);
			for (int x = 0; x < p.w; x++) {
				float v = f[(size_t)y * (size_t)p.w + (size_t)x];
				if (p.noise > 0)
					v += p.noise * (float)rng_gauss(&rng);
				int q = (int)lrintf(v);
				row[x] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
			}
		}
		if (p.jpeg > 0 && jpeg_roundtrip(&img, p.jpeg)) {
			fprintf(stderr, "tabletrack-scenes: JPEG round trip failed\n");
			goto done;
		}
		snprintf(path, sizeof path, "%s/frame_%05d.%s", p.out, fr, p.format);
		int e = image_write(path, &img);
		if (e) {
			fprintf(stderr, "tabletrack-scenes: %s: %s\n", path, err_str(e));
			goto done;
		}
	}
	fprintf(truth, "\n ]}\n");
	if (fclose(truth)) {
		truth = NULL;
		fprintf(stderr, "tabletrack-scenes: truth.json: write failed\n");
		goto done;
	}
	truth = NULL;
	rc = 0;
done:
	if (truth)
		fclose(truth);
	image_u8_free(&img);
	free(f);
	free(tmp);
	free(layouts);
	treefile_free(&tf);
	return rc;
}
