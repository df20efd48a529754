/* stacks.h -- one thread's stack, unwound and named. */
#ifndef JMA_PROCESS_STACKS_H
#define JMA_PROCESS_STACKS_H

#include "process/session.h"

/* Stop @tid just long enough to unwind it.  Returns the number of frames or
 * -errno with a message in @err. */
int jma_stack_of(jma_session *s, pid_t tid, uint64_t *pcs, int max, char *err, size_t errlen);
/* Symbolize @n program counters into @f. */
void jma_frames_fill(jma_session *s, const uint64_t *pcs, int n, struct jma_frame *f);
/* Append "\n    #i func+0xoff (module) [jemalloc]" lines for @f to @buf, which
 * holds @*used bytes of @len; *used grows. */
void jma_frames_format(const struct jma_frame *f, int n, char *buf, size_t len, size_t *used);

#endif
