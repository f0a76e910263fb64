/*
 * tabletrack-scenes - synthetic camera frames with known truth.
 *
 *   tabletrack-scenes -o DIR [--preset NAME] [--trees SET.trees] [--frames N]
 *       [--size W:H] [--fids N] [--fid-size MIN:MAX] [--fingers N]
 *       [--finger-r R] [--blur SIGMA] [--noise SIGMA] [--shot K] [--light L]
 *       [--contrast C] [--motion PX] [--defocus R] [--jpeg Q] [--clutter N]
 *       [--move PX] [--tilt DEG] [--fov DEG] [--k1 K] [--k2 K]
 *       [--vignette V] [--hotspots N] [--hotspot-gain G] [--shadows N]
 *       [--hands N] [--penumbra PX] [--dark MIN:MAX] [--dot-gain PX]
 *       [--paper A] [--exposure E] [--gamma G] [--sharpen A] [--seed S]
 *       [--format png|pgm] [--drawings DIR]
 *
 * Writes DIR/frame_NNNNN.png and DIR/truth.json in the format of
 * ../shared/spec/testing.md §2: the symbols' centres and angles are the
 * renderer's truth (amoeba.md §7), fingers are bright round blobs of radius
 * r; with --drawings DIR each symbol is drawn from its printed picture,
 * DIR/fid_NNN.png (common/drawing.h), instead of its tree's layout.
 * Everything is deterministic per seed. --help lists the presets: named
 * option sets for harsh, real-room conditions (`tilt`, `barrel`, `uneven`,
 * `shadow`, `oblique`, `hands`, `small`, `motion`, `blur`, `room`, and `sheet`,
 * `sheet-half`, `sheet-full`: a printed sheet of IDs 0-11 photographed at
 * an angle in sunlight, as --sheet draws it, at three sizes); options after
 * --preset override it.
 *
 * A frame is made like a camera would see a lit table: the table's
 * reflectance (grey), printed cards (paper and ink slightly off white and
 * black), distractor shapes (ellipses, strokes, rings) and fingers; then
 * ink spreading (--dot-gain: the print's black grows by a fraction of a
 * pixel), paper texture (--paper: smooth multiplicative noise), hands
 * (--hands: bright palm-and-fingers shapes whose pointing finger lies on a
 * symbol, each casting a shadow); then the light: a radial fall-off around
 * a random point plus a linear gradient (--light), vignetting about the
 * image centre (--vignette), hard shadows (--shadows: hand shapes, or
 * straight-edged bars, placed where their edge crosses the most symbols,
 * darkened by a factor drawn from --dark with a linear penumbra up to
 * --penumbra px wide), a contrast squeeze around mid-grey and additive IR
 * hot spots (--hotspots: Gaussian glare); then a motion streak along a
 * random direction, a defocus disc, Gaussian blur, Gaussian sensor noise
 * plus shot noise of variance K x signal (--shot) after the camera's
 * processing (--exposure gain and clipping, --gamma tone curve, --sharpen
 * unsharp mask), and optionally a JPEG round trip. Without --move each
 * frame is a fresh random layout (and a fresh camera tilt); with --move PX
 * symbols and fingers persist and drift
 * about PX pixels a frame (bouncing off each other and the edges), which is
 * what tracker tests need.
 *
 * Geometry. The table is seen through a pinhole camera tilted by a random
 * angle up to --tilt degrees about a random axis in the image plane (a
 * homography; --fov is the horizontal field of view that sets the focal
 * length), then through a radial lens. Each symbol's size is drawn in the
 * image (the square root of its mapped area), so a tilt changes the shapes,
 * not the size range. The lens (--k1, --k2: barrel when negative) is the
 * division model on the camera image: a camera pixel d sees the ideal
 * (undistorted) point u = c + (d - c) F / (1 + k1 r^2 + k2 r^4), c the image
 * centre, r = |d - c| / (half the image diagonal), F the constant that keeps
 * the midpoints of the left and right edges in place, so the whole ideal
 * frame is in view (a user fits the table in the picture) and the corners
 * see past it. Truth is in ideal coordinates, which is what a calibrated
 * tracker reports: with a lens the tool writes DIR/grid.txt, a calibration
 * grid for `tabletrack --grid` (src/track/calib.h) that undoes the lens.
 * The tracker measures a symbol in the camera image, so truth is computed
 * the same way: leaf centres mapped into the camera image, their weighted
 * centres and angle there (amoeba.md §7), then the centre mapped back
 * through the lens and the angle as the direction of its mapped "up" step.
 * Without a lens the two images are one. "size" is the mapped card width
 * (distance between the mapped midpoints of the card's left and right
 * edges, ideal pixels).
 *
 * Occlusion. A symbol any part of whose ring or its inside lies under a hand
 * has "covered" (the fraction of that square under the hand, sampled on a
 * 20 x 20 grid) and "occluded": true in truth.json: its tree is broken, no
 * tracker can decode it from one frame, and tests/tuio_check.py leaves it
 * out of recall (a report of it is neither found nor a false positive).
 * Fingers never overlap symbols; hands may cover fingers (presets with
 * hands draw no fingers).
 *
 * Shadow edges. A symbol not occluded whose ring square a hard shadow's
 * edge crosses (a sample of that square within the penumbra, others on
 * both sides of it: hand_cover's edge test, for every shadow, a visible
 * hand's shadow too) has "shadow_edge": true in truth.json, so that
 * tests/tuio_check.py can give the recall of exactly those symbols (issue
 * 13's target for them), not only of the sets that hold them.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if TT_HAVE_JPEG
#include <turbojpeg.h>
#endif

#include "../src/core/err.h"
#include "../src/core/image.h"
#include "../src/core/image_io.h"
#include "../src/fiducial/render.h"
#include "../src/fiducial/trees.h"
#include "common/drawing.h"
#include "common/treefile.h"

#define MAX_OBJECTS 512
#define MAX_HANDS 16
#define HAND_SEGS 7
#define CARD_MAX 1024
#define GRID_SIDE 33
#define COVER_SAMPLES 20

struct params {
	const char *out, *trees, *format, *preset, *drawings;
	int w, h, frames, fids, fingers, clutter, jpeg, hotspots, shadows, hands, di, sheet, one_light;
	float size_min, size_max, finger_r, blur, noise, light, contrast, motion, move;
	float tilt, tilt_min, fov, k1, k2, vignette, hotspot_gain, penumbra, dark_min, dark_max;
	float dot_gain, paper, defocus, shot;
	float exposure, gamma, sharpen;
	unsigned long long seed;
};

struct object {
	int kind;        /* 0 symbol, 1 finger */
	int id;
	float x, y;      /* card centre / finger centre, ideal image pixels */
	float r;         /* exclusion radius */
	float size, angle, vx, vy, va;
	float grey;      /* finger brightness */
	float tx, ty, ts; /* card centre and side on the table plane (tilt) */
};

/* Where the table's drawing lands: a homography from the table plane (T) to
 * the ideal pinhole image (U, the coordinates truth is given in), then the
 * lens to the camera image (D). See the comment at the top. */
struct camera {
	int tilted, lens;
	double h[9], hinv[9]; /* T -> U and U -> T, row-major */
	double k1, k2, cx, cy, norm, fit;
};

/* The drawing raster S of the ideal image: q samples a pixel, its sample k
 * centred at ideal x = ox + (k + 1/2) / q - 1/2. Without warp S is the
 * frame itself. */
struct view {
	int warp;
	float ox, oy, q;
};

/* A hand or a shadow-casting object: the union of round-capped strokes
 * (x0, y0, x1, y1, radius), camera pixels. */
struct hand {
	int n;
	float seg[HAND_SEGS][5];
	float dx, dy;     /* shadow offset */
	float dark, pen;  /* shadow darkening factor, penumbra width px */
	float grey;       /* reflectance of a visible hand */
	int visible;
};

/* A printed sheet (--sheet): a rectangle of paper on the table plane,
 * centre (x, y), rotated by angle, half sides hw and hh (table units). */
