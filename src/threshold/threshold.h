/*
 * threshold.h - grey frame -> black/white bitmask.
 *
 * Per-pixel Bernsen (the default; ../shared/spec/threshold.md §1 defines it
 * bit for bit), tiled Bernsen (classic, cheaper, blockier), optional median
 * (3x3, 5x5) and Gaussian pre-filters. Backends are chosen by name from a
 * table: "cpu" (the reference, separable running min/max, O(1) a pixel in the
 * radius) and "cuda" (cuda/, when built and a GPU works). Every backend gives
 * identical bits for identical settings.
 *
 * Usage:
 *     struct threshold *t = threshold_create(&cfg, "auto");
 *     threshold_submit(t, &grey);          // may start asynchronous GPU work
 *     ...CPU work on the previous frame...
 *     threshold_collect(t, &mask);         // waits, fills mask
 *     threshold_destroy(t);
 * threshold_process() is submit + collect. A backend that fails mid-run
 * (GPU error) is replaced by the CPU backend inside collect, with one log
 * line, and the frame is recomputed: no frame is lost.
 *
 * Memory: every buffer is sized at create time for max_width x max_height;
 * nothing is allocated per frame. The grey image passed to submit is borrowed
 * until collect returns.
 */
#ifndef TT_THRESHOLD_H
#define TT_THRESHOLD_H

#include <stdbool.h>

#include "../core/image.h"

enum threshold_mode { THRESHOLD_BERNSEN = 0, THRESHOLD_TILED = 1 };

struct threshold_config {
	int max_width, max_height;
	int mode;           /* enum threshold_mode */
	int radius;         /* Bernsen window radius, 1..32 (window 2r+1) */
	int gate;           /* minimum contrast hi - lo, 0..255 */
	int tile;           /* tiled mode: tile side, 2..64 */
	int median;         /* 0 (off), 3 or 5 */
	float gauss_sigma;  /* 0 = off, else 0.3..4 */
};

struct threshold;

/* backend: "cpu", "cuda" or "auto" (cuda when it works, else cpu; the log
 * says once which runs and why). Returns NULL with *err set (ERR_UNSUPPORTED
 * when "cuda" is asked for and unavailable). */
struct threshold *threshold_create(const struct threshold_config *cfg, const char *backend, int *err);
void threshold_destroy(struct threshold *t);  /* NULL-safe */

/* Changes radius/gate/mode/prefilters live (sizes must stay within max). */
int threshold_set_config(struct threshold *t, const struct threshold_config *cfg);
const char *threshold_backend_name(const struct threshold *t); /* "cpu" or "cuda" */

int threshold_submit(struct threshold *t, const struct image_u8 *grey);
int threshold_collect(struct threshold *t, struct bitmask *out);
int threshold_process(struct threshold *t, const struct image_u8 *grey, struct bitmask *out);

/* The CPU reference pieces, exposed for tests, tools and the CUDA oracle.
 * `out` images are 0/255 and the same size as `in`; in and out must differ. */
void bernsen_cpu(const struct image_u8 *in, int radius, int gate, struct image_u8 *out);
void bernsen_tiled_cpu(const struct image_u8 *in, int tile, int gate, struct image_u8 *out);
void median_cpu(const struct image_u8 *in, int size, struct image_u8 *out);
void gauss_cpu(const struct image_u8 *in, float sigma, struct image_u8 *out);

#endif
