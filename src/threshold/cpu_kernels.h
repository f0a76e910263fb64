/*
 * cpu_kernels.h - the CPU threshold's frame kernels, written once and
 * compiled once per instruction set; private to cpu.c, which includes it
 * (no include guard, on purpose) with KP set to a simd.h prefix (sc, sse2,
 * avx2) and KFN to that set's function attributes. Every function here is
 * named NAME_KP (KN) and uses only the KP_ vector operations (V), so each
 * copy gives the same bits. struct threshold_cpu is cpu.c's.
 *
 * Reads of the caller's image rows never pass their width: a last partial
 * vector is copied into c->tail first. Workspace rows have SLACK bytes past
 * their use, so whole vectors may run over there.
 */

#define KCAT2(a, b) a##b
#define KCAT(a, b) KCAT2(a, b)
#define KN(n) KCAT(n##_, KP)
#define V(op) KCAT(KP, _##op)

/* dmin = min(amin, b), dmax = max(amax, b) over n bytes; b is an image row. */
KFN static void KN(rows_acc)(struct threshold_cpu *c, uint8_t *dmin, uint8_t *dmax, const uint8_t *amin,
                             const uint8_t *amax, const uint8_t *b, int n)
{
	const int vb = V(VB);
	int x = 0;
#pragma GCC unroll 2
	for (; x + vb <= n; x += vb) {
		V(u8) v = V(ld)(b + x);
		V(st)(dmin + x, V(min)(V(ld)(amin + x), v));
		V(st)(dmax + x, V(max)(V(ld)(amax + x), v));
	}
	if (x < n) {
		memcpy(c->tail, b + x, (size_t)(n - x));
		V(u8) v = V(ld)(c->tail);
		V(st)(dmin + x, V(min)(V(ld)(amin + x), v));
		V(st)(dmax + x, V(max)(V(ld)(amax + x), v));
	}
}

/* dmin = min(amin, bmin), dmax = max(amax, bmax) over n workspace bytes. */
KFN static void KN(rows2)(uint8_t *dmin, uint8_t *dmax, const uint8_t *amin, const uint8_t *bmin,
                          const uint8_t *amax, const uint8_t *bmax, int n)
{
	const int vb = V(VB);
#pragma GCC unroll 2
	for (int x = 0; x < n; x += vb) {
		V(st)(dmin + x, V(min)(V(ld)(amin + x), V(ld)(bmin + x)));
		V(st)(dmax + x, V(max)(V(ld)(amax + x), V(ld)(bmax + x)));
	}
}

/* Stores the first n (<= VB) lanes of r at o: whole when they fit, else via c->tail. */
KFN static inline void KN(store_part)(struct threshold_cpu *c, uint8_t *o, V(u8) r, int n)
{
	if (n >= V(VB)) {
		V(st)(o, r);
	} else {
		V(st)(c->tail, r);
		memcpy(o, c->tail, (size_t)n);
	}
}

/*
 * One row of the local-mean rule into c->m_white (0xff white, 0 black): the
 * box of radius m around each pixel, cropped at the borders, n pixels of sum
 * S; white iff 100 * v * n > (100 - bias) * S and S >= mean_min * n. Column
 * sums (16 bits: at most 127 rows of 255) are carried from row to row, so
 * rows must come in order from 0; a row of prefix sums gives each window.
 */
KFN static void KN(col_step)(uint16_t *restrict col, const uint8_t *restrict row, int w, int sign)
{
	int x = 0;
	/* whole blocks of 32: a fixed trip count and restrict let -O2 vectorise */
	if (sign > 0) {
		for (; x + 32 <= w; x += 32)
			for (int j = 0; j < 32; j++)
				col[x + j] = (uint16_t)(col[x + j] + row[x + j]);
		for (; x < w; x++)
			col[x] = (uint16_t)(col[x] + row[x]);
	} else {
		for (; x + 32 <= w; x += 32)
			for (int j = 0; j < 32; j++)
				col[x + j] = (uint16_t)(col[x + j] - row[x + j]);
		for (; x < w; x++)
			col[x] = (uint16_t)(col[x] - row[x]);
	}
}

/* The windows that lie wholly inside the row, x in [a, b): n is the same for all. */
KFN static void KN(mean_inner)(uint8_t *restrict mw, const uint8_t *restrict v, const int32_t *restrict hi,
                               const int32_t *restrict lo, int32_t vn, int32_t k, int32_t mn, int a, int b)
{
	int x = a;
	for (; x + 32 <= b; x += 32)
		for (int j = 0; j < 32; j++) {
			int32_t s = hi[x + j] - lo[x + j];
			mw[x + j] = (uint8_t)(-(int32_t)((vn * v[x + j] > k * s) & (s >= mn)));
		}
	for (; x < b; x++) {
		int32_t s = hi[x] - lo[x];
		mw[x] = (vn * v[x] > k * s && s >= mn) ? 0xff : 0;
	}
}

