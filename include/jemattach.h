/* jemattach.h -- libjemattach: jemalloc's control API inside another, running process.
 *
 * Include this one header.  Conventions: fallible calls return 0 or -errno
 * and keep a message in the session (jma_errmsg); constructors return NULL
 * with errno set; the library never prints or exits -- it logs through the
 * callback in struct jma_options.
 */
#ifndef JEMATTACH_H
#define JEMATTACH_H

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
#include <jemattach/sampler.h>

#endif
