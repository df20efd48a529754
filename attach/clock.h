/* clock.h -- the clock of attach/: CLOCK_MONOTONIC in nanoseconds, for
 * deadlines, hold times and the yield interval. */
#ifndef ATTACH_CLOCK_H
#define ATTACH_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t att_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
