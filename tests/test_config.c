/* Tests of the option table, the config file, the command line, --help and
 * --print-config (src/config). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/config/config.h"
#include "../src/core/err.h"
#include "common/testutil.h"

/* Config files need inih; their tests skip in a build without. */
#if TT_HAVE_INIH
#define NEED_INIH()
#else
#define NEED_INIH() skip()
#endif

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static char *read_all(FILE *f, size_t *len)
{
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	assert_true(n >= 0);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	if (len)
		*len = (size_t)n;
	return buf;
}

static char *print_to_string(const struct tt_config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	config_print(c, f);
	fclose(f);
	return buf;
}

/* Runs config_parse_args with stdout captured into a returned string. */
static char *parse_capturing(struct tt_config *c, int argc, char **argv, int *rc)
{
	fflush(stdout);
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	int saved = dup(STDOUT_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDOUT_FILENO) >= 0);
	*rc = config_parse_args(c, argc, argv);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	char *out = read_all(tmp, NULL);
	fclose(tmp);
	return out;
}

/* Every key's value, compared as text. */
static void assert_config_equal(const struct tt_config *a, const struct tt_config *b)
{
	for (int i = 0; config_option_at(i); i++) {
		const char *name = config_option_at(i)->name;
		char va[4096], vb[4096];
		assert_int_equal(config_get(a, name, va, sizeof(va)), 0);
		assert_int_equal(config_get(b, name, vb, sizeof(vb)), 0);
		if (strcmp(va, vb))
			fail_msg("key %s differs: '%s' vs '%s'", name, va, vb);
	}
}

static void test_defaults(void **state)
{
	(void)state;
	struct tt_config c;
	memset(&c, 0x5a, sizeof(c));
	config_defaults(&c);
	assert_string_equal(c.source, "");
	assert_false(c.once);
	assert_int_equal(c.fps, 30);
	assert_string_equal(c.format, "auto");
	assert_int_equal(c.width, TT_SIZE_AUTO);
	assert_int_equal(c.height, TT_SIZE_AUTO);
	assert_int_equal(c.n_buffers, 4);
	assert_string_equal(c.gpu, "auto");
	assert_string_equal(c.threshold_mode, "bernsen");
	assert_int_equal(c.radius, 8);
	assert_int_equal(c.radius2, 2);
	assert_int_equal(c.median2, 3);
	assert_int_equal(c.gate, 32);
	assert_int_equal(c.tile, 10);
	assert_int_equal(c.median, 0);
	assert_true(c.gauss_sigma == 0.0f);
	assert_string_equal(c.trees, "");
	assert_true(c.finger_size == 0.0f);
	assert_true(c.finger_sensitivity == 0.5f);
	assert_int_equal(c.finger_contrast, 16);
	assert_true(c.blob_min == 0.0f && c.blob_max == 0.0f);
	assert_int_equal(c.linger_frames, 2);
	assert_true(c.dead_band_px == 0.5f && c.dead_band_deg == 0.5f);
	assert_int_equal(c.n_tuio, 1);
	assert_string_equal(c.tuio[0], "udp:127.0.0.1:3333");
	assert_int_equal(c.refresh_ms, 1000);
	assert_int_equal(c.max_datagram, 1472);
	assert_false(c.headless || c.window || c.stats || c.verbose || c.quiet || c.list_cameras);
	assert_string_equal(c.dump, "");
	assert_string_equal(c.config_path, "");
	assert_int_equal(config_check(&c), 0);
}

static void test_table_is_sane(void **state)
{
	(void)state;
	static const char *const sections[] = {"source",   "threshold", "fiducials",
	                                       "tracking", "tuio",      "objects", "daemon"};
	struct tt_config c;
	config_defaults(&c);
	int n = 0;
	for (int i = 0; config_option_at(i); i++, n++) {
		const struct config_option *o = config_option_at(i);
		assert_non_null(o->help);
		assert_true(strlen(o->help) > 5);
		bool known = false;
		for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++)
			known |= !strcmp(o->section, sections[s]);
		assert_true(known);
		switch (o->type) {
		case CONFIG_BOOL:
			assert_int_equal(o->size, sizeof(bool));
			break;
		case CONFIG_INT:
			assert_int_equal(o->size, sizeof(int));
			break;
		case CONFIG_FLOAT:
			assert_int_equal(o->size, sizeof(float));
			break;
		default:
			assert_true(o->size > 1);
		}
		assert_true(o->offset + o->size <= sizeof(struct tt_config));
		/* Each default is a valid value of its own key. */
		assert_int_equal(config_set(&c, o->name, o->def), 0);
		for (int j = 0; j < i; j++) {
			assert_string_not_equal(o->name, config_option_at(j)->name);
			if (o->short_opt)
				assert_int_not_equal(o->short_opt, config_option_at(j)->short_opt);
		}
		assert_ptr_equal(config_find(o->name), o);
		if (o->short_opt) /* -h, -V and -c are taken by --help, --version, --config */
			assert_null(strchr("hVc", o->short_opt));
	}
	assert_true(n >= 40);
	assert_non_null(config_find("finger-size"));
	assert_non_null(config_find("FINGER_SIZE"));
	assert_null(config_find("finger"));
	assert_null(config_option_at(-1));
}

