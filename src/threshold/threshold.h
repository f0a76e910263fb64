/*
 * threshold.h - grey frame -> black/white bitmask.
 *
 * Per-pixel Bernsen (the default; the threshold spec's §1 defines it bit for
 * bit), tiled Bernsen (classic, cheaper, blockier), the local mean
 * (Bradley-Roth) alone or fused with Bernsen, Sauvola (the local mean
 * moved by the local deviation), optional median
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
 * nothing is allocated per frame (a GPU failure allocates the CPU backend
 * once). The grey image passed to submit is borrowed until collect returns.
 * The mask passed to collect is the caller's, with the frame's width and
 * height (bitmask_alloc; reallocate when the camera's size changes) else
 * ERR_SIZE; bits past width are written zero. collect_view instead lends the
 * backend's own mask, sized to the frame.
 *
 * Local-mean modes (Bradley-Roth and its fusions with Bernsen, rules at
 * threshold_mean_cpu()): column sums over the window's rows carried from row
 * to row (16 bits), one row of prefix sums, the rule in 32-bit integers;
 * the fused modes run it beside the Bernsen row pass and pick per pixel.
 * O(1) a pixel whatever the radius: about 19 M instructions a 1080p frame
 * on top of Bernsen's (callgrind, AVX2; the prefix sums, serial, are 12 M).
 * Sauvola: the same column sums, and column sums of the squares (32 bits)
 * with their own row of prefix sums; the rule in 64-bit integers with one
 * double square root a pixel (threshold_sauvola_cpu()), scalar C.
 *
 * Algorithm (CPU): prefilters first (median, then Gaussian), then the
 * threshold compares the filtered value. Per-pixel Bernsen is separable: a
 * van Herk / Gil-Werman running min and max down the columns over blocks of
 * 2r+1 rows (whole rows as vectors: 3 min + 3 max a pixel whatever r is),
 * then along each row by log-step doubling on vectors loaded at byte offsets
 * (min of 2, 4, 8.. pixels in place; the window is two overlapping runs of
 * the largest power of two <= 2r+1: ceil(log2(2r+1)) + 1 min and max a pixel),
 * fused with the §1 rule and the packing (movemask into mask words). Cropping
 * the window at the border equals replicating the edge pixel (min and max
 * are idempotent). Tiled: tiles of tile x tile pixels from (0,0), the last
 * row and column of tiles cut short; lo/hi over the tile and its 8 neighbour
 * tiles (those that exist); one §1 threshold a tile; pixel white when v > t.
 * Median, separable: each window column sorted once a row by a sorting
 * network (3 or 9 compare-exchanges, shared by the outputs that see it), then
 * per pixel a selection across the sorted columns: 3x3 the median of (max of
 * lows, median of middles, min of highs), 12 min/max; 5x5 a pruned Batcher
 * merge, 98 min/max; clamped borders. Gaussian: threshold_gauss_taps() integer
 * taps (threshold_cpu.h; the GPU backend is handed the same), clamped edges, exact integer sums in 16-bit
 * lanes. The kernels (cpu_kernels.h) are compiled for AVX2 (chosen at run
 * time when the CPU has it), SSE2 (every x86-64) and plain C (elsewhere);
 * all give the same bits.
 *
 * Performance, CPU backend (one core, gcc 12 -O2, frame -> mask; AMD EPYC
 * Zen 4 2-vCPU build machine, best of 40, AVX2 / SSE2): per-pixel Bernsen
 * 640x480 0.08 ms; 1920x1080 0.56 / 0.88 ms (r=6), 0.68 / 1.08 ms (r=32),
 * 7.3 / 14.9 M instructions (r=6, callgrind); 3840x2160 3.9 ms (r=6).
 * 1080p median3 0.26 / 0.43 ms, median5 1.3 / 2.3 ms, Gaussian sigma 1
 * 0.92 / 2.1 ms, tiled (s=10, scalar) 1.5 ms; the local mean adds about
 * 19 M instructions a 1080p frame. Plain C (non-x86) is about 25x slower
 * than AVX2. The CUDA backend's figures: cuda/bernsen_cuda.h and the
 * README's performance section (tests/gpu/gpu_bench.c measures them).
 */
