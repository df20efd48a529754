/* mem.c -- remote memory I/O through process_vm_readv/writev or /proc/PID/mem. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mem.h"

static int procmem_io(pid_t pid, uint64_t addr, void *buf, size_t len, int write)
{
	char path[64];
	size_t done = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write ? pwrite(fd, (char *)buf + done, len - done, (off_t)(addr + done))
				  : pread(fd, (char *)buf + done, len - done, (off_t)(addr + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EFAULT;
			break;
		}
		done += (size_t)n;
	}
	close(fd);
	return err == -EIO ? -EFAULT : err;
}

static int vm_io(pid_t pid, uint64_t addr, void *buf, size_t len, int write)
{
	size_t done = 0;

	while (done < len) {
		struct iovec local = { (char *)buf + done, len - done };
		struct iovec remote = { (void *)(uintptr_t)(addr + done), len - done };
		ssize_t n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
				  : process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOSYS || errno == EPERM)
				return procmem_io(pid, addr + done, (char *)buf + done, len - done, write);
			return -errno;
		}
		if (n == 0)
			return -EFAULT;
		done += (size_t)n;
	}
	return 0;
}

#define PIECES_MAX 1024	/* IOV_MAX */

int att_mem_read_pieces(pid_t pid, struct att_piece *p, size_t n)
{
	struct iovec loc[PIECES_MAX], rem[PIECES_MAX];	/* 32 KiB of stack */
	size_t i = 0;

	while (i < n) {
		size_t cnt = n - i < PIECES_MAX ? n - i : PIECES_MAX, j;
		ssize_t r;

		for (j = 0; j < cnt; j++) {
			loc[j] = (struct iovec){ p[i + j].buf, p[i + j].len };
			rem[j] = (struct iovec){ (void *)(uintptr_t)p[i + j].addr, p[i + j].len };
		}
		r = process_vm_readv(pid, loc, cnt, rem, cnt, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == ENOSYS || errno == EPERM)) {
			for (; i < n; i++)
				p[i].ok = att_mem_read(pid, p[i].addr, p[i].buf, p[i].len) == 0;
			return 0;
		}
		if (r < 0 && errno != EFAULT)
			return -errno;
		/* It stops at the first piece it cannot read (EFAULT when that is
		 * the first): those before were read whole, that one failed. */
		if (r < 0)
			r = 0;
		for (j = 0; j < cnt && (size_t)r >= p[i].len; j++, i++) {
			p[i].ok = 1;
			r -= (ssize_t)p[i].len;
		}
		if (j < cnt)
			p[i++].ok = 0;
	}
	return 0;
}

int att_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	return len ? vm_io(pid, addr, buf, len, 0) : 0;
}

int att_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	return len ? vm_io(pid, addr, (void *)buf, len, 1) : 0;
}

int att_mem_read_str(pid_t pid, uint64_t addr, size_t max, char **out, int *truncated)
{
	size_t cap = 256, len = 0;
	char *s = malloc(cap + 1);

	*out = NULL;
	*truncated = 0;
	if (!s)
		return -ENOMEM;
	while (len < max) {
		/* Never read across a page boundary in one go: the next page may be
		 * unmapped even though the string ends before it. */
		size_t chunk = 4096 - ((addr + len) & 4095);
		char *nul;
		int err;

		if (chunk > max - len)
			chunk = max - len;
		if (len + chunk > cap) {
			char *t;
			while (len + chunk > cap)
				cap *= 2;
			t = realloc(s, cap + 1);
			if (!t) {
				free(s);
				return -ENOMEM;
			}
			s = t;
		}
		err = att_mem_read(pid, addr + len, s + len, chunk);
		if (err) {
			free(s);
			return err;
		}
		nul = memchr(s + len, '\0', chunk);
		if (nul) {
			*out = s;
			return 0;
		}
		len += chunk;
	}
	s[len] = '\0';
	*truncated = 1;
	*out = s;
	return 0;
}
