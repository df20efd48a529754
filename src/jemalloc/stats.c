/* stats.c -- malloc_stats_print's report, captured through its write callback. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/session.h"

/* The report is the target's text: a target that changed its own code or
 * data can make it endless.  What a report may take, in bytes and in time
 * from the call's start (a multiple of the progress timeout, which each
 * piece of text restarts); past either the text is refused, and the call, no
 * longer making progress, ends within one more timeout.  That is also the
 * call's whole bound (jma_bcall.total_ms), whatever else it does: a function
 * that writes to fd 2 without end instead of to the callback restarts
 * nothing.  jemalloc 5.3 with 256 arenas and every option writes about
 * 10 MiB. */
#define STATS_MAX_BYTES		(64u << 20)
#define STATS_TIME_TIMEOUTS	6

struct capture {
	jma_write_fn write;
	void *arg;
	size_t bytes;
	unsigned chunks;
	int64_t deadline;	/* CLOCK_MONOTONIC, ns */
	int over;		/* -EFBIG or -ETIME once a bound was passed */
};

static int on_text(void *arg, const char *text, size_t len)
{
	struct capture *cap = arg;

	if (cap->over)
		return cap->over;
	if (len > STATS_MAX_BYTES - cap->bytes)
		return cap->over = -EFBIG;
	if (jma_clock_ns(CLOCK_MONOTONIC) > cap->deadline)
		return cap->over = -ETIME;
	cap->chunks++;
	cap->bytes += len;
	return cap->write(cap->arg, text, len);
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
	struct capture cap = { .write = write, .arg = arg };
	struct jma_bcall c = { .nargs = 3, .text_arg = 0, .text = on_text, .text_ctx = &cap };
	const struct jma_copy *je;
	uint64_t ret, ropts = 0;
	uint32_t v;
	int here, err;

	if (jma_stats_opts_valid(opts))
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "invalid stats options \"%.40s\": use the "
				"letters J g m d a b l x e h", opts);
	sess_expect_text(s);
	err = jma_hold_begin(s, &here);
	if (err)
		return err;
	je = s->je;
	c.fn = je->fn_stats_print;
	v = opts && strchr(opts, 'J') ? jma_jemalloc_version(s) : 0;
	if (v && v < JMA_JEVERSION(4, 3, 0))
		err = sess_fail_hint(s, JMA_HINT_TEXT, JMA_ERR_MISSING, -ENOTSUP, "jemalloc %u.%u.%u "
				    "prints no JSON statistics (added in 4.3.0)", v >> 16,
				    (v >> 8) & 0xff, v & 0xff);
	else if (!c.fn)
		err = sess_fail(s, JMA_ERR_MISSING, -ENOTSUP, "%smalloc_stats_print not found in %s",
			       je->prefix, je->path);
	if (!err && opts && *opts && !(ropts = sess_scratch(s, opts, strlen(opts) + 1, 1)))
		err = -ENOSPC;
	if (!err) {
		/* malloc_stats_print(write_cb, cbopaque, opts) */
		c.args[1] = 0;
		c.args[2] = ropts;
		cap.deadline = jma_clock_ns(CLOCK_MONOTONIC) + (int64_t)sess_timeout_ms(s) * STATS_TIME_TIMEOUTS * 1000000;
		c.total_ms = sess_timeout_ms(s) * (STATS_TIME_TIMEOUTS + 1);
		err = sess_call(s, &c, &ret);
		sess_logf(s, JMA_LOG_DEBUG, "stats: %zu bytes in %u callback(s)", cap.bytes, cap.chunks);
		if (cap.over) {
			char why[256];

			snprintf(why, sizeof(why), "%s", err ? jma_errmsg(s) : "it returned");
			err = sess_fail(s, JMA_ERR_UNSAFE, cap.over, "the statistics report went on "
				       "past %s: %zu bytes passed on, the rest refused; %s",
				       cap.over == -EFBIG ? "64 MiB" : "6 times the timeout",
				       cap.bytes, why);
		}
	}
	return jma_hold_end(s, here, err);
}
