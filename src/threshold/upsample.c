#include "upsample.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../core/err.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define UP_AVX2 1
#define TT_UP_AVX2 __attribute__((target("avx2")))
#else
#define UP_AVX2 0
#endif

/* upsample_set_isa("scalar"): the plain C copies run even where the CPU
 * has AVX2 (tests compare the two). */
static bool scalar_forced;

/* Whether the Lanczos enlargements run their avx2 copies. */
static bool use_avx2(void)
{
#if UP_AVX2
	return !scalar_forced && __builtin_cpu_supports("avx2");
#else
	return false;
#endif
}

const char *upsample_isa(void)
{
	return use_avx2() ? "avx2" : "scalar";
}

int upsample_set_isa(const char *isa)
{
	if (strcmp(isa, "scalar") == 0) {
		scalar_forced = true;
		return 0;
	}
#if UP_AVX2
	if (strcmp(isa, "avx2") == 0 && __builtin_cpu_supports("avx2")) {
		scalar_forced = false;
		return 0;
	}
#endif
	return ERR_UNSUPPORTED;
}

/* Source pixels x0 .. x1 - 1 of row r (its neighbours ru and rd, w
 * pixels a row) enlarged twice into output rows o0 and o1 from their
 * pixel 0 on. */
static void bilinear_px(const uint8_t *r, const uint8_t *ru, const uint8_t *rd, int w, int x0, int x1, int ox,
			uint8_t *o0, uint8_t *o1)
{
	for (int x = x0; x < x1; x++) {
		const int xl = x > 0 ? x - 1 : 0, xr = x + 1 < w ? x + 1 : w - 1;
		/* Columns blended vertically first (weights 3:1), then rows. */
		const int cu = 3 * r[x] + ru[x], cd = 3 * r[x] + rd[x];
		const int lu = 3 * r[xl] + ru[xl], ld = 3 * r[xl] + rd[xl];
		const int qu = 3 * r[xr] + ru[xr], qd = 3 * r[xr] + rd[xr];
		const int o = 2 * (x - ox);
		o0[o] = (uint8_t)((3 * cu + lu + 8) >> 4);
		o0[o + 1] = (uint8_t)((3 * cu + qu + 8) >> 4);
		o1[o] = (uint8_t)((3 * cd + ld + 8) >> 4);
		o1[o + 1] = (uint8_t)((3 * cd + qd + 8) >> 4);
	}
}

#if UP_AVX2
/* bilinear_px, sixteen source pixels at a time where their neighbours
 * lie in the row (x - 1 .. x + 16), one at a time elsewhere: the same
 * integers (at most 16 times 255, so 16-bit lanes hold them). */
TT_UP_AVX2 static void bilinear_px_avx2(const uint8_t *r, const uint8_t *ru, const uint8_t *rd, int w, int x0,
					int x1, uint8_t *o0, uint8_t *o1)
{
	int x = x0;
	if (x < x1 && x < 1) {
		bilinear_px(r, ru, rd, w, x, 1, x0, o0, o1);
		x = 1;
	}
	/* Output bytes e0..e7 f0..f7 of each half to e0 f0 e1 f1 .. e7 f7. */
	const __m256i zip = _mm256_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, 0, 8, 1, 9, 2, 10, 3,
					     11, 4, 12, 5, 13, 6, 14, 7, 15);
	const __m256i eight = _mm256_set1_epi16(8);
#define LD(p, d) _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)((p) + x + (d))))
	for (; x + 16 <= x1 && x + 17 <= w; x += 16) {
		__m256i c3[3], up[3], dn[3];
		for (int d = 0; d < 3; d++) {
			const __m256i m = LD(r, d - 1);
			c3[d] = _mm256_add_epi16(_mm256_add_epi16(m, m), m);
			up[d] = _mm256_add_epi16(c3[d], LD(ru, d - 1));
			dn[d] = _mm256_add_epi16(c3[d], LD(rd, d - 1));
		}
		const __m256i u3 = _mm256_add_epi16(_mm256_add_epi16(up[1], up[1]), _mm256_add_epi16(up[1], eight));
		const __m256i d3 = _mm256_add_epi16(_mm256_add_epi16(dn[1], dn[1]), _mm256_add_epi16(dn[1], eight));
		const __m256i ue = _mm256_srli_epi16(_mm256_add_epi16(u3, up[0]), 4);
		const __m256i uo = _mm256_srli_epi16(_mm256_add_epi16(u3, up[2]), 4);
		const __m256i de = _mm256_srli_epi16(_mm256_add_epi16(d3, dn[0]), 4);
		const __m256i dd = _mm256_srli_epi16(_mm256_add_epi16(d3, dn[2]), 4);
		/* packus: e0-7 o0-7 | e8-15 o8-15 per half, in order once zipped. */
		const int o = 2 * (x - x0);
		_mm256_storeu_si256((__m256i *)(void *)(o0 + o), _mm256_shuffle_epi8(_mm256_packus_epi16(ue, uo), zip));
		_mm256_storeu_si256((__m256i *)(void *)(o1 + o), _mm256_shuffle_epi8(_mm256_packus_epi16(de, dd), zip));
	}
