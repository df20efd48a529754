/* yield.h -- give the CPU to whoever waits for it, now and then, in our long
 * loops before a thread is stopped.
 *
 * A target thread woken on the CPU we run on does not take it from us at
 * once: the scheduler (EEVDF) lets the running task finish its slice, up to
 * a tick (4 ms at HZ=250).  Reading /proc for 1000 threads takes us 15-20 ms
 * of CPU, and a target thread woken behind it was measured waiting 3-5 ms.
 * While a thread is held it does nothing: the hold would last longer.
 */
#ifndef ATTACH_YIELD_H
#define ATTACH_YIELD_H

/* sched_yield() if the last one was over 100 us ago: when nothing waits, a
 * few cheap calls per millisecond; when a thread does, it runs within about
 * that long.  A no-op while a thread is held (att_defer_active). */
void att_yield_point(void);

#endif
