/* v4l2:DEV - a V4L2 camera through libv4l2, mmap streaming. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#if TT_HAVE_V4L2
#include <libv4l2.h>
#endif
#include <linux/videodev2.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../core/err.h"
#include "../core/log.h"
#include "capture_backend.h"
#include "pixfmt.h"
#include "v4l2_sys.h"

#define V4L2_MAX_BUFFERS 32
#define V4L2_MAX_FORMATS 64
#define EINTR_RETRIES 100

/* ------------------------------------------------------ the system calls -- */

#if TT_HAVE_V4L2
static int sys_open(const char *path, int flags) { return v4l2_open(path, flags); }
static int sys_close(int fd) { return v4l2_close(fd); }
static int sys_ioctl(int fd, unsigned long req, void *arg) { return v4l2_ioctl(fd, req, arg); }
static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, int64_t off)
{
	return v4l2_mmap(addr, len, prot, flags, fd, off);
}
static int sys_munmap(void *addr, size_t len) { return v4l2_munmap(addr, len); }
#else
/* Without libv4l2 the camera is driven with the kernel's own calls: only
 * the pixel formats the camera itself offers (pixfmt.c) are usable. */
static int sys_open(const char *path, int flags) { return open(path, flags); }
static int sys_close(int fd) { return close(fd); }
static int sys_ioctl(int fd, unsigned long req, void *arg) { return ioctl(fd, req, arg); }
static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, int64_t off)
{
	return mmap(addr, len, prot, flags, fd, (off_t)off);
}
static int sys_munmap(void *addr, size_t len) { return munmap(addr, len); }
#endif
static int sys_poll(struct pollfd *fds, nfds_t n, int timeout_ms) { return poll(fds, n, timeout_ms); }

static const struct v4l2_sys sys_libv4l2 = {
	.open = sys_open, .close = sys_close, .ioctl = sys_ioctl,
	.mmap = sys_mmap, .munmap = sys_munmap, .poll = sys_poll,
};
static const struct v4l2_sys *_Atomic g_sys = &sys_libv4l2;

void capture_v4l2_set_sys(const struct v4l2_sys *sys)
{
	atomic_store(&g_sys, sys ? sys : &sys_libv4l2);
}

static int xioctl(const struct v4l2_sys *sys, int fd, unsigned long req, void *arg)
{
	int r, tries = 0;
	do
		r = sys->ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR && ++tries < EINTR_RETRIES);
	return r;
}

/* -------------------------------------------------------------- source -- */

struct v4l2_buf {
	void *start;
	size_t len;
};

struct v4l2_src {
	const struct v4l2_sys *sys; /* fixed at open: a source never mixes fakes and libv4l2 */
	int fd;
	char path[256];
	struct v4l2_buf bufs[V4L2_MAX_BUFFERS];
	int n_bufs;
	bool streaming;
	uint32_t fourcc;
	int width, height, bytesperline;
	struct pixfmt_conv *conv;
	struct frame frame;
	int bad_run; /* consecutive EIO from DQBUF */
	unsigned fallback; /* FALLBACK_*: words the driver's lists could not serve */
	bool timeout_logged, errflag_logged, short_logged, eio_logged;
};

/* A word (max/min) that fell back to the driver's current value because the
 * driver does not enumerate; reported in one line per open. */
#define FALLBACK_FORMAT 1u
#define FALLBACK_SIZE 2u
#define FALLBACK_RATE 4u

/* Loss and open failures repeat at every back-off; say them once until the
 * camera is back. */
static bool g_open_failed_logged;

static int lost(struct v4l2_src *s, const char *what, int errnum)
{
	log_error("capture: %s: %s failed: %s", s->path, what, strerror(errnum));
	return ERR_DEVICE;
}

static void device_path(const char *arg, char *out, size_t cap)
{
	if (!arg[0])
		arg = "0";
	if (strspn(arg, "0123456789") == strlen(arg))
		snprintf(out, cap, "/dev/video%s", arg);
	else
		snprintf(out, cap, "%s", arg);
}


/* ----------------------------------------------------------- negotiation -- */

static bool is_size_word(int v)
{
	return v == CAPTURE_SIZE_MAX || v == CAPTURE_SIZE_MIN;
}

static const char *size_word(int v)
{
	return v == CAPTURE_SIZE_MAX ? "max" : v == CAPTURE_SIZE_MIN ? "min" : "auto";
}

static const char *fps_word(int v)
{
	return v == CAPTURE_FPS_MAX ? "max" : v == CAPTURE_FPS_MIN ? "min" : "auto";
}

/* What a size search looks for: the given sides (w, h > 0) matched as
 * closely as the camera offers, the others going the direction d (+1
 * larger, -1 smaller). An auto side follows a max/min one, so "max x auto"
 * is the largest size; beside a given side it takes the largest. */
struct size_want {
	int w, h;   /* > 0: given */
	int dw, dh; /* 0 for a given side */
};

static struct size_want size_want_make(int w, int h)
{
	struct size_want sw = {.w = w > 0 ? w : 0, .h = h > 0 ? h : 0};
	sw.dw = w == CAPTURE_SIZE_MAX ? 1 : w == CAPTURE_SIZE_MIN ? -1 : 0;
	sw.dh = h == CAPTURE_SIZE_MAX ? 1 : h == CAPTURE_SIZE_MIN ? -1 : 0;
	if (w <= 0 && !is_size_word(w))
		sw.dw = sw.dh ? sw.dh : 1;
	if (h <= 0 && !is_size_word(h))
		sw.dh = sw.dw ? sw.dw : 1;
	return sw;
}

static int64_t size_miss(int w, int h, const struct size_want *sw)
{
	return (sw->w ? llabs((long long)w - sw->w) : 0) + (sw->h ? llabs((long long)h - sw->h) : 0);
}

/* True when w x h serves sw better than bw x bh: first the given sides
 * (closest), then by area in the wanted direction, or side by side when
 * the two sides go opposite ways (max x min). */
