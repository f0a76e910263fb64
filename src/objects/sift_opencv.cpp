// The OpenCV SIFT wrapper behind sift_opencv.h: keypoints and descriptors
// into plain C structs; no exception crosses into C.
#include "sift_opencv.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <new>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/features2d.hpp>

// OpenCV's SIFT (4.6, and later ones unless enable_precise_upscale is set)
// doubles the picture with cv::resize first, whose pixel centres sit a
// quarter pixel off the doubled grid, and halves keypoint coordinates
// back: every keypoint lands +0.25 px right and down of the feature. A
// picture turned a quarter inside a frame shows it as a 0.5 px pose error.
static const float UPSCALE_SHIFT = 0.25f;

struct sift_opencv {
	cv::Ptr<cv::SIFT> sift;
	int max_keypoints;
};

static void say(char *why, size_t cap, const char *what)
{
	if (why && cap)
		std::snprintf(why, cap, "OpenCV: %s", what);
}

extern "C" struct sift_opencv *sift_opencv_create(int max_keypoints, double contrast_threshold, int threads,
						  char *why, size_t cap)
{
	try {
		if (threads > 0)
			cv::setNumThreads(threads);
		sift_opencv *s = new sift_opencv;
		s->max_keypoints = max_keypoints;
		s->sift = cv::SIFT::create(max_keypoints, 3, contrast_threshold, 10.0, 1.6);
		if (!s->sift) {
			delete s;
			say(why, cap, "cv::SIFT::create failed");
			return nullptr;
		}
		return s;
	} catch (const std::exception &e) {
		say(why, cap, e.what());
	} catch (...) {
		say(why, cap, "unknown exception");
	}
	return nullptr;
}

extern "C" void sift_opencv_destroy(struct sift_opencv *s)
{
	delete s;
}

extern "C" int sift_opencv_extract(struct sift_opencv *s, const uint8_t *data, int width, int height, int stride,
				   struct objects_keypoint *out, int cap, char *why, size_t why_cap)
{
	try {
		cv::Mat img(height, width, CV_8UC1, const_cast<uint8_t *>(data), (size_t)stride);
		std::vector<cv::KeyPoint> kps;
		cv::Mat desc;
		s->sift->detectAndCompute(img, cv::noArray(), kps, desc);
		if (desc.rows != (int)kps.size() || (desc.rows > 0 && (desc.cols != OBJECTS_DESC_LEN || desc.type() != CV_32F))) {
			say(why, why_cap, "descriptor matrix of an unexpected shape");
			return -1;
		}
		// The strongest first; ties by position, so the order depends on
		// the picture only, not on OpenCV's threads.
		std::vector<int> order(kps.size());
		for (size_t i = 0; i < order.size(); i++)
			order[i] = (int)i;
		std::sort(order.begin(), order.end(), [&](int a, int b) {
			const cv::KeyPoint &ka = kps[(size_t)a], &kb = kps[(size_t)b];
			if (ka.response != kb.response)
				return ka.response > kb.response;
			if (ka.pt.y != kb.pt.y)
				return ka.pt.y < kb.pt.y;
			if (ka.pt.x != kb.pt.x)
				return ka.pt.x < kb.pt.x;
			if (ka.size != kb.size)
				return ka.size < kb.size;
			return ka.angle < kb.angle;
		});
		int n = std::min(cap, (int)order.size());
		for (int i = 0; i < n; i++) {
			const cv::KeyPoint &k = kps[(size_t)order[(size_t)i]];
			objects_keypoint &o = out[i];
			o.x = k.pt.x - UPSCALE_SHIFT;
			o.y = k.pt.y - UPSCALE_SHIFT;
			o.size = k.size;
			float a = std::fmod(k.angle, 360.0f);
			if (a < 0)
				a += 360.0f;
			o.angle_deg = a >= 360.0f ? 0.0f : a;
			o.response = k.response > 0 ? k.response : 0.0f;
			const float *d = desc.ptr<float>(order[(size_t)i]);
			for (int j = 0; j < OBJECTS_DESC_LEN; j++) {
				float v = std::nearbyint(d[j]);
				o.desc[j] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
			}
		}
		return n;
	} catch (const std::exception &e) {
		say(why, why_cap, e.what());
	} catch (...) {
		say(why, why_cap, "unknown exception");
	}
	return -1;
}
