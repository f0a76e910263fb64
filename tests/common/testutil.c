#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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

const char *test_tmpdir(void)
{
	static char buf[512];
	const char *t = getenv("TMPDIR");
	snprintf(buf, sizeof buf, "%s/tabletrack-test-XXXXXX", t ? t : "/tmp");
	return mkdtemp(buf);
}