static bool size_better(int w, int h, int bw, int bh, const struct size_want *sw)
{
	int64_t m = size_miss(w, h, sw), bm = size_miss(bw, bh, sw);
	if (m != bm)
		return m < bm;
	if (sw->dw && sw->dh && sw->dw != sw->dh) {
		if (w != bw)
			return (w - bw) * sw->dw > 0;
		return (h - bh) * sw->dh > 0;
	}
	int d = sw->dw ? sw->dw : sw->dh;
	return ((int64_t)w * h - (int64_t)bw * bh) * d > 0;
}

/* One side of a stepwise/continuous range: the value on mn + k*step nearest
 * to the given one, else its largest (d > 0) or smallest, within what an
 * image may be. */
static int range_pick(uint32_t mn, uint32_t mx, uint32_t step, int given, int d)
{
	if (step == 0)
		step = 1;
	if (mn == 0)
		mn = step; /* a zero-pixel side is no size */
	uint64_t top = mx < (uint32_t)IMAGE_MAX_SIDE ? mx : (uint32_t)IMAGE_MAX_SIDE;
	if (top < mn)
		return mn > (uint32_t)IMAGE_MAX_SIDE ? IMAGE_MAX_SIDE + 1 : (int)mn;
	uint64_t kmax = (top - mn) / step, k;
	if (given > 0)
		k = (uint64_t)given <= mn ? 0 : ((uint64_t)given - mn + step / 2) / step;
	else
		k = d > 0 ? kmax : 0;
	if (k > kmax)
		k = kmax;
	return (int)(mn + k * step);
}

/* The frame size of format pf that serves sw best, from
 * VIDIOC_ENUM_FRAMESIZES. ERR_UNSUPPORTED when the driver lists none. */
static int best_size(struct v4l2_src *s, uint32_t pf, const struct size_want *sw, int *ow, int *oh)
{
	bool any = false;
	int bw = 0, bh = 0;
	for (uint32_t i = 0; i < 1024; i++) {
		struct v4l2_frmsizeenum fs = {.index = i, .pixel_format = pf};
		if (xioctl(s->sys, s->fd, VIDIOC_ENUM_FRAMESIZES, &fs) < 0)
			break;
		int w, h;
		bool range = fs.type != V4L2_FRMSIZE_TYPE_DISCRETE;
		if (!range) {
			if (fs.discrete.width > IMAGE_MAX_SIDE || fs.discrete.height > IMAGE_MAX_SIDE)
				continue;
			w = (int)fs.discrete.width;
			h = (int)fs.discrete.height;
		} else {
			w = range_pick(fs.stepwise.min_width, fs.stepwise.max_width, fs.stepwise.step_width,
				       sw->w, sw->dw);
			h = range_pick(fs.stepwise.min_height, fs.stepwise.max_height,
				       fs.stepwise.step_height, sw->h, sw->dh);
		}
		if (w >= 1 && h >= 1 && w <= IMAGE_MAX_SIDE && h <= IMAGE_MAX_SIDE &&
		    (!any || size_better(w, h, bw, bh, sw))) {
			bw = w;
			bh = h;
			any = true;
		}
		if (range) /* a range is the only entry */
			break;
	}
	if (!any)
		return ERR_UNSUPPORTED;
	*ow = bw;
	*oh = bh;
	return 0;
}

/* a is a shorter frame interval than b. */
static bool fract_less(struct v4l2_fract a, struct v4l2_fract b)
{
	return (uint64_t)a.numerator * b.denominator < (uint64_t)b.numerator * a.denominator;
}

/* The shortest (d > 0) or longest frame interval format pf offers at
 * w x h, from VIDIOC_ENUM_FRAMEINTERVALS. ERR_UNSUPPORTED when none. */
static int best_interval(struct v4l2_src *s, uint32_t pf, int w, int h, int d, struct v4l2_fract *out)
{
	bool any = false;
	for (uint32_t i = 0; i < 256; i++) {
		struct v4l2_frmivalenum iv = {.index = i, .pixel_format = pf, .width = (uint32_t)w,
					      .height = (uint32_t)h};
		if (xioctl(s->sys, s->fd, VIDIOC_ENUM_FRAMEINTERVALS, &iv) < 0)
			break;
		bool range = iv.type != V4L2_FRMIVAL_TYPE_DISCRETE;
		struct v4l2_fract t = !range ? iv.discrete : d > 0 ? iv.stepwise.min : iv.stepwise.max;
		if (t.numerator && t.denominator &&
		    (!any || (d > 0 ? fract_less(t, *out) : fract_less(*out, t)))) {
			*out = t;
			any = true;
		}
		if (range)
			break;
	}
	return any ? 0 : ERR_UNSUPPORTED;
}

/* Whether format pf reaches fps at w x h: its fastest interval there is
 * short enough, or the driver does not list intervals (assume it can). */
static bool format_reaches(struct v4l2_src *s, uint32_t pf, int w, int h, int fps)
{
	struct v4l2_fract t;
	if (best_interval(s, pf, w, h, 1, &t) < 0)
		return true;
	return (uint64_t)t.denominator >= (uint64_t)fps * t.numerator;
}

static int fract_fps(struct v4l2_fract t)
{
	return t.numerator ? (int)((t.denominator + t.numerator / 2) / t.numerator) : 0;
}

/* One readable format, ranked for format = max or min by its largest size. */
struct format_size {
	uint32_t pf;
	int key;               /* the auto rank: cheaper first */
	int64_t area;          /* of its largest size; 0 = not listed */
	struct v4l2_fract iv;  /* max: the shortest interval at that size */
};

static bool format_size_better(const struct format_size *a, const struct format_size *b, bool max)
{
	if (a->area != b->area)
		return max ? a->area > b->area : a->area < b->area;
	if (max && (a->iv.numerator != 0) != (b->iv.numerator != 0))
		return a->iv.numerator != 0;
	if (max && a->iv.numerator && (fract_less(a->iv, b->iv) || fract_less(b->iv, a->iv)))
		return fract_less(a->iv, b->iv);
	return a->key < b->key;
}

