/* jemattach/threads.h -- every thread of the target with its symbolized stack. */
#ifndef JEMATTACH_THREADS_H
#define JEMATTACH_THREADS_H

#include <stdint.h>
#include <sys/types.h>

#include <jemattach/session.h>
#include <jemattach/api.h>

JMA_API_BEGIN

struct jma_frame {
	uint64_t pc;
	const char *func;	/* NULL when no symbol covers pc */
	const char *demangled;	/* func as users read it: C++ names demangled (unless
				 * JMA_F_NO_DEMANGLE), others as func */
	uint64_t off;		/* pc - func */
	const char *module;	/* file of the module, NULL if unmapped */
	const char *file;	/* source position, when debuginfo has it */
	int line;
	int in_jemalloc;
};

struct jma_thread {
	pid_t tid;
	char comm[64];
	char state;		/* from /proc: R S D T t ... */
	long syscall;		/* blocking system call number, -1 running, -2 unknown */
	const char *syscall_name;
	int nframes;
	const struct jma_frame *frames;
	int in_jemalloc;	/* some frame is jemalloc's own code */
	int err;		/* 0, or why there is no stack: -errno */
	const char *errmsg;
	int may_hold_lock;	/* inside jemalloc, and not waiting on a condition
				 * variable there (which released its mutex) */
};

/* Called once per thread; the pointers are valid during the call only.
 * A non-zero return stops the walk and is returned by jma_threads. */
typedef int (*jma_thread_fn)(void *arg, const struct jma_thread *t);

/* Stop each thread in turn for as long as it takes to unwind it (typically
 * well under a millisecond), then let it go.  One thread failing (exited,
 * uninterruptible) is reported through its err field and does not stop the
 * walk.  Works on processes without jemalloc when the session was opened with
 * JMA_F_ANY_PROCESS. */
int jma_threads(jma_session *s, int max_frames, jma_thread_fn fn, void *arg) JMA_MUST_CHECK;

/* What process @pid runs: its file as the kernel names it (/proc/PID/exe)
 * into @exe, the name it goes by (comm, "" when unreadable) into @comm.
 * -errno (-ENOENT gone, -EACCES) when the file cannot be named.  Needs no
 * session. */
int jma_process_exe(pid_t pid, char *exe, size_t exelen, char *comm, size_t commlen)
	JMA_MUST_CHECK;

JMA_API_END

#endif
