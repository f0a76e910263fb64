/*
 * bernsen_cuda.h - the GPU threshold stage, behind a plain C header.
 *
 * No CUDA type crosses this header: the rest of tabletrack builds and runs
 * without nvcc (cuda/none.c then answers ERR_UNSUPPORTED).
 *
 * One stream (at the device's highest priority, so that the frame path's
 * kernels go ahead of the objects stage's SIFT), pinned host buffers and
 * device buffers allocated at create time for max_width x max_height;
 * submit() queues the upload, the kernels and the download of a bit-packed
 * mask asynchronously and returns at once;
 * collect() waits (the one synchronisation a frame) and copies the mask out.
 * create() sets the process's CUDA scheduling to blocking sync, so waiting
 * threads sleep instead of spinning a core.
 * Output bits are identical to the CPU reference (src/threshold) for every
 * radius, gate, prefilter, local-mean method, band count and frame size
 * (tests/gpu/gpu_test.c, `make gpu-test`; also run under compute-sanitizer).
 *
 * Kernels: per-pixel Bernsen is one fused kernel a frame: a block loads a
 * 64-wide tile (16, 32 or 64 rows by radius) plus its clamped r-pixel apron
 * into shared memory, runs van Herk / Gil-Werman min and max down the
 * columns and then along the rows (one thread a block of 2r+1 pixels, for
 * min or for max), and each warp packs 32 results of the §1 rule with
 * __ballot_sync into the bit mask, which comes back with one copy. The
 * kernel is specialised for each radius 1..32 (compile-time loop bounds).
 * Local mean (modes 2..5): a column-sum kernel (one thread a column
 * sliding down 64 rows) then a row kernel (one block a row: prefix sums in
 * shared memory, 32 verdicts a warp by ballot) in the reference's 32-bit
 * integers; mode 2 writes the mask, modes 3..5 a second mask that the
 * Bernsen kernel reads where its window is steep. Whole frames, one band.
 * Sauvola (mode 6): the same column-sum kernel, also summing squares (32
 * bits), then a row kernel with one block a 1024-column piece of a row
 * (prefix sums of both over the piece and its aprons in shared memory) and
 * the reference's 64-bit rule with its IEEE double square root.
 * Median: forgetful selection in registers, one pixel a thread. Gaussian:
 * row then column pass with the integer taps of the config. Tiled:
 * tile min/max, tile thresholds, compare + ballot.
 *
 * A frame on one stream (every mode but banded Bernsen, profiling off)
 * is one call: its upload, kernels and download are captured as a CUDA
 * graph once per source buffer, size, mask slot and configuration (up to
 * eight kept, the least recently used replaced; a capture ring's three
 * slots and the two mask slots make six), and the per-pixel Bernsen
 * gate, which follows the frame, is set in the graph's kernel node rather
 * than keying another graph. On the H200 host each CUDA call cost the
 * submitting thread 10-20 us, a graph of two or three nodes about one
 * call. A capture that fails is logged once and frames are then queued
 * call by call. Unregistering a buffer drops the graphs that read it.
 *
 * 4K frames are cut into 6 bands (`bands` overrides): band i's kernel waits
 * only for the bands its rows and aprons read, so it runs while band i+1 is
 * uploading, and its mask rows come back at once. A banded frame is one
 * graph too, a branch for the uploads and one for the downloads forked
 * from and joined to the kernel stream (4K submit 74 -> 21-34 us on the
 * H100 host, the same wall time). At 1080p and below the bands' extra
 * nodes cost what the overlap saves (bands_for).
 *
 * Measured on an NVIDIA H100 80GB, PCIe Gen5 x16 (gpu_bench, median of 300
 * frames, registered frame -> mask on the host, r = 6): 640x480 39 us,
 * 1080p 98 us, 4K 270 us; at 1080p the upload takes 52 us (the PCIe floor
 * on that host), the kernel 28 us (r = 6) / 35 us (r = 32), the download
 * 14 us. At 640x480 the three operations' launch and wait latency
 * dominates (kernel 14.6 us). Frames not in a registered buffer are first
 * copied into pinned staging on the CPU (about 300 us at 1080p on that
 * host).
 */
#ifndef TT_CUDA_BERNSEN_H
#define TT_CUDA_BERNSEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Capacity of gauss_taps: the largest Gaussian radius the kernels take. */
#define CUDA_GAUSS_MAX_RADIUS 12

struct cuda_threshold_config {
	int max_width, max_height;
	int mode;           /* enum threshold_mode: 0 per-pixel Bernsen, 1 tiled, 2..5 local mean (mean,
			     * gated, either, both; threshold_mean_cpu() in src/threshold defines them),
			     * 6 Sauvola */
	int radius, gate, tile;
	int mean_radius;    /* local-mean modes: 1..63 */
	int mean_bias;      /* local-mean modes: percent, 0..50 */
	int sauvola_k;      /* mode 6 (Sauvola): percent, 0..100 */
	int sauvola_range;  /* mode 6: 1..255 (threshold_sauvola_cpu() in src/threshold defines the rule) */
	int median;         /* 0, 3, 5 */
	/* The Gaussian prefilter, owned by the CPU reference (src/threshold,
	 * threshold_gauss_taps()), which the kernels reproduce bit for bit:
	 * integer taps gauss_taps[0] (centre) .. gauss_taps[gauss_radius],
	 * summing to 256 over both sides. All zero (gauss_taps[0] == 0): no
	 * Gaussian. A row pass sums w[|i|] * p[x+i] (edges clamped) into 16
	 * bits; the column pass sums w[|j|] times those and rounds:
	 * out = (sum + 32768) >> 16. */
	int gauss_radius;   /* 0..CUDA_GAUSS_MAX_RADIUS */
	int gauss_taps[CUDA_GAUSS_MAX_RADIUS + 1];
	int profile;        /* 1: time each frame's stages with events (cuda_threshold_stage_times) */
	int kernel_variant; /* benchmarks only: 0 radius-specialised kernels (default), 1 generic */
	int bands;          /* rows cut into this many bands, 1..8, to overlap copies and kernels; 0 = auto */
};