struct sheet {
	float x, y, angle, hw, hh, paper, ink;
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

/* ---- geometry: homography and lens --------------------------------------- */

static void mat3_mul(const double *a, const double *b, double *out)
{
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			out[i * 3 + j] = a[i * 3] * b[j] + a[i * 3 + 1] * b[3 + j] + a[i * 3 + 2] * b[6 + j];
}

static void homography_apply(const double *m, double x, double y, double *ox, double *oy)
{
	double w = m[6] * x + m[7] * y + m[8];
	*ox = (m[0] * x + m[1] * y + m[2]) / w;
	*oy = (m[3] * x + m[4] * y + m[5]) / w;
}

/* A camera rotated by `tilt` rad about the axis at angle `axis` in the image
 * plane sees the fronto-parallel view through K R K^-1 (K: focal length f,
 * principal point at the image centre). */
static void camera_tilt(struct camera *c, double tilt, double axis, double f)
{
	double ax = cos(axis), ay = sin(axis), ct = cos(tilt), st = sin(tilt);
	/* Rodrigues for a unit axis (ax, ay, 0). */
	double r[9] = {ct + ax * ax * (1 - ct), ax * ay * (1 - ct), ay * st,
		       ax * ay * (1 - ct), ct + ay * ay * (1 - ct), -ax * st,
		       -ay * st, ax * st, ct};
	double rt[9] = {r[0], r[3], r[6], r[1], r[4], r[7], r[2], r[5], r[8]};
	double k[9] = {f, 0, c->cx, 0, f, c->cy, 0, 0, 1};
	double kinv[9] = {1 / f, 0, -c->cx / f, 0, 1 / f, -c->cy / f, 0, 0, 1};
	double t[9];
	mat3_mul(k, r, t);
	mat3_mul(t, kinv, c->h);
	mat3_mul(k, rt, t);
	mat3_mul(t, kinv, c->hinv);
	c->tilted = tilt != 0;
}

static void camera_init(struct camera *c, const struct params *p)
{
	memset(c, 0, sizeof *c);
	c->cx = (p->w - 1) * 0.5;
	c->cy = (p->h - 1) * 0.5;
	c->norm = hypot(c->cx, c->cy);
	c->k1 = p->k1;
	c->k2 = p->k2;
	c->lens = p->k1 != 0 || p->k2 != 0;
	double rx2 = (c->cx / c->norm) * (c->cx / c->norm);
	c->fit = 1 + c->k1 * rx2 + c->k2 * rx2 * rx2;
	for (int i = 0; i < 9; i++)
		c->h[i] = c->hinv[i] = i % 4 == 0;
}

/* Ideal radius (units of the half diagonal) seen at camera radius r. */
static double lens_radius(const struct camera *c, double r)
{
	double r2 = r * r;
	return r * c->fit / (1 + c->k1 * r2 + c->k2 * r2 * r2);
}

static void lens_undistort(const struct camera *c, double x, double y, double *ux, double *uy)
{
	if (!c->lens) {
		*ux = x;
		*uy = y;
		return;
	}
	double dx = x - c->cx, dy = y - c->cy;
	double r = hypot(dx, dy) / c->norm;
	double g = r > 0 ? lens_radius(c, r) / r : c->fit / 1.0;
	*ux = c->cx + dx * g;
	*uy = c->cy + dy * g;
}

/* The inverse, by bisection: lens_radius rises over [0, 1.5] (checked when
 * the options are read). */
static void lens_distort(const struct camera *c, double ux, double uy, double *x, double *y)
{
	if (!c->lens) {
		*x = ux;
		*y = uy;
		return;
	}
	double dx = ux - c->cx, dy = uy - c->cy;
	double ru = hypot(dx, dy) / c->norm;
	if (ru < 1e-12) {
		*x = ux;
		*y = uy;
		return;
	}
	double lo = 0, hi = 1.5;
	for (int i = 0; i < 60; i++) {
		double mid = 0.5 * (lo + hi);
		if (lens_radius(c, mid) < ru)
			lo = mid;
		else
			hi = mid;
	}
	double s = 0.5 * (lo + hi) / ru;
	*x = c->cx + dx * s;
	*y = c->cy + dy * s;
}

static int lens_valid(const struct params *p)
{
	struct camera c;
	camera_init(&c, p);
	double prev = 0;
	for (int i = 1; i <= 300; i++) {
		double r = 1.5 * i / 300.0, r2 = r * r;
		double v = lens_radius(&c, r);
		if (1 + c.k1 * r2 + c.k2 * r2 * r2 < 0.1 || !(v > prev))
			return 0;
		prev = v;
	}
	return c.fit > 0.1;
}

/* Table point -> camera point. */
static void camera_map(const struct camera *c, double tx, double ty, double *x, double *y)
{
	double ux = tx, uy = ty;
	if (c->tilted)
		homography_apply(c->h, tx, ty, &ux, &uy);
	lens_distort(c, ux, uy, x, y);
}

/* Writes the grid that maps the camera image back to the ideal one: point
 * (i, j) of the regular grid over the ideal frame, normalised, and where the
 * lens shows it, normalised (src/track/calib.h). */
static int write_grid(const struct camera *c, const struct params *p, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return ERR_IO;
	fprintf(f, "tabletrack-grid 1\n# radial lens k1 %g k2 %g (tabletrack-scenes)\n%d %d\n",
		(double)p->k1, (double)p->k2, GRID_SIDE, GRID_SIDE);
	for (int j = 0; j < GRID_SIDE; j++)
		for (int i = 0; i < GRID_SIDE; i++) {
			double x, y;
			lens_distort(c, (double)i / (GRID_SIDE - 1) * p->w,
				     (double)j / (GRID_SIDE - 1) * p->h, &x, &y);
			fprintf(f, "%.7f %.7f\n", x / p->w, y / p->h);
		}
	return fclose(f) ? ERR_IO : 0;
}

static float view_x(const struct view *v, float x)
{
	return v->warp ? (x + 0.5f - v->ox) * v->q - 0.5f : x;
}

static float view_y(const struct view *v, float y)
{
	return v->warp ? (y + 0.5f - v->oy) * v->q - 0.5f : y;
}

static float view_len(const struct view *v, float d)
{
	return v->warp ? d * v->q : d;
}

/* Card pose on the table for the symbol's ideal centre and image size: the
 * side that gives the mapped card the wanted area. Returns the radius of
 * the mapped card's corners around its centre (ideal pixels). */
static float symbol_pose(const struct camera *c, struct object *o)
{
	if (!c->tilted) {
		o->tx = o->x;
		o->ty = o->y;
		o->ts = o->size;
		return o->size * 0.7072f;
	}
	double tx, ty, ax, ay, bx, by, cx, cy;
	homography_apply(c->hinv, o->x, o->y, &tx, &ty);
	homography_apply(c->h, tx + 0.5, ty, &ax, &ay);
	homography_apply(c->h, tx - 0.5, ty, &bx, &by);
	homography_apply(c->h, tx, ty + 0.5, &cx, &cy);
	double ex = ax - bx, ey = ay - by;
	homography_apply(c->h, tx, ty - 0.5, &bx, &by);
	double det = fabs(ex * (cy - by) - ey * (cx - bx));
	o->tx = (float)tx;
	o->ty = (float)ty;
	o->ts = (float)(o->size / sqrt(det > 1e-12 ? det : 1e-12));
	float co = cosf(o->angle), si = sinf(o->angle), r = 0;
	for (int k = 0; k < 4; k++) {
		float lx = k & 1 ? 0.5f : -0.5f, ly = k & 2 ? 0.5f : -0.5f;
		double px, py;
		homography_apply(c->h, tx + o->ts * (lx * co - ly * si),
				 ty + o->ts * (lx * si + ly * co), &px, &py);
		float d = (float)hypot(px - o->x, py - o->y);
		r = d > r ? d : r;
	}
	return r;
}

/* What a symbol is drawn from: its tree's layout, or (--drawings) its
 * printed picture. */
struct art {
	const struct render_layout *l;
	const struct drawing *d; /* NULL: the layout */
};

static int art_draw(const struct art *a, float side, float angle, float cx, float cy, struct image_u8 *dst,
		    const struct render_options *ro)
{
	return a->d ? drawing_draw(a->d, side, angle, cx, cy, dst, ro)
		    : render_layout_draw(a->l, side, angle, cx, cy, dst, ro);
}

/* Table point of card point (lx, ly) (card units, centre 0, y down). */
static void card_point(const struct object *o, double lx, double ly, double *tx, double *ty)
{
	double co = cos(o->angle), si = sin(o->angle);
	*tx = o->tx + o->ts * (lx * co - ly * si);
	*ty = o->ty + o->ts * (lx * si + ly * co);
}

/* The layout's leaf centres mapped into the camera image: their weighted
 * centre there (cx, cy) and the angle a of the black leaves' centre to it
 * (amoeba.md §7); false (a 0) without black leaves. */
static bool leaves_centre(const struct camera *c, const struct render_layout *l, const struct object *o,
			  double *cx, double *cy, double *a)
{
	double sw = 0, sx = 0, sy = 0, bw = 0, bx = 0, by = 0;
	for (int i = 0; i < l->n_shapes; i++) {
		const struct render_shape *s = &l->shapes[i];
		if (!s->leaf)
			continue;
		double d = s->depth, w = M_PI * (d + 0.5) * (d + 0.5), tx, ty, px, py;
		card_point(o, s->x, s->y, &tx, &ty);
		camera_map(c, tx, ty, &px, &py);
		sw += w;
		sx += w * px;
		sy += w * py;
		if (!s->white) {
			bw += w;
			bx += w * px;
			by += w * py;
		}
	}
	*cx = sx / sw;
	*cy = sy / sw;
	*a = bw > 0 ? atan2(*cy - by / bw, *cx - bx / bw) - M_PI / 2 : 0;
	return bw > 0;
}

/* Truth as a calibrated tracker measures it: see the comment at the top. */
static void symbol_truth(const struct camera *c, const struct art *art,
			 const struct object *o, float *x, float *y, float *angle, float *size)
{
	const struct render_layout *l = art->l;
	if (!c->tilted && !c->lens) {
		if (art->d)
			drawing_truth(art->d, o->size, o->angle, o->x, o->y, x, y, angle);
		else
			render_layout_truth(l, o->size, o->angle, o->x, o->y, x, y, angle);
		*size = o->size;
		return;
	}
	double cx, cy, a;
	bool black = true;
	if (art->d) {
		/* A picture's leaves are not known one by one: its centre and a
		 * step towards it from the black leaves (along angle0 + pi/2) are
		 * mapped instead (over a card the mapping is nearly affine, so
		 * the two differ by a small fraction of a pixel). */
		const struct drawing *d = art->d;
		double tx, ty, px, py, qx, qy;
		card_point(o, d->centre_x, d->centre_y, &tx, &ty);
		camera_map(c, tx, ty, &px, &py);
		card_point(o, d->centre_x - 0.05 * sinf(d->angle0), d->centre_y + 0.05 * cosf(d->angle0), &tx, &ty);
		camera_map(c, tx, ty, &qx, &qy);
		cx = px;
		cy = py;
		a = atan2(qy - py, qx - px) - M_PI / 2;
	} else {
		black = leaves_centre(c, l, o, &cx, &cy, &a);
	}
	double ux, uy, vx, vy;
	lens_undistort(c, cx, cy, &ux, &uy);
	lens_undistort(c, cx + 0.05 * sin(a), cy - 0.05 * cos(a), &vx, &vy);
	*x = (float)ux;
	*y = (float)uy;
	*angle = black ? render_wrap_angle((float)atan2(vx - ux, -(vy - uy))) : 0.0f;
	double ax, ay, ex, ey;
	card_point(o, -0.5, 0, &ax, &ay);
	card_point(o, 0.5, 0, &ex, &ey);
	if (c->tilted) {
		homography_apply(c->h, ax, ay, &ax, &ay);
		homography_apply(c->h, ex, ey, &ex, &ey);
	}
	*size = (float)hypot(ex - ax, ey - ay);
}

/* Draws a tilted symbol: the flat card is rendered into `card` (on the
 * table's grey, so its edge blends), then every raster pixel the mapped
 * card covers takes the mean of 2 x 2 samples looked up through the inverse
 * homography. */
static void draw_tilted(struct image_u8 *s, const struct view *v, const struct camera *c,
			const struct art *art, const struct object *o,
			const struct render_options *ro, uint8_t table, struct image_u8 *card)
{
	float bx0 = 1e9f, by0 = 1e9f, bx1 = -1e9f, by1 = -1e9f, edge = 0, px[4], py[4];
	for (int k = 0; k < 4; k++) {
		double lx = k == 1 || k == 2 ? 0.5 : -0.5, ly = k >= 2 ? 0.5 : -0.5, tx, ty, ux, uy;
		card_point(o, lx, ly, &tx, &ty);
		homography_apply(c->h, tx, ty, &ux, &uy);
		px[k] = view_x(v, (float)ux);
		py[k] = view_y(v, (float)uy);
		bx0 = fminf(bx0, px[k]);
		by0 = fminf(by0, py[k]);
		bx1 = fmaxf(bx1, px[k]);
		by1 = fmaxf(by1, py[k]);
	}
	for (int k = 0; k < 4; k++)
		edge = fmaxf(edge, hypotf(px[(k + 1) % 4] - px[k], py[(k + 1) % 4] - py[k]));
	int side = (int)ceilf(edge * 1.5f);
	side = side < 16 ? 16 : side > CARD_MAX - 8 ? CARD_MAX - 8 : side;
	struct image_u8 cv = {side + 6, side + 6, card->stride, card->data};
	for (int y = 0; y < cv.height; y++)
		memset(image_u8_row(&cv, y), table, (size_t)cv.width);
	float mid = (float)(cv.width - 1) * 0.5f;
	art_draw(art, (float)side, 0, mid, mid, &cv, ro);
	int x0 = (int)floorf(bx0) - 1, y0 = (int)floorf(by0) - 1;
	int x1 = (int)ceilf(bx1) + 1, y1 = (int)ceilf(by1) + 1;
	image_u8_clip_box(s, &x0, &y0, &x1, &y1);
	double co = cos(o->angle), si = sin(o->angle), lim = 0.5 + 2.0 / side;
	for (int y = y0; y <= y1; y++) {
		uint8_t *row = image_u8_row(s, y);
		for (int x = x0; x <= x1; x++) {
			float sum = 0;
			for (int k = 0; k < 4; k++) {
				double sx = x + (k & 1 ? 0.25 : -0.25), sy = y + (k & 2 ? 0.25 : -0.25);
				double ux = v->ox + (sx + 0.5) / v->q - 0.5, uy = v->oy + (sy + 0.5) / v->q - 0.5;
				double tx, ty;
				homography_apply(c->hinv, ux, uy, &tx, &ty);
				double dx = tx - o->tx, dy = ty - o->ty;
				double lx = (dx * co + dy * si) / o->ts, ly = (-dx * si + dy * co) / o->ts;
				if (fabs(lx) > lim || fabs(ly) > lim)
					sum += row[x];
				else
					sum += drawing_bilinear(&cv, mid + (float)(lx * side), mid + (float)(ly * side));
			}
			row[x] = (uint8_t)lrintf(sum * 0.25f);
		}
	}
}

/* The camera image: each pixel the mean of 2 x 2 samples of the raster at
 * the ideal points the lens shows there. */
static void resample_camera(const struct image_u8 *s, const struct view *v, const struct camera *c,
			    float *f, int w, int h)
{
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			float sum = 0;
			for (int k = 0; k < 4; k++) {
				double ux, uy;
				lens_undistort(c, x + (k & 1 ? 0.25 : -0.25), y + (k & 2 ? 0.25 : -0.25),
					       &ux, &uy);
				sum += drawing_bilinear(s, view_x(v, (float)ux), view_y(v, (float)uy));
			}
			f[(size_t)y * (size_t)w + (size_t)x] = sum * 0.25f;
		}
}

