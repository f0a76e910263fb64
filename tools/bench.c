/*
 * tabletrack-bench - per-stage timing of the frame pipeline, no camera.
 *
 *     tabletrack-bench [-n FRAMES] [-r 6,32] [-2 RADIUS2] [-m MEDIAN2] [-j SEGMENT_THREADS] [-g GATE]
 *                      [-b cpu,cuda] [-s WxH] [-t TREES] [DIR]
 *
 * Loads up to 64 frames (PNG/PGM) from DIR into memory, or makes 4 synthetic
 * frames of each -s size (default 640x480 and 1920x1080: uneven light, dark
 * blobs, noise). For each backend and radius it runs FRAMES frames (default
 * 300) through the daemon's per-frame script (src/pipeline/engine.h:
 * threshold at both scales, segment, match, track; radius -r 8, second scale
 * -2 2 with median -m 3, as the daemon's defaults) and the TUIO encoding, and
 * prints median and p99 of each stage and of the whole frame; then the whole
 * frame with the next frame's threshold overlapped; then the threshold stage
 * alone (mask copied out). Prints the machine (CPU model, GPU if any).
 * Numbers, not assertions.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda/bernsen_cuda.h"
#include "../src/core/clock.h"
#include "../src/core/detect.h"
#include "../src/core/err.h"
#include "../src/core/image_io.h"
#include "../src/core/log.h"
#include "../src/core/tracked.h"
#include "../src/fiducial/match.h"
#include "../src/fiducial/trees.h"
#include "../src/segment/segment.h"
#include "../src/pipeline/engine.h"
#include "../src/threshold/threshold.h"
#include "../src/track/track.h"
#include "../src/tuio/tuio_encode.h"

#define MAX_FRAMES 64
#define DET_CAP 512

/* The first five are the script's stages, in enum stage order. */
enum { ST_TUIO = STAGE_TUIO, ST_FRAME, ST_OVERLAP, ST_ALONE, N_ST };
static const char *stage_names[N_ST] = {"threshold", "segment", "match", "track", "tuio encode",
					"whole frame", "frame, overlapped", "threshold alone"};
static struct timing timings[N_ST];

static void print_machine(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512], model[256] = "unknown CPU";
	int n = 0;
	while (f && fgets(line, sizeof line, f)) {
		char *c = strchr(line, ':');
		if (strncmp(line, "processor", 9) == 0)
			n++;
		if (n == 1 && c && strncmp(line, "model name", 10) == 0) {
			c[strcspn(c, "\n")] = 0;
			snprintf(model, sizeof model, "%s", c + 2);
		}
	}
	if (f)
		fclose(f);
	char why[200];
	int gpu = cuda_threshold_probe(why, sizeof why) == 0;
	why[strcspn(why, "\n")] = 0;
	printf("machine: %s, %d logical CPUs; GPU: %s%s%s\n", model, n, gpu ? "" : "none (", why, gpu ? "" : ")");
}

static void fill_synthetic(struct image_u8 *img, unsigned seed)
{
	for (int y = 0; y < img->height; y++) {
		uint8_t *row = image_u8_row(img, y);
		for (int x = 0; x < img->width; x++) {
			seed = seed * 1103515245u + 12345u;
			int v = 90 + (x * 80) / img->width + (y * 40) / img->height + (int)((seed >> 16) % 13);
			int cx = (x / 48) * 48 + 24, cy = (y / 48) * 48 + 24, dx = x - cx, dy = y - cy;
			if (((x / 48) + (y / 48)) % 3 == 0 && dx * dx + dy * dy < 300)
				v -= 80;
			row[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	}
}

static int load_dir(const char *dir, struct image_u8 *frames)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	char path[1024];
	if (!d) {
		fprintf(stderr, "tabletrack-bench: cannot open %s\n", dir);
		return 0;
	}
	while ((e = readdir(d)) && n < MAX_FRAMES) {
		size_t len = strlen(e->d_name);
		if (len < 5 || (strcmp(e->d_name + len - 4, ".png") && strcmp(e->d_name + len - 4, ".pgm")))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (image_read(path, &frames[n]) == 0)
			n++;
	}
	closedir(d);
	/* one size a run: keep the frames that match the first */
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (frames[i].width == frames[0].width && frames[i].height == frames[0].height)
			frames[k++] = frames[i];
		else
			image_u8_free(&frames[i]);
	}
	return k;
}

static void report(const char *what)
{
	printf("  %s\n", what);
	for (int s = 0; s < N_ST; s++) {
		int64_t med, p99;
		if (!timings[s].n_total)
			continue;
		timing_summary(&timings[s], &med, &p99);
		printf("    %-16s median %8.3f ms   p99 %8.3f ms\n", stage_names[s], (double)med / 1e6, (double)p99 / 1e6);
	}
}