KFN static void KN(mean_row)(struct threshold_cpu *c, const struct image_u8 *in, int y, int m, int bias,
                             int mean_min)
{
	int w = in->width, h = in->height;
	uint16_t *col = c->m_col;
	int32_t *pre = c->m_pre;
	if (y == 0) {
		memset(col, 0, (size_t)w * sizeof *col);
		for (int j = 0; j <= m && j < h; j++)
			KN(col_step)(col, image_u8_row(in, j), w, 1);
	} else {
		if (y + m < h)
			KN(col_step)(col, image_u8_row(in, y + m), w, 1);
		if (y - m - 1 >= 0)
			KN(col_step)(col, image_u8_row(in, y - m - 1), w, -1);
	}
	V(prefix)(pre, col, w);
	int ny = (y + m < h ? y + m : h - 1) - (y - m > 0 ? y - m : 0) + 1;
	const uint8_t *restrict v = image_u8_row(in, y);
	const int32_t k = 100 - bias;
	uint8_t *restrict mw = c->m_white;
	int a = m < w ? m : w, b = w - m > a ? w - m : a;
	for (int x = 0; x < a; x++) {
		int x1 = x + m + 1 < w ? x + m + 1 : w;
		int32_t s = pre[x1] - pre[0], n = x1 * ny;
		mw[x] = (100 * v[x] * n > k * s && s >= mean_min * n) ? 0xff : 0;
	}
	{
		const int32_t n = (2 * m + 1) * ny;
		KN(mean_inner)(mw, v, pre + m + 1, pre - m, 100 * n, k, mean_min * n, a, b);
	}
	for (int x = b; x < w; x++) {
		int x0 = x - m > 0 ? x - m : 0, x1 = x + m + 1 < w ? x + m + 1 : w;
		int32_t s = pre[x1] - pre[x0], n = (x1 - x0) * ny;
		mw[x] = (100 * v[x] * n > k * s && s >= mean_min * n) ? 0xff : 0;
	}
}

/* c->m_white (w verdicts, 0xff white) into one row of mask words. */
KFN static void KN(pack_white)(struct threshold_cpu *c, int w, uint64_t *mrow)
{
	for (int x0 = 0; x0 < w; x0 += 64) {
		uint64_t white = 0;
		for (int j = 0; j < 64 && x0 + j < w; j += V(VB))
			white |= (uint64_t)V(bits)(V(ld)(c->m_white + x0 + j)) << j;
		if (w - x0 < 64)
			white &= ((uint64_t)1 << (w - x0)) - 1;
		mrow[x0 >> 6] = white;
	}
}

/* The local mean alone (THRESHOLD_MEAN): c->m_white packed or copied out. */
KFN static void KN(mean)(struct threshold_cpu *c, const struct image_u8 *in, int m, int bias, int mean_min,
                         struct image_u8 *img, struct bitmask *mask)
{
	int w = in->width, h = in->height;
	for (int y = 0; y < h; y++) {
		KN(mean_row)(c, in, y, m, bias, mean_min);
		if (img) {
			memcpy(image_u8_row(img, y), c->m_white, (size_t)w);
			continue;
		}
		KN(pack_white)(c, w, mask->bits + (size_t)y * (size_t)mask->stride_words);
	}
}

/*
 * Sauvola (THRESHOLD_SAUVOLA), one row into c->m_white: the box of radius m
 * as the local mean's, with column sums of the values (16 bits) and of
 * their squares (32 bits: at most 127 rows of 65025) carried from row to
 * row, and rows of prefix sums. The squares' prefix wraps modulo 2^32, but
 * a window's difference is exact: the window's true sum is below 2^31. The
 * rule (threshold.h, threshold_sauvola_cpu) in 64-bit integers; the one
 * square root is exact (see there).
 */
KFN static void KN(col_step_sq)(uint32_t *restrict col, const uint8_t *restrict row, int w, int sign)
{
	int x = 0;
	/* whole blocks of 32, as col_step's */
	if (sign > 0) {
		for (; x + 32 <= w; x += 32)
			for (int j = 0; j < 32; j++)
				col[x + j] += (uint32_t)row[x + j] * row[x + j];
		for (; x < w; x++)
			col[x] += (uint32_t)row[x] * row[x];
	} else {
		for (; x + 32 <= w; x += 32)
			for (int j = 0; j < 32; j++)
				col[x + j] -= (uint32_t)row[x + j] * row[x + j];
		for (; x < w; x++)
			col[x] -= (uint32_t)row[x] * row[x];
	}
}

