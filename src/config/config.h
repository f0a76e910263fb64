/*
 * config.h - every setting of tabletrack, from one option table.
 *
 * One table (config.c) lists each option: name, type, section, default,
 * min, max, whether it can change while running, short option and help
 * text. That table drives the config file parser (INI, parsed with inih),
 * the command line (getopt_long: --name VALUE, plus short aliases),
 * --help and --print-config, so the four never disagree. Defaults are
 * written in the table as text and applied with config_set(), so a default
 * goes through the same validation as a user's value.
 *
 * Precedence: defaults < config file (--config FILE, else
 * $TABLETRACK_CONFIG, else the user's file config_user_path() when it
 * exists, else none) < command line.
 *
 * Default files (what the window's K and W write, and what is read at the
 * next start without being named):
 *   configuration  the file given (--config, $TABLETRACK_CONFIG), else
 *                  $XDG_CONFIG_HOME/tabletrack/tabletrack.conf, else
 *                  $HOME/.config/tabletrack/tabletrack.conf;
 *   grid           `grid` when set, else beside the configuration: its
 *                  name with ".grid" for its extension (cam1.conf ->
 *                  cam1.grid; the service's /etc/tabletrack/NAME.conf ->
 *                  /etc/tabletrack/NAME.grid, one grid per camera).
 * /etc/tabletrack is never read unless named: the service names its file,
 * and a person's own runs should not pick up a daemon's settings.
 * Errors name the key, the file and line (or the option) and the bad value;
 * callers exit with 78 (EX_CONFIG).
 *
 * Names: file keys use underscores (finger_size) and may also be written
 * with dashes; command-line options use dashes (--finger-size). Keys may
 * stand before any [section] line; under a section they must be in their
 * own one. Booleans take true/false/yes/no/on/off/1/0; on the command line
 * a boolean is a flag (--once) that also accepts --once=no.
 *
 * Lists (tuio): in a file, a value may hold several targets separated by
 * spaces, and the key may be repeated; the first occurrence in a file (or on
 * the command line) replaces the list it had, later ones append. An empty
 * value ("tuio =") empties the list, which the pipeline reads as the
 * default target udp:127.0.0.1:3333. config_set() always replaces.
 *
 * File lines are limited to CONFIG_MAX_LINE characters (inih's fixed line
 * buffer); a longer line is an error, never silently cut.
 *
 * Reload (SIGHUP): config_defaults() then config_parse_args() with the same
 * argv again: the file is reread and the command line still wins (argv is
 * not permuted).
 *
 * Errors: every function that fails logs one line per problem (log_error)
 * and leaves the first message in config_last_error(), e.g.
 *     "tabletrack.conf:12: radius: 99 is out of range 1..32"
 * Loading and parsing are atomic: on error the config is left unchanged.
 *
 * Threads: the functions may run on any thread but not concurrently on the
 * same struct; config_last_error() is per thread. config_parse_args() uses
 * getopt's globals: call it from one thread at a time.
 *
 * Memory: nothing is allocated; struct tt_config is plain data (about 5 KB),
 * copied freely (the pipeline keeps a live copy). Rows returned by
 * config_find()/config_option_at() are static.
 *
 * Cost: config_set() is a scan of the ~45 rows and one strtol/strtof,
 * about a microsecond: fine for live tuning, not meant for the frame loop.
 */
#ifndef TT_CONFIG_H
#define TT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CONFIG_EX_CONFIG 78
#define CONFIG_PATH_LEN 512
#define CONFIG_MAX_TUIO 8

/* width and height: a size in pixels, or one of these words (0 = auto, as
 * before the words existed). The camera negotiates max and min against the
 * sizes its format offers (capture.h, CAPTURE_SIZE_*: the same values);
 * other sources read anything but a positive size as their default. */
#define TT_SIZE_AUTO 0
#define TT_SIZE_MAX (-1)
#define TT_SIZE_MIN (-2)
/* fps: a rate, 0 (a camera: its current rate; other sources: as fast as
 * they are read), or one of these words (capture.h, CAPTURE_FPS_*). Sources
 * other than a camera replay at TT_FPS_DEFAULT for each word. */
