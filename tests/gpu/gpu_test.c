/*
 * gpu_test - the CUDA threshold stage against the CPU reference, bit for bit.
 *
 * Builds with only the CUDA toolkit and libc (no cmocka, libpng...):
 *     make gpu-test            (or tests/gpu/run_on_device.sh)
 *     build/gpu/gpu_test [DIR] DIR: optional binary PGM (P5) frames to test too
 * Every radius 1..32, gates 0/1/32/255 and random ones, odd sizes, 1-pixel
 * rows and columns, medians, Gaussians, tiled mode, the local-mean modes
 * (every mean radius 1..63 and bias 0..50; a PASS/FAIL line a mode), Sauvola
 * (every mean radius, k and range extremes, a 4K checkerboard), frames cut into 1..8
 * bands (each case runs with the automatic and a forced band count), the object API (split
 * submit/collect, collect_view, registered buffers: also a ring of three with the gate
 * changing frame to frame and one buffer replaced; size changes). Masks are
 * compared whole words, padding bits included. Canny (cuda/canny_cuda.h)
 * against src/outline/canny.h: edges, magnitude and direction on every
 * pixel (and pixels outside the rectangle left alone), every sigma 0..4.0
 * with several threshold pairs on odd sizes, random rectangles, 1080p and
 * 4K, the real frames. Prints "N passed, N failed";
 * exits 0 only when nothing failed. Exit 77 when no GPU is usable.
 * The GPU segmenter (cuda/label_cuda.h) against segment_process(): random
 * masks of every kind, size and density, odd widths, adjacency caps 2..64,
 * run and region overflow, 1080p and 4K frames, a mask labelled in place
 * on the threshold's stream, and the frames of DIR; trees compared array
 * for array. The engine with the GPU segmenter against the same engine
 * segmenting on the CPU (both thresholding on CUDA): every detection list
 * equal byte for byte, frames run in the pipeline's overlapped order, the
 * mask left on the GPU and fetched after the next frame's submit equal to
 * the downloaded one.
 * The daemon's default GPU engine created, run, its third scale switched
 * off and on, destroyed, 24 times: device memory, the heap and the
 * resident set do not grow.
 * The GPU SIFT (cuda/sift_cuda.h) on textured pictures at 640x480, 1080p
 * and odd sizes: against its CPU simulation (tests/common/sift_sim.h,
 * near-identical: repeatability and descriptor agreement >= 0.99), against
 * OpenCV's SIFT when built in (PASS when GPU-vs-OpenCV repeatability, both
 * ways, and descriptor agreement are >= 0.95, as tests/common/sift_compare.h
 * defines them), two runs identical, tiny frames, strides, slot overflow;
 * and recognition: objects learned with OpenCV (the GPU without it),
 * recognised from GPU keypoints in scenes at known poses (angle within 2
 * degrees, position within 2 px; pictures 168 px across and more, as the
 * issue's recall target).
 */
#include <dirent.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../cuda/bernsen_cuda.h"
#include "../../cuda/canny_cuda.h"
#include "../../cuda/label_cuda.h"
#include "../../cuda/sift_cuda.h"
#include "../../src/objects/recognise.h"
#include "../../src/objects/sift.h"
#include "../common/sift_compare.h"
#include "../common/sift_scene.h"
#include "../common/sift_sim.h"
#include "../../src/segment/segment.h"
#include "../common/label_cases.h"
#include "../../src/core/err.h"
#include "../../src/core/log.h"
#include "../../src/outline/canny.h"
#include "../../src/threshold/threshold.h"
#include "../../src/fiducial/trees.h"
#include "../../src/pipeline/engine.h"
#include "../../src/pipeline/settings.h"
#include "../../src/config/config.h"
#include "../../src/track/track.h"

static int n_pass, n_fail;
static int quick; /* GPU_TEST_QUICK=1: a smaller set, for the sanitizers */
static uint32_t rng_state = 0x1234567u;

static uint32_t rnd(void)
{
	uint32_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return rng_state = x;
}

static void fill(struct image_u8 *img, int kind)
{
	int base = (int)(rnd() % 256), span = 1 + (int)(rnd() % 48);
	for (int y = 0; y < img->height; y++) {
		uint8_t *row = image_u8_row(img, y);
		for (int x = 0; x < img->width; x++) {
			int v;
			if (kind == 0)
				v = (int)(rnd() & 255);
			else if (kind == 1)
				v = base - span / 2 + (int)(rnd() % (uint32_t)span);
			else
				v = (x * 255) / (img->width + 1) + (y & 15) + (int)(rnd() % 9) - 4;
			row[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	}
}

static void check(int ok, const char *what)
{
	if (ok) {
		n_pass++;
	} else {
		n_fail++;
		if (n_fail <= 40)
			printf("FAIL: %s\n", what);
	}
}

static struct threshold *cpu, *gpu;
static struct bitmask m_cpu, m_gpu;

static int masks_equal(const struct bitmask *a, const struct bitmask *b, int w, int h, char *where, size_t cap)
{
	int words = (w + 63) / 64;
	for (int y = 0; y < h; y++)
		for (int i = 0; i < words; i++) {
			uint64_t x = bitmask_row(a, y)[i], z = bitmask_row(b, y)[i];
			if (x != z) {
				snprintf(where, cap, "row %d word %d: cpu %016llx gpu %016llx", y, i,
					 (unsigned long long)x, (unsigned long long)z);
				return 0;
			}
		}
	return 1;
}

/* Whether the GPU's block extremes of the frame last collected are the
 * reference's (threshold_block_extremes_cpu) of in. */
static int extremes_equal(const struct image_u8 *in, char *where, size_t cap)
{
	static uint8_t ref[2 * 240 * 135];
	const uint8_t *lohi;
	const int n = threshold_blocks_x(in->width) * threshold_blocks_y(in->height);
	if (threshold_extremes(gpu, &lohi) != 0) {
		snprintf(where, cap, "no extremes");
		return 0;
	}
	threshold_block_extremes_cpu(in, ref);
	for (int i = 0; i < 2 * n; i++)
		if (lohi[i] != ref[i]) {
			snprintf(where, cap, "extremes of block %d: cpu %d gpu %d", i / 2, ref[i], lohi[i]);
			return 0;
		}
	return 1;
}

/* The GPU twice against one CPU run: with the band count asked for (0 = the
 * stage's own choice) and with a forced one (2..8 in turn), so that every
 * case also checks the banded upload/kernel/download overlap. The block
 * extremes are asked for on the second run and checked too. */
static void compare(const struct threshold_config *cfg, const struct image_u8 *in, const char *label)
{
	static int turn;
	char what[512], where[160] = "";
	struct threshold_config g = *cfg;
	int ok = threshold_set_config(cpu, cfg) == 0;
	m_cpu.width = m_gpu.width = in->width; /* both masks are allocated for 3840x2160 */
	m_cpu.height = m_gpu.height = in->height;
	ok = ok && threshold_process(cpu, in, &m_cpu) == 0;
	for (int pass = 0; pass < 2; pass++) {
		int one = ok;
		where[0] = 0;
		g.gpu_bands = pass == 0 ? cfg->gpu_bands : 2 + turn++ % 7;
		one = one && threshold_set_config(gpu, &g) == 0;
		memset(m_gpu.bits, 0xa5, (size_t)m_gpu.stride_words * 2160 * 8); /* poison */
		one = one && threshold_set_extremes(gpu, pass == 1) == (pass == 1);
		one = one && threshold_process(gpu, in, &m_gpu) == 0;
		one = one && strcmp(threshold_backend_name(gpu), "cuda") == 0; /* no silent fallback */
		one = one && masks_equal(&m_cpu, &m_gpu, in->width, in->height, where, sizeof where);
		one = one && (pass == 1 ? extremes_equal(in, where, sizeof where)
					: threshold_extremes(gpu, &(const uint8_t *){NULL}) == ERR_AGAIN);
		snprintf(what, sizeof what,
			 "%s %dx%d mode=%d r=%d gate=%d tile=%d mean_radius=%d mean_bias=%d sauvola_k=%d "
			 "sauvola_range=%d median=%d sigma=%.2f bands=%d %s",
			 label, in->width, in->height, cfg->mode, cfg->radius, cfg->gate, cfg->tile, cfg->mean_radius,
			 cfg->mean_bias, cfg->sauvola_k, cfg->sauvola_range, cfg->median, (double)cfg->gauss_sigma,
			 g.gpu_bands, where);
		check(one, what);
	}
}

static struct threshold_config base_config(int w, int h)
{
	struct threshold_config c = {.max_width = w, .max_height = h, .mode = THRESHOLD_BERNSEN, .radius = 6,
				     .gate = 32, .tile = 10, .mean_radius = 16, .mean_bias = 16, .sauvola_k = 20,
				     .sauvola_range = 128, .median = 0, .gauss_sigma = 0.0f};
	return c;
}

static int read_pgm(const char *path, struct image_u8 *img)
{
	FILE *f = fopen(path, "rb");
	int w, h, maxv, rc = -1;
	if (!f)
		return -1;
	if (fscanf(f, "P5 %d %d %d", &w, &h, &maxv) == 3 && maxv == 255 && fgetc(f) != EOF &&
	    image_u8_alloc(img, w, h) == 0) {
		rc = 0;
		for (int y = 0; y < h && rc == 0; y++)
			if (fread(image_u8_row(img, y), 1, (size_t)w, f) != (size_t)w)
				rc = -1;
		if (rc)
			image_u8_free(img);
	}
	fclose(f);
	return rc;
}

static void test_sizes_radii_gates(void)
{
	static const int sizes[][2] = {{1, 1},   {1, 5},    {5, 1},    {1, 200},  {200, 1},  {63, 17},  {64, 64},
				       {65, 65}, {127, 3},  {129, 130}, {333, 97}, {640, 480}, {1279, 719}};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		struct image_u8 in;
		if (image_u8_alloc(&in, sizes[s][0], sizes[s][1]) < 0)
			abort();
		if (quick && (sizes[s][0] > 400 || s % 2))
			continue;
		for (int r = 1; r <= 32; r++) {
			if (quick && r != 1 && r != 2 && r != 7 && r != 32)
				continue;
			fill(&in, (int)((r + s) % 3));
			int gates[] = {0, 1, 32, 255, (int)(rnd() % 256)};
			for (int g = 0; g < 5; g++) {
				struct threshold_config c = base_config(1920, 1080);
				c.radius = r;
				c.gate = gates[g];
				compare(&c, &in, "bernsen");
			}
		}
		image_u8_free(&in);
	}
}

static void test_big_frames(void)
{
	static const int sizes[][2] = {{1920, 1080}, {3840, 2160}, {1921, 1081}};
	static const int radii[] = {1, 6, 13, 32};
	if (quick)
		return;
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		struct image_u8 in;
		if (image_u8_alloc(&in, sizes[s][0], sizes[s][1]) < 0)
			abort();
		for (size_t ri = 0; ri < sizeof radii / sizeof radii[0]; ri++) {
			fill(&in, (int)ri % 3);
			struct threshold_config c = base_config(3840, 2160);
			c.radius = radii[ri];
			compare(&c, &in, "big");
			c.gate = 0;
			compare(&c, &in, "big");
		}
		image_u8_free(&in);
	}
}

