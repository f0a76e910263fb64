/* Learning an object from a box of a frame: see learn.h. */
#include "learn.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../core/err.h"
#include "../core/log.h"
#include "objects.h"
#include "sift.h"

int objects_learn_box(const struct objects_learn_config *cfg, const struct image_u8 *grey, const int box[4],
		      int *id, char *name, size_t cap, int *n_keypoints)
{
	*id = -1;
	*n_keypoints = 0;
	if (cap)
		name[0] = '\0';
	if (!cfg->path || !cfg->path[0] || box[0] < 0 || box[1] < 0 || box[2] < box[0] || box[3] < box[1] ||
	    box[2] >= grey->width || box[3] >= grey->height || cfg->max_keypoints < 1 ||
	    cfg->max_keypoints > OBJECTS_MAX_KEYPOINTS) {
		log_error("learn: no library file, or a bad box (%d,%d - %d,%d in %dx%d)", box[0], box[1], box[2],
			  box[3], grey->width, grey->height);
		return ERR_RANGE;
	}
	struct objects_library *lib = NULL;
	struct objects_keypoint *kp = NULL;
	struct sift *sf = NULL;
	struct stat st;
	int err = stat(cfg->path, &st) == 0 ? objects_library_load(cfg->path, &lib)
					     : (lib = objects_library_new()) ? 0 : ERR_NOMEM;
	if (err)
		goto done;
	int new_id = cfg->id_min;
	while (new_id <= cfg->id_max && objects_library_find_id(lib, new_id) >= 0)
		new_id++;
	if (new_id > cfg->id_max) {
		log_error("learn: every object ID of %d..%d is used in %s", cfg->id_min, cfg->id_max, cfg->path);
		err = ERR_RANGE;
		goto done;
	}
	char nm[OBJECTS_NAME_MAX + 1];
	snprintf(nm, sizeof nm, "object%d", new_id);
	for (int k = 2; objects_library_find_name(lib, nm) >= 0; k++)
		snprintf(nm, sizeof nm, "object%d-%d", new_id, k);
	struct sift_config sc;
	sift_config_default(&sc);
	sc.max_keypoints = cfg->max_keypoints;
	sf = sift_create(&sc, cfg->backend ? cfg->backend : "auto", &err);
	kp = malloc(sizeof *kp * (size_t)cfg->max_keypoints);
	if (!sf || !kp) {
		err = sf ? ERR_NOMEM : err;
		goto done;
	}
	const struct image_u8 view = {.width = box[2] - box[0] + 1,
				      .height = box[3] - box[1] + 1,
				      .stride = grey->stride,
				      .data = grey->data + (size_t)box[1] * (size_t)grey->stride + (size_t)box[0]};
	int n = 0;
	if ((err = sift_extract(sf, &view, kp, cfg->max_keypoints, &n)))
		goto done;
	if (n == 0) {
		log_error("learn: no keypoint in the box %dx%d: a plain surface cannot be recognised", view.width,
			  view.height);
		err = ERR_RANGE;
		goto done;
	}
	if ((err = objects_library_add(lib, new_id, nm, view.width, view.height, kp, n)) ||
	    (err = objects_library_save(lib, cfg->path)))
		goto done;
	*id = new_id;
	*n_keypoints = n;
	snprintf(name, cap, "%s", nm);
done:
	free(kp);
	sift_destroy(sf);
	objects_library_free(lib);
	return err;
}
