#include "classify.h"

#include <math.h>

/* Holes filled back in before the shape is scored: a fingertip with a
 * specular dark spot is still a solid ellipse. */
/* Dark specks of camera noise inside a bright region are not holes. */
#define FINGER_SPECK_AREA 3
/* More neighbours than the surround, a hole and a few specks: not a finger. */
#define FINGER_MAX_NEIGHBOURS 8

struct shape {
	double area, cx, cy;
	double mxx, myy, mxy;   /* central second moments, px^2 */
	int n_holes;            /* holes big enough to be more than noise */
	double hole_area;
	int32_t surround;       /* the enclosing neighbour, -1 if none */
};

static int region_side(const struct region *g)
{
	int w = g->x1 - g->x0 + 1, h = g->y1 - g->y0 + 1;
	return w > h ? w : h;
}

static bool box_inside(const struct region *in, const struct region *out)
{
	return in->x0 > out->x0 && in->x1 < out->x1 && in->y0 > out->y0 && in->y1 < out->y1;
}

static void shape_measure(const struct region_tree *t, int32_t r, struct shape *s)
{
	const struct region *g = &t->regions[r];
	double a = (double)g->area, sx = (double)g->sum_x, sy = (double)g->sum_y;
	double sxx = (double)g->sum_xx, syy = (double)g->sum_yy, sxy = (double)g->sum_xy;
	const int32_t *adj = region_adj(t, r);
	s->n_holes = 0;
	s->hole_area = 0;
	s->surround = -1;
	for (int32_t i = 0; i < g->n_adj; i++) {
		const struct region *n = &t->regions[adj[i]];
		if (box_inside(n, g)) {
			if (n->area > FINGER_SPECK_AREA && 50 * (int64_t)n->area > g->area)
				s->n_holes++;
			s->hole_area += (double)n->area;
			a += (double)n->area;
			sx += (double)n->sum_x;
			sy += (double)n->sum_y;
			sxx += (double)n->sum_xx;
			syy += (double)n->sum_yy;
			sxy += (double)n->sum_xy;
		} else if (s->surround < 0 || box_inside(g, n)) {
			s->surround = adj[i];
		}
	}
	s->area = a;
	s->cx = sx / a;
	s->cy = sy / a;
	/* + 1/12: a pixel is a unit square, not a point */
	s->mxx = sxx / a - s->cx * s->cx + 1.0 / 12.0;
	s->myy = syy / a - s->cy * s->cy + 1.0 / 12.0;
	s->mxy = sxy / a - s->cx * s->cy;
}

static void shape_axes(const struct shape *s, double *l1, double *l2, double *theta)
{
	double tr = 0.5 * (s->mxx + s->myy);
	double d = sqrt(0.25 * (s->mxx - s->myy) * (s->mxx - s->myy) + s->mxy * s->mxy);
	*l1 = tr + d;
	*l2 = tr - d > 0 ? tr - d : 0;
	*theta = 0.5 * atan2(2.0 * s->mxy, s->mxx - s->myy);
}

/* Roundness in 0..1: the aspect ratio of the moment ellipse times how well
 * the area fills that ellipse (a solid ellipse fills it exactly; rings,
 * crosses and ragged shapes do not). */
static float shape_roundness(const struct shape *s)
{
	double l1, l2, theta;
	shape_axes(s, &l1, &l2, &theta);
	if (l1 <= 0)
		return 0;
	double ea = 2.0 * sqrt(l1), eb = 2.0 * sqrt(l2);
	double fill = s->area / (M_PI * ea * eb + 1e-9);
	double fill_score = 1.0 - fabs(1.0 - fill) / 0.3;
	if (fill_score < 0)
		fill_score = 0;
	return (float)(fill_score * (eb / ea));
}

/* The dark region around a finger is the table (huge, saturated) or the
 * thin halo the local threshold draws around a bright spot: it holds the
 * finger and little else. A dark region of a few finger sizes that holds
 * several bright spots is a symbol the matcher could not read (blur, damage):
 * its white holes are round and bright but are not fingers. */
static bool surround_is_symbol_like(const struct region_tree *t, int32_t r, int32_t sr, float fs)
{
	const struct region *s = &t->regions[sr];
	if (s->n_adj == 0 || region_side(s) >= 6.0f * fs)
		return false;
	const int32_t *adj = region_adj(t, sr);
	int n_spots = 0;
	for (int32_t i = 0; i < s->n_adj; i++) {
		const struct region *n = &t->regions[adj[i]];
		if (adj[i] != r && n->area > FINGER_SPECK_AREA && box_inside(n, s))
			n_spots++;
	}
	return n_spots >= 2;
}

