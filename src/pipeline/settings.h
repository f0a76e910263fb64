/*
 * settings.h - the configuration turned into each stage's config, and
 * SIGHUP's reload of the config file.
 *
 * Every stage takes its own plain config struct; these functions are the one
 * place that knows which tt_config key feeds which field. They allocate
 * nothing and keep no state: call them at create time and again whenever a
 * live key changes (window, SIGHUP), then hand the result to the stage's
 * x_create or x_set_config.
 *
 * Pointers written into the stage configs (trees, calibration map, tracker)
 * are borrowed from the caller and must outlive the stage.
 */
#ifndef TT_PIPELINE_SETTINGS_H
#define TT_PIPELINE_SETTINGS_H

#include <stdbool.h>

#include "../capture/capture.h"
#include "../config/config.h"
#include "../fiducial/match.h"
#include "../outline/outline.h"
#include "../threshold/threshold.h"
#include "../core/calib.h"
#include "../track/track.h"
#include "../tuio/tuio.h"
#include "engine.h"

/* Capacity of every detection list and of the tracker's item lists. */
#define SETTINGS_MAX_DETECTIONS 1024

/* The enum threshold_mode of a configured method name (config.c lists them); unknown names give Bernsen. */
int threshold_mode_of(const char *name);
void threshold_config_from(const struct tt_config *c, int w, int h, struct threshold_config *out);
void match_config_from(const struct tt_config *c, const struct tree_set *trees, int w, int h,
		       struct match_config *out);
void track_config_from(const struct tt_config *c, const struct calib_map *calib, struct track_config *out);
/* Outlines (contours only when a target is TUIO 2.0), touch, hands. */
void outline_config_from(const struct tt_config *c, struct outline_config *out);
/* The engine for w x h frames; `trees` and `tracker` are borrowed. */
void engine_config_from(const struct tt_config *c, const struct tree_set *trees, struct track *tracker, int w,
			int h, struct engine_config *out);
/* ERR_CONFIG (logged) for a target string that does not parse. */
int tuio_config_from(const struct tt_config *c, struct tuio_config *out);
/* The capture settings; the demo's sprites are set by the caller. */
void capture_config_from(const struct tt_config *c, struct capture_config *out);

/* True for the demo source, also under fault injection (faulty:KEYS:demo). */
bool settings_source_is_demo(const char *source);
/* An empty source becomes the camera /dev/video0 when it can be opened,
 * else the demo (logged). */
void settings_choose_source(struct tt_config *c);
/* The threshold backend --gpu asks for: "cuda" (on), "cpu" (off) or "auto". */
const char *settings_gpu_backend(const struct tt_config *c);
/* Sets the log level from verbose/quiet (both live), logging the change. */
void settings_apply_log_level(const struct tt_config *c);

/* SIGHUP, in two steps so that the file is read off the pipeline thread:
 * settings_reload_read reads the config file again into *next (defaults,
 * file, then argc/argv again so the command line keeps winning); the file
 * must be a regular file, opened without blocking. Reads only running's
 * config_path. Returns false when there is no config file or it has errors
 * (logged; *next then unusable). */
bool settings_reload_read(const struct tt_config *running, int argc, char **argv, struct tt_config *next);
/* settings_reload_apply sets each live key that *next changed in *running,
 * one key at a time (other threads may read the non-live bytes); a changed
 * non-live key is compared with `given` (the configuration as given at
 * start, before the pipeline filled anything in) and only logged as needing
 * a restart. No I/O. The caller then re-applies the stage configs. */
void settings_reload_apply(struct tt_config *running, const struct tt_config *given, struct tt_config *next);

/* The window's K. Saves `given` (the configuration as started) with the
 * live keys of `running` (what the window or SIGHUP changed; the non-live
 * keys the pipeline filled in, an empty source, stay as given) to
 * config_save_path(given). A key whose value came from the command line
 * (it differs between `given` and `files`, the defaults and config file
 * alone) and was not changed since is written commented out, with a note,
 * and then with its value in `files`: a --source, --tuio or --window given
 * for one run does not become the next start's, and the file keeps its own. Sets running->config_path when the save chose the path.
 * Returns config_save()'s codes. */
int settings_save_config(struct tt_config *running, const struct tt_config *given, const struct tt_config *files);

#endif