#undef LD
	if (x < x1)
		bilinear_px(r, ru, rd, w, x, x1, x0, o0, o1);
}
#endif

int upsample2_part(const struct image_u8 *src, int x0, int y0, int x1, int y1, struct image_u8 *dst)
{
	if (x0 < 0 || y0 < 0 || x1 > src->width || y1 > src->height || x0 >= x1 || y0 >= y1 ||
	    dst->width != 2 * (x1 - x0) || dst->height != 2 * (y1 - y0))
		return ERR_RANGE;
	const int w = src->width, h = src->height;
	const bool avx2 = use_avx2();
	for (int y = y0; y < y1; y++) {
		const uint8_t *r = image_u8_row(src, y);
		const uint8_t *ru = image_u8_row(src, y > 0 ? y - 1 : 0);
		const uint8_t *rd = image_u8_row(src, y + 1 < h ? y + 1 : h - 1);
		uint8_t *o0 = dst->data + (size_t)(2 * (y - y0)) * (size_t)dst->stride;
		uint8_t *o1 = o0 + dst->stride;
#if UP_AVX2
		if (avx2) {
			bilinear_px_avx2(r, ru, rd, w, x0, x1, o0, o1);
			continue;
		}
#endif
		bilinear_px(r, ru, rd, w, x0, x1, x0, o0, o1);
	}
	(void)avx2;
	return 0;
}

/* Lanczos-3 weights, L(d) = sinc(d) sinc(d / 3) at d = -2.75 .. 2.25 scaled
 * to sum 256, of the six source pixels i - 3 .. i + 2
 * for a sample at i - 0.25; a sample at i + 0.25 takes them mirrored
 * over i - 2 .. i + 3. */
static const int LZ[6] = {2, -17, 69, 228, -34, 8};

static inline int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Source pixel x of row r (w pixels) enlarged along x, unscaled: the
 * samples a quarter pixel before and after it into o[0] and o[1]. */
static inline void lanczos_px(const uint8_t *r, int w, int x, int32_t *o)
{
	int32_t a = 0, b = 0;
	if (x >= 3 && x + 3 < w) {
		const uint8_t *p = r + x - 3;
		for (int k = 0; k < 6; k++) {
			a += LZ[k] * p[k];
			b += LZ[5 - k] * p[k + 1];
		}
	} else {
		for (int k = 0; k < 6; k++) {
			a += LZ[k] * r[clampi(x - 3 + k, 0, w - 1)];
			b += LZ[5 - k] * r[clampi(x - 2 + k, 0, w - 1)];
		}
	}
	o[0] = a;
	o[1] = b;
}

/* Source row sy (clamped to the frame) of columns x0 .. x1 - 1 enlarged
 * along x, unscaled (weights' sum 256), into out (2 (x1 - x0) values). */
static void lanczos_row(const struct image_u8 *src, int sy, int x0, int x1, int32_t *out)
{
	const uint8_t *r = image_u8_row(src, clampi(sy, 0, src->height - 1));
	for (int x = x0; x < x1; x++)
		lanczos_px(r, src->width, x, out + 2 * (x - x0));
}

/* Output rows o0 and o1 (n pixels) from the seven rows h0 .. h6 enlarged
 * along x: o0 weighs h0 .. h5, o1 h1 .. h6 mirrored. Each row its own
 * restrict pointer, so that the compiler keeps the loop over j in vector
 * registers (the bytes stored alias nothing read). */
static void lanczos_cols(const int32_t *restrict h0, const int32_t *restrict h1, const int32_t *restrict h2,
			 const int32_t *restrict h3, const int32_t *restrict h4, const int32_t *restrict h5,
			 const int32_t *restrict h6, int n, uint8_t *restrict o0, uint8_t *restrict o1)
{
	for (int j = 0; j < n; j++) {
		const int32_t a = LZ[0] * h0[j] + LZ[1] * h1[j] + LZ[2] * h2[j] + LZ[3] * h3[j] + LZ[4] * h4[j] +
				  LZ[5] * h5[j];
		const int32_t b = LZ[5] * h1[j] + LZ[4] * h2[j] + LZ[3] * h3[j] + LZ[2] * h4[j] + LZ[1] * h5[j] +
				  LZ[0] * h6[j];
		o0[j] = (uint8_t)clampi((a + 32768) >> 16, 0, 255);
		o1[j] = (uint8_t)clampi((b + 32768) >> 16, 0, 255);
	}
}