KFN static void KN(sauvola_row)(struct threshold_cpu *c, const struct image_u8 *in, int y, int m, int k,
				int range, int mean_min)
{
	int w = in->width, h = in->height;
	uint16_t *col = c->m_col;
	uint32_t *qcol = c->q_col, *qpre = c->q_pre;
	int32_t *pre = c->m_pre;
	if (y == 0) {
		memset(col, 0, (size_t)w * sizeof *col);
		memset(qcol, 0, (size_t)w * sizeof *qcol);
		for (int j = 0; j <= m && j < h; j++) {
			KN(col_step)(col, image_u8_row(in, j), w, 1);
			KN(col_step_sq)(qcol, image_u8_row(in, j), w, 1);
		}
	} else {
		if (y + m < h) {
			KN(col_step)(col, image_u8_row(in, y + m), w, 1);
			KN(col_step_sq)(qcol, image_u8_row(in, y + m), w, 1);
		}
		if (y - m - 1 >= 0) {
			KN(col_step)(col, image_u8_row(in, y - m - 1), w, -1);
			KN(col_step_sq)(qcol, image_u8_row(in, y - m - 1), w, -1);
		}
	}
	V(prefix)(pre, col, w);
	V(qprefix)(qpre, qcol, w);
	const int ny = (y + m < h ? y + m : h - 1) - (y - m > 0 ? y - m : 0) + 1;
	const uint8_t *restrict v = image_u8_row(in, y);
	uint8_t *restrict mw = c->m_white;
	const int64_t kk = k, kr = 100 - k;
	/* the windows wholly inside the row, x in [a, e): SD at a time in doubles */
	int a = m < w ? m : w, e = w - m > a ? w - m : a, x = a;
	{
		const double nn = (double)((2 * m + 1) * ny);
		const double p[SAUV_P] = {nn, nn * range, (double)(100 - k), (double)k, nn * mean_min, 100.0 * nn};
		for (; x + V(SD) <= e; x += V(SD))
			V(sauv)(pre + x + m + 1, pre + x - m, qpre + x + m + 1, qpre + x - m, v + x, p, mw + x);
	}
	/* the border windows and the inner ones left over, one at a time in 64-bit integers */
	for (int i = 0; i < w; i++) {
		if (i == a)
			i = x;
		int x0 = i - m > 0 ? i - m : 0, x1 = i + m + 1 < w ? i + m + 1 : w;
		int64_t n = (int64_t)(x1 - x0) * ny, s = pre[x1] - pre[x0];
		int64_t q = (uint32_t)(qpre[x1] - qpre[x0]);
		int64_t b = 100 * n * v[i] - kr * s;
		bool white = false;
		if (b > 0 && s >= mean_min * n) {
			int64_t d = (int64_t)sqrt((double)(n * q - s * s));
			white = n * range * b > kk * s * d;
		}
		mw[i] = white ? 0xff : 0;
	}
}

/* Sauvola alone: c->m_white packed or copied out, as the local mean's. */
KFN static void KN(sauvola)(struct threshold_cpu *c, const struct image_u8 *in, int m, int k, int range,
			    int mean_min, struct image_u8 *img, struct bitmask *mask)
{
	int w = in->width, h = in->height;
	for (int y = 0; y < h; y++) {
		KN(sauvola_row)(c, in, y, m, k, range, mean_min);
		if (img) {
			memcpy(image_u8_row(img, y), c->m_white, (size_t)w);
			continue;
		}
		KN(pack_white)(c, w, mask->bits + (size_t)y * (size_t)mask->stride_words);
	}
}

/* The window's min and max at x over p_min and p_max, rows of vertical
 * extremes: with direct 3 or 5, straight from that many bytes (no doubling
 * passes before; fewer instructions for r = 1 and 2 than two passes through
 * the row); else two runs of the doubled rows, at x and x + d. Inlined with
 * a constant direct into the whole-word loop, so that it holds no test. */
KFN static inline __attribute__((always_inline)) void KN(window_at)(const uint8_t *pmin, const uint8_t *pmax, int x,
								    int direct, int d, V(u8) *lo, V(u8) *hi)
{
	if (direct) {
		*lo = V(ld)(pmin + x);
		*hi = V(ld)(pmax + x);
#pragma GCC unroll 4
		for (int j = 1; j < direct; j++) {
			*lo = V(min)(*lo, V(ld)(pmin + x + j));
			*hi = V(max)(*hi, V(ld)(pmax + x + j));
		}
		return;
	}
	*lo = V(min)(V(ld)(pmin + x), V(ld)(pmin + x + d));
	*hi = V(max)(V(ld)(pmax + x), V(ld)(pmax + x + d));
}

/* Whole 64-pixel words of plain Bernsen into the mask: no tail, no mode to
 * test, a trip count the compiler knows (half the kernel's instructions
 * were the general loop's bookkeeping). Returns where the words end. */
KFN static inline __attribute__((always_inline)) int KN(emit_words)(const uint8_t *pmin, const uint8_t *pmax,
								    const uint8_t *v, int w, int direct, int d,
								    V(u8) g, uint64_t *mask_row)
{
	const int vb = V(VB);
	int x0 = 0;
	for (; x0 + 64 <= w; x0 += 64) {
		uint64_t black = 0;
#pragma GCC unroll 4
		for (int j = 0; j < 64; j += vb) {
			const int x = x0 + j;
			V(u8) lo, hi;
			KN(window_at)(pmin, pmax, x, direct, d, &lo, &hi);
			black |= (uint64_t)V(bits)(V(black)(lo, hi, V(ld)(v + x), g)) << j;
		}
		mask_row[x0 >> 6] = ~black;
	}
	return x0;
}