static void test_prefilters_and_tiled(void)
{
	static const int sizes[][2] = {{1, 1}, {1, 77}, {77, 1}, {2, 2}, {5, 5}, {97, 41}, {640, 480}, {1920, 1080}};
	static const float sigmas[] = {0.3f, 0.7f, 1.0f, 1.4f, 2.5f, 4.0f};
	static const int tiles[] = {2, 3, 10, 12, 33, 64};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		struct image_u8 in;
		if (quick && sizes[s][0] > 400)
			continue;
		if (image_u8_alloc(&in, sizes[s][0], sizes[s][1]) < 0)
			abort();
		for (int kind = 0; kind < 3; kind++) {
			fill(&in, kind);
			struct threshold_config c = base_config(1920, 1080);
			for (int med = 3; med <= 5; med += 2) {
				c.median = med;
				c.radius = 1 + (int)(rnd() % 32);
				compare(&c, &in, "median");
			}
			c.median = 0;
			for (size_t i = 0; i < sizeof sigmas / sizeof sigmas[0]; i++) {
				c.gauss_sigma = sigmas[i];
				compare(&c, &in, "gauss");
			}
			c.median = 5;
			c.gauss_sigma = 1.2f;
			compare(&c, &in, "median+gauss");
			c.median = 0;
			c.gauss_sigma = 0.0f;
			c.mode = THRESHOLD_TILED;
			for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
				c.tile = tiles[i];
				c.gate = i % 2 ? 0 : 32;
				compare(&c, &in, "tiled");
			}
			c.median = 3;
			compare(&c, &in, "tiled+median");
		}
		image_u8_free(&in);
	}
}

/* The local-mean modes (mean, gated, either, both): every mean radius 1..63
 * and every bias 0..50 across odd sizes, with Bernsen radii and gates
 * varied, prefilters on some; each group prints PASS or FAIL. */
static void test_mean_modes(void)
{
	static const int sizes[][2] = {{1, 1},   {1, 130}, {130, 1},  {2, 3},     {63, 17},  {65, 65},
				       {127, 3}, {129, 130}, {333, 97}, {640, 480}, {1279, 719}, {1921, 1081}};
	static const char *const names[] = {"mean", "gated", "either", "both"};
	for (int mode = THRESHOLD_MEAN; mode <= THRESHOLD_BOTH; mode++) {
		int fails = n_fail;
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
			struct image_u8 in;
			if (quick && (sizes[s][0] > 400 || s % 2))
				continue;
			if (image_u8_alloc(&in, sizes[s][0], sizes[s][1]) < 0)
				abort();
			for (int mr = 1; mr <= 63; mr++) {
				if ((quick || sizes[s][0] > 1000) && mr % 8 != 1 && mr != 63)
					continue;
				fill(&in, (int)((size_t)mr + s) % 3);
				struct threshold_config c = base_config(1920, 1080);
				c.mode = mode;
				c.mean_radius = mr;
				c.mean_bias = (int)(rnd() % 51);
				c.radius = 1 + (int)(rnd() % 32);
				int gates[] = {0, 32, 255, (int)(rnd() % 256)};
				c.gate = gates[mr % 4];
				compare(&c, &in, names[mode - THRESHOLD_MEAN]);
			}
			image_u8_free(&in);
		}
		struct image_u8 in;
		if (image_u8_alloc(&in, 301, 203) < 0)
			abort();
		for (int bias = 0; bias <= 50; bias++) {
			fill(&in, bias % 3);
			struct threshold_config c = base_config(1920, 1080);
			c.mode = mode;
			c.mean_bias = bias;
			c.mean_radius = 1 + bias % 63;
			c.gate = (int)(rnd() % 256);
			c.median = bias % 3 == 0 ? 3 : bias % 3 == 1 ? 5 : 0;
			c.gauss_sigma = bias % 4 == 0 ? 1.0f : 0.0f;
			compare(&c, &in, names[mode - THRESHOLD_MEAN]);
		}
		image_u8_free(&in);
		printf("%s: mode %s (every mean radius and bias)\n", n_fail == fails ? "PASS" : "FAIL",
		       names[mode - THRESHOLD_MEAN]);
	}
}

/* Sauvola: every mean radius 1..63, k 0..100 and range 1..255 (extremes and
 * random) across odd sizes, widths either side of the row kernel's
 * 1024-column pieces, prefilters on some; and the largest sums and
 * deviation (a 0/255 checkerboard, radius 63) on a 4K frame. One PASS/FAIL
 * line. */
static void test_sauvola(void)
{
	static const int sizes[][2] = {{1, 1},     {1, 130},   {130, 1},   {2, 3},    {63, 17},   {65, 65},
				       {127, 3},   {129, 130}, {333, 97},  {640, 480}, {1023, 31}, {1024, 33},
				       {1025, 35}, {2049, 19}, {1279, 719}, {1921, 1081}};
	static const int ks[] = {0, 1, 20, 50, 100};
	static const int ranges[] = {1, 64, 128, 255};
	int fails = n_fail;
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		struct image_u8 in;
		if (quick && (sizes[s][0] > 400 || s % 2))
			continue;
		if (image_u8_alloc(&in, sizes[s][0], sizes[s][1]) < 0)
			abort();
		for (int mr = 1; mr <= 63; mr++) {
			if ((quick || sizes[s][0] > 1000) && mr % 8 != 1 && mr != 63)
				continue;
			fill(&in, (int)((size_t)mr + s) % 3);
			struct threshold_config c = base_config(3840, 2160);
			c.mode = THRESHOLD_SAUVOLA;
			c.mean_radius = mr;
			c.sauvola_k = mr % 3 ? ks[mr % 5] : (int)(rnd() % 101);
			c.sauvola_range = mr % 2 ? ranges[mr % 4] : 1 + (int)(rnd() % 255);
			int gates[] = {0, 32, 255, (int)(rnd() % 256)};
			c.gate = gates[mr % 4];
			compare(&c, &in, "sauvola");
		}
		image_u8_free(&in);
	}
	struct image_u8 in;
	if (image_u8_alloc(&in, 301, 203) < 0)
		abort();
	for (int i = 0; i < 20; i++) {
		fill(&in, i % 3);
		struct threshold_config c = base_config(3840, 2160);
		c.mode = THRESHOLD_SAUVOLA;
		c.mean_radius = 1 + (int)(rnd() % 63);
		c.sauvola_k = (int)(rnd() % 101);
		c.sauvola_range = 1 + (int)(rnd() % 255);
		c.gate = (int)(rnd() % 64);
		c.median = i % 3 == 0 ? 3 : i % 3 == 1 ? 5 : 0;
		c.gauss_sigma = i % 4 == 0 ? 1.0f : 0.0f;
		compare(&c, &in, "sauvola+prefilters");
	}
	image_u8_free(&in);
	if (!quick) {
		if (image_u8_alloc(&in, 3840, 2160) < 0)
			abort();
		for (int y = 0; y < 2160; y++)
			for (int x = 0; x < 3840; x++)
				image_u8_row(&in, y)[x] = (uint8_t)((x + y) & 1 ? 255 : 0);
		for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++) {
			struct threshold_config c = base_config(3840, 2160);
			c.mode = THRESHOLD_SAUVOLA;
			c.mean_radius = 63;
			c.sauvola_k = ks[k];
			c.sauvola_range = ranges[k % 4];
			c.gate = k % 2 ? 32 : 0;
			compare(&c, &in, "sauvola 4K checkerboard");
		}
		fill(&in, 0);
		struct threshold_config c = base_config(3840, 2160);
		c.mode = THRESHOLD_SAUVOLA;
		c.mean_radius = 63;
		compare(&c, &in, "sauvola 4K");
		image_u8_free(&in);
	}
	printf("%s: mode sauvola (every mean radius, k and range extremes, 4K)\n", n_fail == fails ? "PASS" : "FAIL");
}

/* Gives an async submit time to finish its download (a 720p frame takes
 * well under a millisecond), so that a download into a buffer still being
 * read would show in the comparison that follows. */
static int settle(void)
{
	struct timespec ts = {0, 5000000};
	nanosleep(&ts, NULL);
	return 1;
}

/* A capture ring's frames as the pipeline hands them over: three
 * registered buffers in turn, the gate changing frame to frame (the
 * engine's frame gate; the graph path sets it in its kernel node), both
 * scales' configurations, then a buffer unregistered, freed and another
 * registered (perhaps at the same address): every mask equals the CPU. */
