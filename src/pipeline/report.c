#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/err.h"
#include "../core/image_io.h"
#include "../core/log.h"
#include "service.h"

/* What the main thread's summary line and STATUS= show: a copy, so the main
 * thread never reads the pipeline's own fields, which change every frame. */
struct summary {
	uint64_t fseq;
	float fps;
	int n_objects, n_cursors, n_blobs;
	char ids[160];
	double median_ms;
	char backend[32];
	bool quiet;
};

struct report {
	char dump_dir[CONFIG_PATH_LEN];
	struct image_u8 dump_img;   /* --dump: the binary image */
	bool dump_failed;
	struct timing timing[STAGE_N];
	/* --stats' tails: frames whose total was over twice the recent median,
	 * counted by the step most over its own recent median. */
	uint64_t slow_frames, slow_by[STAGE_N];
	float fps;
	/* CPU and wall time at the first frame, and frames since: the CPU cost
	 * a frame of the run, start-up (trees, CUDA context) left out. */
	int64_t cpu0_ns, wall0_ns;
	uint64_t cpu_frames;
	int64_t fps_t0;
	uint64_t fps_n0;

	struct summary summary;     /* under summary_lock */
	int64_t summary_t_ns;
	pthread_mutex_t summary_lock;

	struct snapshot *snaps[3];  /* NULL without a window */
	int snap_back, snap_ready, snap_front;
	bool snap_new;
	pthread_mutex_t snap_lock;

	/* --stats: CPU time of each thread of the process (report_sample_threads),
	 * at the first frame (ns0) and at the last sample (ns), under threads_lock:
	 * the first frame's baseline is taken on the pipeline thread, the samples
	 * on the main thread. */
	struct thread_cpu {
		int tid;
		char name[16];
		int64_t ns0, ns;
	} threads[REPORT_MAX_THREADS];
	int n_threads;
	bool threads_base;
	/* /proc/self/task, opened at the first sample and rewound at each
	 * (an opendir a sample would allocate its buffer every second). */
	DIR *task_dir;
	pthread_mutex_t threads_lock;
};

/* mkdir -p: --dump DIR is created with its parents; a path that cannot be
 * a folder is a configuration error, found before the first frame. */
static int make_dirs(const char *dir)
{
	char path[sizeof ((struct report *)0)->dump_dir];
	snprintf(path, sizeof path, "%s", dir);
	for (char *q = path + 1;; q++) {
		if (*q != '/' && *q != '\0')
			continue;
		char c = *q;
		*q = '\0';
		if (mkdir(path, 0777) != 0 && errno != EEXIST) {
			log_error("--dump %s: cannot create %s: %s", dir, path, strerror(errno));
			return ERR_CONFIG;
		}
		*q = c;
		if (!c)
			break;
	}
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || access(path, W_OK | X_OK) != 0) {
		log_error("--dump %s: not a writable folder", dir);
		return ERR_CONFIG;
	}
	return 0;
}

struct report *report_create(const char *dump_dir, bool window, int *err)
{
	struct report *r = calloc(1, sizeof *r);
	if (!r) {
		*err = ERR_NOMEM;
		return NULL;
	}
	snprintf(r->dump_dir, sizeof r->dump_dir, "%s", dump_dir);
	if (r->dump_dir[0] && (*err = make_dirs(r->dump_dir)) != 0) {
		free(r);
		return NULL;
	}
	pthread_mutex_init(&r->summary_lock, NULL);
	pthread_mutex_init(&r->snap_lock, NULL);
	pthread_mutex_init(&r->threads_lock, NULL);
	r->snap_back = 0;
	r->snap_ready = 1;
	r->snap_front = 2;
	for (int i = 0; window && i < 3; i++) {
		r->snaps[i] = calloc(1, sizeof *r->snaps[i]);
		if (!r->snaps[i]) {
			report_destroy(r);
			*err = ERR_NOMEM;
			return NULL;
		}
	}
	*err = 0;
	return r;
}

static void snaps_free(struct report *r)
{
	for (int i = 0; i < 3; i++) {
		if (r->snaps[i]) {
			image_u8_free(&r->snaps[i]->grey);
			image_u8_free(&r->snaps[i]->binary);
			free(r->snaps[i]);
			r->snaps[i] = NULL;
		}
	}
}

void report_no_window(struct report *r)
{
	snaps_free(r);
}

