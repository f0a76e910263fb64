/* The option table and everything generated from it: see config.h. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#if TT_HAVE_INIH
#include <ini.h>
#endif
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../core/err.h"
#include "../core/file.h"
#include "../core/log.h"
#include "../core/path.h"

#ifndef TT_VERSION
#define TT_VERSION "unknown"
#endif

#define FIELD_SIZE(field) sizeof(((struct tt_config *)0)->field)

#define OPT_BOOL(sec, nm, field, dflt, lv, sh, hlp)                                                          \
	{                                                                                                    \
		.name = nm, .section = sec, .type = CONFIG_BOOL, .def = dflt, .live = lv, .short_opt = sh,   \
		.help = hlp, .offset = offsetof(struct tt_config, field), .size = FIELD_SIZE(field)          \
	}
/* An integer that only takes the values listed in vals ("0|3|5"), within
 * lo..hi; OPT_INT is the same with any value in range allowed. */
#define OPT_INT_SET(sec, nm, field, dflt, lo, hi, vals, lv, sh, mv, hlp)                                     \
	{                                                                                                    \
		.name = nm, .section = sec, .type = CONFIG_INT, .def = dflt, .min = lo, .max = hi,           \
		.values = vals, .live = lv, .short_opt = sh, .metavar = mv, .help = hlp,                     \
		.offset = offsetof(struct tt_config, field), .size = FIELD_SIZE(field)                       \
	}
#define OPT_INT(sec, nm, field, dflt, lo, hi, lv, sh, mv, hlp)                                               \
	OPT_INT_SET(sec, nm, field, dflt, lo, hi, NULL, lv, sh, mv, hlp)
/* An integer that also takes the words of wds ("max", "min", ...). */
#define OPT_INT_WORDS(sec, nm, field, dflt, lo, hi, wds, lv, sh, mv, hlp)                                    \
	{                                                                                                    \
		.name = nm, .section = sec, .type = CONFIG_INT, .def = dflt, .min = lo, .max = hi,           \
		.live = lv, .short_opt = sh, .metavar = mv, .help = hlp,                                     \
		.offset = offsetof(struct tt_config, field), .size = FIELD_SIZE(field), .words = wds         \
	}
#define OPT_FLOAT(sec, nm, field, dflt, lo, hi, lv, sh, mv, hlp)                                             \
	{                                                                                                    \
		.name = nm, .section = sec, .type = CONFIG_FLOAT, .def = dflt, .min = lo, .max = hi,         \
		.live = lv, .short_opt = sh, .metavar = mv, .help = hlp,                                     \
		.offset = offsetof(struct tt_config, field), .size = FIELD_SIZE(field)                       \
	}
#define OPT_STRING(sec, nm, field, dflt, lv, sh, mv, hlp)                                                    \
	{                                                                                                    \
		.name = nm, .section = sec, .type = CONFIG_STRING, .def = dflt, .live = lv, .short_opt = sh, \
		.metavar = mv, .help = hlp, .offset = offsetof(struct tt_config, field),                     \
		.size = FIELD_SIZE(field)                                                                    \
	}
#define OPT_ENUM(sec, nm, field, dflt, vals, lv, sh, hlp)                                                    \
	{                                                                                                    \
		.name = nm, .section = sec, .type = CONFIG_ENUM, .def = dflt, .values = vals, .live = lv,    \
		.short_opt = sh, .metavar = vals, .help = hlp, .offset = offsetof(struct tt_config, field),  \
		.size = FIELD_SIZE(field)                                                                    \
	}

/* The words of the camera's size and rate. */
static const struct config_word size_words[] = {
    {"auto", TT_SIZE_AUTO}, {"max", TT_SIZE_MAX}, {"min", TT_SIZE_MIN}, {NULL, 0}};
static const struct config_word fps_words[] = {
    {"auto", TT_FPS_AUTO}, {"max", TT_FPS_MAX}, {"min", TT_FPS_MIN}, {NULL, 0}};

/* The one table (architecture.md, convention 10). Order is the order of
 * --help and of the config file. */
