/* census_grow.c -- what grew: census --save, --base, --format pprof, and --every (a series).
 *
 * The library makes the snapshot, the difference and the pprof profile
 * (include/jemattach/census_diff.h) and ranks a series as prof track ranks
 * sites (jma_track_add_counts); this file chooses, checks and prints.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "census_grow.h"
#include "core/clock.h"

int census_grow_opt(struct cli *c, int opt, const char *arg, struct census_grow *g)
{
	static const char *const formats[] = { "text", "json", "pprof", "jsonl" };
	long long n;
	int rc;

	switch (opt) {
	case 0x100: g->save = arg; break;
	case 0x101: g->addresses = 1; break;
	case 0x102: g->base_path = arg; break;
	case 0x103: g->born = arg; break;
	case 'o': g->out = arg; break;
	case 0x104: g->svg = arg; break;
	case 0x105:
		for (g->format = 0; g->format < 4 && strcmp(arg, formats[g->format]); g->format++)
			;
		if (g->format == 4)
			return cli_usage(c, "census", "invalid --format \"%s\": text, json, pprof or jsonl "
					 "(a series)", arg);
		break;
	case 0x106:
		if (cli_parse_num(arg, 0.05, 86400, &g->every))
			return cli_usage(c, "census", "invalid --every \"%s\": seconds, 0.05 to 86400", arg);
		break;
	case 'n':
		if ((rc = cli_arg_int(c, "census", "-n", arg, 1, LLONG_MAX, &n)))
			return rc;
		g->count = (unsigned long)n;
		break;
	default:
		return cli_usage(c, "census", "invalid option");
	}
	return EXIT_OK;
}

/* The combinations that make no sense, refused before anything is read. */
static int check(struct cli *c, const struct census_grow *g)
{
	if (g->addresses && !g->save)
		return cli_usage(c, "census", "--addresses goes with --save FILE");
	if (g->born && !g->base_path)
		return cli_usage(c, "census", "--born FILE lists the blocks born since --base FILE");
	if (g->every) {
		if (g->save || g->base_path || g->format == CF_JSON || g->format == CF_PPROF)
			return cli_usage(c, "census", "--every makes a series: --format text or jsonl, "
					 "no --save, --base or --blocks");
		if (!c->pid)
			return cli_usage(c, "census", "--every needs a live process (a core does not change)");
		return EXIT_OK;
	}
	if (g->count || g->svg)
		return cli_usage(c, "census", "%s goes with --every SEC", g->count ? "-n" : "--svg");
	if (g->format == CF_JSONL)
		return cli_usage(c, "census", "--format jsonl is a series' (--every SEC)");
	if (g->out && g->format != CF_PPROF && !g->base_path)
		return cli_usage(c, "census", "-o FILE takes a series, a difference (--base) or "
				 "--format pprof; a census's own table goes to standard output");
	return EXIT_OK;
}

int census_grow_prepare(struct cli *c, struct census_grow *g, const char *by, unsigned *flags)
{
	char msg[512];
	int rc = check(c, g);

	if (rc)
		return rc;
	if (g->every) {
		*flags |= !strcmp(by, "type") ? JMA_CENSUS_TYPES : !strcmp(by, "root") ?
			  JMA_CENSUS_ROOTS : 0;
		return EXIT_OK;
	}
	/* A snapshot is for comparing later: by type too (a word per block). */
	if (g->save)
		*flags |= JMA_CENSUS_TYPES | (g->addresses ? JMA_CENSUS_LIST : 0);
	/* Types as the leaves, owners above them: each block's owner, kept (a list). */
	if (g->format == CF_PPROF && !strcmp(by, "root"))
		*flags |= JMA_CENSUS_TYPES | JMA_CENSUS_LIST;
	if (!g->base_path)
		return EXIT_OK;
	/* The base is input like a heap profile: bounded, checked (snapshot.c). */
	if (jma_census_load(g->base_path, &g->base, &g->bmeta, msg, sizeof(msg)))
		return cli_error(EXIT_USAGE, "census: --base %s", cli_esc(msg));
	/* What the base can be compared on: its types and owners, and with its
	 * addresses the blocks born since. */
	*flags |= g->bmeta.flags & (JMA_CENSUS_TYPES | JMA_CENSUS_ROOTS);
	if (g->base->blocks)
		*flags |= JMA_CENSUS_LIST;
	return EXIT_OK;
}

void census_grow_free(struct census_grow *g)
{
	jma_census_free(g->base);
	g->base = NULL;
}

/* --- output ------------------------------------------------------------------- */

