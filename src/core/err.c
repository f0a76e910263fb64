#include "err.h"

const char *err_str(int code)
{
	switch (code) {
	case ERR_OK: return "ok";
	case ERR_NOMEM: return "out of memory or capacity";
	case ERR_IO: return "input/output error";
	case ERR_FORMAT: return "malformed input";
	case ERR_RANGE: return "value out of range";
	case ERR_CONFIG: return "configuration error";
	case ERR_UNSUPPORTED: return "not supported";
	case ERR_DEVICE: return "device error";
	case ERR_AGAIN: return "try again";
	case ERR_EOF: return "end of input";
	case ERR_NET: return "network error";
	case ERR_SIZE: return "unexpected size";
	}
	return "unknown error";
}
