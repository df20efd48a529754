/* cmd_purge.c -- "purge" and "decay": arena.<i>.purge|decay, with the effect shown. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* What each version has: resident from 4.0, retained from 5.0 (-1: absent). */
struct mem { long long resident, retained; size_t dirty; };

static int read_opt(struct cli *c, const char *name, long long *out)
{
	struct jma_value v;
	int err = jma_get(c->s, name, &v);

	*out = err ? -1 : (long long)v.z;
	return err == -ENOENT && jma_errkind(c->s) != JMA_ERR_USAGE ? 0 : err;
}

static int read_mem(struct cli *c, unsigned all, struct mem *m)
{
	char name[64];
	struct jma_value v;

	if (jma_refresh(c->s) || read_opt(c, "stats.resident", &m->resident) ||
	    read_opt(c, "stats.retained", &m->retained))
		return -1;
	snprintf(name, sizeof(name), "stats.arenas.%u.pdirty", all);
	m->dirty = jma_get(c->s, name, &v) == 0 ? v.z : 0;
	return 0;
}

static void print_bytes(const char *what, long long before, long long after)
{
	char a[32], b[32];

	if (before < 0 || after < 0) {
		printf("  %-9s (not reported by this jemalloc version)\n", what);
		return;
	}
	printf("  %-9s %10s -> %-10s (%lld -> %lld bytes)\n", what,
	       cli_bytes((size_t)before, a, sizeof(a)), cli_bytes((size_t)after, b, sizeof(b)), before,
	       after);
}

static int arena_action(struct cli *c, int argc, char **argv, const char *action)
{
	struct jma_value narenas;
	unsigned long idx = 0;
	unsigned all;
	struct mem before, after;
	int own, rc = EXIT_OK, every = argc < 2 || !strcmp(argv[1], "all");

	if (argc > 2)
		return cli_usage(c, action, "too many arguments");
	if (!every) {
		long long v;

		if (cli_parse_int(argv[1], 0, LLONG_MAX, &v))
			return cli_usage(c, action, "invalid ARENA \"%s\": a number or \"all\"", argv[1]);
		idx = (unsigned long)v;
	}
	if (jma_hold_begin(c->s, &own))
		return cli_fail_session(c);
	if (jma_get(c->s, "arenas.narenas", &narenas) || jma_arena_all(c->s, &all)) {
		rc = cli_fail_session(c);
		goto out;
	}
	if (every)
		idx = all;
	else if (idx >= narenas.u) {
		rc = cli_error(EXIT_USAGE, "arena %lu does not exist (arenas.narenas is %u)", idx,
			       narenas.u);
		goto out;
	}
	if (read_mem(c, all, &before) || jma_arena_act(c->s, (unsigned)idx, action) ||
	    read_mem(c, all, &after)) {
		rc = cli_fail_session(c);
		goto out;
	}
	if (every)
		printf("%s all arenas:\n", action);
	else
		printf("%s arena %lu:\n", action, idx);
	print_bytes("resident", before.resident, after.resident);
	print_bytes("retained", before.retained, after.retained);
	printf("  dirty     %10zu -> %-10zu pages\n", before.dirty, after.dirty);
out:
	if (jma_hold_end(c->s, own, 0))
		rc = cli_fail_session(c);
	return rc;
}

int cmd_purge(struct cli *c, int argc, char **argv)
{
	return arena_action(c, argc, argv, "purge");
}

int cmd_decay(struct cli *c, int argc, char **argv)
{
	return arena_action(c, argc, argv, "decay");
}
