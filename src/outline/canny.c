/* The Canny CPU reference: see canny.h for the contract and the algorithm. */
#include "canny.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"

enum { CLS_NONE = 0, CLS_WEAK = 1, CLS_STRONG = 2 };

struct canny {
	struct canny_config cfg;
	int taps[CANNY_MAX_RADIUS + 1];
	int radius;
	/* Frame-indexed scratch (pixel (x, y) at [y * width + x] of the frame
	 * being processed); only the rectangle and its apron are touched. */
	uint16_t *rows;  /* T: the Gaussian's row pass */
	uint8_t *smooth; /* S */
	uint16_t *mag;   /* M */
	uint8_t *dir;    /* D */
	uint8_t *cls;    /* none / weak / strong, after suppression */
	int32_t *stack;  /* hysteresis flood */
};

int canny_gauss_taps(int sigma_tenths, int w[CANNY_MAX_RADIUS + 1])
{
	double f[CANNY_MAX_RADIUS + 1], total = 0.0, sigma = sigma_tenths / 10.0;
	int r, side = 0;
	if (sigma_tenths < 0 || sigma_tenths > CANNY_MAX_SIGMA_TENTHS)
		return ERR_RANGE;
	for (int i = 0; i <= CANNY_MAX_RADIUS; i++)
		w[i] = 0;
	w[0] = 256;
	if (sigma_tenths == 0)
		return 0;
	r = (int)ceil(3.0 * sigma);
	if (r > CANNY_MAX_RADIUS)
		r = CANNY_MAX_RADIUS;
	for (int i = 0; i <= r; i++) {
		f[i] = exp(-(double)(i * i) / (2.0 * sigma * sigma));
		total += i ? 2.0 * f[i] : f[i];
	}
	for (int i = 1; i <= r; i++) {
		w[i] = (int)floor(f[i] / total * 256.0 + 0.5);
		side += w[i];
	}
	w[0] = 256 - 2 * side;
	while (r > 0 && w[r] == 0)
		r--;
	return r;
}

int canny_config_check(const struct canny_config *cfg)
{
	if (cfg->max_width < 1 || cfg->max_height < 1 || cfg->max_width > IMAGE_MAX_SIDE ||
	    cfg->max_height > IMAGE_MAX_SIDE || cfg->sigma_tenths < 0 || cfg->sigma_tenths > CANNY_MAX_SIGMA_TENTHS ||
	    cfg->low < 1 || cfg->high < cfg->low || cfg->high > CANNY_MAG_MAX)
		return ERR_RANGE;
	return 0;
}

struct canny *canny_create(const struct canny_config *cfg, int *err)
{
	struct canny *c;
	size_t px;
	if (canny_config_check(cfg) < 0) {
		*err = ERR_RANGE;
		return NULL;
	}
	c = calloc(1, sizeof *c);
	if (!c)
		goto nomem;
	c->cfg = *cfg;
	c->radius = canny_gauss_taps(cfg->sigma_tenths, c->taps);
	px = (size_t)cfg->max_width * (size_t)cfg->max_height;
	c->rows = malloc(px * sizeof *c->rows);
	c->smooth = malloc(px);
	c->mag = malloc(px * sizeof *c->mag);
	c->dir = malloc(px);
	c->cls = malloc(px);
	c->stack = malloc(px * sizeof *c->stack);
	if (!c->rows || !c->smooth || !c->mag || !c->dir || !c->cls || !c->stack)
		goto nomem;
	*err = 0;
	return c;
nomem:
	canny_destroy(c);
	*err = ERR_NOMEM;
	return NULL;
}

void canny_destroy(struct canny *c)
{
	if (!c)
		return;
	free(c->rows);
	free(c->smooth);
	free(c->mag);
	free(c->dir);
	free(c->cls);
	free(c->stack);
	free(c);
}

