/* fake_backend.c -- a jemalloc emulated from a table behind core/backend.h, for unit tests (see fake_backend.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jemattach.h>

#include "fake_backend.h"

#define V JMA_JEVERSION

/* The target's memory: fixed data (strings, counters) then scratch. */
#define MEM_BASE 0x7f5a10000000ULL
#define MEM_SIZE (64 * 1024)
/* A mallctl that would have crashed the target (a bad pointer). */
#define CRASH (-1)

struct fake_be {
	struct jma_backend be;
	struct fake_je je;
	unsigned char mem[MEM_SIZE];
	/* Fixed data ends at fixed, scratch in use at top; what a call
	 * released stays readable (its results) until handed out again, up to
	 * the highest top. */
	size_t fixed, top, high;
	uint64_t version_str, prefix_str, junk_str, purge_str[2], cactive_at, text_at;
	int begun;
	char *file;		/* the last dump's contents (dump) */
	size_t file_len;
};

/* What a mallctl was given, as target addresses. */
struct req {
	uint64_t oldp, oldlenp, newp;
	size_t newlen;
};

static void *at(struct fake_be *f, uint64_t addr, size_t len)
{
	if (addr < MEM_BASE || addr - MEM_BASE > f->high || len > f->high - (addr - MEM_BASE))
		return NULL;
	return f->mem + (addr - MEM_BASE);
}

static uint64_t place(struct fake_be *f, const void *data, size_t len, size_t align)
{
	size_t start = align > 1 ? (f->top + align - 1) / align * align : f->top;

	if (start + len > MEM_SIZE)
		return 0;
	if (data)
		memcpy(f->mem + start, data, len);
	else
		memset(f->mem + start, 0, len);
	f->top = start + len;
	if (f->top > f->high)
		f->high = f->top;
	return MEM_BASE + start;
}

static uint64_t place_str(struct fake_be *f, const char *s)
{
	return place(f, s, strlen(s) + 1, 1);
}

/* jemalloc's READ(v, t): a size mismatch copies what fits and is EINVAL;
 * 5.3 and later also say the real size in *oldlenp. */
static int rd(struct fake_be *f, const struct req *r, const void *v, size_t size)
{
	unsigned char *lenp, *old;
	size_t len;

	if (!r->oldp || !r->oldlenp)
		return 0;
	if (!(lenp = at(f, r->oldlenp, sizeof(len))))
		return CRASH;
	memcpy(&len, lenp, sizeof(len));
	if (!(old = at(f, r->oldp, len < size ? len : size)))
		return CRASH;
	if (len != size) {
		size_t copy = size <= len ? size : len;

		memcpy(old, v, copy);
		if (f->je.version >= V(5, 3, 0))
			memcpy(lenp, &copy, sizeof(copy));
		return EINVAL;
	}
	memcpy(old, v, size);
	return 0;
}

/* jemalloc's WRITE(v, t): the new value when one is given (*given). */
static int wr(struct fake_be *f, const struct req *r, void *v, size_t size, int *given)
{
	const void *p;

	*given = r->newp != 0;
	if (!r->newp)
		return 0;
	if (r->newlen != size)
		return EINVAL;
	if (!(p = at(f, r->newp, size)))
		return CRASH;
	memcpy(v, p, size);
	return 0;
}

static int readonly(const struct req *r)
{
	return r->newp || r->newlen ? EPERM : 0;
}

static int writeonly(const struct req *r)
{
	return r->oldp || r->oldlenp ? EPERM : 0;
}

/* A read-only name of @size bytes at @v. */
static int ro(struct fake_be *f, const struct req *r, const void *v, size_t size)
{
	int ret = readonly(r);

	return ret ? ret : rd(f, r, v, size);
}

/* A read-write name: the old value read, then the new one written (the
 * usual order of ctl.c), through @set when given (its errno), else stored. */
static int rw(struct fake_be *f, const struct req *r, void *v, size_t size,
	      int (*set)(struct fake_be *f, const void *nv))
{
	unsigned char nv[8];
	int given, ret = rd(f, r, v, size);

	if (!ret)
		ret = wr(f, r, nv, size, &given);
	if (ret || !given)
		return ret;
	if (set)
		return set(f, nv);
	memcpy(v, nv, size);
	return 0;
}

