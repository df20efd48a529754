/* services.c -- native stand-ins for the functions jemalloc calls outside itself.
 *
 * The target's libc runs CPU-specific ifunc variants (AVX2, AVX-512) that the
 * emulator cannot execute, and its locks and files belong to the real
 * process.  So each import jemalloc reaches through its GOT is done here on
 * the image: string and memory functions on emulated memory; mutexes as
 * no-ops (nothing else runs in the image, and a lock some real thread holds
 * must not stop us); clocks from the host; files: /proc/PID/maps for the
 * heap profile, and the profile jemalloc writes, captured here.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <strings.h>
#include <sys/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emulate/services.h"

/* Larger copies than this are not jemalloc's bookkeeping. */
#define COPY_MAX	(256UL * 1024 * 1024)
#define STR_MAX		(1024 * 1024)
#define FD_BASE		900

typedef int (*service_fn)(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret);

static int rd(struct emu_cpu *c, uint64_t addr, void *buf, size_t len)
{
	int err = emu_image_read(&c->im, addr, buf, len);

	return err ? emu_cpu_fail(c, err, "reading 0x%llx (%zu bytes) of the image",
				  (unsigned long long)addr, len) : 0;
}

static int wr(struct emu_cpu *c, uint64_t addr, const void *buf, size_t len)
{
	int err = emu_image_write(&c->im, addr, buf, len);

	return err ? emu_cpu_fail(c, err, "writing 0x%llx (%zu bytes) of the image",
				  (unsigned long long)addr, len) : 0;
}

/* A malloc'd copy of @len image bytes at @addr. */
static int fetch(struct emu_cpu *c, uint64_t addr, size_t len, unsigned char **out)
{
	if (len > COPY_MAX)
		return emu_cpu_fail(c, -E2BIG, "a %zu-byte memory operation", len);
	*out = malloc(len ? len : 1);
	if (!*out)
		return -ENOMEM;
	if (rd(c, addr, *out, len)) {
		free(*out);
		return c->err;
	}
	return 0;
}

static int set_errno(struct emu_cpu *c, int e, uint64_t *ret)
{
	*ret = (uint64_t)-1;
	return wr(c, emu_errno_addr(c), &e, sizeof(e));
}

static int s_memmove(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	unsigned char *b;
	int err = fetch(c, a[1], a[2], &b);

	if (err)
		return err;
	err = wr(c, a[0], b, a[2]);
	free(b);
	*ret = a[0];
	return err;
}

static int s_mempcpy(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	int err = s_memmove(c, a, ret);

	*ret = a[0] + a[2];
	return err;
}

static int s_memset(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	unsigned char *b;
	int err;

	if (a[2] > COPY_MAX)
		return emu_cpu_fail(c, -E2BIG, "a %llu-byte memset", (unsigned long long)a[2]);
	b = malloc(a[2] ? a[2] : 1);
	if (!b)
		return -ENOMEM;
	memset(b, (int)a[1], a[2]);
	err = wr(c, a[0], b, a[2]);
	free(b);
	*ret = a[0];
	return err;
}

static int s_memcmp(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	unsigned char *x, *y;
	int err = fetch(c, a[0], a[2], &x);

	if (err)
		return err;
	err = fetch(c, a[1], a[2], &y);
	if (!err) {
		*ret = (uint64_t)(int64_t)memcmp(x, y, a[2]);
		free(y);
	}
	free(x);
	return err;
}

static int s_memchr(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	unsigned char *b, *p;
	int err = fetch(c, a[0], a[2], &b);

	if (err)
		return err;
	p = memchr(b, (int)(a[1] & 0xff), a[2]);
	*ret = p ? a[0] + (uint64_t)(p - b) : 0;
	free(b);
	return 0;
}

/* The string at @addr (at most @max bytes, not necessarily terminated there). */
static int str(struct emu_cpu *c, uint64_t addr, size_t max, char **out, size_t *len)
{
	int trunc, err = emu_image_read_str(&c->im, addr, max, out, &trunc);

	if (err)
		return emu_cpu_fail(c, err, "reading a string at 0x%llx", (unsigned long long)addr);
	*len = strlen(*out);
	return 0;
}

static int s_strlen(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	size_t n;
	int err = emu_image_strnlen(&c->im, a[0], STR_MAX, &n);

	*ret = n;
	return err ? emu_cpu_fail(c, err, "strlen at 0x%llx", (unsigned long long)a[0]) : 0;
}

