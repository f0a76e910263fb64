/* fuzz_ws.c - libFuzzer target: what a WebSocket client sends to a
 * ws:listen: TUIO target, which anyone who can reach the port controls.
 * The first byte picks the parser: the HTTP upgrade request
 * (tuio_ws_handshake) or a stream of client frame headers
 * (tuio_ws_parse_header), walked the way the server walks its read buffer.
 * Any input must give one of the documented results, a response inside the
 * caller's buffer and offsets inside the input, never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/tuio/tuio_net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void handshake(const uint8_t *data, size_t size)
{
	char resp[512];
	size_t resp_len = 0;
	int rc = tuio_ws_handshake((const char *)data, size, resp, sizeof resp, &resp_len);
	if (rc < -1 || rc > 1)
		abort();
	if (rc == 0)
		return;
	if (resp_len == 0 || resp_len >= sizeof resp || strncmp(resp, "HTTP/1.1 ", 9) != 0)
		abort();
	if (rc == 1) {
		const char *a = strstr(resp, "Sec-WebSocket-Accept: ");
		if (!a || strlen(a) < 22 + 28 || memcmp(a + 22 + 28, "\r\n", 2) != 0)
			abort();
	}
}

static void frames(const uint8_t *data, size_t size)
{
	size_t off = 0;
	while (off < size) {
		struct tuio_ws_frame f;
		int rc = tuio_ws_parse_header(data + off, size - off, &f);
		if (rc == 0 || rc == -1)
			return;
		if (rc != 1 || !f.masked || (f.header_len != 6 && f.header_len != 8 && f.header_len != 14) ||
		    f.header_len > size - off || f.payload_len >> 63)
			abort();
		if (f.opcode >= 0x8 && (f.payload_len > 125 || !f.fin))
			abort();
		off += f.header_len;
		if (f.payload_len > size - off)
			return; /* the server skips or waits for the rest */
		off += (size_t)f.payload_len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		handshake(data + 1, size - 1);
	else
		frames(data + 1, size - 1);
	return 0;
}