static void test_api_ring(const struct threshold_config *base)
{
	struct image_u8 ring[3];
	char where[160];
	for (int i = 0; i < 3; i++) {
		if (image_u8_alloc(&ring[i], 640, 480) < 0)
			abort();
		fill(&ring[i], i);
		check(threshold_register_buffer(gpu, ring[i].data, (size_t)ring[i].stride * 480) == 0, "ring: register");
	}
	m_cpu.width = m_gpu.width = 640;
	m_cpu.height = m_gpu.height = 480;
	static const int gates[] = {32, 32, 20, 32, 45, 8, 8, 32, 0, 255, 31, 33};
	for (int round = 0; round < 3; round++) {
		int ok = 1;
		for (int k = 0; k < 24 && ok; k++) {
			struct threshold_config c = *base;
			c.radius = round == 1 ? 2 : 8;
			c.median = round == 1 ? 3 : 0;
			c.gate = gates[k % 12];
			struct image_u8 *f = &ring[k % 3];
			if (k % 5 == 4)
				fill(f, k % 3); /* a new frame in the slot */
			ok = threshold_set_config(cpu, &c) == 0 && threshold_set_config(gpu, &c) == 0 &&
			     threshold_process(cpu, f, &m_cpu) == 0 && threshold_process(gpu, f, &m_gpu) == 0 &&
			     masks_equal(&m_cpu, &m_gpu, 640, 480, where, sizeof where);
		}
		check(ok, round == 1 ? "ring: radius 2 after a median, gates changing" : "ring: gates changing");
		if (round == 1) {
			check(threshold_unregister_buffer(gpu, ring[0].data) == 0, "ring: unregister");
			image_u8_free(&ring[0]);
			if (image_u8_alloc(&ring[0], 640, 480) < 0)
				abort();
			fill(&ring[0], 2);
			check(threshold_register_buffer(gpu, ring[0].data, (size_t)ring[0].stride * 480) == 0,
			      "ring: register a new buffer");
		}
	}
	for (int i = 0; i < 3; i++) {
		check(threshold_unregister_buffer(gpu, ring[i].data) == 0, "ring: unregister");
		image_u8_free(&ring[i]);
	}
	threshold_set_config(cpu, base);
	threshold_set_config(gpu, base);
	m_cpu.width = m_gpu.width = 1280;
	m_cpu.height = m_gpu.height = 720;
}

static void test_api(void)
{
	struct threshold_config c = base_config(1920, 1080);
	struct image_u8 a, b;
	struct bitmask view, ref;
	char where[160];
	if (image_u8_alloc(&a, 1280, 720) < 0 || image_u8_alloc(&b, 1280, 720) < 0 || bitmask_alloc(&ref, 1280, 720) < 0)
		abort();
	fill(&a, 0);
	fill(&b, 2);
	threshold_set_config(cpu, &c);
	threshold_set_config(gpu, &c);
	m_cpu.width = m_gpu.width = 1280;
	m_cpu.height = m_gpu.height = 720;
	/* collect_view gives what collect gives */
	threshold_process(cpu, &a, &m_cpu);
	int ok = threshold_submit(gpu, &a) == 0 && threshold_collect_view(gpu, &view) == 0;
	check(ok && view.width == 1280 && view.height == 720 && masks_equal(&m_cpu, &view, 1280, 720, where, sizeof where),
	      "collect_view equals the CPU");
	/* a registered (page-locked) buffer takes the DMA path */
	ok = threshold_register_buffer(gpu, b.data, (size_t)b.stride * (size_t)b.height) == 0;
	check(ok, "register a frame buffer");
	threshold_process(cpu, &b, &ref);
	ok = threshold_process(gpu, &b, &m_gpu) == 0 && masks_equal(&ref, &m_gpu, 1280, 720, where, sizeof where);
	check(ok, "registered buffer equals the CPU");
	/* a second submit before collect replaces the first */
	ok = threshold_submit(gpu, &a) == 0 && threshold_submit(gpu, &b) == 0 && threshold_collect(gpu, &m_gpu) == 0 &&
	     masks_equal(&ref, &m_gpu, 1280, 720, where, sizeof where);
	check(ok, "submit twice, collect the second");
	check(threshold_collect(gpu, &m_gpu) == ERR_AGAIN, "collect without submit is ERR_AGAIN");
	check(threshold_unregister_buffer(gpu, b.data) == 0, "unregister");
	test_api_ring(&c);
	/* sizes change frame to frame in one object */
	struct image_u8 small = {.width = 333, .height = 2, .stride = a.stride, .data = a.data};
	compare(&c, &small, "resize");
	compare(&c, &a, "resize");
	m_cpu.width = m_gpu.width = 1280;
	m_cpu.height = m_gpu.height = 720;
	/* overlap: submit N+1 while "working" on N, as the pipeline does */
	ok = 1;
	for (int i = 0; i < 20 && ok; i++) {
		struct image_u8 *f = i % 2 ? &a : &b;
		ok = threshold_submit(gpu, f) == 0 && threshold_collect(gpu, &m_gpu) == 0;
		threshold_process(cpu, f, &m_cpu);
		ok = ok && masks_equal(&m_cpu, &m_gpu, 1280, 720, where, sizeof where);
	}
	check(ok, "20 alternating frames");
	/* the engine's order: collect_view N, submit N+1 (downloads while N is
	 * read), read N, collect_view N+1: N's view must not change under the
	 * overlapped submit */
	threshold_process(cpu, &a, &m_cpu);
	threshold_process(cpu, &b, &ref);
	ok = threshold_submit(gpu, &a) == 0;
	for (int i = 0; i < 20 && ok; i++) {
		const struct bitmask *want = i % 2 ? &ref : &m_cpu;
		ok = threshold_collect_view(gpu, &view) == 0 && threshold_submit(gpu, i % 2 ? &a : &b) == 0 &&
		     settle() && masks_equal(want, &view, 1280, 720, where, sizeof where);
	}
	ok = ok && threshold_collect_view(gpu, &view) == 0;
	check(ok, "collect_view N stays N through submit N+1");
	/* the block extremes in the same order: N's stay N's through the
	 * submit of N+1 (registered and staged frames alike) */
	ok = threshold_set_extremes(gpu, true) && threshold_register_buffer(gpu, b.data, (size_t)b.stride * 720) == 0 &&
	     threshold_submit(gpu, &a) == 0;
	for (int i = 0; i < 20 && ok; i++) {
		ok = threshold_collect_view(gpu, &view) == 0 && threshold_submit(gpu, i % 2 ? &a : &b) == 0 &&
		     settle() && extremes_equal(i % 2 ? &b : &a, where, sizeof where);
	}
	ok = ok && threshold_collect_view(gpu, &view) == 0 && threshold_unregister_buffer(gpu, b.data) == 0;
	check(ok, "extremes of N stay N's through submit N+1");
	threshold_set_extremes(gpu, false);
	ok = threshold_submit(gpu, &a) == 0 && threshold_collect_view(gpu, &view) == 0;
	check(ok && threshold_extremes(gpu, &(const uint8_t *){NULL}) == ERR_AGAIN, "no extremes when not asked for");
	image_u8_free(&a);
	image_u8_free(&b);
	bitmask_free(&ref);
}

static void test_real_frames(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[1024];
	int n = 0;
	if (!d) {
		printf("no frame folder %s: real frames skipped\n", dir);
		return;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 4, ".pgm") != 0)
			continue;
		struct image_u8 in;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (read_pgm(path, &in) < 0 || in.width > 3840 || in.height > 2160) {
			check(0, path);
			continue;
		}
		for (int r = 1; r <= 32; r++) {
			struct threshold_config c = base_config(3840, 2160);
			c.radius = r;
			c.gate = r % 2 ? 32 : 0;
			compare(&c, &in, e->d_name);
		}
		struct threshold_config c = base_config(3840, 2160);
		c.median = 3;
		c.gauss_sigma = 1.0f;
		compare(&c, &in, e->d_name);
		image_u8_free(&in);
		n++;
	}
	closedir(d);
	printf("real frames: %d from %s\n", n, dir);
}

/* ---- Canny ---- */

#define CANNY_W 3840
#define CANNY_H 2160
static struct canny *canny_cpu;
static struct cuda_canny *canny_gpu;
static uint8_t *ce_cpu, *ce_gpu, *cd_cpu, *cd_gpu;
static uint16_t *cm_cpu, *cm_gpu;

