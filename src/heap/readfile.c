/* readfile.c -- an input file read whole, bounded: a heap profile, a census snapshot.
 *
 * The file is input someone else may have made: opened without waiting (a
 * FIFO never blocks the open), used only when it is a regular file (a FIFO
 * may never end, /dev/zero never does), read to its end rather than to the
 * size it claimed (it may grow, or be /proc's 0), never past @max bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heap/heap.h"

int heap_read_file(const char *path, uint64_t max, char **out, size_t *olen, char *msg,
		   size_t msglen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	size_t len = 0, cap = 0;
	struct stat st;
	char *buf = NULL;
	int err = 0;

	*out = NULL;
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		snprintf(msg, msglen, "%s: %s", path, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		snprintf(msg, msglen, S_ISREG(st.st_mode) ? "%s: larger than %llu bytes" :
			 "%s: not a regular file (not read)", path, (unsigned long long)max);
		close(fd);
		return S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			if (cap > max) {
				snprintf(msg, msglen, "%s: larger than %llu bytes", path,
					 (unsigned long long)max);
				err = -EFBIG;
				break;
			}
			/* The size it has now (+1: its end is seen without a
			 * second buffer; /proc says 0), then doubling if it grows. */
			size_t want = cap ? cap * 2 : (size_t)st.st_size + 1;
			char *nb = realloc(buf, want < 65536 ? 65536 : want);

			if (!nb) {
				snprintf(msg, msglen, "%s: out of memory", path);
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap = want < 65536 ? 65536 : want;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			snprintf(msg, msglen, "%s: %s", path, strerror(-err));
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*olen = len;
	return 0;
}
