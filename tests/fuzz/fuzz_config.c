/* libFuzzer target: arbitrary bytes as a config file (config_load_string,
 * the same inih-based path as config_load_file). Any input must give 0 or
 * ERR_CONFIG, never a crash, and a loaded config must print and load again. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/config/config.h"
#include "../../src/core/err.h"
#include "../../src/core/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	log_set_level(LOG_ERROR);
	struct tt_config c;
	config_defaults(&c);
	int rc = config_load_string(&c, text, "fuzz");
	if (rc != 0 && rc != ERR_CONFIG)
		abort();
	if (rc == 0) {
		char *out = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);
		if (f) {
			config_print(&c, f);
			fclose(f);
			struct tt_config d;
			config_defaults(&d);
			if (config_load_string(&d, out, "printed") != 0)
				abort();
			free(out);
		}
	}
	free(text);
	return 0;
}