/* Whole-frame timing through the daemon's own per-frame script
 * (src/pipeline/engine.h) plus the TUIO encoding, frame after frame; then
 * the same with frame N+1's threshold submitted before frame N's CPU work
 * (what the GPU path overlaps); then the threshold stage alone. */
static int seg_threads; /* -j: segmentation threads a scale (0 = auto) */

static void run(const char *backend, int radius, int radius2, int median2, int gate, struct image_u8 *frames,
		int n_frames_loaded, int n_runs, const struct tree_set *trees)
{
	int w = frames[0].width, h = frames[0].height, err = 0;
	struct track_config tk;
	memset(&tk, 0, sizeof tk);
	tk.max_items = DET_CAP;
	tk.linger_frames = 2;
	struct track *tr = track_create(&tk, &err);
	struct engine_config ec = {
		.width = w, .height = h, .backend = backend,
		.thr = {.mode = THRESHOLD_BERNSEN, .radius = radius, .gate = gate, .tile = 10},
		.radius2 = radius2, .median2 = median2, .segment_threads = seg_threads,
		.match = {.trees = trees, .finger_size_px = 18.0f * (float)w / 640.0f, .finger_sensitivity = 0.5f,
			  .finger_min_contrast = 16, .root_min_px = 12.0f, .root_max_px = (float)(w < h ? w : h) / 2.0f},
		.tracker = tr, .max_detections = DET_CAP};
	struct engine *e = tr ? engine_create(&ec, &err) : NULL;
	struct tuio_encoder_config tc = {0};
	snprintf(tc.source, sizeof tc.source, "tabletrack@bench");
	struct tuio_encoder *enc = e ? tuio_encoder_create(&tc, &err) : NULL;
	if (!enc) {
		printf("  backend %s: unavailable (%s)\n", backend, err_str(err));
		engine_destroy(e);
		track_destroy(tr);
		return;
	}
	for (int i = 0; i < n_frames_loaded; i++)
		engine_register_buffer(e, frames[i].data, (size_t)frames[i].stride * (size_t)h);
	memset(timings, 0, sizeof timings);
	struct tracked_state st;
	uint64_t fseq = 0;
	int64_t cpu0 = 0, wall0 = 0;
	for (int i = 0; i < n_runs + 10; i++) {
		if (i == 10) {
			cpu0 = clock_process_cpu_ns();
			wall0 = clock_now_ns();
		}
		const struct image_u8 *g = &frames[i % n_frames_loaded];
		int64_t t0 = clock_now_ns();
		if (engine_process(e, g, ++fseq, t0, &st) < 0)
			break;
		int64_t t1 = clock_now_ns();
		tuio_encode_frame(enc, &st, false, 0);
		int64_t t2 = clock_now_ns();
		if (i < 10)
			continue; /* warm-up */
		const struct engine_times *et = engine_times(e);
		for (int k = 0; k < STAGE_TUIO; k++)
			timing_add(&timings[k], et->ns[k]);
		timing_add(&timings[ST_TUIO], t2 - t1);
		timing_add(&timings[ST_FRAME], t2 - t0);
	}
	/* CPU time of every thread (user + system) against wall time, for the
	 * frames just timed: a fast frame that keeps cores spinning is not fast. */
	double frame_cpu_ms = (double)(clock_process_cpu_ns() - cpu0) / 1e6 / (n_runs > 0 ? n_runs : 1);
	double frame_wall_ms = (double)(clock_now_ns() - wall0) / 1e6 / (n_runs > 0 ? n_runs : 1);
	/* Overlapped: the next frame's threshold runs while this one is segmented. */
	engine_submit(e, &frames[0]);
	for (int i = 0; i < n_runs + 10; i++) {
		const struct image_u8 *g = &frames[i % n_frames_loaded], *next = &frames[(i + 1) % n_frames_loaded];
		int64_t t0 = clock_now_ns();
		if (engine_collect(e) < 0 || engine_submit(e, next) < 0 || engine_finish(e, g, ++fseq, t0, &st) < 0)
			break;
		tuio_encode_frame(enc, &st, false, 0);
		if (i >= 10)
			timing_add(&timings[ST_OVERLAP], clock_now_ns() - t0);
	}
	engine_collect(e);
	struct threshold_config thc = ec.thr;
	thc.max_width = w;
	thc.max_height = h;
	struct threshold *th = threshold_create(&thc, engine_backend(e), &err);
	struct bitmask out;
	if (th && bitmask_alloc(&out, w, h) == 0) {
		for (int i = 0; i < n_frames_loaded; i++)
			threshold_register_buffer(th, frames[i].data, (size_t)frames[i].stride * (size_t)h);
		for (int i = 0; i < n_runs; i++) {
			int64_t t0 = clock_now_ns();
			threshold_process(th, &frames[i % n_frames_loaded], &out);
			timing_add(&timings[ST_ALONE], clock_now_ns() - t0);
		}
		bitmask_free(&out);
	}
	char what[200];
	snprintf(what, sizeof what, "%dx%d backend %s, radius %d, second scale %s%d (median %d), gate %d, %d frames:",
		 w, h, engine_backend(e), radius, radius2 ? "" : "off ", radius2, median2, gate, n_runs);
	report(what);
	printf("    %-16s %8.3f ms CPU (user+sys, all threads) a frame against %.3f ms wall: %.2f cores busy\n",
	       "frame CPU", frame_cpu_ms, frame_wall_ms, frame_wall_ms > 0 ? frame_cpu_ms / frame_wall_ms : 0.0);
	threshold_destroy(th);
	tuio_encoder_destroy(enc);
	engine_destroy(e);
	track_destroy(tr);
}

