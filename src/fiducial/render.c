#include "render.h"

#include <math.h>
#include <string.h>

#include "../core/err.h"

#define PI_F 3.14159265358979f

/* Card geometry (card units); see render.h for the picture. */
#define RING_OUTER 0.46f
#define RING_OUTER_R 0.12f
#define ROOT_HALF 0.405f
#define ROOT_R 0.07f

/* Child geometry in feature units (the hole diameter is 1). Measured with
 * tabletrack-scenes + tabletrack-detect: recall at 40-56 px cards and
 * under blur rises with the hole size far more than it suffers from thin
 * walls and narrow gaps, so walls and gaps are half a hole and the holes
 * as large as the packing allows. */
static const float k_hole_d = 1.0f; /* hole diameter */
static const float k_wall = 0.5f;   /* blob ink around and between holes */
static const float k_dot_d = 1.0f;  /* dot diameter */
static const float k_gap = 0.6f;    /* paper between children, and to the ring */
#define Q_MIN 0.4f                  /* card units, see render_layout_tree */
#define MAX_FEATURE 0.11f           /* card units: few-leaf trees stay modest */
#define STEP 0.25f                  /* placement grid, feature units */
#define N_ORIENT 12

void render_options_default(struct render_options *opt)
{
	opt->black = 0;
	opt->white = 255;
	opt->supersample = 4;
}

float render_wrap_angle(float a)
{
	float t = fmodf(a, 2.0f * PI_F);
	if (t < 0.0f)
		t += 2.0f * PI_F;
	if (t >= 2.0f * PI_F)
		t = 0.0f;
	return t;
}

/* ---- layout in feature units ------------------------------------------- */

struct pt {
	float x, y;
};

/* A child being placed: its hole sites (a dot has one site, no hole) and
 * skeleton edges between neighbouring sites, in its own frame. */
struct item {
	int holes;
	int n_sites, n_edges;
	struct pt site[RENDER_MAX_NODES];
	uint8_t ea[RENDER_MAX_SEGMENTS], eb[RENDER_MAX_SEGMENTS];
	float r;     /* outline radius around the skeleton */
	float reach; /* farthest outline point from the item's origin */
	/* placement */
	float px, py, c, s;
	struct pt rot[RENDER_MAX_NODES]; /* sites turned by (c, s), origin at 0 */
	struct pt at[RENDER_MAX_NODES];  /* sites where placed */
};

static float pitch(void)
{
	return k_hole_d + k_wall;
}

/* Compact hex cluster of n sites: grow from one site, each time adding the
 * free lattice neighbour that least increases the cluster's moment of
 * inertia (ties: first in a fixed scan order), so clusters are round
 * (2: pair, 3: triangle, 7: hexagon) and the same n gives the same shape. */