/*
 * The horizontal window of one row of vertical min/max (at p_min/p_max + r),
 * fused with the §1 rule and the packing. Log-step doubling in place: after
 * step j each byte holds the min (max) of the 2^j bytes from it onwards;
 * then a window of k = 2r+1 is two overlapping runs of the largest 2^j <= k,
 * at x and x + k - 2^j. That is ceil(log2 k) + 1 vector min and max a byte
 * (4 for r = 6, 7 for r = 32), all whole-vector loads at byte offsets.
 * Windows of 3 and 5 are read straight from their bytes instead (window_at).
 */
KFN static void KN(hpass_emit)(struct threshold_cpu *c, int w, int r, const uint8_t *v, int gate, int mode,
                               uint8_t *img_row, uint64_t *mask_row)
{
	const int vb = V(VB);
	int k = 2 * r + 1, len = w + 2 * r, s = 1;
	uint8_t *pmin = c->p_min, *pmax = c->p_max;
	memset(pmin, pmin[r], (size_t)r);
	memset(pmax, pmax[r], (size_t)r);
	memset(pmin + r + w, pmin[r + w - 1], (size_t)r);
	memset(pmax + r + w, pmax[r + w - 1], (size_t)r);
	const int direct = k == 3 || k == 5 ? k : 0;
	/* two doublings in one pass where both are due: runs of 4s from the
	 * runs of s at x, x + s, x + 2s and x + 3s (the same operations, half
	 * the passes through the row) */
	for (; !direct && 4 * s <= k; s *= 4) {
		len -= 3 * s;
#pragma GCC unroll 2
		for (int x = 0; x < len; x += vb) {
			V(st)(pmin + x, V(min)(V(min)(V(ld)(pmin + x), V(ld)(pmin + x + s)),
					       V(min)(V(ld)(pmin + x + 2 * s), V(ld)(pmin + x + 3 * s))));
			V(st)(pmax + x, V(max)(V(max)(V(ld)(pmax + x), V(ld)(pmax + x + s)),
					       V(max)(V(ld)(pmax + x + 2 * s), V(ld)(pmax + x + 3 * s))));
		}
	}
	for (; !direct && 2 * s <= k; s *= 2) {
		len -= s;
#pragma GCC unroll 2
		for (int x = 0; x < len; x += vb) {
			V(st)(pmin + x, V(min)(V(ld)(pmin + x), V(ld)(pmin + x + s)));
			V(st)(pmax + x, V(max)(V(ld)(pmax + x), V(ld)(pmax + x + s)));
		}
	}
	int d = k - s;
	const V(u8) g = V(set1)(gate);
	int x0 = 0;
	if (mask_row && mode == THRESHOLD_BERNSEN)
		x0 = direct == 5   ? KN(emit_words)(pmin, pmax, v, w, 5, d, g, mask_row)
		     : direct == 3 ? KN(emit_words)(pmin, pmax, v, w, 3, d, g, mask_row)
				   : KN(emit_words)(pmin, pmax, v, w, 0, d, g, mask_row);
	for (; x0 < w; x0 += 64) {
		uint64_t black = 0;
		for (int j = 0; j < 64 && x0 + j < w; j += vb) {
			int x = x0 + j;
			const uint8_t *vp = v + x;
			if (x + vb > w) {
				memcpy(c->tail + 64, vp, (size_t)(w - x));
				vp = c->tail + 64;
			}
			V(u8) lo, hi;
			KN(window_at)(pmin, pmax, x, direct, d, &lo, &hi);
			V(u8) b = V(black)(lo, hi, V(ld)(vp), g);
			if (mode != THRESHOLD_BERNSEN) {
				V(u8) st = V(steep)(lo, hi, g), mb = V(inv)(V(ld)(c->m_white + x));
				if (mode == THRESHOLD_GATED)
					b = V(or)(V(and)(st, mb), V(and)(V(inv)(st), b));
				else if (mode == THRESHOLD_EITHER)
					b = V(and)(b, V(or)(V(inv)(st), mb));
				else
					b = V(or)(b, V(and)(st, mb));
			}
			if (mask_row)
				black |= (uint64_t)V(bits)(b) << j;
			else
				KN(store_part)(c, img_row + x, V(inv)(b), w - x);
		}
		if (mask_row) {
			uint64_t white = ~black;
			if (w - x0 < 64)
				white &= ((uint64_t)1 << (w - x0)) - 1;
			mask_row[x0 >> 6] = white;
		}
	}
}

/* Row y of the result from its vertical min and max at p_min/p_max + r. */
KFN static inline void KN(bernsen_row)(struct threshold_cpu *c, const struct image_u8 *in, int y, int r, int gate,
				       int mode, int m, int bias, struct image_u8 *img, struct bitmask *mask)
{
	if (mode != THRESHOLD_BERNSEN)
		KN(mean_row)(c, in, y, m, bias, 0);
	KN(hpass_emit)
	(c, in->width, r, image_u8_row(in, y), gate, mode, img ? image_u8_row(img, y) : NULL,
	 mask ? mask->bits + (size_t)y * (size_t)mask->stride_words : NULL);
}

/* Row y's vertical min and max (at p_min/p_max + r) straight from its k = 3
 * or 5 rows (edge-replicated): k - 1 min and max a pixel, fewer operations
 * than van Herk's blocks below for windows this short. */
