/* fuzz_image.c - libFuzzer target: image_read_mem over arbitrary bytes (PNG,
 * PGM, garbage) must return 0 or ERR_FORMAT/ERR_NOMEM, never crash or leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../src/core/image_io.h"
#include "../../src/core/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image_u8 img;
	log_set_level(LOG_ERROR - 1);
	if (image_read_mem(data, size, "fuzz", &img) == 0) {
		if (img.width < 1 || img.height < 1 || img.stride < img.width || !img.data)
			abort();
		volatile uint8_t sink = image_u8_row(&img, img.height - 1)[img.width - 1];
		(void)sink;
		image_u8_free(&img);
	}
	return 0;
}
