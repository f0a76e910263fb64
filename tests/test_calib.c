/* test_calib.c - the calibration grid: identity, shifted and scaled grids,
 * a warped grid's round trip through the forward map, file round trip, and
 * malformed files refused with a clear error. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../src/core/err.h"
#include "../src/core/calib.h"
#include "common/testutil.h"

static char tmp_dir[256];

static void tmp_path(char *buf, size_t cap, const char *name)
{
	if (!tmp_dir[0]) {
		const char *d = test_tmpdir();
		assert_non_null(d);
		snprintf(tmp_dir, sizeof(tmp_dir), "%s", d);
	}
	snprintf(buf, cap, "%s/%s", tmp_dir, name);
}

static int teardown_dir(void **state)
{
	(void)state;
	if (tmp_dir[0])
		rmdir(tmp_dir);
	return 0;
}

static const float probes[][2] = {
	{ 0.0f, 0.0f }, { 0.5f, 0.5f }, { 0.123f, 0.877f }, { 0.999f, 0.001f },
	{ 0.31f, 0.62f }, { 0.75f, 0.25f }, { 0.05f, 0.95f }, { 0.66f, 0.41f },
};
#define N_PROBES (sizeof(probes) / sizeof(probes[0]))

static void test_identity_exact(void **state)
{
	(void)state;
	struct calib_map m;
	calib_map_identity(&m, 5, 4);
	assert_int_equal(m.cols, 5);
	assert_int_equal(m.rows, 4);
	assert_true(m.identity);
	for (size_t i = 0; i < N_PROBES; i++) {
		float x = probes[i][0], y = probes[i][1];
		calib_map_apply(&m, &x, &y);
		assert_true(x == probes[i][0] && y == probes[i][1]);
		assert_true(calib_map_angle(&m, x, y, 1.25f, 1.0f) == 1.25f);
	}
	/* The slow path must agree with the fast one on an identity grid. */
	m.identity = false;
	for (size_t i = 0; i < N_PROBES; i++) {
		float x = probes[i][0], y = probes[i][1];
		calib_map_apply(&m, &x, &y);
		assert_float_equal(x, probes[i][0], 1e-5);
		assert_float_equal(y, probes[i][1], 1e-5);
		float a = calib_map_angle(&m, probes[i][0], probes[i][1], 1.25f, 1.0f);
		assert_float_equal(a, 1.25f, 1e-3);
	}
}

/* The table's grid seen shifted by (dx, dy) in the camera: a camera point
 * maps back by minus the shift. */
static void test_shift(void **state)
{
	(void)state;
	struct calib_map m;
	calib_map_identity(&m, 7, 5);
	const float dx = 0.05f, dy = -0.03f;
	for (int k = 0; k < m.cols * m.rows; k++) {
		m.pts[k][0] += dx;
		m.pts[k][1] += dy;
	}
	m.identity = false;
	for (size_t i = 0; i < N_PROBES; i++) {
		float x = probes[i][0], y = probes[i][1];
		calib_map_apply(&m, &x, &y);
		assert_float_equal(x, probes[i][0] - dx, 1e-5);
		assert_float_equal(y, probes[i][1] - dy, 1e-5);
		assert_float_equal(calib_map_angle(&m, probes[i][0], probes[i][1], 0.7f, 1.0f), 0.7f, 1e-3);
	}
}

/* Grid seen shrunk around the centre by s: camera points move outwards by 1/s. */
static void test_scale(void **state)
{
	(void)state;
	struct calib_map m;
	calib_map_identity(&m, 4, 6);
	const float s = 0.8f;
	for (int k = 0; k < m.cols * m.rows; k++) {
		m.pts[k][0] = 0.5f + (m.pts[k][0] - 0.5f) * s;
		m.pts[k][1] = 0.5f + (m.pts[k][1] - 0.5f) * s;
	}
	m.identity = false;
	for (size_t i = 0; i < N_PROBES; i++) {
		float x = probes[i][0], y = probes[i][1];
		calib_map_apply(&m, &x, &y);
		assert_float_equal(x, 0.5f + (probes[i][0] - 0.5f) / s, 1e-5);
		assert_float_equal(y, 0.5f + (probes[i][1] - 0.5f) / s, 1e-5);
	}
	/* A stretch in x only turns a 45 degree direction towards x. */
	calib_map_identity(&m, 3, 3);
	for (int k = 0; k < m.cols * m.rows; k++)
		m.pts[k][0] *= 0.5f;
	m.identity = false;
	float a = calib_map_angle(&m, 0.25f, 0.5f, (float)M_PI / 4, 1.0f);
	assert_float_equal(a, atan2f(2.0f, 1.0f), 1e-3);
}

