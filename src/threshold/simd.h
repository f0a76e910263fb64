/*
 * simd.h - the byte and 16-bit vector operations the CPU threshold kernels
 * are written in, private to src/threshold.
 *
 * Three instruction sets, each a family of static inline functions with its
 * own prefix: sc_ (one pixel a "vector", plain C, every CPU), sse2_ (16
 * bytes, every x86-64) and avx2_ (32 bytes, x86-64 CPUs that have it, chosen
 * at run time: every avx2_ function carries the target attribute, so the
 * file needs no -mavx2). cpu_kernels.h is written once against these names
 * through a prefix macro and compiled once per family; the results are the
 * same bits whichever family runs.
 *
 * u8 lanes: load/store (unaligned), min, max, black (the Bernsen rule of
 * threshold.md §1: all ones where the pixel is black), bits (one bit a lane,
 * lane 0 in bit 0). u16 lanes (half as many): ld8 widens bytes, st8 narrows
 * values <= 255, mul keeps the low 16 bits (exact where products fit).
 * prefix and qprefix: a row of prefix sums of the local mean's 16-bit
 * column sums and of Sauvola's 32-bit column sums of squares (wrapping
 * modulo 2^32, as uint32_t does).
 * sauv: SD pixels of Sauvola's rule (threshold.h) from prefix-sum rows, in
 * doubles: every product and difference there is an integer below 2^53,
 * so exact, and the square root truncated is the floor (see threshold.h):
 * the same bits as the 64-bit integer rule.
 */
#ifndef TT_THRESHOLD_SIMD_H
#define TT_THRESHOLD_SIMD_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TT_SIMD_X86 1
#include <immintrin.h>
#else
#define TT_SIMD_X86 0
#endif

static inline uint8_t u8_min(uint8_t a, uint8_t b)
{
	return a < b ? a : b;
}
static inline uint8_t u8_max(uint8_t a, uint8_t b)
{
	return a > b ? a : b;
}

/* pre[0] = 0, pre[x + 1] = pre[x] + col[x] for x < w: the row of prefix
 * sums of the local mean (the same integers in every family). */
static inline void prefix_u16(int32_t *pre, const uint16_t *col, int w)
{
	pre[0] = 0;
	for (int x = 0; x < w; x++)
		pre[x + 1] = pre[x] + col[x];
}

/* qpre[0] = 0, qpre[x + 1] = qpre[x] + qcol[x] modulo 2^32 for x < w: the
 * row of prefix sums of Sauvola's squares (the same integers in every
 * family: a sum modulo 2^32 does not depend on its order). */
static inline void prefix_u32(uint32_t *qpre, const uint32_t *qcol, int w)
{
	qpre[0] = 0;
	for (int x = 0; x < w; x++)
		qpre[x + 1] = qpre[x] + qcol[x];
}

