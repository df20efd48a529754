/* stress_driver.c -- mixed operations on one target through libjemattach.
 *
 * Usage: stress_driver PID OPS.  Operation i is a get (i % 3 == 0), a JSON
 * stats report (1) or a heap-profile dump (2), each a full attach, calls and
 * detach, and each result is checked for sense.  A refusal because every
 * thread was inside jemalloc at that instant is counted, not failed.  Prints
 * "ok N busy M" and exits 0, or names the first failure and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jemattach.h>

struct buf {
	char *p;
	size_t len;
};

static int append(void *arg, const char *s, size_t len)
{
	struct buf *b = arg;
	char *t = realloc(b->p, b->len + len + 1);

	if (!t)
		return -1;
	memcpy(t + b->len, s, len);
	b->p = t;
	b->len += len;
	b->p[b->len] = '\0';
	return 0;
}

static int one(jma_session *s, int op, const char **what)
{
	struct jma_value v;
	struct buf b = { 0 };
	size_t len;
	int err;

	switch (op) {
	case 0:
		*what = "get stats.allocated";
		err = jma_get(s, "stats.allocated", &v);
		return err ? err : v.z > 0 ? 0 : -1;
	case 1:
		*what = "stats --json";
		err = jma_stats_print(s, "J", append, &b);
		if (!err && (!b.p || b.p[0] != '{' || !strstr(b.p, "\"allocated\"")))
			err = -1;
		free(b.p);
		return err;
	default:
		*what = "prof dump";
		err = jma_prof_dump(s, &b.p, &len);
		if (!err && (len < 8 || strncmp(b.p, "heap_v2/", 8)))
			err = -1;
		free(b.p);
		return err;
	}
}

int main(int argc, char **argv)
{
	struct jma_options o = { .sz = sizeof(o), .timeout = 30 };
	jma_session *s;
	long ops, busy = 0;
	int pid;

	if (argc != 3 || (pid = atoi(argv[1])) <= 0 || (ops = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: stress_driver PID OPS\n");
		return 2;
	}
	s = jma_new(&o);
	if (!s || jma_open(s, pid)) {
		fprintf(stderr, "open: %s\n", s ? jma_errmsg(s) : "out of memory");
		return 1;
	}
	for (long i = 0; i < ops; i++) {
		const char *what;
		int err = one(s, (int)(i % 3), &what);

		if (err && jma_errkind(s) == JMA_ERR_UNSAFE && strstr(jma_errmsg(s), "no thread")) {
			busy++;
			continue;
		}
		if (err) {
			fprintf(stderr, "operation %ld (%s): %s\n", i, what,
				err == -1 ? "implausible result" : jma_errmsg(s));
			jma_free(s);
			return 1;
		}
	}
	jma_free(s);
	printf("ok %ld busy %ld\n", ops - busy, busy);
	return 0;
}
