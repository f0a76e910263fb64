/* faulty:KEY=N[:KEY=N...]:INNER - injects faults into another source on a
 * schedule, so the daemon's recovery paths can be tested without hardware. */
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/err.h"
#include "../core/log.h"
#include "capture_backend.h"

struct faulty {
	struct capture *inner;
	long every, again, lose, eof, delay_ms, noise;
	uint64_t n_reads, n_frames;
	bool lost;
	struct frame noisy; /* the noise frame, sized like the inner frames */
};

/* Opens of one spec are counted across the process so that a source
 * reopened by the pipeline's back-off sees the schedule go on; a different
 * spec starts a new count. Only the capture thread opens sources. */
static char g_spec[sizeof ((struct capture_config *)0)->source];
static long g_opens;

static void faulty_close(struct capture *c)
{
	struct faulty *s = c->priv;
	if (!s)
		return;
	capture_close(s->inner);
	image_u8_free(&s->noisy.img);
	free(s);
	c->priv = NULL;
}

static int faulty_open(struct capture *c, const char *arg)
{
	struct faulty *s = calloc(1, sizeof *s);
	if (!s)
		return ERR_NOMEM;
	c->priv = s;
	long openfail = 0;
	const struct {
		const char *key;
		long *val;
	} keys[] = {{"every", &s->every}, {"again", &s->again}, {"lose", &s->lose},
		    {"eof", &s->eof},     {"delay", &s->delay_ms}, {"noise", &s->noise},
		    {"openfail", &openfail}};
	const char *p = arg;
	for (;;) {
		const char *eq = strchr(p, '=');
		const char *colon = strchr(p, ':');
		if (!eq || !colon || eq > colon)
			break;
		size_t klen = (size_t)(eq - p);
		long *val = NULL;
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
			if (strlen(keys[i].key) == klen && strncmp(p, keys[i].key, klen) == 0)
				val = keys[i].val;
		char *end;
		long v = strtol(eq + 1, &end, 10);
		if (!val || end != colon || v < 0) {
			log_error("capture: faulty:%s: bad option '%.*s' (keys: every again lose eof "
				  "delay noise openfail, values >= 0)",
				  arg, (int)(colon - p), p);
			faulty_close(c);
			return ERR_CONFIG;
		}
		*val = v;
		p = colon + 1;
	}
	if (!*p) {
		log_error("capture: faulty:%s: no inner source (e.g. faulty:every=5:demo)", arg);
		faulty_close(c);
		return ERR_CONFIG;
	}
	if (strcmp(g_spec, arg) != 0) {
		snprintf(g_spec, sizeof g_spec, "%s", arg);
		g_opens = 0;
	}
	if (g_opens++ < openfail) {
		log_error("capture: faulty: open refused as scheduled (openfail=%ld)", openfail);
		faulty_close(c);
		return ERR_DEVICE;
	}
	struct capture_config inner = c->cfg;
	snprintf(inner.source, sizeof inner.source, "%s", p);
	int e = 0;
	s->inner = capture_open(&inner, &e);
	if (!s->inner) {
		faulty_close(c);
		return e;
	}
	c->finite = capture_is_finite(s->inner) || s->eof > 0;
	c->fps = capture_fps(s->inner);
	snprintf(c->desc, sizeof c->desc, "faulty (%.*s) over %s", (int)(p - arg > 0 ? p - arg - 1 : 0),
		 arg, capture_describe(s->inner));
	return 0;
}

static int faulty_read(struct capture *c, struct frame **out)
{
	struct faulty *s = c->priv;
	if (s->delay_ms)
		clock_sleep_ns(s->delay_ms * 1000000LL);
	s->n_reads++;
	if (s->lost || (s->lose && s->n_reads >= (uint64_t)s->lose)) {
		s->lost = true;
		return ERR_DEVICE;
	}
	if (s->again && s->n_reads % (uint64_t)s->again == 0)
		return ERR_AGAIN;
	if (s->eof && s->n_frames >= (uint64_t)s->eof)
		return ERR_EOF;
	struct frame *f = NULL;
	int e = capture_read(s->inner, &f);
	if (e)
		return e;
	s->n_frames++;
	if (s->every && s->n_frames % (uint64_t)s->every == 0)
		return ERR_FORMAT;
	if (s->noise && s->n_frames % (uint64_t)s->noise == 0) {
		if (s->noisy.img.width != f->img.width || s->noisy.img.height != f->img.height) {
			image_u8_free(&s->noisy.img);
			e = image_u8_alloc(&s->noisy.img, f->img.width, f->img.height);
			if (e)
				return e;
		}
		uint32_t x = (uint32_t)s->n_frames * 2654435761u + 1;
		for (int y = 0; y < f->img.height; y++) {
			uint8_t *row = image_u8_row(&s->noisy.img, y);
			for (int i = 0; i < f->img.width; i++) {
				x ^= x << 13;
				x ^= x >> 17;
				x ^= x << 5;
				row[i] = (uint8_t)x;
			}
		}
		frame_meta_copy(&s->noisy, f);
		f = &s->noisy;
	}
	*out = f;
	return 0;
}

static int faulty_truth(const struct capture *c, struct capture_truth *out, int cap)
{
	const struct faulty *s = c->priv;
	return capture_truth(s->inner, out, cap);
}

const struct capture_backend capture_backend_faulty = {
	.name = "faulty", .open = faulty_open, .read = faulty_read, .close = faulty_close,
	.truth = faulty_truth,
};
