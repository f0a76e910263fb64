#include "engine_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/err.h"
#include "../core/log.h"
#include "merge.h"

/* The frame's gate (frame_gate): its grey range and noise are read from
 * this many rows, about this many pixels of each (frame_stats), the range
 * between these permilles of their grey, and the gate goes at most down
 * to the configured one over FRAME_GATE_FLOOR_DIV. */
#define FRAME_GATE_ROWS 16
#define FRAME_GATE_ROW_SAMPLES 256
#define FRAME_GATE_LOW_PERMILLE 1
#define FRAME_GATE_HIGH_PERMILLE 999
#define FRAME_GATE_FLOOR_DIV 2
/* ... nor under this many tenths of the frame's noise (a Gaussian's sigma
 * read from the grid's horizontal neighbours): at a sensor noise of 3
 * levels (frames of small symbols on a mid-grey table, 640 x 480, which
 * this reads as about 3.7, so 30) a fixed gate of 24 let noise through as
 * regions past the segmenter's capacity, 26 did not; JPEG at quality
 * 60-75 smooths that noise to under 1. 9 instead of 8 read 5 fewer of
 * 112 symbols of a dim set streaked by 3 px; 7 read none more (both on
 * a grid of 4 x 4 pixels, before frame_stats read rows). */
#define FRAME_GATE_NOISE_TENTHS 80
/* Where that floor reaches 5/4 of the configured gate (a noise of 5 levels
 * at gate 32), the frame is read at the floor, up to this many times the
 * gate: at a noise of 5-9 levels the fixed gate let noise through as more
 * regions than the segmenter holds (the tree cut short, logged) and lost
 * up to 2 of 128 symbols a set. */
#define FRAME_GATE_MAX_MUL 2
void engine_scale_free(struct scale *s)
{
	segment_gpu_destroy(s->gseg);
	threshold_destroy(s->thr);
	segment_destroy(s->seg);
	match_destroy(s->mat);
	detections_free(&s->det);
	memset(s, 0, sizeof *s);
}

bool engine_scale_on(const struct scale *s)
{
	return s->thr != NULL;
}

/* The matcher of an extra scale reports symbols only: fingers and blobs
 * come from the first. */
void engine_symbols_only(const struct engine_config *c, struct match_config *mc)
{
	*mc = c->match;
	mc->finger_size_px = 0;
	mc->blob_max_px = 0;
}

/* The second scale thresholds with its own radius, median and method. */
static void second_configs(const struct engine_config *c, struct threshold_config *tc, struct match_config *mc)
{
	*tc = c->thr;
	tc->radius = c->radius2;
	tc->median = c->median2;
	tc->mode = c->mode2;
	engine_symbols_only(c, mc);
	/* Its small radius draws a shadow edge across a symbol as a thin black
	 * line that can join leaves into another symbol's tree; where the ring
	 * merged with that shadow too, the other scales decide. */
	mc->no_merged_rings = true;
	/* Its reads with a dot more elongated than the ratio pass allows are
	 * vetoes (merge_vetoes): the line a hard shadow's edge draws across
	 * the root's area, read as a dot while the threshold opened blob
	 * walls, gives another symbol's node count (sheet-half with
	 * reacTIVision's set and --gamma 2.2, seed 501: a 53 px 6 read as 104,
	 * its "dot" 16 times as long as wide, nothing else read there). A
	 * streaked dot of a right read can pass it too (motion-640 frame 10:
	 * a 65 px 40, where the third scale's completed read stands). */
	mc->dot_max_elongation = THIRD_RATIO_DOT_ELONGATION;
}

/* Auto: half the cores a scale (both scales segment at once, so together
 * they take every core for the half millisecond segmentation lasts), at
 * most 8; 1 on a 2-core box. Measured on a 16-core Xeon with an H100, the
 * 1080p whole frame: 1.37 ms median with 4 bands a scale, 1.04 with 8. */