/* 4.x: decay times only when purging by decay (arena_decay_time_default_set). */
static int set_decay(struct fake_be *f, const void *nv)
{
	ssize_t t;

	memcpy(&t, nv, sizeof(t));
	if ((f->je.version < V(5, 0, 0) && strcmp(f->je.opt_purge, "decay")) || t < -1)
		return EFAULT;
	f->je.decay_time = t;
	return 0;
}

/* prof.active writes first, then reads (DESIGN.md 4); 5.3 refuses to turn
 * it on with opt.prof false. */
static int prof_active(struct fake_be *f, const struct req *r)
{
	bool old = f->je.prof_active, nv;
	int given, ret = wr(f, r, &nv, sizeof(nv), &given);

	if (ret)
		return ret;
	if (given) {
		if (f->je.version >= V(5, 3, 0) && !f->je.opt_prof && nv)
			return ENOENT;
		if (f->je.opt_prof || f->je.version < V(5, 3, 0))
			f->je.prof_active = nv;
	} else if (f->je.version >= V(5, 3, 0) && !f->je.opt_prof) {
		old = false;
	}
	return rd(f, r, &old, sizeof(old));
}

static int prof_dump(struct fake_be *f, const struct req *r)
{
	uint64_t name = 0;
	char *path;
	int given, trunc = 0, ret;

	if (f->je.version >= V(5, 3, 0) && !f->je.opt_prof)
		return ENOENT;
	if ((ret = writeonly(r)) || (ret = wr(f, r, &name, sizeof(name), &given)))
		return ret;
	/* prof_mdump fails with profiling off (EFAULT before 5.3). */
	if (!f->je.opt_prof)
		return EFAULT;
	if (!name) {
		snprintf(f->je.dumped, sizeof(f->je.dumped), "jeprof.4242.%u.m%u.heap",
			 f->je.ndumps, f->je.ndumps);
	} else {
		if (!(path = at(f, name, 1)))
			return CRASH;
		for (size_t i = 0; i < sizeof(f->je.dumped); i++) {
			if (!at(f, name + i, 1))
				return CRASH;
			f->je.dumped[i] = path[i];
			if (!path[i])
				break;
			trunc = i + 1 == sizeof(f->je.dumped);
		}
		if (trunc)
			return EFAULT;
	}
	f->je.ndumps++;
	free(f->file);
	f->file = strdup("heap_v2/524288\n  t*: 1: 4096 [0: 0]\nMAPPED_LIBRARIES:\n");
	f->file_len = f->file ? strlen(f->file) : 0;
	return 0;
}

static int prof_reset(struct fake_be *f, const struct req *r)
{
	size_t lg = 0;
	int given, ret;

	if (f->je.version >= V(5, 3, 0) && !f->je.opt_prof)
		return ENOENT;
	if ((ret = writeonly(r)) || (ret = wr(f, r, &lg, sizeof(lg), &given)))
		return ret;
	f->je.nresets++;
	f->je.reset_lg_sample = given ? lg : 0;
	return 0;
}

