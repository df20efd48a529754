/* jemattach/census_diff.h -- what grew: census snapshots, their difference, and reports of both.
 *
 *   jma_census_save(c, &meta, JMA_SNAP_ADDRESSES, write, arg);   a snapshot file
 *   jma_census_load("base.snap", &base, &bmeta, msg, sizeof(msg));
 *   jma_census_diff(base, c, &d);    added and removed per size, type, owner; blocks born
 *   jma_census_diff_report(d, &ro, write, arg);      JSON, or pprof (types, owners as stacks)
 *
 * A snapshot holds a census's tables (by size, by type, what each root and
 * each listed holder retains) and, with JMA_SNAP_ADDRESSES, every block's
 * address, size, type and owner: enough to name the blocks born since (their
 * addresses were not there before) and whom they belong to.  The format is
 * versioned ("JMACENS" and a version byte, then a gzip stream of varints and
 * length-counted strings) and read as hostile input: every count, index,
 * string and address is checked, the inflated size is bounded, and a
 * snapshot that does not hold together is refused with a message naming the
 * offset.  Works offline; needs no session.
 */
#ifndef JEMATTACH_CENSUS_DIFF_H
#define JEMATTACH_CENSUS_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jemattach/census.h>
#include <jemattach/stats.h>	/* jma_write_fn */
#include <jemattach/api.h>

JMA_API_BEGIN

/* What is known of a census besides its tables. */
struct jma_census_meta {
	pid_t pid;		/* 0: unknown (a core) */
	uint64_t exec_mark;	/* jma_exec_mark then; 0: unknown.  Blocks of another
				 * run of a program are not comparable by address */
	double time;		/* unix time of the census, s; 0: unknown */
	unsigned flags;		/* the JMA_CENSUS_* it ran with */
};

#define JMA_SNAP_ADDRESSES	0x1	/* every block of c->blocks (needs JMA_CENSUS_LIST) */
#define JMA_SNAP_MAX_BYTES	(1024ULL * 1024 * 1024)	/* a snapshot file, at most */

/* Write @c as a snapshot through @write; -EINVAL (JMA_SNAP_ADDRESSES
 * without a list), or what @write returned. */
int jma_census_save(const struct jma_census *c, const struct jma_census_meta *m, unsigned flags,
		    jma_write_fn write, void *arg) JMA_MUST_CHECK;
/* Read a snapshot from @buf (@len bytes) into a census (free it with
 * jma_census_free) and @m; -EINVAL (not a snapshot, or malformed: why in
 * @msg), -ENOTSUP (another format version), -E2BIG, -ENOMEM. */
int jma_census_parse(const void *buf, size_t len, struct jma_census **out, struct jma_census_meta *m,
		     char *msg, size_t msglen) JMA_MUST_CHECK;
/* The same from the file at @path: a regular file of at most
 * JMA_SNAP_MAX_BYTES (a FIFO or device is refused unread). */
int jma_census_load(const char *path, struct jma_census **out, struct jma_census_meta *m, char *msg,
		    size_t msglen) JMA_MUST_CHECK;

/* One row of a difference: a size class, a type, a root or a holder. */
struct jma_census_change {
	const char *name;	/* type, root, holder path or owner; NULL: a size row, or
				 * untyped blocks (of @size when not 0) */
	uint64_t size;
	struct jma_census_count base, now;
};

struct jma_census_diff {
	struct jma_census_count base, now;	/* live blocks */
	/* Rows present in either, the largest growth in bytes first, then the
	 * largest shrink last. */
	struct jma_census_change *sizes, *types, *roots, *holders;
	size_t nsizes, ntypes, nroots, nholders;
	/* Both have addresses (JMA_SNAP_ADDRESSES, or a live census with a
	 * list): blocks born since the base (an address not live then, or live
	 * with another size) and those that died, by type and by owner (whom
	 * they belong to now; then). */
	int blocks;
	struct jma_census_count born, died;
	struct jma_census_change *born_types, *born_owners, *died_types, *died_owners;
	size_t nborn_types, nborn_owners, ndied_types, ndied_owners;
	uint32_t *born_list, *died_list;	/* the blocks: their numbers in now's, base's list
						 * (jma_census_cursor.n), ascending */
	char warn[256];		/* what makes the comparison doubtful, "" if nothing */
};

/* The difference @now - @base; names point into both censuses, which must
 * outlive it.  @bm, @nm (may be NULL): their metadata, for the warnings. */
int jma_census_diff(const struct jma_census *base, const struct jma_census_meta *bm,
		    const struct jma_census *now, const struct jma_census_meta *nm,
		    struct jma_census_diff **out) JMA_MUST_CHECK;
void jma_census_diff_free(struct jma_census_diff *d);

/* The name of @c's owner @o (census.h): a root, a holder's path,
 * "(several roots)" or "(no root)". */
const char *jma_census_owner_name(const struct jma_census *c, uint32_t o);

/* A census's rows by one grouping, as its reports name them. */
enum jma_census_by {
	JMA_CENSUS_BY_SIZE,	/* size classes */
	JMA_CENSUS_BY_TYPE,	/* types; untyped blocks by usable size */
	JMA_CENSUS_BY_OWNER,	/* the top of the dominator tree (roots, shared blocks), then
				 * the holders it does not list (what each retains) */
};

struct jma_census_row {
	const char *name;	/* a type, a root or a holder's path (into the census);
				 * NULL: a size class, or untyped blocks */
	uint64_t size;		/* the size class; untyped blocks of this usable size (0: all) */
	int untyped;
	struct jma_census_count k;
};

/* @c's rows grouped @by into *@out (free() it); names point into @c. */
int jma_census_rows(const struct jma_census *c, enum jma_census_by by, struct jma_census_row **out,
		    size_t *n) JMA_MUST_CHECK;
/* "shop::Order", "(no vtable) 48 bytes", "(no vtable)", "size class 48": @r's
 * name as every report gives it (in @buf when made up). */
const char *jma_census_row_label(const struct jma_census_row *r, char *buf, size_t len);

enum jma_census_format {
	JMA_CENSUS_JSON,	/* as `census --json` (a diff: its own document) */
	JMA_CENSUS_PPROF,	/* gzip'd profile.proto: inuse_objects, inuse_space; a
				 * sample per type (untyped blocks by size, or sizes when
				 * there are no types), its owner as the caller */
};

struct jma_census_report_opts {
	enum jma_census_format format;
	unsigned top;		/* JSON: rows of roots, holders and changes (0: all) */
	const struct jma_census_meta *meta;	/* JSON: pid, time (NULL: left out) */
	int have_allocated;	/* JSON: stats.allocated read after the census */
	uint64_t allocated;
	int leaks;		/* JSON: the leak classes and examples */
};

/* @c in @o->format through @write.  With @base (pprof only): the
 * difference, @c minus @base, per the rows both can tell apart. */
int jma_census_report(const struct jma_census *c, const struct jma_census *base,
		      const struct jma_census_report_opts *o, jma_write_fn write, void *arg)
	JMA_MUST_CHECK;
/* The difference as JSON (pprof: jma_census_report with a base). */
int jma_census_diff_json(const struct jma_census_diff *d, const struct jma_census_report_opts *o,
			 jma_write_fn write, void *arg) JMA_MUST_CHECK;

JMA_API_END

#endif