static int segment_threads(const struct engine_config *c)
{
	if (c->segment_threads > 0)
		return c->segment_threads;
	long n = sysconf(_SC_NPROCESSORS_ONLN) / 2;
	return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

/* The GPU segmenter of a scale whose threshold runs on CUDA (it labels the
 * threshold's device mask in place). Only ENGINE_SEGMENT_GPU makes its
 * absence an error. */
static int gpu_segment_open(struct scale *s, const struct segment_config *sc, int backend)
{
	bool cuda = strcmp(threshold_backend_name(s->thr), "cuda") == 0;
	int err = ERR_UNSUPPORTED;
	if (backend == ENGINE_SEGMENT_CPU)
		return 0;
	if (cuda)
		s->gseg = segment_gpu_create(sc, &err);
	if (s->gseg)
		return 0;
	if (backend == ENGINE_SEGMENT_GPU) {
		log_error("segment: the GPU segmenter is not available: %s",
			  cuda ? err_str(err) : "the threshold does not run on CUDA");
		return err;
	}
	if (cuda)
		log_info("segment: CPU (the GPU segmenter could not start: %s)", err_str(err));
	return 0;
}

/* A segmenter for whole frames of c's size, its lists long enough for
 * mc's trees. */
struct segment_config engine_segment_config(const struct engine_config *c, const struct match_config *mc)
{
	int adj = tree_set_max_nodes(mc->trees);
	return (struct segment_config){.max_width = c->width,
				       .max_height = c->height,
				       .adj_cap = adj < 8 ? 8 : adj,
				       .max_runs = c->max_runs,
				       .max_regions = c->max_regions};
}

int engine_scale_create(struct scale *s, const struct engine_config *c, const struct threshold_config *tc,
			const struct match_config *mc, const char *backend)
{
	int err = 0;
	memset(s, 0, sizeof *s);
	const struct segment_config sc = engine_segment_config(c, mc);
	s->thr = threshold_create(tc, backend, &err);
	if (s->thr)
		s->seg = segment_create_threaded(&sc, segment_threads(c), &err);
	if (s->seg)
		err = gpu_segment_open(s, &sc, c->segment_backend);
	if (s->seg && !err)
		s->mat = match_create(mc, &err);
	if (s->mat)
		err = detections_alloc(&s->det, c->max_detections);
	if (!s->mat || err) {
		engine_scale_free(s);
		return err ? err : ERR_NOMEM;
	}
	s->det.width = c->width;
	s->det.height = c->height;
	return 0;
}

static void sizes_from(struct engine_config *c)
{
	c->thr.max_width = c->match.max_width = c->width;
	c->thr.max_height = c->match.max_height = c->height;
	c->match.max_regions = c->max_regions;
	if (c->max_detections <= 0)
		c->max_detections = 1024;
}

/* The collected frame's tree: the GPU's, else the CPU segmenter's. */
static int scale_tree(struct scale *s, const struct region_tree **tree)
{
	if (s->tree) {
		*tree = s->tree;
		return 0;
	}
	return segment_process(s->seg, &s->mask, tree);
}

/* Segment and match of the second scale (worker thread, or inline) or the third. */
bool engine_scale_detect(struct scale *s, const struct image_u8 *grey)
{
	const struct region_tree *tree = NULL;
	if (s->err || scale_tree(s, &tree))
		return false;
	detections_clear(&s->det);
	return match_process(s->mat, tree, grey, &s->det) == 0;
}

static int scale_collect(struct engine *e, struct scale *s, int64_t *waited);

/* Collects the second scale where engine_collect() left it pending: from
 * engine_detect() (the worker, or inline) or before the next frame's
 * submit. Its wait for the GPU is counted in wait_stats, not as the
 * first scale's segmentation. A scale freed or made again since (radius2
 * changed live after a collect whose detect did not run) has nothing
 * submitted and is left alone. */
static void second_collect(struct engine *e)
{
	const bool pending = e->s2_deferred && e->s2.submitted;
	e->s2_deferred = false;
	if (!pending)
		return;
	e->s2.submitted = false;
	e->s2.err = scale_collect(e, &e->s2, NULL);
}

static void scale2_task(void *arg, int task)
{
	(void)task;
	struct engine *e = arg;
	second_collect(e);
	e->w.ok = engine_scale_detect(&e->s2, e->w.grey);
}

static void worker_stop(struct engine *e)
{
	pool_destroy(e->w.pool);
	e->w.pool = NULL;
}

/* Without a worker (it could not start) the second scale runs inline. */
static void worker_start(struct engine *e)
{
	if (!e->w.pool)
		e->w.pool = pool_create(1, NULL);
}

/* Creates or frees the second scale to follow radius2 (it is live). */
static int second_scale_sync(struct engine *e)
{
	if (e->cfg.radius2 == 0) {
		worker_stop(e);
		engine_scale_free(&e->s2);
		return 0;
	}
	struct threshold_config tc;
	struct match_config mc;
	second_configs(&e->cfg, &tc, &mc);
	if (engine_scale_on(&e->s2)) {
		threshold_set_config(e->s2.thr, &tc);
		match_set_config(e->s2.mat, &mc);
		return 0;
	}
	const char *backend = threshold_backend_name(e->s1.thr);
	int err = engine_scale_create(&e->s2, &e->cfg, &tc, &mc, backend);
	/* A new scale has collected no frame: the one collected before it
	 * came (engine_collect, then this before the detect) has none. */
	e->s2.err = ERR_AGAIN;
	if (err) {
		log_error("second threshold scale (radius2 %d) not available: %s", e->cfg.radius2, err_str(err));
	} else {
		log_info("threshold: second scale on the %s backend, %s", backend,
			 !e->cfg.backend || strcmp(e->cfg.backend, "auto") == 0 ? "as auto chose for the first" : "as configured");
		worker_start(e);
	}
	return err;
}

/* Every threshold now reads at the configured gate (the syncs above set
 * them from the configuration). */
static void gate_reset(struct engine *e)
{
	e->gate_submitted = e->gate = e->gate_submit_set = e->gate_detect_set = e->cfg.thr.gate;
}

/* The gate a threshold of method mode reads a frame at: the frame's,
 * but the local mean's and Sauvola's gate is a floor on the mean, not a
 * contrast, and stays the configured one: at a DI table's lower frame
 * gate (dark table, bright hands, 23-30 instead of 30) the local mean read
 * the table's dark noise as 37 false touches in 40 frames. */
int engine_gate_of_mode(int mode, int configured, int frame)
{
	return mode == THRESHOLD_MEAN || mode == THRESHOLD_SAUVOLA ? configured : frame;
}

/* Sets the gate of a threshold made from the configuration cfg (a copy
 * with the gate replaced, so that its other settings stay). */
static int gate_set(struct threshold *t, const struct threshold_config *cfg, int gate)
{
	struct threshold_config tc = *cfg;
	tc.gate = engine_gate_of_mode(tc.mode, cfg->gate, gate);
	return t ? threshold_set_config(t, &tc) : 0;
}

/* The thresholds a frame reads at submit (the CPU backend computes at
 * collect, before the next submit): the first and second scales, and the
 * third's whole frame on CUDA. */
static void gate_submit_side(struct engine *e, int gate)
{
	struct threshold_config tc;
	struct match_config mc;
	gate_set(e->s1.thr, &e->cfg.thr, gate);
	if (engine_scale_on(&e->s2)) {
		second_configs(&e->cfg, &tc, &mc);
		gate_set(e->s2.thr, &tc, gate);
	}
	if (engine_scale_on(&e->s3) && e->t3.gpu) {
		third_configs(&e->cfg, &tc, &mc);
		gate_set(e->s3.thr, &tc, gate);
	}
	e->gate_submit_set = gate;
}

/* What reads the frame during detect: the third scale's thresholds, on
 * the CPU (its own, t3.cpu on CUDA, else s3.thr; the small-symbol pass's
 * and their check's), and the first scale's matcher, whose fingers must
 * stand out from their surround by finger_min_contrast, scaled down with
 * the first scale's gate where that is lowered (not where it is a floor,
 * gate_set): a dim frame's fingers stand out by less (on 16 dim sets
 * 0.596 of 1280 fingers with 77 false ones at the fixed gate, 0.752 with
 * 36 at the frame's gate, 0.854 with 46 with this). */
static void gate_detect_side(struct engine *e, int gate)
{
	struct threshold_config tc;
	struct match_config mc;
	third_configs(&e->cfg, &tc, &mc);
	gate_set(e->t3.gpu ? e->t3.cpu : e->s3.thr, &tc, gate);
	if (third_small_configs(&e->cfg, &tc, &mc))
		gate_set(e->t3.small, &tc, gate);
	if (third_check_configs(&e->cfg, &tc, &mc))
		gate_set(e->t3.check, &tc, gate);
	third_up_gate(e, gate);
	mc = e->cfg.match;
	if (engine_gate_of_mode(e->cfg.thr.mode, e->cfg.thr.gate, gate) < e->cfg.thr.gate)
		mc.finger_min_contrast = (mc.finger_min_contrast * gate + e->cfg.thr.gate / 2) / e->cfg.thr.gate;
	match_set_config(e->s1.mat, &mc);
	e->gate_detect_set = gate;
}

/* The frame's grey range, between its permilles, and
 * FRAME_GATE_NOISE_TENTHS tenths of its noise, rounded up, from
 * FRAME_GATE_ROWS rows spread evenly over it, every step-th pixel of each
 * (about FRAME_GATE_ROW_SAMPLES a row): few rows, read along, because the
 * frame is cold in this thread's cache (the capture thread wrote it), and
 * scattered samples cost a cache line each (19,200 on a grid of 4 x 4
 * pixels took 68 us a 640 x 480 frame on the H200 host, 104 us at 1080p;
 * these rows 21 and 22 us). The noise: the
 * median absolute difference of horizontal neighbours, interpolated within
 * its grey level (level d spans d - 0.5 to d + 0.5, level 0 only 0 to
 * 0.5), is 0.6745 sqrt(2) sigma; edges are too few to move it. */
static void frame_stats(const struct image_u8 *grey, int *range, int *noise)
{
	uint32_t hist[256] = {0}, diff[256] = {0};
	int64_t n = 0, nd = 0;
	const int rows = grey->height < FRAME_GATE_ROWS ? grey->height : FRAME_GATE_ROWS;
	const int step = grey->width / FRAME_GATE_ROW_SAMPLES > 1 ? grey->width / FRAME_GATE_ROW_SAMPLES : 1;
	for (int k = 0; k < rows; k++) {
		const uint8_t *row = image_u8_row(grey, (int)((2 * (int64_t)k + 1) * grey->height / (2 * rows)));
		for (int x = step / 2; x < grey->width; x += step, n++) {
			hist[row[x]]++;
			if (x + 1 < grey->width) {
				diff[abs((int)row[x] - (int)row[x + 1])]++;
				nd++;
			}
		}
	}
	const int64_t lo_rank = n * FRAME_GATE_LOW_PERMILLE / 1000, hi_rank = n * FRAME_GATE_HIGH_PERMILLE / 1000;
	int lo = -1, hi = 255;
	int64_t seen = 0;
	for (int v = 0; v < 256; v++) {
		seen += hist[v];
		if (lo < 0 && seen > lo_rank)
			lo = v;
		if (seen > hi_rank) {
			hi = v;
			break;
		}
	}
	*range = hi - (lo < 0 ? 0 : lo);
	*noise = 0;
	if (nd == 0) /* a frame one pixel wide */
		return;
	int64_t below = 0;
	int d = 0;
	while (d < 255 && 2 * (below + diff[d]) <= nd)
		below += diff[d++];
	const int64_t within = diff[d] ? (nd - 2 * below) * 50 / diff[d] : 0; /* hundredths of a level */
	const int64_t mad100 = d == 0 ? within / 2 : 100 * d - 50 + within;
	/* sigma = mad * 1.0484 */
	*noise = (int)((mad100 * 10484 / 10000 * FRAME_GATE_NOISE_TENTHS + 999) / 1000);
}

/* The gate a frame is read at (gate_range > 0): FRAME_GATE_NOISE_TENTHS
 * tenths of the frame's noise where that is 5/4 of the configured gate or
 * more (at most FRAME_GATE_MAX_MUL times the gate); else the configured
 * gate scaled by the frame's grey range over gate_range, at most the
 * configured gate, and at least 1/FRAME_GATE_FLOOR_DIV of it and the
 * noise's tenths (both from frame_stats). A dim or flat camera spreads
 * ink and paper over fewer grey levels, and a symbol in its darker parts
 * spans less than the gate, where Bernsen's flat rule paints it black
 * whole; a sunlit frame's range keeps the full gate, which its paper
 * texture needs; a noisy frame gets a gate above its noise. Computed on
 * the CPU from the grey both backends threshold, so that they read a
 * frame alike. */
static int frame_gate(const struct engine_config *c, const struct image_u8 *grey)
{
	const int gate = c->thr.gate;
	if (c->gate_range <= 0)
		return gate;
	int range, noise;
	frame_stats(grey, &range, &noise);
	if (4 * noise >= 5 * gate) {
		const int cap = FRAME_GATE_MAX_MUL * gate < 255 ? FRAME_GATE_MAX_MUL * gate : 255; /* the gate's range */
		return noise < cap ? noise : cap;
	}
	const int g = (gate * range + c->gate_range / 2) / c->gate_range;
	if (g >= gate)
		return gate;
	const int half = (gate + FRAME_GATE_FLOOR_DIV - 1) / FRAME_GATE_FLOOR_DIV;
	const int floor = noise > gate ? gate : noise > half ? noise : half;
	return g < floor ? floor : g;
}

struct engine *engine_create(const struct engine_config *cfg, int *err)
{
	struct engine *e = calloc(1, sizeof *e);
	if (!e) {
		*err = ERR_NOMEM;
		return NULL;
	}
	e->cfg = *cfg;
	sizes_from(&e->cfg);
	*err = engine_scale_create(&e->s1, &e->cfg, &e->cfg.thr, &e->cfg.match, e->cfg.backend);
	if (*err)
		goto fail;
	if (e->cfg.backend && strcmp(e->cfg.backend, "auto") != 0) /* auto logged its choice and why */
		log_info("threshold: %s backend, as configured", threshold_backend_name(e->s1.thr));
	log_info("segment: %s, %s", e->s1.gseg ? "GPU (the threshold's mask labelled in place)" : "CPU",
		 e->cfg.segment_backend == ENGINE_SEGMENT_AUTO ? "as auto chose from the threshold backend" : "as configured");
	/* Made whenever configured (a few MB), so touch and hands can be
	 * switched on live without allocating then. */
	if (e->cfg.outline.max_points > 0) {
		e->outline = outline_create(&e->cfg.outline, e->cfg.width, e->cfg.height, segment_threads(&e->cfg), err);
		if (!e->outline)
			goto fail;
		*err = detections_alloc_outlines(&e->s1.det, e->cfg.outline.max_contours, e->cfg.outline.max_points);
	}
	if (!*err)
		*err = second_scale_sync(e);
	if (!*err)
		*err = third_scale_sync(e);
	if (*err)
		goto fail;
	gate_reset(e);
	return e;
fail:
	engine_destroy(e);
	return NULL;
}

void engine_destroy(struct engine *e)
{
	if (!e)
		return;
	worker_stop(e);
	image_u8_free(&e->eq_bg);
	image_u8_free(&e->eq_frame);
	engine_scale_free(&e->s1);
	engine_scale_free(&e->s2);
	third_free(e);
	outline_destroy(e->outline);
	free(e);
}

int engine_set_config(struct engine *e, const struct engine_config *cfg)
{
	e->regions = NULL;
	struct engine_config next = *cfg;
	next.width = e->cfg.width;
	next.height = e->cfg.height;
	next.backend = e->cfg.backend;
	next.segment_backend = e->cfg.segment_backend;
	next.max_detections = e->cfg.max_detections;
	next.tracker = e->cfg.tracker;
	sizes_from(&next);
	e->cfg = next;
	int err = threshold_set_config(e->s1.thr, &e->cfg.thr);
	if (!err)
		err = match_set_config(e->s1.mat, &e->cfg.match);
	if (!err && e->outline)
		err = outline_set_config(e->outline, &e->cfg.outline);
	int err2 = second_scale_sync(e);
	int err3 = third_scale_sync(e);
	gate_reset(e);
	return err ? err : err2 ? err2 : err3;
}

void engine_equalize(struct engine *e, bool on)
{
	e->eq_capture = on;
	if (!on)
		e->eq_on = false;
}

bool engine_equalizing(const struct engine *e)
{
	return e->eq_on;
}

/* grey - background + mean(background), clamped: done on the CPU before
 * the threshold so the CPU and GPU paths threshold the same pixels. */
static const struct image_u8 *equalize(struct engine *e, const struct image_u8 *grey)
{
	if (e->eq_capture) {
		e->eq_capture = false;
		if (!e->eq_bg.data && (image_u8_alloc(&e->eq_bg, grey->width, grey->height) ||
				       image_u8_alloc(&e->eq_frame, grey->width, grey->height))) {
			log_error("equaliser: out of memory; staying off");
			image_u8_free(&e->eq_bg);
			return grey;
		}
		image_u8_copy(&e->eq_bg, grey);
		int64_t sum = 0;
		for (int y = 0; y < grey->height; y++) {
			const uint8_t *row = image_u8_row(grey, y);
			for (int x = 0; x < grey->width; x++)
				sum += row[x];
		}
		e->eq_mean = (int)(sum / ((int64_t)grey->width * grey->height));
		e->eq_on = true;
		engine_register_buffer(e, e->eq_frame.data, (size_t)e->eq_frame.stride * (size_t)e->eq_frame.height);
		log_info("equaliser: background captured (mean grey %d)", e->eq_mean);
	}
	if (!e->eq_on)
		return grey;
	for (int y = 0; y < grey->height; y++) {
		const uint8_t *g = image_u8_row(grey, y), *b = image_u8_row(&e->eq_bg, y);
		uint8_t *o = image_u8_row(&e->eq_frame, y);
		for (int x = 0; x < grey->width; x++) {
			int v = (int)g[x] - (int)b[x] + e->eq_mean;
			o[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	}
	return &e->eq_frame;
}

/* Drops a scale's GPU segmenter for good: it segments on the CPU from now on. */
static void gpu_segment_fault(struct engine *e, struct scale *s, int err)
{
	log_once(&e->seg_fault_logged, LOG_WARN, "segment: GPU failed (%s); continuing on the CPU", err_str(err));
	segment_gpu_destroy(s->gseg);
	s->gseg = NULL;
	s->labelled = false;
}

/* Queues the GPU segmentation of the mask a threshold submit has just
 * queued, on the threshold's stream. */
static void label_submit(struct engine *e, struct scale *s, const struct image_u8 *grey)
{
	s->labelled = false;
	if (!s->gseg || !s->submitted)
		return;
	struct threshold_device_mask dm;
	int err = threshold_device_mask(s->thr, &dm);
	if (!err)
		err = segment_gpu_submit(s->gseg, dm.bits, grey->width, grey->height, dm.stride_words, dm.stream);
	if (err)
		gpu_segment_fault(e, s, err);
	else
		s->labelled = true;
}

/* A scale's mask, and its GPU tree when it was labelled. The tree is
 * waited for first: the labelling is queued behind the threshold on its
 * stream, so one wait covers both and the threshold's own wait then finds
 * its work done (one sleep a scale, not two); that wait counts as
 * segmentation. A threshold that fell back to the CPU in this collect made
 * its mask there: the GPU tree would be of a mask that may not exist, so
 * the CPU segments. Without a tree the CPU segments the mask, fetched now
 * if it stayed on the GPU. The wait goes into wait_stats and, where
 * waited is not NULL, into *waited (0 without a GPU tree). */
static int scale_collect(struct engine *e, struct scale *s, int64_t *waited)
{
	int64_t ns = 0;
	s->tree = NULL;
	const struct region_tree *tree = NULL;
	const bool labelled = s->labelled;
	int lerr = 0;
	if (labelled) {
		s->labelled = false;
		int64_t t0 = clock_now_ns();
		lerr = segment_gpu_collect(s->gseg, &tree);
		ns = clock_now_ns() - t0;
		const int k = s == &e->s1 ? 0 : 1;
		e->wait_stats.frames[k]++;
		e->wait_stats.ns[k] += ns;
	}
	if (waited)
		*waited = ns;
	int err = threshold_collect_view(s->thr, &s->mask);
	if (err)
		return err;
	if (labelled) {
		if (strcmp(threshold_backend_name(s->thr), "cuda") != 0)
			gpu_segment_fault(e, s, ERR_DEVICE);
		else if (lerr)
			gpu_segment_fault(e, s, lerr);
		else
			s->tree = tree;
	}
	if (!s->tree && !s->mask.bits)
		err = threshold_fetch_view(s->thr, &s->mask);
	return err;
}

/* The mask stays on the GPU where the GPU segments it and nobody reads it
 * on the host; engine_mask() fetches it for a frame that is looked at. The
 * third scale places its windows from the first scale's tree, not its
 * mask. */
static void mask_download(struct engine *e, struct scale *s)
{
	if (engine_scale_on(s))
		threshold_set_mask_download(s->thr, !s->gseg || (s == &e->s1 && e->want_mask));
}

int engine_submit(struct engine *e, const struct image_u8 *grey)
{
	/* The last frame's second scale, if still pending (this submit
	 * overlaps that frame's detect), is collected before its thresholder
	 * takes the next frame. */
	second_collect(e);
	third_full(e);
	if (grey->width != e->cfg.width || grey->height != e->cfg.height)
		return ERR_SIZE;
	int64_t t0 = clock_now_ns();
	const struct image_u8 *camera = grey; /* the matcher's and the third scale's */
	grey = equalize(e, grey);
	e->gate_submitted = frame_gate(&e->cfg, grey);
	if (e->gate_submitted != e->gate_submit_set)
		gate_submit_side(e, e->gate_submitted);
	mask_download(e, &e->s1);
	mask_download(e, &e->s2);
	/* The ink scan reads the camera's grey whole but needs nothing of the
	 * first scale. A GPU threshold finds its block extremes beside the
	 * mask (the grey is on the GPU anyway): their read had taken this
	 * thread 0.28 ms a 1080p frame on the H100 host, and the process's CPU
	 * a frame fell by a fifth with the wall time the same. Else they are
	 * found here while the threshold runs (on a worker of its own
	 * instead, the 1080p frame was slower on that host). See
	 * docs/performance.md, "Where a 1080p frame waits". */
	e->t3.ink_sub ^= 1;
	struct ink_blocks *ink = &e->t3.ink[e->t3.ink_sub];
	ink->grey = ink->gpu_grey = NULL;
	const bool ink_on = third_ink_on(e);
	if (threshold_set_extremes(e->s1.thr, ink_on && camera == grey))
		ink->gpu_grey = camera->data;
	int err = threshold_submit(e->s1.thr, grey);
	e->s1.submitted = err == 0;
	if (err)
		return err;
	label_submit(e, &e->s1, grey);
	/* A failing second scale only loses that scale for this frame. */
	e->s2.submitted = engine_scale_on(&e->s2) && threshold_submit(e->s2.thr, grey) == 0;
	label_submit(e, &e->s2, grey);
	e->s3.submitted = engine_scale_on(&e->s3) && e->t3.want_full && threshold_submit(e->s3.thr, grey) == 0;
	if (ink_on && !ink->gpu_grey)
		third_ink_find(ink, camera, e->gate_submitted);
	e->submit_ns = clock_now_ns() - t0;
	return 0;
}

int engine_collect(struct engine *e)
{
	e->regions = NULL;
	if (!e->s1.submitted)
		return ERR_AGAIN;
	int64_t t0 = clock_now_ns();
	e->label_ns = 0;
	e->s1.submitted = false;
	e->gate = e->gate_submitted;
	struct engine_gate_stats *gs = &e->gate_stats;
	gs->frames++;
	gs->low_frames += e->gate < e->cfg.thr.gate;
	gs->high_frames += e->gate > e->cfg.thr.gate;
	if (!gs->lowest || e->gate < gs->lowest)
		gs->lowest = e->gate;
	if (e->gate > gs->highest)
		gs->highest = e->gate;
	e->s1.err = scale_collect(e, &e->s1, &e->label_ns);
	e->t3.ink_cur = e->t3.ink_sub;
	third_ink_collect(e, &e->t3.ink[e->t3.ink_cur]);
	/* The second scale stays pending: engine_detect() collects it on the
	 * worker, under the first scale's matching. */
	e->s2_deferred = e->s2.submitted;
	if (!e->s2_deferred)
		e->s2.err = ERR_AGAIN;
	e->t3.have_full = false;
	e->t3.full_pending = e->s3.submitted;
	e->s3.submitted = false;
	/* The time the threshold holds the caller (submit + waiting in collect),
	 * not the wall time between them, which may hold other work; waiting
	 * for the GPU segmenters counts as segmentation (engine_detect). */
	e->times.ns[STAGE_THRESHOLD] = e->submit_ns + (clock_now_ns() - t0) - e->label_ns;
	return e->s1.err;
}

int engine_detect(struct engine *e, const struct image_u8 *grey)
{
	if (e->s1.err)
		return e->s1.err;
	int64_t t0 = clock_now_ns();
	if (e->gate != e->gate_detect_set)
		gate_detect_side(e, e->gate);

	/* 2, 3. segment and match; the second scale on the worker meanwhile */
	bool scale2 = engine_scale_on(&e->s2) && (e->s2_deferred || e->s2.err == 0);
	bool async = scale2 && e->w.pool;
	if (async) {
		e->w.grey = grey;
		e->w.ok = false;
		pool_start(e->w.pool, scale2_task, e, 1);
	}
	const struct region_tree *tree = NULL;
	int err = scale_tree(&e->s1, &tree);
	e->regions = err ? NULL : tree;
	int64_t t1 = clock_now_ns();
	if (!err) {
		detections_clear(&e->s1.det);
		/* The hands' outlines need the tree alone: they start on the
		 * outline stage's workers while the matcher runs. */
		outline_begin(e->outline, tree, grey);
		err = match_process(e->s1.mat, tree, grey, &e->s1.det);
		if (!err)
			err = outline_process(e->outline, tree, grey, &e->s1.det);
		else
			outline_cancel(e->outline);
	}
	int64_t t2 = clock_now_ns();
	/* The third scale runs here while the worker still has the second. */
	bool ok3 = !err && engine_scale_on(&e->s3) && third_detect(e, grey, tree);
	int64_t t3 = clock_now_ns();
	bool ok2 = false;
	if (async) {
		/* Always wait: the worker reads grey and writes s2 until done. */
		pool_wait(e->w.pool);
		ok2 = e->w.ok;
	} else if (scale2) {
		second_collect(e);
		ok2 = engine_scale_detect(&e->s2, grey);
	}
	if (err)
		return err;
	/* The second scale's vetoes cancel its own reads of other IDs at
	 * their places and leave it (second_configs). */
	if (ok2)
		merge_vetoes(&e->s2.det);
	/* Counted before any merge: two agreeing reads outvote a lone one. */
	struct detections *lists[3] = {&e->s1.det};
	int n_lists = 1;
	if (ok2)
		lists[n_lists++] = &e->s2.det;
	if (ok3)
		lists[n_lists++] = &e->s3.det;
	merge_majority(lists, n_lists);
	if (ok2 && ok3)
		ok3 = third_tie_break(e, grey);
	if (ok3)
		ok3 = third_lone_check(e, grey, ok2 ? &e->s2.det : NULL);
	if (ok3)
		merge_lone_pair(&e->s1.det, &e->s3.det, ok2 ? &e->s2.det : NULL);
	if (ok2)
		merge_scale(&e->s1.det, &e->s2.det);
	if (ok3)
		merge_scale(&e->s1.det, &e->s3.det);
	int64_t t4 = clock_now_ns();
	e->times.ns[STAGE_SEGMENT] = e->label_ns + (t1 - t0);
	e->times.ns[STAGE_MATCH] = t4 - t1;
	e->times.ns[STAGE_MATCH_FIRST] = t2 - t1;
	e->times.ns[STAGE_MATCH_THIRD] = t3 - t2;
	e->times.ns[STAGE_MATCH_WAIT] = t4 - t3;
	return 0;
}

int engine_finish(struct engine *e, const struct image_u8 *grey, uint64_t frame, int64_t t_capture_ns,
		  struct tracked_state *out)
{
	int err = engine_detect(e, grey);
	if (err)
		return err;
	int64_t t0 = clock_now_ns();
	err = track_process(e->cfg.tracker, &e->s1.det, frame, t_capture_ns, out);
	e->times.ns[STAGE_TRACK] = clock_now_ns() - t0;
	return err;
}

int engine_process(struct engine *e, const struct image_u8 *grey, uint64_t frame, int64_t t_capture_ns,
		   struct tracked_state *out)
{
	int err = engine_submit(e, grey);
	if (!err)
		err = engine_collect(e);
	if (!err)
		err = engine_finish(e, grey, frame, t_capture_ns, out);
	return err;
}

const char *stage_name(enum stage s)
{
	static const char *const names[STAGE_N] = {"threshold",	  "segment",	  "match",
						   "track",	  "tuio",	  "frame total",
						   "capture to TUIO", "match: first", "match: third",
						   "match: wait 2nd"};
	return s >= 0 && s < STAGE_N ? names[s] : "?";
}

const struct bitmask *engine_mask(struct engine *e)
{
	if (!e->s1.mask.bits && threshold_fetch_view(e->s1.thr, &e->s1.mask))
		return NULL;
	return &e->s1.mask;
}

void engine_want_mask(struct engine *e, bool on)
{
	e->want_mask = on;
}

const struct engine_gate_stats *engine_gate_stats(const struct engine *e)
{
	return &e->gate_stats;
}

const struct engine_wait_stats *engine_wait_stats(const struct engine *e)
{
	return &e->wait_stats;
}

const struct engine_third_stats *engine_third_stats(const struct engine *e)
{
	return engine_scale_on(&e->s3) ? &e->t3.stats : NULL;
}

const struct detections *engine_detections(const struct engine *e)
{
	return &e->s1.det;
}

const struct region_tree *engine_regions(const struct engine *e)
{
	return e->regions;
}

const struct engine_times *engine_times(const struct engine *e)
{
	return &e->times;
}

const char *engine_backend(const struct engine *e)
{
	return threshold_backend_name(e->s1.thr);
}

const char *engine_segment_backend(const struct engine *e)
{
	return e->s1.gseg ? "gpu" : "cpu";
}

int engine_register_buffer(struct engine *e, void *data, size_t bytes)
{
	int err = threshold_register_buffer(e->s1.thr, data, bytes);
	if (!err && engine_scale_on(&e->s2))
		err = threshold_register_buffer(e->s2.thr, data, bytes);
	if (!err && e->t3.gpu)
		err = threshold_register_buffer(e->s3.thr, data, bytes);
	return err;
}