/* Picks the camera's pixel format: the configured one; in "auto" the
 * cheapest luma source the camera offers natively (libv4l2's emulated
 * formats cost a conversion), preferring one that reaches the wanted rate;
 * in "max"/"min" the readable format with the largest/smallest largest
 * size (auto's rank breaks ties), or auto's choice when no format lists
 * its sizes. */
static int choose_format(struct v4l2_src *s, const struct capture_config *cfg, uint32_t *out)
{
	bool fmt_max = !strcasecmp(cfg->format, "max"), fmt_min = !strcasecmp(cfg->format, "min");
	bool fmt_auto = !cfg->format[0] || !strcasecmp(cfg->format, "auto");
	uint32_t want = fmt_auto || fmt_max || fmt_min ? 0 : pixfmt_parse(cfg->format);
	if (!want && !fmt_auto && !fmt_max && !fmt_min) {
		log_error("capture: unknown pixel format '%s' (GREY, Y16, YUYV, UYVY, NV12, YU12, "
			  "MJPG, auto, max or min)",
			  cfg->format);
		return ERR_CONFIG;
	}
	char offered[V4L2_MAX_FORMATS * 5 + 1] = "";
	size_t off = 0;
	int best_key = 1 << 30;
	uint32_t best = 0;
	struct format_size sized = {0};
	const struct size_want largest = size_want_make(CAPTURE_SIZE_MAX, CAPTURE_SIZE_MAX);
	for (uint32_t i = 0; i < V4L2_MAX_FORMATS; i++) {
		struct v4l2_fmtdesc fd = {.index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
		if (xioctl(s->sys, s->fd, VIDIOC_ENUM_FMT, &fd) < 0)
			break;
		char nm[5];
		off += (size_t)snprintf(offered + off, sizeof offered - off, "%s%s", off ? " " : "",
					pixfmt_name(fd.pixelformat, nm));
		if (want) {
			if (fd.pixelformat == want)
				best = want;
			continue;
		}
		int rank = pixfmt_rank(fd.pixelformat);
		if (rank < 0)
			continue;
		int key = rank + ((fd.flags & V4L2_FMT_FLAG_EMULATED) ? 1000 : 0);
		if (cfg->fps > 0 && cfg->width > 0 && cfg->height > 0 &&
		    !format_reaches(s, fd.pixelformat, cfg->width, cfg->height, cfg->fps))
			key += 100;
		if (key < best_key) {
			best_key = key;
			best = fd.pixelformat;
		}
		int w, h;
		if ((fmt_max || fmt_min) && best_size(s, fd.pixelformat, &largest, &w, &h) == 0) {
			struct format_size fs = {.pf = fd.pixelformat, .key = key, .area = (int64_t)w * h};
			if (fmt_max)
				best_interval(s, fd.pixelformat, w, h, 1, &fs.iv);
			if (!sized.area || format_size_better(&fs, &sized, fmt_max))
				sized = fs;
		}
	}
	if (!best) {
		if (want)
			log_error("capture: %s does not offer %s (it offers: %s)", s->path, cfg->format,
				  offered[0] ? offered : "nothing");
		else
			log_error("capture: %s offers no pixel format tabletrack reads (it offers: %s)",
				  s->path, offered[0] ? offered : "nothing");
		return ERR_CONFIG;
	}
	if ((fmt_max || fmt_min) && sized.area) {
		best = sized.pf;
	} else if (fmt_max || fmt_min) {
		/* Nothing to compare: the driver's current format, when readable. */
		struct v4l2_format f = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
		if (xioctl(s->sys, s->fd, VIDIOC_G_FMT, &f) == 0 && pixfmt_rank(f.fmt.pix.pixelformat) >= 0)
			best = f.fmt.pix.pixelformat;
		s->fallback |= FALLBACK_FORMAT;
	}
	*out = best;
	return 0;
}

static int set_format(struct v4l2_src *s, const struct capture_config *cfg, uint32_t fourcc)
{
	struct v4l2_format f = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
	if (xioctl(s->sys, s->fd, VIDIOC_G_FMT, &f) < 0)
		return lost(s, "VIDIOC_G_FMT", errno);
	int ask_w = 0, ask_h = 0;
	char a[5], b[5];
	if (cfg->width > 0 && cfg->height > 0) {
		ask_w = cfg->width;
		ask_h = cfg->height;
	} else if (cfg->width > 0 || cfg->height > 0 || is_size_word(cfg->width) ||
		   is_size_word(cfg->height)) {
		struct size_want sw = size_want_make(cfg->width, cfg->height);
		if (best_size(s, fourcc, &sw, &ask_w, &ask_h) == 0) {
			if (size_miss(ask_w, ask_h, &sw))
				log_warn("capture: %s: %s has no size %s %d: asking for the nearest, %dx%d",
					 s->path, pixfmt_name(fourcc, a), sw.w ? "with width" : "with height",
					 sw.w ? sw.w : sw.h, ask_w, ask_h);
		} else {
			s->fallback |= FALLBACK_SIZE;
			if (sw.w || sw.h) { /* a given side is still asked for */
				ask_w = sw.w ? sw.w : (int)f.fmt.pix.width;
				ask_h = sw.h ? sw.h : (int)f.fmt.pix.height;
			}
		}
	}
	if (ask_w > 0 && ask_h > 0) {
		f.fmt.pix.width = (uint32_t)ask_w;
		f.fmt.pix.height = (uint32_t)ask_h;
	}
	f.fmt.pix.pixelformat = fourcc;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	f.fmt.pix.bytesperline = 0;
	if (xioctl(s->sys, s->fd, VIDIOC_S_FMT, &f) < 0) {
		if (errno == EBUSY)
			log_error("capture: %s is busy (another program streams from it)", s->path);
		return errno == EBUSY ? ERR_DEVICE : lost(s, "VIDIOC_S_FMT", errno);
	}
	if (!pixfmt_supported(f.fmt.pix.pixelformat)) {
		log_error("capture: %s: asked for %s, the driver chose %s, which tabletrack cannot read",
			  s->path, pixfmt_name(fourcc, a), pixfmt_name(f.fmt.pix.pixelformat, b));
		return ERR_CONFIG;
	}
	if (f.fmt.pix.width < 1 || f.fmt.pix.height < 1 || f.fmt.pix.width > IMAGE_MAX_SIDE ||
	    f.fmt.pix.height > IMAGE_MAX_SIDE) {
		log_error("capture: %s: frame size %ux%u outside 1..%d", s->path, f.fmt.pix.width,
			  f.fmt.pix.height, IMAGE_MAX_SIDE);
		return ERR_CONFIG;
	}
	if (ask_w > 0 && ((int)f.fmt.pix.width != ask_w || (int)f.fmt.pix.height != ask_h))
		log_warn("capture: %s: asked for %dx%d, the camera gives %ux%u", s->path, ask_w, ask_h,
			 f.fmt.pix.width, f.fmt.pix.height);
	s->fourcc = f.fmt.pix.pixelformat;
	s->width = (int)f.fmt.pix.width;
	s->height = (int)f.fmt.pix.height;
	s->bytesperline = (int)f.fmt.pix.bytesperline;
	return 0;
}

/* Sets the rate (a number, or max/min from the intervals offered at the
 * negotiated size; 0 and auto keep the current one) and returns the one the
 * camera runs at, 0 when it does not say. */
static int set_rate(struct v4l2_src *s, int fps)
{
	bool word = fps == CAPTURE_FPS_MAX || fps == CAPTURE_FPS_MIN;
	struct v4l2_streamparm p = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
	if (xioctl(s->sys, s->fd, VIDIOC_G_PARM, &p) < 0) {
		if (word)
			log_info("capture: %s has no frame rate control: fps %s ignored", s->path,
				 fps_word(fps));
		return 0; /* many drivers have no rate control: fine */
	}
	struct v4l2_fract want = {0, 0};
	if (fps > 0) {
		want = (struct v4l2_fract){1, (uint32_t)fps};
	} else if (word && best_interval(s, s->fourcc, s->width, s->height,
					 fps == CAPTURE_FPS_MAX ? 1 : -1, &want)) {
		s->fallback |= FALLBACK_RATE;
	}
	if (want.numerator && !(p.parm.capture.capability & V4L2_CAP_TIMEPERFRAME)) {
		if (word)
			log_info("capture: %s cannot change its frame rate: fps %s ignored", s->path,
				 fps_word(fps));
	} else if (want.numerator) {
		p.parm.capture.timeperframe = want;
		if (xioctl(s->sys, s->fd, VIDIOC_S_PARM, &p) < 0)
			log_warn("capture: %s: cannot set %d fps: %s", s->path, fract_fps(want),
				 strerror(errno));
	}
	const struct v4l2_fract *t = &p.parm.capture.timeperframe;
	if (t->numerator && t->denominator) {
		int got = fract_fps(*t);
		if (want.numerator && got != fract_fps(want))
			log_warn("capture: %s: asked for %d fps, the camera gives %d", s->path,
				 fract_fps(want), got);
		return got;
	}
	return 0;
}

/* ------------------------------------------------------------ controls -- */

struct ctl_key {
	const char *key;
	uint32_t cid;      /* the value control */
	uint32_t auto_cid; /* its automatic switch, 0 if none */
	int auto_on, auto_off;
};

static const struct ctl_key ctl_keys[] = {
	{"exposure", V4L2_CID_EXPOSURE_ABSOLUTE, V4L2_CID_EXPOSURE_AUTO,
	 V4L2_EXPOSURE_APERTURE_PRIORITY, V4L2_EXPOSURE_MANUAL},
	{"gain", V4L2_CID_GAIN, V4L2_CID_AUTOGAIN, 1, 0},
	{"brightness", V4L2_CID_BRIGHTNESS, 0, 0, 0},
	{"contrast", V4L2_CID_CONTRAST, 0, 0, 0},
	{"gamma", V4L2_CID_GAMMA, 0, 0, 0},
	{"sharpness", V4L2_CID_SHARPNESS, 0, 0, 0},
	{"focus", V4L2_CID_FOCUS_ABSOLUTE, V4L2_CID_FOCUS_AUTO, 1, 0},
	{"power_line", V4L2_CID_POWER_LINE_FREQUENCY, 0, 0, 0},
	{"white_balance", V4L2_CID_WHITE_BALANCE_TEMPERATURE, V4L2_CID_AUTO_WHITE_BALANCE, 1, 0},
};
#define N_CTL_KEYS (sizeof ctl_keys / sizeof ctl_keys[0])

/* Reported once per process: a reopened camera does not repeat them. */
static bool g_ctl_reported[N_CTL_KEYS + 1];

static int set_ctrl(struct v4l2_src *s, uint32_t cid, long value, size_t k, bool quiet)
{
	struct v4l2_queryctrl q = {.id = cid};
	if (xioctl(s->sys, s->fd, VIDIOC_QUERYCTRL, &q) < 0 || (q.flags & V4L2_CTRL_FLAG_DISABLED)) {
		if (!quiet)
			log_once(&g_ctl_reported[k], LOG_WARN, "capture: %s has no %s control: ignored",
				 s->path, ctl_keys[k].key);
		return ERR_UNSUPPORTED;
	}
	if (q.type != V4L2_CTRL_TYPE_MENU && q.type != V4L2_CTRL_TYPE_BOOLEAN &&
	    q.type != V4L2_CTRL_TYPE_INTEGER_MENU && (value < q.minimum || value > q.maximum)) {
		long v = value < q.minimum ? q.minimum : q.maximum;
		log_warn("capture: %s: %s=%ld outside %d..%d: using %ld", s->path, ctl_keys[k].key,
			 value, q.minimum, q.maximum, v);
		value = v;
	}
	struct v4l2_control c = {.id = cid, .value = (int32_t)value};
	if (xioctl(s->sys, s->fd, VIDIOC_S_CTRL, &c) < 0) {
		if (!quiet)
			log_once(&g_ctl_reported[k], LOG_WARN, "capture: %s: cannot set %s=%ld: %s",
				 s->path, ctl_keys[k].key, value, strerror(errno));
		return ERR_UNSUPPORTED;
	}
	return 0;
}

static void apply_control(struct v4l2_src *s, const char *key, const char *val)
{
	size_t k = 0;
	while (k < N_CTL_KEYS && strcmp(ctl_keys[k].key, key) != 0)
		k++;
	if (k == N_CTL_KEYS) {
		log_once(&g_ctl_reported[N_CTL_KEYS], LOG_WARN,
			 "capture: unknown camera control '%s' (exposure gain brightness contrast "
			 "gamma sharpness focus power_line white_balance)",
			 key);
		return;
	}
	const struct ctl_key *ck = &ctl_keys[k];
	if (strcasecmp(val, "auto") == 0) {
		if (!ck->auto_cid && ck->cid != V4L2_CID_POWER_LINE_FREQUENCY) {
			log_once(&g_ctl_reported[k], LOG_WARN, "capture: %s has no automatic mode", key);
			return;
		}
		if (ck->cid == V4L2_CID_POWER_LINE_FREQUENCY) {
			set_ctrl(s, ck->cid, V4L2_CID_POWER_LINE_FREQUENCY_AUTO, k, false);
			return;
		}
		/* UVC cameras know aperture priority as their "auto"; others know auto. */
		if (set_ctrl(s, ck->auto_cid, ck->auto_on, k, ck->cid == V4L2_CID_EXPOSURE_ABSOLUTE) &&
		    ck->cid == V4L2_CID_EXPOSURE_ABSOLUTE)
			set_ctrl(s, ck->auto_cid, V4L2_EXPOSURE_AUTO, k, false);
		return;
	}
	long v;
	char *end;
	if (ck->cid == V4L2_CID_POWER_LINE_FREQUENCY && strcasecmp(val, "off") == 0)
		v = V4L2_CID_POWER_LINE_FREQUENCY_DISABLED;
	else if (ck->cid == V4L2_CID_POWER_LINE_FREQUENCY && strcmp(val, "50") == 0)
		v = V4L2_CID_POWER_LINE_FREQUENCY_50HZ;
	else if (ck->cid == V4L2_CID_POWER_LINE_FREQUENCY && strcmp(val, "60") == 0)
		v = V4L2_CID_POWER_LINE_FREQUENCY_60HZ;
	else if (ck->cid == V4L2_CID_POWER_LINE_FREQUENCY)
		v = -1;
	else
		v = strtol(val, &end, 10);
	if (v < 0 && ck->cid == V4L2_CID_POWER_LINE_FREQUENCY) {
		log_once(&g_ctl_reported[k], LOG_WARN, "capture: power_line=%s: want off, 50, 60 or auto",
			 val);
		return;
	}
	if (ck->cid != V4L2_CID_POWER_LINE_FREQUENCY && (end == val || *end)) {
		log_once(&g_ctl_reported[k], LOG_WARN, "capture: %s=%s: want a number or auto", key, val);
		return;
	}
	if (ck->auto_cid)
		set_ctrl(s, ck->auto_cid, ck->auto_off, k, true);
	set_ctrl(s, ck->cid, v, k, false);
}

static void apply_controls(struct v4l2_src *s, const char *list)
{
	char buf[sizeof ((struct capture_config *)0)->controls];
	snprintf(buf, sizeof buf, "%s", list);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ", ;", &save); tok; tok = strtok_r(NULL, ", ;", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq || eq == tok || !eq[1]) {
			log_once(&g_ctl_reported[N_CTL_KEYS], LOG_WARN,
				 "capture: camera control '%s': want key=value", tok);
			continue;
		}
		*eq = 0;
		apply_control(s, tok, eq + 1);
	}
}

