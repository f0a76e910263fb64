#include "ui_grid.h"

#include <math.h>
#include <stddef.h>

#define GRID_REGULAR_EPS 1e-6f
#define GRID_MIN_EXTENT 0.05f

static float clamp01(float v)
{
	return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}

static bool grid_valid(const struct calib_map *m)
{
	return m && m->cols >= 2 && m->rows >= 2 && m->cols <= CALIB_MAX_SIDE && m->rows <= CALIB_MAX_SIDE;
}

static void grid_update_identity(struct calib_map *m)
{
	m->identity = ui_grid_is_regular(m, GRID_REGULAR_EPS);
}

void ui_grid_default_size(int width, int height, int *cols, int *rows)
{
	bool wide = height > 0 && (float)width / (float)height >= 1.6f;
	*cols = wide ? 11 : 9;
	*rows = 7;
}

void ui_grid_init(struct calib_map *m, int cols, int rows)
{
	m->cols = cols < 2 ? 2 : cols > CALIB_MAX_SIDE ? CALIB_MAX_SIDE : cols;
	m->rows = rows < 2 ? 2 : rows > CALIB_MAX_SIDE ? CALIB_MAX_SIDE : rows;
	ui_grid_reset_all(m);
}

void ui_grid_regular_point(const struct calib_map *m, int c, int r, float *x, float *y)
{
	*x = (float)c / (float)(m->cols - 1);
	*y = (float)r / (float)(m->rows - 1);
}

bool ui_grid_is_regular(const struct calib_map *m, float eps)
{
	if (!grid_valid(m))
		return false;
	for (int r = 0; r < m->rows; r++)
		for (int c = 0; c < m->cols; c++) {
			float x, y;
			ui_grid_regular_point(m, c, r, &x, &y);
			const float *p = m->pts[r * m->cols + c];
			if (fabsf(p[0] - x) > eps || fabsf(p[1] - y) > eps)
				return false;
		}
	return true;
}

bool ui_grid_move_point(struct calib_map *m, int c, int r, float dx, float dy)
{
	if (!grid_valid(m) || c < 0 || r < 0 || c >= m->cols || r >= m->rows)
		return false;
	float *p = m->pts[r * m->cols + c];
	p[0] = clamp01(p[0] + dx);
	p[1] = clamp01(p[1] + dy);
	grid_update_identity(m);
	return true;
}

static void grid_bounds(const struct calib_map *m, float *x0, float *y0, float *x1, float *y1)
{
	*x0 = *y0 = 1e9f;
	*x1 = *y1 = -1e9f;
	for (int i = 0; i < m->cols * m->rows; i++) {
		*x0 = fminf(*x0, m->pts[i][0]);
		*y0 = fminf(*y0, m->pts[i][1]);
		*x1 = fmaxf(*x1, m->pts[i][0]);
		*y1 = fmaxf(*y1, m->pts[i][1]);
	}
}

bool ui_grid_move_all(struct calib_map *m, float dx, float dy)
{
	if (!grid_valid(m))
		return false;
	float x0, y0, x1, y1;
	grid_bounds(m, &x0, &y0, &x1, &y1);
	dx = fmaxf(fminf(dx, 1.0f - x1), -x0);
	dy = fmaxf(fminf(dy, 1.0f - y1), -y0);
	if (dx == 0.0f && dy == 0.0f)
		return false;
	for (int i = 0; i < m->cols * m->rows; i++) {
		m->pts[i][0] = clamp01(m->pts[i][0] + dx);
		m->pts[i][1] = clamp01(m->pts[i][1] + dy);
	}
	grid_update_identity(m);
	return true;
}

