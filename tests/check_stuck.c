/* check_stuck.c -- which sleeping threads count as stuck inside jemalloc (src/process/stuck.c).
 *
 * The process looked at is the test's own: its threads sleep in functions
 * that the fake backend's session takes for jemalloc's code (the section
 * fakeje_text below), or elsewhere.  Nothing is stopped or ptraced: the look
 * reads /proc and the sleepers' stacks in place, as it does on a target.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <jemattach.h>

#include "attach/procfs.h"
#include "attach/unwind.h"
#include "fake_backend.h"
#include "process/stuck.h"
#include "symbols/symbols.h"

/* "jemalloc's code": these functions and nothing else. */
#define FAKEJE __attribute__((noinline, noclone, section("fakeje_text")))
extern const char __start_fakeje_text[], __stop_fakeje_text[];

struct sleeper {
	pthread_t th;
	const char *name;
	void (*body)(struct sleeper *z);
	atomic_int tid;
	atomic_int stop;
	int fd[2];
	pthread_mutex_t *m;
	pthread_cond_t *c;
};

/* The empty asm after each call keeps the call from being a tail call: the
 * return address stays inside the function.  System calls go through
 * syscall(), which sanitizers do not wrap: an interceptor's frame between
 * would end the walk from the sleeping system call before this function.
 * Not on arm64: there syscall() is a leaf (no frame record: the return
 * address stays in x30, which /proc's sp and pc do not give, so no walk from
 * its svc gets out), and read() and nanosleep(), which save x29 and x30, are
 * used instead (as jemalloc's own calls are libc's wrappers). */
#if defined(__aarch64__)
#define SYS_READ(fd, b, n)	read(fd, b, n)
#define SYS_NANOSLEEP(t)	nanosleep(t, NULL)
#else
#define SYS_READ(fd, b, n)	syscall(SYS_read, fd, b, n)
#define SYS_NANOSLEEP(t)	syscall(SYS_nanosleep, t, NULL)
#endif

FAKEJE static void je_read(int fd)
{
	char b;

	if (SYS_READ(fd, &b, 1) < 0)
		b = 0;
	__asm__ volatile("" ::: "memory");
}

FAKEJE static void je_lock(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	__asm__ volatile("" ::: "memory");
	pthread_mutex_unlock(m);
}

/* Like jemalloc's background thread: asleep in a condition wait. */
FAKEJE static void je_cond_wait(struct sleeper *z)
{
	pthread_mutex_lock(z->m);
	while (!atomic_load(&z->stop))
		pthread_cond_wait(z->c, z->m);
	pthread_mutex_unlock(z->m);
	__asm__ volatile("" ::: "memory");
}

/* Asleep again and again at the same place, but never for long: 40 ms, so
 * that it wakes at least twice during a look (100 ms) and yet is seen asleep
 * there at nearly every glance: only its context switches tell it ran. */
FAKEJE static void je_nap(struct sleeper *z)
{
	while (!atomic_load(&z->stop)) {
		struct timespec t = { 0, 40 * 1000 * 1000 };

		SYS_NANOSLEEP(&t);
		__asm__ volatile("" ::: "memory");
	}
}

static void body_je_read(struct sleeper *z) { je_read(z->fd[0]); }
static void body_read(struct sleeper *z)
{
	char b;

	if (SYS_READ(z->fd[0], &b, 1) < 0)
		b = 0;
	__asm__ volatile("" ::: "memory");
}
static void body_je_lock(struct sleeper *z) { je_lock(z->m); }
static void body_je_cond(struct sleeper *z) { je_cond_wait(z); }
static void body_je_nap(struct sleeper *z) { je_nap(z); }

static void *run(void *arg)
{
	struct sleeper *z = arg;

	pthread_setname_np(pthread_self(), z->name);
	atomic_store(&z->tid, (int)syscall(SYS_gettid));
	z->body(z);
	return NULL;
}

/* Start @z and wait until it sleeps in a system call. */
static void start(struct sleeper *z)
{
	uint64_t sp, pc;

	ck_assert_int_eq(pipe(z->fd), 0);
	ck_assert_int_eq(pthread_create(&z->th, NULL, run, z), 0);
	for (int i = 0; i < 5000; i++) {
		int tid = atomic_load(&z->tid);

		if (tid && att_proc_syscall_at(getpid(), tid, &sp, &pc) >= 0)
			return;
		usleep(1000);
	}
	ck_abort_msg("thread %s never fell asleep", z->name);
}

static void stop(struct sleeper *z)
{
	atomic_store(&z->stop, 1);
	if (z->c) {
		pthread_mutex_lock(z->m);
		pthread_cond_broadcast(z->c);
		pthread_mutex_unlock(z->m);
	}
	ck_assert_int_eq(write(z->fd[1], "x", 1), 1);
	pthread_join(z->th, NULL);
	close(z->fd[0]);
	close(z->fd[1]);
}

/* Does the walk from where @z sleeps reach "jemalloc"?  So that a thread
 * not counted is not counted for the rule tested, not for a walk cut short. */
static int reaches_jemalloc(jma_session *s, struct sleeper *z)
{
	uint64_t sp, pc, pcs[JMA_HOLDER_FRAMES];
	size_t nm;
	const struct att_map *maps = syms_maps(s->syms, &nm);
	int nf = 0;

	for (int i = 0; i < 5000 && nf <= 0; i++) {
		if (att_proc_syscall_at(getpid(), z->tid, &sp, &pc) >= 0)
			nf = att_unwind_at(getpid(), z->tid, sp, pc, maps, nm, pcs, JMA_HOLDER_FRAMES);
		else
			usleep(100);
	}
	for (int i = 0; i < nf; i++)
		if (syms_in_jemalloc(s->syms, pcs[i] - (i > 0)))
			return 1;
	return 0;
}