static void test_set_values(void **state)
{
	(void)state;
	struct tt_config c;
	config_defaults(&c);
	assert_int_equal(config_set(&c, "radius", " 12 "), 0);
	assert_int_equal(c.radius, 12);
	assert_int_equal(config_set(&c, "finger-size", "14.5"), 0);
	assert_true(c.finger_size == 14.5f);
	assert_int_equal(config_set(&c, "once", "YES"), 0);
	assert_true(c.once);
	assert_int_equal(config_set(&c, "once", "off"), 0);
	assert_false(c.once);
	assert_int_equal(config_set(&c, "gpu", "off"), 0);
	assert_string_equal(c.gpu, "off");
	assert_int_equal(config_set(&c, "tuio", "udp:a:1 tcp:listen:0.0.0.0:3333,tuio2"), 0);
	assert_int_equal(c.n_tuio, 2);
	assert_string_equal(c.tuio[1], "tcp:listen:0.0.0.0:3333,tuio2");
	assert_int_equal(config_set(&c, "tuio", ""), 0);
	assert_int_equal(c.n_tuio, 0);
	assert_int_equal(config_set(&c, "median", "5"), 0);
	assert_int_equal(config_set(&c, "gauss", "0.7"), 0);
	assert_int_equal(config_set(&c, "format", "MJPG"), 0);
	assert_string_equal(c.format, "MJPG");

	struct tt_config before = c;
	assert_int_equal(config_set(&c, "radius", "33"), ERR_CONFIG);
	assert_string_equal(config_last_error(), "radius: 33 is out of range 1..32");
	assert_int_equal(config_set(&c, "radius", "6x"), ERR_CONFIG);
	assert_string_equal(config_last_error(), "radius: '6x' is not an integer");
	assert_int_equal(config_set(&c, "radius", ""), ERR_CONFIG);
	assert_int_equal(config_set(&c, "radius", "99999999999999999999"), ERR_CONFIG);
	assert_int_equal(config_set(&c, "gpu", "maybe"), ERR_CONFIG);
	assert_string_equal(config_last_error(), "gpu: 'maybe' is not one of auto|on|off");
	assert_int_equal(config_set(&c, "threshold", "otsu"), ERR_CONFIG);
	assert_int_equal(config_set(&c, "once", "2"), ERR_CONFIG);
	assert_int_equal(config_set(&c, "finger_sensitivity", "1.5"), ERR_CONFIG);
	assert_int_equal(config_set(&c, "finger_sensitivity", "nan"), ERR_CONFIG);
	assert_int_equal(config_set(&c, "dead_band_px", "inf"), ERR_CONFIG);
	assert_int_equal(config_set(&c, "median", "4"), ERR_CONFIG);
	assert_int_equal(config_set(&c, "gauss", "0.2"), ERR_CONFIG);
	assert_int_equal(config_set(&c, "format", "TOOLONG"), ERR_CONFIG);
	assert_int_equal(config_set(&c, "tuio", "http://x"), ERR_CONFIG);
	assert_int_equal(config_set(&c, "tuio",
	                            "udp:a:1 udp:a:2 udp:a:3 udp:a:4 udp:a:5 udp:a:6 "
	                            "udp:a:7 udp:a:8 udp:a:9"),
	                 ERR_CONFIG);
	assert_string_equal(config_last_error(), "tuio: more than 8 targets");
	assert_int_equal(config_set(&c, "source", "folder:a\nb"), ERR_CONFIG);
	char longpath[CONFIG_PATH_LEN + 10];
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = 0;
	assert_int_equal(config_set(&c, "trees", longpath), ERR_CONFIG);
	char huge[5000];
	memset(huge, 'b', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = 0;
	assert_int_equal(config_set(&c, "trees", huge), ERR_CONFIG);
	assert_int_equal(config_set(&c, "tuio", huge), ERR_CONFIG);
	assert_int_equal(config_set(&c, "nosuchkey", "1"), ERR_CONFIG);
	assert_string_equal(config_last_error(), "nosuchkey: unknown key");
	assert_int_equal(config_set(&c, NULL, "1"), ERR_CONFIG);
	/* A rejected value leaves the config as it was. */
	assert_config_equal(&c, &before);
	assert_int_equal(c.n_tuio, 0);
}

static void test_check(void **state)
{
	(void)state;
	struct tt_config c;
	config_defaults(&c);
	c.blob_min = 20;
	c.blob_max = 10;
	assert_int_equal(config_check(&c), ERR_CONFIG);
	assert_non_null(strstr(config_last_error(), "blob_max"));
	c.blob_max = 0;
	assert_int_equal(config_check(&c), 0);
	c.headless = c.window = true;
	assert_int_equal(config_check(&c), ERR_CONFIG);
}

static void test_file_good(void **state)
{
	NEED_INIH();
	(void)state;
	const char *text = "; a comment\n"
	                   "# another\n"
	                   "fps = 60\n"
	                   "\n"
	                   "[source]\n"
	                   "source = folder:/tmp/frames\n"
	                   "once = yes\n"
	                   "[threshold]\n"
	                   "gpu = off   ; inline comment\n"
	                   "threshold = tiled\n"
	                   "radius=9\n"
	                   "[fiducials]\n"
	                   "finger-size = 12\n"
	                   "Finger_Sensitivity = 0.25\n"
	                   "[TRACKING]\n"
	                   "dead_band_deg = 2\n"
	                   "[tuio]\n"
	                   "tuio = udp:10.0.0.2:3333\n"
	                   "tuio = tcp:listen:0.0.0.0:3334,tuio2 ws:listen:0.0.0.0:8080\n"
	                   "[daemon]\n"
	                   "stats = true\n";
	struct tt_config c;
	config_defaults(&c);
	assert_int_equal(config_load_string(&c, text, "t.conf"), 0);
	assert_string_equal(config_last_error(), "");
	assert_int_equal(c.fps, 60);
	assert_string_equal(c.source, "folder:/tmp/frames");
	assert_true(c.once);
	assert_string_equal(c.gpu, "off");
	assert_string_equal(c.threshold_mode, "tiled");
	assert_int_equal(c.radius, 9);
	assert_true(c.finger_size == 12.0f);
	assert_true(c.finger_sensitivity == 0.25f);
	assert_true(c.dead_band_deg == 2.0f);
	assert_int_equal(c.n_tuio, 3);
	assert_string_equal(c.tuio[0], "udp:10.0.0.2:3333");
	assert_string_equal(c.tuio[2], "ws:listen:0.0.0.0:8080");
	assert_true(c.stats);
	assert_int_equal(c.gate, 32);

	/* A second file replaces the list rather than appending to it. */
	assert_int_equal(config_load_string(&c, "[tuio]\ntuio = udp:h:1\n", "u.conf"), 0);
	assert_int_equal(c.n_tuio, 1);
	assert_int_equal(config_load_string(&c, "[tuio]\ntuio =\n", "v.conf"), 0);
	assert_int_equal(c.n_tuio, 0);
	assert_int_equal(config_load_string(&c, "", "empty.conf"), 0);
	assert_int_equal(config_load_string(&c, "\xef\xbb\xbf[source]\nfps=5\n", "bom.conf"), 0);
	assert_int_equal(c.fps, 5);

	const char *dir = test_tmpdir();
	assert_non_null(dir);
	char path[1024];
	snprintf(path, sizeof(path), "%s/good.conf", dir);
	write_file(path, "[threshold]\r\ngate = 50\r\n");
	assert_int_equal(config_load_file(&c, path), 0);
	assert_int_equal(c.gate, 50);
	unlink(path);
	rmdir(dir);
}

struct bad_case {
	const char *text;
	const char *error;
};

static void test_file_errors(void **state)
{
	NEED_INIH();
	(void)state;
	static const struct bad_case cases[] = {
	    {"[source]\nfps = 30\nbogus = 1\n", "x.conf:3: bogus: unknown key"},
	    {"[source]\n\n\nfps = fast\n", "x.conf:4: fps: 'fast' is not a number, auto, max or min"},
	    {"[source]\nwidth = maximum\n", "x.conf:2: width: 'maximum' is not a number, auto, max or min"},
	    {"[source]\nheight = 4.5\n", "x.conf:2: height: '4.5' is not a number, auto, max or min"},
	    {"[source]\nheight = -2\n", "x.conf:2: height: -2 is out of range 0..16384"},
	    {"[source]\nformat = biggest\n",
	     "x.conf:2: format: 'biggest' is not auto, max, min or a fourcc of 1 to 4 letters and digits"},
	    {"[threshold]\nradius = 40\n", "x.conf:2: radius: 40 is out of range 1..32"},
	    {"[threshold]\ngpu = yes\n", "x.conf:2: gpu: 'yes' is not one of auto|on|off"},
	    {"[daemon]\nstats = maybe\n",
	     "x.conf:2: stats: 'maybe' is not a boolean (true|false|yes|no|on|off|1|0)"},
	    {"[camera]\nfps = 30\n", "x.conf:2: fps: unknown section [camera]"},
	    {"[tuio]\nfps = 30\n", "x.conf:2: fps: belongs in [source], not [tuio]"},
	    {"[source]\nfps 30\n", "x.conf:2: syntax error: expected [section], key = value or a comment"},
	    {"[source\nfps = 30\n", "x.conf:1: syntax error: expected [section], key = value or a comment"},
	    {"[fiducials]\nblob_min = 30\nblob_max = 20\n",
	     "x.conf: blob_max: 20 is smaller than blob_min 30 (0 turns blobs off)"},
	    {"[tuio]\ntuio = udp:a:1 udp:a:2 udp:a:3 udp:a:4\ntuio = udp:a:5 udp:a:6 udp:a:7 "
	     "udp:a:8\ntuio = udp:a:9\n",
	     "x.conf:4: tuio: more than 8 targets"},
	    /* The first of several errors is the one kept. */
	    {"[source]\nfps = -1\nwidth = -1\n", "x.conf:2: fps: -1 is out of range 0..1000"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tt_config c, before;
		config_defaults(&c);
		before = c;
		int rc = config_load_string(&c, cases[i].text, "x.conf");
		if (rc != ERR_CONFIG)
			fail_msg("case %zu: rc %d", i, rc);
		if (strcmp(config_last_error(), cases[i].error))
			fail_msg("case %zu: got '%s', want '%s'", i, config_last_error(), cases[i].error);
		/* Atomic: nothing of a bad file is applied. */
		assert_int_equal(memcmp(&c, &before, sizeof(c)), 0);
	}

	/* An over-long line is an error with its number, not a silent cut. */
	char text[1024];
	int n = snprintf(text, sizeof(text), "[source]\nsource = folder:");
	memset(text + n, 'x', 400);
	strcpy(text + n + 400, "\nfps = 10\n");
	struct tt_config c;
	config_defaults(&c);
	assert_int_equal(config_load_string(&c, text, "x.conf"), ERR_CONFIG);
	assert_non_null(strstr(config_last_error(), "x.conf:2: line longer than"));
	assert_int_equal(c.fps, 30);

	assert_int_equal(config_load_file(&c, "/nonexistent/tabletrack.conf"), ERR_IO);
	assert_non_null(strstr(config_last_error(), "/nonexistent/tabletrack.conf: cannot open"));
	assert_int_equal(config_load_string(&c, NULL, NULL), 0);
}

static void test_cli_kinds(void **state)
{
	(void)state;
	struct tt_config c;
	config_defaults(&c);
	char *argv[] = {"tabletrack",
	                "--source",
	                "demo",
	                "--once",
	                "--headless=no",
	                "-S",
	                "--fps",
	                "60",
	                "-r",
	                "8",
	                "--gate=40",
	                "--finger-size",
	                "11.5",
	                "--gpu",
	                "off",
	                "--threshold",
	                "tiled",
	                "--tuio",
	                "udp:h:1",
	                "-t",
	                "tcp:listen:0.0.0.0:3333",
	                "--tuio=ws:listen:0.0.0.0:80,tuio2",
	                "--trees",
	                "my.trees",
	                "--dump",
	                "/tmp/d",
	                "--window",
	                "--verbose",
	                "--quiet",
	                "--list-cameras",
	                "--invert-x=true"};
	assert_int_equal(config_parse_args(&c, ARGC(argv), argv), 0);
	assert_string_equal(c.source, "demo");
	assert_true(c.once);
	assert_false(c.headless);
	assert_true(c.stats);
	assert_int_equal(c.fps, 60);
	assert_int_equal(c.radius, 8);
	assert_int_equal(c.gate, 40);
	assert_true(c.finger_size == 11.5f);
	assert_string_equal(c.gpu, "off");
	assert_string_equal(c.threshold_mode, "tiled");
	assert_int_equal(c.n_tuio, 3);
	assert_string_equal(c.tuio[0], "udp:h:1");
	assert_string_equal(c.tuio[1], "tcp:listen:0.0.0.0:3333");
	assert_string_equal(c.tuio[2], "ws:listen:0.0.0.0:80,tuio2");
	assert_string_equal(c.trees, "my.trees");
	assert_string_equal(c.dump, "/tmp/d");
	assert_true(c.window && c.verbose && c.quiet && c.list_cameras && c.invert_x);
	/* argv is not permuted (a reload parses it again). */
	assert_string_equal(argv[1], "--source");
	assert_string_equal(argv[ARGC(argv) - 1], "--invert-x=true");

	/* Parsing twice in one process works (getopt state is reset). */
	char *argv2[] = {"tabletrack", "-r", "3"};
	assert_int_equal(config_parse_args(&c, ARGC(argv2), argv2), 0);
	assert_int_equal(c.radius, 3);
	char *argv3[] = {"tabletrack"};
	assert_int_equal(config_parse_args(&c, 1, argv3), 0);
	assert_int_equal(config_parse_args(&c, 0, NULL), 0);
}

static void test_cli_errors(void **state)
{
	(void)state;
	struct {
		char *argv[4];
		int argc;
		const char *error;
	} cases[] = {
	    {{"tt", "--frobnicate"}, 2, "unknown or ambiguous option '--frobnicate' (see --help)"},
	    {{"tt", "-x"}, 2, "unknown option '-x' (see --help)"},
	    {{"tt", "--radius"}, 2, "option '--radius' needs a value"},
	    {{"tt", "--radius", "0"}, 3, "option --radius: 0 is out of range 1..32"},
	    {{"tt", "--gpu", "cuda"}, 3, "option --gpu: 'cuda' is not one of auto|on|off"},
	    {{"tt", "--once=perhaps"},
	     2,
	     "option --once: 'perhaps' is not a boolean (true|false|yes|no|on|off|1|0)"},
	    {{"tt", "stray"}, 2, "unexpected argument 'stray' (options start with --; see --help)"},
	    {{"tt", "--headless", "--window"}, 3, "headless: headless and window exclude each other"},
	    {{"tt", "--config", "/nonexistent/x.conf"},
	     3,
	     "/nonexistent/x.conf: cannot open: No such file or directory"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tt_config c, before;
		config_defaults(&c);
		before = c;
		int rc = config_parse_args(&c, cases[i].argc, cases[i].argv);
		if (rc != ERR_CONFIG)
			fail_msg("case %zu: rc %d", i, rc);
		if (strcmp(config_last_error(), cases[i].error))
			fail_msg("case %zu: got '%s', want '%s'", i, config_last_error(), cases[i].error);
		assert_int_equal(memcmp(&c, &before, sizeof(c)), 0);
	}
}

static void test_cli_config_order(void **state)
{
	NEED_INIH();
	(void)state;
	const char *dir = test_tmpdir();
	assert_non_null(dir);
	char path[1024], path2[1024];
	snprintf(path, sizeof(path), "%s/a.conf", dir);
	snprintf(path2, sizeof(path2), "%s/b.conf", dir);
	write_file(path, "[threshold]\nradius = 9\ngate = 20\n[tuio]\ntuio = udp:file:1\n");
	write_file(path2, "[threshold]\ngate = 21\n");

	/* --config after the options: the options still win. */
	struct tt_config c;
	config_defaults(&c);
	char *argv[] = {"tt", "-r", "7", "--tuio", "udp:cli:2", "--config", path};
	assert_int_equal(config_parse_args(&c, ARGC(argv), argv), 0);
	assert_int_equal(c.radius, 7);
	assert_int_equal(c.gate, 20);
	assert_int_equal(c.n_tuio, 1);
	assert_string_equal(c.tuio[0], "udp:cli:2");
	assert_string_equal(c.config_path, path);

	/* $TABLETRACK_CONFIG is used when no --config is given... */
	setenv("TABLETRACK_CONFIG", path2, 1);
	config_defaults(&c);
	char *argv2[] = {"tt", "--radius=5"};
	assert_int_equal(config_parse_args(&c, ARGC(argv2), argv2), 0);
	assert_int_equal(c.gate, 21);
	assert_int_equal(c.radius, 5);
	assert_string_equal(c.config_path, path2);
	/* ...and --config overrides it. */
	config_defaults(&c);
	char *argv3[] = {"tt", "-c", path};
	assert_int_equal(config_parse_args(&c, ARGC(argv3), argv3), 0);
	assert_int_equal(c.gate, 20);
	unsetenv("TABLETRACK_CONFIG");

	/* An error in the file names file and line; exit code 78 follows. */
	write_file(path2, "[threshold]\n\nradius = 0\n");
	config_defaults(&c);
	char *argv4[] = {"tt", "--config", path2};
	assert_int_equal(config_parse_args(&c, ARGC(argv4), argv4), ERR_CONFIG);
	char want[1200];
	snprintf(want, sizeof(want), "%s:3: radius: 0 is out of range 1..32", path2);
	assert_string_equal(config_last_error(), want);
	assert_int_equal(CONFIG_EX_CONFIG, 78);

	unlink(path);
	unlink(path2);
	rmdir(dir);
}

static void test_cli_help_version_print(void **state)
{
	NEED_INIH();
	(void)state;
	struct tt_config c;
	int rc;
	config_defaults(&c);
	char *argv[] = {"/usr/bin/tabletrack", "--bogus", "--help"};
	char *out = parse_capturing(&c, ARGC(argv), argv, &rc);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "Usage: tabletrack"));
	free(out);

	char *argv2[] = {"tt", "-V"};
	out = parse_capturing(&c, ARGC(argv2), argv2, &rc);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "tabletrack "));