static const struct config_option options[] = {
    OPT_STRING("source", "source", source, "", false, 's', "SOURCE",
               "where frames come from: v4l2:/dev/videoN (or v4l2:N), folder:DIR, file:IMAGE, "
               "raw:WxH[:FPS] (grey frames on standard input), demo; empty = the first camera, "
               "else the demo"),
    OPT_BOOL("source", "once", once, "false", false, 'o',
             "process every frame of a finite source once, then exit"),
    OPT_INT_WORDS("source", "fps", fps, "30", 0, 1000, fps_words, false, 'f', "N|auto|max|min",
                  "frames per second asked of the camera: a number, auto (the camera's current "
                  "rate), max or min (the fastest or slowest rate the camera offers at the chosen "
                  "size); 0 = the camera's current rate. Folder, file, raw and demo sources are "
                  "replayed at this rate, 0 = as fast as possible; there auto, max and min mean "
                  "30"),
    OPT_BOOL("source", "loop", loop, "false", false, 'l', "start a folder or file source again when it ends"),
    OPT_INT_WORDS("source", "width", width, "auto", 0, 16384, size_words, false, 0, "N|auto|max|min",
                  "camera frame width in pixels, or auto (the driver's current size; also 0), max "
                  "or min (the largest or smallest size the format offers, by area; with a given "
                  "height: the widest or narrowest at that height); the demo takes auto, max and "
                  "min as 640"),
    OPT_INT_WORDS("source", "height", height, "auto", 0, 16384, size_words, false, 0, "N|auto|max|min",
                  "camera frame height in pixels, or auto (the driver's current size; also 0), max "
                  "or min (the largest or smallest size the format offers, by area; with a given "
                  "width: the tallest or lowest at that width); auto beside a given or max/min "
                  "width takes the size that fits it; the demo takes auto, max and min as 480"),
    OPT_STRING("source", "format", format, "auto", false, 0, "FOURCC|auto|max|min",
               "camera pixel format: a V4L2 fourcc such as GREY, YUYV or MJPG; auto = the "
               "cheapest grey source the camera offers natively that reaches the wanted size "
               "and rate; max = the format that offers the largest frame size (then the highest "
               "rate at it); min = the format whose largest size is the smallest (least "
               "bandwidth)"),
    OPT_INT("source", "buffers", n_buffers, "4", 3, 32, false, 0, "N", "number of V4L2 capture buffers"),
    OPT_STRING("source", "controls", controls, "", false, 0, "LIST",
               "camera controls as key=value,... (exposure=auto|N, gain, brightness, contrast, "
               "gamma, sharpness, focus=auto|N, power_line=50|60|off, white_balance=auto|off); "
               "unsupported ones are reported once"),
    OPT_FLOAT("source", "camera_gamma", camera_gamma, "1", 1, 3, false, 0, "G",
              "the gamma curve the camera encodes its frames with, undone (grey = 255 (v/255)^G) before "
              "thresholding and matching: most webcams and phones encode with about 2.2, where a shadow's "
              "paper and the ink come out brighter against the lit paper than the rules expect; 1 = the "
              "frames are taken as linear (IR cameras set linear, or a camera's own gamma control set so)"),

    OPT_ENUM("threshold", "gpu", gpu, "auto", "auto|on|off", false, 'G',
             "threshold on the GPU: auto (when one works, else the CPU), on (fail without "
             "one), off"),
    OPT_ENUM("threshold", "threshold", threshold_mode, "bernsen", "bernsen|tiled|mean|gated|either|both|sauvola", true, 0,
             "thresholding method: bernsen (per pixel: (min + max) / 2 of the window), tiled (one "
             "threshold per tile, cheaper, blockier), mean (Bradley-Roth: white above the local "
             "mean less mean_bias percent; windows darker on average than gate black), gated "
             "(the local mean where the Bernsen window's contrast reaches gate, Bernsen's flat "
             "rule elsewhere), either / both (white where Bernsen or / and the local mean say so, "
             "Bernsen's flat rule where the contrast is under gate), sauvola (white above "
             "mean * (1 + k * (deviation / range - 1)) of the mean_radius window, windows darker "
             "on average than gate black)"),
    OPT_INT("threshold", "mean_radius", mean_radius, "16", 1, 63, true, 0, "N",
            "local-mean window radius in pixels for the mean, gated, either and both methods "
            "(the window side is 2N+1)"),
    OPT_INT("threshold", "mean_bias", mean_bias, "16", 0, 50, true, 0, "PERCENT",
            "local-mean methods: a pixel is black unless brighter than the local mean less "
            "this many percent"),
    OPT_INT("threshold", "sauvola_k", sauvola_k, "20", 0, 100, true, 0, "PERCENT",
            "sauvola method: k in percent; the threshold is the local mean less k percent in a "
            "flat window, the mean itself where the window's deviation reaches sauvola_range"),
    OPT_INT("threshold", "sauvola_range", sauvola_range, "128", 1, 255, true, 0, "N",
            "sauvola method: R, the deviation (grey levels) at which the threshold is the local mean"),
    OPT_INT("threshold", "radius", radius, "8", 1, 32, true, 'r', "N",
            "Bernsen window radius in pixels (the window side is 2r+1)"),
    OPT_INT("threshold", "radius2", radius2, "2", 0, 32, true, 0, "N",
            "a second Bernsen radius whose symbols are merged with the first's (0 = off); "
            "a small one (2-3) recovers blurred and small symbols, a large one (6-12) streaked ones, "
            "at the cost of a second threshold and segmentation"),
    OPT_INT("threshold", "gate", gate, "32", 0, 255, true, 'g', "N",
            "minimum contrast (max - min) in the window; flatter areas become black when "
            "dark, white when bright"),
    OPT_INT("threshold", "gate_range", gate_range, "192", 0, 255, true, 0, "N",
            "a frame whose grey spans less than this (its 0.1st to 99.9th percentile) is read at a gate "
            "scaled down in proportion, to half the gate at most and never under 8 times its noise: a dim "
            "camera's symbols span less than the gate; a frame whose noise (read from neighbouring pixels) "
            "is over 5 levels at gate 32 is read at 8 times its noise, up to twice the gate; the local-mean "
            "methods' gate (a floor) stays; 0 = the gate for every frame"),
    OPT_INT("threshold", "segment_threads", segment_threads, "0", 0, 64, false, 0, "N",
            "threads that segment each threshold scale, by horizontal bands, and (up to 4) that "
            "outline a frame's hands, fingers and blobs (same result as one); 0 = half the CPU "
            "cores, at most 8"),
    OPT_ENUM("threshold", "segment_backend", segment_backend, "auto", "auto|cpu|gpu", false, 0,
             "where each threshold scale is segmented into regions: auto (on the GPU when the "
             "threshold runs there, else the CPU), cpu, gpu (needs the GPU threshold); the trees "
             "are identical, and a GPU failure falls back to the CPU"),
    OPT_INT("threshold", "max_runs", max_runs, "0", 0, 1073741823, false, 0, "N",
            "row runs a frame may have, per scale; 0 = an eighth of the frame's pixels. Bounds "
            "memory whatever the picture: a frame with more is segmented down to the row where "
            "they ran out, counted and logged once"),
    OPT_INT("threshold", "max_regions", max_regions, "0", 0, 1073741823, false, 0, "N",
            "regions a frame may have, per scale; 0 = a sixty-fourth of the frame's pixels; "
            "as max_runs"),
    OPT_INT("threshold", "tile", tile, "10", 2, 64, true, 0, "N", "tile side in pixels for the tiled method"),
    OPT_INT_SET("threshold", "median", median, "0", 0, 5, "0|3|5", true, 0, "N",
                "median pre-filter size against sensor noise: 0 (off), 3 or 5"),
    OPT_ENUM("threshold", "threshold2", threshold2_mode, "bernsen", "bernsen|tiled|mean|gated|either|both|sauvola", true,
             0, "thresholding method of the second scale (radius2), as threshold"),
    OPT_ENUM("threshold", "threshold3", threshold3_mode, "mean", "off|bernsen|tiled|mean|gated|either|both|sauvola", true,
             0, "method of a third threshold scale (the first's radius, gate, median and mean settings) whose "
             "symbols are merged where the other scales found none; mean keeps symbols under hard shadow "
             "edges; off = no third scale"),
    OPT_FLOAT("threshold", "mean_scale3", mean_scale3, "0.115", 0, 1, true, 0, "RATIO",
              "third scale with a local-mean method: a second pass in its windows whose mean_radius is this "
              "fraction of the size of the largest symbol-like structure there (clamped to 3..63), so that "
              "small symbols get a small window; 0 = off"),
    OPT_INT("threshold", "radius_small", radius_small, "1", 0, 4, true, 0, "N",
            "third scale: a pass for symbols under about 40 px, Bernsen at this radius without a median, in "
            "windows around small structure that no decoded symbol explains; 0 = off"),
    OPT_INT("threshold", "radius_small_check", radius_small_check, "3", 0, 4, true, 0, "N",
            "the small-symbol and upsampled passes: each symbol they read is read again in a window around "
            "it, Bernsen at this radius without a median, and is kept only as a fuzzy symbol where that read "
            "gives another ID; 0 = off"),
    OPT_BOOL("threshold", "check3", check3, "true", true, 0,
             "the third scale's local-mean reads (its first pass and the scaled pass, mean_scale3) of symbols "
             "of up to 40 px are checked as the small-symbol pass's are (radius_small_check, then the "
             "Lanczos check with sharp_up): a 26 px symbol whose one-hole blob's hole closed while a speck "
             "was taken for a dot reads as another ID there"),
    OPT_BOOL("threshold", "check1", check1, "true", true, 0,
             "the first scale's lone symbols (no other scale or pass reads that ID at the place) are read "
             "again around them with the first scale's threshold at its radius + 1 (with threshold3 on), "
             "and are kept only as fuzzy symbols where that read gives another ID: on motion streaks and "
             "JPEG a blob's hole that moved reads as another ID at one radius alone"),
    OPT_INT("threshold", "radius_up", radius_up, "2", 0, 8, true, 0, "N",
            "third scale: a pass on the frame enlarged twice (bilinear) around small structure that no "
            "decoded symbol explains, Bernsen at this radius (enlarged pixels) and gate_up without a median, "
            "for symbols whose holes are 1-1.5 px (foreshortened, or in a wide lens's corners); 0 = off"),
    OPT_INT("threshold", "gate_up", gate_up, "16", 0, 255, true, 0, "N",
            "the upsampled pass's (radius_up) Bernsen gate: a blurred 1 px hole, enlarged, stands out from "
            "its blob by less than the first scale's gate"),
    OPT_INT("threshold", "close_up", close_up, "4", 0, 8, true, 0, "N",
            "the upsampled pass (radius_up) reads each enlarged part again against a grey closing of this "
            "radius (enlarged pixels; white above close_up_pct percent of it), so that a hard shadow's edge "
            "crossing a small symbol does not join it to the shadow; 0 = off"),
    OPT_INT("threshold", "close_up_pct", close_up_pct, "80", 1, 100, true, 0, "PERCENT",
            "the upsampled pass's closing read (close_up): white above this percent of the closing (at the "
            "closing pass's 70 a 47 px symbol of a shadowed sheet read as another ID)"),
    OPT_BOOL("threshold", "sharp_up", sharp_up, "true", true, 0,
             "the upsampled pass (radius_up) reads the places of the third scale's fuzzy symbols of up to "
             "96 px again on the frame enlarged by Lanczos-3 instead of bilinear, which keeps the 1-2 px "
             "holes of a 24-28 px symbol apart; such a read stands unless the bilinear read's tree there is "
             "its ID's whole (left fuzzy by a rule of the matcher); then the places of its regions of 14-28 "
             "px that no read explains, enlarged three times (20-24 px symbols), a read one hole moved from "
             "another ID's kept only where Bernsen at radius 3 reads it too"),
    OPT_BOOL("threshold", "ink_up", ink_up, "true", true, 0,
             "the upsampled pass (radius_up) also reads the closing pass's ink windows (close_scale3: "
             "small symbols a hard shadow's edge blackened in the first scale) on the frame enlarged by "
             "Lanczos-3, against the local mean of a small window where Bernsen's window is steep, keeping "
             "symbols of up to 40 px where no other read holds the place; and its Lanczos read (sharp_up) "
             "tries that threshold third and Sauvola's fourth at a small fuzzy place"),
    OPT_BOOL("threshold", "mean_up", mean_up, "true", true, 0,
             "the upsampled pass (radius_up) also reads its own windows as it reads the ink windows (ink_up: "
             "the frame enlarged by Lanczos-3, the local mean of a small window), keeping symbols of up to "
             "40 px (larger ones where the bilinear read's tree confirms them): small symbols mostly in a "
             "hard shadow, at a third of the light or less, whose 1-2 px holes are a few grey levels from "
             "their walls"),
    OPT_BOOL("threshold", "sauvola_up", sauvola_up, "true", true, 0,
             "the upsampled pass's local-mean reads of a window (ink_up, mean_up) are followed by Sauvola's "
             "rule over a small window of the same enlargement, its symbols kept where the local mean read "
             "none"),
    OPT_BOOL("threshold", "encode_up", encode_up, "true", true, 0,
             "where neither of those reads holds a symbol, the same enlargement encoded with gamma 2.2 "
             "(the dark levels spread apart) and read by the local mean once more"),
    OPT_BOOL("threshold", "sharpen_up", sharpen_up, "true", true, 0,
             "the upsampled pass's local-mean reads of a window (ink_up, mean_up) and its read three times "
             "enlarged (sharp_up) are followed by the same read of the enlargement sharpened (an unsharp "
             "mask of 0.7 px), its symbols kept where those read none: small symbols seen by a slightly "
             "soft camera, whose 1-1.5 px holes blur into their walls"),
    OPT_BOOL("threshold", "fine_up", fine_up, "true", true, 0,
             "the upsampled pass (radius_up) reads the places of its regions of 28-96 px that no read "
             "explains again on the frame enlarged by Lanczos-3, thresholded by Bernsen at radius 1 "
             "(enlarged pixels), keeping a symbol of 28 px or more: symbols squeezed by a barrel lens "
             "near the frame's edges, whose 1-1.5 px holes the bilinear read joins"),
    OPT_BOOL("threshold", "rectify_up", rectify_up, "true", true, 0,
             "the upsampled pass reads the places of its regions of 14-48 px that no read explains and "
             "whose grey is squeezed one way again, stretched back along the short axis by Lanczos-3 and "
             "deconvolved as a streak: small symbols on a tilted camera's far side or near a barrel "
             "lens's edge, whose holes are 1 px across one way"),
    OPT_FLOAT("threshold", "close_scale3", close_scale3, "0.04", 0, 1, true, 0, "RATIO",
              "third scale: a pass in its windows against the paper's own light (a grey closing whose "
              "radius is this fraction of a symbol's size, clamped to 3..63, tried down from the largest "
              "symbol-like structure's there; white above close_pct percent of the closing), which a hard "
              "shadow's edge does not cut; 0 = off"),
    OPT_INT("threshold", "close_pct", close_pct, "70", 1, 100, true, 0, "PERCENT",
            "the close_scale3 pass: a pixel is white above this percent of the closing's grey"),
    OPT_INT("threshold", "close_dark", close_dark, "50", 0, 100, true, 0, "PERCENT",
            "the close_scale3 pass read once more, in the same windows, on the grey's 3x3 median with the "
            "frame's gate at this percent (where two hard shadows overlap the paper keeps a few percent of "
            "the light and its print falls under the gate); whole symbols only, each standing only where "
            "no other read holds its place; 0 = off"),
    OPT_INT("threshold", "ratio3", ratio3, "16", 0, 64, true, 0, "N",
            "third scale: a pass in its windows by Bernsen's window against the light's ratio (white where "
            "(grey + N)^2 > (darkest + N) (brightest + N) there: a hard shadow scales the light, so the "
            "shadowed paper beside its edge stays white); N offsets the grey for the sensor's noise; 0 = off"),
    OPT_BOOL("threshold", "ratio3_large", ratio3_large, "true", true, 0,
             "the ratio pass (ratio3) also reads its windows at 2, 3 and 4 times the first scale's radius, "
             "keeping symbols of 6-10 times that radius where no other read holds the place: a hard "
             "shadow's edge across a symbol of over about 100 px (a camera near the table, a large frame)"),
    OPT_BOOL("threshold", "deblur3", deblur3, "true", true, 0,
             "third scale: a pass in its windows that estimates a motion streak (direction and length) and "
             "undoes it (Richardson-Lucy) before a local-mean threshold at the symbol's scale (mean_scale3); "
             "runs only where the window's grey is streaked; its symbols give way to any whole symbol"),
    OPT_BOOL("threshold", "defocus3", defocus3, "true", true, 0,
             "the deblur3 pass also undoes a defocus: in its windows with no streak, a blur read from the "
             "window's steps (a Gaussian's sigma of at least 1.3) is deconvolved as a streak is, and where "
             "most windows read one (median 1.5 or more) the next frames up to 800x600 are deconvolved "
             "whole; its symbols stand only where no other read of the place disagrees"),
    OPT_BOOL("threshold", "deblur3_high", deblur3_high, "true", true, 0,
             "the deblur3 pass also thresholds each streak's deconvolved grey by a local mean of radius 28, "
             "whose width smooths the ringing a narrow one turns into specks (symbols of about 60-70 px); "
             "whole trees only, none that may be another ID with a one-hole blob closed; its symbols stand "
             "only where no other read holds the place"),
    OPT_INT("threshold", "deblur3_pct", deblur3_pct, "100", 0, 100, true, 0, "PERCENT",
            "the deblur3 pass: its windows, in their order, until their area in a frame would pass this "
            "percent of the frame's (a bound on its cost per frame); 0 = no bound"),
    OPT_INT("threshold", "deblur3_bias", deblur3_bias, "7", 0, 50, true, 0, "PERCENT",
            "the deblur3 pass: the bias of its local means over the deconvolved grey, as mean_bias (percent "
            "below the mean that is still black); its own, nearer the mean than mean_bias's 16: a wall "
            "between leaves that the deconvolution brings back only part way to the ink's grey stays black"),
    OPT_INT_SET("threshold", "median2", median2, "3", 0, 5, "0|3|5", true, 0, "N",
                "median pre-filter of the second scale (radius2): 0 (off), 3 or 5"),
    OPT_FLOAT("threshold", "gauss", gauss_sigma, "0", 0, 4, true, 0, "SIGMA",
              "Gaussian pre-filter sigma in pixels; 0 = off, else 0.3..4"),

    OPT_STRING("fiducials", "trees", trees, "", false, 'T', "FILE",
               "amoeba symbol set (a .trees file, one tree a line, ID = line); empty = the "
               "built-in set"),
    OPT_FLOAT("fiducials", "finger_size", finger_size, "0", 0, 500, true, 'F', "PX",
              "expected finger diameter in pixels; 0 = no finger tracking"),
    OPT_FLOAT("fiducials", "finger_sensitivity", finger_sensitivity, "0.5", 0, 1, true, 0, "X",
              "0..1: higher accepts less round fingers"),
    OPT_INT("fiducials", "finger_contrast", finger_contrast, "16", 0, 255, true, 0, "N",
            "minimum grey-level difference between a finger and its surround; on a frame read at a gate "
            "lowered for its grey range (gate_range), scaled down with the gate"),
    OPT_FLOAT("fiducials", "blob_min", blob_min, "0", 0, 16384, true, 0, "PX",
              "smallest blob reported, in pixels (the larger of width and height)"),
    OPT_FLOAT("fiducials", "blob_max", blob_max, "0", 0, 16384, true, 0, "PX",
              "largest blob reported, in pixels; 0 = no blob tracking"),
    OPT_BOOL("fiducials", "contours", contours, "false", false, 0,
             "send the outline of every finger, blob and hand as TUIO 2.0 /tuio2/ocg (and "
             "/tuio2/icg for holes) on ,tuio2 targets"),
    OPT_FLOAT("fiducials", "contour_tolerance", contour_tolerance, "1", 0.05, 50, true, 0, "PX",
              "outlines are simplified until no point is further than this from them"),
    OPT_INT("fiducials", "contour_points", contour_points, "32", 4, 128, false, 0, "N",
            "most points of one outline (the tolerance grows until it fits)"),
    OPT_INT("fiducials", "max_contours", max_contours, "256", 1, 4096, false, 0, "N",
            "most outlines a frame; more are dropped"),
    OPT_FLOAT("fiducials", "touch_sharpness", touch_sharpness, "0", 0, 2, true, 0, "PER_PX",
              "a finger whose outline is at least this sharp (steepest grey step over the "
              "edge's contrast, per pixel) touches the surface, a blurred one hovers and is no "
              "cursor; 0 = no touch test"),
    OPT_BOOL("fiducials", "hover_pointers", hover_pointers, "false", true, 0,
             "send hovering fingers as TUIO 2.0 /tuio2/ptr with pressure 0 (never as 2Dcur)"),
    OPT_BOOL("fiducials", "hands", hands, "false", true, 0,
             "find hands (big bright regions with fingertips at their ends; needs finger_size): "
             "fingertips become fingers carrying the hand's session, palms and arms never do"),
    OPT_BOOL("fiducials", "complete", complete, "false", true, 0,
             "read a symbol 1-2 nodes short (motion, blur) as the one ID of the set whose tree can "
             "have lost them (trees of 16+ nodes); more symbols found, but their angle and centre "
             "are off by up to ~20 degrees and ~1 px"),

    OPT_INT("tracking", "linger_frames", linger_frames, "2", 0, 10, true, 0, "N",
            "frames a lost object is kept at its predicted place before it is removed"),
    OPT_FLOAT("tracking", "dead_band_px", dead_band_px, "0.5", 0, 50, true, 0, "PX",
              "resting objects: moves shorter than this are not reported"),
    OPT_FLOAT("tracking", "dead_band_deg", dead_band_deg, "0.5", 0, 45, true, 0, "DEG",
              "resting objects: turns smaller than this are not reported"),
    OPT_BOOL("tracking", "invert_x", invert_x, "false", true, 0, "mirror x positions"),
    OPT_BOOL("tracking", "invert_y", invert_y, "false", true, 0, "mirror y positions"),
    OPT_BOOL("tracking", "invert_angle", invert_angle, "false", true, 0, "reverse the direction of angles"),
    OPT_BOOL("tracking", "object_blobs", object_blobs, "false", true, 0,
             "also send every symbol as a /tuio/2Dblb blob with the symbol's session ID"),
    OPT_BOOL("tracking", "finger_blobs", finger_blobs, "false", true, 0,
             "also send every finger as a /tuio/2Dblb blob with the finger's session ID"),
    OPT_STRING("tracking", "grid", grid, "", false, 0, "FILE",
               "calibration grid file (the window's W writes it); empty = beside the config file "
               "with .grid for its extension (~/.config/tabletrack/tabletrack.grid without one), "
               "read when it exists; no file = no correction"),
    OPT_BOOL("tracking", "euro", euro_enabled, "false", true, 0,
             "smooth positions and angles with a One Euro filter"),
    OPT_FLOAT("tracking", "euro_min_cutoff", euro_min_cutoff, "1", 0.01, 100, true, 0, "HZ",
              "One Euro minimum cutoff frequency: lower is smoother at rest"),
    OPT_FLOAT("tracking", "euro_beta", euro_beta, "0.007", 0, 10, true, 0, "X",
              "One Euro speed coefficient: higher lags less when moving"),
    OPT_FLOAT("tracking", "euro_d_cutoff", euro_d_cutoff, "1", 0.01, 100, true, 0, "HZ",
              "One Euro cutoff frequency of the speed estimate"),

    {.name = "tuio",
     .section = "tuio",
     .type = CONFIG_LIST,
     .def = "udp:127.0.0.1:3333",
     .short_opt = 't',
     .metavar = "TARGET",
     .help = "where TUIO goes: udp:HOST:PORT, tcp:HOST:PORT, tcp:listen:ADDR:PORT or "
             "ws:listen:ADDR:PORT, each optionally followed by ,tuio2; repeat for more "
             "targets (at most 8); empty = udp:127.0.0.1:3333",
     .offset = offsetof(struct tt_config, tuio),
     .size = FIELD_SIZE(tuio[0]),
     .count_offset = offsetof(struct tt_config, n_tuio),
     .max_count = CONFIG_MAX_TUIO},
    OPT_STRING("tuio", "source_name", source_name, "", false, 0, "NAME",
               "TUIO source name; empty = tabletrack@HOSTNAME"),
    OPT_INT("tuio", "refresh_ms", refresh_ms, "1000", 0, 60000, true, 0, "MS",
            "period of full-state resends in milliseconds; 0 = never"),
    OPT_INT("tuio", "max_datagram", max_datagram, "1472", 256, 65507, false, 0, "BYTES",
            "largest UDP datagram; bigger frames are split into several bundles"),
    OPT_INT("tuio", "max_clients", max_clients, "16", 1, 256, false, 0, "N",
            "clients each tcp:listen / ws:listen target serves at once"),
    OPT_INT("tuio", "clients_per_address", clients_per_address, "8", 0, 256, false, 0, "N",
            "connections one address may hold on a listening target (its oldest makes room "
            "for its newest); 0 = no limit"),

    OPT_STRING("objects", "objects", objects, "", false, 0, "FILE",
               "object library (tabletrack-objects learn writes it) of untagged objects recognised by "
               "their look; empty = none. Checked at start (needs a build with OpenCV; every ID within "
               "object_id_min..object_id_max). Recognised on a worker thread at object_rate, sent as "
               "/tuio/2Dobj with their IDs and TUIO 2.0 tok with type object_type_id"),
    OPT_INT("objects", "object_id_min", object_id_min, "1000", 0, 1000000000, false, 0, "N",
            "lowest object ID; must be above every fiducial ID (the symbol set's size - 1), which is "
            "checked at start"),
    OPT_INT("objects", "object_id_max", object_id_max, "1999", 0, 1000000000, false, 0, "N",
            "highest object ID (at least object_id_min)"),
    OPT_FLOAT("objects", "object_rate", object_rate, "4", 0.1, 60, false, 0, "HZ",
              "recognitions a second at most; each runs on its own thread on the newest frame while "
              "symbols are tracked every frame, and a frame is only copied for it when the worker is idle"),
    OPT_INT("objects", "object_hold_ms", object_hold_ms, "1000", 10, 60000, false, 0, "MS",
            "a recognised object is kept this long without being recognised again, then it is lost "
            "(and lingers like a lost symbol)"),
    OPT_BOOL("objects", "object_follow", object_follow, "true", false, 0,
             "between recognitions, follow each recognised object through the segmented regions under "
             "it (it moves and turns with them, and is dropped when they vanish); off: it keeps its "
             "last recognised pose"),
    OPT_INT("objects", "object_keypoints", object_keypoints, "2000", 100, 16384, false, 0, "N",
            "SIFT keypoints of a frame, the strongest (bounds the worker's memory and matching time)"),
    OPT_INT("objects", "object_type_id", object_type_id, "1", 0, 65535, false, 0, "N",
            "TUIO 2.0 type ID of recognised objects (tok's tu_id is type << 16); symbols have type 0"),

    OPT_BOOL("daemon", "headless", headless, "false", false, 'H', "run without a window"),
    OPT_BOOL("daemon", "window", window, "false", false, 'w',
             "open the calibration window (without a display: headless, with a warning)"),
    OPT_BOOL("daemon", "fullscreen", fullscreen, "false", false, 0, "open the window full screen"),
    OPT_BOOL("daemon", "stats", stats, "false", true, 'S',
             "log per-stage timing (median, p99) now and then, and at exit also the CPU time a frame "
             "by thread and by step and the frames over twice the median by the step that made them"),
    OPT_BOOL("daemon", "verbose", verbose, "false", true, 'v', "log debug messages too"),
    OPT_BOOL("daemon", "quiet", quiet, "false", true, 'q', "log warnings and errors only"),
    OPT_STRING("daemon", "dump", dump, "", false, 'd', "DIR",
               "write every stage's image and data for each frame into DIR; empty = off"),
    OPT_BOOL("daemon", "list_cameras", list_cameras, "false", false, 'L',
             "list the V4L2 cameras and their formats, then exit"),
};

