/*
 * upsample.h - a part of a grey frame enlarged twice, bilinear or Lanczos-3, in
 * integers (three times by Lanczos-3 too), and a part sharpened for them.
 *
 * For thresholding symbols whose holes and walls are 1-1.5 px across: at
 * twice the size they are 2-3 px, and a Bernsen window of radius 2-3 tells
 * them apart where radius 1 on the frame itself keeps only some.
 *
 * Output pixel (2i + a, 2j + b) (a, b in {0, 1}) lies a quarter pixel from
 * source pixel (i, j) towards its neighbour on the side of a and b (pixel
 * centres at integers: output x maps to source x / 2 - 0.25). Its value
 * is (9 p + 3 q + 3 r + s + 8) / 16 of the source pixel p, its horizontal
 * neighbour q, its vertical neighbour r and their diagonal s, neighbours
 * clamped to the frame (not to the part): so a pixel's value does not
 * depend on the part it was enlarged with, and parts that overlap agree.
 * Deterministic; no allocation.
 */
#ifndef TT_THRESHOLD_UPSAMPLE_H
#define TT_THRESHOLD_UPSAMPLE_H

#include "../core/image.h"

/* dst (its size set by the caller to 2 (x1 - x0) x 2 (y1 - y0), its stride
 * and data those of a buffer large enough) = the part x0 <= x < x1,
 * y0 <= y < y1 of src enlarged twice. Returns 0, or ERR_RANGE where the
 * part is empty, outside src, or dst's size differs. */
int upsample2_part(const struct image_u8 *src, int x0, int y0, int x1, int y1, struct image_u8 *dst);

/* As upsample2_part, but each enlarged pixel is Lanczos-3's (a = 3) of the
 * 6 x 6 source pixels around its place (the same mapping: x / 2 - 0.25),
 * the weights of each axis, for a place a quarter pixel before source
 * pixel i, (2, -17, 69, 228, -34, 8) / 256 over pixels i - 3 .. i + 2 (a
 * quarter pixel after: mirrored over i - 2 .. i + 3), rounded and clamped
 * to 0..255; neighbours clamped to the frame. Its negative lobes keep a
 * 1-2 px hole darker than bilinear's blend of it with its walls (and ring
 * beside a hard step). rows: scratch of UPSAMPLE2_LANCZOS_ROWS times
 * dst's width values (the source rows enlarged along x). */
#define UPSAMPLE2_LANCZOS_ROWS 7
int upsample2_lanczos_part(const struct image_u8 *src, int x0, int y0, int x1, int y1, struct image_u8 *dst,
			   int32_t *rows);

/* The instruction set the enlargements here run on: "avx2" where the CPU
 * has it (x86-64; 16 or 8 source pixels a vector, chosen at run time), else "scalar" (plain C). Either gives the same
 * bits: every sum is an exact integer. upsample_set_isa("scalar") forces the plain C, ("avx2") undoes
 * that; returns 0, or ERR_UNSUPPORTED where the CPU or build lacks the set.
 * Process-wide, for tests: set it before any thread enlarges. */
const char *upsample_isa(void);
int upsample_set_isa(const char *isa);

/* The part enlarged three times by Lanczos-3 (dst: 3 (x1 - x0) x
 * 3 (y1 - y0)): output pixel 3i + a lies (a - 1) / 3 pixel from source
 * pixel i (output x maps to source x / 3 - 1 / 3), so the middle one of
 * each three is the source pixel itself and the other two take the
 * weights of each axis for a place a third of a pixel before i,
 * (3, -24, 98, 208, -37, 8) / 256 over pixels i - 3 .. i + 2 (a third
 * after: mirrored over i - 2 .. i + 3), rounded and clamped to 0..255;
 * neighbours clamped to the frame, so that parts that overlap agree.
 * For symbols whose holes and walls are about a pixel across and blurred
 * into each other (20-24 px cards): at twice the size a 3 px hole is
 * still one or two pixels of its own grey, at three times it is three or
 * four. rows: scratch of UPSAMPLE2_LANCZOS_ROWS times dst's width values.
 * Returns 0, or ERR_RANGE as upsample2_part. */
int upsample3_lanczos_part(const struct image_u8 *src, int x0, int y0, int x1, int y1, struct image_u8 *dst,
			   int32_t *rows);

/* dst (its size set by the caller to (x1 - x0) x (y1 - y0)) = the part
 * x0 <= x < x1, y0 <= y < y1 of src sharpened by an unsharp mask: each
 * pixel p becomes p + halves (p - b) / 2 (halves 1..4; rounded, clamped
 * to 0..255), b its Gaussian blur of 0.7 px (integer weights (2, 53, 146,
 * 53, 2) / 256 along each axis, neighbours clamped to src, not to the
 * part: a pixel's value does not depend on the part). For the enlargements above of a
 * part 3 px inside it. A camera's slight defocus (0.9-1.2 px) blurs a
 * 24-36 px symbol's 1-1.5 px holes into their walls; the mask takes back
 * part of that, and raises the noise as much. rows: scratch of
 * UPSAMPLE_SHARPEN_ROWS times the part's width values. Deterministic;
 * no allocation. Returns 0, or ERR_RANGE where the part is empty, outside
 * src, dst's size differs or halves is outside 1..4. */
#define UPSAMPLE_SHARPEN_ROWS 5
int upsample_sharpen_part(const struct image_u8 *src, int x0, int y0, int x1, int y1, int halves,
			  struct image_u8 *dst, int32_t *rows);

/* dst (its size set by the caller) = src under an affine map: output pixel
 * (i, j) is src's grey at (m[0] i + m[1] j + m[2], m[3] i + m[4] j + m[5])
 * (pixel centres at integers), Lanczos-3 along each axis over the 6 x 6
 * source pixels around that place, taken to 1/64 px (integer weights
 * summing to 256 along each axis), rounded and clamped to 0..255;
 * neighbours clamped to src. For a symbol squeezed one way (a tilted
 * camera's far side, a barrel lens's edge): stretched back along its short
 * axis, its 1 px holes and walls are as wide as its others. Deterministic;
 * no allocation. Returns 0, or ERR_RANGE where src or dst is empty or a
 * coefficient is not finite. */
int upsample_affine_lanczos(const struct image_u8 *src, const float m[6], struct image_u8 *dst);

#endif