/* One mallctl by name, as ctl.c of je.version answers it. */
static int ctl(struct fake_be *f, const char *name, const struct req *r)
{
	struct fake_je *je = &f->je;
	uint32_t v = je->version;
	bool t = true, fl = false;
	uint64_t u64;
	size_t z;
	unsigned u;
	int ret, given;

#define IS(n) (!strcmp(name, n))
	if (IS("version"))
		return ro(f, r, &f->version_str, 8);
	if (IS("epoch")) {
		if ((ret = wr(f, r, &u64, sizeof(u64), &given)))
			return ret;
		je->epoch += given;
		return rd(f, r, &je->epoch, sizeof(je->epoch));
	}
	if (IS("config.prof"))
		return ro(f, r, &je->config_prof, 1);
	if (IS("config.stats"))
		return ro(f, r, &t, 1);
	if (IS("arenas.page"))
		return ro(f, r, &(size_t){ 4096 }, sizeof(size_t));
	if (IS("arenas.narenas"))
		return ro(f, r, &(unsigned){ 8 }, sizeof(unsigned));
	if (IS("stats.allocated"))
		return ro(f, r, &je->allocated, sizeof(size_t));
	if (IS("opt.narenas")) {
		/* size_t in 3.x, unsigned from 4.0. */
		z = u = 8;
		return v < V(4, 0, 0) ? ro(f, r, &z, sizeof(z)) : ro(f, r, &u, sizeof(u));
	}
	if (IS("opt.junk"))
		return v < V(4, 0, 0) ? ro(f, r, &fl, 1) : ro(f, r, &f->junk_str, 8);
	if (IS("opt.purge") && v >= V(4, 0, 0) && v < V(5, 0, 0))
		return ro(f, r, &f->purge_str[!strcmp(je->opt_purge, "decay")], 8);
	if (IS("arenas.decay_time") && v >= V(4, 0, 0) && v < V(5, 0, 0))
		return rw(f, r, &je->decay_time, sizeof(ssize_t), set_decay);
	if (IS("arenas.dirty_decay_ms") && v >= V(5, 0, 0))
		return rw(f, r, &je->decay_time, sizeof(ssize_t), set_decay);
	if (IS("background_thread") && v >= V(5, 0, 0))
		return rw(f, r, &je->background_thread, 1, NULL);
	if (IS("stats.resident") && v >= V(4, 0, 0))
		return ro(f, r, &(size_t){ 3 * je->allocated / 2 }, sizeof(size_t));
	if (IS("stats.cactive") && v < V(5, 0, 0)) {
		memcpy(at(f, f->cactive_at, sizeof(size_t)), &je->cactive, sizeof(size_t));
		return ro(f, r, &f->cactive_at, 8);
	}
	if (IS("arena.0.purge") || IS("arena.4096.purge"))
		return (ret = readonly(r)) ? ret : writeonly(r);
	/* Names no table knows, of each size the probe tells apart. */
	if (IS("fake.bool"))
		return ro(f, r, &t, 1);
	if (IS("fake.u32"))
		return ro(f, r, &(uint32_t){ 77 }, 4);
	if (IS("fake.u64"))
		return ro(f, r, &(uint64_t){ 1ULL << 40 }, 8);
	if (IS("fake.str"))
		return ro(f, r, &f->prefix_str, 8);
	if (IS("fake.text"))
		return ro(f, r, &f->text_at, 8);
	if (IS("fake.wo")) {
		if ((ret = writeonly(r)))
			return ret;
		return wr(f, r, &je->wo, sizeof(je->wo), &given);
	}
	/* A target that says success but gives back fewer bytes. */
	if (IS("fake.short")) {
		unsigned char *lenp = at(f, r->oldlenp, sizeof(z));

		if (!lenp || readonly(r))
			return lenp ? EPERM : CRASH;
		z = 4;
		memcpy(lenp, &z, sizeof(z));
		return 0;
	}
	if (IS("fake.wide"))
		return ro(f, r, (uint64_t[2]){ 1, 2 }, 16);
	/* Everything of profiling: ENOENT without --enable-prof. */
	if (!strncmp(name, "prof.", 5) || !strncmp(name, "opt.prof", 8) ||
	    IS("opt.lg_prof_sample")) {
		if (!je->config_prof)
			return ENOENT;
		if (IS("opt.prof"))
			return ro(f, r, &je->opt_prof, 1);
		if (IS("opt.prof_prefix"))
			return ro(f, r, &f->prefix_str, 8);
		if (IS("opt.lg_prof_sample"))
			return ro(f, r, &(size_t){ 19 }, sizeof(size_t));
		if (IS("prof.active"))
			return prof_active(f, r);
		if (IS("prof.dump"))
			return prof_dump(f, r);
		if (IS("prof.reset") && v >= V(4, 0, 0))
			return prof_reset(f, r);
	}
#undef IS
	return ENOENT;
}

