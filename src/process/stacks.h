/* stacks.h -- one thread's stack, unwound and named. */
#ifndef JMA_PROCESS_STACKS_H
#define JMA_PROCESS_STACKS_H

#include "core/session.h"

/* Stop @tid just long enough to unwind it.  Returns the number of frames or
 * -errno with a message in @err. */
int proc_stack_of(jma_session *s, pid_t tid, uint64_t *pcs, int max, char *err, size_t errlen);
/* Symbolize @n program counters into @f, with source lines: it loads (and
 * may decompress) each module's DWARF, tens of milliseconds that the live
 * path pays only to print them. */
void proc_frames_fill(jma_session *s, const uint64_t *pcs, int n, struct jma_frame *f);
/* Append "\n    #i func+0xoff (module) [jemalloc]" lines for @f to @buf, which
 * holds @*used bytes of @len; *used grows. */
void proc_frames_format(const struct jma_frame *f, int n, char *buf, size_t len, size_t *used);

/* What the lock rule needs to know of a frame. */
struct jma_frame_kind {
	int in_jemalloc;
	int cond_wait;		/* inside pthread_cond_*wait */
};

/* The frame of @k[0..n) through which the thread may hold a jemalloc lock:
 * its innermost jemalloc frame -- unless a pthread_cond_*wait frame lies
 * below it: a condition wait released its mutex to wait, and jemalloc holds
 * no other there (its background threads sleep so).  -1: none. */
int proc_lock_holder_index(const struct jma_frame_kind *k, int n);
/* The same for the unwound @pcs[0..n), told by address: nothing is named. */
int proc_lock_holder_frame(jma_session *s, const uint64_t *pcs, int n);

#define JMA_HOLDER_FRAMES 32

/* A thread inside jemalloc that may hold a lock. */
struct jma_holder {
	pid_t tid;
	char comm[64];
	uint64_t pcs[JMA_HOLDER_FRAMES];
	int nf;			/* frames in pcs */
	long syscall;		/* asleep in it (-1: not known to be asleep) */
	int64_t ms;		/* for at least this long, when asleep */
};

/* Fill @h (but comm, syscall, ms) for thread @tid from its frames @pcs[0..n):
 * 1 when it may hold a jemalloc lock (jma_frames_lock_holder), else 0. */
int proc_holder_of(jma_session *s, pid_t tid, const uint64_t *pcs, int n, struct jma_holder *h);
/* The one way every refusal names a holder: "LEAD: tid N (comm) is inside
 * jemalloc and may hold a lock, in FUNC[, asleep in SYSCALL for at least N
 * ms]; WAYS" and, with @stack, ":" and its backtrace. */
void proc_holder_format(jma_session *s, const struct jma_holder *h, const char *lead,
		       const char *ways, int stack, char *buf, size_t len);

#endif