#if UP_AVX2
/* lanczos_row, eight source pixels at a time where all their taps lie in
 * the row (x - 3 .. x + 10), one at a time elsewhere: the same integer
 * sums, so the same values. */
/* The two six-tap sums of eight pixels, p the row at the first one's
 * x - 3: *a over p[i..i+5] with taps t[0..5], *b over p[i+1..i+6] with the
 * taps reversed, lane i; *centre the pixels themselves (p[i+3]). */
TT_UP_AVX2 static inline void lanczos_taps8_avx2(const uint8_t *p, const int t[6], __m256i *a, __m256i *b,
						 __m256i *centre)
{
	const __m256i w0 = _mm256_set1_epi32(t[0]), w1 = _mm256_set1_epi32(t[1]), w2 = _mm256_set1_epi32(t[2]),
		      w3 = _mm256_set1_epi32(t[3]), w4 = _mm256_set1_epi32(t[4]), w5 = _mm256_set1_epi32(t[5]);
	__m256i v[7];
	for (int k = 0; k < 7; k++)
		v[k] = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p + k)));
	*a = _mm256_add_epi32(
		_mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(w0, v[0]), _mm256_mullo_epi32(w1, v[1])),
				 _mm256_add_epi32(_mm256_mullo_epi32(w2, v[2]), _mm256_mullo_epi32(w3, v[3]))),
		_mm256_add_epi32(_mm256_mullo_epi32(w4, v[4]), _mm256_mullo_epi32(w5, v[5])));
	*b = _mm256_add_epi32(
		_mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(w5, v[1]), _mm256_mullo_epi32(w4, v[2])),
				 _mm256_add_epi32(_mm256_mullo_epi32(w3, v[3]), _mm256_mullo_epi32(w2, v[4]))),
		_mm256_add_epi32(_mm256_mullo_epi32(w1, v[5]), _mm256_mullo_epi32(w0, v[6])));
	*centre = v[3];
}

TT_UP_AVX2 static void lanczos_row_avx2(const struct image_u8 *src, int sy, int x0, int x1, int32_t *out)
{
	const uint8_t *r = image_u8_row(src, clampi(sy, 0, src->height - 1));
	const int w = src->width;
	int x = x0;
	for (; x < x1 && x < 3; x++)
		lanczos_px(r, w, x, out + 2 * (x - x0));
	for (; x + 8 <= x1 && x + 11 <= w; x += 8) {
		__m256i a, b, centre;
		lanczos_taps8_avx2(r + x - 3, LZ, &a, &b, &centre);
		/* a0 b0 a1 b1 | a4 b4 a5 b5 and a2 b2 a3 b3 | a6 b6 a7 b7, their
		 * halves put in order. */
		const __m256i lo = _mm256_unpacklo_epi32(a, b), hi = _mm256_unpackhi_epi32(a, b);
		int32_t *o = out + 2 * (x - x0);
		_mm256_storeu_si256((__m256i *)(void *)o, _mm256_permute2x128_si256(lo, hi, 0x20));
		_mm256_storeu_si256((__m256i *)(void *)(o + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
	}
	for (; x < x1; x++)
		lanczos_px(r, w, x, out + 2 * (x - x0));
}

/* lanczos_cols, eight output pixels of each row at a time, the rest one
 * at a time: the same sums, shifts and clamps (the shifted sums lie
 * within +-500, so the saturating packs clamp as clampi does). */
TT_UP_AVX2 static void lanczos_cols_avx2(const int32_t *h0, const int32_t *h1, const int32_t *h2, const int32_t *h3,
					 const int32_t *h4, const int32_t *h5, const int32_t *h6, int n, uint8_t *o0,
					 uint8_t *o1)
{
	const __m256i w0 = _mm256_set1_epi32(LZ[0]), w1 = _mm256_set1_epi32(LZ[1]), w2 = _mm256_set1_epi32(LZ[2]),
		      w3 = _mm256_set1_epi32(LZ[3]), w4 = _mm256_set1_epi32(LZ[4]), w5 = _mm256_set1_epi32(LZ[5]);
	const __m256i half = _mm256_set1_epi32(32768), order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	int j = 0;
	for (; j + 8 <= n; j += 8) {
#define LD(h) _mm256_loadu_si256((const __m256i *)(const void *)((h) + j))
		const __m256i v0 = LD(h0), v1 = LD(h1), v2 = LD(h2), v3 = LD(h3), v4 = LD(h4), v5 = LD(h5), v6 = LD(h6);
#undef LD
		__m256i a = _mm256_add_epi32(
			_mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(w0, v0), _mm256_mullo_epi32(w1, v1)),
					 _mm256_add_epi32(_mm256_mullo_epi32(w2, v2), _mm256_mullo_epi32(w3, v3))),
			_mm256_add_epi32(_mm256_mullo_epi32(w4, v4), _mm256_mullo_epi32(w5, v5)));
		__m256i b = _mm256_add_epi32(
			_mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(w5, v1), _mm256_mullo_epi32(w4, v2)),
					 _mm256_add_epi32(_mm256_mullo_epi32(w3, v3), _mm256_mullo_epi32(w2, v4))),
			_mm256_add_epi32(_mm256_mullo_epi32(w1, v5), _mm256_mullo_epi32(w0, v6)));
		a = _mm256_srai_epi32(_mm256_add_epi32(a, half), 16);
		b = _mm256_srai_epi32(_mm256_add_epi32(b, half), 16);
		/* a0-3 b0-3 | a4-7 b4-7 as bytes (each half twice), then the
		 * four-byte groups a0-3 a4-7 b0-3 b4-7 in the low 16 bytes. */
		const __m256i t = _mm256_packs_epi32(a, b);
		const __m128i u = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_packus_epi16(t, t), order));
		_mm_storel_epi64((__m128i *)(void *)(o0 + j), u);
		_mm_storel_epi64((__m128i *)(void *)(o1 + j), _mm_unpackhi_epi64(u, u));
	}
	if (j < n)
		lanczos_cols(h0 + j, h1 + j, h2 + j, h3 + j, h4 + j, h5 + j, h6 + j, n - j, o0 + j, o1 + j);
}
#endif

