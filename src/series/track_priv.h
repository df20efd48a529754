/* track_priv.h -- the private side of jma_track, shared by src/series/track*.c.
 *
 *   track_base.c  its error, the index maps, finding and naming sites
 *   track.c       snapshots and their running statistics
 *   track_sym.c   naming new sites, each address symbolized once
 *   track_out.c   the text log, JSON lines, the ranking, the chart
 *   track_load.c  reading a saved track or a directory of profiles
 *
 * Memory does not grow with the length of a track: each site keeps this
 * snapshot and the one before, the sums of its least-squares fit, and a
 * chart history of at most TRACK_HIST points (halved, every other point
 * kept, when full).
 */
#ifndef JMA_TRACK_PRIV_H
#define JMA_TRACK_PRIV_H

#include <stdarg.h>

#include <jemattach/track.h>

#define TRACK_HIST 256

/* One site in one snapshot (un-sampled). */
struct track_point {
	double live_bytes, live_objs;
	double acc_bytes, acc_objs;	/* accumulated (opt.prof_accum); 0 without */
	uint64_t samples;		/* sampled live objects */
	int present;
	/* Set by track_end: since the start of profiling (accumulated counts),
	 * or over the track from live growth (estimates). */
	double alloc_bytes, alloc_objs, free_bytes, free_objs;
};

struct track_site {
	uint64_t id;		/* hash of the stack's addresses */
	char **frames;		/* "function (file:line) [module]", leaf first, allocator folded */
	size_t nframes;
	char *name;		/* the first frame's function */
	char *caller;		/* the second frame's function; NULL when none */
	char *module;		/* the first frame's module; NULL when unknown */
	size_t first;		/* the snapshot it appeared in */
	struct track_point cur, prev, at0;	/* this snapshot, the one before, the first */
	double sy, sxy, syy, oy, oxy;	/* sums over snapshots of live bytes (y), objects (o) */
	unsigned grew;		/* intervals in which live bytes grew */
	float *hist;		/* live bytes at every t->hstride-th snapshot */
};

/* uint64 -> index, open addressing. */
struct track_map {
	uint64_t *key;
	uint32_t *val;		/* index + 1; 0 = empty */
	size_t n, nslot;
};
/* The index stored for @key, or -1. */
long track_map_get(const struct track_map *m, uint64_t key);
/* Store @key -> @idx (@key not there yet); -ENOMEM. */
int track_map_put(struct track_map *m, uint64_t key, uint32_t idx);
void track_map_free(struct track_map *m);

/* A symbolized address: its frames (innermost first) in jma_track.afr. */
struct track_addr {
	uint32_t frame, nframe;
	int32_t module;		/* into jma_track.mods; -1: none */
	int alloc;		/* allocator code (or --fold): folded away with what is under it */
};

struct jma_track {
	struct jma_track_opts o;
	struct track_site *sites;
	size_t nsites, sites_cap;
	struct track_map site_ix;	/* site id -> sites[] */
	struct track_addr *addrs;
	size_t naddrs, addrs_cap;
	struct track_map addr_ix;	/* address -> addrs[] */
	char **afr;			/* "function (file:line) [module]" */
	size_t nafr, afr_cap;
	char **mods;			/* module paths */
	size_t nmods;
	size_t nsnaps;		/* counting the one open between track_begin and track_end */
	struct jma_track_meta meta0, meta;	/* the first and the last snapshot */
	uint64_t period;	/* of the last snapshot */
	int accum;		/* the last profile had accumulated counts */
	double n, sx, sxx;	/* over snapshots of x = time since the first */
	int exact;		/* snapshots of exact counts (jma_track_add_counts) */
	char what[16];		/* what a site is: "site", "type", ... */
	size_t hstride, hlen;	/* chart history: one point per hstride snapshots */
	char err[512];
};

int track_fail(jma_track *t, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Open the next snapshot: every site's point moves to prev. */
void track_begin(jma_track *t, const struct jma_track_meta *m, uint64_t period, int accum);
/* The index of the site @id, added (unnamed) when new; -ENOMEM. */
long track_site(jma_track *t, uint64_t id);
/* Add @p's counts to site @i's point in the open snapshot. */
void track_add_point(jma_track *t, size_t i, const struct track_point *p);
/* Close the snapshot: derive alloc/free, update the fit and the history. */
void track_end(jma_track *t);
/* Name sites site[k] from the stacks which[k] of @h, k < @n, symbolizing
 * only addresses not seen before; the profile @buf (@len bytes) gives the
 * mappings. */
struct jma_heap;
int track_name_sites(jma_track *t, const struct jma_heap *h, const char *buf, size_t len,
		     const size_t *which, const size_t *site, size_t n);
void track_sym_free(jma_track *t);
/* Set the frames of site @i (copied); the name comes from the first. */
int track_site_name(jma_track *t, size_t i, const char *const *frames, size_t n,
		    const char *module);
/* "1a2b3c4d5e6f7a8b" */
void track_id_str(uint64_t id, char buf[17]);

#endif
