/*
 * v4l2_sys.h - the system calls the V4L2 backend makes, behind a small ops
 * struct, so tests can put an in-process fake camera in their place.
 *
 * The default ops are libv4l2's (v4l2_open, v4l2_ioctl, v4l2_mmap, ...),
 * which add format emulation and quirk handling for many webcams, plus
 * poll(2). capture_v4l2_set_sys() swaps them for the whole process; call it
 * before opening a source and restore with NULL. Not thread-safe against
 * sources being opened at the same time (tests only).
 */
#ifndef TT_CAPTURE_V4L2_SYS_H
#define TT_CAPTURE_V4L2_SYS_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct v4l2_sys {
	int (*open)(const char *path, int flags);                 /* -1 + errno on failure */
	int (*close)(int fd);
	int (*ioctl)(int fd, unsigned long request, void *arg);   /* -1 + errno on failure */
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, int64_t offset);
	int (*munmap)(void *addr, size_t len);
	int (*poll)(struct pollfd *fds, nfds_t n, int timeout_ms);
};

/* Replaces the system calls (borrowed; NULL restores libv4l2's). */
void capture_v4l2_set_sys(const struct v4l2_sys *sys);

/* capture_list_cameras() over the given device paths instead of /dev/video*.
 * Returns the number of capture devices among them. */
int capture_v4l2_list_paths(FILE *out, const char *const *paths, int n_paths);

/* How long capture_read waits for a frame before ERR_AGAIN. */
#define CAPTURE_V4L2_POLL_MS 1000
/* Consecutive EIO/error buffers after which the device counts as lost. */
#define CAPTURE_V4L2_MAX_BAD 30

#endif