#define N_OPTIONS ((int)(sizeof(options) / sizeof(options[0])))

static const char *const sections[] = {"source", "threshold", "fiducials", "tracking", "tuio", "objects", "daemon"};
#define N_SECTIONS ((int)(sizeof(sections) / sizeof(sections[0])))

static _Thread_local char last_error[CONFIG_ERROR_LEN];

const char *config_last_error(void)
{
	return last_error;
}

const struct config_option *config_option_at(int i)
{
	return i >= 0 && i < N_OPTIONS ? &options[i] : NULL;
}

/* Keys compare with dashes and underscores alike and in any case, so that
 * "finger-size", "FINGER_SIZE" and "finger_size" are one key. */
static bool key_equal(const char *a, const char *b)
{
	for (;; a++, b++) {
		char x = *a == '-' ? '_' : (char)tolower((unsigned char)*a);
		char y = *b == '-' ? '_' : (char)tolower((unsigned char)*b);
		if (x != y)
			return false;
		if (!x)
			return true;
	}
}

const struct config_option *config_find(const char *key)
{
	if (!key)
		return NULL;
	for (int i = 0; i < N_OPTIONS; i++)
		if (key_equal(options[i].name, key))
			return &options[i];
	return NULL;
}

static void *field_of(struct tt_config *c, const struct config_option *o)
{
	return (char *)c + o->offset;
}

