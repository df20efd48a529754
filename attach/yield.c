/* yield.c -- give the CPU away now and then in long loops (see yield.h). */
#include <sched.h>
#include <stdint.h>

#include "clock.h"
#include "defer.h"
#include "yield.h"

#define YIELD_NS	100000

void att_yield_point(void)
{
	static __thread int64_t last;
	int64_t now;

	if (att_defer_active())
		return;
	now = att_now_ns();
	if (now - last < YIELD_NS)
		return;
	sched_yield();
	last = att_now_ns();
}