/* ----------------------------------------------------------- streaming -- */

static int start_streaming(struct v4l2_src *s, int n_wanted)
{
	struct v4l2_requestbuffers rb = {.count = (uint32_t)n_wanted,
					 .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					 .memory = V4L2_MEMORY_MMAP};
	if (xioctl(s->sys, s->fd, VIDIOC_REQBUFS, &rb) < 0)
		return errno == EBUSY ? (log_error("capture: %s is busy", s->path), ERR_DEVICE)
				      : lost(s, "VIDIOC_REQBUFS", errno);
	if (rb.count < 2) {
		log_error("capture: %s: only %u buffer(s) granted", s->path, rb.count);
		return ERR_DEVICE;
	}
	if (rb.count > V4L2_MAX_BUFFERS)
		rb.count = V4L2_MAX_BUFFERS;
	for (uint32_t i = 0; i < rb.count; i++) {
		struct v4l2_buffer b = {.index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					.memory = V4L2_MEMORY_MMAP};
		if (xioctl(s->sys, s->fd, VIDIOC_QUERYBUF, &b) < 0)
			return lost(s, "VIDIOC_QUERYBUF", errno);
		void *p = s->sys->mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
				       b.m.offset);
		if (p == MAP_FAILED)
			return lost(s, "mmap", errno);
		s->bufs[i] = (struct v4l2_buf){p, b.length};
		s->n_bufs = (int)i + 1;
		if (xioctl(s->sys, s->fd, VIDIOC_QBUF, &b) < 0)
			return lost(s, "VIDIOC_QBUF", errno);
	}
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	if (xioctl(s->sys, s->fd, VIDIOC_STREAMON, &type) < 0)
		return lost(s, "VIDIOC_STREAMON", errno);
	s->streaming = true;
	return 0;
}