KFN static inline __attribute__((always_inline)) void KN(rows_direct)(struct threshold_cpu *c,
								      const struct image_u8 *in, int y, int k)
{
	const int vb = V(VB), w = in->width, h = in->height, r = k / 2;
	const uint8_t *p[5];
	uint8_t *dmin = c->p_min + r, *dmax = c->p_max + r;
	for (int j = 0; j < k; j++)
		p[j] = image_u8_row(in, clampi(y + j - r, 0, h - 1));
	int x = 0;
	for (; x + vb <= w; x += vb) {
		V(u8) lo = V(ld)(p[0] + x), hi = lo;
#pragma GCC unroll 4
		for (int j = 1; j < k; j++) {
			const V(u8) b = V(ld)(p[j] + x);
			lo = V(min)(lo, b);
			hi = V(max)(hi, b);
		}
		V(st)(dmin + x, lo);
		V(st)(dmax + x, hi);
	}
	if (x < w) {
		/* image rows end at w: their tails through c->tail (workspace rows have slack) */
		for (int j = 0; j < k; j++)
			memcpy(c->tail + 64 * j, p[j] + x, (size_t)(w - x));
		V(u8) lo = V(ld)(c->tail), hi = lo;
		for (int j = 1; j < k; j++) {
			const V(u8) b = V(ld)(c->tail + 64 * j);
			lo = V(min)(lo, b);
			hi = V(max)(hi, b);
		}
		V(st)(dmin + x, lo);
		V(st)(dmax + x, hi);
	}
}

/*
 * Vertical van Herk / Gil-Werman over blocks of k = 2r+1 rows of the padded
 * (edge-replicated) frame: output row y needs padded rows y..y+k-1, which is
 * the suffix of y's block joined with a prefix of the next block. Whole rows
 * are vector operations; each pixel costs 3 min and 3 max whatever r is.
 * Windows of 3 and 5 rows are read straight from their rows (rows_direct).
 */
KFN static void KN(bernsen)(struct threshold_cpu *c, const struct image_u8 *in, int r, int gate, int mode, int m,
                            int bias, struct image_u8 *img, struct bitmask *mask)
{
	int w = in->width, h = in->height, k = 2 * r + 1;
	size_t rs = c->row_stride;
	if (k == 3 || k == 5) {
		for (int y = 0; y < h; y++) {
			if (k == 5)
				KN(rows_direct)(c, in, y, 5);
			else
				KN(rows_direct)(c, in, y, 3);
			KN(bernsen_row)(c, in, y, r, gate, mode, m, bias, img, mask);
		}
		return;
	}
	for (int base = 0; base < h; base += k) {
		uint8_t *smin = c->vh_min + (size_t)(k - 1) * rs, *smax = c->vh_max + (size_t)(k - 1) * rs;
		const uint8_t *src = image_u8_row(in, clampi(base + k - 1 - r, 0, h - 1));
		memcpy(smin, src, (size_t)w);
		memcpy(smax, src, (size_t)w);
		for (int i = k - 2; i >= 0; i--) {
			src = image_u8_row(in, clampi(base + i - r, 0, h - 1));
			KN(rows_acc)
			(c, c->vh_min + (size_t)i * rs, c->vh_max + (size_t)i * rs,
			 c->vh_min + (size_t)(i + 1) * rs, c->vh_max + (size_t)(i + 1) * rs, src, w);
		}
		int n_out = h - base < k ? h - base : k;
		for (int i = 0; i + 1 < n_out; i++) {
			src = image_u8_row(in, clampi(base + k + i - r, 0, h - 1));
			if (i == 0) {
				memcpy(c->vg_min, src, (size_t)w);
				memcpy(c->vg_max, src, (size_t)w);
			} else {
				KN(rows_acc)
				(c, c->vg_min + (size_t)i * rs, c->vg_max + (size_t)i * rs,
				 c->vg_min + (size_t)(i - 1) * rs, c->vg_max + (size_t)(i - 1) * rs, src, w);
			}
		}
		for (int i = 0; i < n_out; i++) {
			int y = base + i;
			if (i == 0) {
				memcpy(c->p_min + r, c->vh_min, (size_t)w);
				memcpy(c->p_max + r, c->vh_max, (size_t)w);
			} else {
				KN(rows2)
				(c->p_min + r, c->p_max + r, c->vh_min + (size_t)i * rs,
				 c->vg_min + (size_t)(i - 1) * rs, c->vh_max + (size_t)i * rs,
				 c->vg_max + (size_t)(i - 1) * rs, w);
			}
			KN(bernsen_row)(c, in, y, r, gate, mode, m, bias, img, mask);
		}
	}
}

/*
 * Median, separable: sort each column of the window once a row (shared by
 * the 2r+1 outputs that see it), then select across the sorted columns at
 * byte offsets. The n window rows (image rows, clamped) are sorted into the
 * n workspace rows S[0..n-1] at offset r; S's edges repeat the edge column.
 */
