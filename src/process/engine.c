/* engine.c -- the attach engine on a session's process (engine.h). */
#include <string.h>

#include "process/engine.h"

static void log_cb(void *arg, int level, const char *msg)
{
	const jma_session *s = arg;

	if (s->opt.log && level <= s->opt.log_level)
		s->opt.log(s->opt.log_arg, level, msg);
}

void proc_thread_setup(jma_session *s, struct att_thread *t, pid_t tid)
{
	att_thread_init(t, s->pid, tid);
	t->log = log_cb;
	t->log_arg = s;
	t->log_level = s->opt.log_level;
}

int proc_fail_att(jma_session *s, const struct att_thread *t, enum jma_errkind kind, int err)
{
	return sess_fail(s, kind, err, "%s", t->err[0] ? t->err : strerror(-err));
}
