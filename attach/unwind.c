/* unwind.c -- remote stack unwinding through libunwind-ptrace. */
#include <errno.h>
#include <libunwind-ptrace.h>

#include "unwind.h"

int att_unwind(pid_t tid, uint64_t *pcs, int max, int *complete)
{
	unw_addr_space_t as;
	unw_cursor_t cur;
	void *upt;
	int n = 0, r;

	*complete = 0;

	as = unw_create_addr_space(&_UPT_accessors, 0);
	if (!as)
		return -ENOMEM;
	upt = _UPT_create(tid);
	if (!upt) {
		unw_destroy_addr_space(as);
		return -ENOMEM;
	}
	r = unw_init_remote(&cur, as, upt);
	while (r >= 0 && n < max) {
		unw_word_t ip;

		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		pcs[n++] = ip;
		r = unw_step(&cur);
		if (r == 0)
			*complete = 1;
		if (r <= 0)
			break;
	}
	_UPT_destroy(upt);
	unw_destroy_addr_space(as);
	return n > 0 ? n : -EIO;
}
