#include "render.h"

#include <math.h>
#include <string.h>

#include "../core/err.h"

#define PI_F 3.14159265358979f
#define GRID_MAX 16

/* Card geometry (card units); see render.h for the picture. */
#define RING_OUTER 0.46f
#define RING_OUTER_R 0.10f
#define ROOT_HALF 0.40f
#define ROOT_R 0.05f
/* Child geometry (cell units). */
#define DOT_R 0.30f
#define BLOB_INSET 0.11f
#define BLOB_R 0.39f
#define HOLE_R 0.19f
#define GRID_PAD 0.6f

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

struct item {
	int holes;   /* 0 for a dot */
	int cw, ch;  /* block size in cells */
	int gx, gy;  /* placed cell */
};

static void block_size(int holes, int *cw, int *ch)
{
	if (holes <= 1) {
		*cw = *ch = 1;
		return;
	}
	int rows = holes <= 3 ? 1 : holes <= 8 ? 2 : 3;
	*ch = rows;
	*cw = (holes + rows - 1) / rows;
}

/* First-fit in reading order on a g x g grid; 0 when everything fits. */
static int place_items(struct item *items, int n, int g, int *used_w, int *used_h)
{
	uint8_t occ[GRID_MAX][GRID_MAX];
	memset(occ, 0, sizeof occ);
	*used_w = *used_h = 0;
	for (int k = 0; k < n; k++) {
		struct item *it = &items[k];
		int placed = 0;
		for (int y = 0; y + it->ch <= g && !placed; y++) {
			for (int x = 0; x + it->cw <= g && !placed; x++) {
				int free_block = 1;
				for (int j = 0; j < it->ch && free_block; j++)
					for (int i = 0; i < it->cw; i++)
						if (occ[y + j][x + i]) {
							free_block = 0;
							break;
						}
				if (!free_block)
					continue;
				for (int j = 0; j < it->ch; j++)
					for (int i = 0; i < it->cw; i++)
						occ[y + j][x + i] = 1;
				it->gx = x;
				it->gy = y;
				placed = 1;
				if (x + it->cw > *used_w)
					*used_w = x + it->cw;
				if (y + it->ch > *used_h)
					*used_h = y + it->ch;
			}
		}
		if (!placed)
			return -1;
	}
	return 0;
}

static void add_shape(struct render_layout *l, float x, float y, float hw, float hh, float r,
		      int white, int depth, int leaf)
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

	struct item items[RENDER_MAX_NODES];
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
	/* Dots first so they gather at the top and the angle is well defined. */
	int n_items = 0;
	for (int i = 0; i < n_children; i++)
		if (holes[i] == 0)
			items[n_items++].holes = 0;
	for (int i = 0; i < n_children; i++)
		if (holes[i] > 0)
			items[n_items++].holes = holes[i];
	for (int i = 0; i < n_items; i++)
		block_size(items[i].holes, &items[i].cw, &items[i].ch);

	int used_w = 0, used_h = 0, g;
	for (g = 1; g <= GRID_MAX; g++)
		if (place_items(items, n_items, g, &used_w, &used_h) == 0)
			break;
	if (g > GRID_MAX)
		return ERR_RANGE;

	out->colour = colour;
	out->n_nodes = n;
	out->depth = depth;
	out->grid_w = used_w;
	out->grid_h = used_h;
	int root_white = colour == 'w';
	int ink = !root_white;
	int m = used_w > used_h ? used_w : used_h;
	float u = 2.0f * ROOT_HALF / ((float)m + GRID_PAD);
	out->cell = u;

	add_shape(out, 0, 0, 0.5f, 0.5f, 0.0f, root_white, RENDER_CARD, 0);
	add_shape(out, 0, 0, RING_OUTER, RING_OUTER, RING_OUTER_R, ink, RENDER_RING, 0);
	add_shape(out, 0, 0, ROOT_HALF, ROOT_HALF, ROOT_R, root_white, RENDER_ROOT, 0);
	float x0 = -0.5f * (float)used_w * u, y0 = -0.5f * (float)used_h * u;
	for (int k = 0; k < n_items; k++) {
		const struct item *it = &items[k];
		float bx = x0 + ((float)it->gx + 0.5f * (float)it->cw) * u;
		float by = y0 + ((float)it->gy + 0.5f * (float)it->ch) * u;
		if (it->holes == 0) {
			add_shape(out, bx, by, DOT_R * u, DOT_R * u, DOT_R * u, ink, RENDER_CHILD, 1);
			continue;
		}
		int first = out->n_shapes;
		float hw = (0.5f * (float)it->cw - BLOB_INSET) * u;
		float hh = (0.5f * (float)it->ch - BLOB_INSET) * u;
		add_shape(out, bx, by, hw, hh, BLOB_R * u, ink, RENDER_CHILD, 0);
		int left = it->holes;
		for (int row = 0; row < it->ch && left > 0; row++) {
			int in_row = left < it->cw ? left : it->cw;
			float off = 0.5f * (float)(it->cw - in_row);
			for (int c = 0; c < in_row; c++) {
				float hx = x0 + ((float)it->gx + off + (float)c + 0.5f) * u;
				float hy = y0 + ((float)(it->gy + row) + 0.5f) * u;
				add_shape(out, hx, hy, HOLE_R * u, HOLE_R * u, HOLE_R * u, root_white,
					  RENDER_HOLE, 1);
			}
			left -= in_row;
		}
		out->shapes[first].end = (int16_t)out->n_shapes;
	}
	for (int i = 0; i < 3; i++)
		out->shapes[i].end = (int16_t)out->n_shapes;
	layout_truth(out);
	return 0;
}