int upsample2_lanczos_part(const struct image_u8 *src, int x0, int y0, int x1, int y1, struct image_u8 *dst,
			   int32_t *rows)
{
	if (x0 < 0 || y0 < 0 || x1 > src->width || y1 > src->height || x0 >= x1 || y0 >= y1 ||
	    dst->width != 2 * (x1 - x0) || dst->height != 2 * (y1 - y0))
		return ERR_RANGE;
	const int n = dst->width;
	const bool avx2 = use_avx2();
	/* Row k of the source enlarged along x lives in slot k mod 7 of rows:
	 * source rows y - 3 .. y + 3 make output rows 2 (y - y0) and the next. */
#define SLOT(k) (rows + (size_t)((((k) % UPSAMPLE2_LANCZOS_ROWS) + UPSAMPLE2_LANCZOS_ROWS) % UPSAMPLE2_LANCZOS_ROWS) * (size_t)n)
#if UP_AVX2
#define ROW(k) (avx2 ? lanczos_row_avx2 : lanczos_row)(src, k, x0, x1, SLOT(k))
#define COLS (avx2 ? lanczos_cols_avx2 : lanczos_cols)
#else
#define ROW(k) lanczos_row(src, k, x0, x1, SLOT(k))
#define COLS lanczos_cols
	(void)avx2;
#endif
	for (int k = y0 - 3; k < y0 + 3; k++)
		ROW(k);
	for (int y = y0; y < y1; y++) {
		ROW(y + 3);
		uint8_t *o0 = dst->data + (size_t)(2 * (y - y0)) * (size_t)dst->stride;
		COLS(SLOT(y - 3), SLOT(y - 2), SLOT(y - 1), SLOT(y), SLOT(y + 1), SLOT(y + 2), SLOT(y + 3), n, o0,
		     o0 + dst->stride);
	}
#undef COLS
#undef ROW
#undef SLOT
	return 0;
}

/* Lanczos-3 weights at d = -2.67 .. 2.33 (a sample a third of a pixel
 * before source pixel i, over pixels i - 3 .. i + 2), scaled to sum 256. */
static const int LZ3[6] = {3, -24, 98, 208, -37, 8};

/* Source pixels x0 .. x1 - 1 of row r (w pixels) enlarged three times
 * along x, scaled by 256, into out from value 3 (x - ox) on. */
static void lanczos3_px(const uint8_t *r, int w, int x0, int x1, int ox, int32_t *out)
{
	for (int x = x0; x < x1; x++) {
		int32_t a = 0, b = 0;
		for (int k = 0; k < 6; k++) {
			a += LZ3[k] * r[clampi(x - 3 + k, 0, w - 1)];
			b += LZ3[5 - k] * r[clampi(x - 2 + k, 0, w - 1)];
		}
		out[3 * (x - ox)] = a;
		out[3 * (x - ox) + 1] = 256 * r[x];
		out[3 * (x - ox) + 2] = b;
	}
}