void report_destroy(struct report *r)
{
	if (!r)
		return;
	image_u8_free(&r->dump_img);
	snaps_free(r);
	pthread_mutex_destroy(&r->summary_lock);
	if (r->task_dir)
		closedir(r->task_dir);
	pthread_mutex_destroy(&r->threads_lock);
	pthread_mutex_destroy(&r->snap_lock);
	free(r);
}

int report_size(struct report *r, int w, int h)
{
	for (int i = 0; i < 3; i++) {
		if (!r->snaps[i])
			continue;
		image_u8_free(&r->snaps[i]->grey);
		image_u8_free(&r->snaps[i]->binary);
		if (image_u8_alloc(&r->snaps[i]->grey, w, h) || image_u8_alloc(&r->snaps[i]->binary, w, h))
			return ERR_NOMEM;
	}
	image_u8_free(&r->dump_img);
	if (r->dump_dir[0])
		return image_u8_alloc(&r->dump_img, w, h);
	return 0;
}

static void mask_image(const struct bitmask *m, struct image_u8 *img)
{
	if (m)
		bitmask_to_image(m, img);
	else
		for (int y = 0; y < img->height; y++)
			memset(image_u8_row(img, y), 0, (size_t)img->width);
}

bool report_wants_mask(const struct report *r)
{
	return (r->dump_dir[0] && !r->dump_failed) || r->snaps[0];
}

static void dump_frame(struct report *r, const struct report_frame *fr)
{
	char path[CONFIG_PATH_LEN + 64];
	const struct frame *f = fr->frame;
	const struct tracked_state *st = fr->st;
	const struct detections *d = fr->det;
	if (!r->dump_img.data)
		return;
	mask_image(fr->mask, &r->dump_img);
	/* A build without libpng dumps PGM rather than failing every frame. */
	snprintf(path, sizeof path, "%s/%06llu-binary.%s", r->dump_dir, (unsigned long long)fr->fseq,
		 TT_HAVE_PNG ? "png" : "pgm");
	int err = image_write(path, &r->dump_img);
	FILE *out = NULL;
	if (!err) {
		snprintf(path, sizeof path, "%s/%06llu-detections.txt", r->dump_dir, (unsigned long long)fr->fseq);
		out = fopen(path, "w");
		err = out ? 0 : ERR_IO;
	}
	if (out) {
		fprintf(out, "# frame %llu source %s size %dx%d\n", (unsigned long long)fr->fseq, f->name,
			r->dump_img.width, r->dump_img.height);
		for (int i = 0; i < d->n_fids; i++)
			fprintf(out, "fiducial id=%d x=%.3f y=%.3f angle=%.5f size=%.1f\n", d->fids[i].id,
				d->fids[i].x, d->fids[i].y, d->fids[i].angle, d->fids[i].size_px);
		for (int i = 0; i < d->n_fuzzy; i++)
			fprintf(out, "fuzzy x=%.3f y=%.3f size=%.1f\n", d->fuzzy[i].x, d->fuzzy[i].y,
				d->fuzzy[i].size_px);
		/* What the outline stage adds is written only when it ran, so
		 * the default dump stays as it was. */
		for (int i = 0; i < d->n_fingers; i++) {
			const struct finger_det *g = &d->fingers[i];
			fprintf(out, "finger x=%.3f y=%.3f d=%.1f round=%.2f contrast=%.0f", g->x, g->y,
				g->diameter_px, g->roundness, g->contrast);
			if (g->sharpness != 0 || g->in_hand)
				fprintf(out, " sharp=%.3f hover=%d hand=%d", g->sharpness, g->hover,
					g->in_hand ? g->hand : -1);
			fputc('\n', out);
		}
		for (int i = 0; i < d->n_blobs; i++)
			fprintf(out, "blob x=%.3f y=%.3f w=%.1f h=%.1f angle=%.4f area=%.0f%s\n", d->blobs[i].x,
				d->blobs[i].y, d->blobs[i].w, d->blobs[i].h, d->blobs[i].angle,
				d->blobs[i].area_px, d->blobs[i].hand ? " hand=1" : "");
		for (int i = 0; i < d->n_contours; i++) {
			const struct contour_det *c = &d->contours[i];
			fprintf(out, "contour %s=%d hole=%d points=", c->owner_kind == CONTOUR_FINGER ? "finger" : "blob",
				c->owner, c->hole);
			for (int k = 0; k < c->n; k++)
				fprintf(out, "%s%.2f,%.2f", k ? " " : "", d->points[c->first + k].x,
					d->points[c->first + k].y);
			fputc('\n', out);
		}
		for (int i = 0; i < st->n_objects; i++)
			fprintf(out, "object session=%u id=%d x=%.5f y=%.5f angle=%.5f how=%d\n",
				st->objects[i].session_id, st->objects[i].class_id, st->objects[i].x,
				st->objects[i].y, st->objects[i].angle, st->objects[i].how);
		if (fclose(out) != 0)
			err = ERR_IO;
	}
	if (err) {
		/* Disk full or a vanished folder must not stop tracking. */
		log_once(&r->dump_failed, LOG_WARN, "--dump %s: cannot write (%s): dumping stops, tracking goes on",
			 r->dump_dir, strerror(errno));
	}
}

