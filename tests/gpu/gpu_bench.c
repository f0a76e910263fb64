/*
 * gpu_bench - per-stage time of the threshold stage, CPU and GPU.
 *
 * Builds with only the CUDA toolkit and libc: make gpu-bench. For 640x480,
 * 1280x720, 1920x1080 and 3840x2160 at r = 6 and r = 32 it prints median and
 * p99 over N frames (default 1000; argv[1] overrides) of:
 *   cpu        the CPU backend, frame -> mask (one core)
 *   pageable   GPU round trip from an ordinary malloc'd frame (staging memcpy
 *              into pinned memory, upload, kernel, download, copy out)
 *   reg+copy   the same from a registered (page-locked) frame buffer
 *   reg+view   registered frame, collect_view (no copy out): the floor path
 *   submit     time submit() takes to return (registered)
 *   collect    time collect_view() waits after an immediate submit
 *   up/kern/down  GPU time of each stage from CUDA events (profiled run)
 *   kgen       kernel time of the generic (runtime-radius) Bernsen kernel
 * and, per frame size at r = 6, reg+view with the frame cut into 1..8 bands
 * (upload, kernel and download overlapped band by band; "auto" is the
 * stage's own choice).
 * argv[2] "WxH" runs one frame size only (for a profiler).
 * Then Canny (cuda/canny_cuda.h, sigma 1.4, thresholds 20/60) at 640x480
 * and 1920x1080: the CPU reference (whole frame, ms), the GPU round trip
 * from a malloc'd frame with edges only and with magnitude and direction
 * too, and the GPU time of upload / kernels / download from events.
 * Then the GPU segmenter (cuda/label_cuda.h) at 640x480, 1080p and 4K: a
 * mask already on the GPU (the CPU threshold of the same content, r = 6)
 * -> the tree's arrays on the host (submit + collect): the default path
 * (auto), the fused kernel with one and two blocks a multiprocessor and
 * the chain of kernels as CUDA graphs, and the chain launched call by
 * call, with the GPU time of the kernels (which write the tree into host
 * memory) from events and the submitting call's time, beside the CPU
 * segmenter (segment_process, one thread) on the same mask; and the
 * default path again with 8.3 ms before each frame, as the daemon idles
 * between frames at 120 fps: the thread asleep, then spinning.
 * Then the GPU SIFT (cuda/sift_cuda.h) at 640x480 and 1080p on textured
 * pictures: the whole extraction from a malloc'd frame to sorted keypoints
 * with descriptors on the host (median / p99), the GPU time of the pyramid,
 * detection and descriptors from events, and OpenCV's SIFT (a few frames)
 * beside it when built in.
 * Frames rotate among 4 buffers so caches do not flatter the numbers.
 * Numbers, not assertions.
 */
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
#include "../common/sift_scene.h"
#include "../../src/segment/segment.h"
#include "../../src/core/clock.h"
#include "../../src/core/err.h"
#include "../../src/core/log.h"
#include "../../src/outline/canny.h"
#include "../../src/threshold/threshold.h"

#define N_BUF 4

static struct timing tm[10];
static int n_frames = 1000;

static void cpu_model(char *out, size_t cap)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	int n = 0;
	snprintf(out, cap, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "processor", 9) == 0)
			n++;
		char *c = strchr(line, ':');
		if (n == 1 && strncmp(line, "model name", 10) == 0 && c) {
			c[strcspn(c, "\n")] = 0;
			snprintf(out, cap, "%s", c + 2);
		}
	}
	fclose(f);
	size_t len = strlen(out);
	snprintf(out + len, cap - len, ", %d logical CPUs", n);
}

