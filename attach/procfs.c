/* procfs.c -- parsing /proc/PID/{status,task,syscall,maps,auxv}. */
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "yield.h"

/* A page per read(): the kernel writes a /proc file (maps: thousands of
 * lines with many threads, made under the target's mmap lock) in one stretch
 * per call without giving up the CPU, so big reads keep a target thread
 * woken on our CPU waiting; between pages we may yield (yield.h). */
#define READ_CHUNK	4096

int att_proc_read(const char *path, char **out, size_t *lenp)
{
	size_t cap = 4096, len = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n;
		if (len == cap) {
			char *t = realloc(buf, cap * 2 + 1);
			if (!t) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = t;
			cap *= 2;
		}
		att_yield_point();
		n = read(fd, buf + len, cap - len < READ_CHUNK ? cap - len : READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;
			free(buf);
			close(fd);
			return err == -ENOENT ? -ESRCH : err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	if (lenp)
		*lenp = len;
	return 0;
}

int att_proc_status(pid_t pid, pid_t tid, struct att_status *st)
{
	char path[64], *buf, *line, *save = NULL;
	int err;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	err = att_proc_read(path, &buf, NULL);
	if (err)
		return err;
	memset(st, 0, sizeof(*st));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *v = strchr(line, ':');
		if (!v)
			continue;
		*v++ = '\0';
		while (*v == ' ' || *v == '\t')
			v++;
		if (!strcmp(line, "Name"))
			snprintf(st->name, sizeof(st->name), "%s", v);
		else if (!strcmp(line, "State"))
			st->state = *v;
		else if (!strcmp(line, "TracerPid"))
			st->tracer = (pid_t)atoi(v);
		else if (!strcmp(line, "Uid"))
			sscanf(v, "%u %u %u %u", &st->uid[0], &st->uid[1], &st->uid[2], &st->uid[3]);
		else if (!strcmp(line, "CapEff"))
			st->cap_eff = strtoull(v, NULL, 16);
		else if (!strcmp(line, "Kthread"))
			st->kthread = atoi(v);
		else if (!strcmp(line, "SigPnd") || !strcmp(line, "ShdPnd"))
			st->sigpnd |= strtoull(v, NULL, 16);
		else if (!strcmp(line, "Threads"))
			st->nthreads = atoi(v);
		else if (!strcmp(line, "voluntary_ctxt_switches") ||
			 !strcmp(line, "nonvoluntary_ctxt_switches"))
			st->ctxsw += strtoull(v, NULL, 10);
	}
	free(buf);
	/* Kernels before 6.0 have no Kthread line; kernel threads have no
	 * address space, so no VmSize either -- checked by the caller via maps. */
	return 0;
}