struct cuda_threshold;

/* 0 when a usable GPU is present; else a negative ERR_* and why (a sentence). */
int cuda_threshold_probe(char *why, size_t cap);
/* The current device's memory in use, in bytes (every process's, as the
 * driver counts it: pages of 2 MB); 0 or ERR_DEVICE. For tests that check
 * that what an object took comes back. */
int cuda_device_memory_used(size_t *bytes);
struct cuda_threshold *cuda_threshold_create(const struct cuda_threshold_config *cfg, int *err);
void cuda_threshold_destroy(struct cuda_threshold *t);
int cuda_threshold_set_config(struct cuda_threshold *t, const struct cuda_threshold_config *cfg);
/* grey is borrowed until collect() returns. */
int cuda_threshold_submit(struct cuda_threshold *t, const uint8_t *grey, int width, int height, int stride);
/* Waits for the frame and writes height rows of stride_words 64-bit words
 * (bit x%64 of word x/64 = pixel x, 1 = white; bits past width zero).
 * ERR_AGAIN without a submit, ERR_SIZE when stride_words is too small,
 * ERR_DEVICE when the GPU failed (the caller falls back to the CPU). */
int cuda_threshold_collect(struct cuda_threshold *t, uint64_t *bits, int stride_words);
/* The same without the copy: *bits points into pinned memory, rows of
 * *stride_words = (width + 63) / 64 words. Two such buffers alternate per
 * submit, so the mask stays valid and unchanged through the next submit
 * (the overlapped one) until the submit after it, or destroy. *bits is
 * NULL when the frame was submitted with the download off (below). */
int cuda_threshold_collect_view(struct cuda_threshold *t, const uint64_t **bits, int *stride_words);
/* Whether the following submits bring the mask to the host (on: the
 * default). Off, for a consumer on the GPU (the GPU segmenter): the mask
 * stays on the device, collect_view hands out NULL and waits for the
 * kernels alone, and cuda_threshold_fetch_mask() downloads it later only
 * when someone asks (--dump, the window). */
void cuda_threshold_set_download(struct cuda_threshold *t, int on);
/* The mask of the frame last collected, downloaded now (on its own stream,
 * then waited for) when its submit left it on the GPU: the device masks
 * alternate per submit like the host ones, so this works until the second
 * submit after that frame's, and the result stays valid as long.
 * ERR_AGAIN before a collect. */
int cuda_threshold_fetch_mask(struct cuda_threshold *t, const uint64_t **bits, int *stride_words);
/* The device mask of the frame last submitted (height rows of *stride_words
 * 64-bit words, as collect() writes them) and the cudaStream_t its kernels
 * run on, for a GPU stage that reads the mask in place (cuda/label_cuda.h):
 * work queued on *stream after submit() sees the whole mask. The device
 * masks alternate per submit: the next submit's kernels write the other
 * one, so the mask stays unchanged until the submit after next.
 * ERR_AGAIN before the first submit. */
int cuda_threshold_device_mask(struct cuda_threshold *t, const void **dev_bits, int *stride_words, void **stream);
/* Block extremes: the darkest and brightest grey of each block of
 * CUDA_EXTREMES_BLOCK pixels a side of the frame as submitted (before any
 * prefilter), over every other row from the block's top, blocks cut short
 * at the right and bottom edges; ((width + 15) / 16) x ((height + 15) / 16)
 * blocks row by row, two bytes each (darkest, brightest). The pipeline's
 * ink scan reads them (src/pipeline/windows.h), which on the CPU took
 * 0.28 ms of a 1080p frame's submit; here they run beside the threshold's
 * kernels and come back with the frame. Identical to
 * threshold_block_extremes_cpu() (src/threshold/threshold.h). Whether the
 * following submits compute them (off: the default): */
#define CUDA_EXTREMES_BLOCK 16
void cuda_threshold_set_extremes(struct cuda_threshold *t, int on);
/* The extremes of the frame last collected (collect or collect_view), in
 * pinned memory valid as long as that frame's host mask (the buffers
 * alternate per submit). ERR_AGAIN when that frame was submitted without
 * them. */
int cuda_threshold_extremes(struct cuda_threshold *t, const uint8_t **lohi);
/* Page-locks a long-lived host buffer (a capture ring slot) so that frames
 * inside it are copied to the GPU by DMA with no staging memcpy. At most 16;
 * the buffer must stay allocated until unregistered or t is destroyed. */
int cuda_threshold_register(struct cuda_threshold *t, void *data, size_t bytes);
int cuda_threshold_unregister(struct cuda_threshold *t, void *data);
/* With cfg.profile set: GPU time (us) of the last collected frame's upload,
 * kernels and download. ERR_AGAIN when not profiling or nothing collected. */
int cuda_threshold_stage_times(struct cuda_threshold *t, float *upload_us, float *kernels_us, float *download_us);

#ifdef __cplusplus
}
#endif

#endif