#ifndef TT_THRESHOLD_H
#define TT_THRESHOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/image.h"

enum threshold_mode {
	THRESHOLD_BERNSEN = 0, /* per-pixel Bernsen */
	THRESHOLD_TILED = 1,   /* one Bernsen threshold a tile */
	THRESHOLD_MEAN = 2,    /* Bradley-Roth local mean, dark areas (mean < gate) black */
	THRESHOLD_GATED = 3,   /* local mean where Bernsen's window is steep, Bernsen's flat rule elsewhere */
	THRESHOLD_EITHER = 4,  /* steep: white where Bernsen or the local mean says white; else the flat rule */
	THRESHOLD_BOTH = 5,    /* steep: white where Bernsen and the local mean say white; else the flat rule */
	THRESHOLD_SAUVOLA = 6, /* local mean raised or lowered by the local deviation, dark areas black */
	/* threshold_mean_cpu() below defines the four local-mean modes bit for
	 * bit, threshold_sauvola_cpu() Sauvola's. */
};
#define THRESHOLD_MODES 7
/* The largest Bernsen and local-mean radii a configuration takes. */
#define THRESHOLD_MAX_RADIUS 32
#define THRESHOLD_MAX_MEAN_RADIUS 63

struct threshold_config {
	int max_width, max_height;
	int mode;           /* enum threshold_mode */
	int radius;         /* Bernsen window radius, 1..32 (window 2r+1) */
	int gate;           /* minimum contrast hi - lo, 0..255 */
	int tile;           /* tiled mode: tile side, 2..64 */
	int mean_radius;    /* local-mean modes: window radius, 1..63 (window 2m+1) */
	int mean_bias;      /* local-mean modes: percent below the mean that is still black, 0..50 */
	int sauvola_k;      /* Sauvola: weight of the deviation term, percent, 0..100 */
	int sauvola_range;  /* Sauvola: the deviation that leaves the threshold at the mean, 1..255 */
	int median;         /* 0 (off), 3 or 5 */
	float gauss_sigma;  /* 0 = off, else 0.3..4 */
	int gpu_bands;      /* CUDA only: bands a frame is cut into to overlap copies and kernels, 1..8; 0 = auto */
};

struct threshold;

/* backend: "cpu", "cuda" or "auto" (cuda when it works, else cpu; the log
 * says once which runs and why). Returns NULL with *err set (ERR_UNSUPPORTED
 * when "cuda" is asked for and unavailable). */
struct threshold *threshold_create(const struct threshold_config *cfg, const char *backend, int *err);
void threshold_destroy(struct threshold *t);  /* NULL-safe */
/* Whether threshold_create could open `backend` here ("auto" and "cpu"
 * always can; "cuda" needs a usable device), without allocating anything:
 * for refusing a configuration at start-up. ERR_UNSUPPORTED or ERR_CONFIG
 * with the reason in why. */
int threshold_backend_check(const char *backend, char *why, size_t cap);

/* Changes radius/gate/mode/prefilters live (sizes must stay within max). */
int threshold_set_config(struct threshold *t, const struct threshold_config *cfg);
const char *threshold_backend_name(const struct threshold *t); /* "cpu" or "cuda" */

int threshold_submit(struct threshold *t, const struct image_u8 *grey);
int threshold_collect(struct threshold *t, struct bitmask *out);
int threshold_process(struct threshold *t, const struct image_u8 *grey, struct bitmask *out);
/* collect without the copy: *view borrows the backend's own mask (pinned
 * memory on CUDA; rows of (width + 63) / 64 words), read-only. It stays
 * valid and unchanged until the next collect or destroy: a submit in
 * between (the next frame's, overlapped with segmenting this one) fills
 * another buffer (CUDA alternates two; the CPU computes in collect). Saves
 * a 260 KB memcpy a 1080p frame and scale. view->bits is NULL when the
 * frame's mask was left on the GPU (threshold_set_mask_download). */
