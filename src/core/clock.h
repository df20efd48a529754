/* clock.h -- the library's clock: a clock read in nanoseconds or seconds, and
 * a sleep that a stop flag cuts short.  One copy for the library, serve and the
 * CLI; the ptrace engine keeps its own (attach/clock.h), since attach/ imports
 * nothing from src/ and the layers above the core see no attach/ header. */
#ifndef JMA_CORE_CLOCK_H
#define JMA_CORE_CLOCK_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

static inline int64_t jma_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline double jma_clock_s(clockid_t clk)
{
	return (double)jma_clock_ns(clk) / 1e9;
}

/* Sleep until @deadline (CLOCK_MONOTONIC seconds) in steps of at most @step_s,
 * so that *@stop (set by a signal handler) is seen within a step.  0 at the
 * deadline, 1 when stopped. */
static inline int jma_sleep_until(double deadline, double step_s, volatile sig_atomic_t *stop)
{
	while (!(stop && *stop)) {
		double left = deadline - jma_clock_s(CLOCK_MONOTONIC);
		double nap = left < step_s ? left : step_s;
		struct timespec ts = { (time_t)nap, (long)((nap - (double)(time_t)nap) * 1e9) };

		if (left <= 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	return 1;
}

#endif