/* Source row sy (clamped) of columns x0 .. x1 - 1 enlarged three times
 * along x, scaled by 256, into out (3 (x1 - x0) values). */
static void lanczos3_row(const struct image_u8 *src, int sy, int x0, int x1, int32_t *out)
{
	lanczos3_px(image_u8_row(src, clampi(sy, 0, src->height - 1)), src->width, x0, x1, x0, out);
}

/* Output rows o[0], o[1] and o[2] (n pixels) from the seven rows h[0] ..
 * h[6] enlarged along x: the first weighs h[0] .. h[5], the middle one
 * is h[3] itself, the last weighs h[1] .. h[6] mirrored. */
static void lanczos3_cols(const int32_t *const h[7], int n, uint8_t *const o[3])
{
	for (int j = 0; j < n; j++) {
		int32_t a = 0, b = 0;
		for (int k = 0; k < 6; k++) {
			a += LZ3[k] * h[k][j];
			b += LZ3[5 - k] * h[k + 1][j];
		}
		o[0][j] = (uint8_t)clampi((a + 32768) >> 16, 0, 255);
		o[1][j] = (uint8_t)clampi((h[3][j] + 128) >> 8, 0, 255);
		o[2][j] = (uint8_t)clampi((b + 32768) >> 16, 0, 255);
	}
}

#if UP_AVX2
/* lanczos3_row, eight source pixels at a time where all their taps lie
 * in the row (x - 3 .. x + 10), one at a time elsewhere: the same sums. */
TT_UP_AVX2 static void lanczos3_row_avx2(const struct image_u8 *src, int sy, int x0, int x1, int32_t *out)
{
	const uint8_t *r = image_u8_row(src, clampi(sy, 0, src->height - 1));
	const int w = src->width;
	int x = x0;
	if (x < x1 && x < 3) {
		lanczos3_px(r, w, x, x1 < 3 ? x1 : 3, x0, out);
		x = x1 < 3 ? x1 : 3;
	}
	/* Values 3i, 3i + 1, 3i + 2 of eight pixels i (a, m, b) in three
	 * vectors: each the pixels idx of a, m and b, blended by phase. */
	const __m256i idx0 = _mm256_setr_epi32(0, 0, 0, 1, 1, 1, 2, 2), idx1 = _mm256_setr_epi32(2, 3, 3, 3, 4, 4, 4, 5),
		      idx2 = _mm256_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7);
	for (; x + 8 <= x1 && x + 11 <= w; x += 8) {
		__m256i a, b, centre;
		lanczos_taps8_avx2(r + x - 3, LZ3, &a, &b, &centre);
		const __m256i m = _mm256_slli_epi32(centre, 8);
		int32_t *o = out + 3 * (x - x0);
#define PHASED(idx, mm, mb)                                                                                            \
	_mm256_blend_epi32(_mm256_blend_epi32(_mm256_permutevar8x32_epi32(a, idx), _mm256_permutevar8x32_epi32(m, idx), \
					      mm),                                                                      \
			   _mm256_permutevar8x32_epi32(b, idx), mb)
		_mm256_storeu_si256((__m256i *)(void *)o, PHASED(idx0, 0x92, 0x24));
		_mm256_storeu_si256((__m256i *)(void *)(o + 8), PHASED(idx1, 0x24, 0x49));
		_mm256_storeu_si256((__m256i *)(void *)(o + 16), PHASED(idx2, 0x49, 0x92));
#undef PHASED
	}
	if (x < x1)
		lanczos3_px(r, w, x, x1, x0, out);
}

/* lanczos3_cols, eight output pixels of each row at a time, the rest one
 * at a time: the same sums, shifts and clamps (all within +-600 once
 * shifted, so the saturating packs clamp as clampi does). */
