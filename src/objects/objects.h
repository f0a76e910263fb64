/*
 * objects.h - untagged objects recognised by their look: the object
 * library (what was learned) and its file format.
 *
 * An object is a picture learned once (a card, a book cover, a game tile
 * seen from the camera's side) reduced to its SIFT keypoints: position in
 * the learned picture, scale, orientation and a 128-value descriptor. The
 * library holds every learned object with its TUIO class ID and a name.
 * sift.h extracts keypoints from a frame; recognise.h matches them against
 * the library and finds each object's ID, position, angle and scale.
 *
 * Object IDs live in their own range, configured by object_id_min ..
 * object_id_max (config.h), which the daemon refuses at start when it
 * overlaps the fiducial IDs (0 .. symbols in the set - 1), so a symbol and
 * an object never share an ID on /tuio/2Dobj.
 *
 * File format, version 1 (text, one record a line, '\n' or "\r\n" ends a
 * line, at most OBJECTS_MAX_LINE bytes a line):
 *
 *     # comments and blank lines are allowed anywhere
 *     tabletrack-objects 1
 *     object ID WIDTH HEIGHT N NAME
 *     k X Y SIZE ANGLE RESPONSE HEX
 *     ...                               (exactly N "k" lines)
 *     object ...
 *
 *   - the first record must be the magic word and the version; a later
 *     version is refused by name ("version 2 is newer than this build");
 *   - ID: decimal, 0..OBJECTS_MAX_ID, unique in the file;
 *   - WIDTH, HEIGHT: the learned picture's size in pixels, 1..IMAGE_MAX_SIDE;
 *   - N: keypoints of the object, 0..OBJECTS_MAX_KEYPOINTS;
 *   - NAME: 1..OBJECTS_NAME_MAX characters of [A-Za-z0-9_.-], unique;
 *   - X, Y: the keypoint in the learned picture, pixel (i, j) centred at
 *     (i, j): -0.5 <= X <= WIDTH - 0.5, likewise Y;
 *   - SIZE: the keypoint's diameter in pixels (OpenCV's KeyPoint::size),
 *     > 0 and at most 4 * IMAGE_MAX_SIDE;
 *   - ANGLE: its orientation in degrees, 0 <= ANGLE < 360, clockwise on
 *     screen (x right, y down): turning the picture by +t adds t;
 *   - RESPONSE: the detector's strength, finite, >= 0;
 *   - HEX: the descriptor, 128 bytes as 256 lower- or upper-case hex digits.
 * Numbers are decimal (floats as strtof reads them, no nan or inf).
 * Anything else is an error naming the file, line and what was wrong
 * ("lib.objects:12: k: 255 hex digits, want 256"). A file may hold no
 * object at all (a new library).
 *
 * Limits (bound every allocation whatever the input): at most
 * OBJECTS_MAX_OBJECTS objects, OBJECTS_MAX_KEYPOINTS keypoints an object,
 * OBJECTS_MAX_TOTAL keypoints in all, files of at most OBJECTS_MAX_FILE
 * bytes. Arrays grow with what was actually parsed, never with a declared
 * count, so a lying header allocates nothing.
 *
 * Memory: a library owns its arrays (about 148 bytes a keypoint); objects
 * and keypoints returned by the accessors are borrowed and live until the
 * next change of the library or its free. Not thread-safe for changes;
 * concurrent reads are fine.
 */
#ifndef TT_OBJECTS_OBJECTS_H
#define TT_OBJECTS_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OBJECTS_FORMAT_VERSION 1
#define OBJECTS_MAGIC "tabletrack-objects"
#define OBJECTS_DESC_LEN 128
#define OBJECTS_NAME_MAX 63
#define OBJECTS_MAX_ID 1000000000
#define OBJECTS_MAX_OBJECTS 4096
#define OBJECTS_MAX_KEYPOINTS 16384
#define OBJECTS_MAX_TOTAL 262144
#define OBJECTS_MAX_FILE (96u << 20)
#define OBJECTS_MAX_LINE 512

/* One SIFT keypoint: where, how big, which way, how strong, and what it looks like. */
struct objects_keypoint {
	float x, y;        /* px, pixel centres at integers */
	float size;        /* diameter, px */
	float angle_deg;   /* 0..360, clockwise on screen */
	float response;    /* detector strength */
	uint8_t desc[OBJECTS_DESC_LEN];
};

/* One learned object (borrowed view into the library). */
struct objects_object {
	int id;
	char name[OBJECTS_NAME_MAX + 1];
	int width, height;                   /* the learned picture, px */
	int n_keypoints;
	const struct objects_keypoint *kp;   /* n_keypoints of them */
};

/* The nearest and second-nearest library keypoint of one frame keypoint
 * (recognise.h's matching step): squared Euclidean distances of the 128
 * descriptor bytes, exact integers (at most 128 x 255^2). index: the
 * nearest's place in objects_library_keypoints(), the lowest such index
 * when several are equally near, -1 when the library is empty; d1 its
 * distance, d2 the second smallest distance over the rest (equal to d1 on
 * a tie; UINT32_MAX when the library has fewer than two keypoints). */
struct objects_nearest {
	int32_t index;
	uint32_t d1, d2;
};

struct objects_library;

/* An empty library, or NULL (out of memory). Free with objects_library_free. */
struct objects_library *objects_library_new(void);
void objects_library_free(struct objects_library *lib); /* NULL-safe */

/* Parses `len` bytes of the format above; `name` stands for the file in
 * messages. Returns 0 with *out owned by the caller, or ERR_FORMAT (bad
 * syntax), ERR_RANGE (a value or count out of bounds) or ERR_NOMEM, with
 * one log line "NAME:LINE: what" and *out NULL. */
int objects_library_parse(const char *text, size_t len, const char *name, struct objects_library **out);
/* Reads a regular file (never blocks on a FIFO) and parses it. ERR_IO when
 * it cannot be read (logged with the reason), else as parse. */
int objects_library_load(const char *path, struct objects_library **out);
/* Writes the library in the format above (the newest version), through a
 * temporary file renamed over `path`, so a crash never leaves half a file.
 * Returns 0 or ERR_IO (logged). */
int objects_library_save(const struct objects_library *lib, const char *path);

int objects_library_count(const struct objects_library *lib);
/* Object i (0 <= i < count) as a borrowed view; 0 or ERR_RANGE. */
int objects_library_get(const struct objects_library *lib, int i, struct objects_object *out);
/* Index of the object with this ID or name, or -1. */
int objects_library_find_id(const struct objects_library *lib, int id);
int objects_library_find_name(const struct objects_library *lib, const char *name);
/* Keypoints of every object, back to back in object order (for matching):
 * object i's keypoints start at objects_library_first(lib, i). */
const struct objects_keypoint *objects_library_keypoints(const struct objects_library *lib, int *n_total);
int objects_library_first(const struct objects_library *lib, int i);

/* Adds an object (keypoints copied). ERR_RANGE: ID, size or count out of
 * bounds, or the ID or name already used; ERR_FORMAT: a bad name or
 * keypoint (same rules as the file); ERR_NOMEM. */
int objects_library_add(struct objects_library *lib, int id, const char *name, int width, int height,
			const struct objects_keypoint *kp, int n_kp);
/* Removes object i; 0 or ERR_RANGE. */
int objects_library_remove(struct objects_library *lib, int i);
/* Whether a name keeps the rules above. */
int objects_name_valid(const char *name);

#ifdef __cplusplus
}
#endif

#endif
