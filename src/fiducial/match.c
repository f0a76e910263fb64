#include "match_int.h"

#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "../core/log.h"
#include "classify.h"

static int config_apply(struct match *m, const struct match_config *cfg)
{
	if (!cfg->trees || tree_set_count(cfg->trees) < 1) {
		log_error("match: no tree set");
		return ERR_CONFIG;
	}
	/* The engine sets a pass's matcher's options several times a frame
	 * (dot vetoes, even leaves, the frame's gate); the tables depend on
	 * the set alone, and deriving them is 0.3 M instructions a 1080p
	 * frame. */
	const uint64_t serial = tree_set_serial(cfg->trees);
	if (serial == m->tables_serial) {
		m->cfg = *cfg;
		return 0;
	}
	memset(m->valid, 0, sizeof m->valid);
	memset(m->fuzzy_ok, 0, sizeof m->fuzzy_ok);
	memset(m->over, 0, sizeof m->over);
	for (int i = 0; i < tree_set_count(cfg->trees); i++) {
		int d = 0, n = 0;
		if (tree_token_info(tree_set_token(cfg->trees, i), &d, &n) < 0 || d > 9 || n > 64 || n < 1)
			continue;
		m->valid[d] |= 1ull << (n - 1);
		/* Fuzzy: 1 or 2 descendants missing, at least 3 left. */
		for (int k = 1; k <= 2; k++)
			if (n - k >= 4)
				m->fuzzy_ok[d] |= 1ull << (n - k - 1);
		for (int h = d; h <= d + 1; h++)
			for (int k = n + 1; k <= 2 * n && k <= OVER_MAX_NODES; k++)
				m->over[h][k] = 1;
	}
	m->max_depth = tree_set_max_depth(cfg->trees);
	m->max_nodes = tree_set_max_nodes(cfg->trees);
	m->dead_nodes = 2 * m->max_nodes < OVER_MAX_NODES ? 2 * m->max_nodes : OVER_MAX_NODES;
	m->tables_serial = serial;
	m->cfg = *cfg;
	return 0;
}

static int32_t region_cap(const struct match_config *cfg)
{
	return cfg->max_regions > 0 ? cfg->max_regions : regions_region_capacity(cfg->max_width, cfg->max_height);
}

struct match *match_create(const struct match_config *cfg, int *err)
{
	struct match *m = NULL;
	int e = ERR_RANGE;
	if (!cfg || cfg->max_width < 1 || cfg->max_height < 1 || cfg->max_width > IMAGE_MAX_SIDE ||
	    cfg->max_height > IMAGE_MAX_SIDE || cfg->max_regions < 0 || cfg->max_regions > REGIONS_MAX_CAPACITY) {
		log_error("match: bad frame size or region capacity");
		goto fail;
	}
	e = ERR_NOMEM;
	m = calloc(1, sizeof *m);
	if (!m)
		goto fail;
	m->cap_regions = region_cap(cfg);
	size_t n = (size_t)m->cap_regions;
	m->state = malloc(n);
	m->n_done = malloc(n);
	m->height = malloc(n);
	m->claimed = malloc(n);
	m->flags = malloc(n);
	m->repair_at = malloc(n * sizeof *m->repair_at);
	m->dc = malloc(n * sizeof *m->dc);
	m->parent = malloc(n * sizeof *m->parent);
	m->queue = malloc(n * sizeof *m->queue);
	m->cands = malloc(n * sizeof *m->cands);
	if (!m->state || !m->n_done || !m->height || !m->claimed || !m->dc || !m->parent || !m->queue ||
	    !m->cands || !m->flags || !m->repair_at)
		goto fail;
	e = config_apply(m, cfg);
	if (e < 0)
		goto fail;
	if (err)
		*err = 0;
	return m;
fail:
	match_destroy(m);
	if (err)
		*err = e;
	return NULL;
}

void match_destroy(struct match *m)
{
	if (!m)
		return;
	free(m->state);
	free(m->n_done);
	free(m->height);
	free(m->claimed);
	free(m->flags);
	free(m->repair_at);
	free(m->dc);
	free(m->parent);
	free(m->queue);
	free(m->cands);
	free(m);
}

int match_set_config(struct match *m, const struct match_config *cfg)
{
	if (!m || !cfg)
		return ERR_RANGE;
	if (region_cap(cfg) > m->cap_regions) {
		log_error("match: new frame size %dx%d exceeds the one created for", cfg->max_width, cfg->max_height);
		return ERR_RANGE;
	}
	struct match_config keep_max = *cfg;
	keep_max.max_width = m->cfg.max_width;
	keep_max.max_height = m->cfg.max_height;
	return config_apply(m, &keep_max);
}

int match_process(struct match *m, const struct region_tree *tree, const struct image_u8 *grey,
		  struct detections *out)
{
	if (!m || !tree || !out)
		return ERR_RANGE;
	if (tree->n_regions > m->cap_regions) {
		log_error("match: %d regions exceed the capacity %d", tree->n_regions, m->cap_regions);
		return ERR_SIZE;
	}
	detections_clear(out);
	out->width = tree->width;
	out->height = tree->height;
	m->again = false;
	const int32_t n_cands = match_candidates_find(m, tree);
	match_candidates_decode(m, tree, n_cands, out);
	if (!m->cfg.no_repair)
		match_repair_round(m, tree, out);
	match_roots_find(m, tree, out);
	const bool want_fingers = m->cfg.finger_size_px > 0 && grey;
	const bool want_blobs = m->cfg.blob_max_px > 0;
	if (want_fingers || want_blobs) {
		match_claim_boxes(m, tree, out);
		if (want_fingers)
			fingers_find(&m->cfg, tree, grey, m->claimed, out);
		if (want_blobs)
			blobs_find(&m->cfg, tree, m->claimed, out);
	}
	return 0;
}
