/* sift_compare.h - how close two SIFT keypoint sets of one picture are
 * (a reference, OpenCV's, and a test set, the GPU's or its simulation's).
 * Header-only (static inline), for tests/test_sift_sim.c and
 * tests/gpu/gpu_test.c.
 *
 * Definitions:
 *   same place:  within 1.5 px and sizes within a factor 2^0.25 (a
 *                quarter octave, less than one DoG layer).
 *   repeatability(ref -> test): the fraction of reference keypoints with a
 *                test keypoint at the same place (angles ignored).
 *   descriptor agreement: for each reference keypoint paired with the test
 *                keypoint at the same place whose angle is closest
 *                (within 10 degrees), the test descriptor's nearest
 *                reference descriptor (L2) belongs to a keypoint at the
 *                same place with an angle within 10 degrees: the fraction
 *                of pairs where it does.
 *   exact:       the fraction of pairs whose descriptors differ by at most 2
 *                in every byte (a measure of how bit-close, not a pass rule).
 */
#ifndef TT_TESTS_SIFT_COMPARE_H
#define TT_TESTS_SIFT_COMPARE_H

#include <math.h>
#include <stdlib.h>

#include "../../src/objects/objects.h"

struct sift_agreement {
	int n_ref, n_test;
	double repeat;      /* ref -> test */
	double repeat_back; /* test -> ref */
	double desc_agree;
	double exact;
	int pairs;
};

static inline int sift_cmp_same_place(const struct objects_keypoint *a, const struct objects_keypoint *b)
{
	float dx = a->x - b->x, dy = a->y - b->y;
	if (dx * dx + dy * dy > 1.5f * 1.5f)
		return 0;
	return fabsf(log2f(a->size / b->size)) <= 0.25f;
}

static inline float sift_cmp_angle(float a, float b)
{
	float d = fabsf(fmodf(a - b, 360.0f));
	return d > 180.0f ? 360.0f - d : d;
}

static inline int sift_cmp_dist2(const uint8_t *a, const uint8_t *b)
{
	int s = 0;
	for (int i = 0; i < OBJECTS_DESC_LEN; i++) {
		int d = (int)a[i] - (int)b[i];
		s += d * d;
	}
	return s;
}

/* Fraction of the keypoints of a with a keypoint of b at the same place. */
static inline double sift_cmp_repeat(const struct objects_keypoint *a, int na, const struct objects_keypoint *b,
				     int nb)
{
	int hit = 0;
	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++)
			if (sift_cmp_same_place(&a[i], &b[j])) {
				hit++;
				break;
			}
	return na ? (double)hit / na : 1.0;
}

static inline void sift_compare(const struct objects_keypoint *ref, int nr, const struct objects_keypoint *test,
				int nt, struct sift_agreement *out)
{
	out->n_ref = nr;
	out->n_test = nt;
	out->repeat = sift_cmp_repeat(ref, nr, test, nt);
	out->repeat_back = sift_cmp_repeat(test, nt, ref, nr);
	int pairs = 0, agree = 0, exact = 0;
	for (int i = 0; i < nr; i++) {
		int best = -1;
		float best_a = 10.0f;
		for (int j = 0; j < nt; j++) {
			if (!sift_cmp_same_place(&ref[i], &test[j]))
				continue;
			float da = sift_cmp_angle(ref[i].angle_deg, test[j].angle_deg);
			if (da <= best_a) {
				best_a = da;
				best = j;
			}
		}
		if (best < 0)
			continue;
		pairs++;
		int nn = -1, nd = 1 << 30;
		for (int k = 0; k < nr; k++) {
			int d = sift_cmp_dist2(test[best].desc, ref[k].desc);
			if (d < nd) {
				nd = d;
				nn = k;
			}
		}
		if (nn >= 0 && sift_cmp_same_place(&ref[nn], &test[best]) &&
		    sift_cmp_angle(ref[nn].angle_deg, test[best].angle_deg) <= 10.0f)
			agree++;
		int maxd = 0;
		for (int k = 0; k < OBJECTS_DESC_LEN; k++) {
			int d = abs((int)ref[i].desc[k] - (int)test[best].desc[k]);
			maxd = d > maxd ? d : maxd;
		}
		exact += maxd <= 2;
	}
	out->pairs = pairs;
	out->desc_agree = pairs ? (double)agree / pairs : 1.0;
	out->exact = pairs ? (double)exact / pairs : 1.0;
}

#endif