#define TT_FPS_MAX (-1)
#define TT_FPS_MIN (-2)
#define TT_FPS_AUTO (-3)
#define TT_FPS_DEFAULT 30

struct tt_config {
	/* [source] */
	char source[CONFIG_PATH_LEN]; /* "" = v4l2:/dev/video0 when it exists, else demo */
	bool once;
	int fps;
	bool loop;
	int width, height; /* camera size; 0 = auto */
	char format[16];   /* camera pixel format, "auto" */
	char controls[256]; /* camera controls, "key=value,..." */
	float camera_gamma; /* the camera's encoding gamma, undone before thresholding; 1 = linear */
	/* [threshold] */
	char gpu[8];            /* auto | on | off */
	char threshold_mode[16]; /* bernsen | tiled | mean | gated | either | both | sauvola */
	int radius, gate, tile, median;
	int mean_radius, mean_bias; /* local-mean modes */
	int sauvola_k, sauvola_range; /* sauvola method */
	int radius2;          /* second scale, 0 = off */
	char threshold2_mode[16]; /* second scale's method, as threshold_mode */
	char threshold3_mode[16]; /* third scale's method, as threshold_mode, or "off" */
	float mean_scale3;    /* third scale's second local-mean radius, a fraction of the symbol's size; 0 = off */
	int radius_up;        /* third scale's upsampled pass: Bernsen radius on the enlarged frame, 0 = off */
	int gate_up;          /* and its Bernsen gate */
	int gate_range;       /* the frame's grey range that keeps the full gate; 0 = fixed gate */
	int close_up;         /* and its closing read's radius (enlarged pixels); 0 = off */
	int close_up_pct;     /* and that read's percent of the closing */
	bool sharp_up;        /* and its Lanczos read of small fuzzy symbols' places */
	bool ink_up;          /* and its Lanczos local-mean read of the ink windows (and fuzzy places) */
	bool fine_up;         /* and its fine read of unexplained places (Lanczos-3, Bernsen radius 1) */
	bool rectify_up;      /* and its rectified read of squeezed symbols' places */
	bool mean_up;         /* and its windows read as the ink windows too (Lanczos-3, local mean) */
	bool sauvola_up;      /* and those local-mean reads followed by Sauvola's rule */
	bool encode_up;       /* and, where neither read, by the local mean on the grey gamma-encoded */
	bool sharpen_up;      /* and those reads and the read three times enlarged again, sharpened */
	int radius_small;     /* third scale's small-symbol pass: Bernsen radius, 0 = off */
	int radius_small_check; /* that pass's symbols read again at this radius; another ID: fuzzy; 0 = off */
	bool check3;          /* and the third scale's local-mean reads of symbols of up to 40 px too */
	bool check1;          /* the first scale's lone reads read again at its radius + 1; another ID: fuzzy */
	float close_scale3;   /* third scale's closing pass radius, a fraction of the symbol's size; 0 = off */
	int close_pct;        /* the closing pass: white above this percent of the closing */
	int close_dark;       /* ... read again at this percent of the gate; 0 = off */
	int ratio3;           /* third scale's ratio pass: the grey's offset; 0 = off */
	bool ratio3_large;    /* ... also at larger radii for large symbols */
	bool deblur3;         /* third scale's pass that undoes a motion streak in its windows */
	bool defocus3;        /* that pass also undoes a defocus blur */
	bool deblur3_high;    /* that pass also reads a streak's grey at a wide local mean */
	int deblur3_pct;      /* that pass: its windows' area per frame at most this percent of the frame; 0 = any */
	int deblur3_bias;     /* that pass: its local means' bias, percent (mean_bias for the deconvolved grey) */
	int median2;          /* second scale's median pre-filter */
	int segment_threads;  /* per scale; 0 = auto */
	char segment_backend[8]; /* auto | cpu | gpu */
	int max_runs, max_regions; /* per scale and frame; 0 = from the frame size */
	float gauss_sigma;
	/* [fiducials] */
	char trees[CONFIG_PATH_LEN]; /* "" = the built-in default set */
	float finger_size;           /* px; 0 = off */
	float finger_sensitivity;
	int finger_contrast;
	float blob_min, blob_max; /* px; blob_max 0 = off */
	/* outlines, touch, hands (src/outline) */
	bool contours;            /* TUIO 2.0 ocg/icg outlines */
	float contour_tolerance;  /* px, Douglas-Peucker */
	int contour_points;       /* per contour */
	int max_contours;         /* per frame */
	float touch_sharpness;    /* 1/px; 0 = every finger touches */
	bool hover_pointers;      /* hovering fingers as TUIO 2.0 ptr, pressure 0 */
	bool hands;
	bool complete;            /* fuzzy trees completed to the one ID that holds them (src/fiducial) */
	/* [tracking] */
	int linger_frames;
	float dead_band_px, dead_band_deg;
	bool invert_x, invert_y, invert_angle;
	bool object_blobs, finger_blobs; /* owners' blobs on 2Dblb with their session IDs */
	char grid[CONFIG_PATH_LEN]; /* calibration grid file; "" = identity */
	bool euro_enabled;
	float euro_min_cutoff, euro_beta;
	/* [tuio] */
	int n_tuio;
	char tuio[CONFIG_MAX_TUIO][256];
	char source_name[128];
	int refresh_ms;
	int max_datagram;
	int max_clients;         /* per tcp:listen / ws:listen target */
	int clients_per_address; /* 0 = no limit */
	/* [daemon] */
	bool headless, window, stats, verbose, quiet;
	char dump[CONFIG_PATH_LEN];
	char config_path[CONFIG_PATH_LEN];
	bool list_cameras;

