/*
 * file.h - opening a settings file (configuration, grid, trees) for reading
 * without ever blocking.
 *
 * The file is opened non-blocking and must be a regular file: a FIFO, a
 * device (/dev/zero) or a directory is refused at once instead of blocking
 * the caller in open() or feeding it an endless stream.
 */
#ifndef TT_CORE_FILE_H
#define TT_CORE_FILE_H

#include <stdio.h>

/* Opens `path` for reading. Returns 0 and a stream the caller closes with
 * fclose(), or ERR_IO with *why set to a static reason (strerror's text, or
 * "not a regular file"). */
int file_open_regular(const char *path, FILE **out, const char **why);

#endif
