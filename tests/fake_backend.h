/* fake_backend.h -- a third backend (core/backend.h) for unit tests: a jemalloc emulated from a table, no process.
 *
 * mallctl answers from a table of names, with the rules of jemalloc's own
 * ctl.c for the version asked for (READ's size mismatch: EINVAL, *oldlenp
 * set from 5.3 only; READONLY/WRITEONLY: EPERM; prof.active writes before it
 * reads; prof.dump: ENOENT with opt.prof false from 5.3, EFAULT before; names
 * a version lacks: ENOENT).  malloc_stats_print answers through the text
 * callback.  Target memory is a local buffer at a fake address; scratch memory
 * is released by each call and handed out again by the next, as the real
 * engines do: a value placed before a call is gone after it.
 */
#ifndef TESTS_FAKE_BACKEND_H
#define TESTS_FAKE_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/session.h"
#include "process/open.h"
#include "symbols/ranges.h"

/* Where the fake jemalloc's functions and code are. */
#define FAKE_FN_MALLCTL 0x7f5a00101000ULL
#define FAKE_FN_STATS_PRINT 0x7f5a00102000ULL
#define FAKE_CODE_LO 0x7f5a00100000ULL
#define FAKE_CODE_HI 0x7f5a00200000ULL

/* The emulated jemalloc's state, read and set by tests between calls. */
struct fake_je {
	uint32_t version;		/* JMA_JEVERSION; fixed at fake_open */
	bool config_prof, opt_prof, prof_active, background_thread;
	const char *opt_purge;		/* 4.x: "ratio" (the default) or "decay" */
	ssize_t decay_time;		/* arenas.decay_time (4.x), arenas.dirty_decay_ms (5.x) */
	size_t allocated, cactive;	/* stats.allocated, *stats.cactive (< 5.0) */
	uint64_t epoch;			/* bumped by each write of "epoch" */
	/* What the target saw. */
	unsigned ndumps, nresets;
	char dumped[256];		/* the last prof.dump's file name */
	size_t reset_lg_sample;		/* the last prof.reset's value (0: none given) */
	unsigned stderr_prints;		/* malloc_stats_print calls without a callback */
	char stats_opts[64];		/* the last malloc_stats_print's options */
	uint64_t wo;			/* fake.wo: a write-only name no table knows */
	/* The engine. */
	unsigned begins, ends, calls, mallctls;
	char last_name[256];		/* the last mallctl's name */
	int fail_begin;			/* begin fails with it (-errno) when set */
	int fail_call;			/* call fails with it (-errno) when set */
	int fail_end;			/* end fails with it (-errno) when set */
	bool end_note;			/* end succeeds but leaves a message of its own */
};

/* Open @s (from jma_new) over a fake jemalloc of @version (JMA_JEVERSION),
 * its state in *@je (owned by the session).  0 or -errno (message in @s). */
int fake_open(jma_session *s, uint32_t version, struct fake_je **je);
/* The same with jemalloc's code at @code[0..ncode) (sorted; the fake's
 * functions are called at FAKE_FN_* all the same) in process @pid (0: none),
 * whose maps the session reads: for looks at live threads. */
int fake_open_at(jma_session *s, uint32_t version, pid_t pid, const struct jma_range *code,
		 size_t ncode, struct fake_je **je);

#endif