#ifdef TT_VERSION
	char want[64];
	snprintf(want, sizeof(want), "tabletrack %s\n", TT_VERSION);
	assert_string_equal(out, want);
#endif
	free(out);

	/* --print-config prints the effective config, options after it included. */
	config_defaults(&c);
	char *argv3[] = {"tt", "--print-config", "--radius", "11", "-t", "udp:x:9"};
	out = parse_capturing(&c, ARGC(argv3), argv3, &rc);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "\nradius = 11\n"));
	struct tt_config d;
	config_defaults(&d);
	assert_int_equal(config_load_string(&d, out, "printed"), 0);
	assert_int_equal(d.radius, 11);
	assert_int_equal(d.n_tuio, 1);
	assert_string_equal(d.tuio[0], "udp:x:9");
	free(out);
}

/* width, height and fps take a number or auto/max/min (any case); format a
 * fourcc or auto/max/min. */
static void test_camera_words(void **state)
{
	NEED_INIH();
	(void)state;
	struct tt_config c;
	config_defaults(&c);
	char buf[64];
	static const struct {
		const char *key, *value, *printed;
		int want;
	} ok[] = {
	    {"width", "max", "max", TT_SIZE_MAX},
	    {"width", "MIN", "min", TT_SIZE_MIN},
	    {"width", "Auto", "auto", TT_SIZE_AUTO},
	    {"width", "0", "auto", TT_SIZE_AUTO},
	    {"width", " 1280 ", "1280", 1280},
	    {"height", "max", "max", TT_SIZE_MAX},
	    {"height", "min", "min", TT_SIZE_MIN},
	    {"height", "720", "720", 720},
	    {"height", "auto", "auto", TT_SIZE_AUTO},
	    {"fps", "max", "max", TT_FPS_MAX},
	    {"fps", "Min", "min", TT_FPS_MIN},
	    {"fps", "AUTO", "auto", TT_FPS_AUTO},
	    {"fps", "0", "0", 0},
	    {"fps", "60", "60", 60},
	    {"fps", "1000", "1000", 1000},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (config_set(&c, ok[i].key, ok[i].value))
			fail_msg("%s = %s: %s", ok[i].key, ok[i].value, config_last_error());
		const int *field = !strcmp(ok[i].key, "width")    ? &c.width
		                   : !strcmp(ok[i].key, "height") ? &c.height
		                                                  : &c.fps;
		assert_int_equal(*field, ok[i].want);
		assert_int_equal(config_get(&c, ok[i].key, buf, sizeof(buf)), 0);
		assert_string_equal(buf, ok[i].printed);
	}
	static const struct {
		const char *value, *stored;
	} formats[] = {{"max", "max"},   {"MAX", "max"},   {"Min", "min"},
	               {"AUTO", "auto"}, {"YUYV", "YUYV"}, {"Y16", "Y16"}};
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		assert_int_equal(config_set(&c, "format", formats[i].value), 0);
		assert_string_equal(c.format, formats[i].stored);
	}

	struct tt_config before = c;
	static const struct {
		const char *key, *value, *error;
	} bad[] = {
	    {"fps", "fast", "fps: 'fast' is not a number, auto, max or min"},
	    {"fps", "", "fps: '' is not a number, auto, max or min"},
	    {"fps", "max2", "fps: 'max2' is not a number, auto, max or min"},
	    {"fps", "-1", "fps: -1 is out of range 0..1000"},
	    {"fps", "1001", "fps: 1001 is out of range 0..1000"},
	    {"width", "big", "width: 'big' is not a number, auto, max or min"},
	    {"width", "16385", "width: 16385 is out of range 0..16384"},
	    {"height", "-1", "height: -1 is out of range 0..16384"},
	    {"format", "maxim", "format: 'maxim' is not auto, max, min or a fourcc of 1 to 4 letters and digits"},
	    {"format", ";#", "format: ';#' is not auto, max, min or a fourcc of 1 to 4 letters and digits"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(config_set(&c, bad[i].key, bad[i].value), ERR_CONFIG);
		assert_string_equal(config_last_error(), bad[i].error);
	}
	assert_config_equal(&before, &c);

	/* the file and the command line */
	config_defaults(&c);
	assert_int_equal(
	    config_load_string(&c, "[source]\nwidth = MAX\nheight=min\nfps = max\nformat = Min\n", "w.conf"),
	    0);
	assert_int_equal(c.width, TT_SIZE_MAX);
	assert_int_equal(c.height, TT_SIZE_MIN);
	assert_int_equal(c.fps, TT_FPS_MAX);
	assert_string_equal(c.format, "min");
	char *argv[] = {"tt", "--width", "min", "--height", "480", "-f", "auto", "--format", "max"};
	config_defaults(&c);
	assert_int_equal(config_parse_args(&c, ARGC(argv), argv), 0);
	assert_int_equal(c.width, TT_SIZE_MIN);
	assert_int_equal(c.height, 480);
	assert_int_equal(c.fps, TT_FPS_AUTO);
	assert_string_equal(c.format, "max");
	char *argv_bad[] = {"tt", "--fps", "fastest"};
	struct tt_config d = c;
	assert_int_equal(config_parse_args(&c, ARGC(argv_bad), argv_bad), ERR_CONFIG);
	assert_string_equal(config_last_error(), "option --fps: 'fastest' is not a number, auto, max or min");
	assert_config_equal(&c, &d);

	/* --print-config writes the words, and they read back */
	int rc;
	char *argv_print[] = {"tt",    "--width", "max",      "--height", "MAX",
	                      "--fps", "min",     "--format", "MIN",      "--print-config"};
	config_defaults(&c);
	char *out = parse_capturing(&c, ARGC(argv_print), argv_print, &rc);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "\nwidth = max\n"));
	assert_non_null(strstr(out, "\nheight = max\n"));
	assert_non_null(strstr(out, "\nfps = min\n"));
	assert_non_null(strstr(out, "\nformat = min\n"));
	assert_null(strstr(out, "width = -"));
	assert_null(strstr(out, "fps = -"));
	config_defaults(&d);
	assert_int_equal(config_load_string(&d, out, "printed"), 0);
	assert_config_equal(&c, &d);
	free(out);

	/* the defaults print as words too, with the words in the description */
	config_defaults(&c);
	out = print_to_string(&c);
	assert_non_null(strstr(out, "\nwidth = auto\n"));
	assert_non_null(strstr(out, "\nheight = auto\n"));
	assert_non_null(strstr(out, "\nfps = 30\n"));
	assert_non_null(strstr(out, "\nformat = auto\n"));
	assert_non_null(strstr(out, "(integer 0..16384, auto, max or min, default auto)"));
	assert_non_null(strstr(out, "(integer 0..1000, auto, max or min, default 30)"));
	free(out);

	/* --help names the words */
	char *help = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&help, &len);
	assert_non_null(f);
	config_print_help(f, "tabletrack");
	fclose(f);
	assert_non_null(strstr(help, "--width N|auto|max|min"));
	assert_non_null(strstr(help, "--fps N|auto|max|min"));
	assert_non_null(strstr(help, "--format FOURCC|auto|max|min"));
	free(help);
}

