#include "tuio_net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "../core/err.h"

/* --- SHA-1 ----------------------------------------------------------- */

static uint32_t rol32(uint32_t x, int n)
{
	return x << n | x >> (32 - n);
}

static void sha1_block(uint32_t h[5], const uint8_t *p)
{
	uint32_t w[80];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
		       p[4 * i + 3];
	for (int i = 16; i < 80; i++)
		w[i] = rol32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
	for (int i = 0; i < 80; i++) {
		uint32_t f, k;
		if (i < 20) {
			f = (b & c) | (~b & d);
			k = 0x5A827999u;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ED9EBA1u;
		} else if (i < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8F1BBCDCu;
		} else {
			f = b ^ c ^ d;
			k = 0xCA62C1D6u;
		}
		uint32_t t = rol32(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rol32(b, 30);
		b = a;
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

void tuio_sha1(const void *data, size_t len, uint8_t out[20])
{
	uint32_t h[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
	const uint8_t *p = data;
	size_t left = len;
	for (; left >= 64; left -= 64, p += 64)
		sha1_block(h, p);
	uint8_t tail[128] = {0};
	memcpy(tail, p, left);
	tail[left] = 0x80;
	size_t n = left + 1 + 8 <= 64 ? 64 : 128;
	uint64_t bits = (uint64_t)len * 8;
	for (int i = 0; i < 8; i++)
		tail[n - 1 - i] = (uint8_t)(bits >> (8 * i));
	sha1_block(h, tail);
	if (n == 128)
		sha1_block(h, tail + 64);
	for (int i = 0; i < 5; i++) {
		out[4 * i] = (uint8_t)(h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(h[i] >> 8);
		out[4 * i + 3] = (uint8_t)h[i];
	}
}

int tuio_base64(const uint8_t *data, size_t len, char *out, size_t cap)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t need = (len + 2) / 3 * 4 + 1;
	if (cap < need)
		return -1;
	size_t o = 0;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)data[i + 1] << 8;
		if (i + 2 < len)
			v |= data[i + 2];
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < len ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? tab[v & 63] : '=';
	}
	out[o] = 0;
	return (int)o;
}

void tuio_ws_accept(const char *key, char out[29])
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	char buf[128];
	size_t kl = strnlen(key, 64);
	memcpy(buf, key, kl);
	memcpy(buf + kl, guid, sizeof guid - 1);
	uint8_t digest[20];
	tuio_sha1(buf, kl + sizeof guid - 1, digest);
	tuio_base64(digest, 20, out, 29);
}

/* --- handshake ------------------------------------------------------- */

/* Finds header `name` in the request lines; copies its trimmed value. */
static bool http_header(const char *req, size_t len, const char *name, char *val, size_t cap)
{
	size_t nl = strlen(name);
	const char *end = req + len;
	const char *line = memchr(req, '\n', len);
	while (line && line + 1 < end) {
		line++;
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			break;
		if ((size_t)(eol - line) > nl && line[nl] == ':' && strncasecmp(line, name, nl) == 0) {
			const char *v = line + nl + 1, *ve = eol;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			size_t n = (size_t)(ve - v);
			if (n >= cap)
				return false;
			memcpy(val, v, n);
			val[n] = 0;
			return true;
		}
		line = eol;
	}
	return false;
}

static bool contains_token(const char *list, const char *token)
{
	size_t tl = strlen(token);
	for (const char *p = list; *p; p++)
		if (strncasecmp(p, token, tl) == 0)
			return true;
	return false;
}

/* RFC 7230 tchar, plus the list separators ',' ' ' and tab. */
static bool http_token_list(const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (!((*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z') || strchr("!#$%&'*+-.^_`|~, \t", *p)))
			return false;
	return true;
}

static int http_error(char *resp, size_t cap, size_t *resp_len, const char *status, const char *extra)
{
	int n = snprintf(resp, cap, "HTTP/1.1 %s\r\n%sContent-Length: 0\r\nConnection: close\r\n\r\n", status,
	                 extra);
	*resp_len = n > 0 && (size_t)n < cap ? (size_t)n : 0;
	return -1;
}

int tuio_ws_handshake(const char *req, size_t len, char *resp, size_t cap, size_t *resp_len)
{
	const char *blank = NULL;
	for (size_t i = 0; i + 3 < len; i++)
		if (memcmp(req + i, "\r\n\r\n", 4) == 0) {
			blank = req + i;
			break;
		}
	if (!blank)
		return 0;
	len = (size_t)(blank - req) + 2;
	char upgrade[64], key[64], version[16], proto[128];
	if (len < 4 || memcmp(req, "GET ", 4) != 0)
		return http_error(resp, cap, resp_len, "405 Method Not Allowed", "");
	if (!http_header(req, len, "Upgrade", upgrade, sizeof upgrade) ||
	    !contains_token(upgrade, "websocket") ||
	    !http_header(req, len, "Sec-WebSocket-Key", key, sizeof key) || strlen(key) != 24)
		return http_error(resp, cap, resp_len, "400 Bad Request", "");
	if (!http_header(req, len, "Sec-WebSocket-Version", version, sizeof version) ||
	    strcmp(version, "13") != 0)
		return http_error(resp, cap, resp_len, "426 Upgrade Required",
		                  "Sec-WebSocket-Version: 13\r\n");
	char proto_line[160] = "";
	if (http_header(req, len, "Sec-WebSocket-Protocol", proto, sizeof proto)) {
		/* Echoed into our response: anything but a list of HTTP tokens
		 * could inject headers (a CR, LF or other control byte). */
		if (!http_token_list(proto))
			return http_error(resp, cap, resp_len, "400 Bad Request", "");
		size_t n = strcspn(proto, ", \t");
		proto[n] = 0;
		if (n > 0)
			snprintf(proto_line, sizeof proto_line, "Sec-WebSocket-Protocol: %s\r\n", proto);
	}
	char accept[29];
	tuio_ws_accept(key, accept);
	int n = snprintf(resp, cap,
	                 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
	                 "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n%s\r\n",
	                 accept, proto_line);
	if (n <= 0 || (size_t)n >= cap)
		return http_error(resp, cap, resp_len, "500 Internal Server Error", "");
	*resp_len = (size_t)n;
	return 1;
}

int tuio_ws_parse_header(const uint8_t *buf, size_t len, struct tuio_ws_frame *f)
{
	if (len < 2)
		return 0;
	f->fin = buf[0] & 0x80;
	f->opcode = buf[0] & 0x0f;
	f->masked = buf[1] & 0x80;
	if (buf[0] & 0x70 || !f->masked)
		return -1;
	if (f->opcode > TUIO_WS_OP_BINARY && f->opcode < TUIO_WS_OP_CLOSE)
		return -1;
	if (f->opcode > TUIO_WS_OP_PONG)
		return -1;
	uint64_t n = buf[1] & 0x7f;
	size_t h = 2;
	if (n == 126) {
		if (len < 4)
			return 0;
		n = (uint64_t)buf[2] << 8 | buf[3];
		h = 4;
	} else if (n == 127) {
		if (len < 10)
			return 0;
		n = 0;
		for (int i = 0; i < 8; i++)
			n = n << 8 | buf[2 + i];
		if (n >> 63)
			return -1;
		h = 10;
	}
	if (f->opcode >= TUIO_WS_OP_CLOSE && (n > 125 || !f->fin))
		return -1;
	if (len < h + 4)
		return 0;
	memcpy(f->mask, buf + h, 4);
	f->payload_len = n;
	f->header_len = h + 4;
	return 1;
}

bool tuio_ws_close_code_valid(uint16_t code)
{
	return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1011) || (code >= 3000 && code <= 4999);
}

size_t tuio_ws_frame_header(uint8_t opcode, uint64_t payload_len, uint8_t hdr[10])
{
	hdr[0] = (uint8_t)(0x80 | (opcode & 0x0f));
	if (payload_len < 126) {
		hdr[1] = (uint8_t)payload_len;
		return 2;
	}
	if (payload_len <= 0xffff) {
		hdr[1] = 126;
		hdr[2] = (uint8_t)(payload_len >> 8);
		hdr[3] = (uint8_t)payload_len;
		return 4;
	}
	hdr[1] = 127;
	for (int i = 0; i < 8; i++)
		hdr[2 + i] = (uint8_t)(payload_len >> (56 - 8 * i));
	return 10;
}

/* --- queue ----------------------------------------------------------- */

int tuio_queue_init(struct tuio_queue *q, size_t ring_bytes, size_t max_record)
{
	memset(q, 0, sizeof *q);
	q->ring = malloc(ring_bytes);
	q->inflight = malloc(max_record);
	if (!q->ring || !q->inflight) {
		tuio_queue_free(q);
		return ERR_NOMEM;
	}
	q->cap = ring_bytes;
	q->inflight_cap = max_record;
	return 0;
}

void tuio_queue_free(struct tuio_queue *q)
{
	free(q->ring);
	free(q->inflight);
	memset(q, 0, sizeof *q);
}

void tuio_queue_clear(struct tuio_queue *q)
{
	q->head = q->used = 0;
	q->inflight_len = q->inflight_off = 0;
}

bool tuio_queue_empty(const struct tuio_queue *q)
{
	return q->used == 0 && q->inflight_off >= q->inflight_len;
}

static void ring_put(struct tuio_queue *q, size_t at, const void *src, size_t n)
{
	if (n == 0)
		return;
	size_t pos = (q->head + at) % q->cap, first = q->cap - pos < n ? q->cap - pos : n;
	memcpy(q->ring + pos, src, first);
	memcpy(q->ring, (const uint8_t *)src + first, n - first);
}

static void ring_get(const struct tuio_queue *q, size_t at, void *dst, size_t n)
{
	size_t pos = (q->head + at) % q->cap, first = q->cap - pos < n ? q->cap - pos : n;
	memcpy(dst, q->ring + pos, first);
	memcpy((uint8_t *)dst + first, q->ring, n - first);
}

/* Removes the oldest record from the ring, copying it to dst when given. */
static size_t ring_pop(struct tuio_queue *q, uint8_t *dst)
{
	uint32_t n;
	ring_get(q, 0, &n, 4);
	if (dst)
		ring_get(q, 4, dst, n);
	q->head = (q->head + 4 + n) % q->cap;
	q->used -= 4 + (size_t)n;
	return n;
}

bool tuio_queue_push(struct tuio_queue *q, const void *hdr, size_t hdr_len, const void *data, size_t len)
{
	size_t rec = hdr_len + len;
	if (!q->ring || rec > q->inflight_cap || rec + 4 > q->cap) {
		q->dropped++;
		return false;
	}
	while (q->cap - q->used < rec + 4) {
		ring_pop(q, NULL);
		q->dropped++;
	}
	uint32_t n = (uint32_t)rec;
	ring_put(q, q->used, &n, 4);
	ring_put(q, q->used + 4, hdr, hdr_len);
	ring_put(q, q->used + 4 + hdr_len, data, len);
	q->used += rec + 4;
	return true;
}

int tuio_queue_flush(struct tuio_queue *q, int fd, uint64_t *bytes, uint64_t *records, int *err_no)
{
	for (;;) {
		if (q->inflight_off >= q->inflight_len) {
			if (q->used == 0)
				return 0;
			q->inflight_len = ring_pop(q, q->inflight);
			q->inflight_off = 0;
		}
		ssize_t n = send(fd, q->inflight + q->inflight_off, q->inflight_len - q->inflight_off,
		                 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return ERR_AGAIN;
			if (errno == EINTR)
				continue;
			if (err_no)
				*err_no = errno;
			return ERR_NET;
		}
		q->inflight_off += (size_t)n;
		if (bytes)
			*bytes += (uint64_t)n;
		if (q->inflight_off < q->inflight_len)
			return ERR_AGAIN;
		if (records)
			(*records)++;
	}
}
