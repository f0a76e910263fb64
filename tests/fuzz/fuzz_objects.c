/* fuzz_objects.c - libFuzzer target: arbitrary bytes as an object library
 * (objects_library_parse). Any input must give 0, ERR_FORMAT, ERR_RANGE or
 * ERR_NOMEM, never a crash or an allocation beyond the format's bounds; a
 * loaded library must save and load back to the same objects and
 * keypoints, byte for byte. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/core/err.h"
#include "../../src/core/log.h"
#include "../../src/objects/objects.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_or_abort(const struct objects_library *a, const struct objects_library *b)
{
	if (objects_library_count(a) != objects_library_count(b))
		abort();
	for (int i = 0; i < objects_library_count(a); i++) {
		struct objects_object x, y;
		if (objects_library_get(a, i, &x) || objects_library_get(b, i, &y))
			abort();
		if (x.id != y.id || strcmp(x.name, y.name) || x.width != y.width || x.height != y.height ||
		    x.n_keypoints != y.n_keypoints)
			abort();
		if (x.n_keypoints && memcmp(x.kp, y.kp, sizeof *x.kp * (size_t)x.n_keypoints))
			abort();
		if (objects_library_find_id(a, x.id) != i || objects_library_find_name(a, x.name) != i)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	log_set_level(LOG_ERROR - 1);
	struct objects_library *lib = NULL;
	int rc = objects_library_parse((const char *)data, size, "fuzz", &lib);
	if (rc != 0 && rc != ERR_FORMAT && rc != ERR_RANGE && rc != ERR_NOMEM)
		abort();
	if (rc != 0) {
		if (lib)
			abort();
		return 0;
	}
	if (!lib)
		abort();
	char path[64];
	snprintf(path, sizeof path, "/tmp/fuzz_objects.%ld", (long)getpid());
	struct objects_library *back = NULL;
	if (objects_library_save(lib, path) != 0 || objects_library_load(path, &back) != 0)
		abort();
	unlink(path);
	same_or_abort(lib, back);
	objects_library_free(back);
	objects_library_free(lib);
	return 0;
}