/* ---- hands and shadows --------------------------------------------------- */

static float segment_distance(const float *s, float x, float y)
{
	float dx = s[2] - s[0], dy = s[3] - s[1];
	float t = ((x - s[0]) * dx + (y - s[1]) * dy) / (dx * dx + dy * dy + 1e-9f);
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	return hypotf(x - s[0] - t * dx, y - s[1] - t * dy) - s[4];
}

/* Signed distance (px, negative inside) from the hand's outline. */
static float hand_distance(const struct hand *hd, float x, float y)
{
	float d = 1e9f;
	for (int i = 0; i < hd->n; i++)
		d = fminf(d, segment_distance(hd->seg[i], x, y));
	return d;
}

static void hand_add(struct hand *hd, float ox, float oy, float c, float s, float x0, float y0,
		     float x1, float y1, float r)
{
	float *g = hd->seg[hd->n++];
	g[0] = ox + x0 * c - y0 * s;
	g[1] = oy + x0 * s + y0 * c;
	g[2] = ox + x1 * c - y1 * s;
	g[3] = oy + x1 * s + y1 * c;
	g[4] = r;
}

/* A hand of palm width u whose pointing fingertip is at (x, y), the finger
 * pointing along `dir`: forearm, palm, four fingers (each bent back by a
 * random amount) and thumb; or, with bar set, a straight-edged object (a
 * lamp arm, a phone) ending at (x, y). */
static void hand_make(struct hand *hd, uint64_t *rng, float x, float y, float dir, float u, int bar)
{
	static const float length[4] = {0.75f, 0.85f, 0.8f, 0.62f};
	hd->n = 0;
	float c = cosf(dir), s = sinf(dir);
	if (bar) {
		float r = u * rng_range(rng, 0.4f, 1.2f);
		hand_add(hd, x, y, c, s, -r, 0, -r - 8 * u, 0, r);
		return;
	}
	float side = rng_uniform(rng) < 0.5 ? -1.0f : 1.0f;
	float lx[4], ly[4], ex[4], ey[4];
	for (int k = 0; k < 4; k++) {
		float a = ((float)k - 1.5f) * 0.08f * side + rng_range(rng, -0.05f, 0.05f);
		float len = length[k] * u * rng_range(rng, 0.55f, 1.0f);
		lx[k] = 0.95f * u;
		ly[k] = ((float)k - 1.5f) * 0.24f * u * side;
		ex[k] = lx[k] + len * cosf(a);
		ey[k] = ly[k] + len * sinf(a);
	}
	/* Finger 1 points; the hand's frame puts its tip at (x, y). */
	float ox = x - (ex[1] * c - ey[1] * s), oy = y - (ex[1] * s + ey[1] * c);
	hand_add(hd, ox, oy, c, s, 0, 0, -4 * u, 0, 0.36f * u);
	hand_add(hd, ox, oy, c, s, 0.3f * u, 0, 0.6f * u, 0, 0.48f * u);
	for (int k = 0; k < 4; k++)
		hand_add(hd, ox, oy, c, s, lx[k], ly[k], ex[k], ey[k], 0.1f * u);
	float ta = side * rng_range(rng, 0.7f, 1.1f);
	hand_add(hd, ox, oy, c, s, 0.45f * u, 0.42f * u * side,
		 0.45f * u + 0.62f * u * cosf(ta), 0.42f * u * side + 0.62f * u * sinf(ta), 0.12f * u);
}

/* ---- diffused illumination (--di) ----------------------------------------- */

/* DI: the table is dark, what is near its surface is lit from below.
 * A part touching the surface (a fingertip, a palm laid flat) is bright
 * with sharp edges; a part above it is dimmer and blurred by the diffuser
 * (one sigma a frame, 2-3.5 px). Each of the N hands (hand_make's forearm,
 * palm, four fingers, thumb) has each finger touching at random (half of
 * them); a quarter of the hands are only a palm and forearm (a fist or a
 * flat hand), and half of those lie flat (the palm bright and sharp).
 * Lone fingertips (--fingers) touch or hover at random. Truth: every
 * fingertip (tip centre, radius, touch, hand), every hand's strokes (its
 * outline is the boundary of their union) and whether its palm touches. */
#define DI_SS 4

static void blur_gauss(float *img, float *tmp, int w, int h, float sigma);

struct di_finger {
	float x, y, r;
	int touch, hand;
};

/* Coverage in [0,1] of the pixels by the union of strokes (x0 y0 x1 y1 r). */
static void di_cover(float *out, int w, int h, const float (*seg)[5], int n)
{
	for (int i = 0; i < n; i++) {
		const float *g = seg[i];
		int x0 = (int)floorf(fminf(g[0], g[2]) - g[4] - 1), x1 = (int)ceilf(fmaxf(g[0], g[2]) + g[4] + 1);
		int y0 = (int)floorf(fminf(g[1], g[3]) - g[4] - 1), y1 = (int)ceilf(fmaxf(g[1], g[3]) + g[4] + 1);
		x0 = x0 < 0 ? 0 : x0;
		y0 = y0 < 0 ? 0 : y0;
		x1 = x1 > w - 1 ? w - 1 : x1;
		y1 = y1 > h - 1 ? h - 1 : y1;
		for (int y = y0; y <= y1; y++)
			for (int x = x0; x <= x1; x++) {
				if (out[(size_t)y * (size_t)w + (size_t)x] >= 1)
					continue;
				int in = 0;
				for (int sy = 0; sy < DI_SS; sy++)
					for (int sx = 0; sx < DI_SS; sx++) {
						float px = (float)x - 0.5f + ((float)sx + 0.5f) / DI_SS;
						float py = (float)y - 0.5f + ((float)sy + 0.5f) / DI_SS;
						float d = 1e9f;
						for (int j = 0; j < n; j++)
							d = fminf(d, segment_distance(seg[j], px, py));
						in += d <= 0;
					}
				float c = (float)in / (DI_SS * DI_SS);
				float *o = &out[(size_t)y * (size_t)w + (size_t)x];
				*o = fmaxf(*o, c);
			}
	}
}

/* Fills f (reflectance, grey levels) with a DI frame and writes its truth
 * object to `truth`. tmp, tmp2: scratch of w x h. */