TT_UP_AVX2 static void lanczos3_cols_avx2(const int32_t *const h[7], int n, uint8_t *const o[3])
{
	const __m256i w0 = _mm256_set1_epi32(LZ3[0]), w1 = _mm256_set1_epi32(LZ3[1]), w2 = _mm256_set1_epi32(LZ3[2]),
		      w3 = _mm256_set1_epi32(LZ3[3]), w4 = _mm256_set1_epi32(LZ3[4]), w5 = _mm256_set1_epi32(LZ3[5]);
	const __m256i half = _mm256_set1_epi32(32768), half8 = _mm256_set1_epi32(128),
		      order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	int j = 0;
	for (; j + 8 <= n; j += 8) {
		__m256i v[7];
		for (int k = 0; k < 7; k++)
			v[k] = _mm256_loadu_si256((const __m256i *)(const void *)(h[k] + j));
		__m256i a = _mm256_add_epi32(
			_mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(w0, v[0]), _mm256_mullo_epi32(w1, v[1])),
					 _mm256_add_epi32(_mm256_mullo_epi32(w2, v[2]), _mm256_mullo_epi32(w3, v[3]))),
			_mm256_add_epi32(_mm256_mullo_epi32(w4, v[4]), _mm256_mullo_epi32(w5, v[5])));
		__m256i b = _mm256_add_epi32(
			_mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(w5, v[1]), _mm256_mullo_epi32(w4, v[2])),
					 _mm256_add_epi32(_mm256_mullo_epi32(w3, v[3]), _mm256_mullo_epi32(w2, v[4]))),
			_mm256_add_epi32(_mm256_mullo_epi32(w1, v[5]), _mm256_mullo_epi32(w0, v[6])));
		a = _mm256_srai_epi32(_mm256_add_epi32(a, half), 16);
		b = _mm256_srai_epi32(_mm256_add_epi32(b, half), 16);
		const __m256i m = _mm256_srai_epi32(_mm256_add_epi32(v[3], half8), 8);
		/* Bytes a0-3 b0-3 m0-3 m0-3 | a4-7 b4-7 m4-7 m4-7, then the
		 * four-byte groups a0-3 a4-7 b0-3 b4-7 m0-3 m4-7 in order. */
		const __m256i u = _mm256_permutevar8x32_epi32(
			_mm256_packus_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(m, m)), order);
		const __m128i ab = _mm256_castsi256_si128(u);
		_mm_storel_epi64((__m128i *)(void *)(o[0] + j), ab);
		_mm_storel_epi64((__m128i *)(void *)(o[1] + j), _mm256_extracti128_si256(u, 1));
		_mm_storel_epi64((__m128i *)(void *)(o[2] + j), _mm_unpackhi_epi64(ab, ab));
	}
	if (j < n) {
		const int32_t *const t[7] = {h[0] + j, h[1] + j, h[2] + j, h[3] + j, h[4] + j, h[5] + j, h[6] + j};
		uint8_t *const q[3] = {o[0] + j, o[1] + j, o[2] + j};
		lanczos3_cols(t, n - j, q);
	}
}
#endif

int upsample3_lanczos_part(const struct image_u8 *src, int x0, int y0, int x1, int y1, struct image_u8 *dst,
			   int32_t *rows)
{
	if (x0 < 0 || y0 < 0 || x1 > src->width || y1 > src->height || x0 >= x1 || y0 >= y1 ||
	    dst->width != 3 * (x1 - x0) || dst->height != 3 * (y1 - y0))
		return ERR_RANGE;
	const int n = dst->width;
	const bool avx2 = use_avx2();
	/* As upsample2_lanczos_part: source rows y - 3 .. y + 3, enlarged
	 * along x, in slots k mod 7 make output rows 3 (y - y0) .. + 2. */
#define SLOT(k) (rows + (size_t)((((k) % UPSAMPLE2_LANCZOS_ROWS) + UPSAMPLE2_LANCZOS_ROWS) % UPSAMPLE2_LANCZOS_ROWS) * (size_t)n)
#if UP_AVX2
#define ROW(k) (avx2 ? lanczos3_row_avx2 : lanczos3_row)(src, k, x0, x1, SLOT(k))
#define COLS (avx2 ? lanczos3_cols_avx2 : lanczos3_cols)
#else
#define ROW(k) lanczos3_row(src, k, x0, x1, SLOT(k))
#define COLS lanczos3_cols
	(void)avx2;
#endif
	for (int k = y0 - 3; k < y0 + 3; k++)
		ROW(k);
	for (int y = y0; y < y1; y++) {
		ROW(y + 3);
		const int32_t *const h[7] = {SLOT(y - 3), SLOT(y - 2), SLOT(y - 1), SLOT(y),
					     SLOT(y + 1), SLOT(y + 2), SLOT(y + 3)};
		uint8_t *o0 = dst->data + (size_t)(3 * (y - y0)) * (size_t)dst->stride;
		uint8_t *const o[3] = {o0, o0 + dst->stride, o0 + 2 * (size_t)dst->stride};
		COLS(h, n, o);
	}
#undef COLS
#undef ROW
#undef SLOT
	return 0;
}

/* A Gaussian of 0.7 px, each axis's weights / 256 (its tails, under half
 * a 256th, dropped). */