static void v4l2_close_src(struct capture *c)
{
	struct v4l2_src *s = c->priv;
	if (!s)
		return;
	if (s->streaming) {
		enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		xioctl(s->sys, s->fd, VIDIOC_STREAMOFF, &type);
	}
	for (int i = 0; i < s->n_bufs; i++)
		s->sys->munmap(s->bufs[i].start, s->bufs[i].len);
	if (s->fd >= 0) {
		/* Free the driver's buffers so a quick reopen is not EBUSY. */
		struct v4l2_requestbuffers rb = {.count = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						 .memory = V4L2_MEMORY_MMAP};
		if (s->n_bufs)
			xioctl(s->sys, s->fd, VIDIOC_REQBUFS, &rb);
		s->sys->close(s->fd);
	}
	pixfmt_destroy(s->conv);
	image_u8_free(&s->frame.img);
	free(s);
	c->priv = NULL;
}

/* One line for every word the driver's missing lists could not serve. */
static void log_fallback(const struct v4l2_src *s, const struct capture_config *cfg, int fps)
{
	char words[96] = "", nm[5];
	size_t n = 0;
	if (s->fallback & FALLBACK_FORMAT)
		n += (size_t)snprintf(words + n, sizeof words - n, "format %s, ",
				      !strcasecmp(cfg->format, "max") ? "max" : "min");
	if (s->fallback & FALLBACK_SIZE) {
		char w[16], h[16];
		snprintf(w, sizeof w, "%d", cfg->width);
		snprintf(h, sizeof h, "%d", cfg->height);
		n += (size_t)snprintf(words + n, sizeof words - n, "width %s, height %s, ",
				      cfg->width > 0 ? w : size_word(cfg->width),
				      cfg->height > 0 ? h : size_word(cfg->height));
	}
	if (s->fallback & FALLBACK_RATE)
		n += (size_t)snprintf(words + n, sizeof words - n, "fps %s, ", fps_word(cfg->fps));
	if (n >= 2 && n < sizeof words)
		words[n - 2] = 0;
	bool sizes = s->fallback & (FALLBACK_FORMAT | FALLBACK_SIZE);
	log_info("capture: %s does not list its frame %s (VIDIOC_ENUM_%s): %s: using the "
		 "driver's current %s %dx%d at %d fps",
		 s->path,
		 sizes && (s->fallback & FALLBACK_RATE) ? "sizes and rates" : sizes ? "sizes" : "rates",
		 sizes && (s->fallback & FALLBACK_RATE) ? "FRAMESIZES/FRAMEINTERVALS"
		 : sizes                                 ? "FRAMESIZES"
							 : "FRAMEINTERVALS",
		 words, pixfmt_name(s->fourcc, nm), s->width, s->height, fps);
}