static void di_frame(float *f, float *tmp, float *tmp2, const struct params *p, uint64_t *rng, FILE *truth,
		     int fr)
{
	const int w = p->w, h = p->h;
	const size_t npx = (size_t)w * (size_t)h;
	struct hand hands[MAX_HANDS];
	int palm_touch[MAX_HANDS] = {0};
	struct di_finger fing[MAX_HANDS * 5 + 200];
	int n_f = 0, n_h = 0;
	float sharp[MAX_HANDS * 6 + 200][5];
	int n_sharp = 0;
	const float base = rng_range(rng, 15, 25), hover = rng_range(rng, 75, 100), touch = rng_range(rng, 150, 185);
	const float sigma = rng_range(rng, 2.0f, 3.5f);
	const float fr_scale = p->finger_r / 9.0f;
	for (int k = 0; k < p->di; k++) {
		struct hand hd = {0};
		for (int tries = 0; tries < 200; tries++) {
			float u = rng_range(rng, 80, 100) * fr_scale;
			float x = rng_range(rng, 0.15f, 0.85f) * (float)w, y = rng_range(rng, 0.15f, 0.85f) * (float)h;
			hand_make(&hd, rng, x, y, rng_range(rng, 0, 6.2832f), u, 0);
			/* Apart from the other hands by a finger or more. */
			int ok = 1;
			for (int j = 0; j < n_h && ok; j++)
				for (int a = 0; a < hd.n && ok; a++)
					for (int b = 0; b < hands[j].n && ok; b++) {
						const float *g = hd.seg[a], *q = hands[j].seg[b];
						for (int t = 0; t <= 8 && ok; t++) {
							float px = g[0] + (g[2] - g[0]) * (float)t / 8;
							float py = g[1] + (g[3] - g[1]) * (float)t / 8;
							ok = segment_distance(q, px, py) > g[4] + 2.5f * p->finger_r;
						}
					}
			/* Fingertips and palm inside the frame: the forearm may leave it. */
			for (int a = 1; a < hd.n && ok; a++) {
				const float *g = hd.seg[a];
				ok = g[2] - g[4] > 4 && g[2] + g[4] < (float)w - 5 && g[3] - g[4] > 4 &&
				     g[3] + g[4] < (float)h - 5 && g[0] > 0 && g[0] < (float)w && g[1] > 0 &&
				     g[1] < (float)h;
			}
			if (ok)
				break;
			hd.n = 0;
		}
		if (hd.n == 0)
			continue;
		int fist = rng_uniform(rng) < 0.25;
		if (fist) {
			hd.n = 2;
			palm_touch[n_h] = rng_uniform(rng) < 0.5;
			if (palm_touch[n_h])
				memcpy(sharp[n_sharp++], hd.seg[1], sizeof sharp[0]);
		} else {
			for (int a = 2; a < hd.n; a++) {
				const float *g = hd.seg[a];
				struct di_finger *d = &fing[n_f++];
				*d = (struct di_finger){g[2], g[3], g[4], rng_uniform(rng) < 0.5, n_h};
				if (d->touch) {
					float *t = sharp[n_sharp++];
					t[0] = t[2] = g[2];
					t[1] = t[3] = g[3];
					t[4] = g[4];
				}
			}
		}
		hands[n_h++] = hd;
	}
	/* Lone fingertips, away from the hands and each other. */
	for (int k = 0; k < p->fingers; k++) {
		float r = p->finger_r * rng_range(rng, 0.85f, 1.15f);
		for (int tries = 0; tries < 200; tries++) {
			float x = rng_range(rng, 3 * r, (float)w - 3 * r), y = rng_range(rng, 3 * r, (float)h - 3 * r);
			int ok = 1;
			for (int j = 0; j < n_h && ok; j++)
				ok = hand_distance(&hands[j], x, y) > 3 * r;
			for (int j = 0; j < n_f && ok; j++)
				ok = hypotf(fing[j].x - x, fing[j].y - y) > 4 * r;
			if (!ok)
				continue;
			fing[n_f++] = (struct di_finger){x, y, r, rng_uniform(rng) < 0.5, -1};
			break;
		}
	}
	/* Hovering layer: every hand and every lone hovering tip, blurred. */
	memset(tmp2, 0, npx * sizeof *tmp2);
	for (int j = 0; j < n_h; j++)
		di_cover(tmp2, w, h, (const float(*)[5])hands[j].seg, hands[j].n);
	for (int i = 0; i < n_f; i++)
		if (fing[i].hand < 0 && !fing[i].touch) {
			float g[1][5] = {{fing[i].x, fing[i].y, fing[i].x, fing[i].y, fing[i].r}};
			di_cover(tmp2, w, h, (const float(*)[5])g, 1);
		}
	blur_gauss(tmp2, tmp, w, h, sigma);
	for (size_t i = 0; i < npx; i++)
		f[i] = base + hover * tmp2[i];
	/* Touching layer: sharp, brighter. */
	for (int i = 0; i < n_f; i++)
		if (fing[i].hand < 0 && fing[i].touch) {
			float *t = sharp[n_sharp++];
			t[0] = t[2] = fing[i].x;
			t[1] = t[3] = fing[i].y;
			t[4] = fing[i].r;
		}
	memset(tmp2, 0, npx * sizeof *tmp2);
	di_cover(tmp2, w, h, (const float(*)[5])sharp, n_sharp);
	for (size_t i = 0; i < npx; i++)
		f[i] = fmaxf(f[i], base + touch * tmp2[i]);

	fprintf(truth, "%s\n  {\"frame\": %d, \"fiducials\": [],\n   \"fingers\": [", fr ? "," : "", fr);
	for (int i = 0; i < n_f; i++)
		fprintf(truth, "%s{\"x\": %.4f, \"y\": %.4f, \"r\": %.4f, \"touch\": %s, \"hand\": %d}",
			i ? ", " : "", (double)fing[i].x, (double)fing[i].y, (double)fing[i].r,
			fing[i].touch ? "true" : "false", fing[i].hand);
	fprintf(truth, "],\n   \"hover_sigma\": %.3f, \"hands\": [", (double)sigma);
	for (int j = 0; j < n_h; j++) {
		fprintf(truth, "%s\n    {\"palm_touch\": %s, \"palm\": [%.3f, %.3f], \"segments\": [", j ? "," : "",
			palm_touch[j] ? "true" : "false", (double)hands[j].seg[1][0], (double)hands[j].seg[1][1]);
		for (int a = 0; a < hands[j].n; a++) {
			const float *g = hands[j].seg[a];
			fprintf(truth, "%s[%.3f, %.3f, %.3f, %.3f, %.3f]", a ? ", " : "", (double)g[0], (double)g[1],
				(double)g[2], (double)g[3], (double)g[4]);
		}
		fprintf(truth, "]}");
	}
	fprintf(truth, "]}");
}

/* Fraction of the symbol's ring square (the ring and its inside) under the
 * shape moved by (dx, dy); shadow set: only samples not fully dark or
 * fully lit count as crossed, and the result is 1 when the edge crosses. */
static float hand_cover(const struct hand *hd, const struct camera *c, const struct object *o,
			float dx, float dy, float pen)
{
	int in = 0, edge = 0, n = COVER_SAMPLES * COVER_SAMPLES;
	for (int j = 0; j < COVER_SAMPLES; j++)
		for (int i = 0; i < COVER_SAMPLES; i++) {
			double lx = ((i + 0.5) / COVER_SAMPLES - 0.5) * 0.92;
			double ly = ((j + 0.5) / COVER_SAMPLES - 0.5) * 0.92, tx, ty, x, y;
			card_point(o, lx, ly, &tx, &ty);
			camera_map(c, tx, ty, &x, &y);
			float d = hand_distance(hd, (float)x - dx, (float)y - dy);
			in += d < 0;
			edge += fabsf(d) <= pen * 0.5f + 0.5f;
		}
	if (pen > 0)
		return edge > 0 && in > 0 && in < n ? 1.0f : 0.0f;
	return (float)in / (float)n;
}

/* Shadows go where their edge crosses the most symbols (of 24 tries, each
 * aimed at a random symbol); hands put the pointing fingertip on one. */
static void place_hands(struct hand *hands, int *n_hands, uint64_t *rng, const struct object *objs,
			int n_objs, const struct camera *c, const struct params *p)
{
	int n_sym = 0;
	for (int i = 0; i < n_objs; i++)
		n_sym += objs[i].kind == 0;
	int n = 0;
	float unit = 0.17f * (float)(p->w < p->h ? p->w : p->h);
	for (int k = 0; k < p->shadows + p->hands && n < MAX_HANDS; k++) {
		int visible = k >= p->shadows;
		struct hand best = {0};
		float best_score = -1;
		for (int t = 0; t < (visible ? 1 : 24); t++) {
			struct hand hd = {0};
			float x = rng_range(rng, 0, (float)p->w), y = rng_range(rng, 0, (float)p->h);
			int pick = n_sym ? (int)(rng_uniform(rng) * n_sym) : -1;
			for (int i = 0; i < n_objs && pick >= 0; i++)
				if (objs[i].kind == 0 && pick-- == 0) {
					double tx, ty, dx, dy;
					card_point(&objs[i], rng_range(rng, -0.4f, 0.4f),
						   rng_range(rng, -0.4f, 0.4f), &tx, &ty);
					camera_map(c, tx, ty, &dx, &dy);
					x = (float)dx;
					y = (float)dy;
				}
			int bar = !visible && rng_uniform(rng) < 0.3;
			hand_make(&hd, rng, x, y, rng_range(rng, 0, 6.2832f),
				  unit * rng_range(rng, 0.85f, 1.15f), bar);
			hd.visible = visible;
			hd.pen = rng_range(rng, 1.0f, p->penumbra);
			hd.dark = rng_range(rng, p->dark_min, p->dark_max);
			hd.grey = rng_range(rng, 150, 220);
			float off = visible ? rng_range(rng, 8, 30) : 0, oa = rng_range(rng, 0, 6.2832f);
			hd.dx = off * cosf(oa);
			hd.dy = off * sinf(oa);
			float score = 0;
			for (int i = 0; i < n_objs && !visible; i++)
				if (objs[i].kind == 0)
					score += hand_cover(&hd, c, &objs[i], hd.dx, hd.dy, hd.pen);
			if (score > best_score) {
				best_score = score;
				best = hd;
			}
		}
		hands[n++] = best;
	}
	*n_hands = n;
}

/* Visible hands into the reflectance (their edge 1.5 px soft: they hover). */
static void paint_hands(float *f, int w, int h, const struct hand *hands, int n)
{
	for (int k = 0; k < n; k++) {
		if (!hands[k].visible)
			continue;
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				float d = hand_distance(&hands[k], (float)x, (float)y);
				float a = 0.5f - d / 1.5f;
				if (a <= 0)
					continue;
				a = a > 1 ? 1 : a;
				float *v = &f[(size_t)y * (size_t)w + (size_t)x];
				*v = *v * (1 - a) + hands[k].grey * a;
			}
	}
}

/* Light left at (x, y) by the shadows: each darkens by its factor inside,
 * ramping linearly across its penumbra; a visible hand is not in its own
 * shadow. Shadows of several lights multiply where they overlap; with
 * one_light they are all of one light (the sun, one lamp), which an
 * overlap cuts once: by the darkest of them there. */
static float shadow_light(const struct hand *hands, int n, int one_light, float x, float y)
{
	float light = 1, cut = 0;
	for (int k = 0; k < n; k++) {
		const struct hand *hd = &hands[k];
		float d = hand_distance(hd, x - hd->dx, y - hd->dy);
		float a = 0.5f - d / hd->pen;
		if (a <= 0)
			continue;
		a = a > 1 ? 1 : a;
		if (hd->visible) {
			float own = 0.5f - hand_distance(hd, x, y) / 1.5f;
			a *= 1 - (own < 0 ? 0 : own > 1 ? 1 : own);
		}
		light *= 1 - hd->dark * a;
		cut = hd->dark * a > cut ? hd->dark * a : cut;
	}
	return one_light ? 1 - cut : light;
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

/* paint() of a shape given in ideal pixels: its first n_pts (x, y) pairs
 * and the n_len lengths after them are moved into the raster's frame. */
static void paint_view(struct image_u8 *img, const struct view *v, const float *shape, int n_pts,
		       int n_len, inside_fn inside, float bx0, float by0, float bx1, float by1,
		       float grey)
{
	float t[5];
	memcpy(t, shape, sizeof t);
	for (int i = 0; i < n_pts; i++) {
		t[2 * i] = view_x(v, shape[2 * i]);
		t[2 * i + 1] = view_y(v, shape[2 * i + 1]);
	}
	for (int i = 0; i < n_len; i++)
		t[2 * n_pts + i] = view_len(v, shape[2 * n_pts + i]);
	paint(img, t, inside, view_x(v, bx0), view_y(v, by0), view_x(v, bx1), view_y(v, by1), grey);
}

static void draw_clutter(struct image_u8 *img, const struct view *v, uint64_t *rng,
			 const struct object *objs, int n, const struct params *p)
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
				paint_view(img, v, s, 1, 2, inside_ellipse, x - size, y - size, x + size,
					   y + size, grey);
			} else if (kind == 1) {
				float a = rng_range(rng, 0, 6.2832f);
				float s[5] = {x - size * cosf(a), y - size * sinf(a), x + size * cosf(a),
					      y + size * sinf(a), rng_range(rng, 1.5f, 5.0f)};
				paint_view(img, v, s, 2, 1, inside_stroke, x - size - 5, y - size - 5,
					   x + size + 5, y + size + 5, grey);
			} else {
				float s[5] = {x, y, size * rng_range(rng, 0.4f, 0.8f), size, 0};
				paint_view(img, v, s, 1, 2, inside_ring, x - size, y - size, x + size,
					   y + size, grey);
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

#if TT_HAVE_JPEG
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
#else
/* A build without libturbojpeg refuses --jpeg at parse time. */
static int jpeg_roundtrip(struct image_u8 *img, int quality)
{
	(void)img;
	(void)quality;
	return ERR_UNSUPPORTED;
}
#endif

/* Ink spreading by g px (0..1): each sample moves g of the way to the
 * darkest of its 4-neighbourhood, as a dilation of the print by g. */
static void dot_gain(float *img, float *tmp, int w, int h, float g)
{
	if (g <= 0)
		return;
	memcpy(tmp, img, sizeof(float) * (size_t)w * (size_t)h);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			size_t i = (size_t)y * (size_t)w + (size_t)x;
			float m = tmp[i];
			m = x > 0 ? fminf(m, tmp[i - 1]) : m;
			m = x < w - 1 ? fminf(m, tmp[i + 1]) : m;
			m = y > 0 ? fminf(m, tmp[i - (size_t)w]) : m;
			m = y < h - 1 ? fminf(m, tmp[i + (size_t)w]) : m;
			img[i] = tmp[i] + g * (m - tmp[i]);
		}
}