static void cluster_build(struct item *it, int n)
{
	int q[RENDER_MAX_NODES], r[RENDER_MAX_NODES];
	static const int nq[6] = {1, 0, -1, -1, 0, 1}, nr[6] = {0, 1, 1, 0, -1, -1};
	q[0] = r[0] = 0;
	int m = 1;
	while (m < n) {
		double best = 1e30;
		int bq = 0, br = 0;
		for (int i = 0; i < m; i++)
			for (int d = 0; d < 6; d++) {
				int cq = q[i] + nq[d], cr = r[i] + nr[d], taken = 0;
				for (int j = 0; j < m && !taken; j++)
					taken = q[j] == cq && r[j] == cr;
				if (taken)
					continue;
				double sx = 0, sy = 0, s2 = 0;
				for (int j = 0; j <= m; j++) {
					int jq = j < m ? q[j] : cq, jr = j < m ? r[j] : cr;
					double x = jq + 0.5 * jr, y = 0.86602540378 * jr;
					sx += x;
					sy += y;
					s2 += x * x + y * y;
				}
				double inertia = s2 - (sx * sx + sy * sy) / (m + 1);
				if (inertia < best - 1e-9) {
					best = inertia;
					bq = cq;
					br = cr;
				}
			}
		q[m] = bq;
		r[m] = br;
		m++;
	}
	double sx = 0, sy = 0;
	for (int i = 0; i < n; i++) {
		sx += q[i] + 0.5 * r[i];
		sy += 0.86602540378 * r[i];
	}
	float p = pitch();
	it->n_sites = n;
	for (int i = 0; i < n; i++) {
		it->site[i].x = (float)((q[i] + 0.5 * r[i] - sx / n) * p);
		it->site[i].y = (float)((0.86602540378 * r[i] - sy / n) * p);
	}
	it->n_edges = 0;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			int dq = q[j] - q[i], dr = r[j] - r[i];
			int adj = 0;
			for (int d = 0; d < 6; d++)
				adj |= dq == nq[d] && dr == nr[d];
			if (adj && it->n_edges < RENDER_MAX_SEGMENTS) {
				it->ea[it->n_edges] = (uint8_t)i;
				it->eb[it->n_edges] = (uint8_t)j;
				it->n_edges++;
			}
		}
	if (n == 1) {
		it->ea[0] = it->eb[0] = 0;
		it->n_edges = 1;
	}
	float reach = 0;
	for (int i = 0; i < n; i++) {
		float d = hypotf(it->site[i].x, it->site[i].y);
		if (d > reach)
			reach = d;
	}
	it->r = it->holes ? 0.5f * k_hole_d + k_wall : 0.5f * k_dot_d;
	it->reach = reach + it->r;
}

static struct pt item_site(const struct item *it, int i, float px, float py, float c, float s)
{
	struct pt p = {px + (c * it->site[i].x - s * it->site[i].y),
	               py + (s * it->site[i].x + c * it->site[i].y)};
	return p;
}

static void item_turn(struct item *it, float c, float s)
{
	for (int i = 0; i < it->n_sites; i++)
		it->rot[i] = item_site(it, i, 0.0f, 0.0f, c, s);
}

static void item_put(struct item *it, float px, float py, float c, float s)
{
	it->px = px;
	it->py = py;
	it->c = c;
	it->s = s;
	for (int i = 0; i < it->n_sites; i++)
		it->at[i] = item_site(it, i, px, py, c, s);
}

static float pt_seg_dist2(struct pt p, struct pt a, struct pt b)
{
	float vx = b.x - a.x, vy = b.y - a.y, wx = p.x - a.x, wy = p.y - a.y;
	float vv = vx * vx + vy * vy, t = vv > 0 ? (wx * vx + wy * vy) / vv : 0.0f;
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	float dx = wx - t * vx, dy = wy - t * vy;
	return dx * dx + dy * dy;
}

/* Segments in a plane that do not cross: the nearest pair of points
 * involves an endpoint. Crossing segments are at distance 0, which the
 * caller never accepts, and crossing is caught because an endpoint of one
 * then lies within the other's capsule at the sizes used. */
static float seg_seg_dist2(struct pt a, struct pt b, struct pt c, struct pt d)
{
	float m = pt_seg_dist2(a, c, d), t;
	if ((t = pt_seg_dist2(b, c, d)) < m)
		m = t;
	if ((t = pt_seg_dist2(c, a, b)) < m)
		m = t;
	if ((t = pt_seg_dist2(d, a, b)) < m)
		m = t;
	return m;
}

/* Is `it`, turned as item_turn() left it, at (px, py) at least the gap
 * away from every placed item? */
static int item_fits(const struct item *it, float px, float py, const struct item *placed, int n_placed)
{
	for (int j = 0; j < n_placed; j++) {
		const struct item *o = &placed[j];
		float need = it->r + o->r + k_gap;
		float dcx = px - o->px, dcy = py - o->py;
		float far = it->reach + o->reach + k_gap;
		if (dcx * dcx + dcy * dcy >= far * far)
			continue;
		float need2 = need * need - 1e-4f;
		for (int e = 0; e < it->n_edges; e++) {
			struct pt a = {px + it->rot[it->ea[e]].x, py + it->rot[it->ea[e]].y};
			struct pt b = {px + it->rot[it->eb[e]].x, py + it->rot[it->eb[e]].y};
			for (int f = 0; f < o->n_edges; f++)
				if (seg_seg_dist2(a, b, o->at[o->ea[f]], o->at[o->eb[f]]) < need2)
					return 0;
		}
	}
	return 1;
}