/* ---- sc_: one lane ---- */
#define sc_VB 1
#define sc_VW 1
typedef uint8_t sc_u8;
typedef uint16_t sc_u16;
static inline sc_u8 sc_ld(const uint8_t *p)
{
	return *p;
}
static inline void sc_st(uint8_t *p, sc_u8 v)
{
	*p = v;
}
static inline sc_u8 sc_min(sc_u8 a, sc_u8 b)
{
	return u8_min(a, b);
}
static inline sc_u8 sc_max(sc_u8 a, sc_u8 b)
{
	return u8_max(a, b);
}
static inline sc_u8 sc_set1(int v)
{
	return (uint8_t)v;
}
static inline sc_u8 sc_inv(sc_u8 v)
{
	return (uint8_t)~v;
}
static inline void sc_prefix(int32_t *pre, const uint16_t *col, int w)
{
	prefix_u16(pre, col, w);
}
static inline void sc_qprefix(uint32_t *qpre, const uint32_t *qcol, int w)
{
	prefix_u32(qpre, qcol, w);
}
static inline uint32_t sc_bits(sc_u8 v)
{
	return v >> 7;
}
static inline sc_u8 sc_black(sc_u8 lo, sc_u8 hi, sc_u8 v, sc_u8 gate)
{
	int t = (lo + hi) >> 1;
	if (hi - lo < gate)
		t = t < 128 ? 255 : 0;
	return v > t ? 0 : 0xff;
}
/* 0xff where hi - lo >= gate (Bernsen's window is steep), else 0. */
static inline sc_u8 sc_steep(sc_u8 lo, sc_u8 hi, sc_u8 gate)
{
	return hi - lo >= gate ? 0xff : 0;
}
static inline sc_u8 sc_and(sc_u8 a, sc_u8 b)
{
	return a & b;
}
static inline sc_u8 sc_or(sc_u8 a, sc_u8 b)
{
	return a | b;
}
static inline sc_u16 sc_w_ld8(const uint8_t *p)
{
	return *p;
}
static inline sc_u16 sc_w_ld(const uint16_t *p)
{
	return *p;
}
static inline void sc_w_st(uint16_t *p, sc_u16 v)
{
	*p = v;
}
static inline void sc_w_st8(uint8_t *p, sc_u16 v)
{
	*p = (uint8_t)v;
}
static inline sc_u16 sc_w_set1(int v)
{
	return (uint16_t)v;
}
static inline sc_u16 sc_w_add(sc_u16 a, sc_u16 b)
{
	return (uint16_t)(a + b);
}
static inline sc_u16 sc_w_mul(sc_u16 a, sc_u16 b)
{
	return (uint16_t)((uint32_t)a * b);
}
static inline sc_u16 sc_w_shr8(sc_u16 a)
{
	return (uint16_t)(a >> 8);
}
static inline sc_u16 sc_w_lo8(sc_u16 a)
{
	return (uint16_t)(a & 255);
}

/* The Sauvola parameters of one row's inner windows, as doubles:
 * n, n * R, 100 - K, K, gate * n (the dark-window floor), 100 * n. */
enum { SAUV_N, SAUV_NR, SAUV_KR, SAUV_K, SAUV_MIN, SAUV_N100, SAUV_P };

/* out[i] = 0xff (white) or 0 for the window sums shi[i] - slo[i] (values)
 * and qhi[i] - qlo[i] (squares, modulo 2^32: the true sum is below 2^31). */
#define sc_SD 1
static inline void sc_sauv(const int32_t *shi, const int32_t *slo, const uint32_t *qhi, const uint32_t *qlo,
			   const uint8_t *v, const double *p, uint8_t *out)
{
	double sv = (double)(shi[0] - slo[0]), q = (double)(int32_t)(qhi[0] - qlo[0]);
	double b = p[SAUV_N100] * v[0] - p[SAUV_KR] * sv;
	double d = (double)(int64_t)sqrt(p[SAUV_N] * q - sv * sv);
	out[0] = b > 0 && sv >= p[SAUV_MIN] && p[SAUV_NR] * b > p[SAUV_K] * sv * d ? 0xff : 0;
}

#if TT_SIMD_X86
/* ---- sse2_: 16 bytes ---- */
#define sse2_VB 16
#define sse2_VW 8
typedef __m128i sse2_u8;
typedef __m128i sse2_u16;
static inline __m128i sse2_ld(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}
static inline void sse2_st(uint8_t *p, __m128i v)
{
	_mm_storeu_si128((__m128i *)(void *)p, v);
}
static inline __m128i sse2_min(__m128i a, __m128i b)
{
	return _mm_min_epu8(a, b);
}
static inline __m128i sse2_max(__m128i a, __m128i b)
{
	return _mm_max_epu8(a, b);
}
static inline __m128i sse2_set1(int v)
{
	return _mm_set1_epi8((char)v);
}
static inline __m128i sse2_inv(__m128i v)
{
	return _mm_xor_si128(v, _mm_set1_epi8(-1));
}
static inline void sse2_prefix(int32_t *pre, const uint16_t *col, int w)
{
	prefix_u16(pre, col, w);
}
static inline void sse2_qprefix(uint32_t *qpre, const uint32_t *qcol, int w)
{
	prefix_u32(qpre, qcol, w);
}
static inline uint32_t sse2_bits(__m128i v)
{
	return (uint32_t)_mm_movemask_epi8(v);
}
/* (lo + hi) / 2 without 9-bit sums: avg rounds up when lo + hi is odd. "hi -
 * lo >= gate" is a zero saturated gate - (hi - lo); t < 128 is t > -1 signed. */