	/* Added by the config room (additive). */
	int n_buffers;       /* [source] buffers: V4L2 mmap buffers, 3..32 */
	float euro_d_cutoff; /* [tracking] One Euro cutoff of the speed estimate, Hz */
	bool fullscreen;     /* [daemon] open the window full screen */

	/* [objects] untagged objects recognised by their look (src/objects/) */
	char objects[CONFIG_PATH_LEN]; /* object library file; "" = off */
	int object_id_min, object_id_max; /* the objects' IDs, above every fiducial ID */
	float object_rate;                /* recognitions a second at most */
	int object_hold_ms;               /* kept this long without re-recognition */
	bool object_follow;               /* followed through its regions between recognitions */
	int object_keypoints;             /* SIFT keypoints of a frame */
	int object_type_id;               /* TUIO 2.0 tok type ID of objects */
};

/* A word an integer key takes besides numbers ("max" for width). */
struct config_word {
	const char *word;
	int value;
};

enum config_type { CONFIG_BOOL, CONFIG_INT, CONFIG_FLOAT, CONFIG_STRING, CONFIG_ENUM, CONFIG_LIST };

/* One row of the option table, read-only, for the window's live tuning and
 * tools. Strings are static. */
struct config_option {
	const char *name;    /* file key, with underscores: "finger_size" */
	const char *section; /* "source", "threshold", ... */
	enum config_type type;
	const char *def;     /* default as text ("" for an empty string) */
	double min, max;     /* int and float: the allowed range */
	const char *values;  /* enum: "auto|on|off"; int: allowed set "0|3|5" or NULL */
	bool live;           /* may change while running */
	char short_opt;      /* 0 = none */
	const char *metavar; /* "N", "FILE", ... for --help */
	const char *help;
	/* Where the value lives in struct tt_config (config.c only). */
	size_t offset, size; /* list: size of one element */
	size_t count_offset; /* list: offset of the int count */
	int max_count;       /* list: capacity */
	/* int: the words taken besides numbers (case-insensitive), ended by a
	 * {NULL, 0} row; NULL = numbers only. config_get() writes a value that
	 * has a word as the word. Added for width/height/fps (additive). */
	const struct config_word *words;
};

#define CONFIG_MAX_LINE 197
#define CONFIG_ERROR_LEN 512

/* Fills every field with its default. */
void config_defaults(struct tt_config *c);
/* Loads an INI file over c. Returns 0 or ERR_CONFIG / ERR_IO (logged with file:line and key). */
int config_load_file(struct tt_config *c, const char *path);
/* Parses argv over c (reading --config FILE first, wherever it stands).
 * Returns 0, 1 when the program should exit 0 now (--help, --version,
 * --print-config done), or ERR_CONFIG. */