struct box {
	float x0, y0, x1, y1;
};

static struct box item_box(const struct item *it, float px, float py, float c, float s)
{
	struct box b = {1e30f, 1e30f, -1e30f, -1e30f};
	for (int i = 0; i < it->n_sites; i++) {
		struct pt p = item_site(it, i, px, py, c, s);
		if (p.x - it->r < b.x0)
			b.x0 = p.x - it->r;
		if (p.y - it->r < b.y0)
			b.y0 = p.y - it->r;
		if (p.x + it->r > b.x1)
			b.x1 = p.x + it->r;
		if (p.y + it->r > b.y1)
			b.y1 = p.y + it->r;
	}
	return b;
}

static struct box box_union(struct box a, struct box b)
{
	struct box u = {a.x0 < b.x0 ? a.x0 : b.x0, a.y0 < b.y0 ? a.y0 : b.y0, a.x1 > b.x1 ? a.x1 : b.x1,
	                a.y1 > b.y1 ? a.y1 : b.y1};
	return u;
}

/* Greedy packing, largest child first: each child goes where the square
 * that holds everything stays smallest (the symbol is scaled to fill the
 * root afterwards, so that square sets the feature size); among equal
 * squares blobs keep close to the middle and low, dots go as high as they
 * can, so the black and white leaf centres lie far apart and the angle is
 * precise. Returns the bounding box of everything. */
struct bias {
	float blob_mid, blob_low, dot_high;
};

/* Packing variants, tried in turn: from pure compactness to dots firmly at
 * the top. */
static const struct bias k_bias[] = {
    {0.02f, 0.01f, 0.02f}, {0.02f, 0.02f, 0.05f}, {0.02f, 0.05f, 0.1f}, {0.02f, 0.1f, 0.3f},
    {0.02f, 0.2f, 1.0f},   {0.02f, 0.5f, 3.0f},   {0.02f, 1.0f, 10.0f},
};

static struct box place_items(struct item *items, int n, const struct bias *bi)
{
	struct box all = {0, 0, 0, 0};
	for (int k = 0; k < n; k++) {
		struct item *it = &items[k];
		if (k == 0) {
			item_put(it, 0, 0, 1, 0);
			all = item_box(it, 0, 0, 1, 0);
			continue;
		}
		float margin = 2.0f * it->reach + k_gap + STEP;
		int gx0 = (int)floorf((all.x0 - margin) / STEP), gx1 = (int)ceilf((all.x1 + margin) / STEP);
		int gy0 = (int)floorf((all.y0 - margin) / STEP), gy1 = (int)ceilf((all.y1 + margin) / STEP);
		int n_or = it->n_sites > 1 ? N_ORIENT : 1;
		float ccx = 0.5f * (all.x0 + all.x1), ccy = 0.5f * (all.y0 + all.y1);
		float best = 1e30f;
		int found = 0;
		for (int o = 0; o < n_or; o++) {
			float ang = (float)o * PI_F / 6.0f;
			float c = cosf(ang), s = sinf(ang);
			struct box ib = item_box(it, 0, 0, c, s);
			item_turn(it, c, s);
			for (int gy = gy0; gy <= gy1; gy++)
				for (int gx = gx0; gx <= gx1; gx++) {
					float px = (float)gx * STEP, py = (float)gy * STEP;
					struct box nb = {ib.x0 + px, ib.y0 + py, ib.x1 + px, ib.y1 + py};
					struct box u = box_union(all, nb);
					float side = u.x1 - u.x0 > u.y1 - u.y0 ? u.x1 - u.x0 : u.y1 - u.y0;
					float tie;
					if (it->holes)
						tie = bi->blob_mid * hypotf(px - ccx, py - ccy) -
						      bi->blob_low * py;
					else
						tie = bi->dot_high * py + 0.002f * fabsf(px - ccx);
					float cost = side + tie;
					if (cost >= best)
						continue;
					if (!item_fits(it, px, py, items, k))
						continue;
					best = cost;
					it->px = px;
					it->py = py;
					it->c = c;
					it->s = s;
					found = 1;
				}
		}
		if (!found) {
			/* Cannot happen: the scan window reaches past the box. */
			it->px = all.x1 + it->reach + k_gap;
			it->py = 0;
			it->c = 1;
			it->s = 0;
		}
		item_put(it, it->px, it->py, it->c, it->s);
		all = box_union(all, item_box(it, it->px, it->py, it->c, it->s));
	}
	return all;
}