static const void *cfield_of(const struct tt_config *c, const struct config_option *o)
{
	return (const char *)c + o->offset;
}

/* --- parsing one value ------------------------------------------------- */

static void trim_copy(const char *in, char *out, size_t cap)
{
	while (isspace((unsigned char)*in))
		in++;
	size_t n = strlen(in);
	while (n && isspace((unsigned char)in[n - 1]))
		n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, in, n);
	out[n] = 0;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"1", "true", "yes", "on"};
	static const char *const no[] = {"0", "false", "no", "off"};
	for (int i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return ERR_CONFIG;
}

/* True when s is one of the '|'-separated words of set. */
static bool in_set(const char *set, const char *s)
{
	size_t n = strlen(s);
	for (const char *p = set; *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, s, n))
			return true;
		if (!bar)
			break;
		p = bar + 1;
	}
	return false;
}

static bool has_control_chars(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* Extra rules that a type and range cannot say. */
static int check_special(const struct config_option *o, const char *v, char *msg, size_t cap)
{
	if (!strcmp(o->name, "gauss")) {
		double s = strtod(v, NULL);
		if (s != 0 && s < 0.3) {
			snprintf(msg, cap, "%.100s must be 0 (off) or 0.3..4", v);
			return ERR_CONFIG;
		}
	} else if (!strcmp(o->name, "format")) {
		size_t n = strlen(v), alnum = strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");
		if (strcasecmp(v, "auto") && (n < 1 || n > 4 || alnum != n)) {
			snprintf(msg, cap, "'%.100s' is not auto, max, min or a fourcc of 1 to 4 letters and digits",
			         v);
			return ERR_CONFIG;
		}
	}
	return 0;
}

static int check_tuio_target(const char *t, size_t cap, char *msg, size_t msg_cap)
{
	if (strlen(t) >= cap) {
		snprintf(msg, msg_cap, "target '%.40s...' is too long (at most %zu characters)", t, cap - 1);
		return ERR_CONFIG;
	}
	if (strncmp(t, "udp:", 4) && strncmp(t, "tcp:", 4) && strncmp(t, "ws:", 3)) {
		snprintf(msg, msg_cap,
		         "'%.200s' is not a target (udp:HOST:PORT, tcp:HOST:PORT, "
		         "tcp:listen:ADDR:PORT or ws:listen:ADDR:PORT)",
		         t);
		return ERR_CONFIG;
	}
	return 0;
}

/* Sets a list from space-separated targets; appends when `append`. */
static int apply_list(struct tt_config *c, const struct config_option *o, const char *value, bool append,
                      char *msg, size_t cap)
{
	char *items = field_of(c, o);
	int *count = (int *)((char *)c + o->count_offset);
	int n = append ? *count : 0;
	const char *p = value;
	char word[CONFIG_ERROR_LEN];
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		size_t len = 0;
		while (p[len] && !isspace((unsigned char)p[len]))
			len++;
		if (len >= sizeof(word))
			len = sizeof(word) - 1;
		memcpy(word, p, len);
		word[len] = 0;
		while (*p && !isspace((unsigned char)*p))
			p++;
		int rc = check_tuio_target(word, o->size, msg, cap);
		if (rc)
			return rc;
		if (n >= o->max_count) {
			snprintf(msg, cap, "more than %d targets", o->max_count);
			return ERR_CONFIG;
		}
		memcpy(items + (size_t)n * o->size, word, strlen(word) + 1);
		n++;
	}
	*count = n;
	return 0;
}