/* The fingers the outline stage measured and the outlines that fit. */
static void snapshot_outlines(struct snapshot *s, const struct detections *d)
{
	s->n_fingers = 0;
	for (int32_t i = 0; i < d->n_fingers && s->n_fingers < SNAPSHOT_MAX_ITEMS; i++)
		if (d->fingers[i].sharpness != 0 || d->fingers[i].in_hand)
			s->fingers[s->n_fingers++] = d->fingers[i];
	s->n_contours = s->n_points = 0;
	for (int32_t i = 0; i < d->n_contours && s->n_contours < SNAPSHOT_MAX_ITEMS; i++) {
		const struct contour_det *c = &d->contours[i];
		if (s->n_points + c->n > SNAPSHOT_MAX_CONTOUR_POINTS)
			break;
		struct contour_det *o = &s->contours[s->n_contours++];
		*o = *c;
		o->first = s->n_points;
		memcpy(&s->points[s->n_points], &d->points[c->first], (size_t)c->n * sizeof *s->points);
		s->n_points += c->n;
	}
}

static void snapshot_publish(struct report *r, const struct report_frame *fr)
{
	struct snapshot *s = r->snaps[r->snap_back];
	const struct tracked_state *st = fr->st;
	const struct tt_config *c = fr->cfg;
	s->frame = fr->fseq;
	image_u8_copy(&s->grey, &fr->frame->img);
	mask_image(fr->mask, &s->binary);
	s->n_objects = st->n_objects < SNAPSHOT_MAX_ITEMS ? st->n_objects : SNAPSHOT_MAX_ITEMS;
	s->n_cursors = st->n_cursors < SNAPSHOT_MAX_ITEMS ? st->n_cursors : SNAPSHOT_MAX_ITEMS;
	s->n_blobs = st->n_blobs < SNAPSHOT_MAX_ITEMS ? st->n_blobs : SNAPSHOT_MAX_ITEMS;
	memcpy(s->objects, st->objects, (size_t)s->n_objects * sizeof *s->objects);
	memcpy(s->cursors, st->cursors, (size_t)s->n_cursors * sizeof *s->cursors);
	memcpy(s->blobs, st->blobs, (size_t)s->n_blobs * sizeof *s->blobs);
	s->n_fids = fr->det->n_fids < SNAPSHOT_MAX_ITEMS ? fr->det->n_fids : SNAPSHOT_MAX_ITEMS;
	memcpy(s->fids, fr->det->fids, (size_t)s->n_fids * sizeof *s->fids);
	snapshot_outlines(s, fr->det);
	s->n_recognised = fr->n_recognised < SNAPSHOT_MAX_RECOGNISED ? fr->n_recognised : SNAPSHOT_MAX_RECOGNISED;
	if (s->n_recognised > 0)
		memcpy(s->recognised, fr->recognised, (size_t)s->n_recognised * sizeof *s->recognised);
	s->fps = r->fps;
	for (int i = 0; i <= STAGE_TOTAL; i++)
		s->stage_ms[i] = (float)r->timing[i].samples[(r->timing[i].n_total + TIMING_SAMPLES - 1) %
							     TIMING_SAMPLES] / 1e6f;
	s->dropped_frames = fr->dropped_frames;
	s->bad_frames = fr->bad_frames;
	snprintf(s->backend, sizeof s->backend, "%s", fr->backend);
	snprintf(s->status, sizeof s->status, "%s", fr->status);
	s->radius = c->radius;
	s->gate = c->gate;
	snprintf(s->threshold_mode, sizeof s->threshold_mode, "%s", c->threshold_mode);
	snprintf(s->threshold2_mode, sizeof s->threshold2_mode, "%s", c->threshold2_mode);
	snprintf(s->threshold3_mode, sizeof s->threshold3_mode, "%s", c->threshold3_mode);
	s->mean_radius = c->mean_radius;
	s->mean_bias = c->mean_bias;
	s->median = c->median;
	s->radius2 = c->radius2;
	s->median2 = c->median2;
	s->finger_size = c->finger_size;
	s->finger_sensitivity = c->finger_sensitivity;
	s->blob_min = c->blob_min;
	s->blob_max = c->blob_max;
	s->touch_sharpness = c->touch_sharpness;
	s->invert_x = c->invert_x;
	s->invert_y = c->invert_y;
	s->invert_angle = c->invert_angle;
	s->paused = fr->paused;

	pthread_mutex_lock(&r->snap_lock);
	int t = r->snap_ready;
	r->snap_ready = r->snap_back;
	r->snap_back = t;
	r->snap_new = true;
	pthread_mutex_unlock(&r->snap_lock);
}

