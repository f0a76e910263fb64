/*
 * err.h - the one error vocabulary of tabletrack.
 *
 * Every fallible function returns 0 on success or a negative ERR_* code.
 * err_str() turns a code into a short, static, human-readable string.
 * Details (file names, line numbers, values) are logged where the error is
 * found; the code only tells the caller what kind of failure it was.
 */
#ifndef TT_CORE_ERR_H
#define TT_CORE_ERR_H

enum err_code {
	ERR_OK = 0,
	ERR_NOMEM = -1,       /* allocation failed or a fixed capacity is exhausted */
	ERR_IO = -2,          /* read/write/open failed (errno logged) */
	ERR_FORMAT = -3,      /* malformed input: file, frame, token */
	ERR_RANGE = -4,       /* a value outside its allowed range */
	ERR_CONFIG = -5,      /* bad option, key or value */
	ERR_UNSUPPORTED = -6, /* feature not built in or not available here */
	ERR_DEVICE = -7,      /* camera or GPU failure; recoverable by reopening */
	ERR_AGAIN = -8,       /* nothing available now; try later */
	ERR_EOF = -9,         /* a finite source has no more frames */
	ERR_NET = -10,        /* network target unreachable or failed */
	ERR_SIZE = -11,       /* frame or buffer of an unexpected size */
};

/* Static string for an ERR_* code; never NULL. */
const char *err_str(int code);

#endif