/* The word of an integer key (case-insensitive), or NULL. */
static const struct config_word *find_word(const struct config_option *o, const char *v)
{
	for (const struct config_word *w = o->words; w && w->word; w++)
		if (!strcasecmp(w->word, v))
			return w;
	return NULL;
}

static const char *word_of_value(const struct config_option *o, int x)
{
	for (const struct config_word *w = o->words; w && w->word; w++)
		if (w->value == x)
			return w->word;
	return NULL;
}

/* "auto, max or min" */
static void list_words(const struct config_option *o, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = 0;
	for (const struct config_word *w = o->words; w && w->word && used < cap; w++) {
		const char *sep = w == o->words ? "" : w[1].word ? ", " : " or ";
		used += (size_t)snprintf(buf + used, cap - used, "%s%s", sep, w->word);
	}
}

static int apply(struct tt_config *c, const struct config_option *o, const char *raw, bool append, char *msg,
                 size_t cap)
{
	char v[2 * CONFIG_PATH_LEN];
	if (!raw)
		raw = "";
	if (strlen(raw) >= sizeof(v)) {
		snprintf(msg, cap, "the value is too long (%zu characters)", strlen(raw));
		return ERR_CONFIG;
	}
	if (has_control_chars(raw)) {
		snprintf(msg, cap, "the value contains control characters");
		return ERR_CONFIG;
	}
	trim_copy(raw, v, sizeof(v));
	void *dst = field_of(c, o);
	switch (o->type) {
	case CONFIG_BOOL: {
		bool b;
		if (parse_bool(v, &b)) {
			snprintf(msg, cap, "'%.100s' is not a boolean (true|false|yes|no|on|off|1|0)", v);
			return ERR_CONFIG;
		}
		*(bool *)dst = b;
		return 0;
	}
	case CONFIG_INT: {
		const struct config_word *w = find_word(o, v);
		if (w) {
			*(int *)dst = w->value;
			return 0;
		}
		char *end;
		errno = 0;
		long x = strtol(v, &end, 10);
		if (!*v || *end || errno) {
			if (o->words) {
				char words[128];
				list_words(o, words, sizeof(words));
				snprintf(msg, cap, "'%.100s' is not a number, %s", v, words);
			} else {
				snprintf(msg, cap, "'%.100s' is not an integer", v);
			}
			return ERR_CONFIG;
		}
		if (x < o->min || x > o->max) {
			snprintf(msg, cap, "%.100s is out of range %.0f..%.0f", v, o->min, o->max);
			return ERR_CONFIG;
		}
		if (o->values && !in_set(o->values, v)) {
			snprintf(msg, cap, "%.100s is not one of %s", v, o->values);
			return ERR_CONFIG;
		}
		int rc = check_special(o, v, msg, cap);
		if (rc)
			return rc;
		*(int *)dst = (int)x;
		return 0;
	}
	case CONFIG_FLOAT: {
		char *end;
		errno = 0;
		float x = strtof(v, &end);
		if (!*v || *end || errno || !isfinite(x)) {
			snprintf(msg, cap, "'%.100s' is not a number", v);
			return ERR_CONFIG;
		}
		if (x < o->min || x > o->max) {
			snprintf(msg, cap, "%.100s is out of range %g..%g", v, o->min, o->max);
			return ERR_CONFIG;
		}
		int rc = check_special(o, v, msg, cap);
		if (rc)
			return rc;
		*(float *)dst = x;
		return 0;
	}
	case CONFIG_STRING: {
		if (strlen(v) >= o->size) {
			snprintf(msg, cap, "the value is too long (%zu characters, at most %zu)", strlen(v),
			         o->size - 1);
			return ERR_CONFIG;
		}
		int rc = check_special(o, v, msg, cap);
		if (rc)
			return rc;
		/* The format's words are stored as words, never as fourccs ("MAX"). */
		if (!strcmp(o->name, "format") &&
		    (!strcasecmp(v, "auto") || !strcasecmp(v, "max") || !strcasecmp(v, "min")))
			for (char *p = v; *p; p++)
				*p = (char)tolower((unsigned char)*p);
		memcpy(dst, v, strlen(v) + 1);
		return 0;
	}
	case CONFIG_ENUM:
		if (!in_set(o->values, v) || strlen(v) >= o->size) {
			snprintf(msg, cap, "'%.100s' is not one of %s", v, o->values);
			return ERR_CONFIG;
		}
		memcpy(dst, v, strlen(v) + 1);
		return 0;
	case CONFIG_LIST:
		return apply_list(c, o, v, append, msg, cap);
	}
	snprintf(msg, cap, "internal error: unknown type");
	return ERR_CONFIG;
}

static void set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Logs one problem; keeps the first one of a call in last_error. */
static _Thread_local bool have_error;