/* Open -o (or stdout) for a report. */
static int out_open(const struct census_grow *g, struct cli_out *o, bool atomic)
{
	int err;

	o->f = stdout;
	o->dirfd = -1;
	if (!g->out || !strcmp(g->out, "-"))
		return EXIT_OK;
	if ((err = cli_out_open(g->out, atomic, o)))
		return cli_error(EXIT_USAGE, "census: cannot create %s: %s", cli_esc(g->out),
				 cli_out_strerror(err));
	return EXIT_OK;
}

static int out_close(const struct census_grow *g, struct cli_out *o, int err)
{
	if (o->f == stdout)
		err = fflush(stdout) || ferror(stdout) ? (err ? err : -EIO) : err;
	else
		err = cli_out_close(o, !err) ?: err;
	if (err)
		return cli_error(EXIT_TARGET, "census: writing %s: %s", g->out ? cli_esc(g->out) :
				 "the output", strerror(-err));
	return EXIT_OK;
}

static int save(const struct census_grow *g, const struct jma_census *r,
		const struct jma_census_meta *m)
{
	struct cli_out o;
	int err = cli_out_open(g->save, true, &o);

	if (err)
		return cli_error(EXIT_USAGE, "census: --save %s: %s", cli_esc(g->save),
				 cli_out_strerror(err));
	err = jma_census_save(r, m, g->addresses ? JMA_SNAP_ADDRESSES : 0, cli_write_file, o.f);
	err = cli_out_close(&o, !err) ?: err;
	if (err)
		return cli_error(EXIT_TARGET, "census: writing %s: %s", cli_esc(g->save), strerror(-err));
	return EXIT_OK;
}

/* A row's delta, as "+12" or "-3". */
static long long delta(uint64_t now, uint64_t base)
{
	return (long long)(now - base);
}

/* One table of a difference: the rows that changed, at most @top. */
static void text_changes(FILE *f, const char *title, const char *col,
			 const struct jma_census_change *v, size_t n, int untyped, unsigned top)
{
	size_t shown = 0, changed = 0;
	char buf[64];

	for (size_t i = 0; i < n; i++)
		changed += v[i].now.bytes != v[i].base.bytes || v[i].now.blocks != v[i].base.blocks;
	fprintf(f, "\n%s (%zu of %zu rows changed):\n%12s %14s %14s %14s  %s\n", title, changed, n,
		"BLOCKS", "BYTES", "BASE_BYTES", "NOW_BYTES", col);
	for (size_t i = 0; i < n && (!top || shown < top); i++) {
		const struct jma_census_change *r = &v[i];
		struct jma_census_row row = { .name = r->name, .size = r->size, .untyped = untyped };

		if (r->now.bytes == r->base.bytes && r->now.blocks == r->base.blocks)
			continue;
		fprintf(f, "%+12lld %+14lld %14llu %14llu  %s\n", delta(r->now.blocks, r->base.blocks),
			delta(r->now.bytes, r->base.bytes), (unsigned long long)r->base.bytes,
			(unsigned long long)r->now.bytes,
			cli_esc(jma_census_row_label(&row, buf, sizeof(buf))));
		shown++;
	}
}

/* Born (@now) or died rows: counts only. */
static void text_tally(FILE *f, const char *title, const struct jma_census_change *v, size_t n,
		       int now, int untyped, unsigned top)
{
	char buf[64];

	if (!n)
		return;
	fprintf(f, "  %s:\n", title);
	for (size_t i = 0; i < n && (!top || i < top); i++) {
		const struct jma_census_count *k = now ? &v[i].now : &v[i].base;
		struct jma_census_row row = { .name = v[i].name, .size = v[i].size, .untyped = untyped };

		fprintf(f, "%12llu %14llu  %s\n", (unsigned long long)k->blocks,
			(unsigned long long)k->bytes, cli_esc(jma_census_row_label(&row, buf, sizeof(buf))));
	}
}

static void text_diff(FILE *f, const struct census_grow *g, const struct jma_census_diff *d,
		      const struct jma_census_meta *nm, unsigned top)
{
	fprintf(f, "census since %s", cli_esc(g->base_path));
	if (g->bmeta.time && nm->time)
		fprintf(f, " (%.1f s before)", nm->time - g->bmeta.time);
	fprintf(f, ": live %+lld blocks, %+lld bytes (%llu -> %llu blocks, %llu -> %llu bytes)\n",
		delta(d->now.blocks, d->base.blocks), delta(d->now.bytes, d->base.bytes),
		(unsigned long long)d->base.blocks, (unsigned long long)d->now.blocks,
		(unsigned long long)d->base.bytes, (unsigned long long)d->now.bytes);
	if (d->ntypes)
		text_changes(f, "by type", "TYPE", d->types, d->ntypes, 1, top);
	else
		text_changes(f, "by size class", "SIZE", d->sizes, d->nsizes, 0, top);
	if (d->nroots)
		text_changes(f, "by root (what each retains)", "ROOT", d->roots, d->nroots, 0, top);
	if (d->nholders)
		text_changes(f, "by holder (the blocks retaining most, by their path)", "HOLDER",
			     d->holders, d->nholders, 0, top);
	if (d->blocks) {
		fprintf(f, "\nborn since the base: %llu blocks, %llu bytes (addresses not live then); "
			"died: %llu blocks, %llu bytes\n", (unsigned long long)d->born.blocks,
			(unsigned long long)d->born.bytes, (unsigned long long)d->died.blocks,
			(unsigned long long)d->died.bytes);
		text_tally(f, "born, by type", d->born_types, d->nborn_types, 1, 1, top);
		text_tally(f, "born, by owner (whom they belong to)", d->born_owners, d->nborn_owners,
			   1, 0, top);
		text_tally(f, "died, by type", d->died_types, d->ndied_types, 0, 1, top);
		text_tally(f, "died, by owner (whom they belonged to)", d->died_owners,
			   d->ndied_owners, 0, 0, top);
	}
	if (d->warn[0])
		fprintf(f, "note: %s\n", cli_esc(d->warn));
}