int canny_set_config(struct canny *c, const struct canny_config *cfg)
{
	if (canny_config_check(cfg) < 0 || cfg->max_width > c->cfg.max_width || cfg->max_height > c->cfg.max_height)
		return ERR_RANGE;
	c->cfg.sigma_tenths = cfg->sigma_tenths;
	c->cfg.low = cfg->low;
	c->cfg.high = cfg->high;
	c->radius = canny_gauss_taps(cfg->sigma_tenths, c->taps);
	return 0;
}

int canny_taps(const struct canny *c, int w[CANNY_MAX_RADIUS + 1])
{
	memcpy(w, c->taps, sizeof c->taps);
	return c->radius;
}

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static inline int absi(int v) { return v < 0 ? -v : v; }

/* Half-open box [x0, x1) x [y0, y1). */
struct box {
	int x0, y0, x1, y1;
};

static struct box grow(struct box b, int n, int w, int h)
{
	struct box g = {clampi(b.x0 - n, 0, w), clampi(b.y0 - n, 0, h), clampi(b.x1 + n, 0, w), clampi(b.y1 + n, 0, h)};
	return g;
}

/* Steps 1-2-3-4 over box m (S over m grown by one, T over its rows +- R). */
static void gradient(struct canny *c, const struct image_u8 *in, struct box m)
{
	const int w = in->width, h = in->height, R = c->radius;
	const int *tw = c->taps;
	struct box s = grow(m, 1, w, h);
	int ty0 = clampi(s.y0 - R, 0, h), ty1 = clampi(s.y1 + R, 0, h);

	for (int y = ty0; y < ty1; y++) {
		const uint8_t *row = image_u8_row(in, y);
		uint16_t *t = c->rows + (size_t)y * w;
		for (int x = s.x0; x < s.x1; x++) {
			unsigned acc = (unsigned)tw[0] * row[x];
			for (int i = 1; i <= R; i++)
				acc += (unsigned)tw[i] * ((unsigned)row[clampi(x + i, 0, w - 1)] +
							  row[clampi(x - i, 0, w - 1)]);
			t[x] = (uint16_t)acc;
		}
	}
	for (int y = s.y0; y < s.y1; y++) {
		uint8_t *out = c->smooth + (size_t)y * w;
		for (int x = s.x0; x < s.x1; x++) {
			unsigned acc = (unsigned)tw[0] * c->rows[(size_t)y * w + x];
			for (int j = 1; j <= R; j++)
				acc += (unsigned)tw[j] * ((unsigned)c->rows[(size_t)clampi(y + j, 0, h - 1) * w + x] +
							  c->rows[(size_t)clampi(y - j, 0, h - 1) * w + x]);
			out[x] = (uint8_t)((acc + 32768u) >> 16);
		}
	}
	for (int y = m.y0; y < m.y1; y++) {
		const uint8_t *up = c->smooth + (size_t)clampi(y - 1, 0, h - 1) * w;
		const uint8_t *mid = c->smooth + (size_t)y * w;
		const uint8_t *dn = c->smooth + (size_t)clampi(y + 1, 0, h - 1) * w;
		for (int x = m.x0; x < m.x1; x++) {
			int l = clampi(x - 1, 0, w - 1), r = clampi(x + 1, 0, w - 1);
			int gx = (up[r] + 2 * mid[r] + dn[r]) - (up[l] + 2 * mid[l] + dn[l]);
			int gy = (dn[l] + 2 * dn[x] + dn[r]) - (up[l] + 2 * up[x] + up[r]);
			int ax = absi(gx), ay = absi(gy), d;
			if (128 * ay <= 53 * ax)
				d = CANNY_DIR_H;
			else if (128 * ax <= 53 * ay)
				d = CANNY_DIR_V;
			else
				d = (gx > 0) == (gy > 0) ? CANNY_DIR_DIAG : CANNY_DIR_ANTI;
			c->mag[(size_t)y * w + x] = (uint16_t)(ax + ay);
			c->dir[(size_t)y * w + x] = (uint8_t)d;
		}
	}
}