static void set_error(const char *fmt, ...)
{
	char buf[CONFIG_ERROR_LEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_error("%s", buf);
	if (!have_error) {
		memcpy(last_error, buf, sizeof(buf));
		have_error = true;
	}
}

/* Each public entry starts a new error report. */
static void begin_call(void)
{
	have_error = false;
	last_error[0] = 0;
}

int config_set(struct tt_config *c, const char *key, const char *value)
{
	begin_call();
	const struct config_option *o = config_find(key);
	if (!o) {
		set_error("%s: unknown key", key ? key : "(null)");
		return ERR_CONFIG;
	}
	char msg[CONFIG_ERROR_LEN];
	int rc = apply(c, o, value, false, msg, sizeof(msg));
	if (rc)
		set_error("%s: %s", o->name, msg);
	return rc;
}

void config_defaults(struct tt_config *c)
{
	memset(c, 0, sizeof(*c));
	for (int i = 0; i < N_OPTIONS; i++) {
		char msg[CONFIG_ERROR_LEN];
		if (apply(c, &options[i], options[i].def, false, msg, sizeof(msg)))
			log_error("config: bad default for %s: %s", options[i].name, msg);
	}
}

int config_check(const struct tt_config *c)
{
	begin_call();
	int rc = 0;
	if (c->blob_max > 0 && c->blob_max < c->blob_min) {
		set_error("blob_max: %g is smaller than blob_min %g (0 turns blobs off)", (double)c->blob_max,
		          (double)c->blob_min);
		rc = ERR_CONFIG;
	}
	if (c->object_id_max < c->object_id_min) {
		set_error("object_id_max: %d is smaller than object_id_min %d", c->object_id_max, c->object_id_min);
		rc = ERR_CONFIG;
	}
	if (c->headless && c->window) {
		set_error("headless: headless and window exclude each other");
		rc = ERR_CONFIG;
	}
	return rc;
}

/* --- formatting -------------------------------------------------------- */

/* Shortest text that reads back as the same float. */
static void format_float(float x, char *buf, size_t cap)
{
	for (int prec = 1; prec <= 9; prec++) {
		snprintf(buf, cap, "%.*g", prec, (double)x);
		if (strtof(buf, NULL) == x)
			return;
	}
}

static int format_value(const struct tt_config *c, const struct config_option *o, char *buf, size_t cap)
{
	const void *src = cfield_of(c, o);
	int n = 0;
	switch (o->type) {
	case CONFIG_BOOL:
		n = snprintf(buf, cap, "%s", *(const bool *)src ? "true" : "false");
		break;
	case CONFIG_INT: {
		const char *w = word_of_value(o, *(const int *)src);
		n = w ? snprintf(buf, cap, "%s", w) : snprintf(buf, cap, "%d", *(const int *)src);
		break;
	}
	case CONFIG_FLOAT: {
		char tmp[64];
		format_float(*(const float *)src, tmp, sizeof(tmp));
		n = snprintf(buf, cap, "%s", tmp);
		break;
	}
	case CONFIG_STRING:
	case CONFIG_ENUM:
		n = snprintf(buf, cap, "%s", (const char *)src);
		break;
	case CONFIG_LIST: {
		const char *items = src;
		int count = *(const int *)((const char *)c + o->count_offset);
		size_t used = 0;
		if (cap)
			buf[0] = 0;
		for (int i = 0; i < count; i++) {
			int m = snprintf(buf + (used < cap ? used : cap), used < cap ? cap - used : 0, "%s%s",
			                 i ? " " : "", items + (size_t)i * o->size);
			used += (size_t)m;
		}
		n = (int)used;
		break;
	}
	}
	return n >= 0 && (size_t)n < cap ? 0 : ERR_RANGE;
}

int config_get(const struct tt_config *c, const char *key, char *buf, size_t cap)
{
	const struct config_option *o = config_find(key);
	if (!o)
		return ERR_CONFIG;
	return format_value(c, o, buf, cap);
}

int config_diff(const struct tt_config *was, const struct tt_config *now, enum config_diff_rows rows,
		config_diff_fn *fn, void *ctx)
{
	int n = 0;
	for (int i = 0; config_option_at(i); i++) {
		const struct config_option *o = config_option_at(i);
		if ((rows == CONFIG_DIFF_LIVE && !o->live) || (rows == CONFIG_DIFF_RESTART && o->live))
			continue;
		char a[CONFIG_PATH_LEN], b[CONFIG_PATH_LEN];
		/* A value too long to format is left out, never reported half. */
		if (format_value(was, o, a, sizeof a) || format_value(now, o, b, sizeof b) || strcmp(a, b) == 0)
			continue;
		n++;
		if (fn)
			fn(o, a, b, ctx);
	}
	return n;
}

/* Writes text as comment lines ("# ...") wrapped at `width` columns, each
 * line starting with `indent` spaces (or "# " when comment). */
static void write_wrapped(FILE *out, const char *text, int first_col, int indent, int width, bool comment)
{
	int col = first_col;
	const char *p = text;
	bool line_empty = true;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		int len = 0;
		while (p[len] && p[len] != ' ')
			len++;
		if (!line_empty && col + 1 + len > width) {
			fputc('\n', out);
			if (comment)
				col = fprintf(out, "#");
			else
				col = fprintf(out, "%*s", indent, "");
			line_empty = true;
		}
		if (!line_empty || comment) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, (size_t)len, out);
		col += len;
		line_empty = false;
		p += len;
	}
	fputc('\n', out);
}

static void describe_default(const struct config_option *o, char *buf, size_t cap)
{
	const char *def = o->def;
	switch (o->type) {
	case CONFIG_BOOL:
		snprintf(buf, cap, "boolean, default %s", def);
		break;
	case CONFIG_INT:
		if (o->values) {
			snprintf(buf, cap, "%s, default %s", o->values, def);
		} else if (o->words) {
			char words[128];
			list_words(o, words, sizeof(words));
			snprintf(buf, cap, "integer %.0f..%.0f, %s, default %s", o->min, o->max, words, def);
		} else {
			snprintf(buf, cap, "integer %.0f..%.0f, default %s", o->min, o->max, def);
		}
		break;
	case CONFIG_FLOAT:
		snprintf(buf, cap, "number %g..%g, default %s", o->min, o->max, def);
		break;
	case CONFIG_ENUM:
		snprintf(buf, cap, "%s, default %s", o->values, def);
		break;
	case CONFIG_STRING:
	case CONFIG_LIST:
		snprintf(buf, cap, "default %s", *def ? def : "empty");
		break;
	}
	if (o->live)
		snprintf(buf + strlen(buf), cap - strlen(buf), "; live");
}

/* One "key = value" line that config_load_* reads back: without the spaces
 * when they would push it past CONFIG_MAX_LINE (a value loaded from a file
 * line that used "key=value" fills it), and as a comment when even that
 * does not fit (a long path given on the command line). */
static void print_key_value(FILE *out, const char *name, const char *value)
{
	size_t n = strlen(name), v = strlen(value);
	/* inih cuts a value at a ';' that follows whitespace (an inline comment) */
	bool cut = false;
	for (size_t i = 1; i < v && !cut; i++)
		cut = value[i] == ';' && isspace((unsigned char)value[i - 1]);
	if (!cut && value[0] != ';' && n + 3 + v <= CONFIG_MAX_LINE)
		fprintf(out, "%s =%s%s\n", name, v ? " " : "", value);
	else if (!cut && n + 1 + v <= CONFIG_MAX_LINE)
		fprintf(out, "%s=%s\n", name, value);
	else
		fprintf(out, "# %s: the value (%zu characters) cannot be written as a config line; give it on the command line\n",
			name, v);
}

void config_print(const struct tt_config *c, FILE *out)
{
	config_print_marked(c, out, NULL, NULL, NULL, NULL);
}

static void print_value(const struct tt_config *c, const struct config_option *o, FILE *out, const char *hash);

void config_print_marked(const struct tt_config *c, FILE *out, config_mark_fn *mark, void *ctx, const char *note,
			 const struct tt_config *alt)
{
	fprintf(out,
	        "# tabletrack configuration.\n"
	        "#\n"
	        "# Written by tabletrack --print-config: every key, with its help, its range\n"
	        "# and its default. Keys may use dashes or underscores; the command line\n"
	        "# (--finger-size 12) overrides this file. \"live\" keys can be changed while\n"
	        "# running, from the window. A line may hold at most %d characters.\n",
	        CONFIG_MAX_LINE);
	const char *section = NULL;
	for (int i = 0; i < N_OPTIONS; i++) {
		const struct config_option *o = &options[i];
		if (!section || strcmp(section, o->section)) {
			section = o->section;
			fprintf(out, "\n[%s]\n", section);
		}
		char desc[256];
		fprintf(out, "\n#");
		write_wrapped(out, o->help, 1, 0, 78, true);
		describe_default(o, desc, sizeof(desc));
		fprintf(out, "# (%s)\n", desc);
		bool marked = mark && mark(o, ctx);
		if (marked)
			fprintf(out, "# %s\n", note ? note : "not saved");
		print_value(c, o, out, marked ? "# " : "");
		if (marked && alt)
			print_value(alt, o, out, "");
	}
}

static void print_value(const struct tt_config *c, const struct config_option *o, FILE *out, const char *hash)
{
	if (o->type == CONFIG_LIST) {
		const char *items = cfield_of(c, o);
		int count = *(const int *)((const char *)c + o->count_offset);
		if (!count)
			fprintf(out, "%s%s =\n", hash, o->name);
		for (int k = 0; k < count; k++) {
			fputs(hash, out);
			print_key_value(out, o->name, items + (size_t)k * o->size);
		}
		return;
	}
	fputs(hash, out);
	char value[CONFIG_PATH_LEN + 16];
	format_value(c, o, value, sizeof(value));
	print_key_value(out, o->name, value);
}

