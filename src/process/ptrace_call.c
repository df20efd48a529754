/* ptrace_call.c -- a call in the borrowed thread, through the attach engine, and its scratch memory.
 *
 * A call that fails leaves its message on the session (the engine's own,
 * from the thread).  One that times out, is interrupted, faults or loses
 * the thread leaves the thread in a state jemalloc does not know: the
 * attachment ends there (call_abandon), and the session's error stays the
 * call's unless giving the thread back failed.
 */
#include <errno.h>
#include <string.h>

#include "process/engine.h"
#include "process/ptrace_be.h"
#include "process/threads.h"

/* After @err the thread is not jemalloc's to use again: it may still run
 * our call (a timeout), or be gone. */
static int thread_lost(int err)
{
	return err == -ETIMEDOUT || err == -EINTR || err == -ESRCH || err == -EFAULT;
}

/* End the attachment after the call failed with @err (recorded), the thread
 * given back now.  Returns @err, its message kept -- or the failure to give
 * the thread back, which is the error then (sess_detach_keep).  A timeout's
 * message goes on to name the threads likely to hold the lock. */
static int call_abandon(jma_session *s, int err)
{
	int derr = sess_detach_keep(s, err);

	if (derr)
		return derr;
	if (err == -ETIMEDOUT) {
		proc_explain_stall(s);
		/* A copy of the process is read without a call, taking no lock
		 * (the call may be left running meanwhile). */
		sess_add_hints(s, JMA_HINT_EMULATE | JMA_HINT_TIMEOUT);
	}
	return err;
}

int ptrace_call(struct jma_backend *b, const struct jma_bcall *bc, uint64_t *ret)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	jma_session *s = b->s;
	struct att_call c = { .fn = bc->fn, .nargs = bc->nargs };
	int err;

	memcpy(c.args, bc->args, sizeof(uint64_t) * bc->nargs);
	if (bc->text && (err = ptrace_route_text(p, bc, &c))) {
		att_scratch_reset(&p->th);
		return err;
	}
	c.timeout_ms = sess_timeout_ms(s);
	c.total_ms = bc->total_ms;
	c.grace_ms = c.timeout_ms;
	err = att_call(&p->th, &c, ret);
	if (c.sink && p->stray)
		sess_logf(s, JMA_LOG_WARN, "the call also wrote %zu bytes to fd 2 of process %d "
			 "(jemalloc's own messages): taken, not printed", p->stray, (int)s->pid);
	att_scratch_reset(&p->th);
	if (!err)
		return 0;
	err = proc_fail_att(s, &p->th, sess_kind_of(err), err);
	return thread_lost(err) ? call_abandon(s, err) : err;
}

uint64_t ptrace_scratch(struct jma_backend *b, const void *data, size_t len, size_t align)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	uint64_t r = data ? att_scratch_push(&p->th, data, len, align)
			  : att_scratch_alloc(&p->th, len, align);

	if (!r)
		proc_fail_att(b->s, &p->th, JMA_ERR_TARGET, -ENOSPC);
	return r;
}
