/* Following an object through its regions: see follow.h. */
#include "follow.h"

#include <math.h>

#define MARGIN_FRACTION 0.1
#define MARGIN_PX 6.0
#define MAX_ROUNDS 4
#define CONVERGED_PX 0.5
#define MIN_ANISO 0.2
#define GONE_FRACTION 0.3

struct measure {
	double area, cx, cy, phi, aniso;
};

void objects_pose_apply(const struct objects_pose *p, double u, double v, double out[2])
{
	out[0] = p->a * u - p->b * v + p->tx;
	out[1] = p->b * u + p->a * v + p->ty;
}

void objects_pose_compose(const struct objects_pose *outer, const struct objects_pose *inner,
			  struct objects_pose *out)
{
	struct objects_pose r;
	r.a = outer->a * inner->a - outer->b * inner->b;
	r.b = outer->a * inner->b + outer->b * inner->a;
	r.tx = outer->a * inner->tx - outer->b * inner->ty + outer->tx;
	r.ty = outer->b * inner->tx + outer->a * inner->ty + outer->ty;
	*out = r;
}

void objects_pose_invert(const struct objects_pose *p, struct objects_pose *out)
{
	double n = p->a * p->a + p->b * p->b;
	struct objects_pose r = {.a = p->a / n, .b = -p->b / n};
	r.tx = -(r.a * p->tx - r.b * p->ty);
	r.ty = -(r.b * p->tx + r.a * p->ty);
	*out = r;
}

void objects_follow_start(struct objects_follow *f, const struct objects_pose *pose, int width, int height)
{
	*f = (struct objects_follow){.pose = *pose, .width = width, .height = height};
}

void objects_follow_reset_pose(struct objects_follow *f, const struct objects_pose *pose)
{
	f->pose = *pose;
}

/* The regions wholly inside the window of the pose moved by (sx, sy). */
static void measure(const struct objects_follow *f, const struct region_tree *t, double sx, double sy,
		    struct measure *m)
{
	const double u[4] = {0, f->width - 1, f->width - 1, 0}, v[4] = {0, 0, f->height - 1, f->height - 1};
	double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
	for (int k = 0; k < 4; k++) {
		double p[2];
		objects_pose_apply(&f->pose, u[k], v[k], p);
		x0 = fmin(x0, p[0]);
		x1 = fmax(x1, p[0]);
		y0 = fmin(y0, p[1]);
		y1 = fmax(y1, p[1]);
	}
	const double margin = MARGIN_FRACTION * fmax(x1 - x0, y1 - y0) + MARGIN_PX;
	x0 += sx - margin;
	x1 += sx + margin;
	y0 += sy - margin;
	y1 += sy + margin;
	double a = 0, sumx = 0, sumy = 0, sxx = 0, syy = 0, sxy = 0;
	for (int32_t i = 0; i < t->n_regions; i++) {
		const struct region *r = &t->regions[i];
		if ((r->flags & REGION_BORDER) || r->x0 < x0 || r->x1 > x1 || r->y0 < y0 || r->y1 > y1)
			continue;
		a += r->area;
		sumx += (double)r->sum_x;
		sumy += (double)r->sum_y;
		sxx += (double)r->sum_xx;
		syy += (double)r->sum_yy;
		sxy += (double)r->sum_xy;
	}
	*m = (struct measure){.area = a};
	if (a <= 0)
		return;
	m->cx = sumx / a;
	m->cy = sumy / a;
	const double mu20 = sxx / a - m->cx * m->cx, mu02 = syy / a - m->cy * m->cy;
	const double mu11 = sxy / a - m->cx * m->cy;
	const double d = sqrt((mu20 - mu02) * (mu20 - mu02) + 4 * mu11 * mu11), tr = mu20 + mu02;
	m->phi = 0.5 * atan2(2 * mu11, mu20 - mu02);
	m->aniso = tr > 0 ? d / tr : 0;
}

/* d wrapped into (-pi/2, pi/2]: axes have no direction. */
static double wrap_axis(double d)
{
	while (d > M_PI / 2)
		d -= M_PI;
	while (d <= -M_PI / 2)
		d += M_PI;
	return d;
}

/* The reference measurement at the current pose; false when the window is empty. */
static bool reference(struct objects_follow *f, const struct region_tree *tree)
{
	struct measure m;
	measure(f, tree, 0, 0, &m);
	f->rounds = 1;
	if (m.area <= 0)
		return false;
	f->measured = true;
	f->cx = m.cx;
	f->cy = m.cy;
	f->phi = m.phi;
	f->aniso = m.aniso;
	f->area_ref = f->area = m.area;
	return true;
}

void objects_follow_restart(struct objects_follow *f, const struct objects_pose *pose, int width, int height,
			    const struct region_tree *then)
{
	objects_follow_start(f, pose, width, height);
	if (then && !then->overflow)
		reference(f, then);
}

enum objects_follow_result objects_follow_step(struct objects_follow *f, const struct region_tree *tree)
{
	struct measure m;
	f->rounds = 0;
	if (!tree || tree->overflow)
		return OBJECTS_FOLLOW_HELD;
	if (!f->measured)
		return reference(f, tree) ? OBJECTS_FOLLOW_MOVED : OBJECTS_FOLLOW_HELD;
	double sx = 0, sy = 0;
	for (int round = 0; round < MAX_ROUNDS; round++) {
		measure(f, tree, sx, sy, &m);
		f->rounds = round + 1;
		if (m.area <= 0)
			break;
		const double nx = m.cx - f->cx, ny = m.cy - f->cy;
		const bool done = fabs(nx - sx) < CONVERGED_PX && fabs(ny - sy) < CONVERGED_PX;
		sx = nx;
		sy = ny;
		if (done)
			break;
	}
	f->area = m.area;
	if (m.area < GONE_FRACTION * f->area_ref)
		return OBJECTS_FOLLOW_GONE;
	const double dphi = m.aniso >= MIN_ANISO && f->aniso >= MIN_ANISO ? wrap_axis(m.phi - f->phi) : 0.0;
	/* p' = c' + R(dphi) (p - c), as a pose: T(c') R(dphi) T(-c) pose. */
	const double c = cos(dphi), s = sin(dphi);
	const struct objects_pose move = {
		.a = c, .b = s, .tx = m.cx - (c * f->cx - s * f->cy), .ty = m.cy - (s * f->cx + c * f->cy)};
	objects_pose_compose(&move, &f->pose, &f->pose);
	f->cx = m.cx;
	f->cy = m.cy;
	f->phi = m.phi;
	f->aniso = m.aniso;
	return OBJECTS_FOLLOW_MOVED;
}