/* A session on this process whose jemalloc is the fakeje_text section;
 * made after the threads started, as its maps must hold their stacks. */
static jma_session *session_here(void)
{
	struct jma_range code = { (uintptr_t)__start_fakeje_text, (uintptr_t)__stop_fakeje_text };
	jma_session *s = jma_new(NULL);
	struct fake_je *je;

	ck_assert_ptr_nonnull(s);
	ck_assert_msg(fake_open_at(s, JMA_JEVERSION(5, 3, 0), getpid(), &code, 1, &je) == 0, "%s",
		      jma_errmsg(s));
	return s;
}

START_TEST(test_stuck_asleep_inside_jemalloc)
{
	struct sleeper z = { .name = "je-reader", .body = body_je_read };
	jma_session *s;
	struct jma_holder h;

	start(&z);
	s = session_here();
	ck_assert_int_eq(proc_stuck_find(s, &h), 1);
	ck_assert_int_eq(h.tid, z.tid);
	ck_assert_str_eq(h.comm, "je-reader");
	ck_assert_int_eq(h.syscall, SYS_read);
	ck_assert_int_ge(h.ms, JMA_STUCK_MS);
	ck_assert_int_lt(h.ms, JMA_STUCK_FUTEX_MS);
	/* Its frames reach the jemalloc function it sleeps in. */
	ck_assert_int_ge(h.nf, 2);
	ck_assert_int_eq(proc_lock_holder_frame(s, h.pcs, h.nf) >= 0, 1);
	stop(&z);
	jma_free(s);
}
END_TEST

/* Asleep, but not inside jemalloc: not counted. */
START_TEST(test_stuck_asleep_elsewhere)
{
	struct sleeper z = { .name = "app-reader", .body = body_read };
	jma_session *s;
	struct jma_holder h;

	start(&z);
	s = session_here();
	ck_assert_int_eq(reaches_jemalloc(s, &z), 0);
	ck_assert_int_eq(proc_stuck_find(s, &h), 0);
	stop(&z);
	jma_free(s);
}
END_TEST

/* Inside jemalloc, asleep at the same place each look, but it ran between
 * them: not stuck. */
START_TEST(test_stuck_moving_thread)
{
	struct sleeper z = { .name = "je-napper", .body = body_je_nap };
	jma_session *s;
	struct jma_holder h;

	start(&z);
	s = session_here();
	ck_assert_int_eq(reaches_jemalloc(s, &z), 1);
	/* Three looks: a look that first sees it running decides nothing. */
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(proc_stuck_find(s, &h), 0);
	stop(&z);
	jma_free(s);
}
END_TEST

/* jemalloc's background thread sleeps in a condition wait, which released
 * its mutex: not a holder. */
START_TEST(test_stuck_condition_wait)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct sleeper z = { .name = "je-bg", .body = body_je_cond, .m = &m, .c = &c };
	jma_session *s;
	struct jma_holder h;

	start(&z);
	s = session_here();
	ck_assert_int_eq(reaches_jemalloc(s, &z), 1);
	ck_assert_int_eq(proc_stuck_find(s, &h), 0);
	stop(&z);
	jma_free(s);
}
END_TEST

/* A waiter for a jemalloc lock alone counts only after the longer wait
 * (its holder may be running). */
START_TEST(test_stuck_lock_waiter)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct sleeper z = { .name = "je-waiter", .body = body_je_lock, .m = &m };
	jma_session *s;
	struct jma_holder h;

	pthread_mutex_lock(&m);
	start(&z);
	s = session_here();
	ck_assert_int_eq(proc_stuck_find(s, &h), 1);
	ck_assert_int_eq(h.tid, z.tid);
	ck_assert_int_eq(h.syscall, SYS_futex);
	ck_assert_int_ge(h.ms, JMA_STUCK_FUTEX_MS);
	pthread_mutex_unlock(&m);
	stop(&z);
	jma_free(s);
}
END_TEST

/* The holder is named, not its waiters, even when a waiter comes first (the
 * waiter started first: the look lists threads in the order they began). */
START_TEST(test_stuck_holder_before_waiters)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct sleeper w = { .name = "je-waiter", .body = body_je_lock, .m = &m };
	struct sleeper r = { .name = "je-holder", .body = body_je_read };
	jma_session *s;
	struct jma_holder h;

	pthread_mutex_lock(&m);
	start(&w);
	start(&r);
	s = session_here();
	ck_assert_int_eq(proc_stuck_find(s, &h), 1);
	ck_assert_int_eq(h.tid, r.tid);
	ck_assert_str_eq(h.comm, "je-holder");
	ck_assert_int_lt(h.ms, JMA_STUCK_FUTEX_MS);
	pthread_mutex_unlock(&m);
	stop(&w);
	stop(&r);
	jma_free(s);
}
END_TEST

Suite *suite_stuck(void)
{
	Suite *s = suite_create("stuck");
	TCase *t = tcase_create("own-threads");

	/* Looks wait up to a second; the machine may be loaded. */
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_stuck_asleep_inside_jemalloc);
	tcase_add_test(t, test_stuck_asleep_elsewhere);
	tcase_add_test(t, test_stuck_moving_thread);
	tcase_add_test(t, test_stuck_condition_wait);
	tcase_add_test(t, test_stuck_lock_waiter);
	tcase_add_test(t, test_stuck_holder_before_waiters);
	suite_add_tcase(s, t);
	return s;
}
