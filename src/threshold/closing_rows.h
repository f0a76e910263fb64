/*
 * closing_rows.h - closing.c's row loops, written once for two vector
 * widths; private to closing.c, which includes it once with SSE2 (16 bytes,
 * every x86-64) and, on x86-64 with GCC or clang, once with AVX2 (32 bytes,
 * chosen at run time). AVX2's unpacks and packs work within 128-bit halves,
 * so each half of a 32-byte step does what one 16-byte step does, and the
 * same source gives the same bits at either width. Before each inclusion
 * closing.c defines CR_W, the width in bytes (16 or 32), which picks
 *   CR_SFX   the functions' suffix (sse2, avx2)
 *   CR_ATTR  their attribute (AVX2: its target; SSE2: none)
 *   CR_PFX   the intrinsics' prefix (_mm, _mm256)
 *   CR_SI    the whole-register suffix (si128, si256)
 *   CR_V     the vector type
 * all undefined at the end. Each loop starts at pixel x (its first
 * argument), runs while a whole vector fits and returns where it stopped:
 * the narrower copy and the plain loop in closing.c finish the row.
 */

#if CR_W == 32
#define CR_SFX avx2
#define CR_ATTR __attribute__((target("avx2")))
#define CR_PFX _mm256
#define CR_SI si256
#define CR_V __m256i
#else
#define CR_SFX sse2
#define CR_ATTR
#define CR_PFX _mm
#define CR_SI si128
#define CR_V __m128i
#endif

#define CR_CAT_(a, b) a##_##b
#define CR_CAT(a, b) CR_CAT_(a, b)
#define CR_FN(f) CR_CAT(f, CR_SFX)
#define CR(op) CR_CAT(CR_PFX, op)
#define CR_LD(p) CR(CR_CAT(loadu, CR_SI))((const CR_V *)(const void *)(p))
#define CR_ST(p, v) CR(CR_CAT(storeu, CR_SI))((CR_V *)(void *)(p), v)
#define CR_AND(a, b) CR(CR_CAT(and, CR_SI))(a, b)
#define CR_ANDNOT(a, b) CR(CR_CAT(andnot, CR_SI))(a, b)
#define CR_OR(a, b) CR(CR_CAT(or, CR_SI))(a, b)

/* o[x] = max (or min) of a[x] and b[x]. */
CR_ATTR static int CR_FN(rows_pick)(int x, bool max, uint8_t *o, const uint8_t *a, const uint8_t *b, int n)
{
	for (; x + CR_W <= n; x += CR_W) {
		const CR_V va = CR_LD(a + x), vb = CR_LD(b + x);
		CR_ST(o + x, max ? CR(max_epu8)(va, vb) : CR(min_epu8)(va, vb));
	}
	return x;
}

/* o's bits = 100 v > pct bg and bg >= gate (o zeroed by the caller): the
 * products fit a signed 16-bit lane (at most 25500). */
CR_ATTR static int CR_FN(threshold_row)(int x, const uint8_t *v, const uint8_t *bg, int n, int pct, int gate,
					uint64_t *o)
{
	const CR_V zero = CR(CR_CAT(setzero, CR_SI))(), k100 = CR(set1_epi16)(100), kp = CR(set1_epi16)((short)pct);
	const CR_V kg = CR(set1_epi8)((char)gate);
	for (; x + CR_W <= n; x += CR_W) {
		const CR_V vv = CR_LD(v + x), vb = CR_LD(bg + x);
		const CR_V lo = CR(cmpgt_epi16)(CR(mullo_epi16)(CR(unpacklo_epi8)(vv, zero), k100),
						CR(mullo_epi16)(CR(unpacklo_epi8)(vb, zero), kp));
		const CR_V hi = CR(cmpgt_epi16)(CR(mullo_epi16)(CR(unpackhi_epi8)(vv, zero), k100),
						CR(mullo_epi16)(CR(unpackhi_epi8)(vb, zero), kp));
		const CR_V lit = CR(cmpeq_epi8)(CR(max_epu8)(vb, kg), vb);
		const uint32_t m = (uint32_t)CR(movemask_epi8)(CR_AND(CR(packs_epi16)(lo, hi), lit));
		o[x >> 6] |= (uint64_t)m << (x & 63);
	}
	return x;
}