/* Discs and boxes of random grey over noise: edges of every direction and contrast. */
static void fill_shapes(struct image_u8 *img)
{
	int w = img->width, h = img->height, bg = (int)(rnd() % 256), noise = (int)(rnd() % 24);
	int n = 1 + (int)(rnd() % 12);
	for (int y = 0; y < h; y++)
		memset(image_u8_row(img, y), bg, (size_t)w);
	for (int k = 0; k < n; k++) {
		int cx = (int)(rnd() % (uint32_t)w), cy = (int)(rnd() % (uint32_t)h), v = (int)(rnd() % 256);
		int r = 1 + (int)(rnd() % (uint32_t)(1 + (w + h) / 8)), disc = (int)(rnd() & 1);
		for (int y = cy - r; y <= cy + r; y++)
			for (int x = cx - r; x <= cx + r; x++)
				if (x >= 0 && y >= 0 && x < w && y < h &&
				    (!disc || (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r))
					image_u8_row(img, y)[x] = (uint8_t)v;
	}
	if (noise)
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				int v = image_u8_row(img, y)[x] + (int)(rnd() % (uint32_t)(2 * noise + 1)) - noise;
				image_u8_row(img, y)[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
			}
}

/* One run on both, rectangle r (NULL: whole frame); every array compared
 * over the whole frame, so writes outside the rectangle show too. */
static void canny_compare(const struct image_u8 *in, int sigma, int low, int high, const struct canny_rect *r,
			  const char *label)
{
	const int w = in->width, h = in->height;
	const size_t n = (size_t)w * h;
	char what[256];
	struct canny_config cc = {CANNY_W, CANNY_H, sigma, low, high};
	struct cuda_canny_config gc;
	memset(&gc, 0, sizeof gc);
	gc.max_width = CANNY_W;
	gc.max_height = CANNY_H;
	gc.low = low;
	gc.high = high;
	snprintf(what, sizeof what, "canny %s %dx%d sigma %d low %d high %d rect %d,%d %dx%d", label, w, h, sigma, low,
		 high, r ? r->x : 0, r ? r->y : 0, r ? r->width : w, r ? r->height : h);
	if (canny_set_config(canny_cpu, &cc) < 0) {
		check(0, what);
		return;
	}
	gc.gauss_radius = canny_taps(canny_cpu, gc.gauss_taps);
	if (cuda_canny_set_config(canny_gpu, &gc) < 0) {
		check(0, what);
		return;
	}
	memset(ce_cpu, 0xee, n);
	memset(ce_gpu, 0xee, n);
	memset(cd_cpu, 0xee, n);
	memset(cd_gpu, 0xee, n);
	memset(cm_cpu, 0xee, n * sizeof *cm_cpu);
	memset(cm_gpu, 0xee, n * sizeof *cm_gpu);
	struct canny_out o = {ce_cpu, cm_cpu, cd_cpu, w};
	struct canny_rect all = {0, 0, w, h};
	int e1 = canny_process_roi(canny_cpu, in, r ? r : &all, &o);
	int e2 = cuda_canny_submit(canny_gpu, in->data, w, h, in->stride, r ? r->x : 0, r ? r->y : 0,
				   r ? r->width : w, r ? r->height : h);
	int e3 = e2 < 0 ? e2 : cuda_canny_collect(canny_gpu, ce_gpu, cm_gpu, cd_gpu, w);
	if (e1 < 0 || e2 < 0 || e3 < 0) {
		printf("  %s: errors %d %d %d\n", what, e1, e2, e3);
		check(0, what);
		return;
	}
	int ok = memcmp(ce_cpu, ce_gpu, n) == 0 && memcmp(cm_cpu, cm_gpu, n * sizeof *cm_cpu) == 0 &&
		 memcmp(cd_cpu, cd_gpu, n) == 0;
	if (!ok) {
		for (size_t i = 0; i < n; i++)
			if (ce_cpu[i] != ce_gpu[i] || cm_cpu[i] != cm_gpu[i] || cd_cpu[i] != cd_gpu[i]) {
				printf("  %s: first difference at %zu,%zu: edge %d/%d mag %d/%d dir %d/%d (cpu/gpu)\n",
				       what, i % (size_t)w, i / (size_t)w, ce_cpu[i], ce_gpu[i], cm_cpu[i], cm_gpu[i],
				       cd_cpu[i], cd_gpu[i]);
				break;
			}
	}
	check(ok, what);
}

static void random_thresholds(int *low, int *high)
{
	static const int pairs[][2] = {{1, 1}, {20, 60}, {50, 150}, {100, 300}, {2040, 2040}, {1, 2040}};
	int k = (int)(rnd() % 8);
	if (k < 6) {
		*low = pairs[k][0];
		*high = pairs[k][1];
	} else {
		*low = 1 + (int)(rnd() % 400);
		*high = *low + (int)(rnd() % 600);
	}
}

static struct canny_rect random_rect(int w, int h)
{
	struct canny_rect r;
	r.x = (int)(rnd() % (uint32_t)(w + 4)) - 2;
	r.y = (int)(rnd() % (uint32_t)(h + 4)) - 2;
	r.width = (int)(rnd() % (uint32_t)(w + 2));
	r.height = (int)(rnd() % (uint32_t)(h + 2));
	return r;
}

static void test_canny(const char *dir)
{
	int err;
	struct canny_config cc = {CANNY_W, CANNY_H, 14, 20, 60};
	struct cuda_canny_config gc;
	size_t n = (size_t)CANNY_W * CANNY_H;
	int f0 = n_fail;
	memset(&gc, 0, sizeof gc);
	canny_cpu = canny_create(&cc, &err);
	gc.max_width = CANNY_W;
	gc.max_height = CANNY_H;
	gc.low = 20;
	gc.high = 60;
	gc.gauss_radius = canny_taps(canny_cpu, gc.gauss_taps);
	canny_gpu = cuda_canny_create(&gc, &err);
	ce_cpu = malloc(n);
	ce_gpu = malloc(n);
	cd_cpu = malloc(n);
	cd_gpu = malloc(n);
	cm_cpu = malloc(n * sizeof *cm_cpu);
	cm_gpu = malloc(n * sizeof *cm_gpu);
	if (!canny_cpu || !canny_gpu || !ce_cpu || !ce_gpu || !cd_cpu || !cd_gpu || !cm_cpu || !cm_gpu) {
		check(0, "canny: create");
		goto done;
	}
	/* every sigma, odd sizes, whole frames and rectangles */
	for (int sigma = 0; sigma <= CANNY_MAX_SIGMA_TENTHS; sigma++) {
		int reps = quick ? 2 : 8;
		for (int k = 0; k < reps; k++) {
			int w = 1 + (int)(rnd() % 300), h = 1 + (int)(rnd() % 200), low, high;
			struct image_u8 in;
			if (k == 0) {
				w = 1 + (int)(rnd() % 3);
				h = 1 + (int)(rnd() % 40);
			}
			if (image_u8_alloc(&in, w, h) < 0) {
				check(0, "canny: alloc");
				continue;
			}
			if (k % 3 == 2)
				fill(&in, (int)(rnd() % 3));
			else
				fill_shapes(&in);
			random_thresholds(&low, &high);
			canny_compare(&in, sigma, low, high, NULL, "random");
			for (int j = 0; j < 3; j++) {
				struct canny_rect r = random_rect(w, h);
				random_thresholds(&low, &high);
				canny_compare(&in, sigma, low, high, &r, "roi");
			}
			image_u8_free(&in);
		}
	}
	/* big frames */
	static const int big[][2] = {{640, 480}, {1920, 1080}, {3840, 2160}};
	for (int b = 0; b < (quick ? 2 : 3); b++) {
		struct image_u8 in;
		if (image_u8_alloc(&in, big[b][0], big[b][1]) < 0)
			continue;
		fill_shapes(&in);
		canny_compare(&in, 14, 20, 60, NULL, "big");
		canny_compare(&in, 0, 1, 1, NULL, "big");
		canny_compare(&in, 40, 10, 30, NULL, "big");
		struct canny_rect r = {big[b][0] / 3, big[b][1] / 4, big[b][0] / 2, big[b][1] / 3};
		canny_compare(&in, 14, 20, 60, &r, "big-roi");
		image_u8_free(&in);
	}
	/* the real frames */
	if (dir && !quick) {
		DIR *d = opendir(dir);
		struct dirent *e;
		char path[1024];
		int nf = 0;
		while (d && (e = readdir(d))) {
			size_t len = strlen(e->d_name);
			if (len < 5 || strcmp(e->d_name + len - 4, ".pgm") != 0)
				continue;
			struct image_u8 in;
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			if (read_pgm(path, &in) < 0 || in.width > CANNY_W || in.height > CANNY_H) {
				check(0, path);
				continue;
			}
			canny_compare(&in, 14, 20, 60, NULL, e->d_name);
			canny_compare(&in, 10, 40, 120, NULL, e->d_name);
			canny_compare(&in, 25, 8, 24, NULL, e->d_name);
			struct canny_rect r = random_rect(in.width, in.height);
			canny_compare(&in, 14, 20, 60, &r, e->d_name);
			image_u8_free(&in);
			nf++;
		}
		if (d)
			closedir(d);
		printf("canny: real frames: %d\n", nf);
	}
done:
	printf("%s: canny (edges, magnitude, direction; every sigma, ROI)\n", n_fail == f0 ? "PASS" : "FAIL");
	canny_destroy(canny_cpu);
	cuda_canny_destroy(canny_gpu);
	free(ce_cpu);
	free(ce_gpu);
	free(cd_cpu);
	free(cd_gpu);
	free(cm_cpu);
	free(cm_gpu);
}

/* ---- the GPU segmenter against segment_process() ------------------------ */

static void label_compare(struct segment *seg, struct cuda_label *lab, const struct bitmask *m, const char *what)
{
	const struct region_tree *ref = NULL, *t = NULL;
	char why[300], msg[400];
	int ok = segment_process(seg, m, &ref) == 0;
	ok = ok && cuda_label_upload(lab, m->bits, m->width, m->height, m->stride_words) == 0 &&
	     cuda_label_submit(lab, NULL, m->width, m->height, 0, NULL) == 0 && cuda_label_collect(lab, &t) == 0;
	if (!ok) {
		snprintf(msg, sizeof msg, "label %s %dx%d: a call failed", what, m->width, m->height);
		check(0, msg);
		return;
	}
	int differ = lc_trees_differ(ref, t, why, sizeof why);
	snprintf(msg, sizeof msg, "label %s %dx%d adj_cap %d: %s", what, m->width, m->height, (int)ref->adj_cap,
		 differ ? why : "same");
	check(!differ, msg);
}

struct label_pair {
	struct segment *seg;
	struct cuda_label *lab;
};

static int label_pair_new(struct label_pair *p, int w, int h, int cap, int32_t runs, int32_t regions)
{
	struct segment_config sc = {w, h, cap, runs, regions};
	/* Segmenters take turns: the fused kernel and the chain of kernels,
	 * each as a CUDA graph and launched call by call; every path compared. */
	static int n_created;
	const int turn = n_created++;
	struct cuda_label_config lc = {w, h, cap, runs, regions, turn % 2, (turn / 2) % 2 ? LABEL_CHAIN : LABEL_FUSED,
				       0, 0};
	int err = 0;
	p->seg = segment_create(&sc, &err);
	p->lab = cuda_label_create(&lc, &err);
	check(p->seg && p->lab, "label: create");
	return p->seg && p->lab;
}

static void label_pair_free(struct label_pair *p)
{
	segment_destroy(p->seg);
	cuda_label_destroy(p->lab);
}

static void test_label(const char *dir)
{
	const int fail0 = n_fail;
	uint32_t rng = 4242;
	struct threshold_config base = base_config(3840, 2160);
	check(threshold_set_config(cpu, &base) == 0, "label: CPU threshold config");
	const int caps[] = {2, 3, 8, 19, 64};
	for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
		struct label_pair p;
		if (!label_pair_new(&p, 200, 160, caps[c], 0, 0))
			return;
		for (int it = 0; it < (quick ? 10 : 80); it++) {
			struct bitmask m;
			const int w = 1 + (int)(lc_rand(&rng) % 200), h = 1 + (int)(lc_rand(&rng) % 160);
			if (bitmask_alloc(&m, w, h) < 0)
				return;
			lc_mask(&m, it % LC_KINDS, &rng);
			label_compare(p.seg, p.lab, &m, "random");
			bitmask_free(&m);
		}
		label_pair_free(&p);
	}
	{
		const int ws[] = {1, 2, 3, 63, 64, 65, 127, 129, 193}, hs[] = {1, 2, 3, 65};
		struct label_pair p;
		if (!label_pair_new(&p, 193, 65, 8, 0, 0))
			return;
		for (size_t i = 0; i < sizeof ws / sizeof *ws; i++)
			for (size_t j = 0; j < sizeof hs / sizeof *hs; j++)
				for (int kind = 0; kind < LC_KINDS; kind++) {
					struct bitmask m;
					if (bitmask_alloc(&m, ws[i], hs[j]) < 0)
						return;
					lc_mask(&m, kind, &rng);
					label_compare(p.seg, p.lab, &m, "odd size");
					bitmask_free(&m);
				}
		label_pair_free(&p);
	}
	{
		const struct { int32_t runs, regions; } oc[] = {{5000, 0}, {0, 1000}, {3000, 200}, {1, 0}, {0, 1}, {40, 3}};
		for (size_t c = 0; c < sizeof oc / sizeof *oc; c++) {
			struct label_pair p;
			if (!label_pair_new(&p, 160, 160, 8, oc[c].runs, oc[c].regions))
				return;
			for (int it = 0; it < 14; it++) {
				struct bitmask m;
				if (bitmask_alloc(&m, 1 + (int)(lc_rand(&rng) % 160), 1 + (int)(lc_rand(&rng) % 160)) < 0)
					return;
				lc_mask(&m, it % LC_KINDS, &rng);
				label_compare(p.seg, p.lab, &m, "overflow");
				bitmask_free(&m);
			}
			label_pair_free(&p);
		}
	}
	/* Camera-sized frames: synthetic images through the CPU threshold, and
	 * masks of every kind. */
	const int big[][2] = {{1920, 1080}, {3840, 2160}, {640, 480}};
	for (int b = 0; b < 3; b++) {
		const int w = big[b][0], h = big[b][1];
		struct label_pair p;
		if (!label_pair_new(&p, w, h, 19, 0, 0))
			return;
		struct image_u8 img;
		struct bitmask m;
		if (image_u8_alloc(&img, w, h) < 0 || bitmask_alloc(&m, w, h) < 0)
			return;
		for (int kind = 0; kind < 3; kind++) {
			fill(&img, kind);
			m_cpu.width = w;
			m_cpu.height = h;
			check(threshold_process(cpu, &img, &m_cpu) == 0, "label: CPU threshold");
			label_compare(p.seg, p.lab, &m_cpu, "thresholded");
		}
		for (int kind = 0; kind < LC_KINDS; kind++) {
			lc_mask(&m, kind, &rng);
			label_compare(p.seg, p.lab, &m, "big");
		}
		/* The mask labelled in place, on the GPU threshold's stream. */
		struct cuda_threshold_config tc = {.max_width = w, .max_height = h, .mode = 0, .radius = 6, .gate = 32,
						   .tile = 10, .mean_radius = 16, .mean_bias = 16};
		int err = 0;
		struct cuda_threshold *ct = cuda_threshold_create(&tc, &err);
		check(ct != NULL, "label: cuda_threshold_create");
		for (int kind = 0; ct && kind < 3; kind++) {
			fill(&img, kind);
			const void *dev = NULL;
			void *stream = NULL;
			int words = 0;
			const struct region_tree *ref = NULL, *t = NULL;
			char why[300], msg[400];
			int ok = cuda_threshold_submit(ct, img.data, w, h, img.stride) == 0 &&
				 cuda_threshold_device_mask(ct, &dev, &words, &stream) == 0 &&
				 cuda_label_submit(p.lab, dev, w, h, words, stream) == 0 && cuda_label_collect(p.lab, &t) == 0 &&
				 cuda_threshold_collect(ct, m.bits, m.stride_words) == 0 && segment_process(p.seg, &m, &ref) == 0;
			int differ = ok ? lc_trees_differ(ref, t, why, sizeof why) : 1;
			snprintf(msg, sizeof msg, "label in place %dx%d kind %d: %s", w, h, kind,
				 !ok ? "a call failed" : differ ? why : "same");
			check(ok && !differ, msg);
		}
		cuda_threshold_destroy(ct);
		image_u8_free(&img);
		bitmask_free(&m);
		label_pair_free(&p);
	}
	m_cpu.width = m_gpu.width = 3840;
	m_cpu.height = m_gpu.height = 2160;
	/* Real frames, thresholded by the CPU. */
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char path[1024];
		struct image_u8 in;
		if (len < 5 || strcmp(e->d_name + len - 4, ".pgm") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (read_pgm(path, &in) < 0 || in.width > 3840 || in.height > 2160)
			continue;
		struct label_pair p;
		if (label_pair_new(&p, in.width, in.height, 19, 0, 0)) {
			m_cpu.width = in.width;
			m_cpu.height = in.height;
			check(threshold_process(cpu, &in, &m_cpu) == 0, "label: CPU threshold");
			label_compare(p.seg, p.lab, &m_cpu, e->d_name);
			label_pair_free(&p);
		}
		m_cpu.width = 3840;
		m_cpu.height = 2160;
		image_u8_free(&in);
		n++;
	}
	if (d)
		closedir(d);
	printf("%s: GPU segmenter against segment_process (%d real frames)\n", n_fail == fail0 ? "PASS" : "FAIL", n);
}

