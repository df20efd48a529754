/* check_call.c -- the call engine (attach/) against a live, plain process. */
#include <check.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/call.h"
#include "attach/defer.h"
#include "attach/mem.h"
#include "attach/sink.h"
#include "tutil.h"

static struct tproc p;
static struct att_thread t;

enum engine_case { SIGFRAME, FALLBACK_ASKED, NO_TRAMPOLINE };

static void start(enum engine_case ec)
{
	tproc_start(&p, "callee", NULL);
	att_thread_init(&t, p.pid, p.pid);
	t.no_sigframe = ec == FALLBACK_ASKED;
	/* As the library says after its own search came back empty: the
	 * callee's libc has a trampoline, so a second search would find it and
	 * choose the sigframe engine. */
	t.restorer_none = ec == NO_TRAMPOLINE;
	ck_assert_int_eq(att_thread_seize(&t, 5000), 0);
	ck_assert_int_eq(att_thread_hijack(&t), 0);
	ck_assert_int_eq(t.engine, ec == SIGFRAME ? ATT_ENGINE_SIGFRAME : ATT_ENGINE_SENTINEL);
	if (ec == NO_TRAMPOLINE)
		ck_assert_msg(strstr(t.engine_why, "no rt_sigreturn trampoline"), "why: %s",
			      t.engine_why);
}

static void setup(void)
{
	start(SIGFRAME);
}

static void setup_fallback(void)
{
	start(FALLBACK_ASKED);
}

static void setup_no_trampoline(void)
{
	start(NO_TRAMPOLINE);
}

/* The thread's signal mask as /proc shows it. */
static uint64_t sigblk(pid_t pid)
{
	char path[64], line[256];
	uint64_t v = ~0ULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigBlk:", 7))
			v = strtoull(line + 7, NULL, 16);
	fclose(f);
	return v;
}

/* The thread's mask once it is @mask, or what it is after @min_us plus up to
 * 10 s more: the restore runs in the target on its own time, which a loaded
 * machine can delay well past the usual fraction of a second. */
static uint64_t sigblk_settled(pid_t pid, useconds_t min_us, uint64_t mask)
{
	uint64_t v;

	usleep(min_us);
	for (int i = 0; (v = sigblk(pid)) != mask && i < 1000; i++)
		usleep(10000);
	return v;
}

static void teardown(void)
{
	att_thread_release(&t);
	tproc_stop(&p);
}

static uint64_t run(const char *fn, const uint64_t *args, unsigned n, int timeout_ms, int *err)
{
	struct att_call c = { .fn = tproc_fn(&p, fn), .nargs = n, .timeout_ms = timeout_ms };
	uint64_t ret = ~0ULL;

	if (n)
		memcpy(c.args, args, n * sizeof(*args));
	*err = att_call(&t, &c, &ret);
	att_scratch_reset(&t);
	return ret;
}

START_TEST(test_call_args_and_return)
{
	uint64_t a[6] = { 1, 2, 3, 4, 5, 6 };
	int err;

	ck_assert_uint_eq(run("add6", a, 6, 5000, &err), 1 + 4 + 9 + 16 + 25 + 36);
	ck_assert_int_eq(err, 0);
	/* The same thread serves several calls in one attachment. */
	a[0] = 100;
	ck_assert_uint_eq(run("add6", a, 6, 5000, &err), 100 + 4 + 9 + 16 + 25 + 36);
	ck_assert_int_eq(err, 0);
}
END_TEST

START_TEST(test_call_stack_alignment)
{
	int err;

	ck_assert_uint_eq(run("check_align", NULL, 0, 5000, &err), 0);
	ck_assert_int_eq(err, 0);
	/* Unaligned scratch use before the call must not change that. */
	ck_assert(att_scratch_push(&t, "abc", 3, 1));
	ck_assert_uint_eq(run("check_align", NULL, 0, 5000, &err), 0);
}
END_TEST

struct cbstate { int calls; char last[64]; };