/* a x b for 16-bit lanes of at most 319 each, as two vectors of 32-bit
 * products: the low four lanes of each 128-bit half returned, the high
 * four in *p1. */
CR_ATTR static inline CR_V CR_FN(mul32)(CR_V a, CR_V b, CR_V *p1)
{
	const CR_V l = CR(mullo_epi16)(a, b), h = CR(mulhi_epu16)(a, b);
	*p1 = CR(unpackhi_epi16)(l, h);
	return CR(unpacklo_epi16)(l, h);
}

/* closing_ratio()'s rule on 16-bit lanes of v, lo, hi: all ones where
 * white. */
CR_ATTR static inline CR_V CR_FN(ratio_lanes)(CR_V v, CR_V lo, CR_V hi, CR_V k)
{
	CR_V a1, b1;
	const CR_V a = CR(add_epi16)(v, k);
	const CR_V a0 = CR_FN(mul32)(a, a, &a1);
	const CR_V b0 = CR_FN(mul32)(CR(add_epi16)(lo, k), CR(add_epi16)(hi, k), &b1);
	return CR(packs_epi32)(CR(cmpgt_epi32)(a0, b0), CR(cmpgt_epi32)(a1, b1));
}

/* o's bits by closing_ratio()'s rule (o zeroed by the caller): the grey
 * plus offset fits a 16-bit lane and the products 32 bits. */
CR_ATTR static int CR_FN(ratio_row)(int x, const uint8_t *v, const uint8_t *lo, const uint8_t *hi, int n, int offset,
				    int gate, uint64_t *o)
{
	const CR_V zero = CR(CR_CAT(setzero, CR_SI))(), k = CR(set1_epi16)((short)offset);
	const CR_V kg = CR(set1_epi8)((char)gate), k255 = CR(set1_epi16)(255);
	for (; x + CR_W <= n; x += CR_W) {
		const CR_V vv = CR_LD(v + x), vl = CR_LD(lo + x), vh = CR_LD(hi + x);
		const CR_V v0 = CR(unpacklo_epi8)(vv, zero), v1 = CR(unpackhi_epi8)(vv, zero);
		const CR_V l0 = CR(unpacklo_epi8)(vl, zero), l1 = CR(unpackhi_epi8)(vl, zero);
		const CR_V h0 = CR(unpacklo_epi8)(vh, zero), h1 = CR(unpackhi_epi8)(vh, zero);
		const CR_V ratio =
			CR(packs_epi16)(CR_FN(ratio_lanes)(v0, l0, h0, k), CR_FN(ratio_lanes)(v1, l1, h1, k));
		/* the flat-area rule: lo + hi >= 256 and v > 0 */
		const CR_V bright = CR(packs_epi16)(CR(cmpgt_epi16)(CR(add_epi16)(l0, h0), k255),
						    CR(cmpgt_epi16)(CR(add_epi16)(l1, h1), k255));
		const CR_V flat_white = CR_ANDNOT(CR(cmpeq_epi8)(vv, zero), bright);
		const CR_V d = CR(subs_epu8)(vh, vl), contrast = CR(cmpeq_epi8)(CR(max_epu8)(d, kg), d);
		const CR_V white = CR_OR(CR_AND(contrast, ratio), CR_ANDNOT(contrast, flat_white));
		o[x >> 6] |= (uint64_t)(uint32_t)CR(movemask_epi8)(white) << (x & 63);
	}
	return x;
}

#undef CR_CAT_
#undef CR_CAT
#undef CR_FN
#undef CR
#undef CR_LD
#undef CR_ST
#undef CR_AND
#undef CR_ANDNOT
#undef CR_OR
#undef CR_SFX
#undef CR_ATTR
#undef CR_PFX
#undef CR_SI
#undef CR_V
#undef CR_W