/* What a camera's processing does to the light (after the lens's blur,
 * before the sensor's noise, 8 bits and JPEG): --exposure's gain (lit
 * paper past 255 clips), --gamma's tone curve (the drawn grey taken as
 * linear light: a shadow's side and the ink come out brighter against
 * the lit paper), and --sharpen's unsharp mask, which phone and webcam
 * pipelines apply and which draws a dark undershoot along the dark side
 * of every edge, a shadow's too. The noise is added after it, as if the
 * camera denoised before sharpening, as phones do: sharpened sensor noise
 * at the presets' level fills a 1296 x 968 frame's flat desk with more
 * regions than the segmenter holds. With all three off the values are
 * untouched (the same frames as before). */
static void camera_tone(float *img, float *tmp, float *tmp2, int w, int h, const struct params *p)
{
	const size_t n = (size_t)w * (size_t)h;
	if (p->exposure != 1 || p->gamma != 1)
		for (size_t i = 0; i < n; i++) {
			float v = fminf(fmaxf(img[i] * p->exposure, 0), 255);
			img[i] = p->gamma != 1 ? 255.0f * powf(v / 255.0f, 1.0f / p->gamma) : v;
		}
	if (p->sharpen > 0) {
		memcpy(tmp2, img, n * sizeof *img);
		blur_gauss(tmp2, tmp, w, h, 1.0f);
		for (size_t i = 0; i < n; i++)
			img[i] += p->sharpen * (img[i] - tmp2[i]);
	}
}

/* Matte paper: multiplicative noise of standard deviation a, smoothed over
 * about a pixel (white noise blurred with sigma 1 has deviation 0.282). */
static void paper_texture(float *img, float *tmp, float *tmp2, int w, int h, float a,
			  uint64_t *rng)
{
	if (a <= 0)
		return;
	size_t n = (size_t)w * (size_t)h;
	for (size_t i = 0; i < n; i++)
		tmp[i] = (float)rng_gauss(rng);
	blur_gauss(tmp, tmp2, w, h, 1.0f);
	for (size_t i = 0; i < n; i++)
		img[i] *= 1.0f + a * tmp[i] / 0.282f;
}

/* A defocused lens: the mean over a disc of radius r (edge pixels weighted
 * by how much of them the disc covers, roughly). */
static void blur_disc(float *img, float *tmp, int w, int h, float r)
{
	if (r < 0.3f)
		return;
	int k = (int)ceilf(r + 0.5f);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			float s = 0, sw = 0;
			for (int j = -k; j <= k; j++) {
				int yy = y + j < 0 ? 0 : y + j >= h ? h - 1 : y + j;
				for (int i = -k; i <= k; i++) {
					float wt = r + 0.5f - hypotf((float)i, (float)j);
					if (wt <= 0)
						continue;
					wt = wt > 1 ? 1 : wt;
					int xx = x + i < 0 ? 0 : x + i >= w ? w - 1 : x + i;
					s += wt * img[(size_t)yy * (size_t)w + (size_t)xx];
					sw += wt;
				}
			}
			tmp[(size_t)y * (size_t)w + (size_t)x] = s / sw;
		}
	memcpy(img, tmp, sizeof(float) * (size_t)w * (size_t)h);
}

/* ---- scene --------------------------------------------------------------- */

