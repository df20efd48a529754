/* open.h -- opening a session's process: its identity, its status and its
 * symbols, for every backend over a live process (process/ptrace.c,
 * emulate/live.c) and for tests' fake one. */
#ifndef JMA_PROCESS_OPEN_H
#define JMA_PROCESS_OPEN_H

#include "attach/procfs.h"
#include "core/session.h"

struct jma_syms;

/* How long a look at whether the process is loading code waits
 * (proc_exec_loading). */
#define JMA_LOADING_WAIT_MS	20

/* Give @s the symbols @sy (closed by jma_free), with the options that apply
 * to them. */
void proc_set_syms(jma_session *s, struct jma_syms *sy);

/* jma_open's first half, shared by every backend on a live process: check it
 * can be attached (its status in @st) and find jemalloc in it (s->pid,
 * s->ident, s->exec_mark, s->syms). */
int proc_open_process(jma_session *s, pid_t pid, struct att_status *st);

/* Open @s over the backend @be (the session owns it from now on, also on
 * failure) and the jemalloc copy @je of process @pid (0: none, no maps):
 * for backends that serve no real process (tests/fake_backend.c).  Not
 * exported. */
int proc_open_backend(jma_session *s, pid_t pid, struct jma_backend *be, const struct jma_copy *je);

#endif