static int cb(struct att_thread *th, const uint64_t args[ARCH_NARGS], uint64_t *retval, void *arg)
{
	struct cbstate *st = arg;
	char *s;
	int trunc;

	ck_assert_int_eq(att_mem_read_str(th->pid, args[1], 64, &s, &trunc), 0);
	snprintf(st->last, sizeof(st->last), "%s", s);
	free(s);
	st->calls++;
	*retval = args[0] * 10;
	return 0;
}

START_TEST(test_call_callbacks)
{
	struct cbstate st = { 0 };
	struct att_call c = { .fn = tproc_fn(&p, "call_cb"), .nargs = 2, .timeout_ms = 5000,
			      .cb = cb, .cb_arg = &st };
	uint64_t ret;

	c.args[0] = ATT_CB_SENTINEL;
	c.args[1] = 5;
	ck_assert_int_eq(att_call(&t, &c, &ret), 0);
	ck_assert_int_eq(st.calls, 5);
	ck_assert_str_eq(st.last, "line 4");
	ck_assert_uint_eq(ret, 10 * (0 + 1 + 2 + 3 + 4));
}
END_TEST

START_TEST(test_call_fault_is_reported_and_target_survives)
{
	int err;

	run("crash", NULL, 0, 5000, &err);
	ck_assert_int_eq(err, -EFAULT);
	ck_assert_msg(strstr(t.err, "SIGSEGV"), "message: %s", t.err);
	ck_assert_int_eq(att_thread_release(&t), 0);
	ck_assert_str_eq(tproc_cmd(&p, "ping"), "pong");
}
END_TEST

START_TEST(test_call_timeout_restores)
{
	int err;

	run("spin", NULL, 0, 200, &err);
	ck_assert_int_eq(err, -ETIMEDOUT);
	ck_assert_int_eq(att_thread_release(&t), 0);
	ck_assert_str_eq(tproc_cmd(&p, "ping"), "pong");
}
END_TEST

START_TEST(test_call_signals_during_call_are_delivered_after)
{
	uint64_t a[1] = { 300 };
	int err;

	/* nap() sleeps 300 ms in the target while SIGUSR1 arrives: blocked
	 * during the call, delivered to the handler after release. */
	if (fork() == 0) {
		usleep(100000);
		kill(p.pid, SIGUSR1);
		_exit(0);
	}
	run("nap", a, 1, 5000, &err);
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(att_thread_release(&t), 0);
	ck_assert_str_eq(tproc_cmd(&p, "sigs"), "1");
}
END_TEST

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
	got_term = sig;
}

static void term_us_in(int ms)
{
	pid_t me = getpid();

	if (fork() == 0) {
		usleep((useconds_t)ms * 1000);
		kill(me, SIGTERM);
		_exit(0);
	}
}

START_TEST(test_call_our_signal_lets_a_working_call_finish)
{
	uint64_t a[6] = { 300 };
	int err;

	signal(SIGTERM, on_term);
	term_us_in(100);
	/* nap() is working (asleep in nanosleep, no lock): it is let finish. */
	ck_assert_uint_eq(run("nap", a, 1, 5000, &err), 0);
	ck_assert_int_eq(err, 0);
	/* No new call starts once a signal is pending. */
	run("add6", a, 6, 5000, &err);
	ck_assert_int_eq(err, -EINTR);
	ck_assert_int_eq(got_term, 0);
	/* It is delivered once the target is restored. */
	ck_assert_int_eq(att_thread_release(&t), 0);
	ck_assert_int_eq(got_term, SIGTERM);
	ck_assert_str_eq(tproc_cmd(&p, "ping"), "pong");
}
END_TEST

START_TEST(test_call_our_signal_does_not_cut_a_lock_wait_short)
{
	int64_t t0 = att_now_ns();
	int err;

	signal(SIGTERM, on_term);
	term_us_in(100);
	/* A futex wait may be made holding another lock: only the timeout ends it. */
	run("lock_wait", NULL, 0, 1000, &err);
	ck_assert_int_eq(err, -ETIMEDOUT);
	ck_assert_int_ge(att_now_ns() - t0, 1000000000LL);
	ck_assert_msg(strstr(t.err, "futex"), "message: %s", t.err);
	ck_assert_int_eq(got_term, 0);
	ck_assert_int_eq(att_thread_release(&t), 0);
	ck_assert_int_eq(got_term, SIGTERM);
	ck_assert_str_eq(tproc_cmd(&p, "ping"), "pong");
}
END_TEST

