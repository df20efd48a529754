/* jemattach.h -- libjemattach: jemalloc's control API inside another, running process.
 *
 * Include this one header.  The library never prints or exits: it logs
 * through the callback in struct jma_options (jma_heap_symopts, jma_track_opts).
 *
 * Errors, one convention for every call:
 *   - a fallible call returns 0 or a negative errno (never -1, never a
 *     positive errno); mallctl's own errno values pass through negated;
 *   - its message, one line naming what failed (in no program's words: it
 *     names no command-line option), is kept by the object the
 *     call works on, until that object's next failing call:
 *       a session          jma_errmsg(s), jma_errkind(s) (the exit code) and
 *                          jma_errhints(s) (what the caller could change: JMA_HINT_*)
 *       a heap profile     jma_heap_errmsg(h)
 *       a track            jma_track_errmsg(t)
 *   - a call that has no such object yet (it makes one, or reads a file or
 *     buffer into a caller's struct: jma_heap_parse/_load, jma_series_load/
 *     _parse) writes the message into the caller's buffer (msg, msglen),
 *     always NUL-terminated and cut to fit;
 *   - constructors that take no buffer return NULL with errno set (jma_new,
 *     jma_track_new);
 *   - pure helpers (jma_parse_size, jma_metric_parse, ...) return -errno
 *     alone: -EINVAL, -ERANGE, -ENOENT say everything.
 *   - a caller's callback that stops a walk or a print with a non-zero
 *     return has that value returned as it is (jma_threads, jma_stats_print).
 */
#ifndef JEMATTACH_H
#define JEMATTACH_H

#include <jemattach/version.h>
#include <jemattach/session.h>
#include <jemattach/value.h>
#include <jemattach/mallctl.h>
#include <jemattach/arenas.h>
#include <jemattach/stats.h>
#include <jemattach/prof.h>
#include <jemattach/threads.h>
#include <jemattach/heap.h>
#include <jemattach/series.h>
#include <jemattach/track.h>
#include <jemattach/census.h>
#include <jemattach/census_diff.h>
#include <jemattach/sampler.h>

#endif
