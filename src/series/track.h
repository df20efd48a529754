/* track.h -- the private side of jma_track, shared by src/series/track*.c.
 *
 *   track.c       sites, snapshots, naming new sites once
 *   track_out.c   the text log, JSON lines, the ranking
 *   track_load.c  reading a saved track or a directory of profiles
 */
#ifndef JMA_TRACK_PRIV_H
#define JMA_TRACK_PRIV_H

#include <stdarg.h>

#include <jemattach/track.h>

struct track_site {
	uint64_t id;		/* hash of the stack's addresses */
	char **frames;		/* "function (file:line) [module]", leaf first, allocator folded */
	size_t nframes;
	char *name;		/* the first frame's function */
	char *caller;		/* the second frame's function; NULL when none */
	char *module;		/* the first frame's module; NULL when unknown */
};

/* One site in one snapshot (un-sampled). */
struct track_point {
	double live_bytes, live_objs;
	double acc_bytes, acc_objs;	/* accumulated (opt.prof_accum); 0 without */
	uint64_t samples;		/* sampled live objects */
	int present;
	/* Derived by track_derive: since the start of profiling (accumulated
	 * counts), or over the track from live growth (estimates). */
	double alloc_bytes, alloc_objs, free_bytes, free_objs;
};

struct track_snap {
	struct jma_track_meta meta;
	uint64_t period;
	int accum;		/* the profile had accumulated counts */
	struct track_point *pts;	/* one per site known then */
	size_t npts;
	size_t new_from;	/* sites [new_from, npts) appeared here */
};

struct jma_track {
	struct jma_track_opts o;
	struct track_site *sites;
	size_t nsites, sites_cap;
	uint32_t *slot;		/* open addressing over sites by id: index + 1, 0 = empty */
	size_t nslot;
	struct track_snap *snaps;
	size_t nsnaps, snaps_cap;
	char err[512];
};

int track_fail(jma_track *t, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The index of the site @id, added (unnamed) when new; -ENOMEM. */
long track_site(jma_track *t, uint64_t id);
/* Open the next snapshot (its points zeroed, one per site known so far). */
struct track_snap *track_snap_new(jma_track *t, const struct jma_track_meta *m);
/* Give snapshot @sn room for every site known now. */
int track_snap_grow(jma_track *t, struct track_snap *sn);
/* Set the frames of site @i (copied); the name comes from the first. */
int track_site_name(jma_track *t, size_t i, const char *const *frames, size_t n,
		    const char *module);
/* The point of site @i in snapshot @sn (zero when it was not there). */
struct track_point track_at(const jma_track *t, size_t sn, size_t i);
/* Fill the alloc/free totals of the last snapshot from its counts and the
 * snapshot before. */
void track_derive(jma_track *t);
/* "1a2b3c4d5e6f7a8b" */
void track_id_str(uint64_t id, char buf[17]);

#endif