/* ---- the engine with the GPU segmenter ---- */

/* Fingers, blobs and the outline stage's contours, field by field (the
 * structs have padding). */
static int outline_lists_differ(const struct detections *a, const struct detections *b, char *why, size_t cap)
{
	int bad = a->n_fingers != b->n_fingers || a->n_blobs != b->n_blobs || a->n_contours != b->n_contours ||
		  a->n_points != b->n_points;
	for (int32_t i = 0; !bad && i < a->n_fingers; i++) {
		const struct finger_det *f = &a->fingers[i], *g = &b->fingers[i];
		bad = f->x != g->x || f->y != g->y || f->diameter_px != g->diameter_px || f->roundness != g->roundness ||
		      f->contrast != g->contrast || f->region != g->region || f->sharpness != g->sharpness ||
		      f->hover != g->hover || f->in_hand != g->in_hand || f->hand != g->hand;
	}
	for (int32_t i = 0; !bad && i < a->n_blobs; i++) {
		const struct blob_det *f = &a->blobs[i], *g = &b->blobs[i];
		bad = f->x != g->x || f->y != g->y || f->angle != g->angle || f->w != g->w || f->h != g->h ||
		      f->area_px != g->area_px || f->region != g->region || f->hand != g->hand;
	}
	for (int32_t i = 0; !bad && i < a->n_contours; i++) {
		const struct contour_det *f = &a->contours[i], *g = &b->contours[i];
		bad = f->owner_kind != g->owner_kind || f->hole != g->hole || f->owner != g->owner ||
		      f->first != g->first || f->n != g->n;
	}
	for (int32_t i = 0; !bad && i < a->n_points; i++)
		bad = a->points[i].x != b->points[i].x || a->points[i].y != b->points[i].y;
	if (bad)
		snprintf(why, cap, "fingers %d/%d, blobs %d/%d, contours %d/%d, points %d/%d, or their contents differ",
			 (int)a->n_fingers, (int)b->n_fingers, (int)a->n_blobs, (int)b->n_blobs, (int)a->n_contours,
			 (int)b->n_contours, (int)a->n_points, (int)b->n_points);
	return bad;
}

