/* folder:DIR and file:IMG sources. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/err.h"
#include "../core/image_io.h"
#include "../core/log.h"
#include "capture_backend.h"

/* Scanning stops here so a mistaken DIR (a whole disk) cannot eat memory. */
#define FOLDER_MAX_NAMES 1000000

static bool is_image_name(const char *name)
{
	size_t n = strlen(name);
	return n > 4 && (strcasecmp(name + n - 4, ".pgm") == 0 || strcasecmp(name + n - 4, ".png") == 0);
}

static void frame_set_name(struct frame *f, const char *name)
{
	size_t n = strlen(name);
	/* Keep the end of a long name: it holds the frame number. */
	if (n >= sizeof f->name)
		name += n - (sizeof f->name - 1);
	snprintf(f->name, sizeof f->name, "%s", name);
}

/* ---------------------------------------------------------------- folder -- */

struct folder {
	char *arena;      /* all names, NUL-separated */
	size_t arena_len, arena_cap;
	size_t *offs;     /* name i starts at arena + offs[i] */
	size_t n, cap;
	size_t next;      /* index of the next file to read */
	size_t good_in_pass;
	struct frame frame;
	uint8_t *file;    /* the last header or non-PGM file read, kept for the next */
	size_t file_cap;
	int first_w, first_h;
	bool size_logged;
	char path[4096 + 512];
	char dir[4096];
};

static int cmp_names(const void *a, const void *b, void *arena)
{
	return strcmp((const char *)arena + *(const size_t *)a, (const char *)arena + *(const size_t *)b);
}

static int folder_add(struct folder *s, const char *name)
{
	size_t len = strlen(name) + 1;
	if (s->arena_len + len > s->arena_cap) {
		size_t cap = s->arena_cap ? s->arena_cap * 2 : 65536;
		while (cap < s->arena_len + len)
			cap *= 2;
		char *a = realloc(s->arena, cap);
		if (!a)
			return ERR_NOMEM;
		s->arena = a;
		s->arena_cap = cap;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		size_t *o = realloc(s->offs, cap * sizeof *o);
		if (!o)
			return ERR_NOMEM;
		s->offs = o;
		s->cap = cap;
	}
	memcpy(s->arena + s->arena_len, name, len);
	s->offs[s->n++] = s->arena_len;
	s->arena_len += len;
	return 0;
}

static void folder_close(struct capture *c)
{
	struct folder *s = c->priv;
	if (!s)
		return;
	image_u8_free(&s->frame.img);
	free(s->file);
	free(s->arena);
	free(s->offs);
	free(s);
	c->priv = NULL;
}

static int folder_open(struct capture *c, const char *arg)
{
	int e = 0;
	DIR *d = NULL;
	struct folder *s = calloc(1, sizeof *s);
	if (!s)
		return ERR_NOMEM;
	c->priv = s;
	if (!arg[0] || strlen(arg) >= sizeof s->dir) {
		log_error("capture: folder: want folder:DIR");
		e = ERR_CONFIG;
		goto fail;
	}
	memcpy(s->dir, arg, strlen(arg) + 1);
	d = opendir(arg);
	if (!d) {
		log_error("capture: folder %s: %s", arg, strerror(errno));
		e = ERR_IO;
		goto fail;
	}
	struct dirent *de;
	int skipped = 0;
	while ((de = readdir(d)) != NULL) {
		if (!is_image_name(de->d_name))
			continue;
		/* A FIFO or device named like an image would block or never end
		 * a read: only regular files (or links to them) are frames. */
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, 0) != 0 || !S_ISREG(st.st_mode)) {
			if (skipped++ == 0)
				log_warn("capture: folder %s: %s is not a regular file: skipped (and any other, silently)",
					 arg, de->d_name);
			continue;
		}
		if (s->n >= FOLDER_MAX_NAMES) {
			log_warn("capture: folder %s: more than %d images; the rest are ignored", arg,
				 FOLDER_MAX_NAMES);
			break;
		}
		e = folder_add(s, de->d_name);
		if (e)
			goto fail;
	}
	closedir(d);
	d = NULL;
	if (s->n == 0) {
		log_error("capture: folder %s: no *.pgm or *.png files", arg);
		e = ERR_IO;
		goto fail;
	}
	qsort_r(s->offs, s->n, sizeof *s->offs, cmp_names, s->arena);
	c->finite = !c->cfg.loop;
	c->replay = true;
	snprintf(c->desc, sizeof c->desc, "folder %s (%zu images%s)", arg, s->n,
		 c->cfg.loop ? ", looping" : "");
	return 0;
fail:
	if (d)
		closedir(d);
	folder_close(c);
	return e;
}

/* A plain PGM's header is read first, in this many bytes (a longer one,
 * comments and all, is read whole and decoded instead). */
#define FOLDER_HEAD_BYTES 4096

static int grow_file_buf(struct folder *s, size_t want)
{
	if (s->file && s->file_cap >= (want ? want : 1))
		return 0;
	uint8_t *nb = realloc(s->file, want ? want : 1);
	if (!nb)
		return ERR_NOMEM;
	s->file = nb;
	s->file_cap = want ? want : 1;
	return 0;
}

/* A plain PGM's w x h samples at offset off of fd, straight into the
 * frame's target (the ring slot, or the source's own image). */
