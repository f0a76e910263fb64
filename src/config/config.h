/*
 * config.h - every setting of tabletrack, from one option table.
 *
 * One table (config.c) lists each option: name, type, default, min, max,
 * whether it can change while running, and its help text. That table drives
 * the config file parser (INI, parsed with inih), the command line
 * (getopt_long: --name VALUE, plus short aliases), --help and
 * --print-config, so the four never disagree.
 *
 * Precedence: defaults < config file (--config FILE, else
 * $TABLETRACK_CONFIG, else none) < command line.
 * Errors name the key, the file and line (or the option) and the bad value;
 * callers exit with 78 (EX_CONFIG).
 */
#ifndef TT_CONFIG_H
#define TT_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#define CONFIG_EX_CONFIG 78
#define CONFIG_PATH_LEN 512
#define CONFIG_MAX_TUIO 8

struct tt_config {
	/* [source] */
	char source[CONFIG_PATH_LEN];   /* "" = v4l2:/dev/video0 when it exists, else demo */
	bool once;
	int fps;
	bool loop;
	int width, height;              /* camera size; 0 = auto */
	char format[16];                /* camera pixel format, "auto" */
	/* [threshold] */
	char gpu[8];                    /* auto | on | off */
	char threshold_mode[8];         /* bernsen | tiled */
	int radius, gate, tile, median;
	float gauss_sigma;
	/* [fiducials] */
	char trees[CONFIG_PATH_LEN];    /* "" = the built-in default set */
	float finger_size;              /* px; 0 = off */
	float finger_sensitivity;
	int finger_contrast;
	float blob_min, blob_max;       /* px; blob_max 0 = off */
	/* [tracking] */
	int linger_frames;
	float dead_band_px, dead_band_deg;
	bool invert_x, invert_y, invert_angle;
	char grid[CONFIG_PATH_LEN];     /* calibration grid file; "" = identity */
	bool euro_enabled;
	float euro_min_cutoff, euro_beta;
	/* [tuio] */
	int n_tuio;
	char tuio[CONFIG_MAX_TUIO][256];
	char source_name[128];
	int refresh_ms;
	int max_datagram;
	/* [daemon] */
	bool headless, window, stats, verbose, quiet;
	char dump[CONFIG_PATH_LEN];
	char config_path[CONFIG_PATH_LEN];
	bool list_cameras;
};

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

#endif