static const int32_t SHARPEN[5] = {2, 53, 146, 53, 2};
#define SHARPEN_R 2

/* Row sy of src (clamped to it), its pixels x0 <= x < x1 blurred along x
 * by SHARPEN, neighbours clamped to src, into out. */
static void sharpen_row(const struct image_u8 *src, int sy, int x0, int x1, int32_t *out)
{
	const uint8_t *p = src->data + (size_t)clampi(sy, 0, src->height - 1) * (size_t)src->stride;
	const int w = src->width;
	for (int x = x0; x < x1; x++) {
		int32_t s;
		if (x >= SHARPEN_R && x + SHARPEN_R < w)
			s = SHARPEN[0] * (p[x - 2] + p[x + 2]) + SHARPEN[1] * (p[x - 1] + p[x + 1]) + SHARPEN[2] * p[x];
		else {
			s = 0;
			for (int i = -SHARPEN_R; i <= SHARPEN_R; i++)
				s += SHARPEN[i + SHARPEN_R] * p[clampi(x + i, 0, w - 1)];
		}
		out[x - x0] = s;
	}
}

int upsample_sharpen_part(const struct image_u8 *src, int x0, int y0, int x1, int y1, int halves,
			  struct image_u8 *dst, int32_t *rows)
{
	if (x0 < 0 || y0 < 0 || x1 > src->width || y1 > src->height || x1 <= x0 || y1 <= y0 ||
	    dst->width != x1 - x0 || dst->height != y1 - y0 || halves < 1 || halves > 4)
		return ERR_RANGE;
	const int w = x1 - x0, n = 2 * SHARPEN_R + 1;
	/* rows holds rows y - 2 .. y + 2 (clamped) blurred along x, row v in
	 * slot (v - y0 + n) mod n. */
	for (int v = y0 - SHARPEN_R; v < y0 + SHARPEN_R; v++)
		sharpen_row(src, v, x0, x1, rows + (size_t)((v - y0 + n) % n) * (size_t)w);
	for (int y = y0; y < y1; y++) {
		sharpen_row(src, y + SHARPEN_R, x0, x1, rows + (size_t)((y + SHARPEN_R - y0) % n) * (size_t)w);
		const int32_t *r0 = rows + (size_t)((y - 2 - y0 + n) % n) * (size_t)w;
		const int32_t *r1 = rows + (size_t)((y - 1 - y0 + n) % n) * (size_t)w;
		const int32_t *r2 = rows + (size_t)((y - y0) % n) * (size_t)w;
		const int32_t *r3 = rows + (size_t)((y + 1 - y0) % n) * (size_t)w;
		const int32_t *r4 = rows + (size_t)((y + 2 - y0) % n) * (size_t)w;
		const uint8_t *p = src->data + (size_t)y * (size_t)src->stride + x0;
		uint8_t *o = dst->data + (size_t)(y - y0) * (size_t)dst->stride;
		for (int x = 0; x < w; x++) {
			const int32_t s = SHARPEN[0] * (r0[x] + r4[x]) + SHARPEN[1] * (r1[x] + r3[x]) + SHARPEN[2] * r2[x];
			const int32_t d = (2 + halves) * p[x] - halves * ((s + 32768) >> 16) + 1;
			o[x] = (uint8_t)(d <= 0 ? 0 : d >= 512 ? 255 : d >> 1);
		}
	}
	return 0;
}

/* Lanczos-3 weights, L(d) = sinc(d) sinc(d / 3), of the six source pixels
 * i - 2 .. i + 3 for a place p / 64 past pixel i (d = p / 64 + 2 .. p / 64
 * - 3), rounded to sum 256 (the rounding's rest on the largest). Row 48 is
 * LZ's (a place a quarter pixel before i + 1). */