bool ui_grid_scale(struct calib_map *m, float factor)
{
	if (!grid_valid(m) || !(factor > 0.0f))
		return false;
	float x0, y0, x1, y1;
	grid_bounds(m, &x0, &y0, &x1, &y1);
	float cx = 0.5f * (x0 + x1), cy = 0.5f * (y0 + y1);
	float nx0 = cx + (x0 - cx) * factor, nx1 = cx + (x1 - cx) * factor;
	float ny0 = cy + (y0 - cy) * factor, ny1 = cy + (y1 - cy) * factor;
	/* A tiny tolerance, so that the full-frame identity grid can still be
	 * scaled back up to itself after shrinking. */
	const float tol = 1e-4f;
	if (nx0 < -tol || ny0 < -tol || nx1 > 1.0f + tol || ny1 > 1.0f + tol)
		return false;
	if (factor < 1.0f && (nx1 - nx0 < GRID_MIN_EXTENT || ny1 - ny0 < GRID_MIN_EXTENT))
		return false;
	for (int i = 0; i < m->cols * m->rows; i++) {
		m->pts[i][0] = clamp01(cx + (m->pts[i][0] - cx) * factor);
		m->pts[i][1] = clamp01(cy + (m->pts[i][1] - cy) * factor);
	}
	grid_update_identity(m);
	return true;
}

bool ui_grid_reset_point(struct calib_map *m, int c, int r)
{
	if (!grid_valid(m) || c < 0 || r < 0 || c >= m->cols || r >= m->rows)
		return false;
	float *p = m->pts[r * m->cols + c];
	ui_grid_regular_point(m, c, r, &p[0], &p[1]);
	grid_update_identity(m);
	return true;
}

void ui_grid_reset_all(struct calib_map *m)
{
	if (!grid_valid(m))
		return;
	for (int r = 0; r < m->rows; r++)
		for (int c = 0; c < m->cols; c++) {
			float *p = m->pts[r * m->cols + c];
			ui_grid_regular_point(m, c, r, &p[0], &p[1]);
		}
	m->identity = true;
}

int ui_grid_nearest_point(const struct calib_map *m, float x, float y)
{
	if (!grid_valid(m))
		return -1;
	return calib_map_nearest_point(m, x, y);
}

void ui_grid_table_to_camera(const struct calib_map *m, float u, float v, float *x, float *y)
{
	if (!grid_valid(m) || m->identity) {
		*x = u;
		*y = v;
		return;
	}
	float fu = clamp01(u) * (float)(m->cols - 1), fv = clamp01(v) * (float)(m->rows - 1);
	int c = (int)fu, r = (int)fv;
	if (c > m->cols - 2)
		c = m->cols - 2;
	if (r > m->rows - 2)
		r = m->rows - 2;
	float s = fu - (float)c, t = fv - (float)r;
	const float *p00 = m->pts[r * m->cols + c], *p10 = m->pts[r * m->cols + c + 1];
	const float *p01 = m->pts[(r + 1) * m->cols + c], *p11 = m->pts[(r + 1) * m->cols + c + 1];
	*x = (1 - t) * ((1 - s) * p00[0] + s * p10[0]) + t * ((1 - s) * p01[0] + s * p11[0]);
	*y = (1 - t) * ((1 - s) * p00[1] + s * p10[1]) + t * ((1 - s) * p01[1] + s * p11[1]);
}

void ui_grid_build_remap(const struct calib_map *m, int width, int height, int stride, uint32_t *lut)
{
	for (int y = 0; y < height; y++) {
		/* Pixel centres map to the grid so that the identity grid gives the
		 * identity table exactly. */
		float v = height > 1 ? (float)y / (float)(height - 1) : 0.0f;
		for (int x = 0; x < width; x++) {
			float u = width > 1 ? (float)x / (float)(width - 1) : 0.0f;
			float cx, cy;
			ui_grid_table_to_camera(m, u, v, &cx, &cy);
			int px = (int)lrintf(cx * (float)(width - 1));
			int py = (int)lrintf(cy * (float)(height - 1));
			px = px < 0 ? 0 : px >= width ? width - 1 : px;
			py = py < 0 ? 0 : py >= height ? height - 1 : py;
			lut[(size_t)y * (size_t)width + (size_t)x] = (uint32_t)py * (uint32_t)stride + (uint32_t)px;
		}
	}
}