static float finger_min_roundness(float sensitivity)
{
	if (sensitivity < 0)
		sensitivity = 0;
	if (sensitivity > 1)
		sensitivity = 1;
	return 0.9f - 0.5f * sensitivity;
}

/* Mean grey of the region's own pixels minus the mean of a ring just outside
 * its bounding box: a finger pressed on the table is much brighter than the
 * table around it, a hovering hand is a soft glow. */
static float region_contrast(const struct region_tree *t, int32_t r, const struct image_u8 *grey)
{
	const struct region *g = &t->regions[r];
	int64_t in_sum = 0, in_n = 0;
	for (int y = g->y0; y <= g->y1; y++) {
		const uint8_t *row = image_u8_row(grey, y);
		for (int32_t k = t->row_first_run[y]; k < t->row_first_run[y + 1]; k++) {
			const struct run *u = &t->runs[k];
			if (u->region != r)
				continue;
			for (int x = u->x; x < u->x + u->len; x++)
				in_sum += row[x];
			in_n += u->len;
		}
	}
	int side = region_side(g);
	int gap = 1 + side / 8, width = 2 + side / 8;
	int ix0 = g->x0 - gap, ix1 = g->x1 + gap, iy0 = g->y0 - gap, iy1 = g->y1 + gap;
	int ox0 = ix0 - width, ox1 = ix1 + width, oy0 = iy0 - width, oy1 = iy1 + width;
	image_u8_clip_box(grey, &ox0, &oy0, &ox1, &oy1);
	int64_t out_sum = 0, out_n = 0;
	for (int y = oy0; y <= oy1; y++) {
		const uint8_t *row = image_u8_row(grey, y);
		bool inner_row = y >= iy0 && y <= iy1;
		for (int x = ox0; x <= ox1; x++) {
			if (inner_row && x >= ix0 && x <= ix1) {
				x = ix1;
				continue;
			}
			out_sum += row[x];
			out_n++;
		}
	}
	if (!in_n || !out_n)
		return 0;
	return (float)((double)in_sum / (double)in_n - (double)out_sum / (double)out_n);
}

void fingers_find(const struct match_config *cfg, const struct region_tree *tree,
		  const struct image_u8 *grey, const uint8_t *claimed, struct detections *out)
{
	const float fs = cfg->finger_size_px;
	if (fs <= 0 || !grey || grey->width != tree->width || grey->height != tree->height)
		return;
	const float min_round = finger_min_roundness(cfg->finger_sensitivity);
	for (int32_t r = 0; r < tree->n_regions; r++) {
		const struct region *g = &tree->regions[r];
		if (!g->colour || (claimed && claimed[r]) || (g->flags & (REGION_BORDER | REGION_SATURATED)))
			continue;
		if (g->n_adj < 1 || g->n_adj > FINGER_MAX_NEIGHBOURS)
			continue;
		int side = region_side(g);
		if (side < 0.5f * fs || side > 2.0f * fs)
			continue;
		const int32_t *adj = region_adj(tree, r);
		bool near_symbol = false;
		for (int32_t i = 0; i < g->n_adj && claimed; i++)
			near_symbol |= claimed[adj[i]] != 0;
		if (near_symbol)
			continue;
		struct shape s;
		shape_measure(tree, r, &s);
		/* One small hole (a glint, a nail) is fine; a ring is not a finger. */
		if (s.n_holes > 1 || s.hole_area > 0.2 * s.area || s.surround < 0 || surround_is_symbol_like(tree, r, s.surround, fs))
			continue;
		float round = shape_roundness(&s);
		if (round < min_round)
			continue;
		float contrast = region_contrast(tree, r, grey);
		if (contrast < (float)cfg->finger_min_contrast)
			continue;
		if (out->n_fingers >= out->cap_fingers) {
			out->overflow = true;
			return;
		}
		struct finger_det *f = &out->fingers[out->n_fingers++];
		f->x = (float)s.cx;
		f->y = (float)s.cy;
		f->diameter_px = (float)side;
		f->roundness = round;
		f->contrast = contrast;
		f->region = r;
		f->sharpness = 0.0f;
		f->hover = false;
		f->in_hand = false;
		f->hand = 0;
	}
}

/* Exact extent of the region along its principal axes: every run's two end
 * points projected (a run is a straight segment, so its extremes are its
 * ends), each pixel counted as a unit square. */