static void update_fps(struct report *r, uint64_t fseq, int64_t now)
{
	if (!r->fps_t0) {
		r->fps_t0 = now;
		r->fps_n0 = fseq;
		return;
	}
	int64_t dt = now - r->fps_t0;
	/* The first rate after a quarter second, so the first summary line (at
	 * one second) has one; then over whole seconds. */
	bool first = r->fps == 0.0f && dt >= 250000000LL && fseq - r->fps_n0 >= 2;
	if (first || dt >= 1000000000LL) {
		r->fps = (float)((double)(fseq - r->fps_n0) * 1e9 / (double)dt);
		r->fps_t0 = now;
		r->fps_n0 = fseq;
	}
}

/* The name and user + system CPU time of thread tid of this process, from
 * /proc (Linux); false when it cannot be read (it has ended). Read by
 * open and read, which allocate nothing (fopen allocates its buffer). */
static bool thread_read(int tid, char *name, size_t cap, int64_t *ns)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
	const int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	const ssize_t n = read(fd, line, sizeof line - 1);
	close(fd);
	line[n > 0 ? n : 0] = 0;
	char *lp = n > 0 ? strchr(line, '(') : NULL, *rp = n > 0 ? strrchr(line, ')') : NULL;
	if (!lp || !rp || rp < lp || !rp[1])
		return false;
	snprintf(name, cap, "%.*s", (int)(rp - lp - 1), lp + 1);
	/* After the name: state (field 3) ... utime (14), stime (15), in ticks. */
	unsigned long long ut = 0, st = 0;
	if (sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return false;
	long hz = sysconf(_SC_CLK_TCK);
	*ns = (int64_t)(ut + st) * (1000000000LL / (hz > 0 ? hz : 100));
	return true;
}

/* Reads every thread's CPU time; base: as the first frame's baseline. */
static void threads_sample(struct report *r, bool base)
{
	pthread_mutex_lock(&r->threads_lock);
	if (!base && !r->threads_base) { /* no frame yet: no baseline to count from */
		pthread_mutex_unlock(&r->threads_lock);
		return;
	}
	if (r->task_dir)
		rewinddir(r->task_dir);
	else
		r->task_dir = opendir("/proc/self/task");
	DIR *d = r->task_dir;
	if (!d) {
		pthread_mutex_unlock(&r->threads_lock);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		const int tid = atoi(e->d_name);
		char name[16];
		int64_t ns;
		if (tid <= 0 || !thread_read(tid, name, sizeof name, &ns))
			continue;
		int i = 0;
		while (i < r->n_threads && r->threads[i].tid != tid)
			i++;
		if (i == r->n_threads) {
			if (i == REPORT_MAX_THREADS)
				continue;
			r->n_threads++;
			r->threads[i] = (struct thread_cpu){.tid = tid, .ns0 = r->threads_base ? 0 : ns};
			snprintf(r->threads[i].name, sizeof r->threads[i].name, "%s", name);
		}
		r->threads[i].ns = ns;
		if (base)
			r->threads[i].ns0 = ns;
	}
	if (base)
		r->threads_base = true;
	pthread_mutex_unlock(&r->threads_lock);
}

