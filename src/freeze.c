/* freeze.c -- --freeze: every thread stopped while attached, for a consistent snapshot.
 *
 * Only safe when no stopped thread is inside jemalloc: one that is may hold a
 * lock our call would then wait on forever.  So every thread is stopped and
 * unwound first, and the freeze is refused, naming the culprit, if any of them
 * is inside jemalloc.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "unwind.h"

#define STOP_MS 1000
#define MAX_FRAMES 32

static void log_cb(void *arg, int level, const char *msg)
{
	const jma_session *s = arg;

	if (s->opt.log && level <= s->opt.log_level)
		s->opt.log(s->opt.log_arg, level, msg);
}

void jma_thaw_all(jma_session *s)
{
	for (size_t i = s->nfrozen; i-- > 0;)
		att_thread_release(&s->frozen[i]);
	free(s->frozen);
	s->frozen = NULL;
	s->nfrozen = 0;
}

/* "#0 func+0x1 (module) <- #1 ..." for a refusal message. */
static void describe_stack(jma_session *s, const uint64_t *pcs, int n, char *buf, size_t len)
{
	struct jma_frame f[MAX_FRAMES];
	size_t used = 0;

	jma_frames_fill(s, pcs, n, f);
	buf[0] = '\0';
	for (int i = 0; i < n && used + 1 < len; i++) {
		const char *mod = f[i].module ? strrchr(f[i].module, '/') : NULL;
		int k;

		if (f[i].func)
			k = snprintf(buf + used, len - used, "\n    #%d %s+0x%llx (%s)%s", i, f[i].func,
				     (unsigned long long)f[i].off, mod ? mod + 1 : "?",
				     f[i].in_jemalloc ? " [jemalloc]" : "");
		else
			k = snprintf(buf + used, len - used, "\n    #%d 0x%llx (%s)%s", i,
				     (unsigned long long)f[i].pc, mod ? mod + 1 : "?",
				     f[i].in_jemalloc ? " [jemalloc]" : "");
		if (k < 0)
			break;
		used += (size_t)k;
	}
}

int jma_freeze_all(jma_session *s, const struct att_candidate *c, size_t n)
{
	s->frozen = calloc(n ? n : 1, sizeof(*s->frozen));
	if (!s->frozen)
		return jma_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct att_thread *t = &s->frozen[s->nfrozen];
		uint64_t pcs[MAX_FRAMES];
		char stack[2048];
		int err, complete, nf;

		att_thread_init(t, s->pid, c[i].tid);
		t->log = log_cb;
		t->log_arg = s;
		t->log_level = s->opt.log_level;
		err = att_thread_seize(t, STOP_MS);
		if (err == -ESRCH)
			continue;	/* exited meanwhile: nothing to freeze */
		if (err) {
			jma_fail(s, err == -EPERM ? JMA_ERR_ATTACH : JMA_ERR_UNSAFE, err,
				 "--freeze: cannot stop tid %d (%s): %s", (int)c[i].tid, c[i].comm, t->err);
			jma_thaw_all(s);
			return err;
		}
		s->nfrozen++;
		nf = att_unwind(t->tid, pcs, MAX_FRAMES, &complete);
		for (int k = 0; k < nf; k++) {
			if (!jma_syms_in_jemalloc(s->syms, pcs[k] - (k > 0)))
				continue;
			describe_stack(s, pcs, nf, stack, sizeof(stack));
			jma_fail(s, JMA_ERR_UNSAFE, -EAGAIN, "--freeze refused: tid %d (%s) is inside "
				 "jemalloc and may hold a lock; try again, or omit --freeze:%s",
				 (int)c[i].tid, c[i].comm, stack);
			jma_thaw_all(s);
			return -EAGAIN;
		}
	}
	jma_logf(s, JMA_LOG_INFO, "froze %zu threads", s->nfrozen);
	return 0;
}

int jma_take_frozen(jma_session *s, pid_t tid)
{
	for (size_t i = 0; i < s->nfrozen; i++) {
		if (s->frozen[i].tid != tid)
			continue;
		s->th = s->frozen[i];
		memmove(&s->frozen[i], &s->frozen[i + 1], (s->nfrozen - i - 1) * sizeof(*s->frozen));
		s->nfrozen--;
		return 0;
	}
	return -ESRCH;
}
