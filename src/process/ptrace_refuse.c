/* ptrace_refuse.c -- the live backend's refusals: why no call may run in this process now.
 *
 * Each says what it found and what a call would risk, with the hints of
 * what the caller could change (JMA_HINT_*).  The ones that can be told
 * without stopping anything are checked before anything stops, to keep the
 * hold short.
 */
#include <errno.h>

#include "attach/call.h"
#include "process/cgmem.h"
#include "process/execcheck.h"
#include "process/open.h"
#include "process/ptrace_be.h"
#include "process/stuck.h"
#include "symbols/symbols.h"

/* Refuse (unless --force) a target whose cgroup could OOM-kill it for the
 * memory our first call costs it (cgmem.h). */
static int cgmem_check(jma_session *s)
{
	char which[4400];
	uint64_t room;

	if (s->opt.flags & JMA_F_FORCE)
		return 0;
	if (proc_cgmem_room(s->pid, &room, which, sizeof(which)) || room >= JMA_CGMEM_FIRST_CALL)
		return 0;
	return sess_fail_hint(s, JMA_HINT_FORCE, JMA_ERR_UNSAFE, -ENOMEM, "process %d has %llu KiB "
			     "left under its memory cgroup's limit (%s); a first call into it can cost "
			     "up to %lu KiB and could get it OOM-killed: refused",
			(int)s->pid, (unsigned long long)(room / 1024), which,
			JMA_CGMEM_FIRST_CALL / 1024);
}

int ptrace_refuse_open(jma_session *s)
{
	char msg[sizeof(s->err)];
	size_t nm;
	const struct att_map *maps = syms_maps(s->syms, &nm);
	int err = att_call_check_sentinels(s->pid, maps, nm, msg, sizeof(msg));

	if (err)
		return sess_fail(s, JMA_ERR_UNSAFE, err, "%s", msg);
	return cgmem_check(s);
}

/* Refuse (unless --force) before any thread stops when one stays asleep
 * inside jemalloc where it may hold a lock: our call would wait on it until
 * the timeout, then be left running to finish on its own. */
int ptrace_refuse_stuck(jma_session *s)
{
	struct jma_holder h;
	char msg[sizeof(s->err)];
	int err = proc_stuck_find(s, &h);

	if (err <= 0)
		return 0;	/* a listing that failed fails again, clearly, in begin */
	if (s->opt.flags & JMA_F_FORCE) {
		proc_holder_format(s, &h, "calling anyway (forced)", "the call may wait for it "
				  "until the timeout", 0, msg, sizeof(msg));
		sess_logf(s, JMA_LOG_WARN, "%s", msg);
		return 0;
	}
	proc_holder_format(s, &h, s->opt.flags & JMA_F_FREEZE ? "freeze refused" : "refused",
			  "a call would wait for that lock", 1, msg, sizeof(msg));
	return sess_fail_hint(s, JMA_HINT_FORCE | JMA_HINT_EMULATE, JMA_ERR_UNSAFE, -EAGAIN, "%s", msg);
}

int ptrace_fail_exited(jma_session *s)
{
	if (!sess_exec_ident_same(s->pid, &s->ident))
		return 0;
	return sess_fail(s, JMA_ERR_ATTACH, -ESRCH, "process %d exited", (int)s->pid);
}

int ptrace_fail_exec(jma_session *s)
{
	if (!s->exec_mark)
		return sess_fail(s, JMA_ERR_ATTACH, -ENOEXEC, "process %d: its AT_RANDOM bytes could "
				"not be read or are zeros, so whether it still runs the program read "
				"cannot be told: refused", (int)s->pid);
	return sess_fail(s, JMA_ERR_ATTACH, -ENOEXEC, "process %d executed a new program since "
			"jemattach read its symbols", (int)s->pid);
}

int ptrace_fail_changed(jma_session *s)
{
	int err = ptrace_fail_exited(s);

	if (!err && proc_exec_same(s->pid, s->exec_mark, &s->exec_where) == -ENOEXEC)
		err = ptrace_fail_exec(s);
	return err;
}

/* Were the maps the command works from (jma_open's for the first, else its
 * own) read while the process was loading code -- the program it had just
 * executed, libc not mapped yet -- or did it execute another since?  Then
 * they miss what it runs now: the error says so (0 when they did not). */
int ptrace_fail_loading(jma_session *s, int wait_ms)
{
	size_t n;
	const struct att_map *maps = syms_maps(s->syms, &n);

	if (!proc_exec_loading(s->pid, s->exec_mark, maps, n, wait_ms))
		return 0;
	if (proc_exec_same(s->pid, s->exec_mark, &s->exec_where) == -ENOEXEC)
		return ptrace_fail_exec(s);
	return sess_fail_hint(s, JMA_HINT_RETRY, JMA_ERR_ATTACH, -EAGAIN, "process %d was loading "
			     "code when jemattach read its maps (a program it had just executed, or a "
			     "library)", (int)s->pid);
}

/* The fallback call engine returns into page 0: should jemattach die during
 * a call, the thread faults there and the process dies.  It is used only
 * with --force; @why says why the self-restoring engine cannot be. */
int ptrace_refuse_engine(jma_session *s, const char *why)
{
	/* What it needs was not found because the process exited or ran
	 * another program meanwhile?  That is the error then.  An exec under
	 * way reads as code that vanished before it shows in the exec mark (a
	 * moment's look: 1 run in 30 of 47-exec), and maps read while the
	 * loader was at work as code not there yet. */
	int err = ptrace_fail_changed(s);

	if (err || (err = ptrace_fail_loading(s, JMA_LOADING_WAIT_MS)))
		return err;
	return sess_fail_hint(s, JMA_HINT_FORCE | JMA_HINT_EMULATE, JMA_ERR_UNSAFE, -ENOTSUP, "%s: only "
			     "the fallback call engine could call into process %d, and if jemattach "
			     "died during a call the process would die too: refused", why, (int)s->pid);
}