static void dashed(const char *name, char *out, size_t cap)
{
	size_t i = 0;
	for (; name[i] && i + 1 < cap; i++)
		out[i] = name[i] == '_' ? '-' : name[i];
	out[i] = 0;
}

static void help_line(FILE *out, char sh, const char *lng, const char *metavar, const char *text)
{
	char head[96];
	int n;
	if (sh)
		n = snprintf(head, sizeof(head), "  -%c, --%s", sh, lng);
	else
		n = snprintf(head, sizeof(head), "      --%s", lng);
	if (metavar)
		snprintf(head + n, sizeof(head) - (size_t)n, " %s", metavar);
	fputs(head, out);
	int col = (int)strlen(head);
	if (col >= 31) {
		fputc('\n', out);
		col = 0;
	}
	fprintf(out, "%*s", 31 - col, "");
	write_wrapped(out, text, 31, 31, 79, false);
}

void config_print_help(FILE *out, const char *prog)
{
	fprintf(out,
	        "Usage: %s [OPTION]...\n"
	        "Tracks amoeba fiducials, fingers and blobs on a tabletop camera and sends them\n"
	        "as TUIO.\n\n"
	        "Every option can also be set in the config file (--config FILE, else\n"
	        "$TABLETRACK_CONFIG, else ~/.config/tabletrack/tabletrack.conf when it\n"
	        "exists: what the window's K saves) under its [section], with underscores\n"
	        "or dashes. The command line overrides the file. Options marked \"live\" can\n"
	        "be changed while running. Exit status: 0 done, 78 bad configuration, 1 other\n"
	        "failure.\n\n"
	        "General:\n",
	        prog ? prog : "tabletrack");
	help_line(out, 'h', "help", NULL, "show this help and exit");
	help_line(out, 'V', "version", NULL, "show the version and exit");
	help_line(out, 'c', "config", "FILE",
	          "load FILE before the other options, wherever it stands (default: "
	          "$TABLETRACK_CONFIG, else $XDG_CONFIG_HOME/tabletrack/tabletrack.conf "
	          "(~/.config/...) when it exists, else none)");
	help_line(out, 0, "print-config", NULL,
	          "write the effective configuration as a commented config file to standard "
	          "output, and exit");
	const char *section = NULL;
	for (int i = 0; i < N_OPTIONS; i++) {
		const struct config_option *o = &options[i];
		if (!section || strcmp(section, o->section)) {
			section = o->section;
			fprintf(out, "\n[%s]\n", section);
		}
		char lng[64], text[1024], desc[256];
		dashed(o->name, lng, sizeof(lng));
		describe_default(o, desc, sizeof(desc));
		snprintf(text, sizeof(text), "%s (%s)", o->help, desc);
		const char *mv = o->type == CONFIG_BOOL ? NULL : o->metavar;
		if (o->type == CONFIG_BOOL) {
			char flag[80];
			snprintf(flag, sizeof(flag), "%s[=no]", lng);
			help_line(out, o->short_opt, flag, NULL, text);
		} else {
			help_line(out, o->short_opt, lng, mv ? mv : "VALUE", text);
		}
	}
}

/* --- the config file ---------------------------------------------------- */

struct loader {
	struct tt_config *c;
	const char *name; /* file name in messages */
	FILE *f;          /* file source, or */
	const char *s;    /* string source */
	int line;         /* of the line inih parses now */
	int n_errors;
	int first_error_line;
	bool seen[N_OPTIONS]; /* lists: the first occurrence replaces */
};