void report_sample_threads(struct report *r)
{
	threads_sample(r, false);
}

/* The steps a frame total is made of, match split in its three parts. */
static const enum stage slow_steps[] = {STAGE_THRESHOLD,   STAGE_SEGMENT,    STAGE_MATCH_FIRST, STAGE_MATCH_THIRD,
					STAGE_MATCH_WAIT, STAGE_TRACK,      STAGE_TUIO};
#define N_SLOW_STEPS (int)(sizeof slow_steps / sizeof slow_steps[0])

/* --stats: a frame over twice the median of the last frames is a tail
 * frame; the step that most exceeded its own recent median is blamed. */
static void count_slow(struct report *r, const int64_t *ns)
{
	if (r->timing[STAGE_TOTAL].n_total < TIMING_RECENT_MAX)
		return;
	int64_t med = timing_recent_median(&r->timing[STAGE_TOTAL], TIMING_RECENT_MAX);
	if (ns[STAGE_TOTAL] <= 2 * med)
		return;
	r->slow_frames++;
	int worst = 0;
	int64_t worst_excess = INT64_MIN;
	for (int k = 0; k < N_SLOW_STEPS; k++) {
		int i = slow_steps[k];
		int64_t excess = ns[i] - timing_recent_median(&r->timing[i], TIMING_RECENT_MAX);
		if (excess > worst_excess) {
			worst_excess = excess;
			worst = i;
		}
	}
	r->slow_by[worst]++;
}

void report_frame(struct report *r, const struct report_frame *fr, int64_t now_ns)
{
	for (int i = 0; i < STAGE_N; i++)
		if (i != STAGE_LATENCY || fr->ns[i] > 0)
			timing_add(&r->timing[i], fr->ns[i]);
	if (fr->cfg && fr->cfg->stats)
		count_slow(r, fr->ns);
	if (r->dump_dir[0] && !r->dump_failed)
		dump_frame(r, fr);
	if (r->snaps[0])
		snapshot_publish(r, fr);
	update_fps(r, fr->fseq, now_ns);
	if (!r->cpu_frames++) {
		r->cpu0_ns = clock_process_cpu_ns();
		r->wall0_ns = now_ns;
		if (fr->cfg && fr->cfg->stats)
			threads_sample(r, true);
	}
}

const struct snapshot *report_snapshot_front(struct report *r)
{
	if (!r->snaps[0])
		return NULL;
	pthread_mutex_lock(&r->snap_lock);
	if (r->snap_new) {
		int t = r->snap_front;
		r->snap_front = r->snap_ready;
		r->snap_ready = t;
		r->snap_new = false;
	}
	pthread_mutex_unlock(&r->snap_lock);
	return r->snaps[r->snap_front];
}

void report_summary_publish(struct report *r, uint64_t fseq, const struct tracked_state *st, const char *backend,
			    bool quiet)
{
	struct summary s;
	memset(&s, 0, sizeof s);
	int n = 0;
	for (int i = 0; i < st->n_objects && n < (int)sizeof s.ids - 12; i++)
		n += snprintf(s.ids + n, sizeof s.ids - (size_t)n, "%s%d", i ? "," : "", st->objects[i].class_id);
	/* The last 64 frames: no allocation or full sort on the frame thread. */
	int64_t med = timing_recent_median(&r->timing[STAGE_TOTAL], TIMING_RECENT_MAX);
	s.fseq = fseq;
	s.fps = r->fps;
	s.n_objects = st->n_objects;
	s.n_cursors = st->n_cursors;
	s.n_blobs = st->n_blobs;
	s.median_ms = (double)med / 1e6;
	snprintf(s.backend, sizeof s.backend, "%s", backend);
	s.quiet = quiet;
	pthread_mutex_lock(&r->summary_lock);
	r->summary = s;
	pthread_mutex_unlock(&r->summary_lock);
	r->summary_t_ns = clock_now_ns();
}

int64_t report_summary_age_ns(const struct report *r, int64_t now_ns)
{
	return now_ns - r->summary_t_ns;
}

