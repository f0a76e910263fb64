#include "calib.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "file.h"
#include "log.h"

#define CALIB_LINE_MAX 256
/* Control points may lie a little outside the image (a lens pushes the
 * table's corners out of view), but never absurdly far. */
#define CALIB_COORD_MIN -1.0f
#define CALIB_COORD_MAX 2.0f

static void identity_point(int cols, int rows, int i, int j, float *x, float *y)
{
	*x = (float)i / (float)(cols - 1);
	*y = (float)j / (float)(rows - 1);
}

static bool grid_is_identity(const struct calib_map *m)
{
	for (int j = 0; j < m->rows; j++)
		for (int i = 0; i < m->cols; i++) {
			float x, y;
			identity_point(m->cols, m->rows, i, j, &x, &y);
			const float *p = m->pts[j * m->cols + i];
			if (fabsf(p[0] - x) > 1e-6f || fabsf(p[1] - y) > 1e-6f)
				return false;
		}
	return true;
}

void calib_map_identity(struct calib_map *m, int cols, int rows)
{
	if (cols < 2 || cols > CALIB_MAX_SIDE)
		cols = cols < 2 ? 2 : CALIB_MAX_SIDE;
	if (rows < 2 || rows > CALIB_MAX_SIDE)
		rows = rows < 2 ? 2 : CALIB_MAX_SIDE;
	memset(m, 0, sizeof(*m));
	m->cols = cols;
	m->rows = rows;
	for (int j = 0; j < rows; j++)
		for (int i = 0; i < cols; i++)
			identity_point(cols, rows, i, j, &m->pts[j * cols + i][0], &m->pts[j * cols + i][1]);
	m->identity = true;
}

/* A grid file has a header, a size line and at most CALIB_MAX_SIDE^2 points;
 * comments and blank lines get generous room, but a file of NUL bytes (read
 * by fgets as blank lines) or endless blanks must end. */
#define CALIB_MAX_LINES (4 * CALIB_MAX_SIDE * CALIB_MAX_SIDE + 1000)

/* Reads the next line that is not blank or a comment into buf. Returns 1 with a
 * line, 0 at the end of the file, ERR_FORMAT for an over-long line or too many lines. */
static int read_line(FILE *f, const char *path, int *line_no, char *buf, size_t cap)
{
	while (fgets(buf, (int)cap, f)) {
		if (*line_no >= CALIB_MAX_LINES) {
			log_error("%s: more than %d lines: not a calibration grid", path, CALIB_MAX_LINES);
			return ERR_FORMAT;
		}
		(*line_no)++;
		size_t len = strlen(buf);
		if (len == cap - 1 && buf[len - 1] != '\n' && !feof(f)) {
			log_error("%s:%d: line longer than %zu characters", path, *line_no, cap - 2);
			return ERR_FORMAT;
		}
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		const char *s = buf;
		while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
			s++;
		if (*s)
			return 1;
	}
	return 0;
}

static bool rest_is_blank(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	return *s == '\0';
}

