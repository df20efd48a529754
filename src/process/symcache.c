/* symcache.c -- what finding jemalloc found, kept between runs by build-id (see symcache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jemattach/version.h>

#include "attach/mem.h"
#include "symbols/buildid.h"
#include "process/safepath.h"
#include "process/symcache.h"

/* Bump when what an entry means changes: older entries are then misses. */
#define FORMAT		"jemattach symcache 5 " JMA_VERSION_STRING
#define MAX_FILES	512		/* code files in a key; more: not cached */
#define MAX_ENTRY	(1 << 20)
#define MAX_RANGES	65536
#define MAX_KEPT	256		/* entries; the oldest written go first */
/* Read of each file's start: the ELF and program headers and, in every file
 * looked at (Debian's, linked by ld), the build-id note (offsets 0x238-0x370);
 * read_head reads past it when it must.  A page each cost 18 page faults of
 * our own on Redis. */
#define HEAD		1024

/* The code files of @maps, as indexes of their first executable mapping,
 * in map order.  -1 when there are more than MAX_FILES, or when a file's
 * code is mapped in two modules (loaded twice, as dlmopen does): a search
 * reports those as two copies, and one key line cannot say so. */
static int code_files(const struct att_map *maps, size_t n, size_t *code)
{
	int nc = 0;

	for (size_t i = 0; i < n; i++) {
		size_t first, last;
		int j;

		if (!maps[i].path || maps[i].path[0] != '/' || maps[i].perms[2] != 'x')
			continue;
		for (j = 0; j < nc && strcmp(maps[code[j]].path, maps[i].path); j++)
			;
		if (j < nc) {
			att_maps_run(maps, n, code[j], &first, &last);
			if (i > last)
				return -1;
			continue;
		}
		if (nc == MAX_FILES)
			return -1;
		code[nc++] = i;
	}
	return nc;
}

/* The module holding code mapping @i (att_maps_run: not another mapping of
 * its file by the program itself). */
struct module {
	const struct att_map *first, *last;
	uint64_t base;		/* where its ELF header is mapped (file offset 0); 0: not */
};

static struct module module_of(const struct att_map *maps, size_t n, size_t i)
{
	size_t first, last;

	att_maps_run(maps, n, i, &first, &last);
	return (struct module){ &maps[first], &maps[last],
				maps[first].offset == 0 ? maps[first].start : 0 };
}

/* Is @addr in an executable mapping of module @m? */
static int in_module_code(const struct att_map *maps, size_t n, const struct module *m,
			  uint64_t addr)
{
	const struct att_map *at = att_maps_find(maps, n, addr);

	return at && at >= m->first && at <= m->last && at->perms[2] == 'x';
}

struct head_reader {
	pid_t pid;
	const struct att_piece *p;
};

/* From the first page already read, else from the process. */
static int read_head(void *arg, uint64_t addr, void *buf, size_t n)
{
	const struct head_reader *h = arg;

	if (h->p->ok && addr >= h->p->addr && n <= HEAD && addr - h->p->addr <= HEAD - n) {
		memcpy(buf, (const char *)h->p->buf + (addr - h->p->addr), n);
		return 0;
	}
	return att_mem_read(h->pid, addr, buf, n);
}