static void add_shape(struct render_layout *l, float x, float y, float hw, float hh, float r, int white,
                      int depth, int leaf)
{
	struct render_shape *s = &l->shapes[l->n_shapes];
	s->x = x;
	s->y = y;
	s->hw = hw;
	s->hh = hh;
	s->radius = r;
	s->white = (uint8_t)white;
	s->depth = (int8_t)depth;
	s->leaf = (uint8_t)leaf;
	s->end = (int16_t)(l->n_shapes + 1);
	l->n_shapes++;
}

static void layout_truth(struct render_layout *l)
{
	double sw = 0, sx = 0, sy = 0, bw = 0, bx = 0, by = 0;
	l->n_black = l->n_leaves = 0;
	for (int i = 0; i < l->n_shapes; i++) {
		const struct render_shape *s = &l->shapes[i];
		if (!s->leaf)
			continue;
		double d = s->depth;
		double w = M_PI * (d + 0.5) * (d + 0.5);
		sw += w;
		sx += w * s->x;
		sy += w * s->y;
		l->n_leaves++;
		if (!s->white) {
			bw += w;
			bx += w * s->x;
			by += w * s->y;
			l->n_black++;
		}
	}
	l->centre_x = sw > 0 ? (float)(sx / sw) : 0.0f;
	l->centre_y = sw > 0 ? (float)(sy / sw) : 0.0f;
	if (bw > 0) {
		l->black_x = (float)(bx / bw);
		l->black_y = (float)(by / bw);
		double dx = (double)l->centre_x - l->black_x;
		double dy = (double)l->centre_y - l->black_y;
		l->angle0 = render_wrap_angle((float)(atan2(dy, dx) - M_PI / 2));
	} else {
		l->black_x = l->centre_x;
		l->black_y = l->centre_y;
		l->angle0 = 0.0f;
	}
}

