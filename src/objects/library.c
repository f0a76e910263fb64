/* The object library and its file format: see objects.h. */
#include "objects.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/err.h"
#include "../core/file.h"
#include "../core/image.h"
#include "../core/log.h"

struct entry {
	int id;
	char name[OBJECTS_NAME_MAX + 1];
	int width, height;
	int first, n;
};

struct objects_library {
	struct entry *obj;
	int n_obj, cap_obj;
	struct objects_keypoint *kp;
	int n_kp, cap_kp;
};

struct objects_library *objects_library_new(void)
{
	return calloc(1, sizeof(struct objects_library));
}

void objects_library_free(struct objects_library *lib)
{
	if (!lib)
		return;
	free(lib->obj);
	free(lib->kp);
	free(lib);
}

int objects_library_count(const struct objects_library *lib)
{
	return lib ? lib->n_obj : 0;
}

int objects_library_get(const struct objects_library *lib, int i, struct objects_object *out)
{
	if (!lib || i < 0 || i >= lib->n_obj)
		return ERR_RANGE;
	const struct entry *e = &lib->obj[i];
	out->id = e->id;
	memcpy(out->name, e->name, sizeof out->name);
	out->width = e->width;
	out->height = e->height;
	out->n_keypoints = e->n;
	/* No keypoint in the whole library leaves lib->kp NULL, and NULL + 0
	 * is undefined. */
	out->kp = lib->kp ? lib->kp + e->first : NULL;
	return 0;
}

int objects_library_find_id(const struct objects_library *lib, int id)
{
	for (int i = 0; lib && i < lib->n_obj; i++)
		if (lib->obj[i].id == id)
			return i;
	return -1;
}

int objects_library_find_name(const struct objects_library *lib, const char *name)
{
	for (int i = 0; lib && name && i < lib->n_obj; i++)
		if (strcmp(lib->obj[i].name, name) == 0)
			return i;
	return -1;
}

const struct objects_keypoint *objects_library_keypoints(const struct objects_library *lib, int *n_total)
{
	*n_total = lib ? lib->n_kp : 0;
	return lib ? lib->kp : NULL;
}

int objects_library_first(const struct objects_library *lib, int i)
{
	return lib && i >= 0 && i < lib->n_obj ? lib->obj[i].first : 0;
}

int objects_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n < 1 || n > OBJECTS_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-' || c == '.'))
			return 0;
	}
	return 1;
}

/* Why a keypoint breaks the format's rules, or NULL. */
static const char *keypoint_problem(const struct objects_keypoint *k, int width, int height)
{
	if (!isfinite(k->x) || !isfinite(k->y) || k->x < -0.5f || k->y < -0.5f || k->x > (float)width - 0.5f ||
	    k->y > (float)height - 0.5f)
		return "position outside the object's picture";
	if (!isfinite(k->size) || !(k->size > 0.0f) || k->size > 4.0f * IMAGE_MAX_SIDE)
		return "size out of range";
	if (!isfinite(k->angle_deg) || k->angle_deg < 0.0f || k->angle_deg >= 360.0f)
		return "angle outside 0..360";
	if (!isfinite(k->response) || k->response < 0.0f)
		return "response negative or not finite";
	return NULL;
}