static void test_print_load_round_trip(void **state)
{
	NEED_INIH();
	(void)state;
	struct tt_config c, d;
	config_defaults(&c);
	/* A non-default value for every kind. */
	assert_int_equal(config_set(&c, "source", "v4l2:/dev/video2"), 0);
	assert_int_equal(config_set(&c, "once", "true"), 0);
	assert_int_equal(config_set(&c, "fps", "120"), 0);
	assert_int_equal(config_set(&c, "gpu", "on"), 0);
	assert_int_equal(config_set(&c, "threshold", "tiled"), 0);
	assert_int_equal(config_set(&c, "median", "3"), 0);
	assert_int_equal(config_set(&c, "gauss", "1.1"), 0);
	assert_int_equal(config_set(&c, "finger_sensitivity", "0.123456789"), 0);
	assert_int_equal(config_set(&c, "euro_beta", "0.0123"), 0);
	assert_int_equal(config_set(&c, "tuio", "udp:a:1 tcp:b:2,tuio2 ws:listen:0.0.0.0:9"), 0);
	assert_int_equal(config_set(&c, "dump", "/tmp/dump dir"), 0);
	assert_int_equal(config_set(&c, "headless", "1"), 0);
	char *text = print_to_string(&c);
	config_defaults(&d);
	assert_int_equal(config_load_string(&d, text, "printed"), 0);
	assert_config_equal(&c, &d);
	assert_true(c.finger_sensitivity == d.finger_sensitivity);
	assert_true(c.euro_beta == d.euro_beta);
	free(text);

	/* An empty list survives the trip as an empty list. */
	assert_int_equal(config_set(&c, "tuio", ""), 0);
	text = print_to_string(&c);
	config_defaults(&d);
	assert_int_equal(config_load_string(&d, text, "printed"), 0);
	assert_int_equal(d.n_tuio, 0);
	free(text);

	/* Every line fits inih's line buffer. */
	config_defaults(&c);
	text = print_to_string(&c);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		assert_true(strlen(line) <= CONFIG_MAX_LINE);
	free(text);

	/* A value that filled a "key=value" line still loads back once printed
	 * (found by fuzz_config: "key = value" was two characters too long). */
	char line[CONFIG_MAX_LINE + 1];
	memset(line, 'a', sizeof line - 1);
	line[sizeof line - 1] = 0;
	memcpy(line, "grid=", 5);
	config_defaults(&c);
	assert_int_equal(config_load_string(&c, line, "full"), 0);
	text = print_to_string(&c);
	config_defaults(&d);
	assert_int_equal(config_load_string(&d, text, "printed"), 0);
	assert_string_equal(c.grid, d.grid);
	free(text);

	/* A longer one (from the command line) is named in a comment instead of
	 * making the printed file unreadable. */
	char path[CONFIG_MAX_LINE + 40];
	memset(path, 'b', sizeof path - 1);
	path[sizeof path - 1] = 0;
	config_defaults(&c);
	assert_int_equal(config_set(&c, "grid", path), 0);
	text = print_to_string(&c);
	assert_non_null(strstr(text, "# grid: the value"));
	config_defaults(&d);
	assert_int_equal(config_load_string(&d, text, "printed"), 0);
	free(text);

	/* Values inih would cut at an inline comment, or read as one. */
	config_defaults(&c);
	assert_int_equal(config_load_string(&c, "dump=;x\n", "semi"), 0);
	text = print_to_string(&c);
	config_defaults(&d);
	assert_int_equal(config_load_string(&d, text, "printed"), 0);
	assert_string_equal(d.dump, ";x");
	free(text);
	config_defaults(&c);
	assert_int_equal(config_set(&c, "dump", "/tmp/a ;b"), 0);
	text = print_to_string(&c);
	assert_non_null(strstr(text, "# dump: the value"));
	free(text);
}