static void loader_error(struct loader *l, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void loader_error(struct loader *l, int line, const char *fmt, ...)
{
	char buf[CONFIG_ERROR_LEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	set_error("%s:%d: %s", l->name, line, buf);
	if (!l->n_errors++)
		l->first_error_line = line;
}

#if TT_HAVE_INIH
/* fgets-style reader over a file or a string. It reads whole lines itself,
 * because inih would silently treat the rest of an over-long line as a new
 * line; here an over-long line is reported and skipped. */
static char *loader_read(char *str, int num, void *stream)
{
	struct loader *l = stream;
	if (num < 3)
		return NULL;
	size_t cap = (size_t)num - 2, n = 0;
	bool any = false, too_long = false, nul = false;
	for (;;) {
		int ch;
		if (l->f) {
			ch = getc(l->f);
			if (ch == EOF)
				break;
		} else {
			if (!*l->s)
				break;
			ch = (unsigned char)*l->s++;
		}
		any = true;
		if (ch == '\n')
			break;
		if (ch == 0) {
			nul = true;
			continue;
		}
		if (n < cap)
			str[n++] = (char)ch;
		else
			too_long = true;
	}
	if (!any)
		return NULL;
	l->line++;
	if (too_long || nul) {
		if (too_long)
			loader_error(l, l->line, "line longer than %d characters", num - 3);
		else
			loader_error(l, l->line, "line contains a NUL byte");
		n = 0;
	}
	str[n++] = '\n';
	str[n] = 0;
	return str;
}

static bool known_section(const char *s)
{
	for (int i = 0; i < N_SECTIONS; i++)
		if (key_equal(sections[i], s))
			return true;
	return false;
}

#if INI_HANDLER_LINENO
static int loader_handle(void *user, const char *section, const char *name, const char *value, int lineno)
#else
static int loader_handle(void *user, const char *section, const char *name, const char *value)
#endif
{
	struct loader *l = user;
	int line = l->line;
	const struct config_option *o = config_find(name);
	if (*section && !known_section(section)) {
		loader_error(l, line, "%s: unknown section [%s]", name, section);
		return 1;
	}
	if (!o) {
		loader_error(l, line, "%s: unknown key", name);
		return 1;
	}
	if (*section && !key_equal(section, o->section)) {
		loader_error(l, line, "%s: belongs in [%s], not [%s]", o->name, o->section, section);
		return 1;
	}
	int idx = (int)(o - options);
	bool append = o->type == CONFIG_LIST && l->seen[idx];
	if (append && (!value || !*value))
		return 1;
	l->seen[idx] = true;
	char msg[CONFIG_ERROR_LEN];
	if (apply(l->c, o, value, append, msg, sizeof(msg)))
		loader_error(l, line, "%s: %s", o->name, msg);
	/* Errors are counted here, not returned to inih, whose line number
	 * would only name the first one. */
	return 1;
}

#endif

static int parse(struct loader *l)
{
#if TT_HAVE_INIH
	return ini_parse_stream(loader_read, l, loader_handle, l);
#else
	(void)sections;
	set_error("%s: config files need libinih, which this build lacks "
		  "(command-line options work; rebuild with libinih-dev)",
		  l->name);
	return ERR_UNSUPPORTED;
#endif
}

static int load(struct tt_config *c, struct loader *l)
{
	struct tt_config tmp = *c;
	l->c = &tmp;
	int rc = parse(l);
	if (rc == ERR_UNSUPPORTED)
		return rc;
	if (rc > 0 && (!l->n_errors || rc < l->first_error_line))
		loader_error(l, rc, "syntax error: expected [section], key = value or a comment");
	else if (rc > 0)
		l->n_errors++;
	if (rc < 0) {
		set_error("%s: cannot parse (out of memory)", l->name);
		return ERR_NOMEM;
	}
	if (l->n_errors)
		return ERR_CONFIG;
	if (config_check(&tmp)) {
		char first[CONFIG_ERROR_LEN];
		memcpy(first, last_error, sizeof(first));
		begin_call();
		set_error("%s: %s", l->name, first);
		return ERR_CONFIG;
	}
	*c = tmp;
	return 0;
}

int config_load_string(struct tt_config *c, const char *text, const char *name)
{
	begin_call();
	struct loader l = {.name = name ? name : "(string)", .s = text ? text : ""};
	return load(c, &l);
}

int config_load_file(struct tt_config *c, const char *path)
{
	begin_call();
	FILE *f = NULL;
	const char *why = "";
	if (file_open_regular(path, &f, &why)) {
		set_error("%s: cannot open: %s", path, why);
		return ERR_IO;
	}
	struct loader l = {.name = path, .f = f};
	int rc = load(c, &l);
	if (!rc && ferror(f)) {
		set_error("%s: read error", path);
		rc = ERR_IO;
	}
	fclose(f);
	return rc;
}

/* --- the command line --------------------------------------------------- */

enum { ID_HELP = 1000, ID_VERSION, ID_CONFIG, ID_PRINT, ID_FIRST_OPTION };

struct cli {
	struct option longopts[N_OPTIONS + 5];
	char names[N_OPTIONS][64];
	char shorts[3 * N_OPTIONS + 16];
};

static void cli_build(struct cli *cli)
{
	int k = 0;
	char *s = cli->shorts;
	*s++ = '+'; /* no permutation: argv stays as given, for a reload */
	*s++ = ':'; /* a missing value returns ':' */
	cli->longopts[k++] = (struct option){"help", no_argument, NULL, ID_HELP};
	cli->longopts[k++] = (struct option){"version", no_argument, NULL, ID_VERSION};
	cli->longopts[k++] = (struct option){"config", required_argument, NULL, ID_CONFIG};
	cli->longopts[k++] = (struct option){"print-config", no_argument, NULL, ID_PRINT};
	strcpy(s, "hVc:");
	s += 4;
	for (int i = 0; i < N_OPTIONS; i++) {
		const struct config_option *o = &options[i];
		dashed(o->name, cli->names[i], sizeof(cli->names[i]));
		bool flag = o->type == CONFIG_BOOL;
		cli->longopts[k++] = (struct option){
		    cli->names[i], flag ? optional_argument : required_argument, NULL, ID_FIRST_OPTION + i};
		if (o->short_opt) {
			*s++ = o->short_opt;
			if (!flag)
				*s++ = ':';
		}
	}
	*s = 0;
	cli->longopts[k] = (struct option){0, 0, 0, 0};
}

/* Maps getopt's return value to a table index, or -1. */
static int cli_index(int id)
{
	if (id >= ID_FIRST_OPTION && id < ID_FIRST_OPTION + N_OPTIONS)
		return id - ID_FIRST_OPTION;
	for (int i = 0; i < N_OPTIONS; i++)
		if (options[i].short_opt && options[i].short_opt == id)
			return i;
	return -1;
}

static int cli_map_builtin(int id)
{
	switch (id) {
	case 'h':
		return ID_HELP;
	case 'V':
		return ID_VERSION;
	case 'c':
		return ID_CONFIG;
	default:
		return id;
	}
}

int config_parse_args(struct tt_config *c, int argc, char **argv)
{
	begin_call();
	char *no_args[] = {NULL}; /* getopt must not be handed a NULL argv */
	if (argc <= 0 || !argv) {
		argc = 0;
		argv = no_args;
	}
	struct cli cli;
	cli_build(&cli);
	const char *prog = argc > 0 && argv[0] ? argv[0] : "tabletrack";
	const char *slash = strrchr(prog, '/');
	if (slash)
		prog = slash + 1;

	/* Pass 1: --help, --version and --config, wherever they stand. */
	const char *config_path = NULL;
	opterr = 0;
	optind = 0;
	for (;;) {
		int id = getopt_long(argc, argv, cli.shorts, cli.longopts, NULL);
		if (id == -1)
			break;
		id = cli_map_builtin(id);
		if (id == ID_HELP) {
			config_print_help(stdout, prog);
			return 1;
		}
		if (id == ID_VERSION) {
			printf("tabletrack " TT_VERSION "\n");
			return 1;
		}
		if (id == ID_CONFIG)
			config_path = optarg;
	}

	struct tt_config tmp = *c;
	if (!config_path) {
		const char *env = getenv("TABLETRACK_CONFIG");
		if (env && *env)
			config_path = env;
	}
	/* What the window's K saved when no file was named (config_save). */
	char user_path[CONFIG_PATH_LEN];
	if (!config_path && config_user_path(user_path, sizeof user_path) == 0 && access(user_path, F_OK) == 0)
		config_path = user_path;
	if (config_path) {
		if (strlen(config_path) >= sizeof(tmp.config_path)) {
			set_error("--config: the path is too long");
			return ERR_CONFIG;
		}
		if (config_load_file(&tmp, config_path))
			return ERR_CONFIG;
		memcpy(tmp.config_path, config_path, strlen(config_path) + 1);
	}

	/* Pass 2: everything else, in order. */
	bool print = false;
	bool seen[N_OPTIONS] = {false};
	int n_errors = 0;
	optind = 0;
	for (;;) {
		int id = getopt_long(argc, argv, cli.shorts, cli.longopts, NULL);
		if (id == -1)
			break;
		const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
		id = cli_map_builtin(id);
		if (id == ID_CONFIG)
			continue;
		if (id == ID_PRINT) {
			print = true;
			continue;
		}
		if (id == '?') {
			if (optopt > 0 && optopt < 256)
				set_error("unknown option '-%c' (see --help)", optopt);
			else
				set_error("unknown or ambiguous option '%s' (see --help)", arg);
			n_errors++;
			continue;
		}
		if (id == ':') {
			set_error("option '%s' needs a value", arg);
			n_errors++;
			continue;
		}
		int i = cli_index(id);
		if (i < 0) {
			set_error("unknown option '%s' (see --help)", arg);
			n_errors++;
			continue;
		}
		const struct config_option *o = &options[i];
		const char *value = optarg;
		if (o->type == CONFIG_BOOL && !value)
			value = "true";
		bool append = o->type == CONFIG_LIST && seen[i];
		seen[i] = true;
		char msg[CONFIG_ERROR_LEN];
		if (apply(&tmp, o, value, append, msg, sizeof(msg))) {
			set_error("option --%s: %s", cli.names[i], msg);
			n_errors++;
		}
	}
	if (optind < argc) {
		set_error("unexpected argument '%s' (options start with --; see --help)", argv[optind]);
		n_errors++;
	}
	if (n_errors)
		return ERR_CONFIG;
	/* headless and window are one choice: one given on the command line
	 * overrides the other from a file (K saves window = true, and the
	 * service runs that file with --headless). Both given is still an error. */
	int i_headless = (int)(config_find("headless") - options), i_window = (int)(config_find("window") - options);
	if (seen[i_headless] && !seen[i_window] && tmp.headless)
		tmp.window = false;
	if (seen[i_window] && !seen[i_headless] && tmp.window)
		tmp.headless = false;
	if (config_check(&tmp))
		return ERR_CONFIG;
	*c = tmp;
	if (config_path == user_path && !print && !c->quiet)
		log_info("configuration from %s (the user's default file; --config FILE names another)", user_path);
	if (print) {
		config_print(c, stdout);
		fflush(stdout);
		return 1;
	}
	return 0;
}

int config_user_path(char *buf, size_t cap)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;
	/* The XDG base-directory spec: a relative $XDG_CONFIG_HOME is invalid
	 * and ignored. */
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, cap, "%s/tabletrack/tabletrack.conf", xdg);
	else if (home && *home)
		n = snprintf(buf, cap, "%s/.config/tabletrack/tabletrack.conf", home);
	else
		return ERR_UNSUPPORTED;
	return n < 0 || (size_t)n >= cap ? ERR_RANGE : 0;
}

int config_save_path(const struct tt_config *c, char *buf, size_t cap)
{
	if (!c->config_path[0])
		return config_user_path(buf, cap);
	int n = snprintf(buf, cap, "%s", c->config_path);
	return n < 0 || (size_t)n >= cap ? ERR_RANGE : 0;
}

int config_grid_path(const struct tt_config *c, char *buf, size_t cap)
{
	int n;
	if (c->grid[0]) {
		n = snprintf(buf, cap, "%s", c->grid);
		return n < 0 || (size_t)n >= cap ? ERR_RANGE : 0;
	}
	int err = config_save_path(c, buf, cap);
	if (err)
		return err;
	char *base = strrchr(buf, '/');
	base = base ? base + 1 : buf;
	/* "cam1.conf" -> "cam1.grid"; a name that is all extension
	 * (".conf") or has none keeps it and gains ".grid". */
	char *dot = strrchr(base, '.');
	size_t keep = dot && dot != base ? (size_t)(dot - buf) : strlen(buf);
	if (keep + sizeof ".grid" > cap)
		return ERR_RANGE;
	memcpy(buf + keep, ".grid", sizeof ".grid");
	return 0;
}

int config_save(struct tt_config *c)
{
	return config_save_marked(c, NULL, NULL, NULL, NULL);
}

int config_save_marked(struct tt_config *c, config_mark_fn *mark, void *ctx, const char *note,
		       const struct tt_config *alt)
{
	char path[CONFIG_PATH_LEN];
	int err = config_save_path(c, path, sizeof path);
	if (err) {
		log_error("cannot save the configuration: no file to write (start with --config FILE, or set HOME)");
		return err;
	}
	FILE *out = NULL;
	err = path_make_parent_dirs(path);
	if (!err && !(out = fopen(path, "w")))
		err = ERR_IO;
	if (out) {
		config_print_marked(c, out, mark, ctx, note, alt);
		if (ferror(out) | fclose(out))
			err = ERR_IO;
	}
	if (err) {
		log_error("cannot save the configuration to %s: %s", path, err == ERR_IO ? strerror(errno) : err_str(err));
		return err;
	}
	if (!c->config_path[0])
		memcpy(c->config_path, path, strlen(path) + 1);
	log_info("configuration saved to %s", path);
	return 0;
}
