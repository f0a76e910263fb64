#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

int file_open_regular(const char *path, FILE **out, const char **why)
{
	*out = NULL;
	/* O_NONBLOCK: open() on a FIFO without a writer would wait for one. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*why = strerror(errno);
		return ERR_IO;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		close(fd);
		return ERR_IO;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		*why = strerror(errno);
		close(fd);
		return ERR_IO;
	}
	*out = f;
	return 0;
}