/* "; format max, size max x auto, fps max": the words that chose what the
 * description line shows ("" when every value was given). */
static void describe_words(const struct capture_config *cfg, char *buf, size_t cap)
{
	size_t n = 0;
	const char *sep = "; ";
	if (!cfg->format[0] || !strcasecmp(cfg->format, "auto") || !strcasecmp(cfg->format, "max") ||
	    !strcasecmp(cfg->format, "min")) {
		n += (size_t)snprintf(buf + n, cap - n, "%sformat %s", sep,
				      !strcasecmp(cfg->format, "max")   ? "max"
				      : !strcasecmp(cfg->format, "min") ? "min"
									: "auto");
		sep = ", ";
	}
	if (n < cap && !(cfg->width > 0 && cfg->height > 0)) {
		char w[16], h[16];
		snprintf(w, sizeof w, "%d", cfg->width);
		snprintf(h, sizeof h, "%d", cfg->height);
		n += (size_t)snprintf(buf + n, cap - n, "%ssize %s x %s", sep,
				      cfg->width > 0 ? w : size_word(cfg->width),
				      cfg->height > 0 ? h : size_word(cfg->height));
		sep = ", ";
	}
	if (n < cap && cfg->fps <= 0)
		snprintf(buf + n, cap - n, "%sfps %s", sep, fps_word(cfg->fps));
}