int threshold_collect_view(struct threshold *t, struct bitmask *view);

/* Whether the following submits bring the mask to the host (on: the
 * default). Off only matters on CUDA, for a consumer that reads the mask
 * on the GPU (threshold_device_mask): collect_view then waits for the
 * kernels alone and hands out bits NULL, and threshold_fetch_view gets the
 * mask later for the frames someone looks at. The CPU backend always has
 * its mask. threshold_collect (the copy) fetches by itself. */
void threshold_set_mask_download(struct threshold *t, bool on);

/* The mask of the frame last collected by collect_view, as its view (a CPU
 * mask, or a GPU one brought to the host now, on its own queue, when its
 * submit left it on the GPU). Valid until the second submit after that
 * frame's (the masks alternate), so the overlapped submit of the next
 * frame leaves it alone. ERR_AGAIN before a collect; ERR_DEVICE when the
 * GPU failed (no fallback: the frame's grey is gone). */
int threshold_fetch_view(struct threshold *t, struct bitmask *view);

/* The mask of the frame last submitted as it lies on the GPU, for a GPU
 * stage that reads it in place (the GPU segmenter, segment.h): bits is a
 * device pointer to rows of stride_words 64-bit words (bit x % 64 of word
 * x / 64 = pixel x, 1 = white), stream the queue its kernels run on (work
 * queued there after the submit sees the whole mask). Both are opaque
 * here; valid until the next submit. ERR_UNSUPPORTED on the CPU backend,
 * ERR_AGAIN before a submit. */
struct threshold_device_mask {
	const void *bits;
	int stride_words;
	void *stream;
};
int threshold_device_mask(struct threshold *t, struct threshold_device_mask *out);

/* Block extremes of the grey as submitted (before any prefilter): the
 * darkest and brightest grey of each block of THRESHOLD_BLOCK pixels a
 * side, read on every other row from the block's top (print's strokes are
 * 2 px and more), blocks cut short at the right and bottom edges;
 * threshold_blocks_x(width) x threshold_blocks_y(height) blocks row by row
 * from the top, two bytes each (darkest, brightest). For the pipeline's
 * ink scan (src/pipeline/windows.h). */
#define THRESHOLD_BLOCK 16
static inline int threshold_blocks_x(int width) { return (width + THRESHOLD_BLOCK - 1) / THRESHOLD_BLOCK; }
static inline int threshold_blocks_y(int height) { return (height + THRESHOLD_BLOCK - 1) / THRESHOLD_BLOCK; }
/* The reference: in's block extremes into lohi (2 * blocks bytes). */
void threshold_block_extremes_cpu(const struct image_u8 *in, uint8_t *lohi);
/* Whether the following submits compute the block extremes beside the
 * threshold (on the GPU, where the CPU would hold the submitting thread
 * for a whole read of the frame); returns whether this backend does (the
 * CPU backend does not: its caller computes them itself). */
bool threshold_set_extremes(struct threshold *t, bool on);
/* The block extremes of the frame last collected, identical to
 * threshold_block_extremes_cpu() of its grey, borrowed until the second
 * submit after that frame's. ERR_AGAIN when that frame was submitted
 * without them (or the CPU backend ran it). */
int threshold_extremes(struct threshold *t, const uint8_t **lohi);

/* Optional, for the GPU: page-locks a long-lived frame buffer (a capture ring
 * slot) so frames inside it reach the GPU by DMA with no staging memcpy (at
 * 1080p that memcpy costs more than the whole GPU stage). 0 and nothing done
 * on the CPU backend; at most 16 buffers; the buffer must stay allocated
 * until unregistered or threshold_destroy. */