static int fake_begin(struct jma_backend *b)
{
	struct fake_be *f = (struct fake_be *)b;

	f->je.begins++;
	if (f->je.fail_begin)
		return sess_fail(b->s, sess_kind_of(f->je.fail_begin), f->je.fail_begin,
				"fake: cannot begin: %s", strerror(-f->je.fail_begin));
	f->begun = 1;
	return 0;
}

static int fake_end(struct jma_backend *b)
{
	struct fake_be *f = (struct fake_be *)b;

	f->je.ends++;
	f->begun = 0;
	if (f->je.fail_end)
		return sess_fail(b->s, JMA_ERR_UNSAFE, f->je.fail_end, "fake: cannot end: %s",
				strerror(-f->je.fail_end));
	if (f->je.end_note)
		(void)sess_fail(b->s, JMA_ERR_UNSAFE, 0, "fake: a note of the end");
	return 0;
}

/* malloc_stats_print(write_cb, cbopaque, opts): its report in a few
 * pieces, JSON with 'J'. */
static int stats_print(struct fake_be *f, const struct jma_bcall *c)
{
	char *opts = c->args[2] ? at(f, c->args[2], 1) : "";
	char line[160];
	const char *ver = (const char *)at(f, f->version_str, 1);
	int err;

	if (!opts)
		return CRASH;
	snprintf(f->je.stats_opts, sizeof(f->je.stats_opts), "%s", opts);
	if (!c->text) {
		f->je.stderr_prints++;
		return 0;
	}
	if (strchr(opts, 'J'))
		snprintf(line, sizeof(line), "{\n\"jemalloc\": {\n\"version\": \"%s\"}}\n", ver);
	else
		snprintf(line, sizeof(line), "___ Begin jemalloc statistics ___\nVersion: \"%s\"\n", ver);
	if ((err = c->text(c->text_ctx, line, strlen(line))))
		return err;
	if (!strchr(opts, 'J')) {
		snprintf(line, sizeof(line), "Allocated: %zu\n", f->je.allocated);
		if ((err = c->text(c->text_ctx, line, strlen(line))) ||
		    (err = c->text(c->text_ctx, "--- End jemalloc statistics ---\n", 32)))
			return err;
	}
	return 0;
}

static int fake_call(struct jma_backend *b, const struct jma_bcall *c, uint64_t *ret)
{
	struct fake_be *f = (struct fake_be *)b;
	int r = CRASH;

	f->je.calls++;
	if (!f->begun)
		return sess_fail(b->s, JMA_ERR_USAGE, -EINVAL, "fake: a call outside begin..end");
	if (f->je.fail_call)
		return sess_fail(b->s, sess_kind_of(f->je.fail_call), f->je.fail_call,
				"fake: the call failed: %s", strerror(-f->je.fail_call));
	if (c->fn == FAKE_FN_MALLCTL && c->nargs == 5) {
		const char *name = at(f, c->args[0], 1);
		struct req rq = { c->args[1], c->args[2], c->args[3], c->args[4] };

		f->je.mallctls++;
		if (name && memchr(name, 0, f->high - (c->args[0] - MEM_BASE))) {
			snprintf(f->je.last_name, sizeof(f->je.last_name), "%s", name);
			r = ctl(f, name, &rq);
		}
	} else if (c->fn == FAKE_FN_STATS_PRINT && c->nargs == 3 && c->text_arg == 0) {
		r = stats_print(f, c);
	}
	/* Released by the call: handed out again by the next scratch. */
	f->top = f->fixed;
	if (r == CRASH)
		return sess_fail(b->s, JMA_ERR_TARGET, -EFAULT, "fake: the call would have crashed "
				"the target (fn 0x%llx, bad pointer or arguments)",
				(unsigned long long)c->fn);
	if (r < 0)
		return sess_fail(b->s, JMA_ERR_TARGET, r, "fake: the text callback failed");
	*ret = (uint64_t)r;
	return 0;
}

static uint64_t fake_scratch(struct jma_backend *b, const void *data, size_t len, size_t align)
{
	struct fake_be *f = (struct fake_be *)b;
	uint64_t r = f->begun ? place(f, data, len, align) : 0;

	if (!r)
		sess_fail(b->s, JMA_ERR_TARGET, -ENOSPC, "fake: no scratch memory left");
	return r;
}

