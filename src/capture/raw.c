/* raw:WxH[:FPS][@PATH] - raw GRAY8 frames from standard input or a FIFO. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/err.h"
#include "../core/log.h"
#include "capture_backend.h"

struct raw_src {
	int fd;
	bool own_fd;
	size_t frame_bytes;
	uint8_t *buf;
	struct frame frame;
	char path[512];
};

static void raw_close(struct capture *c)
{
	struct raw_src *s = c->priv;
	if (!s)
		return;
	if (s->own_fd && s->fd >= 0)
		close(s->fd);
	free(s->buf);
	free(s);
	c->priv = NULL;
}

static int raw_parse(const char *arg, int *w, int *h, int *fps, const char **path)
{
	char *end;
	*fps = 0;
	*path = NULL;
	long lw = strtol(arg, &end, 10);
	if (end == arg || (*end != 'x' && *end != 'X'))
		return ERR_CONFIG;
	const char *p = end + 1;
	long lh = strtol(p, &end, 10);
	if (end == p)
		return ERR_CONFIG;
	if (*end == ':') {
		p = end + 1;
		long lf = strtol(p, &end, 10);
		if (end == p || lf < 1 || lf > 1000)
			return ERR_CONFIG;
		*fps = (int)lf;
	}
	if (*end == '@') {
		if (!end[1])
			return ERR_CONFIG;
		*path = end + 1;
	} else if (*end) {
		return ERR_CONFIG;
	}
	if (lw < 1 || lh < 1 || lw > IMAGE_MAX_SIDE || lh > IMAGE_MAX_SIDE)
		return ERR_RANGE;
	*w = (int)lw;
	*h = (int)lh;
	return 0;
}

static int raw_open(struct capture *c, const char *arg)
{
	int w, h, fps;
	const char *path;
	int e = raw_parse(arg, &w, &h, &fps, &path);
	if (e) {
		log_error("capture: raw:%s: want raw:WxH[:FPS][@PATH] with sides 1..%d", arg,
			  IMAGE_MAX_SIDE);
		return e == ERR_RANGE ? ERR_RANGE : ERR_CONFIG;
	}
	struct raw_src *s = calloc(1, sizeof *s);
	if (!s)
		return ERR_NOMEM;
	c->priv = s;
	s->fd = STDIN_FILENO;
	s->frame_bytes = (size_t)w * (size_t)h;
	s->buf = malloc(s->frame_bytes);
	if (!s->buf) {
		raw_close(c);
		return ERR_NOMEM;
	}
	/* The frame is a view with stride = width: the bytes arrive packed. */
	s->frame.img = (struct image_u8){.width = w, .height = h, .stride = w, .data = s->buf};
	snprintf(s->path, sizeof s->path, "%s", path ? path : "stdin");
	if (path) {
		/* O_NONBLOCK: a FIFO without a writer yet must not block open();
		 * reads wait in poll(), where a shutdown can end them. */
		s->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (s->fd < 0) {
			log_error("capture: raw: %s: %s", path, strerror(errno));
			raw_close(c);
			return ERR_IO;
		}
		s->own_fd = true;
	}
	snprintf(s->frame.name, sizeof s->frame.name, "%.63s", s->path);
	c->finite = true;
	c->fps = fps;
	snprintf(c->desc, sizeof c->desc, "raw %dx%d GRAY8 from %s (%d fps)", w, h, s->path, fps);
	return 0;
}

#define RAW_POLL_MS 100

/* Reads n bytes; returns how many came before the end of the stream, -1 on
 * a read error (errno set), or -2 when the capture was interrupted while
 * waiting (a shutdown: the frame is lost, nothing more is read). Waits in
 * poll() a slice at a time, so neither a silent writer nor a signal that
 * only interrupts a system call can keep it waiting past a shutdown. */
static ssize_t read_full(const struct capture *c, int fd, uint8_t *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int pr = poll(&pfd, 1, RAW_POLL_MS);
		if (pr < 0 && errno != EINTR)
			return -1;
		if (capture_interrupted(c))
			return -2;
		if (pr <= 0)
			continue;
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static int raw_read(struct capture *c, struct frame **out)
{
	struct raw_src *s = c->priv;
	struct image_u8 *img = capture_target(c, &s->frame.img, s->frame.img.width, s->frame.img.height);
	size_t row = (size_t)img->width, got = 0;
	/* Packed rows arrive in one read; a wider buffer takes them row by row. */
	size_t chunk = img->stride == img->width ? s->frame_bytes : row;
	for (int y = 0; got < s->frame_bytes; y += (int)(chunk / row)) {
		ssize_t n = read_full(c, s->fd, image_u8_row(img, y), chunk);
		if (n == -2) {
			log_debug("capture: raw %s: stopped while waiting for a frame", s->path);
			return ERR_EOF;
		}
		if (n < 0) {
			/* Nothing else will come from a broken pipe: end the source. */
			log_error("capture: raw %s: %s", s->path, strerror(errno));
			return ERR_EOF;
		}
		got += (size_t)n;
		if ((size_t)n < chunk)
			break;
	}
	if (got < s->frame_bytes) {
		if (got)
			log_warn("capture: raw %s: %zu bytes at the end, less than a frame of %zu: "
				 "dropped",
				 s->path, got, s->frame_bytes);
		return ERR_EOF;
	}
	s->frame.t_capture_ns = 0;
	*out = &s->frame;
	return 0;
}

const struct capture_backend capture_backend_raw = {
	.name = "raw", .open = raw_open, .read = raw_read, .close = raw_close,
};
