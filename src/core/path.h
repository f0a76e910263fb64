/*
 * path.h - small file-system helpers for files the user asks to save.
 *
 * path_make_parent_dirs("a/b/c.conf") creates a/ and a/b/ where they are
 * missing (mode 0755 before the umask), as `mkdir -p "$(dirname PATH)"`
 * would: the window's "save grid" and "save configuration" write into the
 * user's configuration folder, which a fresh account does not have yet.
 * Folders that exist are left as they are. A path without a '/' needs none.
 *
 * Returns 0, ERR_RANGE (path longer than PATH_MAX_LEN) or ERR_IO (errno
 * kept, nothing logged: the caller names the file it was saving).
 * Memory: none allocated.
 */
#ifndef TT_CORE_PATH_H
#define TT_CORE_PATH_H

#define PATH_MAX_LEN 4096

int path_make_parent_dirs(const char *path);

#endif