START_TEST(test_call_timeout_grace_for_a_working_call)
{
	uint64_t a[6] = { 600 };
	struct att_call c = { .fn = tproc_fn(&p, "nap"), .nargs = 1, .timeout_ms = 300,
			      .grace_ms = 2000 };
	uint64_t ret = 1;

	/* Past its timeout but not waiting on a lock: the grace period lets it end. */
	c.args[0] = a[0];
	ck_assert_int_eq(att_call(&t, &c, &ret), 0);
	ck_assert_uint_eq(ret, 0);
	/* A lock wait gets no grace. */
	c.fn = tproc_fn(&p, "lock_wait");
	c.nargs = 0;
	ck_assert_int_eq(att_call(&t, &c, &ret), -ETIMEDOUT);
	ck_assert_msg(strstr(t.err, "futex"), "message: %s", t.err);
}
END_TEST

START_TEST(test_scratch_bounds)
{
	char big[64 * 1024];

	memset(big, 'x', sizeof(big));
	ck_assert_uint_eq(att_scratch_push(&t, big, sizeof(big), 1), 0);
	ck_assert(strstr(t.err, "do not fit"));
	ck_assert(att_scratch_push(&t, big, 1024, 16) % 16 == 0);
}
END_TEST

struct wstate { size_t bytes; int calls; char first[16]; };

static int on_write(struct att_thread *th, const char *buf, size_t len, void *arg)
{
	struct wstate *w = arg;

	(void)th;
	if (!w->calls++)
		snprintf(w->first, sizeof(w->first), "%.*s", (int)len, buf);
	w->bytes += len;
	return 0;
}

START_TEST(test_sigframe_writes_are_taken_not_written)
{
	struct wstate w = { 0 };
	struct att_call c = { .fn = tproc_fn(&p, "write_lines"), .nargs = 1, .timeout_ms = 5000,
			      .on_write = on_write, .write_arg = &w };
	uint64_t ret = 0;

	c.args[0] = 12;
	ck_assert_int_eq(att_call(&t, &c, &ret), 0);
	ck_assert_int_eq(w.calls, 12);
	ck_assert_str_eq(w.first, "line 0\n");
	/* Each write returned its full length to the caller. */
	ck_assert_uint_eq(ret, w.bytes);
	ck_assert_uint_eq(ret, 10 * 7 + 2 * 8);
}
END_TEST

/* The sink's code, and code of the same shape whose system call would act
 * on the callback's arguments (futex, umask, clock_gettime, close), in each
 * architecture's machine code. */