static void test_help_mentions_every_key(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	config_print_help(f, "tabletrack");
	fclose(f);
	assert_non_null(strstr(buf, "Usage: tabletrack"));
	static const char *const extra[] = {"--help",         "--version", "--config FILE",
	                                    "--print-config", "[source]",  "[daemon]"};
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		assert_non_null(strstr(buf, extra[i]));
	for (int i = 0; config_option_at(i); i++) {
		const struct config_option *o = config_option_at(i);
		char opt[80];
		snprintf(opt, sizeof(opt), "--%s", o->name);
		for (char *p = opt; *p; p++)
			if (*p == '_')
				*p = '-';
		if (!strstr(buf, opt))
			fail_msg("--help does not mention %s", opt);
		if (o->short_opt) {
			char sh[8];
			snprintf(sh, sizeof(sh), "-%c, ", o->short_opt);
			assert_non_null(strstr(buf, sh));
		}
	}
	assert_non_null(strstr(buf, "default 32"));
	assert_non_null(strstr(buf, "1..32"));
	free(buf);
}

/* The checked-in config/tabletrack.conf is exactly what --print-config
 * writes for the defaults. Regenerate it with
 *     TT_WRITE_CONF=1 build/tests/test_config */
static void test_checked_in_conf_in_sync(void **state)
{
	NEED_INIH();
	(void)state;
	struct tt_config c;
	config_defaults(&c);
	char *want = print_to_string(&c);
	if (getenv("TT_WRITE_CONF")) {
		FILE *out = fopen("config/tabletrack.conf", "w");
		assert_non_null(out);
		fputs(want, out);
		fclose(out);
	}
	FILE *f = fopen("config/tabletrack.conf", "r");
	if (!f) {
		free(want);
		skip(); /* not run from the repository root */
	}
	char *have = read_all(f, NULL);
	fclose(f);
	if (strcmp(have, want))
		fail_msg("config/tabletrack.conf is out of date: run "
		         "TT_WRITE_CONF=1 build/tests/test_config");
	struct tt_config d;
	config_defaults(&d);
	assert_int_equal(config_load_file(&d, "config/tabletrack.conf"), 0);
	assert_config_equal(&c, &d);
	free(have);
	free(want);
}


