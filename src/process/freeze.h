/* freeze.h -- --freeze: every thread stopped while attached, for a consistent snapshot.
 *
 * Only safe when no stopped thread holds a jemalloc lock our call would then
 * wait on forever.  So every thread is stopped and unwound first, and the
 * freeze is refused, naming the culprit, if one of them is inside jemalloc --
 * unless it waits in pthread_cond_wait/timedwait, which released its mutex
 * (jemalloc's background threads sleep there).
 */
#ifndef JMA_PROCESS_FREEZE_H
#define JMA_PROCESS_FREEZE_H

#include "attach/select.h"
#include "attach/thread.h"
#include "core/session.h"

struct jma_freeze {
	struct att_thread *t;	/* stopped, seized, not hijacked */
	size_t n;
	int64_t since_ns;	/* when the first thread was stopped */
	int64_t held_ns;	/* how long every thread stayed stopped (set by thaw) */
};

/* Stop every candidate thread, refusing (and undoing) if one is inside
 * jemalloc.  Returns 0 or -errno with the message in @s. */
int proc_freeze_all(jma_session *s, struct jma_freeze *fz, const struct att_candidate *c, size_t n);
/* The same, keeping every thread stopped even when one is inside jemalloc
 * (a warning says which): for readers of memory only, never before a call. */
int proc_freeze_all_anyway(jma_session *s, struct jma_freeze *fz, const struct att_candidate *c,
			  size_t n);
/* Move frozen thread @tid out into @out: -ESRCH if it is not frozen. */
int proc_freeze_take(struct jma_freeze *fz, pid_t tid, struct att_thread *out);
/* Give a restored thread back to the frozen set (released if that fails). */
void proc_freeze_put(struct jma_freeze *fz, struct att_thread *t);
/* Let every frozen thread go. */
void proc_thaw_all(struct jma_freeze *fz);

#endif
