#include "detect.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

int detections_alloc(struct detections *d, int32_t cap)
{
	memset(d, 0, sizeof *d);
	d->fids = calloc((size_t)cap, sizeof *d->fids);
	d->fuzzy = calloc((size_t)cap, sizeof *d->fuzzy);
	d->roots = calloc((size_t)cap, sizeof *d->roots);
	d->fingers = calloc((size_t)cap, sizeof *d->fingers);
	d->blobs = calloc((size_t)cap, sizeof *d->blobs);
	if (!d->fids || !d->fuzzy || !d->roots || !d->fingers || !d->blobs) {
		detections_free(d);
		return ERR_NOMEM;
	}
	d->cap_fids = d->cap_fuzzy = d->cap_roots = d->cap_fingers = d->cap_blobs = cap;
	return 0;
}

int detections_alloc_outlines(struct detections *d, int32_t max_contours, int32_t max_points)
{
	free(d->contours);
	free(d->points);
	d->n_contours = d->cap_contours = d->n_points = d->cap_points = 0;
	d->contours = calloc((size_t)max_contours, sizeof *d->contours);
	d->points = calloc((size_t)max_contours * (size_t)max_points, sizeof *d->points);
	if (!d->contours || !d->points) {
		free(d->contours);
		free(d->points);
		d->contours = NULL;
		d->points = NULL;
		return ERR_NOMEM;
	}
	d->cap_contours = max_contours;
	d->cap_points = max_contours * max_points;
	return 0;
}

void detections_free(struct detections *d)
{
	if (!d)
		return;
	free(d->contours);
	free(d->points);
	free(d->fids);
	free(d->fuzzy);
	free(d->roots);
	free(d->fingers);
	free(d->blobs);
	memset(d, 0, sizeof *d);
}

void detections_clear(struct detections *d)
{
	d->n_fids = d->n_fuzzy = d->n_roots = d->n_fingers = d->n_blobs = 0;
	d->n_contours = d->n_points = 0;
	d->overflow = false;
}