static int s_strnlen(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	size_t n;
	int err = emu_image_strnlen(&c->im, a[0], a[1] < STR_MAX ? a[1] : STR_MAX, &n);

	*ret = n;
	return err ? emu_cpu_fail(c, err, "strnlen at 0x%llx", (unsigned long long)a[0]) : 0;
}

static int s_strchr(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret, int reverse)
{
	char *s, ch = (char)a[1];
	const char *p;
	size_t n;
	int err = str(c, a[0], STR_MAX, &s, &n);

	if (err)
		return err;
	p = reverse ? strrchr(s, ch) : strchr(s, ch);
	*ret = p ? a[0] + (uint64_t)(p - s) : 0;
	free(s);
	return 0;
}

static int s_strchr_f(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	return s_strchr(c, a, ret, 0);
}

static int s_strrchr(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	return s_strchr(c, a, ret, 1);
}

/* strcmp / strncmp (@n bounds both). */
static int cmp_strings(struct emu_cpu *c, uint64_t x, uint64_t y, size_t n, uint64_t *ret)
{
	char *s, *t;
	size_t ls, lt;
	int err = str(c, x, n < STR_MAX ? n : STR_MAX, &s, &ls);

	if (err)
		return err;
	err = str(c, y, n < STR_MAX ? n : STR_MAX, &t, &lt);
	if (!err) {
		*ret = (uint64_t)(int64_t)strncmp(s, t, n);
		free(t);
	}
	free(s);
	return err;
}

static int s_strcmp(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	return cmp_strings(c, a[0], a[1], STR_MAX, ret);
}

static int s_strncmp(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	return cmp_strings(c, a[0], a[1], a[2], ret);
}

/* strcpy (@bounded: strncpy's padding to a[2]). */
static int copy_string(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret, int bounded)
{
	size_t n = 0, max = bounded ? (a[2] < STR_MAX ? a[2] : STR_MAX) : STR_MAX;
	char *s;
	int err = str(c, a[1], max, &s, &n);

	if (err)
		return err;
	err = wr(c, a[0], s, n < max || !bounded ? n + !bounded : n);
	free(s);
	if (!err && bounded && n < a[2]) {
		uint64_t z[6] = { a[0] + n, 0, a[2] - n };
		err = s_memset(c, z, ret);
	}
	*ret = a[0];
	return err;
}

static int s_strcpy(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	return copy_string(c, a, ret, 0);
}

static int s_strncpy(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	return copy_string(c, a, ret, 1);
}

static int s_zero(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	(void)c;
	(void)a;
	*ret = 0;
	return 0;
}

static int s_errno_location(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	(void)a;
	*ret = emu_errno_addr(c);
	return 0;
}

static int s_pthread_self(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	(void)a;
	/* jemalloc 5.x never calls pthread_self; it is served for builds that do. */
	*ret = c->tp - c->arch->m->pthread_below_tp;
	return 0;
}

static int s_getpid(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	(void)a;
	*ret = (uint64_t)c->pid;
	return 0;
}

static int s_clock_gettime(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	struct timespec ts;

	if (clock_gettime((clockid_t)a[0], &ts))
		return set_errno(c, errno, ret);
	*ret = 0;
	return wr(c, a[1], &ts, sizeof(ts));
}

static int s_gettimeofday(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	*ret = 0;
	return a[0] ? wr(c, a[0], &tv, sizeof(tv)) : 0;
}

static int s_ffs(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	(void)c;
	*ret = (uint64_t)ffs((int)a[0]);
	return 0;
}

/* double f(double): argument and result in the machine's first FP register
 * (x86_64 xmm0, arm64 d0), its low 8 bytes. */
static int math1(struct emu_cpu *c, double (*f)(double))
{
	uint8_t x[16] = { 0 };
	double d;

	emu_uc.reg_read(c->im.uc, c->arch->fpret, x);
	memcpy(&d, x, sizeof(d));
	d = f(d);
	memcpy(x, &d, sizeof(d));
	emu_uc.reg_write(c->im.uc, c->arch->fpret, x);
	return 0;
}

static int s_exp(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	(void)a;
	*ret = 0;
	return math1(c, exp);
}

static int s_log(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	(void)a;
	*ret = 0;
	return math1(c, log);
}

static int s_round(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	(void)a;
	*ret = 0;
	return math1(c, round);
}