char *proc_symcache_key(pid_t pid, const struct att_map *maps, size_t n, const char *prefix,
		       const char *module)
{
	size_t code[MAX_FILES], klen = 0;
	int nc = code_files(maps, n, code), ok = 0;
	struct att_piece *p = NULL;
	char *heads = NULL, *key = NULL;
	FILE *f = NULL;

	if (nc <= 0 || !(p = calloc((size_t)nc, sizeof(*p))) ||
	    !(heads = malloc((size_t)nc * HEAD)))
		goto out;
	for (int j = 0; j < nc; j++) {
		uint64_t b = module_of(maps, n, code[j]).base;

		if (!b)
			goto out;
		p[j] = (struct att_piece){ b, heads + (size_t)j * HEAD, HEAD, 0 };
	}
	/* One system call for every file's first page. */
	if (att_mem_read_pieces(pid, p, (size_t)nc) || !(f = open_memstream(&key, &klen)))
		goto out;
	fprintf(f, "%s\nprefix %s%s\nmodule %s%s\n", FORMAT, prefix ? "=" : "any", prefix ? prefix : "",
		module ? "=" : "any", module ? module : "");
	for (int j = 0; j < nc; j++) {
		struct head_reader h = { pid, &p[j] };
		unsigned char id[64];
		char text[2 * sizeof(id) + 1];
		ssize_t len = syms_build_id_at(read_head, &h, p[j].addr, id, sizeof(id));

		if (len <= 0)
			goto out;
		/* Not a formatted print per byte: 18 files' ids cost 40 us so. */
		for (ssize_t k = 0; k < len; k++) {
			text[2 * k] = "0123456789abcdef"[id[k] >> 4];
			text[2 * k + 1] = "0123456789abcdef"[id[k] & 15];
		}
		text[2 * len] = '\0';
		/* The kernel's name for the file too: a build-id is only what the
		 * target's memory says, and the target is not trusted. */
		fprintf(f, "%s %llx:%llx %s\n", text, (unsigned long long)maps[code[j]].dev,
			(unsigned long long)maps[code[j]].inode, maps[code[j]].path);
	}
	ok = 1;
out:
	if (f && fclose(f))
		ok = 0;
	free(heads);
	free(p);
	if (!ok) {
		free(key);
		return NULL;
	}
	return key;
}

/* The entry's file name: the key's 64-bit FNV-1a hash (the key itself is
 * stored in the entry and compared whole). */
static void entry_name(const char *key, char *out, size_t len)
{
	unsigned long long h = 0xcbf29ce484222325ULL;

	for (const unsigned char *k = (const unsigned char *)key; *k; k++)
		h = (h ^ *k) * 0x100000001b3ULL;
	snprintf(out, len, "%016llx", h);
}

/* Is @fd ours alone: owned by our user, writable by nobody else?  @size
 * (may be NULL) gets its size. */
static int ours(int fd, mode_t type, off_t *size)
{
	struct stat st;

	if (fstat(fd, &st) || (st.st_mode & S_IFMT) != type || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)))
		return 0;
	if (size)
		*size = st.st_size;
	return 1;
}

/* Make directory @path (mode 0700) in a parent that is ours, making that
 * parent the same way when it is missing and @depth allows (~/.cache on a
 * new account).  Run as root with another user's $HOME, nothing is made in
 * that home.  No component is a symlink of another user (safepath.h). */
static int make_dir(const char *path, int depth)
{
	char *parent = strdup(path), *slash = parent ? strrchr(parent, '/') : NULL, msg[256];
	struct stat st;
	int pfd, err = 0;

	if (!slash || slash == parent) {
		err = parent ? -EINVAL : -ENOMEM;
		free(parent);
		return err;
	}
	*slash = '\0';
	pfd = proc_path_open(parent, O_RDONLY | O_DIRECTORY, 0, msg, sizeof(msg));
	if (pfd == -ENOENT && depth > 0 && !(err = make_dir(parent, depth - 1)))
		pfd = proc_path_open(parent, O_RDONLY | O_DIRECTORY, 0, msg, sizeof(msg));
	if (pfd < 0)
		err = err ? err : pfd;
	else if (fstat(pfd, &st) || st.st_uid != geteuid())
		err = -EPERM;
	else if (mkdirat(pfd, slash + 1, 0700) && errno != EEXIST)
		err = -errno;
	if (pfd >= 0)
		close(pfd);
	free(parent);
	return err;
}

/* @dir, opened when it is ours alone (made when @make, see make_dir),
 * reached through no symlink of another user. */