void report_print_summary(struct report *r, const char *status)
{
	struct summary s;
	pthread_mutex_lock(&r->summary_lock);
	s = r->summary;
	pthread_mutex_unlock(&r->summary_lock);
	if (!s.quiet) {
		char fps[32];
		if (s.fps > 0.0f)
			snprintf(fps, sizeof fps, "%.1f fps", s.fps);
		else
			snprintf(fps, sizeof fps, "-- fps"); /* not measured yet */
		printf("tabletrack: frame %llu  %s  %d objects [%s]  %d fingers  %d blobs  %.2f ms/frame (%s)%s%s\n",
		       (unsigned long long)s.fseq, fps, s.n_objects, s.ids, s.n_cursors, s.n_blobs,
		       s.median_ms, s.backend, status[0] ? "  " : "", status);
		fflush(stdout);
	}
	service_notify_status("%.1f fps, %d objects, %d fingers, %s path%s%s", s.fps, s.n_objects,
			      s.n_cursors, s.backend, status[0] ? ", " : "", status);
}

/* The threads' CPU a frame since the first frame, threads of one name
 * added up, largest first (ticks of /proc: 10 ms each, so a run of some
 * seconds). */
static void print_threads(struct report *r, uint64_t frames)
{
	struct thread_cpu by_name[REPORT_MAX_THREADS];
	int count[REPORT_MAX_THREADS], n = 0;
	pthread_mutex_lock(&r->threads_lock);
	for (int i = 0; i < r->n_threads; i++) {
		int j = 0;
		while (j < n && strcmp(by_name[j].name, r->threads[i].name) != 0)
			j++;
		if (j == n) {
			by_name[n] = r->threads[i];
			by_name[n].ns = 0;
			count[n++] = 0;
		}
		by_name[j].ns += r->threads[i].ns - r->threads[i].ns0;
		count[j]++;
	}
	pthread_mutex_unlock(&r->threads_lock);
	if (!n)
		return;
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && by_name[j].ns > by_name[j - 1].ns; j--) {
			struct thread_cpu t = by_name[j];
			int c = count[j];
			by_name[j] = by_name[j - 1];
			count[j] = count[j - 1];
			by_name[j - 1] = t;
			count[j - 1] = c;
		}
	printf("  CPU a frame by thread:");
	for (int i = 0; i < n && by_name[i].ns > 0; i++)
		printf("%s %s%s%.3f ms", i ? "," : "", by_name[i].name, count[i] > 1 ? " (all of them) " : " ",
		       (double)by_name[i].ns / 1e6 / (double)frames);
	printf("\n");
}

void report_print_stats(struct report *r, uint64_t frames, uint64_t bad_frames, uint64_t dropped,
			const char *backend, int w, int h)
{
	printf("tabletrack --stats: %llu frames, %llu skipped, %llu dropped, %s path, %dx%d\n",
	       (unsigned long long)frames, (unsigned long long)bad_frames, (unsigned long long)dropped, backend, w, h);
	printf("  %-16s %10s %10s\n", "stage", "median ms", "p99 ms");
	for (int i = 0; i < STAGE_N; i++) {
		int64_t med, p99;
		timing_summary(&r->timing[i], &med, &p99);
		if (r->timing[i].n_total)
			printf("  %-16s %10.3f %10.3f\n", stage_name((enum stage)i), (double)med / 1e6, (double)p99 / 1e6);
	}
	if (r->cpu_frames > 1) {
		double cpu_s = (double)(clock_process_cpu_ns() - r->cpu0_ns) / 1e9;
		double wall_s = (double)(clock_now_ns() - r->wall0_ns) / 1e9;
		uint64_t n = r->cpu_frames - 1;
		printf("  CPU (user+sys, all threads): %.3f ms a frame over %llu frames, %.2f cores busy in %.1f s\n",
		       cpu_s * 1e3 / (double)n, (unsigned long long)n, wall_s > 0 ? cpu_s / wall_s : 0.0, wall_s);
		print_threads(r, n);
	}
	if (r->slow_frames) {
		printf("  frames over twice the recent median: %llu of %llu; the step most over its own median:",
		       (unsigned long long)r->slow_frames, (unsigned long long)r->timing[STAGE_TOTAL].n_total);
		for (int k = 0, first = 1; k < N_SLOW_STEPS; k++)
			if (r->slow_by[slow_steps[k]]) {
				printf("%s %s %llu", first ? "" : ",", stage_name(slow_steps[k]),
				       (unsigned long long)r->slow_by[slow_steps[k]]);
				first = 0;
			}
		printf("\n");
	}
	fflush(stdout);
}