/* dlsym(handle, name): the stub of that function, whatever the handle. */
static int s_dlsym(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	char *name;
	size_t n;
	int err = str(c, a[1], 256, &name, &n);

	if (err)
		return err;
	*ret = emu_cpu_stub(c, name);
	free(name);
	return 0;
}

static int s_abort(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	(void)a;
	(void)ret;
	return emu_cpu_fail(c, -EFAULT, "jemalloc aborted in the emulation (an assertion or "
			    "corrupted state in the image)");
}

static int s_mmap(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	if ((int)a[4] != -1)
		return emu_cpu_fail(c, -ENOSYS, "jemalloc mapped a file (fd %d)", (int)a[4]);
	*ret = emu_cpu_mmap(c, a[1]);
	return *ret ? 0 : set_errno(c, ENOMEM, ret);
}

static struct emu_file *file_of(struct emu_cpu *c, uint64_t fd)
{
	uint64_t i = fd - FD_BASE;

	return i < EMU_MAXFILES && c->files[i].used ? &c->files[i] : NULL;
}

/* open(path, flags): the process's maps for reading, anything written is captured. */
static int do_open(struct emu_cpu *c, uint64_t upath, int flags, uint64_t *ret)
{
	char *path, want[64], self[] = "/proc/self/maps";
	struct emu_file *f = NULL;
	size_t n;
	int err = str(c, upath, 4096, &path, &n), i;

	if (err)
		return err;
	for (i = 0; i < EMU_MAXFILES && !f; i++)
		if (!c->files[i].used)
			f = &c->files[i];
	if (!f) {
		free(path);
		return set_errno(c, EMFILE, ret);
	}
	snprintf(want, sizeof(want), "/proc/%d/maps", (int)c->pid);
	memset(f, 0, sizeof(*f));
	f->path = path;
	if (flags & (O_WRONLY | O_RDWR | O_CREAT)) {
		f->writing = 1;
	} else if (!strcmp(path, want) || !strcmp(path, self)) {
		err = c->maps_text ? c->maps_text(c->maps_arg, &f->buf, &f->len) : -ENOENT;
		if (err) {
			free(path);
			f->path = NULL;
			return set_errno(c, -err, ret);
		}
	} else {
		free(path);
		f->path = NULL;
		return set_errno(c, ENOENT, ret);
	}
	f->used = 1;
	*ret = FD_BASE + (uint64_t)(f - c->files);
	return 0;
}

static int do_write(struct emu_cpu *c, uint64_t fd, uint64_t buf, uint64_t len, uint64_t *ret)
{
	struct emu_file *f = file_of(c, fd);
	char *t;

	if (fd == 1 || fd == 2) {	/* jemalloc's messages: not the real process's stderr */
		*ret = len;
		return 0;
	}
	if (!f || !f->writing)
		return set_errno(c, EBADF, ret);
	if (len > COPY_MAX || f->len + len > COPY_MAX * 4)
		return emu_cpu_fail(c, -EFBIG, "jemalloc wrote more than %lu bytes", COPY_MAX * 4);
	if (f->len + len > f->cap) {
		size_t cap = (f->len + len) * 2;
		if (!(t = realloc(f->buf, cap)))
			return -ENOMEM;
		f->buf = t;
		f->cap = cap;
	}
	if (rd(c, buf, f->buf + f->len, len))
		return c->err;
	f->len += len;
	*ret = len;
	return 0;
}

static int do_read(struct emu_cpu *c, uint64_t fd, uint64_t buf, uint64_t len, uint64_t *ret)
{
	struct emu_file *f = file_of(c, fd);
	size_t n;

	if (!f || f->writing)
		return set_errno(c, EBADF, ret);
	n = f->len - f->pos < len ? f->len - f->pos : len;
	if (wr(c, buf, f->buf + f->pos, n))
		return c->err;
	f->pos += n;
	*ret = n;
	return 0;
}

static int do_close(struct emu_cpu *c, uint64_t fd, uint64_t *ret)
{
	struct emu_file *f = file_of(c, fd);

	if (!f)
		return set_errno(c, EBADF, ret);
	if (f->writing) {
		/* The profile is complete: keep it for the backend. */
		free(c->dump);
		free(c->dump_path);
		c->dump = f->buf;
		c->dump_len = f->len;
		c->dump_path = f->path;
	} else {
		free(f->buf);
		free(f->path);
	}
	memset(f, 0, sizeof(*f));
	*ret = 0;
	return 0;
}