KFN static inline __attribute__((always_inline)) void KN(sort_columns)(const uint8_t *const *p, int n,
                                                                       uint8_t *const *S, size_t at)
{
	V(u8) a[5];
	for (int j = 0; j < n; j++)
		a[j] = V(ld)(p[j]);
#define KSORT(i, j)                                                                                          \
	do {                                                                                                 \
		V(u8) lo_ = V(min)(a[i], a[j]);                                                              \
		a[j] = V(max)(a[i], a[j]);                                                                   \
		a[i] = lo_;                                                                                  \
	} while (0)
	if (n == 3) {
		KSORT(0, 1);
		KSORT(1, 2);
		KSORT(0, 1);
	} else {
		KSORT(0, 1);
		KSORT(3, 4);
		KSORT(2, 4);
		KSORT(2, 3);
		KSORT(1, 4);
		KSORT(0, 3);
		KSORT(0, 2);
		KSORT(1, 3);
		KSORT(1, 2);
	}
#undef KSORT
	for (int j = 0; j < n; j++)
		V(st)(S[j] + at, a[j]);
}

/* Inlined into median3/median5 so that n is a constant there. */
KFN static inline __attribute__((always_inline)) void
KN(median_columns)(struct threshold_cpu *c, const struct image_u8 *in, int y, int r, uint8_t *const *S)
{
	const int vb = V(VB);
	int w = in->width, h = in->height, n = 2 * r + 1, x = 0;
	const uint8_t *rows[5], *p[5];
	for (int j = 0; j < n; j++)
		rows[j] = image_u8_row(in, clampi(y + j - r, 0, h - 1));
	for (; x + vb <= w; x += vb) {
		for (int j = 0; j < n; j++)
			p[j] = rows[j] + x;
		KN(sort_columns)(p, n, S, (size_t)(r + x));
	}
	if (x < w) {
		for (int j = 0; j < n; j++) {
			memcpy(c->tail + 64 * j, rows[j] + x, (size_t)(w - x));
			p[j] = c->tail + 64 * j;
		}
		KN(sort_columns)(p, n, S, (size_t)(r + x));
	}
	for (int j = 0; j < n; j++) {
		memset(S[j], S[j][r], (size_t)r);
		memset(S[j] + r + w, S[j][r + w - 1], (size_t)r);
	}
}

KFN static inline V(u8) KN(med3)(V(u8) a, V(u8) b, V(u8) d)
{
	return V(max)(V(min)(a, b), V(min)(V(max)(a, b), d));
}

/* 3x3 from sorted columns: the median of (max of the lows, median of the
 * middles, min of the highs) is the median of the nine. 12 min/max. */
KFN static inline V(u8) KN(median9)(uint8_t *const *S, int x)
{
	V(u8) lo = V(max)(V(max)(V(ld)(S[0] + x), V(ld)(S[0] + x + 1)), V(ld)(S[0] + x + 2));
	V(u8) hi = V(min)(V(min)(V(ld)(S[2] + x), V(ld)(S[2] + x + 1)), V(ld)(S[2] + x + 2));
	V(u8) mid = KN(med3)(V(ld)(S[1] + x), V(ld)(S[1] + x + 1), V(ld)(S[1] + x + 2));
	return KN(med3)(lo, mid, hi);
}

KFN static void KN(median3)(struct threshold_cpu *c, const struct image_u8 *in, struct image_u8 *out)
{
	const int vb = V(VB);
	int w = in->width, h = in->height;
	uint8_t *S[3] = {c->med_rows, c->med_rows + c->med_stride, c->med_rows + 2 * c->med_stride};
	for (int y = 0; y < h; y++) {
		KN(median_columns)(c, in, y, 1, S);
		uint8_t *o = image_u8_row(out, y);
		int x = 0;
		/* whole vectors, then the row's tail (store_part) */
		for (; x + vb <= w; x += vb)
			V(st)(o + x, KN(median9)(S, x));
		if (x < w)
			KN(store_part)(c, o + x, KN(median9)(S, x), w - x);
	}
}

/* Rank 12 of 5 sorted columns of 5 (sIC: rank I of column C): pairs of
 * columns merged by Batcher's odd-even merge, the two merges merged, and
 * the last column joined by rank-k-of-two-sorted-lists (min over i + j =
 * k - 1 of max(X[i], Y[j])), pruned to what the middle rank needs: 98
 * min/max. Generated, and checked on every 0/1 input (the 0-1 principle). */
