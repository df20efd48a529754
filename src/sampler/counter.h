/* counter.h -- where BPF finds jemalloc's own per-thread allocation counter. */
#ifndef JMA_SAMPLER_COUNTER_H
#define JMA_SAMPLER_COUNTER_H

#include <stdint.h>
#include <sys/types.h>

/* The offset from the thread pointer of tsd's thread_allocated (followed by
 * the next thread event's threshold), read from the code of the malloc at
 * @malloc_addr (@malloc_size bytes, 0 unknown) in process @pid: jemalloc
 * 5.3+.  -ENOENT for builds without that fast path. */
int smp_counter_find(pid_t pid, uint64_t malloc_addr, uint64_t malloc_size, int64_t *off);

/* The offset of a task's saved thread pointer in this kernel's task_struct
 * (x86_64 thread.fsbase, arm64 thread.uw.tp_value), from its BTF.  -ENOENT
 * without BTF. */
int smp_counter_tp(uint32_t *off);

#endif