static inline __m128i sse2_black(__m128i lo, __m128i hi, __m128i v, __m128i gate)
{
	const __m128i zero = _mm_setzero_si128();
	__m128i t =
	    _mm_sub_epi8(_mm_avg_epu8(lo, hi), _mm_and_si128(_mm_xor_si128(lo, hi), _mm_set1_epi8(1)));
	__m128i steep = _mm_cmpeq_epi8(_mm_subs_epu8(gate, _mm_sub_epi8(hi, lo)), zero);
	__m128i flat_t = _mm_cmpgt_epi8(t, _mm_set1_epi8(-1));
	t = _mm_or_si128(_mm_and_si128(steep, t), _mm_andnot_si128(steep, flat_t));
	return _mm_cmpeq_epi8(_mm_subs_epu8(v, t), zero);
}
static inline __m128i sse2_steep(__m128i lo, __m128i hi, __m128i gate)
{
	return _mm_cmpeq_epi8(_mm_subs_epu8(gate, _mm_sub_epi8(hi, lo)), _mm_setzero_si128());
}
static inline __m128i sse2_and(__m128i a, __m128i b)
{
	return _mm_and_si128(a, b);
}
static inline __m128i sse2_or(__m128i a, __m128i b)
{
	return _mm_or_si128(a, b);
}
static inline __m128i sse2_w_ld8(const uint8_t *p)
{
	return _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)p), _mm_setzero_si128());
}
static inline __m128i sse2_w_ld(const uint16_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}
static inline void sse2_w_st(uint16_t *p, __m128i v)
{
	_mm_storeu_si128((__m128i *)(void *)p, v);
}
static inline void sse2_w_st8(uint8_t *p, __m128i v)
{
	_mm_storel_epi64((__m128i *)(void *)p, _mm_packus_epi16(v, v));
}
static inline __m128i sse2_w_set1(int v)
{
	return _mm_set1_epi16((short)v);
}
static inline __m128i sse2_w_add(__m128i a, __m128i b)
{
	return _mm_add_epi16(a, b);
}
static inline __m128i sse2_w_mul(__m128i a, __m128i b)
{
	return _mm_mullo_epi16(a, b);
}
static inline __m128i sse2_w_shr8(__m128i a)
{
	return _mm_srli_epi16(a, 8);
}
static inline __m128i sse2_w_lo8(__m128i a)
{
	return _mm_and_si128(a, _mm_set1_epi16(255));
}

#define sse2_SD 2
static inline void sse2_sauv(const int32_t *shi, const int32_t *slo, const uint32_t *qhi, const uint32_t *qlo,
			     const uint8_t *v, const double *p, uint8_t *out)
{
	__m128i si = _mm_sub_epi32(_mm_loadl_epi64((const __m128i *)(const void *)shi),
				   _mm_loadl_epi64((const __m128i *)(const void *)slo));
	__m128i qi = _mm_sub_epi32(_mm_loadl_epi64((const __m128i *)(const void *)qhi),
				   _mm_loadl_epi64((const __m128i *)(const void *)qlo));
	__m128d sv = _mm_cvtepi32_pd(si), q = _mm_cvtepi32_pd(qi), vv = _mm_set_pd(v[1], v[0]);
	__m128d b = _mm_sub_pd(_mm_mul_pd(_mm_set1_pd(p[SAUV_N100]), vv), _mm_mul_pd(_mm_set1_pd(p[SAUV_KR]), sv));
	__m128d var = _mm_sub_pd(_mm_mul_pd(_mm_set1_pd(p[SAUV_N]), q), _mm_mul_pd(sv, sv));
	__m128d d = _mm_cvtepi32_pd(_mm_cvttpd_epi32(_mm_sqrt_pd(var)));
	__m128d lhs = _mm_mul_pd(_mm_set1_pd(p[SAUV_NR]), b);
	__m128d rhs = _mm_mul_pd(_mm_mul_pd(_mm_set1_pd(p[SAUV_K]), sv), d);
	__m128d w = _mm_and_pd(_mm_and_pd(_mm_cmpgt_pd(b, _mm_setzero_pd()), _mm_cmpge_pd(sv, _mm_set1_pd(p[SAUV_MIN]))),
			       _mm_cmpgt_pd(lhs, rhs));
	int bits = _mm_movemask_pd(w);
	out[0] = bits & 1 ? 0xff : 0;
	out[1] = bits & 2 ? 0xff : 0;
}