static int s_open(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	return do_open(c, a[0], (int)a[1], ret);
}

static int s_openat(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	return do_open(c, a[1], (int)a[2], ret);
}

static int s_creat(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	return do_open(c, a[0], O_CREAT | O_WRONLY | O_TRUNC, ret);
}

static int s_write(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	return do_write(c, a[0], a[1], a[2], ret);
}

static int s_read(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	return do_read(c, a[0], a[1], a[2], ret);
}

static int s_close(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	return do_close(c, a[0], ret);
}

/* syscall(nr, ...): jemalloc's raw system calls (JEMALLOC_USE_SYSCALL), by the
 * emulated machine's numbers, whatever the machine the emulator runs on. */
static int s_syscall(struct emu_cpu *c, const uint64_t a[6], uint64_t *ret)
{
	const struct att_machine_sys *n = &c->arch->m->sys;
	long nr = (long)a[0];

	if (nr == n->write)
		return do_write(c, a[1], a[2], a[3], ret);
	else if (nr == n->read)
		return do_read(c, a[1], a[2], a[3], ret);
	else if (n->open >= 0 && nr == n->open)
		return do_open(c, a[1], (int)a[2], ret);
	else if (nr == n->openat)
		return do_open(c, a[2], (int)a[3], ret);
	else if (nr == n->close)
		return do_close(c, a[1], ret);
	else if (nr == n->getpid || nr == n->gettid) {
		*ret = (uint64_t)c->pid;
		return 0;
	}
	return emu_cpu_fail(c, -ENOSYS, "jemalloc made system call %llu, which emulation "
			    "does not provide", (unsigned long long)a[0]);
}

static const struct {
	const char *name;
	service_fn fn;
} services[] = {
	{ "memcpy", s_memmove }, { "memmove", s_memmove }, { "__memcpy_chk", s_memmove },
	{ "__memmove_chk", s_memmove }, { "mempcpy", s_mempcpy }, { "memset", s_memset },
	{ "__memset_chk", s_memset }, { "memcmp", s_memcmp }, { "bcmp", s_memcmp },
	{ "memchr", s_memchr }, { "strlen", s_strlen }, { "strnlen", s_strnlen },
	{ "strchr", s_strchr_f }, { "strrchr", s_strrchr }, { "strcmp", s_strcmp },
	{ "strncmp", s_strncmp }, { "strcpy", s_strcpy }, { "__strcpy_chk", s_strcpy },
	{ "strncpy", s_strncpy }, { "__strncpy_chk", s_strncpy },
	{ "clock_gettime", s_clock_gettime }, { "sched_getcpu", s_zero },
	{ "__errno_location", s_errno_location },
	{ "pthread_mutex_lock", s_zero }, { "pthread_mutex_unlock", s_zero },
	{ "pthread_mutex_trylock", s_zero }, { "pthread_mutex_init", s_zero },
	{ "pthread_mutex_destroy", s_zero }, { "pthread_mutexattr_init", s_zero },
	{ "pthread_mutexattr_settype", s_zero }, { "pthread_mutexattr_destroy", s_zero },
	{ "pthread_self", s_pthread_self }, { "getpid", s_getpid },
	{ "mmap", s_mmap }, { "mmap64", s_mmap }, { "munmap", s_zero }, { "madvise", s_zero },
	{ "open", s_open }, { "open64", s_open }, { "openat", s_openat },
	{ "openat64", s_openat }, { "creat", s_creat }, { "creat64", s_creat },
	{ "write", s_write }, { "read", s_read }, { "close", s_close },
	{ "syscall", s_syscall }, { "gettimeofday", s_gettimeofday }, { "ffs", s_ffs },
	{ "exp", s_exp }, { "log", s_log }, { "round", s_round }, { "dlsym", s_dlsym },
	{ "sched_yield", s_zero }, { "pthread_sigmask", s_zero },
	{ "pthread_cond_signal", s_zero },
	{ "abort", s_abort }, { "__assert_fail", s_abort }, { "__stack_chk_fail", s_abort },
};

int emu_service_find(const char *name)
{
	for (size_t i = 0; i < sizeof(services) / sizeof(*services); i++)
		if (!strcmp(services[i].name, name))
			return (int)i;
	return -1;
}

int emu_service_run(struct emu_cpu *c, int idx, const uint64_t a[6], uint64_t *ret)
{
	return services[idx].fn(c, a, ret);
}