static const int16_t LZ64[64][6] = {
	{0, 0, 256, 0, 0, 0},
	{1, -3, 256, 3, -1, 0},
	{2, -6, 255, 7, -2, 0},
	{2, -9, 255, 11, -3, 0},
	{3, -12, 255, 14, -4, 0},
	{4, -15, 254, 18, -5, 0},
	{4, -17, 253, 22, -6, 0},
	{5, -20, 251, 27, -7, 0},
	{5, -22, 250, 31, -8, 0},
	{6, -24, 247, 35, -9, 1},
	{6, -26, 245, 40, -10, 1},
	{6, -27, 242, 45, -11, 1},
	{7, -29, 240, 49, -12, 1},
	{7, -31, 239, 54, -14, 1},
	{7, -32, 236, 59, -15, 1},
	{8, -33, 231, 64, -16, 2},
	{8, -34, 228, 69, -17, 2},
	{8, -35, 225, 75, -19, 2},
	{8, -36, 222, 80, -20, 2},
	{8, -36, 217, 85, -21, 3},
	{8, -37, 213, 91, -22, 3},
	{8, -37, 210, 96, -24, 3},
	{8, -38, 206, 102, -25, 3},
	{8, -38, 201, 107, -26, 4},
	{8, -38, 196, 113, -27, 4},
	{8, -38, 192, 118, -28, 4},
	{8, -38, 186, 124, -29, 5},
	{7, -37, 182, 129, -30, 5},
	{7, -37, 177, 135, -31, 5},
	{7, -37, 173, 140, -32, 5},
	{7, -36, 166, 146, -33, 6},
	{7, -35, 161, 151, -34, 6},
	{6, -35, 157, 157, -35, 6},
	{6, -34, 151, 161, -35, 7},
	{6, -33, 146, 166, -36, 7},
	{5, -32, 140, 173, -37, 7},
	{5, -31, 135, 177, -37, 7},
	{5, -30, 129, 182, -37, 7},
	{5, -29, 124, 186, -38, 8},
	{4, -28, 118, 192, -38, 8},
	{4, -27, 113, 196, -38, 8},
	{4, -26, 107, 201, -38, 8},
	{3, -25, 102, 206, -38, 8},
	{3, -24, 96, 210, -37, 8},
	{3, -22, 91, 213, -37, 8},
	{3, -21, 85, 217, -36, 8},
	{2, -20, 80, 222, -36, 8},
	{2, -19, 75, 225, -35, 8},
	{2, -17, 69, 228, -34, 8},
	{2, -16, 64, 231, -33, 8},
	{1, -15, 59, 236, -32, 7},
	{1, -14, 54, 239, -31, 7},
	{1, -12, 49, 240, -29, 7},
	{1, -11, 45, 242, -27, 6},
	{1, -10, 40, 245, -26, 6},
	{1, -9, 35, 247, -24, 6},
	{0, -8, 31, 250, -22, 5},
	{0, -7, 27, 251, -20, 5},
	{0, -6, 22, 253, -17, 4},
	{0, -5, 18, 254, -15, 4},
	{0, -4, 14, 255, -12, 3},
	{0, -3, 11, 255, -9, 2},
	{0, -2, 7, 255, -6, 2},
	{0, -1, 3, 256, -3, 1}
};

int upsample_affine_lanczos(const struct image_u8 *src, const float m[6], struct image_u8 *dst)
{
	if (dst->width < 1 || dst->height < 1 || src->width < 1 || src->height < 1)
		return ERR_RANGE;
	for (int k = 0; k < 6; k++)
		if (!(m[k] > -1e6f && m[k] < 1e6f))
			return ERR_RANGE;
	const int w = src->width, h = src->height;
	for (int j = 0; j < dst->height; j++) {
		uint8_t *o = image_u8_row(dst, j);
		for (int i = 0; i < dst->width; i++) {
			/* The place in 1/64 px, clamped well outside the frame
			 * (its taps clamp to the edge anyway). */
			const float sx = m[0] * (float)i + m[1] * (float)j + m[2];
			const float sy = m[3] * (float)i + m[4] * (float)j + m[5];
			const int qx = (int)floorf(64.0f * fminf(fmaxf(sx, -8.0f), (float)w + 8.0f) + 0.5f);
			const int qy = (int)floorf(64.0f * fminf(fmaxf(sy, -8.0f), (float)h + 8.0f) + 0.5f);
			const int ix = qx >> 6, iy = qy >> 6;
			const int16_t *wx = LZ64[qx & 63], *wy = LZ64[qy & 63];
			int32_t v = 0;
			if (ix >= 2 && ix + 3 < w && iy >= 2 && iy + 3 < h) {
				/* Inside: no clamping (most of a place). */
				const uint8_t *r = image_u8_row(src, iy - 2) + ix - 2;
				for (int b = 0; b < 6; b++, r += src->stride)
					v += wy[b] * (wx[0] * r[0] + wx[1] * r[1] + wx[2] * r[2] + wx[3] * r[3] +
						      wx[4] * r[4] + wx[5] * r[5]);
			} else {
				for (int b = 0; b < 6; b++) {
					const uint8_t *r = image_u8_row(src, clampi(iy - 2 + b, 0, h - 1));
					int32_t s = 0;
					for (int a = 0; a < 6; a++)
						s += wx[a] * r[clampi(ix - 2 + a, 0, w - 1)];
					v += wy[b] * s;
				}
			}
			o[i] = (uint8_t)clampi((v + 32768) >> 16, 0, 255);
		}
	}
	return 0;
}
