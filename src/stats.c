/* stats.c -- malloc_stats_print captured through the emulated write callback. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "mem.h"
#include "session.h"

/* jemalloc 5.3 hands the callback 64 KiB at a time; older and debug builds a
 * line (<= 4 KiB).  Anything much larger is not jemalloc's doing. */
#define CHUNK_MAX (4 * 1024 * 1024)

struct capture {
	jma_session *s;
	jma_write_fn write;
	void *arg;
	size_t bytes;
	unsigned chunks;
};

static int on_write(struct att_thread *t, const uint64_t args[ARCH_NARGS], uint64_t *retval,
		    void *arg)
{
	struct capture *cap = arg;
	char *str;
	int trunc, err;

	*retval = 0;
	/* write_cb(void *cbopaque, const char *s) */
	err = att_mem_read_str(t->pid, args[1], CHUNK_MAX, &str, &trunc);
	if (err)
		return att_fail(t, err, "reading stats output at 0x%llx: %s",
				(unsigned long long)args[1], strerror(-err));
	cap->chunks++;
	cap->bytes += strlen(str);
	err = cap->write(cap->arg, str, strlen(str));
	free(str);
	if (err)
		return att_fail(t, err, "writing stats output: %s", strerror(err < 0 ? -err : err));
	if (trunc)
		return att_fail(t, -E2BIG, "a stats chunk exceeded %d bytes", CHUNK_MAX);
	return 0;
}

int jma_stats_opts_valid(const char *opts)
{
	if (!opts)
		return 0;
	for (const char *p = opts; *p; p++)
		if (!strchr("Jgmdablxeh", *p))
			return -EINVAL;
	return strlen(opts) > 32 ? -EINVAL : 0;
}

int jma_stats_print(jma_session *s, const char *opts, jma_write_fn write, void *arg)
{
	struct capture cap = { .s = s, .write = write, .arg = arg };
	struct att_call c = { .nargs = 3, .cb = on_write, .cb_arg = &cap };
	const struct jma_copy *je;
	uint64_t ret, ropts = 0;
	int here, err;

	if (jma_stats_opts_valid(opts))
		return jma_fail(s, JMA_ERR_USAGE, -EINVAL, "invalid stats options \"%.40s\": use the "
				"letters J g m d a b l x e h", opts);
	err = jma_auto_begin(s, &here);
	if (err)
		return err;
	je = jma_syms_jemalloc(s->syms);
	c.fn = je->fn_stats_print;
	if (!c.fn)
		err = jma_fail(s, JMA_ERR_MISSING, -ENOTSUP, "%smalloc_stats_print not found in %s",
			       je->prefix, je->path);
	if (!err && opts && *opts && !(ropts = att_scratch_push(&s->th, opts, strlen(opts) + 1, 1)))
		err = jma_fail_att(s, JMA_ERR_TARGET, -ENOSPC);
	if (!err) {
		/* malloc_stats_print(write_cb, cbopaque, opts) */
		c.args[0] = ATT_CB_SENTINEL;
		c.args[1] = 0;
		c.args[2] = ropts;
		err = jma_call(s, &c, &ret);
		jma_logf(s, JMA_LOG_DEBUG, "stats: %zu bytes in %u callback(s)", cap.bytes, cap.chunks);
	}
	return jma_auto_end(s, here, err);
}
