/*
 * sift.h - SIFT keypoints of a grey frame (Lowe's scale-invariant feature
 * transform): position, scale, orientation and a 128-byte descriptor each,
 * in struct objects_keypoint (objects.h).
 *
 * Backends are chosen by name from a table, like the threshold stage's:
 *   "opencv"  OpenCV's SIFT (Debian's libopencv-dev, features2d), through a
 *             small C++ wrapper with a C ABI (sift_opencv.h); built only when
 *             the Makefile finds OpenCV (OPENCV=auto|0|1). The reference.
 *   "cuda"    the GPU SIFT (cuda/sift_cuda.h): OpenCV's algorithm and
 *             parameters on the GPU; built with nvcc (CUDA=auto|0|1), usable
 *             when a GPU answers the probe. Its buffers grow with the largest
 *             frame seen (allocated on the first call of a larger frame).
 *   "auto"    the first backend that works here: cuda, then opencv.
 * A build without any backend reports ERR_UNSUPPORTED with the reason
 * ("built without OpenCV (libopencv-dev missing)") from sift_create and
 * sift_backend_check, so the daemon can refuse objects = FILE at start.
 *
 * Usage:
 *     struct sift *s = sift_create(&cfg, "auto", &err);
 *     sift_extract(s, &grey, kp, cap, &n);   // strongest min(cap, max_keypoints)
 *     sift_destroy(s);
 * One thread at a time per struct sift.
 *
 * Keypoints: x, y in pixels (pixel centres at integers), size the
 * diameter of the keypoint's region (OpenCV's KeyPoint::size), angle in
 * degrees clockwise on screen, the descriptor's floats rounded and
 * saturated to bytes (OpenCV's SIFT normalises them to 0..~255 already).
 *
 * Memory: the OpenCV backend allocates inside OpenCV on every call (its
 * pyramid and keypoint vectors); it runs on the recognition worker, never
 * in the fiducial frame loop. The caller's keypoint array is written, up
 * to cap.
 */
#ifndef TT_OBJECTS_SIFT_H
#define TT_OBJECTS_SIFT_H

#include <stddef.h>

#include "../core/image.h"
#include "objects.h"

struct sift_config {
	int max_keypoints;        /* the strongest kept, 1..OBJECTS_MAX_KEYPOINTS */
	float contrast_threshold; /* DoG extrema weaker than this (0..1 grey scale, per octave layer) are dropped; 0.04 is Lowe's */
	int threads;              /* worker threads the backend may use; 0 = its own choice */
};

void sift_config_default(struct sift_config *cfg); /* 2000 keypoints, 0.04, 1 thread */

struct sift;

/* backend: "opencv" or "auto". NULL with *err: ERR_UNSUPPORTED (backend not
 * built or unknown: logged with the reason), ERR_RANGE (bad config), ERR_NOMEM. */
struct sift *sift_create(const struct sift_config *cfg, const char *backend, int *err);
void sift_destroy(struct sift *s); /* NULL-safe */
/* Whether `backend` could be created here; the reason in why when not. */
int sift_backend_check(const char *backend, char *why, size_t cap);
const char *sift_backend_name(const struct sift *s);

/* Lets the backend read a long-lived frame buffer faster (cuda: page-
 * locked, uploaded by DMA); the buffer must outlive s. 0 when done or when
 * the backend has nothing to do (opencv); ERR_DEVICE / ERR_NOMEM otherwise
 * (the buffer still works, uploaded as before). */
int sift_register_buffer(struct sift *s, void *data, size_t bytes);

/* Keypoints of grey into out (at most cap; the strongest when there are
 * more), their number in *n_out. Returns 0, ERR_RANGE (bad image) or
 * ERR_DEVICE (the backend failed: logged). */
int sift_extract(struct sift *s, const struct image_u8 *grey, struct objects_keypoint *out, int cap, int *n_out);

/* The matching step (recognise.h: the nearest two library keypoints of
 * each frame keypoint) on the backend's device, for backends that have one
 * (cuda: cuda/sift_cuda.h's matcher, exact and tie-for-tie the same as
 * objects_nearest_cpu). sift_nearest_create returns NULL for the others,
 * or when the device refuses (logged), and the caller matches on the CPU.
 * The library's keypoints are copied to the device at create; max_query
 * bounds a call's frame keypoints. One thread at a time. */
struct sift_nearest;
struct sift_nearest *sift_nearest_create(const struct sift *s, const struct objects_keypoint *lib, int n_lib,
					 int max_query);
void sift_nearest_destroy(struct sift_nearest *m); /* NULL-safe */
/* 0, ERR_RANGE or ERR_DEVICE (logged). */
int sift_nearest(struct sift_nearest *m, const struct objects_keypoint *query, int n, struct objects_nearest *out);

#endif