KFN static inline V(u8) KN(med25)(const uint8_t *const *S, int x)
{
	V(u8) s00 = V(ld)(S[0] + x), s01 = V(ld)(S[0] + x + 1), s02 = V(ld)(S[0] + x + 2);
	V(u8) s03 = V(ld)(S[0] + x + 3), s04 = V(ld)(S[0] + x + 4);
	V(u8) s10 = V(ld)(S[1] + x), s11 = V(ld)(S[1] + x + 1), s12 = V(ld)(S[1] + x + 2);
	V(u8) s13 = V(ld)(S[1] + x + 3), s14 = V(ld)(S[1] + x + 4);
	V(u8) s20 = V(ld)(S[2] + x), s21 = V(ld)(S[2] + x + 1), s22 = V(ld)(S[2] + x + 2);
	V(u8) s23 = V(ld)(S[2] + x + 3), s24 = V(ld)(S[2] + x + 4);
	V(u8) s30 = V(ld)(S[3] + x), s31 = V(ld)(S[3] + x + 1), s32 = V(ld)(S[3] + x + 2);
	V(u8) s33 = V(ld)(S[3] + x + 3), s34 = V(ld)(S[3] + x + 4);
	V(u8) s40 = V(ld)(S[4] + x), s41 = V(ld)(S[4] + x + 1), s42 = V(ld)(S[4] + x + 2);
	V(u8) s43 = V(ld)(S[4] + x + 3), s44 = V(ld)(S[4] + x + 4);
	V(u8) t0 = V(min)(s00, s01);
	V(u8) t1 = V(max)(s00, s01);
	V(u8) t2 = V(min)(s40, s41);
	V(u8) t3 = V(max)(s40, s41);
	V(u8) t4 = V(min)(t2, t1);
	V(u8) t5 = V(max)(t2, t1);
	V(u8) t6 = V(min)(s20, s21);
	V(u8) t7 = V(max)(s20, s21);
	V(u8) t8 = V(min)(t6, t4);
	V(u8) t9 = V(max)(t6, t4);
	V(u8) t10 = V(min)(t7, t5);
	V(u8) t11 = V(max)(t7, t5);
	V(u8) t12 = V(min)(s10, s11);
	V(u8) t13 = V(max)(s10, s11);
	V(u8) t14 = V(min)(s30, s31);
	V(u8) t15 = V(max)(s30, s31);
	V(u8) t16 = V(min)(t14, t13);
	V(u8) t17 = V(max)(t14, t13);
	V(u8) t18 = V(min)(t12, t8);
	V(u8) t19 = V(max)(t12, t8);
	V(u8) t20 = V(min)(t16, t9);
	V(u8) t21 = V(max)(t16, t9);
	V(u8) t22 = V(min)(t17, t10);
	V(u8) t23 = V(max)(t17, t10);
	V(u8) t24 = V(min)(t15, t11);
	V(u8) t25 = V(max)(t15, t11);
	V(u8) t26 = V(min)(s02, s03);
	V(u8) t27 = V(max)(s02, s03);
	V(u8) t28 = V(min)(s42, s43);
	V(u8) t29 = V(max)(s42, s43);
	V(u8) t30 = V(min)(t28, t27);
	V(u8) t31 = V(max)(t28, t27);
	V(u8) t32 = V(min)(s22, s23);
	V(u8) t33 = V(max)(s22, s23);
	V(u8) t34 = V(min)(t32, t30);
	V(u8) t35 = V(max)(t32, t30);
	V(u8) t36 = V(min)(t33, t31);
	V(u8) t37 = V(max)(t33, t31);
	V(u8) t38 = V(min)(s12, s13);
	V(u8) t39 = V(max)(s12, s13);
	V(u8) t40 = V(min)(s32, s33);
	V(u8) t41 = V(max)(s32, s33);
	V(u8) t42 = V(min)(t40, t39);
	V(u8) t43 = V(max)(t40, t39);
	V(u8) t44 = V(min)(t38, t34);
	V(u8) t45 = V(max)(t38, t34);
	V(u8) t46 = V(min)(t42, t35);
	V(u8) t47 = V(max)(t42, t35);
	V(u8) t48 = V(min)(t43, t36);
	V(u8) t49 = V(max)(t43, t36);
	V(u8) t50 = V(min)(t41, t37);
	V(u8) t51 = V(max)(t41, t37);
	V(u8) t52 = V(max)(t0, t26);
	V(u8) t53 = V(min)(t25, t51);
	V(u8) t54 = V(min)(t53, t52);
	V(u8) t55 = V(max)(t53, t52);
	V(u8) t56 = V(min)(t21, t47);
	V(u8) t57 = V(max)(t21, t47);
	V(u8) t58 = V(max)(t56, t54);
	V(u8) t59 = V(min)(t57, t55);
	V(u8) t60 = V(max)(t19, t45);
	V(u8) t61 = V(min)(t23, t49);
	V(u8) t62 = V(min)(t61, t60);
	V(u8) t63 = V(max)(t61, t60);
	V(u8) t64 = V(max)(t62, t58);
	V(u8) t65 = V(min)(t63, t59);
	V(u8) t66 = V(max)(t63, t59);
	V(u8) t67 = V(max)(t18, t44);
	V(u8) t68 = V(min)(t3, t29);
	V(u8) t69 = V(min)(t68, t67);
	V(u8) t70 = V(max)(t68, t67);
	V(u8) t71 = V(min)(t22, t48);
	V(u8) t72 = V(max)(t22, t48);
	V(u8) t73 = V(max)(t71, t69);
	V(u8) t74 = V(min)(t72, t70);
	V(u8) t75 = V(max)(t20, t46);
	V(u8) t76 = V(min)(t24, t50);
	V(u8) t77 = V(min)(t76, t75);
	V(u8) t78 = V(max)(t76, t75);
	V(u8) t79 = V(min)(t77, t73);
	V(u8) t80 = V(max)(t77, t73);
	V(u8) t81 = V(min)(t78, t74);
	V(u8) t82 = V(min)(t79, t64);
	V(u8) t83 = V(max)(t79, t64);
	V(u8) t84 = V(min)(t80, t65);
	V(u8) t85 = V(max)(t80, t65);
	V(u8) t86 = V(min)(t81, t66);
	V(u8) t87 = V(max)(t81, t66);
	V(u8) t88 = V(max)(t82, s44);
	V(u8) t89 = V(max)(t83, s34);
	V(u8) t90 = V(max)(t84, s24);
	V(u8) t91 = V(max)(t85, s14);
	V(u8) t92 = V(max)(t86, s04);
	V(u8) t93 = V(min)(t88, t89);
	V(u8) t94 = V(min)(t93, t90);
	V(u8) t95 = V(min)(t94, t91);
	V(u8) t96 = V(min)(t95, t92);
	V(u8) t97 = V(min)(t96, t87);
	return t97;
}