static int open_dir(const char *dir, int make)
{
	char msg[256];
	int fd = proc_path_open(dir, O_RDONLY | O_DIRECTORY, 0, msg, sizeof(msg)), err;

	if (fd == -ENOENT && make) {
		if ((err = make_dir(dir, 1)))
			return err;
		fd = proc_path_open(dir, O_RDONLY | O_DIRECTORY, 0, msg, sizeof(msg));
	}
	if (fd < 0)
		return fd;
	if (!ours(fd, S_IFDIR, NULL)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Read entry @name of @dir whole, when ours alone.  -errno or its length. */
static ssize_t read_entry(const char *dir, const char *name, char **out)
{
	int dfd = open_dir(dir, 0), fd;
	ssize_t len = 0, got, max;
	char *buf = NULL;
	off_t size;

	if (dfd < 0)
		return dfd;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return -errno;
	/* Sized by the file (entries are replaced by rename, never grown in
	 * place): a buffer of MAX_ENTRY cost an mmap and a munmap of 1 MiB. */
	if (!ours(fd, S_IFREG, &size)) {
		close(fd);
		return -EPERM;
	}
	max = size < MAX_ENTRY ? (ssize_t)size : MAX_ENTRY;
	if (!(buf = malloc((size_t)max + 1))) {
		close(fd);
		return -ENOMEM;
	}
	while (len < max && (got = read(fd, buf + len, (size_t)(max - len))) > 0)
		len += got;
	close(fd);
	buf[len] = '\0';
	*out = buf;
	return len;
}

/* "name=value" at *@at: the value (NUL-terminated in place), *@at moved
 * past the line; NULL when the line is another. */
static char *field(char **at, const char *name)
{
	size_t k = strlen(name);
	char *v, *nl;

	if (strncmp(*at, name, k) || (*at)[k] != '=')
		return NULL;
	v = *at + k + 1;
	nl = strchr(v, '\n');
	if (!nl)
		return NULL;
	*nl = '\0';
	*at = nl + 1;
	return v;
}

static int hex(const char *s, uint64_t *v)
{
	char *e;

	if (!*s)
		return -1;
	errno = 0;
	*v = strtoull(s, &e, 16);
	return errno || *e ? -1 : 0;
}

/* A prefix or environment name as jemalloc makes them: [A-Za-z0-9_]. */
static int word(const char *s, size_t max)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

	return !s[n] && n < max;
}

/* "LO-HI" (hex, LO < HI) at @v, cut in place. */
static int hex_range(char *v, uint64_t *lo, uint64_t *hi)
{
	char *dash = strchr(v, '-');

	if (!dash)
		return -1;
	*dash = '\0';
	return hex(v, lo) || hex(dash + 1, hi) || *lo >= *hi ? -1 : 0;
}

/* "FILE:REST" at @v, FILE an index among @nc code files: REST (the colon cut
 * in place), or NULL. */
static char *file_ref(char *v, int nc, uint64_t *idx)
{
	char *colon = strchr(v, ':');

	if (!colon)
		return NULL;
	*colon = '\0';
	return hex(v, idx) || *idx >= (uint64_t)nc ? NULL : colon + 1;
}

/* Parse the copy at *@at into @c, relocated by @base, within [@base, @end),
 * moving *@at past it.  -1 when anything is off. */
static int parse_copy(char **at, uint64_t base, uint64_t end, struct jma_copy *c)
{
	char *prefix = field(at, "prefix"), *conf = prefix ? field(at, "conf") : NULL;
	char *st = conf ? field(at, "static") : NULL, *v;
	uint64_t ctl, print, lo, hi;
	size_t cap = 0;

	if (!st || !word(prefix, 40) || !word(conf, sizeof(c->conf_env)) ||
	    (strcmp(st, "0") && strcmp(st, "1")) || !(v = field(at, "mallctl")) || hex(v, &ctl) ||
	    !(v = field(at, "print")) || hex(v, &print) || ctl >= end - base ||
	    print >= end - base || !(c->prefix = strdup(prefix)))
		return -1;
	snprintf(c->conf_env, sizeof(c->conf_env), "%s", conf);
	c->is_static = st[0] == '1';
	c->fn_mallctl = base + ctl;
	c->fn_stats_print = print ? base + print : 0;
	/* Sorted and disjoint, as syms_in_jemalloc's search needs. */
	while ((v = field(at, "range")))
		if (c->ncode == MAX_RANGES || hex_range(v, &lo, &hi) || hi > end - base ||
		    (c->ncode && base + lo < c->code[c->ncode - 1].hi) ||
		    syms_ranges_add(&c->code, &c->ncode, &cap, base + lo, base + hi))
			return -1;
	return c->ncode ? 0 : -1;
}

/* The condition-wait functions at *@at ("wait=FILE:LO-HI", by file index
 * and offset from its module), each inside the code of its module.  Sorted
 * here: the modules need not be mapped in the same order as when kept. */
static int parse_waits(char **at, const struct att_map *maps, size_t n, const size_t *code,
		       int nc, struct jma_range **out, size_t *nout)
{
	struct jma_range *v = NULL;
	size_t nv = 0, cap = 0;
	uint64_t idx, lo, hi;
	char *w, *r;

	while ((w = field(at, "wait"))) {
		struct module m;

		if (nv == MAX_RANGES || !(r = file_ref(w, nc, &idx)) || hex_range(r, &lo, &hi))
			goto bad;
		m = module_of(maps, n, code[idx]);
		if (!m.base || hi > m.last->end - m.base ||
		    !in_module_code(maps, n, &m, m.base + lo) ||
		    !in_module_code(maps, n, &m, m.base + hi - 1) ||
		    syms_ranges_add(&v, &nv, &cap, m.base + lo, m.base + hi))
			goto bad;
	}
	syms_ranges_merge(v, &nv, 0);
	*out = v;
	*nout = nv;
	return 0;
bad:
	free(v);
	return -1;
}

/* Is @addr in writable data of module @m: its own mappings, or the
 * anonymous one right after them (the rest of its .bss)? */
static int in_module_data(const struct att_map *maps, size_t n, const struct module *m,
			  uint64_t addr)
{
	const struct att_map *at = att_maps_find(maps, n, addr);

	return at && at->perms[1] == 'w' &&
	       ((at >= m->first && at <= m->last) ||
		(at == m->last + 1 && !at->path && at->start == m->last->end));
}

/* "NAME=none" or "NAME=FILE:OFFSET" at *@at, into *@addr: an address in the
 * writable data (@data) or the code of that file's module. */
static int parse_addr(char **at, const char *name, const struct att_map *maps, size_t n,
		      const size_t *code, int nc, int data, uint64_t *addr)
{
	char *v = field(at, name), *r;
	uint64_t idx, off;
	struct module m;

	*addr = 0;
	if (v && !strcmp(v, "none"))
		return 0;
	if (!v || !(r = file_ref(v, nc, &idx)) || hex(r, &off))
		return -1;
	m = module_of(maps, n, code[idx]);
	*addr = m.base + off;
	return m.base && off < UINT64_MAX - m.base &&
	       (data ? in_module_data(maps, n, &m, *addr) : in_module_code(maps, n, &m, *addr)) ? 0 : -1;
}

int proc_symcache_load(const char *dir, const char *key, const struct att_map *maps, size_t n,
		      struct jma_found *f)
{
	size_t code[MAX_FILES], klen = strlen(key);
	int nc = code_files(maps, n, code);
	char name[32], *buf = NULL, *at, *v;
	struct jma_copy *c = &f->copy;
	struct module m;
	uint64_t idx;
	ssize_t len;

	memset(f, 0, sizeof(*f));
	entry_name(key, name, sizeof(name));
	len = read_entry(dir, name, &buf);
	if (len < 0)
		return -ENOENT;
	if ((size_t)len <= klen || memcmp(buf, key, klen) || strncmp(buf + klen, "--\n", 3))
		goto miss;
	at = buf + klen + 3;
	if (!(v = field(&at, "file")) || hex(v, &idx) || idx >= (uint64_t)(nc > 0 ? nc : 0))
		goto miss;
	m = module_of(maps, n, code[idx]);
	if (!m.base || !(c->path = strdup(maps[code[idx]].path)) ||
	    parse_copy(&at, m.base, m.last->end, c) || !in_module_code(maps, n, &m, c->fn_mallctl) ||
	    (c->fn_stats_print && !in_module_code(maps, n, &m, c->fn_stats_print)) ||
	    parse_waits(&at, maps, n, code, nc, &f->waits, &f->nwaits) ||
	    parse_addr(&at, "message", maps, n, code, nc, 1, &f->message) ||
	    parse_addr(&at, "restorer", maps, n, code, nc, 0, &f->restorer) || strcmp(at, "end\n"))
		goto miss;
	free(buf);
	return 0;
miss:
	free(buf);
	free(c->path);
	free(c->prefix);
	free(c->code);
	free(f->waits);
	memset(f, 0, sizeof(*f));
	return -ENOENT;
}

/* The index among @code[0..nc) of the file whose module has [@lo, @hi) in
 * its code or, with @data, @lo in its writable data; its base in *@base; -1
 * when none has. */
static int file_with(const struct att_map *maps, size_t n, const size_t *code, int nc,
		     uint64_t lo, uint64_t hi, int data, uint64_t *base)
{
	for (int j = 0; j < nc; j++) {
		struct module m = module_of(maps, n, code[j]);

		if (m.base && (data ? in_module_data(maps, n, &m, lo)
				    : in_module_code(maps, n, &m, lo) &&
					      in_module_code(maps, n, &m, hi - 1))) {
			*base = m.base;
			return j;
		}
	}
	return -1;
}

/* "NAME=FILE:OFFSET" for @addr in the writable data (@data) or the code of
 * a file's module, "NAME=none" for 0; -EINVAL when no file has it. */
static int put_addr(FILE *f, const char *name, const struct att_map *maps, size_t n,
		    const size_t *code, int nc, int data, uint64_t addr)
{
	uint64_t base;
	int j = addr ? file_with(maps, n, code, nc, addr, addr + 1, data, &base) : -1;

	if (!addr)
		fprintf(f, "%s=none\n", name);
	else if (j < 0)
		return -EINVAL;		/* kept whole or not at all */
	else
		fprintf(f, "%s=%x:%llx\n", name, (unsigned)j, (unsigned long long)(addr - base));
	return 0;
}

/* Is @name an entry's (16 hex digits), or, with @pid, one being written
 * (".PID" after them, the writer's PID in *@pid)? */
static int entry_like(const char *name, long *pid)
{
	char *end;

	if (strspn(name, "0123456789abcdef") != 16)
		return 0;
	if (!pid)
		return !name[16];
	if (name[16] != '.' || name[17] < '1' || name[17] > '9')
		return 0;
	*pid = strtol(name + 17, &end, 10);
	return !*end;
}

struct kept {
	char name[17];
	struct timespec mtime;
};

static int older(const void *a, const void *b)
{
	const struct timespec *x = &((const struct kept *)a)->mtime;
	const struct timespec *y = &((const struct kept *)b)->mtime;

	return x->tv_sec != y->tv_sec ? (x->tv_sec < y->tv_sec ? -1 : 1) :
	       (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* After a save: remove what a killed writer left (".PID" files of processes
 * gone) and the oldest written entries past MAX_KEPT.  Only names of ours
 * are touched. */
static void tidy(int dfd)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct kept *k = NULL;
	size_t nk = 0, cap = 0;
	struct dirent *e;
	struct stat st;
	long pid;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (entry_like(e->d_name, &pid)) {
			if (kill((pid_t)pid, 0) && errno == ESRCH)
				unlinkat(dfd, e->d_name, 0);
			continue;
		}
		if (!entry_like(e->d_name, NULL) ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (nk == cap) {
			struct kept *t = realloc(k, (cap = cap ? 2 * cap : 64) * sizeof(*k));

			if (!t)
				break;
			k = t;
		}
		memcpy(k[nk].name, e->d_name, sizeof(k[nk].name));
		k[nk++].mtime = st.st_mtim;
	}
	closedir(d);
	if (nk > MAX_KEPT) {
		qsort(k, nk, sizeof(*k), older);
		for (size_t i = 0; i < nk - MAX_KEPT; i++)
			unlinkat(dfd, k[i].name, 0);
	}
	free(k);
}

int proc_symcache_save(const char *dir, const char *key, const struct att_map *maps, size_t n,
		      const struct jma_found *found)
{
	const struct jma_copy *c = &found->copy;
	const struct jma_range *waits = found->waits;
	size_t nwaits = found->nwaits;
	size_t code[MAX_FILES], blen = 0;
	int nc = code_files(maps, n, code), idx, dfd, fd, err = 0;
	uint64_t base;
	char name[32], tmp[64], *body = NULL;
	FILE *f;

	for (idx = 0; idx < nc && strcmp(maps[code[idx]].path, c->path); idx++)
		;
	if (idx == nc || !(base = module_of(maps, n, code[idx]).base) || !c->ncode)
		return -EINVAL;
	if (!(f = open_memstream(&body, &blen)))
		return -ENOMEM;
	fprintf(f, "%s--\nfile=%x\nprefix=%s\nconf=%s\nstatic=%d\nmallctl=%llx\nprint=%llx\n", key,
		(unsigned)idx, c->prefix, c->conf_env, !!c->is_static,
		(unsigned long long)(c->fn_mallctl - base),
		(unsigned long long)(c->fn_stats_print ? c->fn_stats_print - base : 0));
	for (size_t i = 0; i < c->ncode; i++)
		fprintf(f, "range=%llx-%llx\n", (unsigned long long)(c->code[i].lo - base),
			(unsigned long long)(c->code[i].hi - base));
	for (size_t i = 0; i < nwaits && !err; i++) {
		uint64_t wb;
		int j = file_with(maps, n, code, nc, waits[i].lo, waits[i].hi, 0, &wb);

		if (j < 0)
			err = -EINVAL;	/* kept whole or not at all */
		else
			fprintf(f, "wait=%x:%llx-%llx\n", (unsigned)j,
				(unsigned long long)(waits[i].lo - wb),
				(unsigned long long)(waits[i].hi - wb));
	}
	if (!err)
		err = put_addr(f, "message", maps, n, code, nc, 1, found->message);
	if (!err)
		err = put_addr(f, "restorer", maps, n, code, nc, 0, found->restorer);
	fprintf(f, "end\n");
	if (fclose(f) || blen > MAX_ENTRY || err) {
		free(body);
		return err ? err : -ENOMEM;
	}
	if ((dfd = open_dir(dir, 1)) < 0) {
		free(body);
		return dfd;
	}
	/* Written aside, then renamed over: a reader sees a whole entry or none. */
	entry_name(key, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), "%s.%d", name, (int)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		err = -errno;
	else if (write(fd, body, blen) != (ssize_t)blen)
		err = -EIO;
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (fd >= 0 && (err || renameat(dfd, tmp, dfd, name))) {
		err = err ? err : -errno;
		unlinkat(dfd, tmp, 0);
	}
	if (!err)
		tidy(dfd);
	close(dfd);
	free(body);
	return err;
}

static int use_load(void *arg, pid_t pid, const struct att_map *maps, size_t n, struct jma_found *f)
{
	struct proc_symcache_use *u = arg;

	free(u->key);
	u->key = proc_symcache_key(pid, maps, n, u->prefix, u->module);
	return u->key ? proc_symcache_load(u->dir, u->key, maps, n, f) : -ENOENT;
}

static void use_save(void *arg, pid_t pid, const struct att_map *maps, size_t n,
		     const struct jma_found *f)
{
	struct proc_symcache_use *u = arg;

	(void)pid;
	if (u->key)
		proc_symcache_save(u->dir, u->key, maps, n, f);
}

void proc_symcache_use(struct proc_symcache_use *u, const char *dir, const char *prefix,
		      const char *module)
{
	*u = (struct proc_symcache_use){ { use_load, use_save, u }, dir, prefix, module, NULL };
}

void proc_symcache_done(struct proc_symcache_use *u)
{
	free(u->key);
	u->key = NULL;
}
