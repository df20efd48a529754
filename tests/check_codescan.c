/* check_codescan.c -- finding code by its bytes in a live process (attach/codescan.h):
 * a search over maps that are no longer the process's is no answer, not "none". */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "attach/procfs.h"
#include "attach/restorer.h"
#include "tutil.h"

/* The callee's first executable mapping of a file whose name has @part. */
static struct att_map code_of(const struct att_map *m, size_t n, const char *part)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].perms[2] == 'x' && m[i].path && strstr(m[i].path, part))
			return m[i];
	ck_abort_msg("no executable mapping of %s", part);
	return m[0];
}

START_TEST(test_restorer_search_on_stale_maps_is_no_answer)
{
	struct tproc p;
	struct att_map *m, snap[2];
	uint64_t at;
	size_t n;

	tproc_start(&p, "callee", NULL);
	ck_assert_int_eq(att_proc_maps(p.pid, &m, &n), 0);
	/* Its own maps: libc's trampoline is found. */
	ck_assert_int_eq(att_restorer_find(p.pid, m, n, &at), 0);
	ck_assert_uint_ne(at, 0);
	/* The program's own code alone (it has no trampoline): none, a real answer. */
	snap[0] = code_of(m, n, "/callee");
	ck_assert_int_eq(att_restorer_find(p.pid, snap, 1, &at), -ENOENT);
	/* libc where the process maps nothing (below mmap_min_addr), as the
	 * maps read before an exec show it to the search that runs after:
	 * not known -- it used to be "none", kept in the symbol cache, and
	 * every later run on that program refused (47-exec). */
	snap[1] = code_of(m, n, "libc");
	snap[1].start = 0x1000;
	snap[1].end = 0x10000;
	ck_assert_int_eq(att_restorer_find(p.pid, snap, 2, &at), -ESTALE);
	ck_assert_int_eq(att_restorer_find(p.pid, &snap[1], 1, &at), -ESTALE);
	att_maps_free(m, n);
	tproc_stop(&p);
}
END_TEST

Suite *suite_codescan(void)
{
	Suite *s = suite_create("codescan");
	TCase *t = tcase_create("live");

	tcase_set_timeout(t, 30);
	tcase_add_test(t, test_restorer_search_on_stale_maps_is_no_answer);
	suite_add_tcase(s, t);
	return s;
}
