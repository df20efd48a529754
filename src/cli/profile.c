/* profile.c -- heap-profile files for the prof commands (dump, window,
 * sample): saved safely, named, loaded and symbolized from the live target,
 * analyzed as jeprof's text. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* Write @len bytes to @path ("-" = stdout), replacing a regular file atomically. */
int prof_save(const char *path, const char *buf, size_t len)
{
	struct cli_out o;
	int err = cli_out_open(path, true, &o);

	if (err)
		return err;
	err = fwrite(buf, 1, len, o.f) == len ? 0 : -EIO;
	return cli_out_close(&o, !err) ?: err;
}

/* jeprof.<pid>.<n>.heap, the first n not taken in the current directory. */
void prof_default_name(pid_t pid, char *out, size_t len)
{
	for (unsigned n = 0;; n++) {
		snprintf(out, len, "jeprof.%d.%u.heap", (int)pid, n);
		if (access(out, F_OK))
			return;
	}
}

/* The profile at @path -- or in @buf (@len bytes) when not NULL, @path naming
 * it -- minus @base if not NULL, symbolized from the live target, into *@out
 * (NULL on failure, after the message). */
int prof_load(struct cli *c, const char *path, const char *buf, size_t len, const char *base,
	      jma_heap **out)
{
	struct jma_heap_symopts so = { .pid = c->pid, .log = c->opt.log, .log_arg = c->opt.log_arg };
	jma_heap *h = NULL, *b = NULL;
	char msg[1024];
	int rc = EXIT_OK;

	*out = NULL;
	if ((buf ? jma_heap_parse(buf, len, path, &h, msg, sizeof(msg)) :
		   jma_heap_load(path, &h, msg, sizeof(msg))) ||
	    (base && jma_heap_load(base, &b, msg, sizeof(msg)))) {
		rc = cli_error(EXIT_TARGET, "%s", msg);
	} else if ((b && jma_heap_subtract(h, b)) || jma_heap_symbolize(h, &so)) {
		rc = cli_error(EXIT_TARGET, "analysing %s: %s", path, jma_heap_errmsg(h));
	} else {
		*out = h;
		h = NULL;
	}
	jma_heap_free(b);
	jma_heap_free(h);
	return rc;
}

/* Where the memory is, as jeprof-style text (@buf: as for prof_load;
 * @sample: enum jma_heap_sample); an empty report explained by the run of
 * the sampler @sm made it, or by jemalloc's profiler when NULL. */
int prof_analyze_buf(struct cli *c, const char *path, const char *buf, size_t len, unsigned top,
		     int sample, const struct cli_sampled *sm)
{
	struct jma_heap_report_opts ro = { .format = JMA_HEAP_TEXT, .sample = sample, .top = top,
					   .no_demangle = !!(c->opt.flags & JMA_F_NO_DEMANGLE) };
	jma_heap *h;
	int rc = prof_load(c, path, buf, len, NULL, &h);

	if (!rc && cli_heap_report(h, &ro, stdout))
		rc = cli_error(EXIT_TARGET, "analysing %s: %s", path, jma_heap_errmsg(h));
	else if (!rc && sm)
		cli_hint_sampled(c, sm, h, &ro);
	else if (!rc && cli_heap_empty(h, &ro))
		cli_hint_empty(c, h, &ro, NULL);
	if (!rc && !cli_heap_empty(h, &ro))
		cli_hint_unnamed(h, &ro);
	jma_heap_free(h);
	return rc;
}

int prof_analyze(struct cli *c, const char *path, unsigned top, int sample)
{
	return prof_analyze_buf(c, path, NULL, 0, top, sample, NULL);
}

int prof_analyze_sampled(struct cli *c, const char *path, unsigned top, int sample,
			 const struct cli_sampled *sm)
{
	return prof_analyze_buf(c, path, NULL, 0, top, sample, sm);
}

int prof_parse_top(struct cli *c, const char *arg, unsigned *top)
{
	long long v;
	int rc = cli_arg_int(c, "prof", "--top", arg, 0, 100000, &v);

	if (rc)
		return rc;
	*top = (unsigned)v;
	return EXIT_OK;
}
