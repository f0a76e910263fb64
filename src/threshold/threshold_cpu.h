/*
 * threshold_cpu.h - the CPU backend's workspace, private to src/threshold.
 *
 * One struct threshold_cpu holds every scratch buffer the CPU reference
 * needs for frames up to max_width x max_height, so the object API
 * (threshold.c) runs with no allocation a frame. The public one-shot
 * functions in threshold.h (bernsen_cpu, ...) create a workspace sized to the
 * image, run, and free it.
 *
 * Each run function writes either a 0/255 image (img != NULL) or a bit-packed
 * mask (mask != NULL, same size as `in`); the bit path is fused: no byte
 * image is made on the way.
 */
#ifndef TT_THRESHOLD_CPU_H
#define TT_THRESHOLD_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/image.h"

#define THRESHOLD_MAX_TILE 64
#define THRESHOLD_MIN_TILE 2
#define THRESHOLD_MAX_MEAN_BIAS 50
#define THRESHOLD_MAX_SAUVOLA_K 100
#define THRESHOLD_MAX_SAUVOLA_RANGE 255
struct threshold_cpu;

/* Returns NULL with *err = ERR_RANGE or ERR_NOMEM. Free with threshold_cpu_destroy. */
struct threshold_cpu *threshold_cpu_create(int max_width, int max_height, int *err);
void threshold_cpu_destroy(struct threshold_cpu *c); /* NULL-safe */

/* The instruction set the kernels run with: "avx2", "sse2" or "scalar".
 * create picks the best this CPU has (avx2 where __builtin_cpu_supports says
 * so, else sse2 on x86-64, scalar elsewhere); set_isa forces a lesser one,
 * for tests and benchmarks (ERR_UNSUPPORTED when the CPU or build lacks it).
 * Every set gives the same bits. The name is static. */
const char *threshold_cpu_isa(const struct threshold_cpu *c);
int threshold_cpu_set_isa(struct threshold_cpu *c, const char *isa);
/* The set_isa of this module's other kernels that have an avx2 copy beside
 * a plain one (deblur.h, closing.h): *avx2 from isa, "avx2" where this CPU
 * has it (as above), or plain, the other copy's name. 0, or
 * ERR_UNSUPPORTED. */
int threshold_cpu_pick_avx2(const char *isa, const char *plain, bool *avx2);

/* in must fit the workspace; radius 1..THRESHOLD_MAX_RADIUS, gate 0..255. */
void threshold_cpu_bernsen(struct threshold_cpu *c, const struct image_u8 *in, int radius, int gate,
			   struct image_u8 *img, struct bitmask *mask);
/* The local-mean modes (enum threshold_mode: MEAN, GATED, EITHER, BOTH;
 * anything else runs Bernsen): radius and gate as Bernsen's, mean_radius
 * 1..THRESHOLD_MAX_MEAN_RADIUS, mean_bias 0..THRESHOLD_MAX_MEAN_BIAS
 * percent; threshold.h defines each rule. */
void threshold_cpu_mean(struct threshold_cpu *c, const struct image_u8 *in, int mode, int radius, int gate,
                        int mean_radius, int mean_bias, struct image_u8 *img, struct bitmask *mask);
/* Sauvola (THRESHOLD_SAUVOLA; threshold.h defines the rule): mean_radius
 * 1..THRESHOLD_MAX_MEAN_RADIUS, k 0..THRESHOLD_MAX_SAUVOLA_K percent, range
 * 1..THRESHOLD_MAX_SAUVOLA_RANGE, gate 0..255 (the dark-window floor). */
void threshold_cpu_sauvola(struct threshold_cpu *c, const struct image_u8 *in, int mean_radius, int k, int range,
			   int gate, struct image_u8 *img, struct bitmask *mask);
/* tile THRESHOLD_MIN_TILE..THRESHOLD_MAX_TILE. */
void threshold_cpu_tiled(struct threshold_cpu *c, const struct image_u8 *in, int tile, int gate,
			 struct image_u8 *img, struct bitmask *mask);
/* size 3 or 5; out is a grey image the size of in (not in itself). */
void threshold_cpu_median(struct threshold_cpu *c, const struct image_u8 *in, int size, struct image_u8 *out);
/* Separable fixed-point Gaussian with the taps of threshold_gauss_taps()
 * (threshold.h). */
void threshold_cpu_gauss(struct threshold_cpu *c, const struct image_u8 *in, float sigma, struct image_u8 *out);

#endif