int calib_map_load(struct calib_map *m, const char *path)
{
	char buf[CALIB_LINE_MAX];
	int line_no = 0, rc = ERR_FORMAT;
	struct calib_map tmp;

	FILE *f = NULL;
	const char *why = "";
	if (file_open_regular(path, &f, &why)) {
		log_error("%s: cannot open calibration grid: %s", path, why);
		return ERR_IO;
	}
	int got = read_line(f, path, &line_no, buf, sizeof(buf));
	if (got <= 0) {
		if (got == 0)
			log_error("%s:%d: empty file, expected \"tabletrack-grid 1\"", path, line_no);
		goto fail;
	}
	int version = 0, used = 0;
	if (sscanf(buf, " tabletrack-grid %d %n", &version, &used) != 1 || !rest_is_blank(buf + used) ||
	    version != 1) {
		log_error("%s:%d: expected \"tabletrack-grid 1\"", path, line_no);
		goto fail;
	}
	got = read_line(f, path, &line_no, buf, sizeof(buf));
	if (got <= 0) {
		if (got == 0)
			log_error("%s:%d: missing \"cols rows\" line", path, line_no);
		goto fail;
	}
	int cols = 0, rows = 0;
	if (sscanf(buf, " %d %d %n", &cols, &rows, &used) != 2 || !rest_is_blank(buf + used)) {
		log_error("%s:%d: expected \"cols rows\"", path, line_no);
		goto fail;
	}
	if (cols < 2 || rows < 2 || cols > CALIB_MAX_SIDE || rows > CALIB_MAX_SIDE) {
		log_error("%s:%d: grid %dx%d outside 2..%d", path, line_no, cols, rows, CALIB_MAX_SIDE);
		rc = ERR_RANGE;
		goto fail;
	}
	memset(&tmp, 0, sizeof(tmp));
	tmp.cols = cols;
	tmp.rows = rows;
	for (int k = 0; k < cols * rows; k++) {
		got = read_line(f, path, &line_no, buf, sizeof(buf));
		if (got <= 0) {
			if (got == 0)
				log_error("%s:%d: %d of %d points, file ends early", path, line_no, k,
					  cols * rows);
			goto fail;
		}
		float x, y;
		if (sscanf(buf, " %f %f %n", &x, &y, &used) != 2 || !rest_is_blank(buf + used)) {
			log_error("%s:%d: expected \"x y\" (point %d)", path, line_no, k);
			goto fail;
		}
		if (!isfinite(x) || !isfinite(y) || x < CALIB_COORD_MIN || x > CALIB_COORD_MAX ||
		    y < CALIB_COORD_MIN || y > CALIB_COORD_MAX) {
			log_error("%s:%d: point %g %g outside %g..%g", path, line_no, x, y,
				  CALIB_COORD_MIN, CALIB_COORD_MAX);
			rc = ERR_RANGE;
			goto fail;
		}
		tmp.pts[k][0] = x;
		tmp.pts[k][1] = y;
	}
	got = read_line(f, path, &line_no, buf, sizeof(buf));
	if (got != 0) {
		if (got > 0)
			log_error("%s:%d: unexpected text after %d points", path, line_no, cols * rows);
		goto fail;
	}
	fclose(f);
	tmp.identity = grid_is_identity(&tmp);
	*m = tmp;
	return 0;
fail:
	fclose(f);
	return rc;
}

int calib_map_save(const struct calib_map *m, const char *path)
{
	if (m->cols < 2 || m->rows < 2 || m->cols > CALIB_MAX_SIDE || m->rows > CALIB_MAX_SIDE)
		return ERR_RANGE;
	FILE *f = fopen(path, "w");
	if (!f) {
		log_error("%s: cannot write calibration grid: %s", path, strerror(errno));
		return ERR_IO;
	}
	fprintf(f, "tabletrack-grid 1\n%d %d\n", m->cols, m->rows);
	for (int k = 0; k < m->cols * m->rows; k++)
		fprintf(f, "%.9g %.9g\n", m->pts[k][0], m->pts[k][1]);
	if (ferror(f) | fclose(f)) {
		log_error("%s: write failed: %s", path, strerror(errno));
		return ERR_IO;
	}
	return 0;
}

/* Control point (i, j), extended beyond the grid by linear extrapolation so
 * that Catmull-Rom reproduces a linear map exactly up to the border. */
static void grid_point(const struct calib_map *m, int i, int j, double p[2])
{
	int ci = i < 0 ? 0 : i >= m->cols ? m->cols - 1 : i;
	int cj = j < 0 ? 0 : j >= m->rows ? m->rows - 1 : j;
	int ni = i < 0 ? 1 : i >= m->cols ? m->cols - 2 : ci;
	int nj = j < 0 ? 1 : j >= m->rows ? m->rows - 2 : cj;
	double ki = (double)(i - ci), kj = (double)(j - cj);
	if (ki < 0)
		ki = -ki;
	if (kj < 0)
		kj = -kj;
	for (int c = 0; c < 2; c++) {
		double base = m->pts[cj * m->cols + ci][c];
		double di = base - m->pts[cj * m->cols + ni][c];
		double dj = base - m->pts[nj * m->cols + ci][c];
		p[c] = base + ki * di + kj * dj;
	}
}

static void catmull_weights(double t, double w[4], double dw[4])
{
	double t2 = t * t, t3 = t2 * t;
	w[0] = 0.5 * (-t3 + 2 * t2 - t);
	w[1] = 0.5 * (3 * t3 - 5 * t2 + 2);
	w[2] = 0.5 * (-3 * t3 + 4 * t2 + t);
	w[3] = 0.5 * (t3 - t2);
	dw[0] = 0.5 * (-3 * t2 + 4 * t - 1);
	dw[1] = 0.5 * (9 * t2 - 10 * t);
	dw[2] = 0.5 * (-9 * t2 + 8 * t + 1);
	dw[3] = 0.5 * (3 * t2 - 2 * t);
}