int render_layout_tree(const char *tree, struct render_layout *out)
{
	memset(out, 0, sizeof *out);
	if (!tree)
		return ERR_FORMAT;
	const char *s = tree;
	char colour = 'w';
	if (*s == 'w' || *s == 'b')
		colour = *s++;
	if (*s != '0')
		return ERR_FORMAT;
	int n = (int)strlen(s);
	if (n < 2)
		return ERR_FORMAT;
	int depth = 0, prev = 0;
	for (int i = 1; i < n; i++) {
		if (s[i] < '1' || s[i] > '9')
			return ERR_FORMAT;
		int d = s[i] - '0';
		if (d > prev + 1)
			return ERR_FORMAT;
		prev = d;
		if (d > depth)
			depth = d;
	}
	if (n > RENDER_MAX_NODES)
		return ERR_RANGE;
	if (depth > 2)
		return ERR_UNSUPPORTED;

	int holes[RENDER_MAX_NODES];
	int n_children = 0;
	for (int i = 1; i < n; i++) {
		if (s[i] == '1')
			holes[n_children++] = 0;
		else
			holes[n_children - 1]++;
	}
	/* Canonical order is most holes first; insertion sort keeps it stable. */
	for (int i = 1; i < n_children; i++) {
		int h = holes[i], j = i;
		while (j > 0 && holes[j - 1] < h) {
			holes[j] = holes[j - 1];
			j--;
		}
		holes[j] = h;
	}
	/* Blobs first (largest first, dots last): dots fill what is left. */
	struct item items[RENDER_MAX_NODES];
	for (int i = 0; i < n_children; i++) {
		items[i].holes = holes[i];
		cluster_build(&items[i], holes[i] > 0 ? holes[i] : 1);
	}
	/* Each packing variant gives a feature size f (card units) and an
	 * angle precision q; keep the variant with the best
	 * f * min(1, q / Q_MIN). */
	struct placed {
		float px, py, c, s;
	} keep[RENDER_MAX_NODES];
	struct box all = {0, 0, 0, 0};
	float best_score = -1.0f;
	for (size_t v = 0; v < sizeof k_bias / sizeof k_bias[0]; v++) {
		struct box bx = place_items(items, n_children, &k_bias[v]);
		float ew = bx.x1 - bx.x0, eh = bx.y1 - bx.y0;
		float fv = 2.0f * ROOT_HALF / ((ew > eh ? ew : eh) + 2.0f * k_gap);
		if (fv > MAX_FEATURE)
			fv = MAX_FEATURE;
		double dw = 0, dx = 0, dy = 0, hw = 0, hx = 0, hy = 0;
		for (int k = 0; k < n_children; k++) {
			const struct item *it = &items[k];
			for (int i = 0; i < it->n_sites; i++) {
				struct pt q = item_site(it, i, it->px, it->py, it->c, it->s);
				if (it->holes) {
					hw += 6.25;
					hx += 6.25 * q.x;
					hy += 6.25 * q.y;
				} else {
					dw += 2.25;
					dx += 2.25 * q.x;
					dy += 2.25 * q.y;
				}
			}
		}
		/* The angle is the direction between the leaf centre and the black
		 * leaf centre, for w and b trees alike proportional to the vector
		 * between the dot and hole centres; leaf positions jitter
		 * independently, so its error goes as sqrt(1/dots + 1/holes) over
		 * that distance: q below is the precision, in card units. */
		float q = 0.0f;
		if (dw > 0 && hw > 0) {
			double d = hypot(dx / dw - hx / hw, dy / dw - hy / hw);
			q = (float)(d / sqrt(2.25 / dw + 6.25 / hw)) * fv;
		}
		/* The q term breaks ties between packings of equal size. */
		float score = fv * (q < Q_MIN ? q / Q_MIN : 1.0f) + 0.001f * q;
		if (score > best_score + 1e-6f) {
			best_score = score;
			all = bx;
			for (int k = 0; k < n_children; k++)
				keep[k] = (struct placed){items[k].px, items[k].py, items[k].c, items[k].s};
		}
	}
	for (int k = 0; k < n_children; k++) {
		items[k].px = keep[k].px;
		items[k].py = keep[k].py;
		items[k].c = keep[k].c;
		items[k].s = keep[k].s;
	}

	out->colour = colour;
	out->n_nodes = n;
	out->depth = depth;
	float ext_w = all.x1 - all.x0, ext_h = all.y1 - all.y0;
	float ext = ext_w > ext_h ? ext_w : ext_h;
	float f = 2.0f * ROOT_HALF / (ext + 2.0f * k_gap);
	if (f > MAX_FEATURE)
		f = MAX_FEATURE;
	out->cell = f;
	out->grid_w = (int)ceilf(ext_w);
	out->grid_h = (int)ceilf(ext_h);
	float ox = -0.5f * (all.x0 + all.x1), oy = -0.5f * (all.y0 + all.y1);
	int root_white = colour == 'w';
	int ink = !root_white;

	add_shape(out, 0, 0, 0.5f, 0.5f, 0.0f, root_white, RENDER_CARD, 0);
	add_shape(out, 0, 0, RING_OUTER, RING_OUTER, RING_OUTER_R, ink, RENDER_RING, 0);
	/* A child in a corner of the square keeps the gap from a root corner of
	 * radius up to (gap + its radius) f. */
	float root_r = (k_gap + 0.5f * k_dot_d) * f < ROOT_R ? (k_gap + 0.5f * k_dot_d) * f : ROOT_R;
	add_shape(out, 0, 0, ROOT_HALF, ROOT_HALF, root_r, root_white, RENDER_ROOT, 0);
	for (int k = 0; k < n_children; k++) {
		const struct item *it = &items[k];
		if (it->holes == 0) {
			float r = 0.5f * k_dot_d * f;
			add_shape(out, (it->px + ox) * f, (it->py + oy) * f, r, r, r, ink, RENDER_CHILD, 1);
			continue;
		}
		int first = out->n_shapes;
		struct box b = item_box(it, it->px, it->py, it->c, it->s);
		add_shape(out, (0.5f * (b.x0 + b.x1) + ox) * f, (0.5f * (b.y0 + b.y1) + oy) * f,
		          0.5f * (b.x1 - b.x0) * f, 0.5f * (b.y1 - b.y0) * f, it->r * f, ink, RENDER_CHILD,
		          0);
		struct render_shape *bs = &out->shapes[first];
		bs->seg0 = (int16_t)out->n_segs;
		for (int e = 0; e < it->n_edges && out->n_segs < RENDER_MAX_SEGMENTS; e++) {
			struct pt a = item_site(it, it->ea[e], it->px, it->py, it->c, it->s);
			struct pt c = item_site(it, it->eb[e], it->px, it->py, it->c, it->s);
			struct render_segment *sg = &out->segs[out->n_segs++];
			sg->x0 = (a.x + ox) * f;
			sg->y0 = (a.y + oy) * f;
			sg->x1 = (c.x + ox) * f;
			sg->y1 = (c.y + oy) * f;
		}
		bs->n_seg = (int16_t)(out->n_segs - bs->seg0);
		float hr = 0.5f * k_hole_d * f;
		for (int i = 0; i < it->n_sites; i++) {
			struct pt p = item_site(it, i, it->px, it->py, it->c, it->s);
			add_shape(out, (p.x + ox) * f, (p.y + oy) * f, hr, hr, hr, root_white, RENDER_HOLE,
			          1);
		}
		out->shapes[first].end = (int16_t)out->n_shapes;
	}
	for (int i = 0; i < 3; i++)
		out->shapes[i].end = (int16_t)out->n_shapes;
	layout_truth(out);
	return 0;
}