static int fake_read(struct jma_backend *b, uint64_t addr, void *buf, size_t len)
{
	const void *p = at((struct fake_be *)b, addr, len);

	if (!p)
		return -EFAULT;
	memcpy(buf, p, len);
	return 0;
}

static int fake_read_str(struct jma_backend *b, uint64_t addr, size_t max, char **out, int *trunc)
{
	struct fake_be *f = (struct fake_be *)b;
	const char *p = at(f, addr, 1);
	size_t n;

	if (!p)
		return -EFAULT;
	n = strnlen(p, f->high - (addr - MEM_BASE));
	if (n == f->high - (addr - MEM_BASE))
		return -EFAULT;
	*trunc = n > max;
	if (!(*out = strndup(p, n > max ? max : n)))
		return -ENOMEM;
	return 0;
}

/* As the emulator: what jemalloc writes is kept here, never on a disk. */
static int fake_dump(struct jma_backend *b, const char *dir, const char *name, size_t max,
		     jma_dump_fn write, void *arg, char **buf, size_t *len)
{
	struct fake_be *f = (struct fake_be *)b;
	int err;

	(void)dir;
	free(f->file);
	f->file = NULL;
	if ((err = write(b->s, name, arg)))
		return err;
	if (!f->file)
		return sess_fail(b->s, JMA_ERR_TARGET, -ENOENT, "prof.dump wrote no file");
	if (f->file_len > max)
		return sess_fail(b->s, JMA_ERR_TARGET, -EFBIG, "the dump is too large");
	*buf = f->file;
	*len = f->file_len;
	f->file = NULL;
	return 0;
}

static void fake_destroy(struct jma_backend *b)
{
	struct fake_be *f = (struct fake_be *)b;

	free(f->file);
	free(f);
}

static const struct jma_backend_ops fake_ops = {
	.name = "fake",
	.begin = fake_begin,
	.end = fake_end,
	.call = fake_call,
	.scratch = fake_scratch,
	.read = fake_read,
	.read_str = fake_read_str,
	.dump = fake_dump,
	.destroy = fake_destroy,
};

int fake_open(jma_session *s, uint32_t version, struct fake_je **je)
{
	struct jma_range code = { FAKE_CODE_LO, FAKE_CODE_HI };

	return fake_open_at(s, version, 0, &code, 1, je);
}

int fake_open_at(jma_session *s, uint32_t version, pid_t pid, const struct jma_range *code,
		 size_t ncode, struct fake_je **je)
{
	struct fake_be *f = calloc(1, sizeof(*f));
	struct jma_copy c = { .path = "/fake/libjemalloc.so.2", .prefix = "", .conf_env = "MALLOC_CONF",
			      .fn_mallctl = FAKE_FN_MALLCTL, .fn_stats_print = FAKE_FN_STATS_PRINT,
			      .code = (struct jma_range *)code, .ncode = ncode };
	char vs[64];
	int err;

	if (!f)
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	f->be.ops = &fake_ops;
	f->je = (struct fake_je){ .version = version, .config_prof = true, .opt_prof = true,
				  .opt_purge = "ratio", .decay_time = 10, .allocated = 1234567,
				  .cactive = 2 << 20 };
	snprintf(vs, sizeof(vs), "%u.%u.%u-0-g0123456789abcdef0123456789abcdef01234567",
		 version >> 16, (version >> 8) & 0xff, version & 0xff);
	f->version_str = place_str(f, vs);
	f->prefix_str = place_str(f, "/var/tmp/jeprof");
	f->junk_str = place_str(f, "false");
	f->purge_str[0] = place_str(f, "ratio");
	f->purge_str[1] = place_str(f, "decay");
	f->text_at = place(f, "\x01\x02not text", 11, 8);
	f->cactive_at = place(f, NULL, sizeof(size_t), 8);
	f->fixed = f->top;
	*je = &f->je;
	err = proc_open_backend(s, pid, &f->be, &c);
	if (err)
		*je = NULL;
	return err;
}
