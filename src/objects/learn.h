/*
 * learn.h - an object learned from a box of a live frame (the window's O
 * key, through the pipeline): the box's SIFT keypoints added to the object
 * library file, as `tabletrack-objects learn` adds a whole picture.
 *
 * Steps: the library file is read (a missing file is a new, empty
 * library); the object takes the lowest ID of id_min..id_max that the
 * library does not use and the name "objectID" ("object1003"); the box is
 * cut from the frame (a view, no copy) and its strongest max_keypoints
 * SIFT keypoints are extracted with the named backend (sift.h, created for
 * the call); the object is added and the library written back (atomically,
 * objects_library_save). The caller then reloads the library where it is
 * used (the daemon restarts its recognition stage with it).
 *
 * Cost: a SIFT backend's creation and one extraction of the box (tens of
 * milliseconds with OpenCV for a card-sized box), on the calling thread.
 * Memory: the library and the keypoints, freed before returning.
 */
#ifndef TT_OBJECTS_LEARN_H
#define TT_OBJECTS_LEARN_H

#include <stddef.h>

#include "../core/image.h"

struct objects_learn_config {
	const char *path;        /* the library file */
	int id_min, id_max;      /* the IDs objects may take */
	int max_keypoints;       /* 1..OBJECTS_MAX_KEYPOINTS */
	const char *backend;     /* SIFT backend name: "auto", "opencv", "cuda" */
};

/* Learns the box x0..x1, y0..y1 (inclusive pixels inside grey). Returns 0
 * with the new object's ID, name (cap bytes) and keypoint count, or
 * ERR_RANGE (a bad box, or no free ID: logged), ERR_UNSUPPORTED (no SIFT
 * backend: logged), ERR_FORMAT / ERR_IO (the library file could not be
 * read or written: logged), ERR_NOMEM. A box without a single keypoint is
 * ERR_RANGE too (nothing to recognise it by). */
int objects_learn_box(const struct objects_learn_config *cfg, const struct image_u8 *grey, const int box[4],
		      int *id, char *name, size_t cap, int *n_keypoints);

#endif
