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
/* A fresh temporary directory (mkdtemp under $TMPDIR or /tmp); static buffer. */
const char *test_tmpdir(void);

#endif
