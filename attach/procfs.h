/* procfs.h -- what /proc says about a process and its threads. */
#ifndef ATTACH_PROCFS_H
#define ATTACH_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct att_status {
	char name[64];		/* comm */
	char state;		/* R S D T t Z X I ... */
	pid_t tracer;		/* TracerPid, 0 if none */
	uid_t uid[4];		/* real, effective, saved, fs */
	uint64_t cap_eff;
	int kthread;		/* a kernel thread: no user memory */
	int nthreads;
	uint64_t sigpnd;	/* SigPnd | ShdPnd: pending for the thread or its process */
	uint64_t ctxsw;		/* voluntary + nonvoluntary context switches so far */
};

/* /proc/PID/task/TID/status (tid 0 = the process).  -ESRCH if gone. */
int att_proc_status(pid_t pid, pid_t tid, struct att_status *st);

/* State and comm of thread @tid from /proc/PID/task/TID/stat: one line, and
 * cheaper for the kernel than status (which also takes the target's mmap
 * lock for its memory figures).  -ESRCH if gone. */
int att_proc_stat(pid_t pid, pid_t tid, char *state, char *comm, size_t len);

/* The thread ids of @pid, sorted by tid.  Once pids wrap around, the main
 * thread need not be first; no caller relies on it.  *tids is malloc'ed. */
int att_proc_tasks(pid_t pid, pid_t **tids, size_t *n);
/* /proc/PID/task opened (a descriptor to close), or -errno.  Reading every
 * thread's file through it spares the kernel the walk of /proc/PID for each:
 * 5.0 against 6.2 us a thread, measured on 1000 threads. */
int att_proc_taskdir(pid_t pid);
/* att_proc_tasks through @taskdir, just opened (its listing is read once). */
int att_proc_tasks_in(int taskdir, pid_t **tids, size_t *n);

/* The system call the thread is blocked in (/proc/PID/task/TID/syscall), or -1
 * when it is running in user space, or -2 when the kernel does not say. */
long att_proc_syscall(pid_t pid, pid_t tid);
/* The same, with the user stack pointer and program counter the kernel
 * recorded at the system call's entry (0 when it is not in one). */
long att_proc_syscall_at(pid_t pid, pid_t tid, uint64_t *sp, uint64_t *pc);
/* The same with its six arguments. */
long att_proc_syscall_args(pid_t pid, pid_t tid, uint64_t args[6], uint64_t *sp, uint64_t *pc);
/* The same through @taskdir (att_proc_taskdir). */
long att_proc_syscall_in(int taskdir, pid_t tid, uint64_t *sp, uint64_t *pc);

struct att_map {
	uint64_t start, end, offset;
	char perms[5];
	uint64_t dev;		/* major << 32 | minor */
	uint64_t inode;
	char *path;		/* NULL for anonymous mappings */
};

/* Parse /proc/PID/maps.  Free with att_maps_free. */
int att_proc_maps(pid_t pid, struct att_map **maps, size_t *n);
/* The same from its text, read earlier (att_proc_read). */
int att_maps_parse(const char *text, struct att_map **maps, size_t *n);
void att_maps_free(struct att_map *maps, size_t n);
const struct att_map *att_maps_find(const struct att_map *maps, size_t n, uint64_t addr);
/* The module mapping @maps[@i] belongs to, as the loader maps one: the run
 * of consecutive entries of the same file (path, device and inode) that
 * starts at its mapping of file offset 0 -- a new one starts a new module,
 * as when the program maps the file again itself, even right next to it.
 * The indexes of its first and last entries. */
void att_maps_run(const struct att_map *maps, size_t n, size_t i, size_t *first, size_t *last);

/* /proc/PID/pagemap, opened (an fd, or -errno); is the page at @addr in
 * memory or swap (1), never touched (0: reading it would make the kernel
 * map it, and a page table for it), or unknown (-errno)? */
int att_proc_pagemap(pid_t pid);
int att_page_present(int pagemap, uint64_t addr);

/* Read a whole small /proc file into a malloc'ed NUL-terminated buffer. */
int att_proc_read(const char *path, char **out, size_t *len);

/* Entries @types[0..n) (AT_*) of the process's auxiliary vector, from one
 * read of /proc/PID/auxv, into @vals[0..n): 0 for an absent one, all 0 when
 * the process is gone or unreadable. */
void att_proc_auxv(pid_t pid, const uint64_t *types, uint64_t *vals, size_t n);

#endif