static int lists_differ(const struct detections *a, const struct detections *b, char *why, size_t cap)
{
#define LIST(n, arr)                                                                                       \
	if (a->n != b->n || memcmp(a->arr, b->arr, (size_t)a->n * sizeof *a->arr)) {                     \
		snprintf(why, cap, #arr ": %d against %d, or their contents differ", (int)a->n, (int)b->n); \
		return 1;                                                                                  \
	}
	LIST(n_fids, fids)
	LIST(n_fuzzy, fuzzy)
	LIST(n_roots, roots)
#undef LIST
	if (outline_lists_differ(a, b, why, cap))
		return 1;
	if (a->overflow != b->overflow) {
		snprintf(why, cap, "overflow flag");
		return 1;
	}
	return 0;
}

/* Frames in the pipeline's order: submit f, collect f, submit f + 1, detect
 * f, read f's mask. cpu_seg: the reference engine (downloads its masks). */
static void engine_pair_run(struct engine *ref, struct engine *gpu_seg, const struct image_u8 *frames, int n,
			    const char *label)
{
	char why[200], msg[400];
	int ok = engine_submit(ref, &frames[0]) == 0 && engine_submit(gpu_seg, &frames[0]) == 0;
	for (int i = 0; ok && i < n; i++) {
		ok = engine_collect(ref) == 0 && engine_collect(gpu_seg) == 0;
		if (ok && i + 1 < n)
			ok = engine_submit(ref, &frames[i + 1]) == 0 && engine_submit(gpu_seg, &frames[i + 1]) == 0;
		ok = ok && engine_detect(ref, &frames[i]) == 0 && engine_detect(gpu_seg, &frames[i]) == 0;
		const struct bitmask *ma = ok ? engine_mask(ref) : NULL, *mb = ok ? engine_mask(gpu_seg) : NULL;
		int differ = !ok || !ma || !mb;
		if (!differ)
			differ = lists_differ(engine_detections(ref), engine_detections(gpu_seg), why, sizeof why);
		if (!differ && !masks_equal(ma, mb, frames[i].width, frames[i].height, why, sizeof why))
			differ = 1;
		snprintf(msg, sizeof msg, "engine %s frame %d %dx%d: %s", label, i, frames[i].width, frames[i].height,
			 !ok ? "a call failed" : !ma || !mb ? "no mask" : differ ? why : "same");
		check(!differ, msg);
	}
}

static struct engine *engine_new(int w, int h, const struct tree_set *trees, int seg_backend, int radius2,
				 bool scale3)
{
	struct engine_config ec = {.width = w, .height = h, .backend = "cuda",
				   .thr = {.mode = THRESHOLD_BERNSEN, .radius = 8, .gate = 32, .tile = 10,
					   .mean_radius = 16, .mean_bias = 16},
				   .radius2 = radius2, .median2 = 3, .mode2 = THRESHOLD_BERNSEN,
				   .scale3 = scale3, .mode3 = THRESHOLD_MEAN, .mean_scale3 = 0.115f,
				   .segment_backend = seg_backend,
				   .match = {.trees = trees, .finger_size_px = 18.0f * (float)w / 640.0f,
					     .finger_sensitivity = 0.5f, .finger_min_contrast = 16,
					     .blob_max_px = 200, .blob_min_px = 20, .root_min_px = 12,
					     .root_max_px = (float)(w < h ? w : h) / 2.0f},
				   .max_detections = 1024};
	/* The outline stage (touch, hands, contours) reads the first scale's
	 * tree: its output must not depend on where that was segmented. */
	ec.outline = (struct outline_config){.contours = true, .tolerance_px = 1.0f, .max_points = 32,
					     .max_contours = 256, .touch_sharpness = 0.3f, .hands = true,
					     .finger_size_px = ec.match.finger_size_px};
	int err = 0;
	struct engine *e = engine_create(&ec, &err);
	if (!e)
		printf("engine_create (segment backend %d): %s\n", seg_backend, err_str(err));
	return e;
}

static void test_engine_segment(const char *dir)
{
	const int fail0 = n_fail;
	struct tree_set *trees = NULL;
	check(tree_set_parse(tree_set_builtin_text, strlen(tree_set_builtin_text), "built-in", &trees) == 0,
	      "engine: built-in trees");
	enum { N_SYN = 6 };
	struct image_u8 syn[N_SYN];
	for (int i = 0; i < N_SYN; i++) {
		image_u8_alloc(&syn[i], 640, 480);
		fill(&syn[i], i % 3);
	}
	for (int cfg = 0; trees && cfg < 2; cfg++) {
		struct engine *a = engine_new(640, 480, trees, ENGINE_SEGMENT_CPU, cfg ? 2 : 0, cfg == 1);
		struct engine *b = engine_new(640, 480, trees, ENGINE_SEGMENT_GPU, cfg ? 2 : 0, cfg == 1);
		check(a && b && strcmp(engine_segment_backend(b), "gpu") == 0 &&
			      strcmp(engine_segment_backend(a), "cpu") == 0,
		      "engine: GPU and CPU segmenting engines");
		if (a && b)
			engine_pair_run(a, b, syn, N_SYN, cfg ? "synthetic, 3 scales" : "synthetic, 1 scale");
		engine_destroy(a);
		engine_destroy(b);
	}
	for (int i = 0; i < N_SYN; i++)
		image_u8_free(&syn[i]);
	/* The frames of DIR, all of one size as they come (a run of each size). */
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	enum { MAXF = 64 };
	static struct image_u8 fr[MAXF];
	int n = 0;
	while (d && (e = readdir(d)) && n < MAXF) {
		size_t len = strlen(e->d_name);
		char path[1024];
		if (len < 5 || strcmp(e->d_name + len - 4, ".pgm") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (read_pgm(path, &fr[n]) < 0 || fr[n].width > 3840 || fr[n].height > 2160)
			continue;
		n++;
	}
	if (d)
		closedir(d);
	for (int i = 0; trees && i < n;) {
		int j = i;
		while (j < n && fr[j].width == fr[i].width && fr[j].height == fr[i].height)
			j++;
		struct engine *a = engine_new(fr[i].width, fr[i].height, trees, ENGINE_SEGMENT_CPU, 2, true);
		struct engine *b = engine_new(fr[i].width, fr[i].height, trees, ENGINE_SEGMENT_AUTO, 2, true);
		check(a && b && strcmp(engine_segment_backend(b), "gpu") == 0, "engine: real-frame engines (auto = gpu)");
		if (a && b)
			engine_pair_run(a, b, &fr[i], j - i, "real frames, 3 scales");
		engine_destroy(a);
		engine_destroy(b);
		i = j;
	}
	for (int i = 0; i < n; i++)
		image_u8_free(&fr[i]);
	tree_set_free(trees);
	printf("%s: engine with the GPU segmenter against the CPU segmenter (%d real frames)\n",
	       n_fail == fail0 ? "PASS" : "FAIL", n);
}

/* ---- the engine gives back what it took ---------------------------------- */

/* The process's resident set in KB (pinned host buffers count here, not
 * in the heap), or -1. */
/* The resident set (VmRSS) in kB; -1 where unread. */
static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

/* The daemon's default engine on the GPU path (three scales, the GPU
 * segmenter), run on a frame, its third scale switched off and on live
 * (as the window and a reload may) and destroyed, 24 times over: after
 * the last 20 cycles device memory within 2 MB (one of the driver's
 * pages) and the heap in use (glibc's count over every arena, the CUDA
 * driver's own allocations included) within 1 MB of what they were
 * after the first four; a leak of one 1080p device buffer a cycle is
 * 40 MB over those 20. The resident set after malloc_trim() within 16 MB
 * too: pinned host memory (cudaHostAlloc) is counted in neither of the
 * others, and a probe on the H100 host that leaked 2 MB of it a cycle
 * grew the resident set by 2 MB a cycle. Before malloc_trim() the
 * resident set includes what glibc's arenas keep of the engines' freed
 * memory (about 210 MB there): one lease read it growing 306, 360, 367
 * MB, another 311.6, 303.8, 304.9 MB and after the trim 165.5, 165.5,
 * 165.6; it is printed, not checked. Under compute-sanitizer (which
 * loads itself through CUDA_INJECTION64_PATH and keeps its own records
 * in the process) only device memory is checked. */
#define MB(bytes) ((double)(bytes) / 1048576.0)

static void test_engine_frees(const char *dir)
{
	const int fail0 = n_fail;
	struct tree_set *trees = NULL;
	struct image_u8 img = {0};
	int ok = tree_set_parse(tree_set_builtin_text, strlen(tree_set_builtin_text), "built-in", &trees) == 0;
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d))) { /* the widest frame of DIR up to 4K */
		size_t len = strlen(de->d_name);
		char path[1024];
		struct image_u8 fr;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 4, ".pgm") != 0 || read_pgm(path, &fr) < 0)
			continue;
		if (fr.width > img.width && fr.width <= 3840 && fr.height <= 2160) {
			image_u8_free(&img);
			img = fr;
		} else {
			image_u8_free(&fr);
		}
	}
	if (d)
		closedir(d);
	if (!img.data && image_u8_alloc(&img, 1920, 1080) == 0)
		fill(&img, 2);
	ok = ok && img.data;
	struct tt_config c;
	config_defaults(&c);
	enum { CYCLES = 24 };
	size_t dev[3] = {0}, heap[3] = {0};
	size_t arena_free[3] = {0};
	long rss_pre[3] = {0}, rss[3] = {0};
	for (int cycle = 0; ok && cycle < CYCLES; cycle++) {
		struct track_config tk = {.max_items = 64, .linger_frames = 2};
		int err = 0;
		struct track *trk = track_create(&tk, &err);
		struct engine_config ec;
		engine_config_from(&c, trees, trk, img.width, img.height, &ec);
		ec.backend = "cuda";
		struct engine *e = trk ? engine_create(&ec, &err) : NULL;
		struct tracked_state st;
		ok = e && strcmp(engine_segment_backend(e), "gpu") == 0;
		for (uint64_t f = 1; ok && f <= 2; f++)
			ok = engine_process(e, &img, f, 0, &st) == 0;
		ec.scale3 = false;
		ok = ok && engine_set_config(e, &ec) == 0 && engine_process(e, &img, 3, 0, &st) == 0;
		ec.scale3 = true;
		ok = ok && engine_set_config(e, &ec) == 0 && engine_process(e, &img, 4, 0, &st) == 0;
		engine_destroy(e);
		track_destroy(trk);
		const int at = cycle == 3 ? 0 : cycle == CYCLES / 2 + 1 ? 1 : cycle == CYCLES - 1 ? 2 : -1;
		if (at >= 0) {
			const struct mallinfo2 mi = mallinfo2();
			heap[at] = mi.uordblks + mi.hblkhd;
			arena_free[at] = mi.fordblks;
			rss_pre[at] = rss_kb();
			malloc_trim(0);
			rss[at] = rss_kb();
			ok = ok && cuda_device_memory_used(&dev[at]) == 0;
		}
	}
	const bool tool = getenv("CUDA_INJECTION64_PATH") != NULL;
	char msg[600];
	snprintf(msg, sizeof msg,
		 "engine %dx%d created, run, third scale off and on, destroyed %d times: after 4, %d and %d cycles device "
		 "memory %.1f, %.1f, %.1f MB, heap in use %.2f, %.2f, %.2f MB (free in its arenas %.1f, %.1f, %.1f MB), "
		 "resident %.1f, %.1f, %.1f MB, after malloc_trim %.1f, %.1f, %.1f MB%s",
		 img.width, img.height, CYCLES, CYCLES / 2 + 2, CYCLES, MB(dev[0]), MB(dev[1]), MB(dev[2]), MB(heap[0]),
		 MB(heap[1]), MB(heap[2]), MB(arena_free[0]), MB(arena_free[1]), MB(arena_free[2]), rss_pre[0] / 1024.0,
		 rss_pre[1] / 1024.0, rss_pre[2] / 1024.0, rss[0] / 1024.0,
		 rss[1] / 1024.0, rss[2] / 1024.0, tool ? " (under a CUDA tool: device memory alone checked)" : "");
	printf("%s\n", msg);
	/* The resident set after malloc_trim: before it, glibc's arenas hold
	 * what the engines freed (about 210 MB on the H100 host), which a
	 * lease's allocation pattern makes grow or not. */
	check(ok && dev[2] <= dev[0] + 2 * 1048576 &&
		      (tool || (heap[2] <= heap[0] + 1048576 && rss[2] <= rss[0] + 16 * 1024)),
	      msg);
	image_u8_free(&img);
	tree_set_free(trees);
	printf("%s: the GPU engine gives back its device and host memory\n", n_fail == fail0 ? "PASS" : "FAIL");
}

/* ---- the GPU SIFT against its simulation and OpenCV ----------------------- */

static struct objects_keypoint sk_gpu[OBJECTS_MAX_KEYPOINTS], sk_gpu2[OBJECTS_MAX_KEYPOINTS],
	sk_ref[OBJECTS_MAX_KEYPOINTS];
static struct objects_nearest nn_gpu[OBJECTS_MAX_KEYPOINTS], nn_cpu[OBJECTS_MAX_KEYPOINTS];

/* The same GPU SIFT launched kernel by kernel (no CUDA graph). */
static struct cuda_sift *sift_nograph;