static int read_samples(struct capture *c, struct folder *s, int fd, int w, int h, size_t off)
{
	struct image_u8 *dst = capture_target(c, &s->frame.img, w, h);
	if (dst == &s->frame.img && (dst->width != w || dst->height != h)) {
		image_u8_free(dst);
		if (image_u8_alloc(dst, w, h))
			return ERR_NOMEM;
	}
	const size_t row = (size_t)w;
	for (int y = 0; y < h;) {
		/* Contiguous rows in one read; rows of a padded stride one by one. */
		const int rows = dst->stride == w ? h : 1;
		size_t got = 0;
		int e = image_file_pread(fd, s->path, image_u8_row(dst, y), row * (size_t)rows, off + row * (size_t)y, &got);
		if (e)
			return e;
		if (got < row * (size_t)rows) {
			log_error("image: %s: shorter than its header says (changed while read?)", s->path);
			return ERR_FORMAT;
		}
		y += rows;
	}
	return 0;
}

static int folder_read(struct capture *c, struct frame **out)
{
	struct folder *s = c->priv;
	if (s->next >= s->n) {
		/* A pass without one good frame would loop on errors forever. */
		if (!c->cfg.loop || s->good_in_pass == 0)
			return ERR_EOF;
		s->next = 0;
		s->good_in_pass = 0;
	}
	const char *name = s->arena + s->offs[s->next++];
	snprintf(s->path, sizeof s->path, "%s/%s", s->dir, name);
	/* A plain PGM (maxval 255): its header into a buffer kept from frame
	 * to frame, its samples read straight into the ring slot (one copy, from
	 * the page cache). Anything else: the whole file into that buffer,
	 * decoded into an image of its own and copied from there. */
	size_t size = 0, len = 0;
	int fd = image_file_open(s->path, &size);
	if (fd < 0)
		return ERR_FORMAT; /* logged with the file and the reason */
	int e = grow_file_buf(s, size < FOLDER_HEAD_BYTES ? size : FOLDER_HEAD_BYTES);
	if (!e)
		e = image_file_pread(fd, s->path, s->file, size < FOLDER_HEAD_BYTES ? size : FOLDER_HEAD_BYTES, 0, &len);
	int w = 0, h = 0;
	size_t off = 0;
	const bool plain = !e && image_pgm_header(s->file, len, size, &w, &h, &off) == 0;
	struct image_u8 img = {0};
	if (!e && !plain) {
		if ((e = grow_file_buf(s, size)) == 0 && (e = image_file_pread(fd, s->path, s->file, size, 0, &len)) == 0 &&
		    image_read_mem(s->file, len, s->path, &img) != 0)
			e = ERR_FORMAT;
		w = img.width;
		h = img.height;
	}
	if (!e && !s->first_w) {
		s->first_w = w;
		s->first_h = h;
	} else if (!e && (w != s->first_w || h != s->first_h)) {
		if (!s->size_logged)
			log_warn("capture: %s is %dx%d, not %dx%d like the first frame: skipped "
				 "(and any other such frame, silently)",
				 s->path, w, h, s->first_w, s->first_h);
		s->size_logged = true;
		e = ERR_FORMAT;
	}
	if (!e && plain)
		e = read_samples(c, s, fd, w, h, off);
	close(fd);
	if (e) {
		image_u8_free(&img);
		return e == ERR_NOMEM ? e : ERR_FORMAT;
	}
	if (!plain) {
		image_u8_free(&s->frame.img);
		s->frame.img = img;
	}
	s->frame.t_capture_ns = 0;
	frame_set_name(&s->frame, name);
	s->good_in_pass++;
	*out = &s->frame;
	return 0;
}

const struct capture_backend capture_backend_folder = {
	.name = "folder", .open = folder_open, .read = folder_read, .close = folder_close,
};

/* ------------------------------------------------------------------ file -- */

struct file_src {
	struct frame frame;
	bool delivered;
};

static void file_close(struct capture *c)
{
	struct file_src *s = c->priv;
	if (!s)
		return;
	image_u8_free(&s->frame.img);
	free(s);
	c->priv = NULL;
}

static int file_open(struct capture *c, const char *arg)
{
	struct file_src *s = calloc(1, sizeof *s);
	if (!s)
		return ERR_NOMEM;
	c->priv = s;
	if (!arg[0]) {
		log_error("capture: file: want file:IMG");
		file_close(c);
		return ERR_CONFIG;
	}
	int e = image_read(arg, &s->frame.img);
	if (e) {
		file_close(c);
		return e;
	}
	const char *base = strrchr(arg, '/');
	frame_set_name(&s->frame, base ? base + 1 : arg);
	c->finite = !c->cfg.loop;
	c->replay = true;
	snprintf(c->desc, sizeof c->desc, "file %s (%dx%d%s)", arg, s->frame.img.width,
		 s->frame.img.height, c->cfg.loop ? ", repeated" : "");
	return 0;
}

static int file_read(struct capture *c, struct frame **out)
{
	struct file_src *s = c->priv;
	if (s->delivered && !c->cfg.loop)
		return ERR_EOF;
	s->delivered = true;
	s->frame.t_capture_ns = 0;
	*out = &s->frame;
	return 0;
}

const struct capture_backend capture_backend_file = {
	.name = "file", .open = file_open, .read = file_read, .close = file_close,
};