/* Exact signed distance to a rounded rectangle (negative inside). */
static float shape_sdf(const struct render_shape *s, float px, float py)
{
	float qx = fabsf(px - s->x) - (s->hw - s->radius);
	float qy = fabsf(py - s->y) - (s->hh - s->radius);
	float ox = qx > 0 ? qx : 0, oy = qy > 0 ? qy : 0;
	float in = qx > qy ? qx : qy;
	if (in > 0)
		in = 0;
	return sqrtf(ox * ox + oy * oy) + in - s->radius;
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
		float d = shape_sdf(s, px, py);
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

int render_layout_draw(const struct render_layout *l, float size_px, float angle_rad, float cx,
		       float cy, struct image_u8 *dst, const struct render_options *opt)
{
	struct render_options def;
	if (!opt) {
		render_options_default(&def);
		opt = &def;
	}
	if (!(size_px > 0.0f && size_px <= (float)IMAGE_MAX_SIDE) || !isfinite(angle_rad) ||
	    !isfinite(cx) || !isfinite(cy) || l->n_shapes < 3)
		return ERR_RANGE;
	int k = opt->supersample < 1 ? 1 : opt->supersample > 16 ? 16 : opt->supersample;
	float c = cosf(angle_rad), s = sinf(angle_rad), inv = 1.0f / size_px;
	float half = size_px * 0.7072f + 2.0f;
	int xa = (int)floorf(cx - half), xb = (int)ceilf(cx + half);
	int ya = (int)floorf(cy - half), yb = (int)ceilf(cy + half);
	if (xa < 0)
		xa = 0;
	if (ya < 0)
		ya = 0;
	if (xb > dst->width - 1)
		xb = dst->width - 1;
	if (yb > dst->height - 1)
		yb = dst->height - 1;
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

void render_layout_truth(const struct render_layout *l, float size_px, float angle_rad, float cx,
			 float cy, float *x, float *y, float *angle)
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

int render_symbol(const char *tree, float size_px, float angle_rad, float cx, float cy,
		  struct image_u8 *dst, const struct render_options *opt)
{
	struct render_layout l;
	int rc = render_layout_tree(tree, &l);
	if (rc)
		return rc;
	return render_layout_draw(&l, size_px, angle_rad, cx, cy, dst, opt);
}

int render_symbol_truth(const char *tree, float size_px, float angle_rad, float cx, float cy,
			float *x, float *y, float *angle)
{
	struct render_layout l;
	int rc = render_layout_tree(tree, &l);
	if (rc)
		return rc;
	render_layout_truth(&l, size_px, angle_rad, cx, cy, x, y, angle);
	return 0;
}