KFN static void KN(median5)(struct threshold_cpu *c, const struct image_u8 *in, struct image_u8 *out)
{
	const int vb = V(VB);
	int w = in->width, h = in->height;
	uint8_t *S[5];
	for (int j = 0; j < 5; j++)
		S[j] = c->med_rows + (size_t)j * c->med_stride;
	for (int y = 0; y < h; y++) {
		KN(median_columns)(c, in, y, 2, S);
		uint8_t *o = image_u8_row(out, y);
		for (int x = 0; x < w; x += vb)
			KN(store_part)(c, o + x, KN(med25)((const uint8_t *const *)S, x), w - x);
	}
}

/*
 * Gaussian in 16-bit lanes, exact: a row pass sums taps into u16 (weights
 * total 256, so at most 65280); the column pass splits each row sum into its
 * high and low bytes, H = sum w*(high), L = sum w*(low), both <= 65280, and
 * (256 H + L + 32768) >> 16 == (H + (L >> 8) + 128) >> 8, the CUDA rounding.
 */
KFN static void KN(gauss)(struct threshold_cpu *c, const struct image_u8 *in, int R, const int *wk,
                          struct image_u8 *out)
{
	const int vw = V(VW);
	int w = in->width, h = in->height, n = 2 * R + 1;
	V(u16) W[THRESHOLD_GAUSS_MAX_RADIUS + 1];
	for (int i = 0; i <= R; i++)
		W[i] = V(w_set1)(wk[i]);
	const V(u16) half = V(w_set1)(128);
	uint8_t *pad = c->g_pad;
	int produced = -1;
	for (int y = 0; y < h; y++) {
		int need = y + R < h ? y + R : h - 1;
		for (; produced < need; produced++) {
			int j = produced + 1;
			const uint8_t *row = image_u8_row(in, j);
			memset(pad, row[0], (size_t)R);
			memcpy(pad + R, row, (size_t)w);
			memset(pad + R + w, row[w - 1], (size_t)R);
			uint16_t *dst = c->g_ring + (size_t)(j % n) * c->g_stride;
			for (int x = 0; x < w; x += vw) {
				const uint8_t *p = pad + R + x;
				V(u16) acc = V(w_mul)(V(w_ld8)(p), W[0]);
				for (int i = 1; i <= R; i++)
					acc = V(w_add)(
					    acc, V(w_mul)(V(w_add)(V(w_ld8)(p + i), V(w_ld8)(p - i)), W[i]));
				V(w_st)(dst + x, acc);
			}
		}
		const uint16_t *rows[2 * THRESHOLD_GAUSS_MAX_RADIUS + 1];
		for (int j = -R; j <= R; j++)
			rows[j + R] = c->g_ring + (size_t)(clampi(y + j, 0, h - 1) % n) * c->g_stride;
		uint8_t *o = image_u8_row(out, y);
		for (int x = 0; x < w; x += vw) {
			V(u16) m = V(w_ld)(rows[R] + x);
			V(u16) hs = V(w_mul)(V(w_shr8)(m), W[0]), ls = V(w_mul)(V(w_lo8)(m), W[0]);
			for (int i = 1; i <= R; i++) {
				V(u16) a = V(w_ld)(rows[R + i] + x), b = V(w_ld)(rows[R - i] + x);
				hs = V(w_add)(hs, V(w_mul)(V(w_add)(V(w_shr8)(a), V(w_shr8)(b)), W[i]));
				ls = V(w_add)(ls, V(w_mul)(V(w_add)(V(w_lo8)(a), V(w_lo8)(b)), W[i]));
			}
			V(u16) res = V(w_shr8)(V(w_add)(V(w_add)(hs, V(w_shr8)(ls)), half));
			if (x + vw <= w) {
				V(w_st8)(o + x, res);
			} else {
				V(w_st8)(c->tail, res);
				memcpy(o + x, c->tail, (size_t)(w - x));
			}
		}
	}
}

#undef KCAT2
#undef KCAT
#undef KN
#undef V