#if defined(__x86_64__)
START_TEST(test_sink_match_harmless_only)
{
	static const unsigned char getpid_code[] = { 0xcc, 0xb8, 0x27, 0, 0, 0, 0x0f, 0x05, 0xc3 };
	static const unsigned char gettid_code[] = { 0xb8, 0xba, 0, 0, 0, 0x0f, 0x05, 0xc3 };
	static const unsigned char harmful[][8] = {
		{ 0xb8, 0xca, 0, 0, 0, 0x0f, 0x05, 0xc3 }, { 0xb8, 0x5f, 0, 0, 0, 0x0f, 0x05, 0xc3 },
		{ 0xb8, 0xe4, 0, 0, 0, 0x0f, 0x05, 0xc3 }, { 0xb8, 0x03, 0, 0, 0, 0x0f, 0x05, 0xc3 },
		{ 0xb8, 0x27, 1, 0, 0, 0x0f, 0x05, 0xc3 }, { 0xb8, 0x27, 0, 0, 0, 0x0f, 0x05, 0xc2 },
	};

	ck_assert_ptr_eq(arch_sink_match(getpid_code, sizeof(getpid_code)), getpid_code + 1);
	ck_assert_ptr_eq(arch_sink_match(gettid_code, sizeof(gettid_code)), gettid_code);
	ck_assert_ptr_null(arch_sink_match(gettid_code, sizeof(gettid_code) - 1));
	for (size_t i = 0; i < sizeof(harmful) / sizeof(*harmful); i++)
		ck_assert_ptr_null(arch_sink_match(harmful[i], sizeof(harmful[i])));
}
END_TEST
#elif defined(__aarch64__)
START_TEST(test_sink_match_harmless_only)
{
	/* An svc before glibc's getpid (nop; mov x8, #172; svc #0; ret); gettid
	 * behind a landing pad (bti c; mov x8, #178 ...). */
	static const uint32_t getpid_code[] = { 0xd4000001, 0xd503201f, 0xd2801588, 0xd4000001,
						0xd65f03c0 };
	static const uint32_t gettid_code[] = { 0xd503245f, 0xd2801648, 0xd4000001, 0xd65f03c0 };
	/* futex 98, umask 166, clock_gettime 113, close 57; getpid without a
	 * landing pad (mov x0, x1 first); getpid returning through x0 (ret x0). */
	static const uint32_t harmful[][4] = {
		{ 0xd503201f, 0xd2800c48, 0xd4000001, 0xd65f03c0 },
		{ 0xd503201f, 0xd28014c8, 0xd4000001, 0xd65f03c0 },
		{ 0xd503201f, 0xd2800e28, 0xd4000001, 0xd65f03c0 },
		{ 0xd503201f, 0xd2800728, 0xd4000001, 0xd65f03c0 },
		{ 0xaa0103e0, 0xd2801588, 0xd4000001, 0xd65f03c0 },
		{ 0xd503201f, 0xd2801588, 0xd4000001, 0xd65f0000 },
	};
	const unsigned char *g = (const unsigned char *)getpid_code;
	const unsigned char *tid = (const unsigned char *)gettid_code;

	ck_assert_ptr_eq(arch_sink_match(g, sizeof(getpid_code)), g + 4);
	ck_assert_ptr_eq(arch_sink_match(tid, sizeof(gettid_code)), tid);
	ck_assert_ptr_null(arch_sink_match(tid, sizeof(gettid_code) - 1));
	for (size_t i = 0; i < sizeof(harmful) / sizeof(*harmful); i++)
		ck_assert_ptr_null(arch_sink_match((const unsigned char *)harmful[i], sizeof(harmful[i])));
}
END_TEST
#endif

/* Which stops rt_sigreturn could not resume without an EINTR: in
 * restart_syscall, or back on the syscall instruction with a restart set up.
 * The registers are each architecture's own. */
