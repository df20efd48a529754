/* jemattach/track.h -- per-allocation-site memory over time, from a series of heap profiles.
 *
 *   jma_track *t = jma_track_new(&(struct jma_track_opts){ .pid = pid });
 *   for (each snapshot) {
 *           jma_track_add(t, buf, len, "snapshot 3", &(struct jma_track_meta){ ... });
 *           jma_track_write_last(t, JMA_TRACK_TEXT, stdout);
 *   }
 *   jma_track_write_ranking(t, 10, stdout);
 *   jma_track_free(t);
 *
 * A site is one stack of the profile, named by a stable short id (a hash of
 * its addresses) and symbolized once, the first time it appears: a track of
 * hours does not name the same addresses again.  Values are un-sampled as
 * jeprof does.  Per snapshot and site, in the meaning of pmem's log:
 *   live        bytes and objects held now
 *   alloc_total allocated since profiling started; alloc_curr since the last
 *               snapshot.  Exact (up to sampling) when the profile carries
 *               accumulated counts (opt.prof_accum); otherwise estimated from
 *               live growth (a lower bound) and marked so.
 *   free_total  alloc_total - live; free_curr since the last snapshot.
 * Works offline (report sites) and needs no jma_session; calls return 0 or
 * -errno with the message in jma_track_errmsg.
 */
#ifndef JEMATTACH_TRACK_H
#define JEMATTACH_TRACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jemattach/session.h>
#include <jemattach/api.h>

JMA_API_BEGIN

typedef struct jma_track jma_track;

struct jma_track_opts {
	pid_t pid;		/* symbolize from this live process; 0: the profile's files */
	const char *fold;	/* extended regex: more allocator wrappers to fold away, as
				 * in jma_heap_report_opts; a bad one fails jma_track_add */
	int no_default_folds;	/* do not fold the wrappers of jma_heap_default_folds */
	int no_demangle;	/* C++ names of sites as mangled (default: demangled) */
	jma_log_fn log;		/* symbolization warnings; NULL: silent */
	void *log_arg;
	const char *what;	/* what a site is, in the ranking's words: "site" (NULL),
				 * "type", "owner", "size" (at most 15 characters) */
};

/* NULL with errno set on failure. */
jma_track *jma_track_new(const struct jma_track_opts *o);
void jma_track_free(jma_track *t);
const char *jma_track_errmsg(const jma_track *t);

/* What the caller knows about a snapshot besides its profile. */
struct jma_track_meta {
	double time;		/* unix time of the dump, seconds */
	uint64_t allocated;	/* stats.allocated then; 0: unknown */
	uint64_t hold_ns;	/* how long the target thread was held for it; 0: unknown */
};

/* Add the heap profile @buf (@len bytes; @name for messages) as the next
 * snapshot.  New sites are symbolized now. */
int jma_track_add(jma_track *t, const char *buf, size_t len, const char *name,
		  const struct jma_track_meta *m) JMA_MUST_CHECK;

/* A row of exact counts (a census's type, owner or size class). */
struct jma_track_count {
	const char *name;	/* names the site; its hash is the site's id */
	double bytes, objs;
};

/* Add @n rows of exact counts as the next snapshot: each row is a site of
 * one frame, @name; the ranking's confidence is "exact" (nothing sampled).
 * A row's name must not repeat in one snapshot. */
int jma_track_add_counts(jma_track *t, const struct jma_track_count *v, size_t n,
			 const struct jma_track_meta *m) JMA_MUST_CHECK;

/* Read a saved track: the JSON lines written with JMA_TRACK_JSONL, or a
 * directory of jeprof.*.heap profiles (lg_prof_interval, prof_gdump; in
 * order of their sequence number, timed by their modification time). */
int jma_track_load(jma_track *t, const char *path) JMA_MUST_CHECK;

size_t jma_track_nsnapshots(const jma_track *t);

enum jma_track_format {
	JMA_TRACK_TEXT,		/* pmem's log: "[N]====" header, then each site and its backtrace */
	JMA_TRACK_JSONL,	/* one JSON record per snapshot */
};
/* "text", "jsonl" -> format; -EINVAL otherwise. */
int jma_track_format_from_name(const char *s);

/* Write the last snapshot added in @fmt; -EIO on a write error. */
int jma_track_write_last(jma_track *t, enum jma_track_format fmt, FILE *f) JMA_MUST_CHECK;

/* One site of the ranking. */
struct jma_track_rank {
	char id[17];		/* the site's short id */
	const char *name;	/* its first frame outside the allocator (lives as long as the track) */
	const char *caller;	/* the frame that called it; NULL when none */
	const char *module;	/* that frame's file; NULL when unknown */
	unsigned grew, intervals;	/* intervals in which its live bytes grew, of all */
	double bytes_per_s, objs_per_s;	/* least-squares slope of live bytes/objects */
	double r2;		/* how well a line fits the live bytes (0..1) */
	double live_first, live_last;	/* live bytes at the first and last snapshot */
	uint64_t samples;	/* sampled live objects at the last snapshot */
	double alloc_total, free_total;	/* over the track: last minus first snapshot */
	int estimated;		/* alloc/free derived from live counts (no opt.prof_accum) */
	int growing;		/* grew in most intervals, steadily: a leak suspect */
	char confidence[32];	/* "high", "medium", "low: N samples"; "exact" for counts */
};

/* Every site, growing ones first (by rate), then by intervals grown; free
 * *out with free(). */
int jma_track_ranking(jma_track *t, struct jma_track_rank **out, size_t *n) JMA_MUST_CHECK;
/* The ranking as text, at most @top sites (0: all). */
int jma_track_write_ranking(jma_track *t, unsigned top, FILE *f) JMA_MUST_CHECK;
/* The live bytes of the @top sites of the ranking over time, as an SVG chart. */
int jma_track_svg(jma_track *t, unsigned top, const char *title, FILE *f) JMA_MUST_CHECK;

JMA_API_END

#endif