/* Structured content: a gradient (uneven light), dark blobs and noise. */
static void fill(struct image_u8 *img, unsigned seed)
{
	for (int y = 0; y < img->height; y++) {
		uint8_t *row = image_u8_row(img, y);
		for (int x = 0; x < img->width; x++) {
			seed = seed * 1103515245u + 12345u;
			int v = 90 + (x * 80) / img->width + (y * 40) / img->height + (int)((seed >> 16) % 13);
			if (((x / 37) + (y / 41)) % 5 == 0)
				v -= 70;
			row[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	}
}

static void stat_us(int i, double *med, double *p99)
{
	int64_t m, p;
	timing_summary(&tm[i], &m, &p);
	*med = (double)m / 1000.0;
	*p99 = (double)p / 1000.0;
}

static void reset(void) { memset(tm, 0, sizeof tm); }

/* One configuration on the GPU object g: rows of the table. */
static void run_gpu(struct cuda_threshold *g, struct image_u8 *bufs, struct image_u8 *pageable, struct bitmask *out,
		    struct cuda_threshold_config *cfg)
{
	const uint64_t *view;
	int sw;
	for (int i = 0; i < 50; i++) { /* warm-up */
		cuda_threshold_submit(g, bufs[i % N_BUF].data, bufs[0].width, bufs[0].height, bufs[0].stride);
		cuda_threshold_collect_view(g, &view, &sw);
	}
	for (int i = 0; i < n_frames; i++) {
		const struct image_u8 *f = &pageable[i % N_BUF];
		int64_t t0 = clock_now_ns();
		cuda_threshold_submit(g, f->data, f->width, f->height, f->stride);
		cuda_threshold_collect(g, out->bits, out->stride_words);
		timing_add(&tm[1], clock_now_ns() - t0);
	}
	for (int i = 0; i < n_frames; i++) {
		const struct image_u8 *f = &bufs[i % N_BUF];
		int64_t t0 = clock_now_ns();
		cuda_threshold_submit(g, f->data, f->width, f->height, f->stride);
		cuda_threshold_collect(g, out->bits, out->stride_words);
		timing_add(&tm[2], clock_now_ns() - t0);
	}
	for (int i = 0; i < n_frames; i++) {
		const struct image_u8 *f = &bufs[i % N_BUF];
		int64_t t0 = clock_now_ns();
		cuda_threshold_submit(g, f->data, f->width, f->height, f->stride);
		int64_t t1 = clock_now_ns();
		cuda_threshold_collect_view(g, &view, &sw);
		int64_t t2 = clock_now_ns();
		timing_add(&tm[3], t2 - t0);
		timing_add(&tm[4], t1 - t0);
		timing_add(&tm[5], t2 - t1);
	}
	cfg->profile = 1;
	cuda_threshold_set_config(g, cfg);
	for (int i = 0; i < n_frames; i++) {
		const struct image_u8 *f = &bufs[i % N_BUF];
		float up, kern, down;
		cuda_threshold_submit(g, f->data, f->width, f->height, f->stride);
		cuda_threshold_collect_view(g, &view, &sw);
		if (cuda_threshold_stage_times(g, &up, &kern, &down) == 0) {
			timing_add(&tm[6], (int64_t)(up * 1000.0f));
			timing_add(&tm[7], (int64_t)(kern * 1000.0f));
			timing_add(&tm[8], (int64_t)(down * 1000.0f));
		}
	}
	/* the generic (any radius) kernel, for comparison with the specialised one */
	cfg->kernel_variant = 1;
	cuda_threshold_set_config(g, cfg);
	for (int i = 0; i < n_frames / 4; i++) {
		const struct image_u8 *f = &bufs[i % N_BUF];
		float up, kern, down;
		cuda_threshold_submit(g, f->data, f->width, f->height, f->stride);
		cuda_threshold_collect_view(g, &view, &sw);
		if (cuda_threshold_stage_times(g, &up, &kern, &down) == 0)
			timing_add(&tm[9], (int64_t)(kern * 1000.0f));
	}
	cfg->kernel_variant = 0;
	cfg->profile = 0;
	cuda_threshold_set_config(g, cfg);
}

/* Canny: one line a frame size. */
static void canny_bench(int have_gpu)
{
	static const int sizes[][2] = {{640, 480}, {1920, 1080}};
	printf("\ncanny sigma 1.4, 20/60 (median / p99): %-9s | %-15s | %-15s %-15s | %-13s %-13s %-13s\n", "frame",
	       "cpu ms", "edges us", "edges+m+d us", "up us", "kern us", "down us");
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		int w = sizes[s][0], h = sizes[s][1], err;
		struct image_u8 bufs[N_BUF];
		for (int i = 0; i < N_BUF; i++) {
			if (image_u8_alloc(&bufs[i], w, h) < 0)
				return;
			fill(&bufs[i], (unsigned)i + 7);
		}
		struct canny_config cc = {w, h, 14, 20, 60};
		struct canny *cpu = canny_create(&cc, &err);
		struct cuda_canny_config gc;
		memset(&gc, 0, sizeof gc);
		gc.max_width = w;
		gc.max_height = h;
		gc.low = 20;
		gc.high = 60;
		gc.gauss_radius = cpu ? canny_taps(cpu, gc.gauss_taps) : 0;
		struct cuda_canny *g = have_gpu && cpu ? cuda_canny_create(&gc, &err) : NULL;
		uint8_t *edge = malloc((size_t)w * h), *dir = malloc((size_t)w * h);
		uint16_t *mag = malloc((size_t)w * h * sizeof *mag);
		if (!cpu || !edge || !dir || !mag)
			goto next;
		reset();
		struct canny_out o = {edge, mag, dir, w};
		for (int i = 0; i < (n_frames < 50 ? n_frames : 50); i++) {
			int64_t t0 = clock_now_ns();
			canny_process(cpu, &bufs[i % N_BUF], &o);
			timing_add(&tm[0], clock_now_ns() - t0);
		}
		if (g) {
			for (int i = 0; i < n_frames; i++) {
				const struct image_u8 *in = &bufs[i % N_BUF];
				int64_t t0 = clock_now_ns();
				cuda_canny_submit(g, in->data, w, h, in->stride, 0, 0, w, h);
				cuda_canny_collect(g, edge, NULL, NULL, w);
				int64_t t1 = clock_now_ns();
				cuda_canny_submit(g, in->data, w, h, in->stride, 0, 0, w, h);
				cuda_canny_collect(g, edge, mag, dir, w);
				timing_add(&tm[1], t1 - t0);
				timing_add(&tm[2], clock_now_ns() - t1);
			}
			gc.profile = 1;
			cuda_canny_set_config(g, &gc);
			for (int i = 0; i < n_frames; i++) {
				const struct image_u8 *in = &bufs[i % N_BUF];
				float up, kern, down;
				cuda_canny_submit(g, in->data, w, h, in->stride, 0, 0, w, h);
				cuda_canny_collect(g, edge, NULL, NULL, w);
				if (cuda_canny_stage_times(g, &up, &kern, &down) == 0) {
					timing_add(&tm[3], (int64_t)(up * 1000.0f));
					timing_add(&tm[4], (int64_t)(kern * 1000.0f));
					timing_add(&tm[5], (int64_t)(down * 1000.0f));
				}
			}
		}
		double m[6], p[6];
		for (int i = 0; i < 6; i++)
			stat_us(i, &m[i], &p[i]);
		printf("%-9dx%-5d %24s | %6.2f / %6.2f | %6.1f / %6.1f %6.1f / %6.1f | %5.1f / %5.1f %5.1f / %5.1f "
		       "%5.1f / %5.1f\n",
		       w, h, "", m[0] / 1000, p[0] / 1000, m[1], p[1], m[2], p[2], m[3], p[3], m[4], p[4], m[5], p[5]);
	next:
		cuda_canny_destroy(g);
		canny_destroy(cpu);
		free(edge);
		free(dir);
		free(mag);
		for (int i = 0; i < N_BUF; i++)
			image_u8_free(&bufs[i]);
	}
}

/* The GPU segmenter: device mask -> tree arrays on the host, and the CPU
 * segmenter on the same mask. */
static void bench_label(void)
{
	static const int sizes[][2] = {{640, 480}, {1920, 1080}, {3840, 2160}};
	static const struct {
		int no_graph, path, blocks_per_sm, gap_us;
		const char *name;
	} modes[] = {{0, LABEL_AUTO, 0, 0, "default: auto, graph"},
		     {0, LABEL_AUTO, 0, 8333, "default, one a 8.3 ms as at 120 fps"},
		     {0, LABEL_AUTO, 0, -8333, "default, one a 8.3 ms, the thread spinning between"},
		     {0, LABEL_FUSED, 2, 0, "fused, 2 blocks/SM, graph"},
		     {0, LABEL_FUSED, 1, 0, "fused, graph"},
		     {0, LABEL_CHAIN, 0, 0, "chain, graph"},
		     {1, LABEL_CHAIN, 0, 0, "chain, no graph"}};
	const int n_modes = (int)(sizeof modes / sizeof *modes);
	for (int s = 0; s < 3 * n_modes; s++) {
		const int w = sizes[s / n_modes][0], h = sizes[s / n_modes][1];
		const int mode = s % n_modes;
		struct threshold_config tc = {.max_width = w, .max_height = h, .mode = THRESHOLD_BERNSEN, .radius = 6,
					      .gate = 32, .tile = 10, .mean_radius = 16, .mean_bias = 16};
		struct segment_config sc = {w, h, 19, 0, 0};
		struct cuda_label_config lc = {w, h, 19, 0, 0, modes[mode].no_graph, modes[mode].path,
					       modes[mode].blocks_per_sm, 1};
		struct image_u8 img;
		struct bitmask m;
		int err = 0;
		struct threshold *cpu = threshold_create(&tc, "cpu", &err);
		struct segment *seg = segment_create(&sc, &err);
		struct cuda_label *lab = cuda_label_create(&lc, &err);
		if (!cpu || !seg || !lab || image_u8_alloc(&img, w, h) < 0 || bitmask_alloc(&m, w, h) < 0) {
			printf("label %dx%d: cannot create (%s)\n", w, h, err_str(err));
			return;
		}
		fill(&img, 7);
		threshold_process(cpu, &img, &m);
		reset();
		const struct region_tree *t = NULL, *ref = NULL;
		int ok = cuda_label_upload(lab, m.bits, w, h, m.stride_words) == 0;
		for (int i = 0; ok && i < 20; i++)
			ok = cuda_label_submit(lab, NULL, w, h, 0, NULL) == 0 && cuda_label_collect(lab, &t) == 0;
		/* The paced modes leave 8.3 ms between frames as the daemon does
		 * at 120 fps, a tenth of the frames so that they stay short: one
		 * sleeps (the GPU and the thread idle in between), the other
		 * spins (only the GPU idles), which tells the host's wake-up from
		 * the GPU's. */
		const int gap = modes[mode].gap_us;
		const int runs = gap ? (n_frames / 10 > 50 ? n_frames / 10 : 50) : n_frames;
		int64_t cpu_ns = 0; /* the process's CPU over each frame's submit and collect */
		for (int i = 0; ok && i < runs; i++) {
			if (gap > 0)
				nanosleep(&(struct timespec){0, (long)gap * 1000}, NULL);
			for (const int64_t until = clock_now_ns() - (int64_t)gap * 1000; gap < 0 && clock_now_ns() < until;)
				;
			const int64_t c0 = clock_process_cpu_ns();
			int64_t t0 = clock_now_ns();
			ok = cuda_label_submit(lab, NULL, w, h, 0, NULL) == 0;
			const int64_t t1 = clock_now_ns();
			ok = ok && cuda_label_collect(lab, &t) == 0;
			timing_add(&tm[0], clock_now_ns() - t0);
			timing_add(&tm[3], t1 - t0);
			cpu_ns += clock_process_cpu_ns() - c0;
			float gu = 0;
			if (ok && cuda_label_gpu_time(lab, &gu) == 0)
				timing_add(&tm[2], (int64_t)(gu * 1000.0f));
		}
		const double cpu_us = (double)cpu_ns / 1e3 / runs;
		for (int i = 0; i < n_frames / 4; i++) {
			int64_t t0 = clock_now_ns();
			segment_process(seg, &m, &ref);
			timing_add(&tm[1], clock_now_ns() - t0);
		}
		double mg, pg, mc, pc, mk, pk, ms, ps;
		stat_us(0, &mg, &pg);
		stat_us(1, &mc, &pc);
		stat_us(2, &mk, &pk);
		stat_us(3, &ms, &ps);
		if (ok)
			printf("label %4dx%-5d | gpu mask->tree on host %7.1f / %7.1f us (%s; GPU %.1f, submit %.1f; "
			       "CPU %.1f us a frame) | "
			       "cpu segment (1 thread) %7.1f / %7.1f us | %d runs, %d regions\n",
			       w, h, mg, pg, modes[mode].name, mk, ms, cpu_us, mc, pc,
			       (int)t->n_runs, (int)t->n_regions);
		else
			printf("label %dx%d: the GPU segmenter failed\n", w, h);
		cuda_label_destroy(lab);
		segment_destroy(seg);
		threshold_destroy(cpu);
		image_u8_free(&img);
		bitmask_free(&m);
	}
}

static void bench_sift(void)
{
	static const int sizes[][2] = {{640, 480}, {1920, 1080}};
	static struct objects_keypoint kp[OBJECTS_MAX_KEYPOINTS];
	for (int s = 0; s < 2; s++) {
		const int w = sizes[s][0], h = sizes[s][1];
		struct image_u8 bufs[N_BUF];
		struct cuda_sift_config cc = {.max_keypoints = 2000, .contrast_threshold = 0.04f};
		int err = 0, n = 0, ok = 1;
		struct cuda_sift *cs = cuda_sift_create(&cc, &err);
		for (int i = 0; i < N_BUF; i++) {
			ok = ok && image_u8_alloc(&bufs[i], w, h) == 0;
			if (ok)
				sift_scene_texture(&bufs[i], 900 + (uint64_t)i, w * h / 600);
		}
		if (!cs || !ok) {
			printf("sift %dx%d: cannot create (%s)\n", w, h, err_str(err));
			cuda_sift_destroy(cs);
			return;
		}
		/* Registered, as the recognition stage registers its frame copy. */
		for (int i = 0; i < N_BUF; i++)
			cuda_sift_register(cs, bufs[i].data, (size_t)bufs[i].stride * (size_t)bufs[i].height);
		reset();
		for (int i = 0; ok && i < 10; i++)
			ok = cuda_sift_extract(cs, bufs[i % N_BUF].data, w, h, bufs[i % N_BUF].stride, kp, 2000, &n) == 0;
		const int frames = n_frames < 200 ? n_frames : 200;
		for (int i = 0; ok && i < frames; i++) {
			const struct image_u8 *f = &bufs[i % N_BUF];
			int64_t t0 = clock_now_ns();
			ok = cuda_sift_extract(cs, f->data, w, h, f->stride, kp, 2000, &n) == 0;
			timing_add(&tm[0], clock_now_ns() - t0);
			float a, b, c;
			if (ok && cuda_sift_stage_times(cs, &a, &b, &c) == 0) {
				timing_add(&tm[1], (int64_t)(a * 1000));
				timing_add(&tm[2], (int64_t)(b * 1000));
				timing_add(&tm[3], (int64_t)(c * 1000));
			}
		}
		double m[4], p[4];
		for (int i = 0; i < 4; i++)
			stat_us(i, &m[i], &p[i]);
		if (ok)
			printf("sift %4dx%-5d | gpu extract (registered frame -> %d keypoints on host) %7.1f / %7.1f us | gpu pyramid "
			       "%6.1f / %6.1f  detect %6.1f / %6.1f  select+describe %6.1f / %6.1f us\n",
			       w, h, n, m[0], p[0], m[1], p[1], m[2], p[2], m[3], p[3]);
		else
			printf("sift %dx%d: the GPU SIFT failed\n", w, h);
		/* The same kernel by kernel, without the CUDA graph. */
		{
			struct cuda_sift_config cn = cc;
			cn.no_graph = 1;
			struct cuda_sift *c2 = cuda_sift_create(&cn, &err);
			reset();
			for (int i = 0; c2 && i < frames + 10; i++) {
				const struct image_u8 *f = &bufs[i % N_BUF];
				int64_t t0 = clock_now_ns();
				int ok2 = cuda_sift_extract(c2, f->data, w, h, f->stride, kp, 2000, &n) == 0;
				if (ok2 && i >= 10)
					timing_add(&tm[0], clock_now_ns() - t0);
			}
			stat_us(0, &m[0], &p[0]);
			if (c2)
				printf("sift %4dx%-5d | gpu extract kernel by kernel (no graph)        %7.1f / %7.1f us\n", w, h,
				       m[0], p[0]);
			cuda_sift_destroy(c2);
		}
		/* Matching 2000 frame keypoints against a library of three frames' keypoints. */
		if (ok && s == 1) {
			static struct objects_keypoint lib[6000];
			static struct objects_nearest nn[2000];
			int n_lib = 0, nq = 0;
			for (int i = 1; i < 4; i++) {
				int k = 0;
				if (cuda_sift_extract(cs, bufs[i].data, w, h, bufs[i].stride, lib + n_lib, 2000, &k) == 0)
					n_lib += k;
			}
			cuda_sift_extract(cs, bufs[0].data, w, h, bufs[0].stride, kp, 2000, &nq);
			struct cuda_match *cm = cuda_match_create(lib, n_lib, 2000, &err);
			reset();
			for (int i = 0; cm && i < frames + 10; i++) {
				int64_t t0 = clock_now_ns();
				if (cuda_match_nearest(cm, kp, nq, nn) == 0 && i >= 10)
					timing_add(&tm[0], clock_now_ns() - t0);
			}
			stat_us(0, &m[0], &p[0]);
			if (cm)
				printf("sift match | gpu nearest two, %d keypoints against %d (host to host) %7.1f / %7.1f us\n",
				       nq, n_lib, m[0], p[0]);
			reset();
			for (int i = 0; i < 3; i++) {
				int64_t t0 = clock_now_ns();
				objects_nearest_cpu(lib, n_lib, kp, nq, nn);
				timing_add(&tm[0], clock_now_ns() - t0);
			}
			stat_us(0, &m[0], &p[0]);
			printf("sift match | cpu nearest two (1 thread, 3 runs), %d against %d      %9.1f / %9.1f us\n", nq,
			       n_lib, m[0], p[0]);
			cuda_match_destroy(cm);
		}
#if TT_HAVE_OPENCV
		struct sift_config sc;
		sift_config_default(&sc);
		struct sift *cv = sift_create(&sc, "opencv", &err);
		reset();
		for (int i = 0; cv && i < 8; i++) {
			int64_t t0 = clock_now_ns();
			sift_extract(cv, &bufs[i % N_BUF], kp, 2000, &n);
			timing_add(&tm[0], clock_now_ns() - t0);
		}
		stat_us(0, &m[0], &p[0]);
		if (cv)
			printf("sift %4dx%-5d | opencv (1 thread, 8 frames) %9.1f / %9.1f us, %d keypoints\n", w, h, m[0],
			       p[0], n);
		sift_destroy(cv);
#endif
		cuda_sift_destroy(cs);
		for (int i = 0; i < N_BUF; i++)
			image_u8_free(&bufs[i]);
	}
}

int main(int argc, char **argv)
{
	static const int sizes[][2] = {{640, 480}, {1280, 720}, {1920, 1080}, {3840, 2160}};
	static const int radii[] = {6, 32};
	char cpu_name[256], gpu_name[256];
	if (argc > 1)
		n_frames = atoi(argv[1]) > 0 ? atoi(argv[1]) : 1000;
	log_set_level(LOG_WARN);
	cpu_model(cpu_name, sizeof cpu_name);
	int have_gpu = cuda_threshold_probe(gpu_name, sizeof gpu_name) == 0;
	printf("machine: CPU %s\n         GPU %s\n", cpu_name, gpu_name);
	printf("frames per row: %d (median / p99; CPU in ms, GPU in us)\n\n", n_frames);
	printf("%-10s %3s | %-15s | %-15s %-15s %-15s | %-13s %-13s | %-11s %-11s %-11s %-11s\n", "frame", "r",
	       "cpu ms", "pageable us", "reg+copy us", "reg+view us", "submit us", "collect us", "up us",
	       "kern us", "down us", "kgen us");
	int only_w = 0, only_h = 0;
	if (argc > 2 && sscanf(argv[2], "%dx%d", &only_w, &only_h) != 2)
		only_w = only_h = 0;
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		int w = sizes[s][0], h = sizes[s][1];
		if (only_w && (w != only_w || h != only_h))
			continue;
		struct image_u8 bufs[N_BUF], pageable[N_BUF];
		struct bitmask out;
		for (int i = 0; i < N_BUF; i++) {
			if (image_u8_alloc(&bufs[i], w, h) < 0 || image_u8_alloc(&pageable[i], w, h) < 0)
				return 1;
			fill(&bufs[i], (unsigned)i + 1);
			image_u8_copy(&pageable[i], &bufs[i]);
		}
		bitmask_alloc(&out, w, h);
		struct threshold_config tc = {.max_width = w, .max_height = h, .mode = THRESHOLD_BERNSEN, .radius = 6,
					      .gate = 32, .tile = 10, .median = 0, .gauss_sigma = 0.0f};
		int err;
		struct threshold *cpu = threshold_create(&tc, "cpu", &err);
		struct cuda_threshold_config gc = {.max_width = w, .max_height = h, .mode = 0, .radius = 6, .gate = 32,
						   .tile = 10, .median = 0, .profile = 0, .kernel_variant = 0};
		struct cuda_threshold *g = have_gpu ? cuda_threshold_create(&gc, &err) : NULL;
		for (int i = 0; g && i < N_BUF; i++)
			cuda_threshold_register(g, bufs[i].data, (size_t)bufs[i].stride * (size_t)h);
		for (size_t ri = 0; ri < sizeof radii / sizeof radii[0]; ri++) {
			reset();
			tc.radius = gc.radius = radii[ri];
			threshold_set_config(cpu, &tc);
			for (int i = 0; i < n_frames; i++) {
				int64_t t0 = clock_now_ns();
				threshold_process(cpu, &bufs[i % N_BUF], &out);
				timing_add(&tm[0], clock_now_ns() - t0);
			}
			if (g) {
				cuda_threshold_set_config(g, &gc);
				run_gpu(g, bufs, pageable, &out, &gc);
			}
			double m[10], p[10];
			for (int i = 0; i < 10; i++)
				stat_us(i, &m[i], &p[i]);
			printf("%4dx%-5d %3d | %6.3f / %6.3f | %6.1f / %6.1f %6.1f / %6.1f %6.1f / %6.1f | %5.1f / %5.1f "
			       "%5.1f / %5.1f | %4.1f / %4.1f %4.1f / %4.1f %4.1f / %4.1f %4.1f / %4.1f\n",
			       w, h, radii[ri], m[0] / 1000, p[0] / 1000, m[1], p[1], m[2], p[2], m[3], p[3], m[4], p[4],
			       m[5], p[5], m[6], p[6], m[7], p[7], m[8], p[8], m[9], p[9]);
			fflush(stdout);
		}
		if (g) {
			static const int bands[] = {0, 1, 2, 3, 4, 6, 8};
			const uint64_t *view;
			int sw;
			printf("%4dx%-5d   6 | reg+view us by bands:", w, h);
			gc.radius = 6;
			for (size_t b = 0; b < sizeof bands / sizeof bands[0]; b++) {
				reset();
				gc.bands = bands[b];
				cuda_threshold_set_config(g, &gc);
				for (int i = 0; i < 50 + n_frames; i++) {
					const struct image_u8 *f = &bufs[i % N_BUF];
					int64_t t0 = clock_now_ns();
					cuda_threshold_submit(g, f->data, f->width, f->height, f->stride);
					cuda_threshold_collect_view(g, &view, &sw);
					if (i >= 50)
						timing_add(&tm[0], clock_now_ns() - t0);
				}
				double m0, p0;
				stat_us(0, &m0, &p0);
				if (bands[b])
					printf("  %d: %.1f / %.1f", bands[b], m0, p0);
				else
					printf("  auto: %.1f / %.1f", m0, p0);
			}
			printf("\n");
			gc.bands = 0;
			cuda_threshold_set_config(g, &gc);
		}
		/* the other stages, at 1080p only */
		if (g && w == 1920) {
			static const struct {
				const char *name;
				int mode, median;
				float sigma;
			} extra[] = {{"median3+r6", 0, 3, 0.0f}, {"median5+r6", 0, 5, 0.0f},
				     {"gauss1.0+r6", 0, 0, 1.0f}, {"tiled10", 1, 0, 0.0f}};
			for (size_t e = 0; e < sizeof extra / sizeof extra[0]; e++) {
				reset();
				gc.radius = 6;
				gc.mode = tc.mode = extra[e].mode;
				gc.median = tc.median = extra[e].median;
				tc.gauss_sigma = extra[e].sigma;
				memset(gc.gauss_taps, 0, sizeof gc.gauss_taps);
				gc.gauss_radius = 0;
				if (tc.gauss_sigma > 0.0f)
					gc.gauss_radius = threshold_gauss_taps(tc.gauss_sigma, gc.gauss_taps);
				threshold_set_config(cpu, &tc);
				cuda_threshold_set_config(g, &gc);
				for (int i = 0; i < n_frames / 4; i++) {
					int64_t t0 = clock_now_ns();
					threshold_process(cpu, &bufs[i % N_BUF], &out);
					timing_add(&tm[0], clock_now_ns() - t0);
				}
				run_gpu(g, bufs, pageable, &out, &gc);
				double m[10], p[10];
				for (int i = 0; i < 10; i++)
					stat_us(i, &m[i], &p[i]);
				printf("%-14s | %6.3f / %6.3f | %6.1f / %6.1f %6.1f / %6.1f %6.1f / %6.1f | %5.1f / %5.1f "
				       "%5.1f / %5.1f | %4.1f / %4.1f %4.1f / %4.1f %4.1f / %4.1f\n",
				       extra[e].name, m[0] / 1000, p[0] / 1000, m[1], p[1], m[2], p[2], m[3], p[3], m[4],
				       p[4], m[5], p[5], m[6], p[6], m[7], p[7], m[8], p[8]);
			}
			gc.mode = tc.mode = 0;
			gc.median = tc.median = 0;
			tc.gauss_sigma = 0.0f;
			memset(gc.gauss_taps, 0, sizeof gc.gauss_taps);
			gc.gauss_radius = 0;
		}
		cuda_threshold_destroy(g);
		threshold_destroy(cpu);
		bitmask_free(&out);
		for (int i = 0; i < N_BUF; i++) {
			image_u8_free(&bufs[i]);
			image_u8_free(&pageable[i]);
		}
	}
	canny_bench(have_gpu);
	bench_label();
	bench_sift();
	return 0;
}
