/* yield.c -- give the CPU away now and then in long loops (see yield.h). */
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "defer.h"
#include "yield.h"

#define YIELD_NS	100000

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void att_yield_point(void)
{
	static __thread int64_t last;
	int64_t now;

	if (att_defer_active())
		return;
	now = mono_ns();
	if (now - last < YIELD_NS)
		return;
	sched_yield();
	last = mono_ns();
}
