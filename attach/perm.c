/* perm.c -- attach prechecks and ptrace permission diagnosis. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perm.h"
#include "procfs.h"

#define CAP_SYS_PTRACE_BIT 19
#define PF_KTHREAD 0x00200000UL

static int stat_flags(pid_t pid, unsigned long *flags)
{
	char path[64], *buf, *p;
	int err, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	err = att_proc_read(path, &buf, NULL);
	if (err)
		return err;
	/* comm may contain spaces and parentheses: fields restart after the last ')'. */
	p = strrchr(buf, ')');
	for (field = 2; p && field < 9; field++)
		p = strchr(p + 1, ' ');
	*flags = p ? strtoul(p + 1, NULL, 10) : 0;
	free(buf);
	return 0;
}

int att_precheck(pid_t pid, struct att_status *out, char *msg, size_t len)
{
	struct att_status st;
	unsigned long flags = 0;
	int err;

	if (pid <= 0) {
		snprintf(msg, len, "invalid process id %d", (int)pid);
		return -ESRCH;
	}
	if (pid == getpid()) {
		snprintf(msg, len, "process %d is jemattach itself", (int)pid);
		return -EPERM;
	}
	err = att_proc_status(pid, 0, &st);
	if (err == -ESRCH) {
		snprintf(msg, len, "no such process %d", (int)pid);
		return err;
	}
	if (err) {
		snprintf(msg, len, "reading /proc/%d/status: %s", (int)pid, strerror(-err));
		return err;
	}
	stat_flags(pid, &flags);
	if (st.kthread || (flags & PF_KTHREAD)) {
		snprintf(msg, len, "process %d (%s) is a kernel thread", (int)pid, st.name);
		return -EPERM;
	}
	if ((st.state == 'Z' || st.state == 'X') && st.nthreads <= 1) {
		snprintf(msg, len, "process %d (%s) is a zombie", (int)pid, st.name);
		return -ESRCH;
	}
	*out = st;
	if (!st.tracer)
		return 0;
	err = att_wait_tracer(pid, 0, ATT_TRACER_WAIT_MS, msg, len);
	/* As it is now that the other tracer has gone. */
	if (!err)
		att_proc_status(pid, 0, out);
	return err;
}

/* Is @tracer another jemattach: the same executable as ours, or a program
 * named so (one built on libjemattach)? */
static int is_jemattach(pid_t tracer, const char *name)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)tracer);
	if (!stat(path, &a) && !stat("/proc/self/exe", &b) && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		return 1;
	return !strcmp(name, "jemattach");
}

int att_wait_tracer(pid_t pid, pid_t tid, int timeout_ms, char *msg, size_t len)
{
	pid_t last = 0;

	/* The wait restarts when the process passes from one jemattach to the
	 * next (they are making progress), up to 5 times the wait in all. */
	for (int waited = 0, total = 0;; waited += 10, total += 10) {
		struct timespec step = { 0, 10000000 };
		struct att_status st, tr;
		int ours;

		/* Gone or unreadable: the caller's next step says so precisely. */
		if (att_proc_status(pid, tid, &st) || !st.tracer)
			return 0;
		if (st.tracer != last && total < 5 * timeout_ms)
			waited = 0;
		last = st.tracer;
		/* A tracer already gone: the kernel is releasing its tracees (the
		 * TracerPid line can outlive it by a moment). */
		if (att_proc_status(st.tracer, 0, &tr)) {
			snprintf(tr.name, sizeof(tr.name), "?");
			ours = 1;
		} else {
			ours = is_jemattach(st.tracer, tr.name);
		}
		if (!ours || waited >= timeout_ms) {
			snprintf(msg, len, "process %d (%s) is already traced by process %d (%s)%s",
				 (int)pid, st.name, (int)st.tracer, tr.name, ours ?
				 ": another jemattach, still attached after waiting for it" : "");
			return -EBUSY;
		}
		nanosleep(&step, NULL);
	}
}

static int read_int_file(const char *path, int *v)
{
	char *buf;

	if (att_proc_read(path, &buf, NULL))
		return -1;
	*v = atoi(buf);
	free(buf);
	return 0;
}

static int is_ancestor(pid_t pid)
{
	pid_t p = getpid();

	/* Yama scope 1 lets a process trace its descendants: walk up from the target. */
	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		char path[64], *buf, *q;

		if (pid == p)
			return 1;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if (att_proc_read(path, &buf, NULL))
			return 0;
		q = strrchr(buf, ')');
		pid = q ? (pid_t)atoi(q + 4) : 0;
		free(buf);
	}
	return 0;
}

void att_explain_eperm(pid_t pid, char *msg, size_t len)
{
	struct att_status me, st;
	int scope, has_cap;

	if (att_proc_status(getpid(), 0, &me) || att_proc_status(pid, 0, &st)) {
		snprintf(msg, len, "permission denied");
		return;
	}
	/* Another tracer took it since the precheck: that is the reason, not permissions. */
	if (att_wait_tracer(pid, 0, 0, msg, len))
		return;
	has_cap = !!(me.cap_eff & (1ULL << CAP_SYS_PTRACE_BIT));
	if (read_int_file("/proc/sys/kernel/yama/ptrace_scope", &scope) == 0) {
		if (scope >= 3) {
			snprintf(msg, len, "permission denied: Yama ptrace_scope=3 disables ptrace "
				 "until reboot");
			return;
		}
		if (scope == 2 && !has_cap) {
			snprintf(msg, len, "permission denied: Yama ptrace_scope=2 requires "
				 "CAP_SYS_PTRACE (run as root or grant the capability)");
			return;
		}
		if (scope == 1 && !has_cap && !is_ancestor(pid)) {
			snprintf(msg, len, "permission denied: Yama ptrace_scope=1 only allows "
				 "tracing descendants; run as root, grant CAP_SYS_PTRACE, or set "
				 "kernel.yama.ptrace_scope=0");
			return;
		}
	}
	if (!has_cap && (st.uid[0] != me.uid[1] || st.uid[1] != me.uid[1] || st.uid[2] != me.uid[1])) {
		snprintf(msg, len, "permission denied: process %d runs as uid %u and jemattach as "
			 "uid %u without CAP_SYS_PTRACE (run as root or as that user)", (int)pid,
			 st.uid[1], me.uid[1]);
		return;
	}
	if (!has_cap && (me.cap_eff | st.cap_eff) != me.cap_eff) {
		snprintf(msg, len, "permission denied: process %d has capabilities jemattach lacks "
			 "(CapEff %llx vs %llx)", (int)pid, (unsigned long long)st.cap_eff,
			 (unsigned long long)me.cap_eff);
		return;
	}
	snprintf(msg, len, "permission denied%s (a non-dumpable target, a security module such "
		 "as SELinux or AppArmor, or a user namespace boundary may forbid it)",
		 has_cap ? " although jemattach has CAP_SYS_PTRACE" : "");
}