static void place_objects(struct object *objs, int *n_objs, uint64_t *rng, int n_ids,
			  const struct camera *cam, const struct params *p)
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
			float r = symbol_pose(cam, &o);
			if (fits(objs, n, -1, o.x, o.y, r, p)) {
				o.r = r;
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

/* Sheet layout: n symbols, IDs 0..n-1 in reading order (modulo the set's
 * size), in a grid of cols x rows cards printed upright, 1.3 cards apart,
 * on a sheet with a margin of 0.45 card around them. The sheet's centre
 * lies near the image centre, its rotation within +-0.6 rad, and its card
 * side is the one whose image at the centre is --fid-size wide; the grid
 * must fit in the frame (else a smaller card). Perspective then makes the
 * near cards bigger than the far ones, like a photograph of a sheet. */
static void place_sheet(struct object *objs, int *n_objs, struct sheet *sh, uint64_t *rng,
			int n_ids, const struct camera *cam, const struct params *p)
{
	int n = p->sheet < MAX_OBJECTS ? p->sheet : MAX_OBJECTS;
	int cols = (int)ceil(sqrt(n * 4.0 / 3.0)), rows = (n + cols - 1) / cols;
	float scale = 1;
	*n_objs = 0;
	for (int tries = 0; tries < 2000 && *n_objs == 0; tries++) {
		if (tries % 200 == 199)
			scale *= 0.9f;
		struct object c = {0};
		c.x = (float)p->w * rng_range(rng, 0.4f, 0.6f);
		c.y = (float)p->h * rng_range(rng, 0.4f, 0.6f);
		c.size = rng_range(rng, p->size_min, p->size_max) * scale;
		c.angle = rng_range(rng, -0.6f, 0.6f);
		symbol_pose(cam, &c);
		float pitch = 1.3f * c.ts, co = cosf(c.angle), si = sinf(c.angle);
		int ok = 1, k = 0;
		for (int j = 0; j < rows && ok; j++)
			for (int i = 0; i < cols && k < n && ok; i++, k++) {
				struct object *o = &objs[k];
				float lx = ((float)i - 0.5f * (float)(cols - 1)) * pitch;
				float ly = ((float)j - 0.5f * (float)(rows - 1)) * pitch;
				*o = (struct object){.id = k % n_ids, .angle = c.angle, .ts = c.ts};
				o->tx = c.tx + lx * co - ly * si;
				o->ty = c.ty + lx * si + ly * co;
				double ux = o->tx, uy = o->ty, ax = 0, ay = 0, area = 0;
				if (cam->tilted)
					homography_apply(cam->h, o->tx, o->ty, &ux, &uy);
				o->x = (float)ux;
				o->y = (float)uy;
				double px[4], py[4];
				for (int q = 0; q < 4; q++) {
					card_point(o, q == 1 || q == 2 ? 0.5 : -0.5, q >= 2 ? 0.5 : -0.5,
						   &ax, &ay);
					if (cam->tilted)
						homography_apply(cam->h, ax, ay, &ax, &ay);
					px[q] = ax;
					py[q] = ay;
					o->r = fmaxf(o->r, (float)hypot(ax - ux, ay - uy));
					ok = ok && ax > 4 && ay > 4 && ax < p->w - 5 && ay < p->h - 5;
				}
				for (int q = 0; q < 4; q++)
					area += px[q] * py[(q + 1) % 4] - px[(q + 1) % 4] * py[q];
				o->size = (float)sqrt(fabs(area) * 0.5);
			}
		if (!ok)
			continue;
		*sh = (struct sheet){c.tx, c.ty, c.angle, (0.5f * (float)(cols - 1) * 1.3f + 0.95f) * c.ts,
				     (0.5f * (float)(rows - 1) * 1.3f + 0.95f) * c.ts,
				     rng_range(rng, 225, 250), rng_range(rng, 10, 35)};
		*n_objs = n;
	}
}

/* The sheet's paper into the raster (2 x 2 samples a pixel, through the
 * inverse homography). */
static void paint_sheet(struct image_u8 *s, const struct view *v, const struct camera *c,
			const struct sheet *sh)
{
	float co = cosf(sh->angle), si = sinf(sh->angle);
	for (int y = 0; y < s->height; y++) {
		uint8_t *row = image_u8_row(s, y);
		for (int x = 0; x < s->width; x++) {
			int in = 0;
			for (int k = 0; k < 4; k++) {
				double sx = x + (k & 1 ? 0.25 : -0.25), sy = y + (k & 2 ? 0.25 : -0.25);
				double ux = sx, uy = sy, tx, ty;
				if (v->warp) {
					ux = v->ox + (sx + 0.5) / v->q - 0.5;
					uy = v->oy + (sy + 0.5) / v->q - 0.5;
				}
				tx = ux;
				ty = uy;
				if (c->tilted)
					homography_apply(c->hinv, ux, uy, &tx, &ty);
				double dx = tx - sh->x, dy = ty - sh->y;
				in += fabs(dx * co + dy * si) <= sh->hw && fabs(-dx * si + dy * co) <= sh->hh;
			}
			if (in)
				row[x] = (uint8_t)lrintf(((float)row[x] * (float)(4 - in) + sh->paper * (float)in) * 0.25f);
		}
	}
}

static void move_objects(struct object *objs, int n, const struct camera *cam,
			 const struct params *p)
{
	for (int i = 0; i < n; i++) {
		struct object *o = &objs[i], moved = *o;
		moved.x += o->vx;
		moved.y += o->vy;
		float pad = o->kind ? 2.0f : 0.0f;
		if (o->kind == 0)
			moved.r = symbol_pose(cam, &moved);
		if (fits(objs, n, i, moved.x, moved.y, moved.r + pad, p)) {
			*o = moved;
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

/* Real-room conditions, 640 x 480. Every set has the same mild print and
 * sensor (dot gain 0.2 px, paper texture 2 %, shot noise) and symbols of
 * 32-96 px unless its point is size; fingers are left out so that recall
 * speaks of symbols. */
#define PRESET_BASE "--fingers 0 --dot-gain 0.2 --paper 0.02 --shot 0.04 "
/* A camera's processing (camera_tone()). */
#define CAMERA_TONE "--gamma 2.2 --sharpen 1 --exposure 1.2 "
static const struct preset {
	const char *name, *options, *help;
} presets[] = {
	{"tilt", PRESET_BASE "--fids 8 --fid-size 32:96 --tilt 45",
	 "camera tilted up to 45 degrees"},
	{"barrel", PRESET_BASE "--fids 8 --fid-size 32:96 --k1 -0.35",
	 "strong barrel lens, k1 -0.35 (writes grid.txt)"},
	{"uneven", PRESET_BASE "--fids 8 --fid-size 32:96 --light 0.5 --vignette 0.5 --hotspots 2",
	 "IR hot spots, vignetting, uneven light"},
	{"shadow", PRESET_BASE "--fids 8 --fid-size 32:96 --shadows 2",
	 "two hard shadows a frame whose edges cross symbols"},
	{"shadow-dark", PRESET_BASE "--fids 8 --fid-size 32:96 --shadows 2 --dark 0.55:0.75",
	 "two hard shadows a frame, each of its own light and keeping 25-45 % of it, so that where they "
	 "overlap the paper keeps 6-20 %"},
	{"shadow-small", PRESET_BASE "--fids 8 --fid-size 24:48 --shadows 2",
	 "two hard shadows a frame whose edges cross symbols of 24-48 px"},
	{"shadow-large", PRESET_BASE "--size 1280x960 --fids 8 --fid-size 120:240 --shadows 2",
	 "two hard shadows a frame whose edges cross symbols of 120-240 px, 1280x960 (a camera near the table)"},
	{"sun", PRESET_BASE "--fids 8 --fid-size 32:96 --shadows 2 --one-light 1 --dark 0.55:0.75 --penumbra 3",
	 "two hard shadows of one light (sunlight: shadow side 25-45 % of the lit side, penumbra 1-3 px)"},
	{"oblique", PRESET_BASE "--fids 8 --fid-size 32:96 --shadows 2 --tilt 40 --k1 -0.35",
	 "hard shadows, a tilted camera and a wide-angle lens together: two hard shadows a frame, tilt up to "
	 "40 degrees, barrel lens k1 -0.35 (writes grid.txt)"},
	{"hands", PRESET_BASE "--fids 8 --fid-size 32:96 --hands 2",
	 "two hands a frame, fingertips on symbols, with shadows"},
	{"small", PRESET_BASE "--fids 14 --fid-size 20:24", "symbols of 20-24 px, plain light"},
	{"motion", PRESET_BASE "--fids 8 --fid-size 32:96 --motion 6", "6 px motion streaks"},
	{"blur", PRESET_BASE "--fids 8 --fid-size 32:96 --defocus 2", "defocus disc of radius 2 px"},
	{"defocus", PRESET_BASE "--fids 8 --fid-size 48:110 --blur 2.4",
	 "camera out of focus: Gaussian blur of 2.4 px, symbols of 48-110 px"},
	{"dim", PRESET_BASE "--fids 8 --fid-size 32:96 --contrast 0.3 --vignette 0.7 --light 0.6 --jpeg 60",
	 "a dim camera: contrast 0.3, vignetting 0.7, uneven light 0.6, JPEG 60"},
	{"noisy", PRESET_BASE "--fids 8 --fid-size 32:96 --noise 7 --fingers 5",
	 "a noisy camera: sensor noise of 7 grey levels, 5 fingers a frame"},
	{"di", "--di 2 --fids 0 --fingers 3 --finger-r 9 --light 0.2 --noise 2 --shot 0.03",
	 "diffused illumination: 2 hands (touching tips sharp, hovering parts blurred; some only a "
	 "palm), 3 lone fingertips"},
	{"room",
	 PRESET_BASE "--fids 8 --fid-size 32:96 --tilt 35 --k1 -0.25 --light 0.4 --vignette 0.3 "
		     "--hotspots 1 --shadows 1 --hands 1 --dot-gain 0.3 --paper 0.03 --defocus 0.8 "
		     "--jpeg 85",
	 "all of it, milder: tilt 35, k1 -0.25, hot spot, shadow, hand, defocus, JPEG"},
	{"sheet",
	 PRESET_BASE "--size 1296x968 --sheet 12 --fid-size 90:110 --tilt 45 --tilt-min 30 "
		     "--shadows 1 --penumbra 3 --dark 0.55:0.75 --light 0.2 --defocus 0.8 --jpeg 90",
	 "a printed sheet of IDs 0-11 on a desk, 1296x968, camera tilted 30-45 degrees, "
	 "sunlight with a hard shadow of a hand or bar (penumbra 1-3 px, shadow side 25-45 % of the lit side), "
	 "cards 90-110 px at the sheet's centre, defocus 0.8, JPEG 90"},
	{"sheet-half",
	 PRESET_BASE "--size 648x484 --sheet 12 --fid-size 45:55 --tilt 45 --tilt-min 30 "
		     "--shadows 1 --penumbra 3 --dark 0.55:0.75 --light 0.2 --defocus 0.4 --jpeg 90",
	 "the sheet at 648x484, cards 45-55 px at its centre, defocus 0.4"},
	{"sheet-full",
	 PRESET_BASE "--size 2592x1936 --sheet 12 --fid-size 180:220 --tilt 45 --tilt-min 30 "
		     "--shadows 1 --penumbra 6 --dark 0.55:0.75 --light 0.2 --defocus 1.6 --jpeg 90",
	 "the sheet at the photograph's own 2592x1936, cards 180-220 px at its centre, penumbra 1-6 px, "
	 "defocus 1.6"},
	/* A camera's own processing, which the sets above leave out: the
	 * photograph's tablet camera and most webcams encode with a gamma
	 * curve, sharpen, and let sunlit paper clip. */
	{"phone",
	 PRESET_BASE "--size 1296x968 --sheet 12 --fid-size 90:110 --tilt 45 --tilt-min 30 "
		     "--shadows 1 --penumbra 3 --dark 0.55:0.75 --light 0.2 --defocus 0.8 " CAMERA_TONE "--jpeg 90",
	 "the sheet seen by a phone camera: its gamma 2.2, unsharp mask (amount 1) and exposure 1.2 "
	 "(lit paper clips)"},
	{"phone-half",
	 PRESET_BASE "--size 648x484 --sheet 12 --fid-size 45:55 --tilt 45 --tilt-min 30 "
		     "--shadows 1 --penumbra 3 --dark 0.55:0.75 --light 0.2 --defocus 0.4 " CAMERA_TONE "--jpeg 90",
	 "the phone preset at 648x484, cards 45-55 px at its centre, defocus 0.4"},
	{"gamma",
	 PRESET_BASE "--size 648x484 --sheet 12 --fid-size 45:55 --tilt 45 --tilt-min 30 "
		     "--shadows 1 --penumbra 3 --dark 0.55:0.75 --light 0.2 --defocus 0.4 --gamma 2.2 --jpeg 90",
	 "the sheet-half scenes from a camera that encodes with gamma 2.2 and does not sharpen "
	 "(read them with --camera-gamma 2.2)"},
	{"webcam", PRESET_BASE "--fids 8 --fid-size 24:48 --shadows 2 " CAMERA_TONE,
	 "the shadow-small scenes through a webcam's processing: gamma 2.2, unsharp mask (amount 1), "
	 "exposure 1.2"},
};
#define N_PRESETS (int)(sizeof presets / sizeof presets[0])

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tabletrack-scenes -o DIR [options]\n"
		"  --preset NAME         a named set of the options below (later options\n"
		"                        override it); NAME is one of:\n");
	for (int i = 0; i < N_PRESETS; i++)
		fprintf(f, "      %-10s %s\n", presets[i].name, presets[i].help);
	fprintf(f,
		"  --trees SET.trees     symbols to draw (default fiducials/tabletrack.trees)\n"
		"  --drawings DIR        draw each symbol from its printed picture DIR/fid_NNN.png\n"
		"                        (NNN its ID in SET) instead of the tree's own layout, e.g.\n"
		"                        reacTIVision's symbols/default with its default.trees\n"
		"  --frames N            frames (default 24)\n"
		"  --size WxH            frame size (default 640x480)\n"
		"  --fids N              symbols a frame (default 7)\n"
		"  --fid-size MIN:MAX    card side range in the image, px (default 60:110)\n"
		"  --fingers N           fingers a frame (default 5)\n"
		"  --finger-r R          finger radius, px (default 9)\n"
		"  --blur SIGMA          Gaussian blur, px (default 0.7)\n"
		"  --defocus R           defocus disc radius, px (default 0)\n"
		"  --noise SIGMA         Gaussian noise, grey levels (default 3)\n"
		"  --shot K              shot noise, variance K x grey level (default 0)\n"
		"  --light L             uneven light, 0..1 (default 0.3)\n"
		"  --vignette V          light lost at the corners, 0..0.9 (default 0)\n"
		"  --hotspots N          IR hot spots (additive glare) a frame (default 0)\n"
		"  --hotspot-gain G      their peak, grey levels (default 90)\n"
		"  --contrast C          contrast factor (default 1)\n"
		"  --motion PX           motion streak length, px (default 0)\n"
		"  --jpeg Q              JPEG round trip at quality Q, 0 = none (default 0)\n"
		"  --clutter N           distractor shapes a frame (default 0)\n"
		"  --tilt DEG            camera tilt up to DEG degrees, 0..50 (default 0)\n"
		"  --tilt-min DEG        ... and at least DEG degrees (default 0)\n"
		"  --sheet N             a printed sheet of N symbols, IDs 0..N-1 in a grid,\n"
		"                        on a darker desk, instead of --fids (default 0)\n"
		"  --fov DEG             horizontal field of view for the tilt (default 60)\n"
		"  --k1 K, --k2 K        radial lens (division model), negative = barrel\n"
		"                        (default 0); writes DIR/grid.txt for --grid\n"
		"  --shadows N           hard shadows a frame crossing symbols (default 0)\n"
		"  --hands N             hands a frame covering symbols, with shadows (default 0)\n"
		"  --di N                a diffused-illumination table instead: N bright hands over\n"
		"                        a dark surface, --fingers lone fingertips (default 0)\n"
		"  --penumbra PX         widest shadow penumbra, >= 1 (default 4)\n"
		"  --dark MIN:MAX        shadow darkening factor range (default 0.3:0.6)\n"
		"  --one-light 0|1       1: the shadows are all of one light, so where they\n"
		"                        overlap the light is cut once, by the darkest;\n"
		"                        0: each of its own light, overlaps multiply (default 0)\n"
		"  --dot-gain PX         ink spreading, 0..1 px (default 0)\n"
		"  --paper A             paper texture, relative deviation (default 0)\n"
		"  --exposure E          the camera's gain before its values clip at 255:\n"
		"                        above 1 the lit paper saturates, 0.25..4 (default 1)\n"
		"  --gamma G             the camera's tone curve 255 (v/255)^(1/G), the drawn grey\n"
		"                        taken as linear light, 1..3 (default 1: none)\n"
		"  --sharpen A           the camera's unsharp mask, amount A at sigma 1 px:\n"
		"                        halos along every edge, 0..4 (default 0)\n"
		"  --move PX             persistent objects drifting PX px a frame (default 0:\n"
		"                        a fresh layout every frame)\n"
		"  --seed S              random seed (default 1)\n"
		"  --format png|pgm      frame file format (default png)\n");
}

/* One option and its value; returns 0 or -1 for an unknown option or a
 * malformed value. */
static int parse_option(struct params *p, const char *a, const char *v)
{
	char *end = NULL;
	float fa, fb;
	if (!strcmp(a, "-o"))
		p->out = v;
	else if (!strcmp(a, "--trees"))
		p->trees = v;
	else if (!strcmp(a, "--format"))
		p->format = v;
	else if (!strcmp(a, "--drawings"))
		p->drawings = v;
	else if (!strcmp(a, "--size")) {
		if (parse_pair(v, &fa, &fb) && !(sscanf(v, "%fx%f", &fa, &fb) == 2))
			return -1;
		p->w = (int)fa;
		p->h = (int)fb;
	} else if (!strcmp(a, "--fid-size") || !strcmp(a, "--dark")) {
		if (parse_pair(v, &fa, &fb))
			return -1;
		*(a[2] == 'f' ? &p->size_min : &p->dark_min) = fa;
		*(a[2] == 'f' ? &p->size_max : &p->dark_max) = fb;
	} else if (!strcmp(a, "--seed"))
		p->seed = strtoull(v, &end, 10);
	else {
		static const struct {
			const char *name;
			size_t offset;
			int integer;
		} numbers[] = {
			{"--frames", offsetof(struct params, frames), 1},
			{"--fids", offsetof(struct params, fids), 1},
			{"--fingers", offsetof(struct params, fingers), 1},
			{"--jpeg", offsetof(struct params, jpeg), 1},
			{"--clutter", offsetof(struct params, clutter), 1},
			{"--hotspots", offsetof(struct params, hotspots), 1},
			{"--shadows", offsetof(struct params, shadows), 1},
			{"--hands", offsetof(struct params, hands), 1},
			{"--di", offsetof(struct params, di), 1},
			{"--sheet", offsetof(struct params, sheet), 1},
			{"--one-light", offsetof(struct params, one_light), 1},
			{"--finger-r", offsetof(struct params, finger_r), 0},
			{"--blur", offsetof(struct params, blur), 0},
			{"--noise", offsetof(struct params, noise), 0},
			{"--light", offsetof(struct params, light), 0},
			{"--contrast", offsetof(struct params, contrast), 0},
			{"--motion", offsetof(struct params, motion), 0},
			{"--move", offsetof(struct params, move), 0},
			{"--tilt", offsetof(struct params, tilt), 0},
			{"--tilt-min", offsetof(struct params, tilt_min), 0},
			{"--fov", offsetof(struct params, fov), 0},
			{"--k1", offsetof(struct params, k1), 0},
			{"--k2", offsetof(struct params, k2), 0},
			{"--vignette", offsetof(struct params, vignette), 0},
			{"--hotspot-gain", offsetof(struct params, hotspot_gain), 0},
			{"--penumbra", offsetof(struct params, penumbra), 0},
			{"--dot-gain", offsetof(struct params, dot_gain), 0},
			{"--paper", offsetof(struct params, paper), 0},
			{"--defocus", offsetof(struct params, defocus), 0},
			{"--shot", offsetof(struct params, shot), 0},
			{"--exposure", offsetof(struct params, exposure), 0},
			{"--gamma", offsetof(struct params, gamma), 0},
			{"--sharpen", offsetof(struct params, sharpen), 0},
		};
		int k = 0, n = (int)(sizeof numbers / sizeof numbers[0]);
		while (k < n && strcmp(a, numbers[k].name))
			k++;
		if (k == n)
			return -1;
		double d = strtod(v, &end);
		char *field = (char *)p + numbers[k].offset;
		if (numbers[k].integer)
			*(int *)field = (int)d;
		else
			*(float *)field = (float)d;
	}
	return end && *end ? -1 : 0;
}

/* Applies the preset's options, split at spaces. */
static int apply_preset(struct params *p, const char *name)
{
	for (int i = 0; i < N_PRESETS; i++) {
		if (strcmp(presets[i].name, name))
			continue;
		char buf[512], *save = NULL;
		snprintf(buf, sizeof buf, "%s", presets[i].options);
		for (char *a = strtok_r(buf, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
			char *v = strtok_r(NULL, " ", &save);
			if (!v || parse_option(p, a, v))
				return -1;
		}
		p->preset = presets[i].name;
		return 0;
	}
	fprintf(stderr, "tabletrack-scenes: no preset named '%s' (see --help)\n", name);
	return -1;
}

static int parse_args(int argc, char **argv, struct params *p)
{
	*p = (struct params){.trees = "fiducials/tabletrack.trees", .format = "png", .preset = "",
			     .w = 640, .h = 480, .frames = 24, .fids = 7, .fingers = 5,
			     .size_min = 60, .size_max = 110, .finger_r = 9, .blur = 0.7f,
			     .noise = 3, .light = 0.3f, .contrast = 1, .fov = 60,
			     .hotspot_gain = 90, .penumbra = 4, .dark_min = 0.3f, .dark_max = 0.6f,
			     .exposure = 1, .gamma = 1, .seed = 1};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			exit(0);
		}
		if (!strcmp(argv[i], "--preset") && (i + 1 >= argc || apply_preset(p, argv[i + 1])))
			return -1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		i++;
		if (v && (!strcmp(a, "--preset") || !parse_option(p, a, v)))
			continue;
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
	    p->fingers < 0 || p->sheet < 0 || p->sheet > 256 || p->one_light < 0 || p->one_light > 1 || p->tilt_min < 0 ||
	    p->tilt_min > p->tilt || p->fingers > 200 || p->clutter < 0 || p->clutter > 10000 ||
	    p->finger_r <= 0 || p->blur < 0 || p->blur > 20 || p->noise < 0 || p->light < 0 ||
	    p->light > 1 || p->contrast <= 0 || p->motion < 0 || p->motion > 100 || p->jpeg < 0 ||
	    p->jpeg > 100 || p->move < 0 || p->tilt < 0 || p->tilt > 50 || p->fov < 20 ||
	    p->fov > 120 || p->vignette < 0 || p->vignette > 0.9f || p->hotspots < 0 ||
	    p->hotspots > 20 || p->hotspot_gain < 0 || p->shadows < 0 || p->hands < 0 ||
	    p->shadows + p->hands > MAX_HANDS || p->di < 0 || p->di > MAX_HANDS || p->penumbra < 1 || p->penumbra > 32 ||
	    !(p->dark_max <= 1) || p->dot_gain < 0 || p->dot_gain > 1 || p->paper < 0 ||
	    p->paper > 0.3f || p->defocus < 0 || p->defocus > 16 || p->shot < 0 ||
	    !(p->exposure >= 0.25f && p->exposure <= 4) || !(p->gamma >= 1 && p->gamma <= 3) ||
	    !(p->sharpen >= 0 && p->sharpen <= 4) ||
	    (strcmp(p->format, "png") && strcmp(p->format, "pgm"))) {
		fprintf(stderr, "tabletrack-scenes: a value is out of range (see --help)\n");
		return -1;
	}
	if (p->jpeg > 0 && !TT_HAVE_JPEG) {
		fprintf(stderr, "tabletrack-scenes: --jpeg (and the room preset) needs libturbojpeg, which this build lacks\n");
		return -1;
	}
	/* The far edge of the view must stay in front of the camera. */
	double half_diag = atan(tan(0.5 * p->fov * M_PI / 180) * hypot(p->w, p->h) / p->w);
	if (p->tilt * M_PI / 180 + half_diag > 85 * M_PI / 180) {
		fprintf(stderr, "tabletrack-scenes: --tilt plus half the diagonal field of view "
				"passes 85 degrees\n");
		return -1;
	}
	if (!lens_valid(p)) {
		fprintf(stderr, "tabletrack-scenes: --k1/--k2 fold the image (keep 1 + k1 r^2 + "
				"k2 r^4 rising in r; k1 >= -0.5 with k2 = 0)\n");
		return -1;
	}
	return 0;
}

/* The per-frame random camera pose: a tilt uniform in [0, --tilt] about a
 * uniform random axis. */
static void camera_pose(struct camera *cam, uint64_t *rng, const struct params *p)
{
	if (p->tilt <= 0)
		return;
	double f = 0.5 * p->w / tan(0.5 * p->fov * M_PI / 180);
	double tilt = rng_range(rng, p->tilt_min, p->tilt) * M_PI / 180;
	camera_tilt(cam, tilt, rng_range(rng, 0, 6.2832f), f);
}

/* The drawing raster: twice the frame's resolution over every ideal point
 * the camera sees (with a lens, more than the frame). */
static int view_make(struct view *v, struct image_u8 *s, const struct camera *cam,
		     const struct params *p)
{
	v->warp = cam->lens || p->tilt > 0;
	if (!v->warp)
		return image_u8_alloc(s, p->w, p->h);
	double x0 = 0, y0 = 0, x1 = p->w - 1, y1 = p->h - 1;
	for (int k = 0; k <= 400; k++) {
		double t = k / 400.0, e[4][2] = {{t * p->w, -0.5}, {t * p->w, p->h - 0.5},
						 {-0.5, t * p->h}, {p->w - 0.5, t * p->h}};
		for (int i = 0; i < 4; i++) {
			double ux, uy;
			lens_undistort(cam, e[i][0], e[i][1], &ux, &uy);
			x0 = fmin(x0, ux);
			y0 = fmin(y0, uy);
			x1 = fmax(x1, ux);
			y1 = fmax(y1, uy);
		}
	}
	v->q = 2;
	v->ox = (float)floor(x0) - 3;
	v->oy = (float)floor(y0) - 3;
	int w = (int)ceil((x1 + 4 - v->ox) * v->q), h = (int)ceil((y1 + 4 - v->oy) * v->q);
	if (w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE)
		return ERR_RANGE;
	return image_u8_alloc(s, w, h);
}

struct truth {
	int id;
	float x, y, angle, size, covered;
	bool shadow_edge;
};

/* --drawings: every symbol's picture, DIR/fid_NNN.png for ID NNN of the
 * set, each read as its own ID (drawing.h). Returns 0, or 1 after saying
 * what is wrong. */
static int load_drawings(const struct params *p, const struct treefile *tf, struct tree_set **set,
			 struct drawing **out)
{
	int e = tree_set_load(p->trees, set);
	if (e || tree_set_count(*set) != tf->n) {
		fprintf(stderr, "tabletrack-scenes: %s: %s\n", p->trees,
			e ? err_str(e) : "the tracker's reader refuses some of its trees");
		return 1;
	}
	*out = calloc((size_t)tf->n + 1, sizeof **out);
	if (!*out)
		return 1;
	for (int i = 0; i < tf->n; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/fid_%03d.png", p->drawings, i);
		e = drawing_load(path, *set, i, &(*out)[i]);
		if (e == ERR_FORMAT) {
			fprintf(stderr, "tabletrack-scenes: %s: unreadable, or not read as ID %d of %s\n", path, i,
				p->trees);
			return 1;
		}
		if (e) {
			fprintf(stderr, "tabletrack-scenes: %s: %s\n", path, err_str(e));
			return 1;
		}
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
	struct drawing *drawings = NULL;
	struct tree_set *set = NULL;
	float *f = NULL, *tmp = NULL, *tmp2 = NULL;
	struct image_u8 img = {0}, raster = {0}, card = {0};
	FILE *truth = NULL;
	struct camera cam;
	struct view view;
	camera_init(&cam, &p);
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
	if (p.drawings && load_drawings(&p, &tf, &set, &drawings))
		goto done;
	if (mkdir(p.out, 0777) && errno != EEXIST) {
		fprintf(stderr, "tabletrack-scenes: %s: %s\n", p.out, strerror(errno));
		goto done;
	}
	size_t npx = (size_t)p.w * (size_t)p.h;
	f = malloc(npx * sizeof *f);
	tmp = malloc(npx * sizeof *tmp);
	tmp2 = malloc(npx * sizeof *tmp2);
	if (!f || !tmp || !tmp2 || image_u8_alloc(&img, p.w, p.h) ||
	    view_make(&view, &raster, &cam, &p) ||
	    (p.tilt > 0 && image_u8_alloc(&card, CARD_MAX, CARD_MAX)))
		goto done;
	char path[4096];
	if (cam.lens) {
		snprintf(path, sizeof path, "%s/grid.txt", p.out);
		if (write_grid(&cam, &p, path)) {
			fprintf(stderr, "tabletrack-scenes: %s: write failed\n", path);
			goto done;
		}
	}
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
		"\"move\": %g, \"seed\": %llu",
		p.w, p.h, p.trees, p.frames, p.fids, (double)p.size_min, (double)p.size_max,
		p.fingers, (double)p.finger_r, (double)p.blur, (double)p.noise, (double)p.light,
		(double)p.contrast, (double)p.motion, p.jpeg, p.clutter, (double)p.move, p.seed);
	if (p.di > 0)
		fprintf(truth, ", \"di\": %d", p.di);
	if (p.sheet > 0)
		fprintf(truth, ", \"sheet\": %d, \"tilt_min\": %g", p.sheet, (double)p.tilt_min);
	if (view.warp || p.preset[0] || p.shadows || p.hands || p.hotspots || p.vignette > 0 ||
	    p.dot_gain > 0 || p.paper > 0 || p.defocus > 0 || p.shot > 0)
		fprintf(truth,
			", \"preset\": \"%s\", \"tilt\": %g, \"fov\": %g, \"k1\": %g, \"k2\": %g, "
			"\"grid\": %s, \"vignette\": %g, \"hotspots\": %d, \"hotspot_gain\": %g, "
			"\"shadows\": %d, \"one_light\": %d, \"hands\": %d, \"penumbra\": %g, \"dark\": \"%g:%g\", "
			"\"dot_gain\": %g, \"paper\": %g, \"defocus\": %g, \"shot\": %g",
			p.preset, (double)p.tilt, (double)p.fov, (double)p.k1, (double)p.k2,
			cam.lens ? "\"grid.txt\"" : "null", (double)p.vignette, p.hotspots,
			(double)p.hotspot_gain, p.shadows, p.one_light, p.hands, (double)p.penumbra,
			(double)p.dark_min, (double)p.dark_max, (double)p.dot_gain, (double)p.paper,
			(double)p.defocus, (double)p.shot);
	fprintf(truth, "},\n \"frames\": [");

	uint64_t rng = p.seed * 0x2545f4914f6cdd1dull + 1;
	/* The newer effects draw from their own stream, so that scenes without
	 * them stay what they were. */
	uint64_t rng2 = p.seed * 0x9e3779b97f4a7c15ull + 7;
	struct object objs[MAX_OBJECTS];
	struct truth tr[MAX_OBJECTS];
	struct hand hands[MAX_HANDS];
	struct sheet sheet = {0};
	int n_objs = 0, n_hands = 0;
	struct render_options ro;
	render_options_default(&ro);
	for (int fr = 0; fr < p.frames; fr++) {
		if (p.di > 0) {
			di_frame(f, tmp, tmp2, &p, &rng2, truth, fr);
			goto lit;
		}
		if (p.sheet > 0) {
			camera_pose(&cam, &rng2, &p);
			place_sheet(objs, &n_objs, &sheet, &rng2, tf.n, &cam, &p);
		} else if (fr == 0 || p.move <= 0) {
			camera_pose(&cam, &rng2, &p);
			place_objects(objs, &n_objs, &rng, tf.n, &cam, &p);
		} else {
			move_objects(objs, n_objs, &cam, &p);
		}
		uint8_t table = (uint8_t)lrintf(rng_range(&rng, 105, 135));
		if (p.sheet > 0)
			table = (uint8_t)lrintf(rng_range(&rng2, 40, 90));
		memset(raster.data, table, (size_t)raster.stride * (size_t)raster.height);
		if (p.sheet > 0) {
			paint_sheet(&raster, &view, &cam, &sheet);
			table = (uint8_t)lrintf(sheet.paper);
		}
		draw_clutter(&raster, &view, &rng, objs, n_objs, &p);
		int n_tr = 0;
		for (int i = 0; i < n_objs; i++) {
			struct object *o = &objs[i];
			if (o->kind != 0)
				continue;
			ro.black = (uint8_t)lrintf(rng_range(&rng, 10, 35));
			ro.white = (uint8_t)lrintf(rng_range(&rng, 225, 250));
			if (p.sheet > 0) {
				ro.black = (uint8_t)lrintf(sheet.ink);
				ro.white = (uint8_t)lrintf(sheet.paper);
			}
			const struct art art = {&layouts[o->id], drawings ? &drawings[o->id] : NULL};
			if (p.sheet <= 0)
				symbol_pose(&cam, o);
			if (cam.tilted)
				draw_tilted(&raster, &view, &cam, &art, o, &ro, table, &card);
			else
				art_draw(&art, view_len(&view, o->size), o->angle, view_x(&view, o->x),
					 view_y(&view, o->y), &raster, &ro);
			struct truth *t = &tr[n_tr++];
			t->id = o->id;
			t->covered = 0;
			symbol_truth(&cam, &art, o, &t->x, &t->y, &t->angle, &t->size);
		}
		for (int i = 0; i < n_objs; i++) {
			const struct object *o = &objs[i];
			if (o->kind != 1)
				continue;
			float s[5] = {o->x, o->y, o->r, o->r, 0};
			paint_view(&raster, &view, s, 1, 2, inside_ellipse, o->x - o->r, o->y - o->r,
				   o->x + o->r, o->y + o->r, o->grey);
		}
		if (view.warp)
			resample_camera(&raster, &view, &cam, f, p.w, p.h);
		else
			for (int y = 0; y < p.h; y++) {
				const uint8_t *row = image_u8_row(&raster, y);
				for (int x = 0; x < p.w; x++)
					f[(size_t)y * (size_t)p.w + (size_t)x] = row[x];
			}
		dot_gain(f, tmp, p.w, p.h, p.dot_gain);
		paper_texture(f, tmp, tmp2, p.w, p.h, p.paper, &rng2);
		place_hands(hands, &n_hands, &rng2, objs, n_objs, &cam, &p);
		paint_hands(f, p.w, p.h, hands, n_hands);

		fprintf(truth, "%s\n  {\"frame\": %d, \"fiducials\": [", fr ? "," : "", fr);
		for (int i = 0, k = 0; i < n_objs; i++) {
			if (objs[i].kind != 0)
				continue;
			struct truth *t = &tr[k];
			t->shadow_edge = false;
			for (int j = 0; j < n_hands; j++) {
				if (hands[j].visible)
					t->covered += hand_cover(&hands[j], &cam, &objs[i], 0, 0, 0);
				if (hand_cover(&hands[j], &cam, &objs[i], hands[j].dx, hands[j].dy, hands[j].pen) > 0)
					t->shadow_edge = true;
			}
			t->covered = t->covered > 1 ? 1 : t->covered;
			fprintf(truth,
				"%s\n    {\"id\": %d, \"x\": %.4f, \"y\": %.4f, \"angle\": %.6f, "
				"\"size\": %.4f",
				k ? "," : "", t->id, (double)t->x, (double)t->y, (double)t->angle,
				(double)t->size);
			if (t->covered > 0)
				fprintf(truth, ", \"covered\": %.4f, \"occluded\": true",
					(double)t->covered);
			else if (t->shadow_edge)
				fprintf(truth, ", \"shadow_edge\": true");
			fprintf(truth, "}");
			k++;
		}
		fprintf(truth, "],\n   \"fingers\": [");
		for (int i = 0, first = 1; i < n_objs; i++) {
			const struct object *o = &objs[i];
			if (o->kind != 1)
				continue;
			fprintf(truth, "%s{\"x\": %.4f, \"y\": %.4f, \"r\": %.4f}", first ? "" : ", ",
				(double)o->x, (double)o->y, (double)o->r);
			first = 0;
		}
		fprintf(truth, "]}");

	lit:;
		/* Light and contrast act on reflectance, before the lens blurs. */
		float hx = rng_range(&rng, 0.3f, 0.7f) * (float)p.w;
		float hy = rng_range(&rng, 0.3f, 0.7f) * (float)p.h;
		float ga = rng_range(&rng, 0, 6.2832f), gx = cosf(ga), gy = sinf(ga);
		float diag = hypotf((float)p.w, (float)p.h) * 0.5f;
		float spot[20][4];
		for (int k = 0; k < p.hotspots; k++) {
			spot[k][0] = rng_range(&rng2, 0.1f, 0.9f) * (float)p.w;
			spot[k][1] = rng_range(&rng2, 0.1f, 0.9f) * (float)p.h;
			float sd = rng_range(&rng2, 0.05f, 0.12f) * (float)(p.w < p.h ? p.w : p.h);
			spot[k][2] = 0.5f / (sd * sd);
			spot[k][3] = p.hotspot_gain * rng_range(&rng2, 0.6f, 1.0f);
		}
		for (int y = 0; y < p.h; y++) {
			for (int x = 0; x < p.w; x++) {
				float *px = &f[(size_t)y * (size_t)p.w + (size_t)x];
				float rx = ((float)x - hx) / diag, ry = ((float)y - hy) / diag;
				float lin = (((float)x / (float)p.w - 0.5f) * gx +
					     ((float)y / (float)p.h - 0.5f) * gy);
				float illum = 1.0f - p.light * (0.7f * (rx * rx + ry * ry) + 0.6f * lin);
				if (illum < 0.05f)
					illum = 0.05f;
				float v = 128.0f + (*px - 128.0f) * p.contrast;
				if (p.vignette > 0) {
					float cx = ((float)x - 0.5f * (float)(p.w - 1)) / diag;
					float cy = ((float)y - 0.5f * (float)(p.h - 1)) / diag;
					illum *= 1.0f - p.vignette * (cx * cx + cy * cy);
				}
				if (n_hands)
					illum *= shadow_light(hands, n_hands, p.one_light, (float)x, (float)y);
				v *= illum;
				for (int k = 0; k < p.hotspots; k++) {
					float dx = (float)x - spot[k][0], dy = (float)y - spot[k][1];
					v += spot[k][3] * expf(-(dx * dx + dy * dy) * spot[k][2]);
				}
				*px = v;
			}
		}
		blur_motion(f, tmp, p.w, p.h, p.motion, rng_range(&rng, 0, 3.1416f));
		blur_disc(f, tmp, p.w, p.h, p.defocus);
		blur_gauss(f, tmp, p.w, p.h, p.blur);
		camera_tone(f, tmp, tmp2, p.w, p.h, &p);
		for (int y = 0; y < p.h; y++) {
			uint8_t *row = image_u8_row(&img, y);
			for (int x = 0; x < p.w; x++) {
				float v = f[(size_t)y * (size_t)p.w + (size_t)x];
				if (p.shot > 0)
					v += sqrtf(p.noise * p.noise + p.shot * fmaxf(v, 0)) *
					     (float)rng_gauss(&rng);
				else if (p.noise > 0)
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
	image_u8_free(&raster);
	image_u8_free(&card);
	free(f);
	free(tmp);
	free(tmp2);
	free(layouts);
	for (int i = 0; drawings && i < tf.n; i++)
		drawing_free(&drawings[i]);
	free(drawings);
	tree_set_free(set);
	treefile_free(&tf);
	return rc;
}