/* A grid that turns the picture by 10 degrees in pixels, on a 4:3 frame:
 * every direction turns by the same 10 degrees, which only holds when the
 * step is measured in pixel-proportional units, not normalised ones. */
static void test_angle_aspect(void **state)
{
	(void)state;
	struct calib_map m;
	calib_map_identity(&m, 9, 7);
	const float aspect = 4.0f / 3.0f, th = 10.0f * (float)M_PI / 180.0f;
	for (int k = 0; k < m.cols * m.rows; k++) {
		/* camera point of table point k: the table point turned by -th */
		float dx = (m.pts[k][0] - 0.5f) * aspect, dy = m.pts[k][1] - 0.5f;
		m.pts[k][0] = 0.5f + (dx * cosf(th) + dy * sinf(th)) / aspect;
		m.pts[k][1] = 0.5f + (-dx * sinf(th) + dy * cosf(th));
	}
	m.identity = false;
	float turn[3];
	const float angles[3] = {0.3f, 1.2f, 2.5f};
	for (int i = 0; i < 3; i++) {
		float a = calib_map_angle(&m, 0.5f, 0.5f, angles[i], aspect) - angles[i];
		while (a < -(float)M_PI)
			a += 2.0f * (float)M_PI;
		while (a > (float)M_PI)
			a -= 2.0f * (float)M_PI;
		turn[i] = a;
	}
	assert_float_equal(fabsf(turn[0]), th, 2e-3);
	assert_float_equal(turn[1], turn[0], 2e-3);
	assert_float_equal(turn[2], turn[0], 2e-3);
}

/* A smoothly warped grid: camera points of its control points map exactly
 * onto the regular grid, and mid-cell points map inside their cell. */
static void test_warp_control_points(void **state)
{
	(void)state;
	struct calib_map m;
	calib_map_identity(&m, 9, 7);
	for (int k = 0; k < m.cols * m.rows; k++) {
		float x = m.pts[k][0], y = m.pts[k][1];
		float r2 = (x - 0.5f) * (x - 0.5f) + (y - 0.5f) * (y - 0.5f);
		m.pts[k][0] = 0.5f + (x - 0.5f) * (1.0f - 0.15f * r2);
		m.pts[k][1] = 0.5f + (y - 0.5f) * (1.0f - 0.15f * r2);
	}
	m.identity = false;
	for (int j = 0; j < m.rows; j++)
		for (int i = 0; i < m.cols; i++) {
			float x = m.pts[j * m.cols + i][0], y = m.pts[j * m.cols + i][1];
			calib_map_apply(&m, &x, &y);
			assert_float_equal(x, (float)i / (float)(m.cols - 1), 1e-4);
			assert_float_equal(y, (float)j / (float)(m.rows - 1), 1e-4);
		}
	/* Between control points: monotone in x along a row. */
	float prev = -1;
	for (int k = 0; k <= 40; k++) {
		float x = 0.1f + 0.02f * (float)k, y = 0.4f;
		calib_map_apply(&m, &x, &y);
		assert_true(x > prev);
		prev = x;
	}
}