/* Exact signed distance to a rounded rectangle (negative inside). */
static float rrect_sdf(const struct render_shape *s, float px, float py)
{
	float qx = fabsf(px - s->x) - (s->hw - s->radius);
	float qy = fabsf(py - s->y) - (s->hh - s->radius);
	float ox = qx > 0 ? qx : 0, oy = qy > 0 ? qy : 0;
	float in = qx > qy ? qx : qy;
	if (in > 0)
		in = 0;
	return sqrtf(ox * ox + oy * oy) + in - s->radius;
}

/* Signed distance to a shape; for a blob the minimum over its capsules,
 * exact outside and a lower bound on the distance to the edge inside. A
 * point farther outside the blob's box than `far` is answered with the
 * box's distance, which is all the caller needs then. */
static float shape_sdf(const struct render_layout *l, const struct render_shape *s, float px, float py,
                       float far)
{
	if (s->n_seg == 0)
		return rrect_sdf(s, px, py);
	float bx = fabsf(px - s->x) - s->hw, by = fabsf(py - s->y) - s->hh;
	float box = bx > by ? bx : by;
	if (box > far)
		return box;
	float m = 1e30f;
	for (int i = s->seg0; i < s->seg0 + s->n_seg; i++) {
		const struct render_segment *g = &l->segs[i];
		struct pt p = {px, py}, a = {g->x0, g->y0}, b = {g->x1, g->y1};
		float d = pt_seg_dist2(p, a, b);
		if (d < m)
			m = d;
	}
	return sqrtf(m) - s->radius;
}

/* Colour at a point (-1 outside the card, else 0/1 white) and a lower bound
 * on the distance to any edge: a point outside a shape is at least that far
 * from its descendants, and one inside a shape at least that far from its
 * (disjoint) siblings, so untested shapes are never nearer. */
