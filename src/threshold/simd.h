/*
 * simd.h - the few byte-vector operations the CPU threshold needs, private
 * to src/threshold.
 *
 * SSE2 (every x86-64) when the compiler targets it, else one byte at a time;
 * the results are the same either way. The default -O2 build does not
 * auto-vectorise these loops (GCC 12's "very cheap" cost model), hence the
 * intrinsics.
 */
#ifndef TT_THRESHOLD_SIMD_H
#define TT_THRESHOLD_SIMD_H

#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
typedef __m128i vec_u8;
#define VEC_BYTES 16
static inline vec_u8 vec_load(const uint8_t *p) { return _mm_loadu_si128((const __m128i *)(const void *)p); }
static inline void vec_store(uint8_t *p, vec_u8 v) { _mm_storeu_si128((__m128i *)(void *)p, v); }
static inline vec_u8 vec_min(vec_u8 a, vec_u8 b) { return _mm_min_epu8(a, b); }
static inline vec_u8 vec_max(vec_u8 a, vec_u8 b) { return _mm_max_epu8(a, b); }
#else
typedef uint8_t vec_u8;
#define VEC_BYTES 1
static inline vec_u8 vec_load(const uint8_t *p) { return *p; }
static inline void vec_store(uint8_t *p, vec_u8 v) { *p = v; }
static inline vec_u8 vec_min(vec_u8 a, vec_u8 b) { return a < b ? a : b; }
static inline vec_u8 vec_max(vec_u8 a, vec_u8 b) { return a > b ? a : b; }
#endif

static inline uint8_t u8_min(uint8_t a, uint8_t b) { return a < b ? a : b; }
static inline uint8_t u8_max(uint8_t a, uint8_t b) { return a > b ? a : b; }

/* dmin = min(amin, b), dmax = max(amax, b) over n bytes (d may alias a). */
static inline void row_minmax_acc(uint8_t *dmin, uint8_t *dmax, const uint8_t *amin, const uint8_t *amax,
				  const uint8_t *b, int n)
{
	int x = 0;
	for (; x + VEC_BYTES <= n; x += VEC_BYTES) {
		vec_u8 v = vec_load(b + x);
		vec_store(dmin + x, vec_min(vec_load(amin + x), v));
		vec_store(dmax + x, vec_max(vec_load(amax + x), v));
	}
	for (; x < n; x++) {
		dmin[x] = u8_min(amin[x], b[x]);
		dmax[x] = u8_max(amax[x], b[x]);
	}
}

/* dmin = min(amin, bmin), dmax = max(amax, bmax) over n bytes. */
static inline void row_minmax2(uint8_t *dmin, uint8_t *dmax, const uint8_t *amin, const uint8_t *bmin,
			       const uint8_t *amax, const uint8_t *bmax, int n)
{
	int x = 0;
	for (; x + VEC_BYTES <= n; x += VEC_BYTES) {
		vec_store(dmin + x, vec_min(vec_load(amin + x), vec_load(bmin + x)));
		vec_store(dmax + x, vec_max(vec_load(amax + x), vec_load(bmax + x)));
	}
	for (; x < n; x++) {
		dmin[x] = u8_min(amin[x], bmin[x]);
		dmax[x] = u8_max(amax[x], bmax[x]);
	}
}

#endif