/* The default files: the user's config (read when it exists, written by
 * config_save when no file was named) and the grid beside the config. */
static void test_default_files(void **state)
{
	(void)state;
	char dir[200], want[1024], buf[1024];
	snprintf(dir, sizeof dir, "%s", test_tmpdir());
	char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

	setenv("XDG_CONFIG_HOME", dir, 1);
	assert_int_equal(config_user_path(buf, sizeof buf), 0);
	snprintf(want, sizeof want, "%s/tabletrack/tabletrack.conf", dir);
	assert_string_equal(buf, want);
	assert_int_equal(config_user_path(buf, 8), ERR_RANGE);
	/* A relative $XDG_CONFIG_HOME is ignored (XDG spec): $HOME/.config. */
	setenv("XDG_CONFIG_HOME", "rel", 1);
	setenv("HOME", "/home/u", 1);
	assert_int_equal(config_user_path(buf, sizeof buf), 0);
	assert_string_equal(buf, "/home/u/.config/tabletrack/tabletrack.conf");
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("HOME");
	assert_int_equal(config_user_path(buf, sizeof buf), ERR_UNSUPPORTED);

	/* The grid: `grid` when set, else beside the config file. */
	struct tt_config c;
	config_defaults(&c);
	assert_int_equal(config_grid_path(&c, buf, sizeof buf), ERR_UNSUPPORTED);
	setenv("HOME", "/home/u", 1);
	assert_int_equal(config_grid_path(&c, buf, sizeof buf), 0);
	assert_string_equal(buf, "/home/u/.config/tabletrack/tabletrack.grid");
	snprintf(c.config_path, sizeof c.config_path, "/etc/tabletrack/cam1.conf");
	assert_int_equal(config_grid_path(&c, buf, sizeof buf), 0);
	assert_string_equal(buf, "/etc/tabletrack/cam1.grid");
	assert_int_equal(config_save_path(&c, buf, sizeof buf), 0);
	assert_string_equal(buf, "/etc/tabletrack/cam1.conf");
	snprintf(c.config_path, sizeof c.config_path, "conf.d/mine");
	assert_int_equal(config_grid_path(&c, buf, sizeof buf), 0);
	assert_string_equal(buf, "conf.d/mine.grid");
	snprintf(c.config_path, sizeof c.config_path, "a.b/.conf");
	assert_int_equal(config_grid_path(&c, buf, sizeof buf), 0);
	assert_string_equal(buf, "a.b/.conf.grid");
	assert_int_equal(config_set(&c, "grid", "my.grid"), 0);
	assert_int_equal(config_grid_path(&c, buf, sizeof buf), 0);
	assert_string_equal(buf, "my.grid");

	/* No file named: config_save writes the user's file, folders made, and
	 * remembers it; the next start reads it without being told. */
	setenv("XDG_CONFIG_HOME", dir, 1);
	config_defaults(&c);
	assert_int_equal(config_set(&c, "radius", "11"), 0);
	assert_int_equal(config_save(&c), 0);
	snprintf(want, sizeof want, "%s/tabletrack/tabletrack.conf", dir);
	assert_string_equal(c.config_path, want);
	config_defaults(&c);
	char *argv[] = {"tt", "--gate", "40"};
	assert_int_equal(config_parse_args(&c, ARGC(argv), argv), 0);
	assert_int_equal(c.radius, 11);
	assert_int_equal(c.gate, 40);
	assert_string_equal(c.config_path, want);
	/* The file K wrote from the window says window = true; the service
	 * runs it with --headless, which wins as any command-line option. */
	assert_true(config_set(&c, "window", "true") == 0 && config_save(&c) == 0);
	config_defaults(&c);
	char *argv_h[] = {"tt", "--headless"};
	assert_int_equal(config_parse_args(&c, ARGC(argv_h), argv_h), 0);
	assert_true(c.headless);
	assert_false(c.window);
	/* A named file wins over it. */
	char other[1024];
	snprintf(other, sizeof other, "%s/other.conf", dir);
	write_file(other, "[threshold]\ngate = 22\n");
	config_defaults(&c);
	char *argv2[] = {"tt", "--config", other};
	assert_int_equal(config_parse_args(&c, ARGC(argv2), argv2), 0);
	assert_int_equal(c.radius, 8);
	assert_int_equal(c.gate, 22);
	/* A folder that cannot be made is an error, not a crash. */
	snprintf(c.config_path, sizeof c.config_path, "%s/other.conf/x/y.conf", dir);
	assert_int_equal(config_save(&c), ERR_IO);

	unlink(want);
	unlink(other);
	snprintf(buf, sizeof buf, "%s/tabletrack", dir);
	rmdir(buf);
	rmdir(dir);
	/* Later tests must not see a user's file. */
	setenv("XDG_CONFIG_HOME", "/nonexistent/tabletrack-test", 1);
	if (old_home)
		setenv("HOME", old_home, 1);
	free(old_home);
}

int main(void)
{
	/* A user's own ~/.config/tabletrack/tabletrack.conf must not change
	 * what these tests parse. */
	setenv("XDG_CONFIG_HOME", "/nonexistent/tabletrack-test", 1);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_table_is_sane),
	    cmocka_unit_test(test_set_values),
	    cmocka_unit_test(test_check),
	    cmocka_unit_test(test_file_good),
	    cmocka_unit_test(test_file_errors),
	    cmocka_unit_test(test_cli_kinds),
	    cmocka_unit_test(test_cli_errors),
	    cmocka_unit_test(test_cli_config_order),
	    cmocka_unit_test(test_cli_help_version_print),
	    cmocka_unit_test(test_camera_words),
	    cmocka_unit_test(test_print_load_round_trip),
	    cmocka_unit_test(test_help_mentions_every_key),
	    cmocka_unit_test(test_checked_in_conf_in_sync),
	    cmocka_unit_test(test_default_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