/* --born FILE: each block born since the base, its type and owner. */
static int write_born(const struct census_grow *g, const struct jma_census_diff *d,
		      const struct jma_census *r)
{
	struct jma_census_block b;
	struct cli_out o;
	uint64_t i = 0;
	int err;

	if (!d->blocks)
		return cli_error(EXIT_MISSING, "census: --born: %s", d->warn[0] ? cli_esc(d->warn) :
				 "the base has no addresses (census --save FILE --addresses)");
	if ((err = cli_out_open(g->born, true, &o)))
		return cli_error(EXIT_USAGE, "census: --born %s: %s", cli_esc(g->born),
				 cli_out_strerror(err));
	/* The born blocks' numbers ascend: one walk of the list finds them. */
	for (struct jma_census_cursor k = { 0 }; i < d->born.blocks && jma_census_next(r, &k, &b);) {
		const char *t = b.type && b.type < r->ntypes ? r->types[b.type].name : "";

		if (k.n - 1 != d->born_list[i])
			continue;
		i++;
		fprintf(o.f, "0x%llx %llu%s%s", (unsigned long long)b.addr, (unsigned long long)b.size,
			t[0] ? " " : "", t[0] ? cli_esc(t) : "");
		if (r->owners)
			fprintf(o.f, "\t%s", cli_esc(jma_census_owner_name(r, b.owner)));
		fputc('\n', o.f);
	}
	err = cli_out_close(&o, true);
	if (err)
		return cli_error(EXIT_TARGET, "census: writing %s: %s", cli_esc(g->born), strerror(-err));
	return EXIT_OK;
}

static int difference(const struct census_grow *g, const struct jma_census *r,
		      const struct jma_census_meta *nm, unsigned top)
{
	struct jma_census_report_opts ro = { .format = JMA_CENSUS_PPROF, .top = top, .meta = nm };
	struct jma_census_diff *d = NULL;
	struct cli_out o;
	int err, rc;

	if (g->format == CF_PPROF) {
		/* The profile of the difference: pprof needs no other. */
		if ((rc = out_open(g, &o, true)))
			return rc;
		err = jma_census_report(r, g->base, &ro, cli_write_file, o.f);
		return out_close(g, &o, err);
	}
	if ((err = jma_census_diff(g->base, &g->bmeta, r, nm, &d)))
		return cli_error(EXIT_TARGET, "census: the difference: %s", strerror(-err));
	rc = out_open(g, &o, true);
	if (!rc) {
		err = 0;
		if (g->format == CF_JSON) {
			FILE *esc = cli_esc_open(o.f, 1);

			err = esc ? jma_census_diff_json(d, &ro, cli_write_file, esc) : -ENOMEM;
			if (esc && fclose(esc) && !err)
				err = -EIO;
		} else {
			text_diff(o.f, g, d, nm, top);
		}
		rc = out_close(g, &o, err);
	}
	if (!rc && g->born)
		rc = write_born(g, d, r);
	jma_census_diff_free(d);
	return rc;
}

int census_grow_output(struct cli *c, struct census_grow *g, const struct jma_census *r,
		       unsigned flags, unsigned top, int *done)
{
	/* When the census began: it took total_ns to here. */
	struct jma_census_meta m = { .pid = c->pid, .exec_mark = c->exec_mark,
				     .time = jma_clock_s(CLOCK_REALTIME) - (double)r->total_ns / 1e9,
				     .flags = flags };
	int rc = EXIT_OK;

	*done = 0;
	if (g->save && (rc = save(g, r, &m)))
		return rc;
	if (g->base) {
		*done = 1;
		return difference(g, r, &m, top ? top : 20);
	}
	if (g->format == CF_PPROF) {
		struct jma_census_report_opts ro = { .format = JMA_CENSUS_PPROF, .meta = &m };
		struct cli_out o;
		int err;

		*done = 1;
		if ((rc = out_open(g, &o, true)))
			return rc;
		err = jma_census_report(r, NULL, &ro, cli_write_file, o.f);
		return out_close(g, &o, err);
	}
	return rc;
}