static void sift_vs(struct cuda_sift *cs, struct sift *cv, const struct image_u8 *img, const char *label)
{
	char msg[400];
	int ng = 0, ng2 = 0;
	int ok = cuda_sift_extract(cs, img->data, img->width, img->height, img->stride, sk_gpu, OBJECTS_MAX_KEYPOINTS,
				   &ng) == 0 &&
		 cuda_sift_extract(cs, img->data, img->width, img->height, img->stride, sk_gpu2, OBJECTS_MAX_KEYPOINTS,
				   &ng2) == 0;
	snprintf(msg, sizeof msg, "sift %s %dx%d: extract (%d keypoints) and a second run identical", label,
		 img->width, img->height, ng);
	check(ok && ng == ng2 && memcmp(sk_gpu, sk_gpu2, sizeof *sk_gpu * (size_t)ng) == 0, msg);
	if (!ok)
		return;
	if (sift_nograph) {
		ng2 = -1;
		ok = cuda_sift_extract(sift_nograph, img->data, img->width, img->height, img->stride, sk_gpu2,
				       OBJECTS_MAX_KEYPOINTS, &ng2) == 0;
		snprintf(msg, sizeof msg, "sift %s %dx%d: kernel by kernel %d keypoints, the CUDA graph %d, identical",
			 label, img->width, img->height, ng2, ng);
		check(ok && ng == ng2 && memcmp(sk_gpu, sk_gpu2, sizeof *sk_gpu * (size_t)ng) == 0, msg);
	}
	/* The selection on the GPU: a smaller cap keeps the strongest, the head of the full list. */
	for (int cap = 1; cap < ng; cap = cap * 7 + 3) {
		ng2 = -1;
		ok = cuda_sift_extract(cs, img->data, img->width, img->height, img->stride, sk_gpu2, cap, &ng2) == 0;
		snprintf(msg, sizeof msg, "sift %s %dx%d: cap %d keeps the first %d of %d", label, img->width,
			 img->height, cap, ng2, ng);
		check(ok && ng2 == cap && memcmp(sk_gpu, sk_gpu2, sizeof *sk_gpu * (size_t)cap) == 0, msg);
	}
	int ns = sift_sim_extract(img, 0.04f, sk_ref, OBJECTS_MAX_KEYPOINTS);
	struct sift_agreement a;
	sift_compare(sk_ref, ns, sk_gpu, ng, &a);
	printf("sift %s %dx%d: simulation %d, GPU %d: repeatability %.4f (back %.4f), descriptors agree %.4f, "
	       "within 2 per byte %.4f\n",
	       label, img->width, img->height, ns, ng, a.repeat, a.repeat_back, a.desc_agree, a.exact);
	snprintf(msg, sizeof msg, "sift %s %dx%d: GPU against its CPU simulation (%.4f %.4f %.4f)", label, img->width,
		 img->height, a.repeat, a.repeat_back, a.desc_agree);
	check(ns >= 0 && a.repeat >= 0.99 && a.repeat_back >= 0.99 && a.desc_agree >= 0.99, msg);
	if (!cv)
		return;
	int nr = 0;
	ok = sift_extract(cv, img, sk_ref, OBJECTS_MAX_KEYPOINTS, &nr) == 0;
	sift_compare(sk_ref, nr, sk_gpu, ng, &a);
	printf("sift %s %dx%d: OpenCV %d, GPU %d: repeatability %.4f (back %.4f), descriptors agree %.4f, "
	       "within 2 per byte %.4f\n",
	       label, img->width, img->height, nr, ng, a.repeat, a.repeat_back, a.desc_agree, a.exact);
	snprintf(msg, sizeof msg, "sift %s %dx%d: GPU against OpenCV (%.4f %.4f %.4f, want >= 0.95)", label,
		 img->width, img->height, a.repeat, a.repeat_back, a.desc_agree);
	check(ok && a.repeat >= 0.95 && a.repeat_back >= 0.95 && a.desc_agree >= 0.95, msg);
}

/* Learns a picture (OpenCV when built in, else the GPU), then finds it from
 * GPU keypoints in scenes at known poses. */
static void sift_recognition(struct cuda_sift *cs, struct sift *cv)
{
	static const struct {
		int w, h;
		double x, y, deg, scale;
	} pose[] = {
		{640, 480, 320, 240, 0, 1.0},     {640, 480, 300.5, 250.25, 37, 0.8}, {640, 480, 330, 230, 90, 1.5},
		{640, 480, 310, 245, 200, 0.7},   {1920, 1080, 960, 540, 123, 2.0},   {1920, 1080, 500, 400, 301, 1.0},
		{1920, 1080, 1400, 700, 15, 0.7}, {1920, 1080, 1000, 560, 250, 1.3},
	};
	struct image_u8 pic, scene;
	char msg[300];
	if (image_u8_alloc(&pic, 240, 180) < 0)
		return;
	sift_scene_texture(&pic, 77, 240 * 180 / 300);
	int n = 0;
	int ok = cv ? sift_extract(cv, &pic, sk_ref, 2000, &n) == 0
		    : cuda_sift_extract(cs, pic.data, pic.width, pic.height, pic.stride, sk_ref, 2000, &n) == 0;
	struct objects_library *lib = objects_library_new();
	ok = ok && lib && objects_library_add(lib, 1042, "card", pic.width, pic.height, sk_ref, n) == 0;
	struct objects_match_config mc;
	objects_match_config_default(&mc);
	int err = 0;
	struct objects_recogniser *r = ok ? objects_recogniser_create(lib, &mc, OBJECTS_MAX_KEYPOINTS, &err) : NULL;
	check(r != NULL, "sift recognition: learn and create the recogniser");
	int n_lib_kp = 0;
	const struct objects_keypoint *lk = lib ? objects_library_keypoints(lib, &n_lib_kp) : NULL;
	struct cuda_match *gm = r ? cuda_match_create(lk, n_lib_kp, 8000, &err) : NULL;
	check(!r || gm != NULL, "sift recognition: the GPU matcher");
	for (size_t i = 0; r && i < sizeof pose / sizeof pose[0]; i++) {
		if (image_u8_alloc(&scene, pose[i].w, pose[i].h) < 0)
			break;
		sift_scene_texture(&scene, 500 + i, pose[i].w * pose[i].h / 1500);
		sift_scene_place(&scene, &pic, pose[i].x, pose[i].y, pose[i].deg * M_PI / 180, pose[i].scale);
		int ns = 0, nd = 0;
		struct objects_detection d[4];
		ok = cuda_sift_extract(cs, scene.data, scene.width, scene.height, scene.stride, sk_gpu, 8000, &ns) == 0 &&
		     objects_recognise(r, sk_gpu, ns, d, 4, &nd) == 0;
		if (ok && gm) {
			struct objects_detection d2[4];
			int nd2 = -1;
			int ok2 = cuda_match_nearest(gm, sk_gpu, ns, nn_gpu) == 0 &&
				  objects_recognise_nearest(r, sk_gpu, ns, nn_gpu, d2, 4, &nd2) == 0;
			snprintf(msg, sizeof msg, "sift recognition %dx%d: matched on the GPU, %d detections, on the CPU %d, identical",
				 pose[i].w, pose[i].h, nd2, nd);
			check(ok2 && nd2 == nd && memcmp(d, d2, sizeof *d * (size_t)nd) == 0, msg);
		}
		double da = 0, dp = 0;
		if (ok && nd == 1) {
			da = fabs(fmod(d[0].angle * 180 / M_PI - pose[i].deg + 540.0, 360.0) - 180.0);
			dp = hypot(d[0].x - pose[i].x, d[0].y - pose[i].y);
		}
		snprintf(msg, sizeof msg,
			 "sift recognition %dx%d at %.0f deg, scale %.1f: %d detections, id %d, %d inliers, angle "
			 "error %.3f deg, position error %.3f px",
			 pose[i].w, pose[i].h, pose[i].deg, pose[i].scale, nd, nd ? d[0].id : -1, nd ? d[0].n_inliers : 0,
			 da, dp);
		printf("%s\n", msg);
		check(ok && nd == 1 && d[0].id == 1042 && da <= 2.0 && dp <= 2.0, msg);
		image_u8_free(&scene);
	}
	cuda_match_destroy(gm);
	objects_recogniser_destroy(r);
	objects_library_free(lib);
	image_u8_free(&pic);
}

/* ---- matching on the GPU against the CPU reference ------------------------- */

static uint32_t match_rng(uint32_t *st)
{
	uint32_t x = *st;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *st = x;
}

/* Descriptors of `levels` values each byte (few levels: many equal
 * distances, so the ties are tested), `dups` of them copies of earlier ones. */
static void match_fill(struct objects_keypoint *kp, int n, int levels, int dups, uint32_t seed)
{
	uint32_t st = seed | 1;
	for (int i = 0; i < n; i++)
		for (int b = 0; b < OBJECTS_DESC_LEN; b++)
			kp[i].desc[b] = (uint8_t)(match_rng(&st) % (uint32_t)levels * (255 / (levels - 1 > 0 ? levels - 1 : 1)));
	for (int k = 0; k < dups && n > 1; k++) {
		int a = (int)(match_rng(&st) % (uint32_t)n), b = (int)(match_rng(&st) % (uint32_t)n);
		memcpy(kp[b].desc, kp[a].desc, OBJECTS_DESC_LEN);
	}
}

static void match_case(const struct objects_keypoint *lib, int n_lib, const struct objects_keypoint *q, int nq,
		       const char *label)
{
	char msg[300];
	int err = 0;
	struct cuda_match *m = cuda_match_create(lib, n_lib, nq > 0 ? nq : 1, &err);
	int rc = m ? cuda_match_nearest(m, q, nq, nn_gpu) : err;
	objects_nearest_cpu(lib, n_lib, q, nq, nn_cpu);
	int bad = -1;
	for (int i = 0; rc == 0 && i < nq && bad < 0; i++)
		if (nn_gpu[i].index != nn_cpu[i].index || nn_gpu[i].d1 != nn_cpu[i].d1 || nn_gpu[i].d2 != nn_cpu[i].d2)
			bad = i;
	if (bad >= 0)
		snprintf(msg, sizeof msg,
			 "sift match %s: %d queries, library %d: query %d: GPU %d (%u, %u), CPU %d (%u, %u)", label, nq,
			 n_lib, bad, nn_gpu[bad].index, nn_gpu[bad].d1, nn_gpu[bad].d2, nn_cpu[bad].index, nn_cpu[bad].d1,
			 nn_cpu[bad].d2);
	else
		snprintf(msg, sizeof msg, "sift match %s: %d queries, library %d: GPU = CPU (rc %d)", label, nq, n_lib,
			 rc);
	check(rc == 0 && bad < 0, msg);
	cuda_match_destroy(m);
}

