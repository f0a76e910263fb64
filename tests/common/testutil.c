#include "testutil.h"

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

const char *test_shared_path(const char *rel)
{
	static char buf[1024];
	/* The shared frames and symbols are PNG files. */
	if (!TT_HAVE_PNG)
		return NULL;
	const char *root = getenv("TABLETRACK_SHARED");
	if (!root)
		root = "../shared";
	snprintf(buf, sizeof buf, "%s/%s", root, rel);
	struct stat st;
	return stat(buf, &st) == 0 ? buf : NULL;
}

uint32_t test_rand(uint32_t *state)
{
	uint32_t x = *state ? *state : 0x9e3779b9u;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

void test_fill_random(struct image_u8 *img, uint32_t *state, int lo, int hi)
{
	for (int y = 0; y < img->height; y++) {
		uint8_t *row = image_u8_row(img, y);
		for (int x = 0; x < img->width; x++)
			row[x] = (uint8_t)(lo + (int)(test_rand(state) % (uint32_t)(hi - lo + 1)));
	}
}

#define TMPDIRS_MAX 64

/* The directories test_tmpdir() made, removed with what the test left in
 * them when the test program exits: a run of the suite used to leave ten
 * behind in /tmp. */
static char tmpdirs[TMPDIRS_MAX][512];
static int n_tmpdirs;
static pid_t tmpdirs_owner; /* a forked child that exits leaves them to its parent */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(path); /* keep going: remove what can be removed */
	return 0;
}

static void tmpdirs_remove(void)
{
	if (getpid() != tmpdirs_owner)
		return;
	for (int i = 0; i < n_tmpdirs; i++)
		nftw(tmpdirs[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	n_tmpdirs = 0;
}

const char *test_tmpdir(void)
{
	static char buf[512];
	const char *t = getenv("TMPDIR");
	snprintf(buf, sizeof buf, "%s/tabletrack-test-XXXXXX", t ? t : "/tmp");
	if (!mkdtemp(buf))
		return NULL;
	if (n_tmpdirs < TMPDIRS_MAX) {
		if (n_tmpdirs == 0) {
			tmpdirs_owner = getpid();
			atexit(tmpdirs_remove);
		}
		snprintf(tmpdirs[n_tmpdirs++], sizeof tmpdirs[0], "%s", buf);
	}
	return buf;
}

void test_streak(struct image_u8 *img, float len, float a, int noise, uint32_t *state)
{
	const int w = img->width, h = img->height;
	float *src = malloc(sizeof(float) * (size_t)w * (size_t)h);
	if (!src)
		return;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			src[y * w + x] = image_u8_row(img, y)[x];
	const int n = (int)ceilf(2.0f * len) + 1;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			float sum = 0.0f;
			for (int i = 0; i < n; i++) {
				const float t = ((float)i / (float)(n - 1) - 0.5f) * len;
				float sx = (float)x + t * cosf(a), sy = (float)y + t * sinf(a);
				sx = sx < 0 ? 0 : sx > (float)(w - 1) ? (float)(w - 1) : sx;
				sy = sy < 0 ? 0 : sy > (float)(h - 1) ? (float)(h - 1) : sy;
				const int x0 = (int)sx, y0 = (int)sy, x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
				const float fx = sx - (float)x0, fy = sy - (float)y0;
				const float top = src[y0 * w + x0] * (1 - fx) + src[y0 * w + x1] * fx;
				const float bot = src[y1 * w + x0] * (1 - fx) + src[y1 * w + x1] * fx;
				sum += top * (1 - fy) + bot * fy;
			}
			int v = (int)(sum / (float)n + 0.5f);
			if (noise > 0)
				v += (int)(test_rand(state) % (uint32_t)(2 * noise + 1)) - noise;
			image_u8_row(img, y)[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	free(src);
}

void test_defocus(struct image_u8 *img, float sigma, int noise, uint32_t *state)
{
	const int w = img->width, h = img->height, r = (int)ceilf(3.0f * sigma);
	float *t = malloc(sizeof(float) * (size_t)w * (size_t)h);
	float *k = malloc(sizeof(float) * (size_t)(2 * r + 1));
	if (!t || !k) {
		free(t);
		free(k);
		return;
	}
	float sum = 0.0f;
	for (int i = -r; i <= r; i++)
		sum += k[i + r] = expf(-0.5f * (float)(i * i) / (sigma * sigma));
	for (int i = 0; i <= 2 * r; i++)
		k[i] /= sum;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			float a = 0.0f;
			for (int i = -r; i <= r; i++) {
				const int sx = x + i < 0 ? 0 : x + i > w - 1 ? w - 1 : x + i;
				a += k[i + r] * (float)image_u8_row(img, y)[sx];
			}
			t[y * w + x] = a;
		}
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			float a = 0.0f;
			for (int i = -r; i <= r; i++) {
				const int sy = y + i < 0 ? 0 : y + i > h - 1 ? h - 1 : y + i;
				a += k[i + r] * t[sy * w + x];
			}
			int v = (int)(a + 0.5f);
			if (noise > 0)
				v += (int)(test_rand(state) % (uint32_t)(2 * noise + 1)) - noise;
			image_u8_row(img, y)[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	free(t);
	free(k);
}