static void test_save_load_round_trip(void **state)
{
	(void)state;
	struct calib_map m, back;
	calib_map_identity(&m, 5, 3);
	for (int k = 0; k < m.cols * m.rows; k++) {
		m.pts[k][0] += 0.01f * (float)(k % 3);
		m.pts[k][1] -= 0.007f * (float)(k % 4);
	}
	m.identity = false;
	char path[512];
	tmp_path(path, sizeof(path), "grid.txt");
	assert_int_equal(calib_map_save(&m, path), 0);
	assert_int_equal(calib_map_load(&back, path), 0);
	assert_int_equal(back.cols, 5);
	assert_int_equal(back.rows, 3);
	assert_false(back.identity);
	for (int k = 0; k < m.cols * m.rows; k++) {
		assert_true(back.pts[k][0] == m.pts[k][0]);
		assert_true(back.pts[k][1] == m.pts[k][1]);
	}
	calib_map_identity(&m, 4, 4);
	assert_int_equal(calib_map_save(&m, path), 0);
	assert_int_equal(calib_map_load(&back, path), 0);
	assert_true(back.identity);
	remove(path);
}

static int load_text(const char *text, struct calib_map *m)
{
	char path[512];
	tmp_path(path, sizeof(path), "bad.txt");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	int rc = calib_map_load(m, path);
	remove(path);
	return rc;
}

static void test_malformed(void **state)
{
	(void)state;
	struct calib_map m;
	calib_map_identity(&m, 3, 3);
	assert_int_equal(load_text("", &m), ERR_FORMAT);
	assert_int_equal(load_text("tabletrack-grid 2\n2 2\n0 0\n1 0\n0 1\n1 1\n", &m), ERR_FORMAT);
	assert_int_equal(load_text("not-a-grid 1\n", &m), ERR_FORMAT);
	assert_int_equal(load_text("tabletrack-grid 1\n", &m), ERR_FORMAT);
	assert_int_equal(load_text("tabletrack-grid 1\n2\n", &m), ERR_FORMAT);
	assert_int_equal(load_text("tabletrack-grid 1\n1 2\n0 0\n0 1\n", &m), ERR_RANGE);
	assert_int_equal(load_text("tabletrack-grid 1\n34 2\n", &m), ERR_RANGE);
	assert_int_equal(load_text("tabletrack-grid 1\n2 2\n0 0\n1 0\n0 1\n", &m), ERR_FORMAT);
	assert_int_equal(load_text("tabletrack-grid 1\n2 2\n0 0\n1 0\n0 x\n1 1\n", &m), ERR_FORMAT);
	assert_int_equal(load_text("tabletrack-grid 1\n2 2\n0 0\n1 0\n0 1\n1 1 1\n", &m), ERR_FORMAT);
	assert_int_equal(load_text("tabletrack-grid 1\n2 2\n0 0\n1 0\n0 1\n1 1\n1 1\n", &m), ERR_FORMAT);
	assert_int_equal(load_text("tabletrack-grid 1\n2 2\n0 0\n1 0\n0 1\n1 nan\n", &m), ERR_RANGE);
	assert_int_equal(load_text("tabletrack-grid 1\n2 2\n0 0\n1 0\n0 1\n1 50\n", &m), ERR_RANGE);
	/* An over-long line is refused, not split. */
	char longline[600];
	memset(longline, ' ', sizeof(longline));
	memcpy(longline, "tabletrack-grid 1\n", 18);
	longline[sizeof(longline) - 2] = '1';
	longline[sizeof(longline) - 1] = '\0';
	assert_int_equal(load_text(longline, &m), ERR_FORMAT);
	/* A failed load leaves the map as it was. */
	assert_int_equal(m.cols, 3);
	assert_true(m.identity);
	/* Comments and blank lines are fine. */
	assert_int_equal(load_text("# grid\ntabletrack-grid 1\n\n2 2 # size\n0 0\n1 0\n0 1\n1 1\n", &m), 0);
	assert_int_equal(m.cols, 2);
	assert_true(m.identity);
	assert_int_equal(calib_map_load(&m, "/nonexistent/dir/grid.txt"), ERR_IO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_exact),
		cmocka_unit_test(test_shift),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_angle_aspect),
		cmocka_unit_test(test_warp_control_points),
		cmocka_unit_test(test_save_load_round_trip),
		cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, teardown_dir);
}