#if defined(__x86_64__)
/* x86_64 numbers: poll 7, restart_syscall 219, -ERESTART_RESTARTBLOCK. */
START_TEST(test_sigframe_refuses_restart_syscall)
{
	static const struct { long orig, rax; int refused; } cases[] = {
		{ 219, -516, 1 }, { 7, 219, 1 }, { 219, 219, 1 },
		{ 7, -516, 0 }, { 219, 0, 0 }, { -1, 219, 0 }, { 7, -4, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct arch_gpregs r;

		memset(&r, 0, sizeof(r));
		r.r.orig_rax = (unsigned long)cases[i].orig;
		r.r.rax = (unsigned long)cases[i].rax;
		ck_assert_msg(arch_sigframe_refuses(&r) == cases[i].refused, "case %zu", i);
	}
}
END_TEST
#elif defined(__aarch64__)
/* arm64: the kernel sets a restart up before any stop (x8 = restart_syscall
 * 128, the pc on the svc); x0 does not matter.  Other calls: ppoll 73,
 * clock_nanosleep 115. */
START_TEST(test_sigframe_refuses_restart_syscall)
{
	static const struct { long x8, x0; int refused; } cases[] = {
		{ 128, -516, 1 }, { 128, 0, 1 }, { 73, -516, 0 }, { 115, 0, 0 }, { 73, 128, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct arch_gpregs r;

		memset(&r, 0, sizeof(r));
		r.r.regs[8] = (unsigned long)cases[i].x8;
		r.r.regs[0] = (unsigned long)cases[i].x0;
		ck_assert_msg(arch_sigframe_refuses(&r) == cases[i].refused, "case %zu", i);
	}
}
END_TEST
#endif

/* write_cb is the target's getpid: each call is taken at its system call,
 * and the function goes on as if it had written. */
START_TEST(test_sigframe_sink_takes_callbacks)
{
	struct cbstate st = { 0 };
	struct att_call c = { .fn = tproc_fn(&p, "write_cb_lines"), .nargs = 4, .timeout_ms = 5000,
			      .cb = cb, .cb_arg = &st };
	uint64_t ret = 0, sink;

	ck_assert_int_eq(att_sink_find(p.pid, NULL, 0, &sink), 0);
	ck_assert_int_eq(att_sink_check(p.pid, sink), 0);
	ck_assert_int_eq(att_sink_check(p.pid, sink + 1), -ENOENT);
	c.sink = sink;
	c.args[0] = sink;
	c.args[1] = ATT_SINK_COOKIE;
	c.args[2] = 5;
	ck_assert_int_eq(att_call(&t, &c, &ret), 0);
	ck_assert_uint_eq(ret, 5);
	ck_assert_int_eq(st.calls, 5);
	ck_assert_str_eq(st.last, "line 4");
	att_thread_release(&t);
	ck_assert_str_eq(tproc_cmd(&p, "cbdone"), "5");
}
END_TEST

/* Known FP/vector state for the thread, seen again after a call that
 * clobbers it.  x86_64 (XSAVE layout): the AVX upper halves (a thread asleep
 * in libc has them zeroed, and a restore of only the legacy area would go
 * unseen), compared with the x87/SSE area.  arm64 (NT_PRFPREG first): v0-v31,
 * compared with fpsr and fpcr. */
#if defined(__x86_64__)
/* The AVX-512 opmask registers k0-k7 (XSAVE component 5), where this CPU
 * has them: their place in the XSAVE area, 0 if none. */
static unsigned opmask_off(const struct arch_extregs *x)
{
	unsigned size, off, ecx, edx;

	if (!__get_cpuid_count(0xd, 5, &size, &off, &ecx, &edx) || size != 64 || off + 64 > x->len)
		return 0;
	return off;
}

static void ext_mark(struct arch_extregs *x)
{
	unsigned k = opmask_off(x);

	memset(x->buf + 576, 0x5a, 256);
	x->buf[512] |= 0x4;	/* XSTATE_BV: AVX state present */
	if (k) {
		memset(x->buf + k, 0xa5, 64);
		x->buf[512] |= 0x20;	/* ... and the opmask registers */
	}
}

static int ext_marked(const struct arch_extregs *x)
{
	return x->buf[600] == 0x5a;
}

static int ext_same(const struct arch_extregs *a, const struct arch_extregs *b)
{
	unsigned k = opmask_off(a);

	/* x87/SSE area (control words, st0-7, xmm0-15), the AVX upper halves
	 * and k0-k7: a frame that rt_sigreturn reads as FXSAVE only (its size
	 * past the thread's: AMX CPUs) loses the last two. */
	return !memcmp(a->buf, b->buf, 416) && !memcmp(a->buf + 576, b->buf + 576, 256) &&
	       (!k || !memcmp(a->buf + k, b->buf + k, 64));
}
#elif defined(__aarch64__)
static void ext_mark(struct arch_extregs *x)
{
	memset(x->buf, 0x5a, 32 * 16);
}

static int ext_marked(const struct arch_extregs *x)
{
	return x->buf[24] == 0x5a;
}

static int ext_same(const struct arch_extregs *a, const struct arch_extregs *b)
{
	return !memcmp(a->buf, b->buf, 32 * 16 + 8);	/* v0-v31, fpsr, fpcr */
}
#endif

START_TEST(test_sigframe_restores_fp_state_and_mask)
{
	struct arch_extregs *before = malloc(sizeof(*before)), *after = malloc(sizeof(*after));
	uint64_t mask = sigblk(p.pid);
	int err;

	ck_assert_int_eq(att_thread_release(&t), 0);
	att_thread_init(&t, p.pid, p.pid);
	ck_assert_int_eq(att_thread_seize(&t, 5000), 0);
	ck_assert_int_eq(arch_extregs_get(t.tid, before), 0);
	ext_mark(before);
	ck_assert_int_eq(arch_extregs_set(t.tid, before), 0);
	ck_assert_int_eq(att_thread_hijack(&t), 0);
	memcpy(before, t.saved_ext, sizeof(*before));
	ck_assert(ext_marked(before));
	ck_assert_uint_eq(run("clobber_vec", NULL, 0, 5000, &err), 7);
	ck_assert_int_eq(err, 0);
	/* rt_sigreturn put it back once let run, before any restore of ours. */
	ck_assert(t.sigret_pending);
	ck_assert_int_eq(att_call_settle(&t), 0);
	ck_assert(!t.sigret_pending);
	ck_assert_int_eq(arch_extregs_get(t.tid, after), 0);
	ck_assert_uint_eq(after->len, before->len);
	ck_assert(ext_same(after, before));
	ck_assert_int_eq(att_thread_release(&t), 0);
	ck_assert_uint_eq(sigblk(p.pid), mask);
	ck_assert_str_eq(tproc_cmd(&p, "ping"), "pong");
	free(before);
	free(after);
}
END_TEST

START_TEST(test_sigframe_timeout_leaves_the_call_to_finish)
{
	uint64_t a[6] = { 600 };
	uint64_t mask = sigblk(p.pid);
	int err;

	run("nap", a, 1, 200, &err);
	ck_assert_int_eq(err, -ETIMEDOUT);
	ck_assert(t.left_running);
	ck_assert_msg(strstr(t.err, "left to finish on its own"), "message: %s", t.err);
	ck_assert_int_eq(att_thread_release(&t), 0);
	/* Still in our call, every signal blocked, until it returns... */
	ck_assert_uint_eq(sigblk(p.pid), ~0ULL & ~((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1))));
	/* ... and then it is itself again. */
	ck_assert_uint_eq(sigblk_settled(p.pid, 700000, mask), mask);
	ck_assert_str_eq(tproc_cmd(&p, "ping"), "pong");
}
END_TEST

/* Our death at any instant of a call: a child of ours is the tracer. */
/* Kill @child, our tracer stand-in, and after @settle_us expect the thread
 * to have its signal mask @mask back, to answer, and to be borrowable again. */
static void kill_tracer_expect_restored(pid_t child, useconds_t settle_us, uint64_t mask)
{
	int st;

	kill(child, SIGKILL);
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert(WIFSIGNALED(st));
	ck_assert_uint_eq(sigblk_settled(p.pid, settle_us, mask), mask);
	ck_assert_str_eq(tproc_cmd(&p, "ping"), "pong");
	att_thread_init(&t, p.pid, p.pid);
	ck_assert_int_eq(att_thread_seize(&t, 5000), 0);
	ck_assert_int_eq(att_thread_hijack(&t), 0);
}

START_TEST(test_sigframe_tracer_killed_mid_call)
{
	uint64_t mask = sigblk(p.pid);
	pid_t child;

	att_thread_release(&t);
	child = fork();
	if (child == 0) {
		uint64_t a[6] = { 300 }, ret;
		struct att_call c = { .fn = tproc_fn(&p, "nap"), .nargs = 1, .timeout_ms = 5000 };

		att_thread_init(&t, p.pid, p.pid);
		if (att_thread_seize(&t, 5000) || att_thread_hijack(&t))
			_exit(1);
		c.args[0] = a[0];
		att_call(&t, &c, &ret);
		_exit(2);
	}
	usleep(150000);
	kill_tracer_expect_restored(child, 400000, mask);
}
END_TEST

/* Our death while the thread waits at its frame's rt_sigreturn after a
 * finished call (where the last call of a command leaves it for the
 * release): it goes on and restores itself. */
START_TEST(test_sigframe_tracer_killed_after_a_call)
{
	uint64_t mask = sigblk(p.pid);
	int done[2];
	char c1;
	pid_t child;

	att_thread_release(&t);
	ck_assert_int_eq(pipe(done), 0);
	child = fork();
	if (child == 0) {
		uint64_t ret = 0;
		struct att_call c = { .fn = tproc_fn(&p, "add6"), .nargs = 6, .timeout_ms = 5000,
				      .args = { 1, 2, 3, 4, 5, 6 } };

		att_thread_init(&t, p.pid, p.pid);
		if (att_thread_seize(&t, 5000) || att_thread_hijack(&t) || att_call(&t, &c, &ret) ||
		    ret != 91 || !t.sigret_pending || write(done[1], "k", 1) != 1)
			_exit(1);
		pause();
		_exit(2);
	}
	close(done[1]);
	ck_assert_int_eq(read(done[0], &c1, 1), 1);
	close(done[0]);
	kill_tracer_expect_restored(child, 0, mask);
}
END_TEST

/* Killed after some callbacks: the rest go to getpid and are dropped, the
 * function returns and the thread restores itself. */
START_TEST(test_sigframe_sink_tracer_killed_mid_call)
{
	uint64_t mask = sigblk(p.pid), sink;
	pid_t child;

	ck_assert_int_eq(att_sink_find(p.pid, NULL, 0, &sink), 0);
	att_thread_release(&t);
	child = fork();
	if (child == 0) {
		struct cbstate st = { 0 };
		struct att_call c = { .fn = tproc_fn(&p, "write_cb_lines"), .nargs = 4,
				      .timeout_ms = 5000, .cb = cb, .cb_arg = &st, .sink = sink,
				      .args = { sink, ATT_SINK_COOKIE, 300, 1 } };
		uint64_t ret;

		att_thread_init(&t, p.pid, p.pid);
		if (att_thread_seize(&t, 5000) || att_thread_hijack(&t))
			_exit(1);
		att_call(&t, &c, &ret);
		_exit(2);
	}
	usleep(150000);
	kill_tracer_expect_restored(child, 600000, mask);
	att_thread_release(&t);
	ck_assert_str_eq(tproc_cmd(&p, "cbdone"), "300");
}
END_TEST

Suite *suite_call(void)
{
	Suite *s = suite_create("call");
	TCase *tc = tcase_create("live");
	TCase *fb = tcase_create("fallback");
	TCase *none = tcase_create("no trampoline");

	/* Both engines. */
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_call_args_and_return);
	tcase_add_test(tc, test_call_stack_alignment);
	tcase_add_test(tc, test_call_fault_is_reported_and_target_survives);
	tcase_add_test(tc, test_call_signals_during_call_are_delivered_after);
	tcase_add_test(tc, test_scratch_bounds);
	tcase_add_test(tc, test_sigframe_writes_are_taken_not_written);
	tcase_add_test(tc, test_sigframe_restores_fp_state_and_mask);
	tcase_add_test(tc, test_sigframe_timeout_leaves_the_call_to_finish);
	tcase_add_test(tc, test_sigframe_tracer_killed_after_a_call);
	tcase_add_test(tc, test_sigframe_tracer_killed_mid_call);
	tcase_add_test(tc, test_sink_match_harmless_only);
	tcase_add_test(tc, test_sigframe_refuses_restart_syscall);
	tcase_add_test(tc, test_sigframe_sink_takes_callbacks);
	tcase_add_test(tc, test_sigframe_sink_tracer_killed_mid_call);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(fb, setup_fallback, teardown);
	tcase_set_timeout(fb, 60);
	tcase_add_test(fb, test_call_args_and_return);
	tcase_add_test(fb, test_call_stack_alignment);
	tcase_add_test(fb, test_call_callbacks);
	tcase_add_test(fb, test_call_fault_is_reported_and_target_survives);
	tcase_add_test(fb, test_call_timeout_restores);
	tcase_add_test(fb, test_call_signals_during_call_are_delivered_after);
	tcase_add_test(fb, test_call_our_signal_lets_a_working_call_finish);
	tcase_add_test(fb, test_call_our_signal_does_not_cut_a_lock_wait_short);
	tcase_add_test(fb, test_call_timeout_grace_for_a_working_call);
	suite_add_tcase(s, fb);
	/* A process without a trampoline: the call still works, and the stopped
	 * thread does not wait for a search the caller already made. */
	tcase_add_checked_fixture(none, setup_no_trampoline, teardown);
	tcase_set_timeout(none, 60);
	tcase_add_test(none, test_call_args_and_return);
	tcase_add_test(none, test_call_callbacks);
	suite_add_tcase(s, none);
	return s;
}
