/* pinfo.c -- a process as the server sees it from /proc, and whether the
 * selectors (--target) choose it.
 *
 * The server's threads read /proc/PID/{stat,status,cgroup,auxv} and the exe
 * link only: none of these waits for the process's memory.  Not its memory
 * itself (the AT_RANDOM bytes jma_exec_mark reads): a page of a FUSE file
 * whose server never answers, mapped there, held the scanner in the kernel
 * for good -- holding the target list's lock, so that /metrics and /targets
 * stopped answering and SIGTERM waited for it.  Nothing is read under that
 * lock now (targets.c), and what reads a process's memory runs in a child
 * (child.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/serve.h"

#define PF_KTHREAD	0x00200000u

static int read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (int)n;
}

double pinfo_uptime(void)
{
	char buf[64];

	return read_small("/proc/uptime", buf, sizeof(buf)) > 0 ? strtod(buf, NULL) : 0;
}

int pinfo_read(pid_t pid, double up, int need_exe, struct pinfo *p)
{
	char path[64], buf[4096], *rp, *line;
	unsigned long flags = 0;
	unsigned long long start = 0;
	int ppid = 0;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -ESRCH;
	/* "pid (comm) S ppid ...": comm may hold spaces and parentheses. */
	rp = strrchr(buf, ')');
	if (!rp || !strchr(buf, '('))
		return -ESRCH;
	*rp = '\0';
	snprintf(p->comm, sizeof(p->comm), "%s", strchr(buf, '(') + 1);
	if (sscanf(rp + 2, "%*c %d %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
		   "%*d %*d %llu", &ppid, &flags, &start) != 3)
		return -ESRCH;
	p->ppid = ppid;
	p->start = start;
	p->kthread = (flags & PF_KTHREAD) != 0;
	p->age = up - (double)start / (double)sysconf(_SC_CLK_TCK);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_small(path, buf, sizeof(buf)) > 0 && (line = strstr(buf, "\nUid:")))
		p->uid = (uid_t)strtoul(line + 5, NULL, 10);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (read_small(path, buf, sizeof(buf)) > 0) {
		/* cgroup v2's "0::PATH"; else systemd's v1 hierarchy. */
		char *v2 = strncmp(buf, "0::", 3) ? strstr(buf, "\n0::") : buf - 1;
		char *v1 = strstr(buf, ":name=systemd:");
		char *at = v2 ? v2 + 4 : v1 ? v1 + 14 : NULL;

		if (at)
			snprintf(p->cgroup, sizeof(p->cgroup), "%.*s", (int)strcspn(at, "\n"), at);
	}
	if (need_exe) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		n = readlink(path, p->exe, sizeof(p->exe) - 1);
		p->exe[n > 0 ? n : 0] = '\0';
	}
	return 0;
}

/* What program process @pid (started at @start) runs, from /proc alone: its
 * start time, and its auxiliary vector (the kernel's copy), whose addresses --
 * the stack's AT_RANDOM and AT_EXECFN, the vDSO, the entry -- an exec draws
 * anew under ASLR.  (An exec of the same program with randomization off
 * keeps it: that target's cached version and options then stay, until it
 * restarts.) */
uint64_t pinfo_mark(pid_t pid, unsigned long long start)
{
	unsigned char buf[2048];
	uint64_t h = 0xcbf29ce484222325ull ^ start;	/* FNV-1a */
	char path[64];
	ssize_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf));
		close(fd);
	}
	for (ssize_t i = 0; i < n; i++)
		h = (h ^ buf[i]) * 0x100000001b3ull;
	return h ? h : 1;
}

int target_owned_by(pid_t pid, uid_t uid)
{
	char path[64], buf[4096], *line;
	unsigned u[4];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_small(path, buf, sizeof(buf)) <= 0 || !(line = strstr(buf, "\nUid:")) ||
	    sscanf(line + 5, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) != 4)
		return 0;
	for (int i = 0; i < 4; i++)
		if (u[i] != uid)
			return 0;
	/* Not dumpable (a setuid program, or one that asked): root's entry. */
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) == 0 && st.st_uid == uid;
}

/* The unit or container: the last component of the cgroup path. */
void pinfo_unit(const char *cgroup, char *out, size_t len)
{
	const char *slash = strrchr(cgroup, '/');

	snprintf(out, len, "%s", slash ? slash + 1 : cgroup);
}

/* unit=NAME: a component of the cgroup path reached through slices only
 * ("/system.slice/NAME", "/a.slice/b.slice/NAME/..."): where systemd puts
 * its units.  Below a unit nothing matches: a delegated subtree (a user's
 * user@UID.service, a container's scope) is its owner's to name as it likes. */
static int unit_match(const char *cgroup, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = cgroup; *p == '/';) {
		size_t len = strcspn(p + 1, "/");

		if (len == n && !strncmp(p + 1, name, n))
			return 1;
		if (len < 6 || strncmp(p + 1 + len - 6, ".slice", 6))
			return 0;
		p += 1 + len;
	}
	return 0;
}

static int cond_match(const struct serve_cond *c, const struct pinfo *p)
{
	size_t n;

	switch (c->kind) {
	case SEL_PID:
		return c->pid == p->pid;
	case SEL_COMM:
		return regexec(&c->re, p->comm, 0, NULL, 0) == 0;
	case SEL_UID:
		return c->uid == p->uid;
	case SEL_CGROUP:
		n = strlen(c->path);
		return !strncmp(p->cgroup, c->path, n) &&
		       (p->cgroup[n] == '\0' || p->cgroup[n] == '/' || c->path[n - 1] == '/');
	case SEL_UNIT:
		return unit_match(p->cgroup, c->path);
	case SEL_EXE:
		return p->exe[0] && !strcmp(p->exe, c->path);
	}
	return 0;
}

/* Every condition of @s holds. */
static int sel_match(const struct serve_sel *s, const struct pinfo *p)
{
	for (size_t i = 0; i < s->n; i++)
		if (!cond_match(&s->c[i], p))
			return 0;
	return s->n > 0;
}

/* @s names one process by its PID. */
static int sel_by_pid(const struct serve_sel *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i].kind == SEL_PID)
			return 1;
	return 0;
}

/* 0: not served; 1: chosen; 2: chosen by its PID (shown even without jemalloc). */
int pinfo_selected(const struct serve_ctx *sc, const struct pinfo *p)
{
	int r = 0;

	if (p->kthread || p->pid == sc->self || p->ppid == sc->self)
		return 0;
	if (!sc->cfg->nsel)
		return 1;
	for (size_t i = 0; i < sc->cfg->nsel; i++)
		if (sel_match(&sc->cfg->sel[i], p))
			r = sel_by_pid(&sc->cfg->sel[i]) ? 2 : r ? r : 1;
	return r;
}