static int grow(void **p, int *cap, int need, size_t elem, int limit)
{
	if (need <= *cap)
		return 0;
	if (need > limit)
		return ERR_RANGE;
	int c = *cap ? *cap : 16;
	while (c < need)
		c = c > limit / 2 ? limit : c * 2;
	void *q = realloc(*p, (size_t)c * elem);
	if (!q)
		return ERR_NOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int add_checked(struct objects_library *lib, int id, const char *name, int width, int height, int n_kp)
{
	if (id < 0 || id > OBJECTS_MAX_ID || width < 1 || height < 1 || width > IMAGE_MAX_SIDE ||
	    height > IMAGE_MAX_SIDE || n_kp < 0 || n_kp > OBJECTS_MAX_KEYPOINTS)
		return ERR_RANGE;
	if (!objects_name_valid(name))
		return ERR_FORMAT;
	if (objects_library_find_id(lib, id) >= 0 || objects_library_find_name(lib, name) >= 0)
		return ERR_RANGE;
	if (lib->n_kp + n_kp > OBJECTS_MAX_TOTAL)
		return ERR_RANGE;
	int err = grow((void **)&lib->obj, &lib->cap_obj, lib->n_obj + 1, sizeof *lib->obj, OBJECTS_MAX_OBJECTS);
	if (err)
		return err;
	struct entry *e = &lib->obj[lib->n_obj++];
	memset(e, 0, sizeof *e);
	e->id = id;
	snprintf(e->name, sizeof e->name, "%s", name);
	e->width = width;
	e->height = height;
	e->first = lib->n_kp;
	e->n = 0;
	return 0;
}

int objects_library_add(struct objects_library *lib, int id, const char *name, int width, int height,
			const struct objects_keypoint *kp, int n_kp)
{
	if (!lib || (n_kp > 0 && !kp))
		return ERR_RANGE;
	for (int i = 0; i < n_kp; i++)
		if (keypoint_problem(&kp[i], width, height))
			return ERR_FORMAT;
	int err = add_checked(lib, id, name, width, height, n_kp);
	if (err)
		return err;
	if ((err = grow((void **)&lib->kp, &lib->cap_kp, lib->n_kp + n_kp, sizeof *lib->kp, OBJECTS_MAX_TOTAL))) {
		lib->n_obj--;
		return err;
	}
	if (n_kp > 0)
		memcpy(lib->kp + lib->n_kp, kp, (size_t)n_kp * sizeof *kp);
	lib->n_kp += n_kp;
	lib->obj[lib->n_obj - 1].n = n_kp;
	return 0;
}

int objects_library_remove(struct objects_library *lib, int i)
{
	if (!lib || i < 0 || i >= lib->n_obj)
		return ERR_RANGE;
	struct entry e = lib->obj[i];
	if (lib->kp)
		memmove(lib->kp + e.first, lib->kp + e.first + e.n,
			(size_t)(lib->n_kp - e.first - e.n) * sizeof *lib->kp);
	lib->n_kp -= e.n;
	memmove(lib->obj + i, lib->obj + i + 1, (size_t)(lib->n_obj - i - 1) * sizeof *lib->obj);
	lib->n_obj--;
	for (int j = i; j < lib->n_obj; j++)
		lib->obj[j].first -= e.n;
	return 0;
}

/* ---- parsing ----------------------------------------------------------------------------- */

struct parser {
	const char *name;
	int line;
};

static int fail(const struct parser *p, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(const struct parser *p, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	log_error("%s:%d: %s", p->name, p->line, msg);
	return err;
}

/* Splits a line into at most `cap` space- or tab-separated fields in place. */
static int split(char *s, char **field, int cap)
{
	int n = 0;
	while (*s) {
		while (*s == ' ' || *s == '\t')
			*s++ = 0;
		if (!*s)
			break;
		if (n == cap)
			return cap + 1;
		field[n++] = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
	}
	return n;
}

static bool parse_int(const char *s, long lo, long hi, int *out)
{
	if (!s || !*s || (*s != '-' && (*s < '0' || *s > '9')))
		return false;
	errno = 0;
	char *end;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

static bool parse_float(const char *s, float *out)
{
	if (!s || !*s)
		return false;
	/* Only plain decimal numbers: strtof also takes nan, inf and hex. */
	for (const char *c = s; *c; c++)
		if (!((*c >= '0' && *c <= '9') || *c == '.' || *c == '-' || *c == '+' || *c == 'e' || *c == 'E'))
			return false;
	errno = 0;
	char *end;
	float v = strtof(s, &end);
	if (errno || *end || !isfinite(v))
		return false;
	*out = v;
	return true;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_keypoint(const struct parser *p, char **f, int nf, const struct entry *e,
			  struct objects_keypoint *k)
{
	if (nf != 7)
		return fail(p, ERR_FORMAT, "k: %d fields, want 7 (k X Y SIZE ANGLE RESPONSE HEX)", nf);
	float *dst[5] = {&k->x, &k->y, &k->size, &k->angle_deg, &k->response};
	static const char *const what[5] = {"X", "Y", "SIZE", "ANGLE", "RESPONSE"};
	for (int i = 0; i < 5; i++)
		if (!parse_float(f[1 + i], dst[i]))
			return fail(p, ERR_FORMAT, "k: %s is not a number", what[i]);
	size_t hl = strlen(f[6]);
	if (hl != 2 * OBJECTS_DESC_LEN)
		return fail(p, ERR_FORMAT, "k: %zu hex digits, want %d", hl, 2 * OBJECTS_DESC_LEN);
	for (int i = 0; i < OBJECTS_DESC_LEN; i++) {
		int hi = hex_digit(f[6][2 * i]), lo = hex_digit(f[6][2 * i + 1]);
		if (hi < 0 || lo < 0)
			return fail(p, ERR_FORMAT, "k: descriptor: '%c%c' at digit %d is not hex", f[6][2 * i],
				    f[6][2 * i + 1], 2 * i + 1);
		k->desc[i] = (uint8_t)(hi << 4 | lo);
	}
	const char *why = keypoint_problem(k, e->width, e->height);
	if (why)
		return fail(p, ERR_RANGE, "k: %s (picture %dx%d)", why, e->width, e->height);
	return 0;
}

static int parse_object(struct objects_library *lib, const struct parser *p, char **f, int nf, int *expect)
{
	if (nf != 6)
		return fail(p, ERR_FORMAT, "object: %d fields, want 6 (object ID WIDTH HEIGHT N NAME)", nf);
	int id, w, h, n;
	if (!parse_int(f[1], 0, OBJECTS_MAX_ID, &id))
		return fail(p, ERR_RANGE, "object: ID '%.32s' is not a number in 0..%d", f[1], OBJECTS_MAX_ID);
	if (!parse_int(f[2], 1, IMAGE_MAX_SIDE, &w) || !parse_int(f[3], 1, IMAGE_MAX_SIDE, &h))
		return fail(p, ERR_RANGE, "object %d: size '%.16s x %.16s' is not 1..%d x 1..%d", id, f[2], f[3],
			    IMAGE_MAX_SIDE, IMAGE_MAX_SIDE);
	if (!parse_int(f[4], 0, OBJECTS_MAX_KEYPOINTS, &n))
		return fail(p, ERR_RANGE, "object %d: keypoint count '%.16s' is not 0..%d", id, f[4],
			    OBJECTS_MAX_KEYPOINTS);
	if (!objects_name_valid(f[5]))
		return fail(p, ERR_FORMAT, "object %d: name '%.80s' is not 1..%d characters of A-Z a-z 0-9 _ . -", id,
			    f[5], OBJECTS_NAME_MAX);
	if (objects_library_find_id(lib, id) >= 0)
		return fail(p, ERR_RANGE, "object %d: ID used twice", id);
	if (objects_library_find_name(lib, f[5]) >= 0)
		return fail(p, ERR_RANGE, "object %d: name '%s' used twice", id, f[5]);
	if (lib->n_obj >= OBJECTS_MAX_OBJECTS)
		return fail(p, ERR_RANGE, "more than %d objects", OBJECTS_MAX_OBJECTS);
	if (lib->n_kp + n > OBJECTS_MAX_TOTAL)
		return fail(p, ERR_RANGE, "object %d: more than %d keypoints in all", id, OBJECTS_MAX_TOTAL);
	int err = add_checked(lib, id, f[5], w, h, n);
	if (err)
		return fail(p, err, "object %d: %s", id, err_str(err));
	*expect = n;
	return 0;
}

int objects_library_parse(const char *text, size_t len, const char *name, struct objects_library **out)
{
	*out = NULL;
	struct parser p = {.name = name ? name : "(library)", .line = 0};
	if (len > OBJECTS_MAX_FILE)
		return fail(&p, ERR_RANGE, "%zu bytes, more than the %u a library may have", len, OBJECTS_MAX_FILE);
	struct objects_library *lib = objects_library_new();
	if (!lib)
		return ERR_NOMEM;
	int err = 0;
	bool seen_magic = false;
	int expect = 0; /* "k" lines still owed to the last object */
	char buf[OBJECTS_MAX_LINE + 1];
	size_t pos = 0;
	while (pos < len) {
		p.line++;
		size_t end = pos;
		while (end < len && text[end] != '\n')
			end++;
		size_t n = end - pos;
		if (n > 0 && text[end - 1] == '\r')
			n--;
		if (n > OBJECTS_MAX_LINE) {
			err = fail(&p, ERR_FORMAT, "line longer than %d bytes", OBJECTS_MAX_LINE);
			goto fail;
		}
		if (memchr(text + pos, 0, n)) {
			err = fail(&p, ERR_FORMAT, "NUL byte in the line");
			goto fail;
		}
		memcpy(buf, text + pos, n);
		buf[n] = 0;
		pos = end + 1;
		char *f[8];
		int nf = split(buf, f, 7);
		if (nf == 0 || f[0][0] == '#')
			continue;
		if (!seen_magic) {
			int v;
			if (strcmp(f[0], OBJECTS_MAGIC) != 0) {
				err = fail(&p, ERR_FORMAT, "not an object library: the first record must be '%s %d'",
					   OBJECTS_MAGIC, OBJECTS_FORMAT_VERSION);
				goto fail;
			}
			if (nf != 2 || !parse_int(f[1], 1, 1000000, &v)) {
				err = fail(&p, ERR_FORMAT, "%s: want one version number", OBJECTS_MAGIC);
				goto fail;
			}
			if (v > OBJECTS_FORMAT_VERSION) {
				err = fail(&p, ERR_FORMAT, "version %d is newer than this build reads (%d)", v,
					   OBJECTS_FORMAT_VERSION);
				goto fail;
			}
			seen_magic = true;
		} else if (strcmp(f[0], "object") == 0) {
			if (expect > 0) {
				err = fail(&p, ERR_FORMAT, "object: the previous object still owes %d k lines", expect);
				goto fail;
			}
			if ((err = parse_object(lib, &p, f, nf, &expect)))
				goto fail;
		} else if (strcmp(f[0], "k") == 0) {
			if (expect == 0) {
				err = fail(&p, ERR_FORMAT, lib->n_obj ? "k: more keypoints than the object declared"
								     : "k: no object line before it");
				goto fail;
			}
			struct entry *e = &lib->obj[lib->n_obj - 1];
			if ((err = grow((void **)&lib->kp, &lib->cap_kp, lib->n_kp + 1, sizeof *lib->kp,
					OBJECTS_MAX_TOTAL))) {
				fail(&p, err, "k: %s", err_str(err));
				goto fail;
			}
			if ((err = parse_keypoint(&p, f, nf, e, &lib->kp[lib->n_kp])))
				goto fail;
			lib->n_kp++;
			e->n++;
			expect--;
		} else {
			err = fail(&p, ERR_FORMAT, "unknown record '%.32s' (want object or k)", f[0]);
			goto fail;
		}
	}
	if (!seen_magic) {
		p.line = p.line ? p.line : 1;
		err = fail(&p, ERR_FORMAT, "empty: no '%s %d' line", OBJECTS_MAGIC, OBJECTS_FORMAT_VERSION);
		goto fail;
	}
	if (expect > 0) {
		err = fail(&p, ERR_FORMAT, "ends with %d k lines of the last object missing", expect);
		goto fail;
	}
	*out = lib;
	return 0;
fail:
	objects_library_free(lib);
	return err;
}

int objects_library_load(const char *path, struct objects_library **out)
{
	*out = NULL;
	FILE *f = NULL;
	const char *why = "";
	if (file_open_regular(path, &f, &why)) {
		log_error("%s: cannot open: %s", path, why);
		return ERR_IO;
	}
	char *text = NULL;
	size_t len = 0, cap = 0;
	int err = 0;
	for (;;) {
		if (len == cap) {
			if (cap > OBJECTS_MAX_FILE) {
				log_error("%s: larger than the %u bytes a library may have", path, OBJECTS_MAX_FILE);
				err = ERR_RANGE;
				goto done;
			}
			size_t c = cap ? cap * 2 : 65536;
			char *t = realloc(text, c + 1);
			if (!t) {
				err = ERR_NOMEM;
				goto done;
			}
			text = t;
			cap = c;
		}
		size_t got = fread(text + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				log_error("%s: read failed: %s", path, strerror(errno));
				err = ERR_IO;
				goto done;
			}
			break;
		}
	}
	err = objects_library_parse(text, len, path, out);
done:
	free(text);
	fclose(f);
	return err;
}

int objects_library_save(const struct objects_library *lib, const char *path)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp) {
		log_error("%s: path too long", path);
		return ERR_IO;
	}
	FILE *f = fopen(tmp, "w");
	if (!f) {
		log_error("%s: cannot write: %s", tmp, strerror(errno));
		return ERR_IO;
	}
	fprintf(f, "%s %d\n", OBJECTS_MAGIC, OBJECTS_FORMAT_VERSION);
	fprintf(f, "# tabletrack object library: object ID WIDTH HEIGHT N NAME, then N lines\n"
		   "# k X Y SIZE ANGLE RESPONSE DESCRIPTOR(hex); see src/objects/objects.h\n");
	for (int i = 0; lib && i < lib->n_obj; i++) {
		const struct entry *e = &lib->obj[i];
		fprintf(f, "object %d %d %d %d %s\n", e->id, e->width, e->height, e->n, e->name);
		for (int j = 0; j < e->n; j++) {
			const struct objects_keypoint *k = &lib->kp[e->first + j];
			char hex[2 * OBJECTS_DESC_LEN + 1];
			for (int b = 0; b < OBJECTS_DESC_LEN; b++)
				snprintf(hex + 2 * b, 3, "%02x", k->desc[b]);
			fprintf(f, "k %.9g %.9g %.9g %.9g %.9g %s\n", (double)k->x, (double)k->y, (double)k->size,
				(double)k->angle_deg, (double)k->response, hex);
		}
	}
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		log_error("%s: write failed: %s", tmp, strerror(errno));
		unlink(tmp);
		return ERR_IO;
	}
	if (rename(tmp, path) != 0) {
		log_error("%s: cannot replace: %s", path, strerror(errno));
		unlink(tmp);
		return ERR_IO;
	}
	return 0;
}