int threshold_register_buffer(struct threshold *t, void *data, size_t bytes);
int threshold_unregister_buffer(struct threshold *t, void *data);

/* The CPU reference pieces, exposed for tests, tools and the CUDA oracle.
 * `out` images are 0/255 (median and gauss: grey) and the same size as `in`;
 * in and out must differ. radius is clamped to 1..32, tile to 2..64, gate to
 * 0..255. Each call allocates and frees its own scratch (not for the frame
 * loop: the object above keeps its scratch); on allocation failure out is
 * left unwritten. */
void bernsen_cpu(const struct image_u8 *in, int radius, int gate, struct image_u8 *out);
void bernsen_tiled_cpu(const struct image_u8 *in, int tile, int gate, struct image_u8 *out);
/* The local-mean modes (mode THRESHOLD_MEAN, GATED, EITHER or BOTH), bit for
 * bit: S = the sum and n = the count of the pixels in the square of radius
 * mean_radius (1..63) around p, cropped at the image border; v = p's value;
 *     M  = 100 * v * n > (100 - mean_bias) * S        (above the mean less bias %)
 * and Bernsen's lo, hi, t = (lo + hi) / 2 over radius, B = the §1 verdict
 * with gate, steep = hi - lo >= gate:
 *     MEAN    white = M and S >= gate * n   (a window darker on average than gate is black)
 *     GATED   white = steep ? M : B         (B there is the flat rule)
 *     EITHER  white = steep ? (M or B) : B
 *     BOTH    white = steep ? (M and B) : B
 * All products fit 32-bit signed integers. mean_bias is clamped to 0..50. */
void threshold_mean_cpu(const struct image_u8 *in, int mode, int radius, int gate, int mean_radius, int mean_bias,
			struct image_u8 *out);
/* Sauvola (mode THRESHOLD_SAUVOLA), bit for bit: over the square of radius
 * mean_radius (1..63) around p, cropped at the image border, S = the sum,
 * Q = the sum of squares and n = the count of the pixels; v = p's value,
 * K = k (percent, clamped to 0..100), R = range (clamped to 1..255):
 *     D = floor(sqrt(n * Q - S * S))     (n times the window's deviation)
 *     B = 100 * n * v - (100 - K) * S
 *     white = B > 0 and S >= gate * n and n * R * B > K * S * D
 * which is v > m * (1 + k * (s / R - 1)) with m the mean and s the
 * (population) deviation, D floored. The products fit 64-bit signed
 * integers for every window (n <= 127^2: n * R * B < 2^51, K * S * D < 2^50)
 * and n * Q - S * S < 2^42, so the square root, in IEEE double (correctly
 * rounded on every backend) and truncated, is exactly the floor. */
void threshold_sauvola_cpu(const struct image_u8 *in, int mean_radius, int k, int range, int gate,
			   struct image_u8 *out);
void median_cpu(const struct image_u8 *in, int size, struct image_u8 *out);
void gauss_cpu(const struct image_u8 *in, float sigma, struct image_u8 *out);

#define THRESHOLD_GAUSS_MAX_RADIUS 12

/* The integer Gaussian of the reference, which the GPU backend is handed
 * (cuda_threshold_config.gauss_taps) so that both agree bit for bit: taps
 * w[0] (centre) .. w[R], w[0] + 2 * (w[1] + .. + w[R]) = 256. Returns R
 * (0 and w[0] = 256 when sigma <= 0); w[R + 1 ..] are zero. A row pass
 * sums w[|i|] * p[x+i] (edges clamped) into 16 bits; the column pass sums
 * w[|j|] times those and rounds: out = (sum + 32768) >> 16. */
int threshold_gauss_taps(float sigma, int w[THRESHOLD_GAUSS_MAX_RADIUS + 1]);

#endif