/* ---- avx2_: 32 bytes ---- */
#define TT_AVX2 __attribute__((target("avx2")))
#define avx2_VB 32
#define avx2_VW 16
typedef __m256i avx2_u8;
typedef __m256i avx2_u16;
TT_AVX2 static inline __m256i avx2_ld(const uint8_t *p)
{
	return _mm256_loadu_si256((const __m256i *)(const void *)p);
}
TT_AVX2 static inline void avx2_st(uint8_t *p, __m256i v)
{
	_mm256_storeu_si256((__m256i *)(void *)p, v);
}
TT_AVX2 static inline __m256i avx2_min(__m256i a, __m256i b)
{
	return _mm256_min_epu8(a, b);
}
TT_AVX2 static inline __m256i avx2_max(__m256i a, __m256i b)
{
	return _mm256_max_epu8(a, b);
}
TT_AVX2 static inline __m256i avx2_set1(int v)
{
	return _mm256_set1_epi8((char)v);
}
TT_AVX2 static inline __m256i avx2_inv(__m256i v)
{
	return _mm256_xor_si256(v, _mm256_set1_epi8(-1));
}
TT_AVX2 static inline uint32_t avx2_bits(__m256i v)
{
	return (uint32_t)_mm256_movemask_epi8(v);
}
TT_AVX2 static inline __m256i avx2_black(__m256i lo, __m256i hi, __m256i v, __m256i gate)
{
	const __m256i zero = _mm256_setzero_si256();
	__m256i t = _mm256_sub_epi8(_mm256_avg_epu8(lo, hi),
	                            _mm256_and_si256(_mm256_xor_si256(lo, hi), _mm256_set1_epi8(1)));
	__m256i steep = _mm256_cmpeq_epi8(_mm256_subs_epu8(gate, _mm256_sub_epi8(hi, lo)), zero);
	__m256i flat_t = _mm256_cmpgt_epi8(t, _mm256_set1_epi8(-1));
	t = _mm256_or_si256(_mm256_and_si256(steep, t), _mm256_andnot_si256(steep, flat_t));
	return _mm256_cmpeq_epi8(_mm256_subs_epu8(v, t), zero);
}
TT_AVX2 static inline __m256i avx2_steep(__m256i lo, __m256i hi, __m256i gate)
{
	return _mm256_cmpeq_epi8(_mm256_subs_epu8(gate, _mm256_sub_epi8(hi, lo)), _mm256_setzero_si256());
}
TT_AVX2 static inline __m256i avx2_and(__m256i a, __m256i b)
{
	return _mm256_and_si256(a, b);
}
TT_AVX2 static inline __m256i avx2_or(__m256i a, __m256i b)
{
	return _mm256_or_si256(a, b);
}
TT_AVX2 static inline __m256i avx2_w_ld8(const uint8_t *p)
{
	return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p));
}
TT_AVX2 static inline __m256i avx2_w_ld(const uint16_t *p)
{
	return _mm256_loadu_si256((const __m256i *)(const void *)p);
}
TT_AVX2 static inline void avx2_w_st(uint16_t *p, __m256i v)
{
	_mm256_storeu_si256((__m256i *)(void *)p, v);
}
TT_AVX2 static inline void avx2_w_st8(uint8_t *p, __m256i v)
{
	__m128i b = _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
	_mm_storeu_si128((__m128i *)(void *)p, b);
}
TT_AVX2 static inline __m256i avx2_w_set1(int v)
{
	return _mm256_set1_epi16((short)v);
}
TT_AVX2 static inline __m256i avx2_w_add(__m256i a, __m256i b)
{
	return _mm256_add_epi16(a, b);
}
TT_AVX2 static inline __m256i avx2_w_mul(__m256i a, __m256i b)
{
	return _mm256_mullo_epi16(a, b);
}
TT_AVX2 static inline __m256i avx2_w_shr8(__m256i a)
{
	return _mm256_srli_epi16(a, 8);
}
TT_AVX2 static inline __m256i avx2_w_lo8(__m256i a)
{
	return _mm256_and_si256(a, _mm256_set1_epi16(255));
}
/* Eight sums at a time: a scan within each 128-bit half, the low half's
 * total added to the high half, the running total to all eight (32-bit
 * lanes wrap as uint32_t does: prefix_u32's sums too). */