int att_proc_stat(pid_t pid, pid_t tid, char *state, char *comm, size_t len)
{
	char path[64], buf[512], *open_, *close_;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 && errno != ESRCH ? -errno : -ESRCH;
	buf[n] = '\0';
	/* "tid (comm) S ...": comm may itself hold ')' or spaces. */
	open_ = strchr(buf, '(');
	close_ = strrchr(buf, ')');
	if (!open_ || !close_ || close_ < open_ || close_[1] != ' ' || !close_[2])
		return -EIO;
	snprintf(comm, len, "%.*s", (int)(close_ - open_ - 1), open_ + 1);
	*state = close_[2];
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* getdents64 with a small buffer rather than readdir's 32 KiB: the kernel
 * fills the buffer in one stretch it does not give up the CPU in (measured:
 * 0.6-2.6 ms for 1000 threads against under 50 us for 2 KiB at a time), and
 * a target thread woken on our CPU meanwhile waits for the whole of it.
 * Between reads we may yield (yield.h). */
#define TASKS_BUF	2048

int att_proc_taskdir(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : errno == ENOENT ? -ESRCH : -errno;
}

int att_proc_pagemap(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : errno == ENOENT ? -ESRCH : -errno;
}

int att_page_present(int pagemap, uint64_t addr)
{
	uint64_t e;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	ssize_t got = pread(pagemap, &e, sizeof(e), (off_t)(addr / page * sizeof(e)));

	if (got != sizeof(e))
		return got < 0 ? -errno : -EIO;
	return (e >> 62) != 0;	/* bit 63 present, bit 62 swapped */
}

int att_proc_tasks_in(int taskdir, pid_t **tids, size_t *n)
{
	_Alignas(struct dirent64) char buf[TASKS_BUF];
	size_t cap = 16, cnt = 0;
	pid_t *v;
	ssize_t got = 0;
	int err = 0;

	v = malloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	while (!err) {
		att_yield_point();
		if ((got = getdents64(taskdir, buf, sizeof(buf))) <= 0)
			break;
		for (ssize_t off = 0; off < got;) {
			const struct dirent64 *e = (const struct dirent64 *)(buf + off);

			off += e->d_reclen;
			if (!isdigit((unsigned char)e->d_name[0]))
				continue;
			if (cnt == cap) {
				pid_t *t = realloc(v, 2 * cap * sizeof(*v));

				if (!t) {
					err = -ENOMEM;
					break;
				}
				v = t;
				cap *= 2;
			}
			v[cnt++] = (pid_t)atoi(e->d_name);
		}
	}
	if (!err && got < 0)
		err = errno == ENOENT ? -ESRCH : -errno;
	if (err) {
		free(v);
		return err;
	}
	qsort(v, cnt, sizeof(*v), cmp_pid);
	*tids = v;
	*n = cnt;
	return 0;
}

int att_proc_tasks(pid_t pid, pid_t **tids, size_t *n)
{
	int fd = att_proc_taskdir(pid), err;

	if (fd < 0)
		return fd;
	err = att_proc_tasks_in(fd, tids, n);
	close(fd);
	return err;
}

long att_proc_syscall(pid_t pid, pid_t tid)
{
	uint64_t sp, pc;

	return att_proc_syscall_at(pid, tid, &sp, &pc);
}

/* One read (the line is under 200 bytes) of an opened syscall file, closed;
 * @args (may be NULL) gets the six arguments. */
static long syscall_from(int fd, uint64_t *sp, uint64_t *pc, uint64_t *args)
{
	char buf[256], *e;
	ssize_t got;
	long nr;

	*sp = *pc = 0;
	if (fd < 0)
		return -2;
	do
		got = read(fd, buf, sizeof(buf) - 1);
	while (got < 0 && errno == EINTR);
	close(fd);
	if (got <= 0)
		return -2;
	buf[got] = '\0';
	if (!strncmp(buf, "running", 7)) {
		nr = -1;
	} else if (isdigit((unsigned char)buf[0])) {
		/* "nr arg1 ... arg6 sp pc", the numbers after nr in hex. */
		nr = strtol(buf, &e, 10);
		for (int i = 0; i < 6 && *e == ' '; i++) {
			uint64_t a = strtoull(e, &e, 16);

			if (args)
				args[i] = a;
		}
		if (*e == ' ')
			*sp = strtoull(e, &e, 16);
		if (*e == ' ')
			*pc = strtoull(e, &e, 16);
	} else {
		nr = -2;
	}
	return nr;
}

long att_proc_syscall_at(pid_t pid, pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	return syscall_from(open(path, O_RDONLY | O_CLOEXEC), sp, pc, NULL);
}

long att_proc_syscall_args(pid_t pid, pid_t tid, uint64_t args[6], uint64_t *sp, uint64_t *pc)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	return syscall_from(open(path, O_RDONLY | O_CLOEXEC), sp, pc, args);
}

long att_proc_syscall_in(int taskdir, pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char path[32];

	snprintf(path, sizeof(path), "%d/syscall", (int)tid);
	return syscall_from(openat(taskdir, path, O_RDONLY | O_CLOEXEC), sp, pc, NULL);
}

void att_proc_auxv(pid_t pid, const uint64_t *types, uint64_t *vals, size_t n)
{
	char path[64];
	Elf64_auxv_t av[64];	/* a few dozen entries: one read */
	ssize_t got = -1;
	int fd;

	memset(vals, 0, n * sizeof(*vals));
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		got = read(fd, av, sizeof(av));
		close(fd);
	}
	for (size_t i = 0; got > 0 && i < (size_t)got / sizeof(*av) && av[i].a_type != AT_NULL; i++)
		for (size_t k = 0; k < n; k++)
			if (av[i].a_type == types[k])
				vals[k] = av[i].a_un.a_val;
}

