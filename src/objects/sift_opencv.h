/*
 * sift_opencv.h - the C ABI of the OpenCV SIFT wrapper (sift_opencv.cpp),
 * the only C++ and the only OpenCV user of the project. Compiled only when
 * the Makefile finds OpenCV (TT_HAVE_OPENCV=1); sift.c is its one caller.
 *
 * No C++ exception crosses this boundary: every entry catches them and
 * returns an error (the message is logged once by the caller from why).
 * Memory: create allocates the cv::SIFT object; extract allocates inside
 * OpenCV (pyramid, keypoint and descriptor matrices) and frees before it
 * returns; destroy frees everything (NULL-safe).
 */
#ifndef TT_OBJECTS_SIFT_OPENCV_H
#define TT_OBJECTS_SIFT_OPENCV_H

#include <stddef.h>
#include <stdint.h>

#include "objects.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sift_opencv;

/* NULL on failure, with the reason in why. threads > 0 sets OpenCV's
 * thread count for the process (cv::setNumThreads); 0 leaves it. */
struct sift_opencv *sift_opencv_create(int max_keypoints, double contrast_threshold, int threads, char *why,
				       size_t cap);
void sift_opencv_destroy(struct sift_opencv *s);
/* Detects and describes; writes at most cap keypoints (the strongest by
 * response, ties by position) and returns their number, or -1 with why. */
int sift_opencv_extract(struct sift_opencv *s, const uint8_t *data, int width, int height, int stride,
			struct objects_keypoint *out, int cap, char *why, size_t why_cap);

#ifdef __cplusplus
}
#endif

#endif
