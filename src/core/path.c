#include "path.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"

int path_make_parent_dirs(const char *path)
{
	char buf[PATH_MAX_LEN];
	size_t n = strlen(path);
	if (n >= sizeof buf)
		return ERR_RANGE;
	memcpy(buf, path, n + 1);
	char *slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return 0;
	*slash = '\0';
	/* Each prefix in turn; the leading '/' of an absolute path is skipped. */
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return ERR_IO;
		*p = c;
		if (c == '\0')
			break;
	}
	struct stat st;
	if (stat(buf, &st) != 0)
		return ERR_IO;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return ERR_IO;
	}
	return 0;
}
