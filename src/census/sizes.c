/* sizes.c -- jemalloc's size classes, and the build's quantum and page read from its own tables.
 *
 * The classes follow sc.c's algorithm: with 16-byte quanta one tiny class
 * (8), the pseudo-group 16 32 48 64, then groups of four spaced a quarter of
 * their base apart (80 96 112 128, 160 ...): 232 classes; with Redis's
 * 8-byte quanta no tiny class, 8 16 24 32, then 40 48 56 64, 80 ...: 235.
 * The page only moves the line between small and large classes (SC_NBINS:
 * those under four pages).
 *
 * Which quantum and page a build has is read from the tables jemalloc fills
 * at boot from the same algorithm: sz_index2size_tab (every class: its third
 * entry is 24 or 32) and sz_pind2sz_tab (the page-multiple classes: PAGE,
 * 2 PAGE, 3 PAGE, ...), by symbol, else found by their contents in
 * jemalloc's data.  5.0 keeps them constant in its read-only data.
 */
#include <errno.h>
#include <stdlib.h>

#include "census/census.h"

#define SC_LG_NGROUP	2
#define SC_LG_TINY_MIN	3

unsigned cen_sizes_compute(unsigned lg_quantum, unsigned lg_page, uint64_t sizes[CEN_NSIZES_MAX],
			   unsigned *nbins)
{
	unsigned n = 0, ngroup = 1u << SC_LG_NGROUP, lg_base, lg_delta;

	/* Tiny classes, then the first group (a pseudo-group after tiny ones). */
	for (lg_base = SC_LG_TINY_MIN; lg_base < lg_quantum; lg_base++)
		sizes[n++] = 1ULL << lg_base;
	for (unsigned k = 0; k < ngroup; k++)
		sizes[n++] = (1ULL << lg_quantum) * (k + 1);
	/* Then groups of four up to the last whole one below 2^63. */
	for (lg_base = lg_quantum + SC_LG_NGROUP, lg_delta = lg_quantum; lg_base < 63;
	     lg_base++, lg_delta++)
		for (unsigned k = 1; k <= ngroup && !(lg_base == 62 && k == ngroup); k++)
			if (n < CEN_NSIZES_MAX)
				sizes[n++] = (1ULL << lg_base) + ((uint64_t)k << lg_delta);
	if (nbins)
		for (*nbins = 0; *nbins < n && sizes[*nbins] < (1ULL << (lg_page + SC_LG_NGROUP));)
			(*nbins)++;
	return n;
}

#define CHECKED	48	/* classes compared: past the small ones and the first large */
#define NPAGES	9	/* sz_pind2sz_tab's first entries: 1 2 3 4 5 6 7 8 10 pages */

/* The quantum of the size table @t (its first CHECKED words), 0 if none. */
static unsigned table_quantum(const uint64_t *t)
{
	uint64_t s[CEN_NSIZES_MAX];

	if (t[0] != 8 || t[1] != 16)
		return 0;
	for (unsigned q = 3; q <= 4; q++) {
		unsigned i = 0;
		cen_sizes_compute(q, 12, s, NULL);
		while (i < CHECKED && t[i] == s[i])
			i++;
		if (i == CHECKED)
			return q;
	}
	return 0;
}

/* The page size of the page-class table @t (NPAGES words), 0 if none. */
static unsigned table_page(const uint64_t *t)
{
	static const unsigned mult[NPAGES] = { 1, 2, 3, 4, 5, 6, 7, 8, 10 };

	for (unsigned lg = 12; lg <= 16; lg++) {
		unsigned i = 0;
		while (i < NPAGES && t[i] == (uint64_t)mult[i] << lg)
			i++;
		if (i == NPAGES)
			return lg;
	}
	return 0;
}

int cen_sizes_check(struct cen *c, uint64_t tab)
{
	uint64_t t[CHECKED];
	unsigned q;

	if (cen_read(c, tab, t, sizeof(t)) || t[0] != 8 || t[1] != 16)
		return 1;	/* not a size table */
	q = table_quantum(t);
	if (!q)
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: this jemalloc's size classes "
				"are none sc.c makes with 8- or 16-byte quanta (class 2 is %llu, 3 is "
				"%llu): not supported", (unsigned long long)t[2], (unsigned long long)t[3]);
	if (c->L && q != c->b.lg_quantum)
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: this jemalloc's size classes "
				"are of %u-byte quanta, not the %u-byte ones its other table says",
				1u << q, 1u << c->b.lg_quantum);
	c->b.lg_quantum = q;
	return 0;
}

#define SCAN_CHUNK	(256 * 1024)
#define SCAN_MAX	(64ULL << 20)	/* jemalloc's data scanned, at most */

/* The tables in jemalloc's data (@i: its mapping), looked for by content
 * where symbols do not name them. */
static void scan_tables(struct cen *c, uint64_t *buf, uint64_t *index_at, uint64_t *page_at)
{
	uint64_t scanned = 0;

	for (size_t i = 0; i < c->nmaps && (!*index_at || !*page_at); i++) {
		const struct att_map *m = &c->maps[i];

		if (!cen_je_data(c, i, 0))
			continue;
		for (uint64_t a = m->start; a < m->end && scanned < SCAN_MAX; a += SCAN_CHUNK - 512) {
			uint64_t n = m->end - a < SCAN_CHUNK ? m->end - a : SCAN_CHUNK;

			scanned += n;
			if (n < CHECKED * 8 || cen_read(c, a, buf, n))
				continue;
			/* A table straddling two reads is whole in the second:
			 * they overlap by 512 bytes. */
			for (size_t k = 0; k + CHECKED <= n / 8; k++) {
				if (!*index_at && buf[k] == 8 && table_quantum(buf + k))
					*index_at = a + k * 8;
				if (!*page_at && buf[k] >= 4096 && table_page(buf + k))
					*page_at = a + k * 8;
			}
		}
	}
}

/* The table named @name (its symbol), 0 if none. */
static uint64_t table_sym(struct cen *c, const char *name)
{
	uint64_t a, sz;
	int tls;

	return syms_jemalloc_sym(c->s->syms, name, &a, &sz, &tls) && !tls ? a : 0;
}

int cen_sizes_read(struct cen *c)
{
	uint64_t index_at = table_sym(c, "sz_index2size_tab"), page_at = table_sym(c, "sz_pind2sz_tab");
	uint64_t t[CHECKED], *buf;
	int err;

	if (!index_at || !page_at) {
		if (!(buf = malloc(SCAN_CHUNK)))
			return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
		scan_tables(c, buf, &index_at, &page_at);
		free(buf);
	}
	if (!index_at)
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOENT, "census: jemalloc's table of size "
				"classes (sz_index2size_tab) is not in its data: its quantum is unknown "
				"(not initialised yet?)");
	if ((err = cen_sizes_check(c, index_at)) != 0)
		return err < 0 ? err : sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: "
						"sz_index2size_tab at 0x%llx holds no size classes",
						(unsigned long long)index_at);
	if (!page_at || cen_read(c, page_at, t, NPAGES * 8) || !(c->b.lg_page = table_page(t)))
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOENT, "census: jemalloc's table of page "
				"size classes (sz_pind2sz_tab) is not in its data: its page size is "
				"unknown");
	return 0;
}