static int v4l2_open_src(struct capture *c, const char *arg)
{
	const struct capture_config *cfg = &c->cfg;
	int e = 0;
	struct v4l2_src *s = calloc(1, sizeof *s);
	if (!s)
		return ERR_NOMEM;
	c->priv = s;
	s->sys = atomic_load(&g_sys);
	s->fd = -1;
	device_path(arg, s->path, sizeof s->path);
	s->fd = s->sys->open(s->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (s->fd < 0) {
		int en = errno;
		log_once(&g_open_failed_logged, LOG_ERROR, "capture: %s: %s%s", s->path, strerror(en),
			 en == EACCES ? " (is the user in the 'video' group?)" : "");
		e = ERR_DEVICE;
		goto fail;
	}
	struct v4l2_capability cap = {0};
	if (xioctl(s->sys, s->fd, VIDIOC_QUERYCAP, &cap) < 0) {
		log_error("capture: %s is not a V4L2 device: %s", s->path, strerror(errno));
		e = errno == ENOTTY ? ERR_CONFIG : ERR_DEVICE;
		goto fail;
	}
	uint32_t caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
	if (!(caps & V4L2_CAP_VIDEO_CAPTURE) || !(caps & V4L2_CAP_STREAMING)) {
		log_error("capture: %s (%.32s) cannot stream video frames (a metadata or output node? "
			  "see --list-cameras)",
			  s->path, (const char *)cap.card);
		e = ERR_CONFIG;
		goto fail;
	}
	uint32_t fourcc = 0;
	e = choose_format(s, cfg, &fourcc);
	if (!e)
		e = set_format(s, cfg, fourcc);
	if (e)
		goto fail;
	c->fps = set_rate(s, cfg->fps);
	if (s->fallback)
		log_fallback(s, cfg, c->fps);
	if (cfg->controls[0])
		apply_controls(s, cfg->controls);
	e = image_u8_alloc(&s->frame.img, s->width, s->height);
	if (e)
		goto fail;
	s->conv = pixfmt_create(s->fourcc, s->width, s->height, s->bytesperline, &e);
	if (!s->conv)
		goto fail;
	int n = cfg->n_buffers < 3 ? 3 : cfg->n_buffers > V4L2_MAX_BUFFERS ? V4L2_MAX_BUFFERS : cfg->n_buffers;
	e = start_streaming(s, n);
	if (e)
		goto fail;
	snprintf(s->frame.name, sizeof s->frame.name, "%.63s", s->path);
	char nm[5], words[96] = "";
	describe_words(cfg, words, sizeof words);
	snprintf(c->desc, sizeof c->desc, "%s (%.32s, %s %dx%d at %d fps, %d buffers%s)", s->path,
		 (const char *)cap.card, pixfmt_name(s->fourcc, nm), s->width, s->height, c->fps,
		 s->n_bufs, words);
	c->finite = false;
	g_open_failed_logged = false;
	log_info("capture: opened %s", c->desc);
	return 0;
fail:
	v4l2_close_src(c);
	return e;
}

static int v4l2_read_src(struct capture *c, struct frame **out)
{
	struct v4l2_src *s = c->priv;
	struct pollfd p = {.fd = s->fd, .events = POLLIN};
	int r = s->sys->poll(&p, 1, CAPTURE_V4L2_POLL_MS);
	if (r < 0)
		return errno == EINTR ? ERR_AGAIN : lost(s, "poll", errno);
	if (r == 0) {
		log_once(&s->timeout_logged, LOG_WARN, "capture: %s: no frame for %d ms", s->path,
			 CAPTURE_V4L2_POLL_MS);
		return ERR_AGAIN;
	}
	if ((p.revents & (POLLERR | POLLHUP | POLLNVAL)) && !(p.revents & POLLIN)) {
		log_error("capture: %s: the device reports an error (unplugged?)", s->path);
		return ERR_DEVICE;
	}
	struct v4l2_buffer b = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP};
	if (xioctl(s->sys, s->fd, VIDIOC_DQBUF, &b) < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return ERR_AGAIN;
		if (errno == EIO) {
			/* The spec calls EIO temporary (signal loss); only a long run of
			 * them means the camera is gone. */
			if (++s->bad_run >= CAPTURE_V4L2_MAX_BAD)
				return lost(s, "VIDIOC_DQBUF (repeatedly)", EIO);
			log_once(&s->eio_logged, LOG_WARN, "capture: %s: I/O error on a frame: skipped",
				 s->path);
			return ERR_FORMAT;
		}
		return lost(s, "VIDIOC_DQBUF", errno);
	}
	if (b.index >= (uint32_t)s->n_bufs) {
		log_error("capture: %s: driver returned buffer %u of %d", s->path, b.index, s->n_bufs);
		return ERR_DEVICE;
	}
	s->bad_run = 0;
	log_once_reset(&s->timeout_logged, "capture: %s: frames flow again", s->path);
	int e = 0;
	if (b.flags & V4L2_BUF_FLAG_ERROR) {
		log_once(&s->errflag_logged, LOG_WARN, "capture: %s: driver flagged a damaged frame: "
			 "skipped (and later ones, silently)", s->path);
		e = ERR_FORMAT;
	} else {
		size_t used = b.bytesused <= s->bufs[b.index].len ? b.bytesused : s->bufs[b.index].len;
		e = pixfmt_convert(s->conv, s->bufs[b.index].start, used,
				   capture_target(c, &s->frame.img, s->frame.img.width, s->frame.img.height));
		if (e) {
			log_once(&s->short_logged, LOG_WARN, "capture: %s: short or undecodable frame "
				 "(%u bytes): skipped (and later ones, silently)", s->path, b.bytesused);
			e = ERR_FORMAT;
		}
	}
	int64_t ts = 0;
	if ((b.flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) == V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
		ts = (int64_t)b.timestamp.tv_sec * 1000000000LL + (int64_t)b.timestamp.tv_usec * 1000LL;
	/* The pixels are copied out: hand the buffer back at once. */
	if (xioctl(s->sys, s->fd, VIDIOC_QBUF, &b) < 0)
		return lost(s, "VIDIOC_QBUF", errno);
	if (e)
		return e;
	s->frame.t_capture_ns = ts;
	*out = &s->frame;
	return 0;
}

const struct capture_backend capture_backend_v4l2 = {
	.name = "v4l2", .open = v4l2_open_src, .read = v4l2_read_src, .close = v4l2_close_src,
};

/* --------------------------------------------------------------- listing -- */

static void list_intervals(const struct v4l2_sys *sys, int fd, FILE *out, uint32_t pf,
			   uint32_t w, uint32_t h)
{
	struct v4l2_frmivalenum iv = {.pixel_format = pf, .width = w, .height = h};
	if (xioctl(sys, fd, VIDIOC_ENUM_FRAMEINTERVALS, &iv) < 0) {
		fprintf(out, "\n");
		return;
	}
	if (iv.type != V4L2_FRMIVAL_TYPE_DISCRETE) {
		const struct v4l2_fract *a = &iv.stepwise.min, *b = &iv.stepwise.max;
		fprintf(out, " %.3g..%.3g fps\n", b->numerator ? (double)b->denominator / b->numerator : 0,
			a->numerator ? (double)a->denominator / a->numerator : 0);
		return;
	}
	fprintf(out, " fps:");
	for (uint32_t i = 0; i < 64; i++) {
		iv.index = i;
		if (xioctl(sys, fd, VIDIOC_ENUM_FRAMEINTERVALS, &iv) < 0)
			break;
		if (iv.discrete.numerator)
			fprintf(out, " %.4g", (double)iv.discrete.denominator / iv.discrete.numerator);
	}
	fprintf(out, "\n");
}

static void list_formats(const struct v4l2_sys *sys, int fd, FILE *out)
{
	for (uint32_t i = 0; i < V4L2_MAX_FORMATS; i++) {
		struct v4l2_fmtdesc fd_ = {.index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
		if (xioctl(sys, fd, VIDIOC_ENUM_FMT, &fd_) < 0) {
			if (i == 0)
				fprintf(out, "  no pixel formats\n");
			break;
		}
		char nm[5];
		fprintf(out, "  format %s (%.32s)%s%s\n", pixfmt_name(fd_.pixelformat, nm),
			(const char *)fd_.description,
			(fd_.flags & V4L2_FMT_FLAG_EMULATED) ? " [converted by libv4l2]" : "",
			pixfmt_supported(fd_.pixelformat) ? "" : " [not read by tabletrack]");
		for (uint32_t j = 0; j < 256; j++) {
			struct v4l2_frmsizeenum fs = {.index = j, .pixel_format = fd_.pixelformat};
			if (xioctl(sys, fd, VIDIOC_ENUM_FRAMESIZES, &fs) < 0)
				break;
			if (fs.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
				fprintf(out, "    %ux%u", fs.discrete.width, fs.discrete.height);
				list_intervals(sys, fd, out, fd_.pixelformat, fs.discrete.width,
					       fs.discrete.height);
			} else {
				fprintf(out, "    %ux%u..%ux%u step %ux%u", fs.stepwise.min_width,
					fs.stepwise.min_height, fs.stepwise.max_width,
					fs.stepwise.max_height, fs.stepwise.step_width,
					fs.stepwise.step_height);
				list_intervals(sys, fd, out, fd_.pixelformat, fs.stepwise.max_width,
					       fs.stepwise.max_height);
				break;
			}
		}
	}
}

static void list_controls(const struct v4l2_sys *sys, int fd, FILE *out)
{
	struct v4l2_queryctrl q = {.id = V4L2_CTRL_FLAG_NEXT_CTRL};
	int n = 0;
	while (xioctl(sys, fd, VIDIOC_QUERYCTRL, &q) == 0 && n < 512) {
		n++;
		if (q.type != V4L2_CTRL_TYPE_CTRL_CLASS && !(q.flags & V4L2_CTRL_FLAG_DISABLED)) {
			struct v4l2_control c = {.id = q.id};
			bool have = xioctl(sys, fd, VIDIOC_G_CTRL, &c) == 0;
			fprintf(out, "  control %-32.32s %d..%d step %d default %d", (const char *)q.name,
				q.minimum, q.maximum, q.step, q.default_value);
			if (have)
				fprintf(out, " now %d", c.value);
			if (q.flags & V4L2_CTRL_FLAG_INACTIVE)
				fprintf(out, " [inactive]");
			fprintf(out, "\n");
			if (q.type == V4L2_CTRL_TYPE_MENU || q.type == V4L2_CTRL_TYPE_INTEGER_MENU) {
				for (int m = q.minimum; m <= q.maximum && m - q.minimum < 64; m++) {
					struct v4l2_querymenu qm = {.id = q.id, .index = (uint32_t)m};
					if (xioctl(sys, fd, VIDIOC_QUERYMENU, &qm) < 0)
						continue;
					if (q.type == V4L2_CTRL_TYPE_MENU)
						fprintf(out, "      %d: %.32s\n", m, (const char *)qm.name);
					else
						fprintf(out, "      %d: %lld\n", m, (long long)qm.value);
				}
			}
		}
		q.id |= V4L2_CTRL_FLAG_NEXT_CTRL;
	}
}

int capture_v4l2_list_paths(FILE *out, const char *const *paths, int n_paths)
{
	const struct v4l2_sys *sys = atomic_load(&g_sys);
	int n_capture = 0;
	for (int i = 0; i < n_paths; i++) {
		int fd = sys->open(paths[i], O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			int en = errno;
			fprintf(out, "%s: cannot open: %s%s\n", paths[i], strerror(en),
				en == EACCES ? " (is the user in the 'video' group?)" : "");
			continue;
		}
		struct v4l2_capability cap = {0};
		if (xioctl(sys, fd, VIDIOC_QUERYCAP, &cap) < 0) {
			fprintf(out, "%s: not a V4L2 device\n", paths[i]);
			sys->close(fd);
			continue;
		}
		uint32_t caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps
									   : cap.capabilities;
		fprintf(out, "%s: %.32s (driver %.16s, bus %.32s)\n", paths[i], (const char *)cap.card,
			(const char *)cap.driver, (const char *)cap.bus_info);
		if (!(caps & V4L2_CAP_VIDEO_CAPTURE)) {
			fprintf(out, "  not a video capture node (metadata or output): not usable\n");
			sys->close(fd);
			continue;
		}
		n_capture++;
		fprintf(out, "  use it with: source = v4l2:%s\n", paths[i]);
		list_formats(sys, fd, out);
		list_controls(sys, fd, out);
		sys->close(fd);
	}
	return n_capture;
}

int capture_list_cameras(FILE *out)
{
	glob_t g;
	int r = glob("/dev/video*", 0, NULL, &g);
	if (r != 0 || g.gl_pathc == 0) {
		fprintf(out, "no V4L2 cameras: there is no /dev/video* device. Plug a camera in "
			     "(a UVC webcam needs the uvcvideo module), or use source = demo.\n");
		if (r == 0)
			globfree(&g);
		return ERR_DEVICE;
	}
	/* /dev/video10 after /dev/video9. */
	for (size_t i = 1; i < g.gl_pathc; i++)
		for (size_t j = i; j > 0 && strverscmp(g.gl_pathv[j - 1], g.gl_pathv[j]) > 0; j--) {
			char *t = g.gl_pathv[j];
			g.gl_pathv[j] = g.gl_pathv[j - 1];
			g.gl_pathv[j - 1] = t;
		}
	int n = capture_v4l2_list_paths(out, (const char *const *)g.gl_pathv, (int)g.gl_pathc);
	if (n == 0)
		fprintf(out, "no V4L2 capture devices among the %zu /dev/video* nodes above\n",
			g.gl_pathc);
	globfree(&g);
	return n > 0 ? 0 : ERR_DEVICE;
}