/* M at (x, y), 0 outside the frame. */
static inline int mag_at(const struct canny *c, int w, int h, int x, int y)
{
	if (x < 0 || y < 0 || x >= w || y >= h)
		return 0;
	return c->mag[(size_t)y * w + x];
}

/* Steps 5-6 over box r (M known over r grown by one). */
static void suppress(struct canny *c, int w, int h, struct box r)
{
	static const int nx[4] = {-1, -1, 0, 1}, ny[4] = {0, -1, -1, -1};
	const int low = c->cfg.low, high = c->cfg.high;
	for (int y = r.y0; y < r.y1; y++)
		for (int x = r.x0; x < r.x1; x++) {
			size_t i = (size_t)y * w + x;
			int m = c->mag[i], d = c->dir[i], cls = CLS_NONE;
			if (m >= low) {
				int a = mag_at(c, w, h, x + nx[d], y + ny[d]);
				int b = mag_at(c, w, h, x - nx[d], y - ny[d]);
				if (m > a && m >= b)
					cls = m >= high ? CLS_STRONG : CLS_WEAK;
			}
			c->cls[i] = (uint8_t)cls;
		}
}

/* Step 7 inside box r: flood from every strong pixel through candidates. */
static void hysteresis(struct canny *c, int w, struct box r, const struct canny_out *out)
{
	int32_t *stack = c->stack;
	for (int y = r.y0; y < r.y1; y++)
		memset(out->edge + (size_t)y * out->stride + r.x0, 0, (size_t)(r.x1 - r.x0));
	for (int y = r.y0; y < r.y1; y++)
		for (int x = r.x0; x < r.x1; x++) {
			uint8_t *e = out->edge + (size_t)y * out->stride + x;
			if (c->cls[(size_t)y * w + x] != CLS_STRONG || *e)
				continue;
			int n = 0;
			*e = 1;
			stack[n++] = y * w + x;
			while (n > 0) {
				int p = stack[--n], py = p / w, px = p - py * w;
				for (int dy = -1; dy <= 1; dy++) {
					int qy = py + dy;
					if (qy < r.y0 || qy >= r.y1)
						continue;
					for (int dx = -1; dx <= 1; dx++) {
						int qx = px + dx;
						if (qx < r.x0 || qx >= r.x1)
							continue;
						uint8_t *qe = out->edge + (size_t)qy * out->stride + qx;
						if (*qe || c->cls[(size_t)qy * w + qx] == CLS_NONE)
							continue;
						*qe = 1;
						stack[n++] = qy * w + qx;
					}
				}
			}
		}
}

int canny_process_roi(struct canny *c, const struct image_u8 *in, const struct canny_rect *roi,
		      const struct canny_out *out)
{
	const int w = in->width, h = in->height;
	if (w < 1 || h < 1 || w > c->cfg.max_width || h > c->cfg.max_height || out->stride < w)
		return ERR_SIZE;
	if (!out->edge)
		return ERR_RANGE;
	struct box r = {roi->x, roi->y, roi->x + roi->width, roi->y + roi->height};
	if (roi->width <= 0 || roi->height <= 0)
		return 0;
	r = grow(r, 0, w, h);
	if (r.x0 >= r.x1 || r.y0 >= r.y1)
		return 0;
	struct box m = grow(r, 1, w, h);
	gradient(c, in, m);
	suppress(c, w, h, r);
	hysteresis(c, w, r, out);
	for (int y = r.y0; y < r.y1; y++) {
		size_t n = (size_t)(r.x1 - r.x0);
		if (out->mag)
			memcpy(out->mag + (size_t)y * out->stride + r.x0, c->mag + (size_t)y * w + r.x0,
			       n * sizeof *out->mag);
		if (out->dir)
			memcpy(out->dir + (size_t)y * out->stride + r.x0, c->dir + (size_t)y * w + r.x0, n);
	}
	return 0;
}

int canny_process(struct canny *c, const struct image_u8 *in, const struct canny_out *out)
{
	struct canny_rect all = {0, 0, in->width, in->height};
	return canny_process_roi(c, in, &all, out);
}