int main(int argc, char **argv)
{
	int n_runs = 300, gate = 32, radius2 = 2, median2 = 3, radii[8] = {8, 32}, n_radii = 2, sizes[8][2] = {{640, 480}, {1920, 1080}}, n_sizes = 2;
	const char *backends = "cpu,cuda", *trees_path = "fiducials/tabletrack.trees", *dir = NULL;
	bool sizes_given = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-n") && v) {
			n_runs = atoi(v) > 0 ? atoi(v) : n_runs;
			i++;
		} else if (!strcmp(a, "-g") && v) {
			gate = atoi(v);
			i++;
		} else if (!strcmp(a, "-b") && v) {
			backends = v;
			i++;
		} else if (!strcmp(a, "-2") && v) {
			radius2 = atoi(v);
			i++;
		} else if (!strcmp(a, "-j") && v) {
			seg_threads = atoi(v);
			i++;
		} else if (!strcmp(a, "-m") && v) {
			median2 = atoi(v);
			i++;
		} else if (!strcmp(a, "-t") && v) {
			trees_path = v;
			i++;
		} else if (!strcmp(a, "-r") && v) {
			n_radii = 0;
			for (const char *p = v; *p && n_radii < 8; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
				radii[n_radii++] = atoi(p);
			i++;
		} else if (!strcmp(a, "-s") && v) {
			if (!sizes_given)
				n_sizes = 0;
			sizes_given = true;
			if (n_sizes < 8 && sscanf(v, "%dx%d", &sizes[n_sizes][0], &sizes[n_sizes][1]) == 2)
				n_sizes++;
			i++;
		} else if (a[0] == '-') {
			fprintf(stderr, "usage: %s [-n FRAMES] [-r 6,32] [-2 RADIUS2] [-m MEDIAN2] [-j SEGMENT_THREADS] [-g GATE] [-b cpu,cuda] [-s WxH] [-t TREES] [DIR]\n",
				argv[0]);
			return 2;
		} else {
			dir = a;
		}
	}
	log_set_level(LOG_WARN);
	print_machine();
	struct tree_set *trees = NULL;
	if (tree_set_load(trees_path, &trees) < 0)
		printf("no tree set at %s: threshold stage only\n", trees_path);
	static struct image_u8 frames[MAX_FRAMES];
	for (int s = 0; s < (dir ? 1 : n_sizes); s++) {
		int n = 0;
		if (dir) {
			n = load_dir(dir, frames);
			printf("%d frames from %s\n", n, dir);
		} else {
			for (; n < 4; n++) {
				if (image_u8_alloc(&frames[n], sizes[s][0], sizes[s][1]) < 0)
					break;
				fill_synthetic(&frames[n], (unsigned)n + 1);
			}
			printf("4 synthetic %dx%d frames\n", sizes[s][0], sizes[s][1]);
		}
		if (n == 0)
			continue;
		char list[64];
		snprintf(list, sizeof list, "%s", backends);
		for (char *save = NULL, *b = strtok_r(list, ",", &save); b; b = strtok_r(NULL, ",", &save))
			for (int r = 0; r < n_radii; r++)
				run(b, radii[r], radius2, median2, gate, frames, n, n_runs, trees);
		for (int i = 0; i < n; i++)
			image_u8_free(&frames[i]);
	}
	tree_set_free(trees);
	return 0;
}