TT_AVX2 static inline __m256i avx2_scan8(__m256i v, __m256i *carry)
{
	const __m256i last_lo = _mm256_set_epi32(3, 3, 3, 3, 7, 7, 7, 7), last = _mm256_set1_epi32(7);
	v = _mm256_add_epi32(v, _mm256_slli_si256(v, 4));
	v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
	v = _mm256_add_epi32(v, _mm256_blend_epi32(_mm256_setzero_si256(), _mm256_permutevar8x32_epi32(v, last_lo), 0xf0));
	v = _mm256_add_epi32(v, *carry);
	*carry = _mm256_permutevar8x32_epi32(v, last);
	return v;
}
TT_AVX2 static inline void avx2_prefix(int32_t *pre, const uint16_t *col, int w)
{
	__m256i carry = _mm256_setzero_si256();
	int x = 0;
	pre[0] = 0;
	for (; x + 8 <= w; x += 8) {
		__m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(col + x)));
		_mm256_storeu_si256((__m256i *)(void *)(pre + x + 1), avx2_scan8(v, &carry));
	}
	for (; x < w; x++)
		pre[x + 1] = pre[x] + col[x];
}
TT_AVX2 static inline void avx2_qprefix(uint32_t *qpre, const uint32_t *qcol, int w)
{
	__m256i carry = _mm256_setzero_si256();
	int x = 0;
	qpre[0] = 0;
	for (; x + 8 <= w; x += 8) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(qcol + x));
		_mm256_storeu_si256((__m256i *)(void *)(qpre + x + 1), avx2_scan8(v, &carry));
	}
	for (; x < w; x++)
		qpre[x + 1] = qpre[x] + qcol[x];
}
#define avx2_SD 4
TT_AVX2 static inline void avx2_sauv(const int32_t *shi, const int32_t *slo, const uint32_t *qhi, const uint32_t *qlo,
				     const uint8_t *v, const double *p, uint8_t *out)
{
	__m128i si = _mm_sub_epi32(_mm_loadu_si128((const __m128i *)(const void *)shi),
				   _mm_loadu_si128((const __m128i *)(const void *)slo));
	__m128i qi = _mm_sub_epi32(_mm_loadu_si128((const __m128i *)(const void *)qhi),
				   _mm_loadu_si128((const __m128i *)(const void *)qlo));
	int32_t v4;
	memcpy(&v4, v, 4);
	__m256d sv = _mm256_cvtepi32_pd(si), q = _mm256_cvtepi32_pd(qi);
	__m256d vv = _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(v4)));
	__m256d b = _mm256_sub_pd(_mm256_mul_pd(_mm256_set1_pd(p[SAUV_N100]), vv),
				  _mm256_mul_pd(_mm256_set1_pd(p[SAUV_KR]), sv));
	__m256d var = _mm256_sub_pd(_mm256_mul_pd(_mm256_set1_pd(p[SAUV_N]), q), _mm256_mul_pd(sv, sv));
	__m256d d = _mm256_cvtepi32_pd(_mm256_cvttpd_epi32(_mm256_sqrt_pd(var)));
	__m256d lhs = _mm256_mul_pd(_mm256_set1_pd(p[SAUV_NR]), b);
	__m256d rhs = _mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(p[SAUV_K]), sv), d);
	__m256d w = _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(b, _mm256_setzero_pd(), _CMP_GT_OQ),
						_mm256_cmp_pd(sv, _mm256_set1_pd(p[SAUV_MIN]), _CMP_GE_OQ)),
				  _mm256_cmp_pd(lhs, rhs, _CMP_GT_OQ));
	/* Bit i of the mask to bit 8 i (the four shifted copies overlap
	 * nowhere, so nothing carries), then each to a byte of 0xff: byte i
	 * of the word (x86-64 is little-endian) is out[i]. */
	const uint32_t bits = (uint32_t)_mm256_movemask_pd(w);
	const uint32_t white = (bits * 0x00204081u & 0x01010101u) * 0xffu;
	memcpy(out, &white, 4);
}
#endif

#endif