int att_proc_maps(pid_t pid, struct att_map **out, size_t *n)
{
	char path[64], *buf;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	err = att_proc_read(path, &buf, NULL);
	if (err)
		return err;
	err = att_maps_parse(buf, out, n);
	free(buf);
	return err;
}

/* A number in @base (16 or 10) at *@p, which is left after it; -1 when
 * there is no digit.  strtoull's locale and sign handling cost 6 calls a
 * line, a third of the parse. */
static int number(const char **p, unsigned base, uint64_t *v)
{
	const char *s = *p;

	for (*v = 0;; s++) {
		unsigned d = *s >= '0' && *s <= '9' ? (unsigned)(*s - '0') :
			     base == 16 && (*s | 0x20) >= 'a' && (*s | 0x20) <= 'f' ?
			     (unsigned)((*s | 0x20) - 'a' + 10) : base;

		if (d >= base)
			break;
		*v = *v * base + d;
	}
	if (s == *p)
		return -1;
	*p = s;
	return 0;
}

/* "start-end perms offset major:minor inode   path", the line ending at
 * @nl: by hand, as sscanf costs milliseconds on the thousands of lines of a
 * process with many threads.  Returns -1 for a line that does not parse. */
static int parse_map_line(const char *e, const char *nl, struct att_map *x, const char **path)
{
	uint64_t maj, min;

	if (number(&e, 16, &x->start) || *e != '-' || (e++, number(&e, 16, &x->end)) ||
	    nl - e < 6 || *e != ' ' || e[5] != ' ')
		return -1;
	memcpy(x->perms, e + 1, 4);
	x->perms[4] = '\0';
	e += 6;
	if (number(&e, 16, &x->offset) || *e++ != ' ' || number(&e, 16, &maj) || *e++ != ':' ||
	    number(&e, 16, &min) || *e++ != ' ' || number(&e, 10, &x->inode))
		return -1;
	x->dev = maj << 32 | min;
	while (*e == ' ')
		e++;
	*path = e;
	return 0;
}

int att_maps_parse(const char *text, struct att_map **out, size_t *n)
{
	size_t cap = 64, cnt = 0;
	struct att_map *m = malloc(cap * sizeof(*m));
	int err = 0;

	if (!m)
		return -ENOMEM;
	for (const char *line = text, *nl; *line; line = *nl ? nl + 1 : nl) {
		struct att_map x = { 0 };
		const char *path;

		nl = strchrnul(line, '\n');
		att_yield_point();
		if (parse_map_line(line, nl, &x, &path))
			continue;
		if (path < nl && !(x.path = strndup(path, (size_t)(nl - path)))) {
			err = -ENOMEM;
			break;
		}
		if (cnt == cap) {
			struct att_map *t = realloc(m, 2 * cap * sizeof(*m));
			if (!t) {
				free(x.path);
				err = -ENOMEM;
				break;
			}
			m = t;
			cap *= 2;
		}
		m[cnt++] = x;
	}
	if (err) {
		att_maps_free(m, cnt);
		return err;
	}
	*out = m;
	*n = cnt;
	return 0;
}

void att_maps_free(struct att_map *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}

static int same_file(const struct att_map *a, const struct att_map *b)
{
	return a->path && b->path && a->dev == b->dev && a->inode == b->inode &&
	       !strcmp(a->path, b->path);
}

void att_maps_run(const struct att_map *maps, size_t n, size_t i, size_t *first, size_t *last)
{
	size_t lo = i, hi = i;

	while (lo > 0 && maps[lo].offset != 0 && same_file(&maps[lo - 1], &maps[i]))
		lo--;
	while (hi + 1 < n && maps[hi + 1].offset != 0 && same_file(&maps[hi + 1], &maps[i]))
		hi++;
	*first = lo;
	*last = hi;
}

/* The kernel lists mappings in address order: a binary search (a process
 * with a thousand threads has three thousand of them). */
const struct att_map *att_maps_find(const struct att_map *maps, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < maps[mid].start)
			hi = mid;
		else if (addr >= maps[mid].end)
			lo = mid + 1;
		else
			return &maps[mid];
	}
	return NULL;
}