/* Forward map: grid coordinates (s, t) in cell units -> camera point, with its
 * Jacobian. Outside the grid the border cell's patch is extended. */
static void forward(const struct calib_map *m, double s, double t, double out[2], double jac[2][2])
{
	int i = (int)floor(s), j = (int)floor(t);
	if (i < 0)
		i = 0;
	if (i > m->cols - 2)
		i = m->cols - 2;
	if (j < 0)
		j = 0;
	if (j > m->rows - 2)
		j = m->rows - 2;
	double ws[4], dws[4], wt[4], dwt[4];
	catmull_weights(s - i, ws, dws);
	catmull_weights(t - j, wt, dwt);
	out[0] = out[1] = 0;
	jac[0][0] = jac[0][1] = jac[1][0] = jac[1][1] = 0;
	for (int b = 0; b < 4; b++)
		for (int a = 0; a < 4; a++) {
			double p[2];
			grid_point(m, i - 1 + a, j - 1 + b, p);
			for (int c = 0; c < 2; c++) {
				out[c] += ws[a] * wt[b] * p[c];
				jac[c][0] += dws[a] * wt[b] * p[c];
				jac[c][1] += ws[a] * dwt[b] * p[c];
			}
		}
}

int calib_map_nearest_point(const struct calib_map *m, float x, float y)
{
	if (!m || m->cols < 2 || m->rows < 2)
		return -1;
	int best = 0;
	double best_d = INFINITY;
	for (int k = 0; k < m->cols * m->rows; k++) {
		double dx = m->pts[k][0] - (double)x, dy = m->pts[k][1] - (double)y;
		double d = dx * dx + dy * dy;
		if (d < best_d) {
			best_d = d;
			best = k;
		}
	}
	return best;
}

void calib_map_apply(const struct calib_map *m, float *x, float *y)
{
	if (!m || m->identity || m->cols < 2 || m->rows < 2)
		return;
	double px = *x, py = *y;
	/* Start from the nearest control point: the inverse is then found by
	 * Newton's method on the smooth forward map in a few steps. */
	int best = calib_map_nearest_point(m, *x, *y);
	double s = best % m->cols, t = best / m->cols;
	for (int it = 0; it < 30; it++) {
		double f[2], jac[2][2];
		forward(m, s, t, f, jac);
		double ex = f[0] - px, ey = f[1] - py;
		if (ex * ex + ey * ey < 1e-16)
			break;
		double det = jac[0][0] * jac[1][1] - jac[0][1] * jac[1][0];
		if (fabs(det) < 1e-12)
			break;
		double ds = (jac[1][1] * ex - jac[0][1] * ey) / det;
		double dt = (-jac[1][0] * ex + jac[0][0] * ey) / det;
		/* Damped steps keep a strongly distorted grid from throwing the
		 * iterate far outside. */
		double len = sqrt(ds * ds + dt * dt);
		if (len > 1.0) {
			ds /= len;
			dt /= len;
		}
		s -= ds;
		t -= dt;
	}
	*x = (float)(s / (m->cols - 1));
	*y = (float)(t / (m->rows - 1));
}

float calib_map_angle(const struct calib_map *m, float x, float y, float angle, float aspect)
{
	if (!m || m->identity)
		return angle;
	if (!(aspect > 0))
		aspect = 1.0f;
	/* The step is taken, and the mapped step measured, in units of equal
	 * length on both axes (x in widths, y in heights times the aspect):
	 * in normalised units a 4:3 frame's x and y differ by a third, which
	 * would skew every angle a non-linear grid touches. */
	const float step = 1e-3f;
	float x0 = x, y0 = y;
	float x1 = x + step * sinf(angle), y1 = y - step * cosf(angle) * aspect;
	calib_map_apply(m, &x0, &y0);
	calib_map_apply(m, &x1, &y1);
	float a = atan2f(x1 - x0, -(y1 - y0) / aspect);
	const float two_pi = 6.28318530717958647692f;
	if (a < 0)
		a += two_pi;
	if (a >= two_pi)
		a -= two_pi;
	return a;
}
