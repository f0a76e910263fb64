/*
 * testutil.h - small helpers shared by the unit tests (cmocka).
 *
 * Tests run from the repository root. Shared test data (../shared) is
 * optional: tests that need it call test_shared_path() and skip() when it
 * returns NULL, because a user's fresh clone has none.
 */
#ifndef TT_TESTUTIL_H
#define TT_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "../../src/core/image.h"

/* "../shared/<rel>" when it exists (or $TABLETRACK_SHARED/<rel>), else NULL.
 * Returns a static buffer overwritten by the next call. */
const char *test_shared_path(const char *rel);

/* Deterministic pseudo-random numbers (xorshift), for reproducible tests. */
uint32_t test_rand(uint32_t *state);
/* Fills img with random grey values in [lo, hi]. */
void test_fill_random(struct image_u8 *img, uint32_t *state, int lo, int hi);
/* img blurred along a streak of len px at angle a (radians; 0 along x,
 * pi/2 down the rows), as a moving camera smears it and as the scene tool
 * draws motion: each pixel the mean of 2 len + 1 bilinear samples along the
 * segment centred on it, the border repeated; then uniform noise of
 * +-noise grey levels from state. */
void test_streak(struct image_u8 *img, float len, float a, int noise, uint32_t *state);
/* img out of focus: blurred by a Gaussian of sigma px (separable, radius
 * 3 sigma, the border repeated), then uniform noise of +-noise grey levels
 * from state. */
void test_defocus(struct image_u8 *img, float sigma, int noise, uint32_t *state);
/* A fresh temporary directory (mkdtemp under $TMPDIR or /tmp); static buffer. */
const char *test_tmpdir(void);

#endif
