/*
 * pipeline.h - owns every stage and thread; the per-frame script lives here.
 *
 * The script: per frame, in this order, in one function (pipeline.c,
 * frame_script):
 *   1. threshold   grey -> bitmask         (CUDA or CPU Bernsen; engine.h)
 *   2. segment     bitmask -> region tree  (engine.h)
 *   3. match       tree -> fiducials, fuzzy symbols, root regions, fingers, blobs
 *   4. track       detections -> sessions (prediction, smoothing, calibration)
 *   5. tuio        tracked state -> bundles on every target
 *   6. report      --dump files, --stats timings, snapshot for the window (report.h)
 * Around it: the capture feed (capture/feed.h) brings frames, settings.h
 * turns the configuration into the stages' configs.
 *
 * Two ways to run:
 *   - synchronous (--once): frames are read inline, every frame exactly once
 *     and in order; deterministic, for tests, replays and scoring (file
 *     sources track on their own timeline, frame / fps, see capture.h);
 *   - live: a capture thread feeds a latest-frame-wins ring, a pipeline
 *     thread processes, and the main thread runs the window (or a headless
 *     status loop), signals, reload and the systemd watchdog.
 *
 * Stages are sized for the frame size of the source; when a camera comes
 * back with another size, the size-dependent stages are rebuilt once (never
 * per frame). A lost camera is reopened with back-off while TUIO keeps
 * sending the last state as redundant bundles (fseq -1).
 */
#ifndef TT_PIPELINE_H
#define TT_PIPELINE_H

#include "../config/config.h"

struct pipeline;

/* Loads trees and the calibration grid, checks --gpu, creates the --dump
 * folder, opens the source and creates the stages, and only then opens the
 * TUIO targets: a bad setting leaves no trace on the network. *err is
 * ERR_CONFIG for a bad setting or one this machine cannot meet (exit 78),
 * another ERR_* otherwise; the reason is logged. `cfg` is copied;
 * argc/argv (borrowed, must outlive the pipeline) are parsed again over the
 * re-read config file on SIGHUP so the command line keeps precedence. */
struct pipeline *pipeline_create(const struct tt_config *cfg, int argc, char **argv, int *err);

/* Runs until the source ends (--once), ESC/window close, or SIGTERM/SIGINT.
 * Returns the process exit code (0 on a clean end). */
int pipeline_run(struct pipeline *p);

/* Sends the shutdown bundles, prints --stats, frees everything. NULL-safe. */
void pipeline_destroy(struct pipeline *p);

#endif