static int layout_sample(const struct render_layout *l, float px, float py, float *min_dist)
{
	int colour = -1;
	float md = 1e30f;
	int i = 0, stop = l->n_shapes;
	while (i < stop) {
		const struct render_shape *s = &l->shapes[i];
		float d = shape_sdf(l, s, px, py, md);
		float ad = fabsf(d);
		if (ad < md)
			md = ad;
		if (d <= 0) {
			colour = s->white;
			stop = s->end;
			i++;
		} else {
			i = s->end;
		}
	}
	*min_dist = md;
	return colour;
}

int render_layout_draw(const struct render_layout *l, float size_px, float angle_rad, float cx, float cy,
                       struct image_u8 *dst, const struct render_options *opt)
{
	struct render_options def;
	if (!opt) {
		render_options_default(&def);
		opt = &def;
	}
	if (!(size_px > 0.0f && size_px <= (float)IMAGE_MAX_SIDE) || !isfinite(angle_rad) || !isfinite(cx) ||
	    !isfinite(cy) || l->n_shapes < 3)
		return ERR_RANGE;
	int k = opt->supersample < 1 ? 1 : opt->supersample > 16 ? 16 : opt->supersample;
	float c = cosf(angle_rad), s = sinf(angle_rad), inv = 1.0f / size_px;
	float half = size_px * 0.7072f + 2.0f;
	int xa = (int)floorf(cx - half), xb = (int)ceilf(cx + half);
	int ya = (int)floorf(cy - half), yb = (int)ceilf(cy + half);
	image_u8_clip_box(dst, &xa, &ya, &xb, &yb);
	float level[2] = {(float)opt->black, (float)opt->white};
	/* Half the pixel diagonal plus a margin, in card units. */
	float uniform = 0.75f * inv;
	float step = 1.0f / (float)k;
	for (int y = ya; y <= yb; y++) {
		uint8_t *row = image_u8_row(dst, y);
		for (int x = xa; x <= xb; x++) {
			float dx = (float)x - cx, dy = (float)y - cy;
			float lx = (dx * c + dy * s) * inv, ly = (-dx * s + dy * c) * inv;
			float md;
			int col = layout_sample(l, lx, ly, &md);
			if (md > uniform) {
				if (col >= 0)
					row[x] = (uint8_t)level[col];
				continue;
			}
			float sum = 0.0f;
			for (int j = 0; j < k; j++) {
				float oy = ((float)j + 0.5f) * step - 0.5f;
				for (int i = 0; i < k; i++) {
					float ox = ((float)i + 0.5f) * step - 0.5f;
					float sx = dx + ox, sy = dy + oy;
					float px = (sx * c + sy * s) * inv, py = (-sx * s + sy * c) * inv;
					float dummy;
					int sc = layout_sample(l, px, py, &dummy);
					sum += sc < 0 ? (float)row[x] : level[sc];
				}
			}
			int v = (int)lrintf(sum / (float)(k * k));
			row[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	}
	return 0;
}

void render_layout_truth(const struct render_layout *l, float size_px, float angle_rad, float cx, float cy,
                         float *x, float *y, float *angle)
{
	double c = cos(angle_rad), s = sin(angle_rad);
	double lx = l->centre_x, ly = l->centre_y;
	if (x)
		*x = (float)(cx + size_px * (lx * c - ly * s));
	if (y)
		*y = (float)(cy + size_px * (lx * s + ly * c));
	if (angle)
		*angle = render_wrap_angle(l->angle0 + angle_rad);
}

int render_symbol(const char *tree, float size_px, float angle_rad, float cx, float cy, struct image_u8 *dst,
                  const struct render_options *opt)
{
	struct render_layout l;
	int rc = render_layout_tree(tree, &l);
	if (rc)
		return rc;
	return render_layout_draw(&l, size_px, angle_rad, cx, cy, dst, opt);
}

int render_symbol_truth(const char *tree, float size_px, float angle_rad, float cx, float cy, float *x,
                        float *y, float *angle)
{
	struct render_layout l;
	int rc = render_layout_tree(tree, &l);
	if (rc)
		return rc;
	render_layout_truth(&l, size_px, angle_rad, cx, cy, x, y, angle);
	return 0;
}