/* --- a series ------------------------------------------------------------------ */

static int series_one(struct cli *c, jma_track *t, const struct jma_census_opts *o,
		      enum jma_census_by by, unsigned long k, double t0, FILE *out, int jsonl)
{
	double now = jma_clock_s(CLOCK_REALTIME);
	struct jma_track_meta m = { .time = now };
	struct jma_census_row *rows = NULL;
	struct jma_track_count *v = NULL;
	struct jma_census *r;
	char (*labels)[64] = NULL;
	size_t n = 0;
	int err;

	/* Ctrl-C during a census ends the series before it (the target is
	 * let go as after any census). */
	if (jma_census_run(c->s, o, &r))
		return cli_stop ? EXIT_OK : cli_fail_session(c);
	m.allocated = r->live.bytes + r->cached.bytes;
	m.hold_ns = r->stop_ns;
	err = jma_census_rows(r, by, &rows, &n);
	if (!err && (!(v = calloc(n + 1, sizeof(*v))) || !(labels = calloc(n + 1, sizeof(*labels)))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++)
		v[i] = (struct jma_track_count){ jma_census_row_label(&rows[i], labels[i], sizeof(labels[i])),
						 (double)rows[i].k.bytes, (double)rows[i].k.blocks };
	if (!err && jma_track_add_counts(t, v, n, &m))
		err = -ENOMEM;
	if (!err && jsonl) {
		if (jma_track_write_last(t, JMA_TRACK_JSONL, out))
			err = -EIO;
	} else if (!err) {
		char b[32];

		fprintf(out, "[%lu] +%.2fs live %s (%llu bytes) in %llu blocks; threads stopped %.1f ms, "
			"census %.1f ms\n", k, now - t0, cli_bytes(r->live.bytes, b, sizeof(b)),
			(unsigned long long)r->live.bytes, (unsigned long long)r->live.blocks,
			(double)r->stop_ns / 1e6, (double)r->total_ns / 1e6);
		if (fflush(out) || ferror(out))
			err = -EIO;
	}
	free(labels);
	free(v);
	free(rows);
	jma_census_free(r);
	if (err)
		return cli_error(EXIT_TARGET, "census: %s", err == -EIO ? "writing the series" :
				 err == -ENOMEM ? "out of memory" : strerror(-err));
	return EXIT_OK;
}

int census_series(struct cli *c, struct census_grow *g, const struct jma_census_opts *o,
		  const char *by, unsigned top)
{
	enum jma_census_by b = !strcmp(by, "type") ? JMA_CENSUS_BY_TYPE : !strcmp(by, "root") ?
			       JMA_CENSUS_BY_OWNER : JMA_CENSUS_BY_SIZE;
	static const char *const what[] = { "size", "type", "owner" };
	jma_track *t = jma_track_new(&(struct jma_track_opts){ .what = what[b] });
	double start = jma_clock_s(CLOCK_MONOTONIC), t0 = jma_clock_s(CLOCK_REALTIME);
	struct cli_stop_saved sv;
	struct cli_out out;
	unsigned long k = 0;
	char title[64];
	int rc;

	if (!t)
		return cli_error(EXIT_TARGET, "out of memory");
	if ((rc = out_open(g, &out, false))) {
		jma_track_free(t);
		return rc;
	}
	cli_stop_catch(&sv, true);
	while (!cli_stop && (!g->count || k < g->count)) {
		if ((rc = series_one(c, t, o, b, k, t0, out.f, g->format == CF_JSONL)))
			break;
		if (jma_track_nsnapshots(t) == k)
			break;	/* Ctrl-C during a census: the series ends before it */
		if (++k == g->count || jma_sleep_until(start + (double)k * g->every, 0.1, &cli_stop))
			break;
	}
	cli_stop_release(&sv);
	if (cli_stop)
		fprintf(stderr, "%s: stopped by signal %d after %lu censuses\n", cli_prog, (int)cli_stop, k);
	snprintf(title, sizeof(title), "live bytes per %s (census)", what[b]);
	if (rc == EXIT_OK)
		/* The ranking follows a text log; it goes to stderr when JSON
		 * lines fill stdout (as prof track's). */
		rc = cli_sites_ranking(t, top ? top : 10, g->svg, title,
				      out.f == stdout && g->format == CF_JSONL ? stderr : stdout);
	rc = out_close(g, &out, 0) ?: rc;
	jma_track_free(t);
	return rc;
}