static void oriented_box(const struct region_tree *t, int32_t r, double cx, double cy, double theta,
			 double *len_u, double *len_v)
{
	const struct region *g = &t->regions[r];
	double c = cos(theta), s = sin(theta);
	double umin = INFINITY, umax = -INFINITY, vmin = INFINITY, vmax = -INFINITY;
	for (int y = g->y0; y <= g->y1; y++) {
		for (int32_t k = t->row_first_run[y]; k < t->row_first_run[y + 1]; k++) {
			const struct run *u = &t->runs[k];
			if (u->region != r)
				continue;
			double ends[2] = { (double)u->x, (double)(u->x + u->len - 1) };
			for (int e = 0; e < 2; e++) {
				double dx = ends[e] - cx, dy = (double)y - cy;
				double pu = dx * c + dy * s, pv = -dx * s + dy * c;
				umin = fmin(umin, pu);
				umax = fmax(umax, pu);
				vmin = fmin(vmin, pv);
				vmax = fmax(vmax, pv);
			}
		}
	}
	/* + the pixel's own extent along the axis */
	double pad_u = fabs(c) + fabs(s), pad_v = pad_u;
	*len_u = umax - umin + pad_u;
	*len_v = vmax - vmin + pad_v;
}

#define BLOB_MAX_HOLES 3
/* A region around a symbol whose box is at most this many times the
 * symbol's side is the symbol's own white card or paper, not an object. */
#define BLOB_SURROUND_MAX 2.0f

/* True when region g belongs to something already reported: a finger found
 * this frame, or the surround of a decoded or fuzzy symbol (its box holds
 * the symbol's whole box and is not much larger). */
static bool blob_is_reported(const struct region *g, int32_t r, const struct detections *out)
{
	for (int i = 0; i < out->n_fingers; i++)
		if (out->fingers[i].region == r)
			return true;
	const float side = (float)region_side(g);
	for (int i = 0; i < out->n_fids + out->n_fuzzy; i++) {
		const struct fiducial_det *d = i < out->n_fids ? &out->fids[i] : &out->fuzzy[i - out->n_fids];
		const float h = 0.5f * d->size_px;
		if (side <= BLOB_SURROUND_MAX * d->size_px && (float)g->x0 <= d->x - h + 1.0f &&
		    (float)g->x1 >= d->x + h - 1.0f && (float)g->y0 <= d->y - h + 1.0f && (float)g->y1 >= d->y + h - 1.0f)
			return true;
	}
	return false;
}

void blobs_find(const struct match_config *cfg, const struct region_tree *tree,
		const uint8_t *claimed, struct detections *out)
{
	if (cfg->blob_max_px <= 0)
		return;
	for (int32_t r = 0; r < tree->n_regions; r++) {
		const struct region *g = &tree->regions[r];
		if (!g->colour || (claimed && claimed[r]) || (g->flags & REGION_BORDER))
			continue;
		int side = region_side(g);
		if (side < cfg->blob_min_px || side > cfg->blob_max_px)
			continue;
		/* Blobs are the untagged regions: symbols and fingers go out as
		 * such (and as blobs with their own session when object_blobs or
		 * finger_blobs ask the tracker for it). */
		if (blob_is_reported(g, r, out))
			continue;
		/* A saturated region has lost its neighbour list: its holes are
		 * unknown, so it cannot be shown to have few. */
		if (g->n_adj < 1 || g->n_adj > BLOB_MAX_HOLES + 1)
			continue;
		struct shape s;
		double a = (double)g->area;
		s.area = a;
		s.cx = (double)g->sum_x / a;
		s.cy = (double)g->sum_y / a;
		s.mxx = (double)g->sum_xx / a - s.cx * s.cx + 1.0 / 12.0;
		s.myy = (double)g->sum_yy / a - s.cy * s.cy + 1.0 / 12.0;
		s.mxy = (double)g->sum_xy / a - s.cx * s.cy;
		double l1, l2, theta;
		shape_axes(&s, &l1, &l2, &theta);
		double lu, lv;
		oriented_box(tree, r, s.cx, s.cy, theta, &lu, &lv);
		if (lv > lu) {
			double tmp = lu;
			lu = lv;
			lv = tmp;
			theta += 0.5 * M_PI;
		}
		/* y grows downwards, so atan2 in image coordinates already turns
		 * clockwise on screen. */
		theta = fmod(theta, M_PI);
		if (theta < 0)
			theta += M_PI;
		if (theta >= M_PI)
			theta -= M_PI;
		if (out->n_blobs >= out->cap_blobs) {
			out->overflow = true;
			return;
		}
		struct blob_det *b = &out->blobs[out->n_blobs++];
		b->x = (float)s.cx;
		b->y = (float)s.cy;
		b->angle = (float)theta;
		b->w = (float)lu;
		b->h = (float)lv;
		b->area_px = (float)g->area;
		b->region = r;
		b->hand = false;
	}
}