int config_parse_args(struct tt_config *c, int argc, char **argv);
/* Writes c as a complete, commented config file. */
void config_print(const struct tt_config *c, FILE *out);
void config_print_help(FILE *out, const char *prog);
/* Sets one key from text (the file, the command line and live tuning share it). */
int config_set(struct tt_config *c, const char *key, const char *value);

/* Loads INI text over c; `name` stands for the file name in messages.
 * Same rules and errors as config_load_file (also the fuzzer's entry). */
int config_load_string(struct tt_config *c, const char *text, const char *name);
/* Checks rules between keys (blob_max vs blob_min, headless vs window).
 * config_load_file and config_parse_args call it; returns 0 or ERR_CONFIG. */
int config_check(const struct tt_config *c);
/* Formats one key's value as config_set() accepts it (lists: space
 * separated). Returns 0, ERR_CONFIG (unknown key) or ERR_RANGE (buf small). */
int config_get(const struct tt_config *c, const char *key, char *buf, size_t cap);
/* The table: row i, or NULL past the end. */
const struct config_option *config_option_at(int i);
/* The row of a key (dashes or underscores, any case), or NULL. */
const struct config_option *config_find(const char *key);
/* Which rows config_diff() compares. */
enum config_diff_rows { CONFIG_DIFF_ALL, CONFIG_DIFF_LIVE, CONFIG_DIFF_RESTART };

/* Called by config_diff() for one option whose value differs: its row and
 * both values as config_get() writes them. `now` may be applied with
 * config_set(); the strings live until the call returns. */
typedef void config_diff_fn(const struct config_option *o, const char *was, const char *now, void *ctx);

/* Walks the option table and calls fn for each row of the given kind
 * (CONFIG_DIFF_LIVE: live-tunable only; CONFIG_DIFF_RESTART: the others)
 * whose value in `was` differs from the one in `now`, in table order.
 * fn may change `was` (it is read row by row, one row at a time). Returns
 * how many rows differed. */
int config_diff(const struct tt_config *was, const struct tt_config *now, enum config_diff_rows rows,
		config_diff_fn *fn, void *ctx);

/* Whether config_print_marked writes a key commented out. */
typedef bool config_mark_fn(const struct config_option *o, void *ctx);
/* As config_print, but each key for which mark(o, ctx) is true is written
 * commented out ("# key = value"), after a comment line holding `note`,
 * and then, when alt is not NULL, with alt's value as a plain line. */
void config_print_marked(const struct tt_config *c, FILE *out, config_mark_fn *mark, void *ctx, const char *note,
			 const struct tt_config *alt);

/* The user's configuration file: $XDG_CONFIG_HOME/tabletrack/tabletrack.conf
 * ($XDG_CONFIG_HOME only when absolute), else
 * $HOME/.config/tabletrack/tabletrack.conf, whether it exists or not.
 * Returns 0, ERR_UNSUPPORTED (neither variable set) or ERR_RANGE (buf small). */
int config_user_path(char *buf, size_t cap);
/* Where the configuration is saved: c->config_path when set, else
 * config_user_path(). Same returns. */
int config_save_path(const struct tt_config *c, char *buf, size_t cap);
/* The calibration grid file: c->grid when set, else beside
 * config_save_path() with the extension ".grid". Same returns. */
int config_grid_path(const struct tt_config *c, char *buf, size_t cap);
/* Writes c with config_print() to config_save_path(), creating missing
 * folders, and sets c->config_path to it when it was empty, so a later
 * reload (SIGHUP) and start read that file. Logs the path, or the error.
 * Returns 0, ERR_UNSUPPORTED, ERR_RANGE or ERR_IO. */
int config_save(struct tt_config *c);
/* config_save with config_print_marked's marks. */
int config_save_marked(struct tt_config *c, config_mark_fn *mark, void *ctx, const char *note,
		       const struct tt_config *alt);
/* The first error message of the last failing call on this thread ("" if none). */
const char *config_last_error(void);

#endif