static void test_sift_match(void)
{
	const int fail0 = n_fail;
	static struct objects_keypoint lib[40000], q[5000];
	static const struct {
		int n_lib, nq, levels, dups;
	} cases[] = {
		{0, 10, 256, 0},      {1, 10, 256, 0},      {2, 10, 2, 0},        {3, 200, 2, 1},
		{63, 129, 3, 10},     {64, 1, 256, 0},      {65, 300, 2, 30},     {1000, 2000, 256, 100},
		{1000, 2000, 2, 100}, {9000, 5000, 4, 500}, {40000, 700, 256, 2000}, {40000, 5000, 3, 5000},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		if (quick && cases[c].n_lib * cases[c].nq > 10000000)
			continue;
		char label[80];
		match_fill(lib, cases[c].n_lib, cases[c].levels, cases[c].dups, 1000 + (uint32_t)c);
		match_fill(q, cases[c].nq, cases[c].levels, 0, 2000 + (uint32_t)c);
		/* some queries equal to library keypoints (distance 0, often twice) */
		for (int i = 0; i < cases[c].nq && cases[c].n_lib > 0; i += 7)
			memcpy(q[i].desc, lib[(i * 13) % cases[c].n_lib].desc, OBJECTS_DESC_LEN);
		snprintf(label, sizeof label, "random (%d levels, %d copies)", cases[c].levels, cases[c].dups);
		match_case(lib, cases[c].n_lib, q, cases[c].nq, label);
	}
	/* Real descriptors: one textured frame's keypoints against another's. */
	{
		struct cuda_sift_config cc = {.max_keypoints = 5000, .contrast_threshold = 0.04f};
		int err = 0, na = 0, nb = 0;
		struct cuda_sift *cs = cuda_sift_create(&cc, &err);
		struct image_u8 a, b;
		if (cs && image_u8_alloc(&a, 960, 540) == 0 && image_u8_alloc(&b, 960, 540) == 0) {
			sift_scene_texture(&a, 71, 900);
			sift_scene_texture(&b, 72, 900);
			sift_scene_place(&b, &a, 480, 270, 0.4, 0.5);
			if (cuda_sift_extract(cs, a.data, 960, 540, a.stride, lib, 5000, &na) == 0 &&
			    cuda_sift_extract(cs, b.data, 960, 540, b.stride, q, 5000, &nb) == 0)
				match_case(lib, na, q, nb, "SIFT keypoints");
			else
				check(0, "sift match: SIFT keypoints extracted");
			image_u8_free(&a);
			image_u8_free(&b);
		}
		cuda_sift_destroy(cs);
	}
	/* Bad arguments. */
	{
		int err = 0;
		struct cuda_match *m = cuda_match_create(lib, 10, 5, &err);
		check(m && cuda_match_nearest(m, q, 6, nn_gpu) == ERR_RANGE && cuda_match_nearest(m, NULL, 1, nn_gpu) == ERR_RANGE &&
			      cuda_match_create(NULL, 3, 5, &err) == NULL && err == ERR_RANGE &&
			      cuda_match_create(lib, 3, 0, &err) == NULL && err == ERR_RANGE,
		      "sift match: bad arguments refused");
		cuda_match_destroy(m);
	}
	printf("%s: GPU matching (nearest two, ratio-test input) identical to the CPU reference\n",
	       n_fail == fail0 ? "PASS" : "FAIL");
}

static void test_sift(void)
{
	const int fail0 = n_fail;
	struct cuda_sift_config cc = {.max_keypoints = OBJECTS_MAX_KEYPOINTS, .contrast_threshold = 0.04f};
	int err = 0;
	struct cuda_sift *cs = cuda_sift_create(&cc, &err);
	check(cs != NULL, "sift: cuda_sift_create");
	if (!cs)
		return;
	struct cuda_sift_config cng = cc;
	cng.no_graph = 1;
	sift_nograph = cuda_sift_create(&cng, &err);
	check(sift_nograph != NULL, "sift: cuda_sift_create, kernel by kernel");
	struct sift *cv = NULL;
#if TT_HAVE_OPENCV
	struct sift_config sc;
	sift_config_default(&sc);
	sc.max_keypoints = OBJECTS_MAX_KEYPOINTS;
	cv = sift_create(&sc, "opencv", &err);
	check(cv != NULL, "sift: the OpenCV backend");
#else
	printf("sift: built without OpenCV: the GPU against its simulation only, learning on the GPU\n");
#endif
	static const int sizes[][2] = {{640, 480}, {1920, 1080}, {211, 157}, {1280, 720}};
	for (int k = 0; k < (quick ? 2 : 4); k++) {
		struct image_u8 img;
		if (image_u8_alloc(&img, sizes[k][0], sizes[k][1]) < 0)
			break;
		sift_scene_texture(&img, 300 + (uint64_t)k, sizes[k][0] * sizes[k][1] / 1200);
		sift_vs(cs, cv, &img, "texture");
		image_u8_free(&img);
	}
	/* A frame inside a wider buffer (stride > width). */
	{
		struct image_u8 big, view;
		if (image_u8_alloc(&big, 500, 300) == 0) {
			sift_scene_texture(&big, 9, 500);
			view = big;
			view.width = 333;
			view.height = 251;
			sift_vs(cs, cv, &view, "stride");
			image_u8_free(&big);
		}
	}
	/* Tiny and odd frames: no octave, one octave, a few. */
	static const int tiny[][2] = {{1, 1}, {2, 3}, {7, 5}, {16, 16}, {33, 17}, {64, 9}, {97, 61}};
	for (size_t k = 0; k < sizeof tiny / sizeof tiny[0]; k++) {
		struct image_u8 img;
		char msg[120];
		if (image_u8_alloc(&img, tiny[k][0], tiny[k][1]) < 0)
			break;
		sift_scene_texture(&img, 40 + k, 4);
		int ng = -1, ns = sift_sim_extract(&img, 0.04f, sk_ref, OBJECTS_MAX_KEYPOINTS);
		int ok = cuda_sift_extract(cs, img.data, img.width, img.height, img.stride, sk_gpu, OBJECTS_MAX_KEYPOINTS,
					   &ng) == 0;
		snprintf(msg, sizeof msg, "sift tiny %dx%d: GPU %d keypoints, simulation %d", img.width, img.height, ng,
			 ns);
		check(ok && abs(ng - ns) <= 1 + ns / 20, msg);
		image_u8_free(&img);
	}
	/* Bad arguments. */
	{
		uint8_t px[4] = {0};
		int n = 0;
		check(cuda_sift_extract(cs, NULL, 2, 2, 2, sk_gpu, 10, &n) == ERR_RANGE &&
			      cuda_sift_extract(cs, px, 2, 2, 1, sk_gpu, 10, &n) == ERR_RANGE &&
			      cuda_sift_extract(cs, px, 2, 2, 2, NULL, 10, &n) == ERR_RANGE,
		      "sift: bad arguments refused");
	}
	/* Few slots: the frame's keypoints are cut, counted as an overflow, never written past. */
	{
		struct cuda_sift_config small = {.max_keypoints = 50, .contrast_threshold = 0.04f, .max_candidates = 64};
		struct cuda_sift *c2 = cuda_sift_create(&small, &err);
		struct image_u8 img;
		int n = -1, ok = c2 && image_u8_alloc(&img, 640, 480) == 0;
		if (ok) {
			sift_scene_texture(&img, 12, 1000);
			for (int i = 0; i < OBJECTS_MAX_KEYPOINTS; i++)
				sk_gpu[i].size = -1; /* poison */
			ok = cuda_sift_extract(c2, img.data, 640, 480, img.stride, sk_gpu, OBJECTS_MAX_KEYPOINTS, &n) == 0;
			image_u8_free(&img);
		}
		char msg[160];
		snprintf(msg, sizeof msg, "sift overflow: %d keypoints of at most 50, %lld overflows", n,
			 (long long)cuda_sift_overflows(c2));
		check(ok && n == 50 && sk_gpu[49].size > 0 && sk_gpu[50].size == -1 && cuda_sift_overflows(c2) == 1, msg);
		cuda_sift_destroy(c2);
	}
	sift_recognition(cs, cv);
	float a, b, c;
	if (cuda_sift_stage_times(cs, &a, &b, &c) == 0)
		printf("sift: last frame GPU time: pyramid %.0f us, detection %.0f us, descriptors %.0f us\n", a, b, c);
	sift_destroy(cv);
	cuda_sift_destroy(cs);
	cuda_sift_destroy(sift_nograph);
	sift_nograph = NULL;
	printf("%s: GPU SIFT against its simulation%s, recognition\n", n_fail == fail0 ? "PASS" : "FAIL",
	       cv ? " and OpenCV" : "");
}

int main(int argc, char **argv)
{
	char why[200];
	if (cuda_threshold_probe(why, sizeof why) < 0) {
		printf("no usable GPU: %s\n0 passed, 0 failed (skipped)\n", why);
		return 77;
	}
	printf("GPU: %s\n", why);
	log_set_level(LOG_WARN);
	quick = getenv("GPU_TEST_QUICK") && atoi(getenv("GPU_TEST_QUICK")) > 0;
	struct threshold_config c = base_config(3840, 2160);
	int err;
	cpu = threshold_create(&c, "cpu", &err);
	gpu = threshold_create(&c, "cuda", &err);
	if (!cpu || !gpu || bitmask_alloc(&m_cpu, 3840, 2160) < 0 || bitmask_alloc(&m_gpu, 3840, 2160) < 0) {
		printf("cannot create the threshold objects: %s\n1 passed, 1 failed\n", err_str(err));
		return 1;
	}
	test_sizes_radii_gates();
	test_big_frames();
	test_prefilters_and_tiled();
	test_mean_modes();
	test_sauvola();
	test_api();
	if (argc > 1 && !quick)
		test_real_frames(argv[1]);
	test_canny(argc > 1 ? argv[1] : NULL);
	test_label(argc > 1 && !quick ? argv[1] : NULL);
	test_engine_segment(argc > 1 && !quick ? argv[1] : NULL);
	test_engine_frees(argc > 1 && !quick ? argv[1] : NULL);
	test_sift();
	test_sift_match();
	threshold_destroy(cpu);
	threshold_destroy(gpu);
	bitmask_free(&m_cpu);
	bitmask_free(&m_gpu);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
