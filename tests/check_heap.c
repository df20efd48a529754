/* check_heap.c -- heap-profile analysis: parsing, un-sampling, subtraction,
 * folding, the formats (pure logic), and a live fixture whose sites hold
 * known amounts (symbolized from its own dump).
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <jemattach.h>

#include "profile.pb-c.h"
#include "tutil.h"

/* Period P and a stack of 2 objects whose mean size is (almost) P*ln 2:
 * jeprof's formula scales it by 1/(1 - e^-ln2) = 2. */
#define P 1000000
#define DOUBLED (1386294.0 / -expm1(-693147.0 / P))
#define BIG (2000000.0 / -expm1(-2.0))

static char msg[512];

static jma_heap *parse(const char *text)
{
	jma_heap *h = NULL;

	ck_assert_msg(jma_heap_parse(text, strlen(text), "t.heap", &h, msg, sizeof(msg)) == 0,
		      "parse failed: %s", msg);
	return h;
}

static int parse_err(const char *text)
{
	jma_heap *h = NULL;
	int err = jma_heap_parse(text, strlen(text), "t.heap", &h, msg, sizeof(msg));

	ck_assert_ptr_null(h);
	return err;
}

/* Leaf 0x1000 called from 0x2000 (a return address); leaf 0x3000 alone. */
static const char v2[] =
	"heap_v2/1000000\n"
	"  t*: 3: 1386294 [0: 0]\n"
	"  t0: 3: 1386294 [0: 0]\n"
	"@ 0x1000 0x2000\n"
	"  t*: 2: 1386294 [0: 0]\n"
	"  t0: 2: 1386294 [0: 0]\n"
	"@ 0x3000\n"
	"  t*: 1: 2000000 [0: 0]\n"
	"\n"
	"MAPPED_LIBRARIES:\n"
	"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n";

static double site_flat(const struct jma_heap_site *s, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return s[i].flat;
	return NAN;
}

START_TEST(test_heap_parse_v2_unsample)
{
	struct jma_heap_report_opts o = { .sz = sizeof(o) };
	struct jma_heap_site *s;
	struct jma_heap_info info;
	jma_heap *h = parse(v2);
	size_t n;
	double total;

	jma_heap_info(h, &info);
	ck_assert_int_eq(info.version, 2);
	ck_assert_uint_eq(info.period, P);
	ck_assert_uint_eq(info.nstacks, 2);
	ck_assert_uint_eq(info.nmaps, 1);
	ck_assert_int_eq(info.has_alloc, 0);
	ck_assert_int_eq(jma_heap_sites(h, &o, &s, &n, &total), 0);
	/* 1386294 bytes in 2 objects of mean size P*ln2: doubled. */
	ck_assert_double_eq_tol(site_flat(s, n, "0x1000"), 2 * 1386294.0, 1.0);
	ck_assert_double_eq_tol(site_flat(s, n, "0x3000"), BIG, 1e-6);
	ck_assert_double_eq_tol(total, DOUBLED + BIG, 1e-6);
	/* The caller is named by its call instruction, one byte before the return address. */
	ck_assert(site_flat(s, n, "0x1fff") == 0);
	ck_assert(isnan(site_flat(s, n, "0x2000")));
	free(s);
	o.sample = JMA_HEAP_INUSE_OBJECTS;
	ck_assert_int_eq(jma_heap_sites(h, &o, &s, &n, &total), 0);
	ck_assert_double_eq_tol(site_flat(s, n, "0x1000"), 4.0, 1e-3);
	free(s);
	o.sample = JMA_HEAP_ALLOC_SPACE;
	ck_assert_int_eq(jma_heap_sites(h, &o, &s, &n, &total), -ENODATA);
	ck_assert(strstr(jma_heap_errmsg(h), "prof_accum"));
	jma_heap_free(h);
}
END_TEST

START_TEST(test_heap_parse_v1)
{
	struct jma_heap_report_opts o = { .sz = sizeof(o), .sample = JMA_HEAP_ALLOC_SPACE };
	struct jma_heap_site *s;
	struct jma_heap_info info;
	size_t n;
	double total;
	jma_heap *h = parse("heap profile: 2: 1386294 [ 4: 4000]  @ heap_v2/1000000\n"
			    "2: 1386294 [ 4: 4000] @ 0x10 0x20\n\nMAPPED_LIBRARIES:\n");

	jma_heap_info(h, &info);
	ck_assert_int_eq(info.version, 1);
	ck_assert_int_eq(info.has_alloc, 1);
	ck_assert_int_eq(jma_heap_sites(h, &o, &s, &n, &total), 0);
	ck_assert_double_eq_tol(total, 4000.0 / -expm1(-1000.0 / P), 1e-3);
	free(s);
	jma_heap_free(h);
	/* "heapprofile": every allocation was recorded; nothing to scale. */
	h = parse("heap profile: 1: 100 [ 1: 100] @ heapprofile\n1: 100 [ 1: 100] @ 0x10\n"
		  "\nMAPPED_LIBRARIES:\n");
	o.sample = JMA_HEAP_INUSE_SPACE;
	ck_assert_int_eq(jma_heap_sites(h, &o, &s, &n, &total), 0);
	ck_assert_double_eq(total, 100.0);
	free(s);
	jma_heap_free(h);
}
END_TEST

static void expect_error(const char *text, const char *where, const char *what)
{
	ck_assert_int_eq(parse_err(text), -EINVAL);
	ck_assert_msg(strstr(msg, where) && strstr(msg, what), "message \"%s\" lacks \"%s\" or \"%s\"",
		      msg, where, what);
}

START_TEST(test_heap_parse_errors)
{
	char many[16 * 1100 + 200];
	size_t off;

	expect_error("", "t.heap:1:", "empty");
	expect_error("GIF89a\n", "t.heap:1:", "not a jemalloc heap profile");
	expect_error("heap_v2/0\n", "t.heap:1:", "period");
	expect_error("heap_v2/16\n@ 0x10\n\nMAPPED_LIBRARIES:\n", "t.heap:3:", "after the stack on line 2");
	expect_error("heap_v2/16\n@ 0x10 zz\n", "t.heap:2:", "bad address");
	expect_error("heap_v2/16\n@ 0x10\n  t*: 1: 99999999999999999999 [0: 0]\n", "t.heap:3:",
		     "bad counts");
	expect_error("heap_v2/16\n@ 0x10\n  t*: 1: 16 [0: 0]\n", "t.heap:3:", "truncated");
	expect_error("heap_v2/16\n@ 0x10\n", "t.heap:2:", "truncated");
	expect_error("heap_v2/16\n@ 0x10\n  t*: 1: 16 [0:", "t.heap:3:", "truncated");
	expect_error("heap_v2/16\n@ 0x10\n  t*: 1: 16 [0: 0]\nMAPPED_LIBRARIES:\nnot a map\n",
		     "t.heap:5:", "bad mapping");
	expect_error("heap profile: 1: 1 [0: 0] @ growth\n", "t.heap:1:", "unsupported");
	off = (size_t)snprintf(many, sizeof(many), "heap_v2/16\n@");
	for (int i = 0; i <= JMA_HEAP_MAX_FRAMES; i++)
		off += (size_t)snprintf(many + off, sizeof(many) - off, " 0x%x", i + 1);
	snprintf(many + off, sizeof(many) - off, "\n");
	expect_error(many, "t.heap:2:", "frames");
}
END_TEST

START_TEST(test_heap_subtract)
{
	static const char base_text[] =
		"heap_v2/1000000\n"
		"@ 0x1000 0x2000\n  t*: 2: 1386294 [0: 0]\n"
		"@ 0x5000\n  t*: 2: 1386294 [0: 0]\n"
		"\nMAPPED_LIBRARIES:\n";
	struct jma_heap_report_opts o = { .sz = sizeof(o) };
	struct jma_heap_site *s;
	struct jma_heap_info info;
	jma_heap *h = parse(v2), *base = parse(base_text);
	size_t n;
	double total;

	ck_assert_int_eq(jma_heap_subtract(h, base), 0);
	jma_heap_info(h, &info);
	ck_assert_int_eq(info.is_diff, 1);
	ck_assert_int_eq(jma_heap_sites(h, &o, &s, &n, &total), 0);
	/* 0x1000 is unchanged: gone.  0x3000 grew.  0x5000 only in the base: shrank. */
	ck_assert(isnan(site_flat(s, n, "0x1000")));
	ck_assert_double_eq_tol(site_flat(s, n, "0x3000"), BIG, 1e-6);
	ck_assert_double_eq_tol(site_flat(s, n, "0x5000"), -DOUBLED, 1e-6);
	free(s);
	jma_heap_free(base);
	jma_heap_free(h);
}
END_TEST

START_TEST(test_heap_filters)
{
	struct jma_heap_report_opts o = { .sz = sizeof(o), .focus = "^0x1fff$" };
	struct jma_heap_site *s;
	jma_heap *h = parse(v2);
	size_t n;
	double total;

	ck_assert_int_eq(jma_heap_sites(h, &o, &s, &n, &total), 0);
	ck_assert_double_eq_tol(total, DOUBLED, 1e-6);
	free(s);
	o.focus = NULL;
	o.ignore = "^0x1fff$";
	ck_assert_int_eq(jma_heap_sites(h, &o, &s, &n, &total), 0);
	ck_assert(isnan(site_flat(s, n, "0x1000")));
	free(s);
	/* Folding 0x1000 as an allocator makes its caller the site. */
	o.ignore = NULL;
	o.fold = "^0x1000$";
	ck_assert_int_eq(jma_heap_sites(h, &o, &s, &n, &total), 0);
	ck_assert_double_eq_tol(site_flat(s, n, "0x1fff"), DOUBLED, 1e-6);
	free(s);
	o.fold = "(";
	ck_assert_int_eq(jma_heap_sites(h, &o, &s, &n, &total), -EINVAL);
	ck_assert_msg(strstr(jma_heap_errmsg(h), "the fold pattern \"(\" is not a valid regular "
			     "expression"), "%s", jma_heap_errmsg(h));
	jma_heap_free(h);
}
END_TEST

/* Each default fold rule compiles, folds its program's wrappers, and leaves
 * the code that calls them alone. */
START_TEST(test_heap_default_folds)
{
	static const struct { const char *program, *fold, *keep; } cases[] = {
		{ "Redis", "zmalloc_usable", "_sdsnewlen" },
		{ "Redis", "ztrycalloc_usable_internal", "dictAddRaw" },
		{ "Redis", "zcalloc_num", "zslInsert" },
		{ "BIND (ISC)", "isc__mem_get", "isc_buffer_allocate" },
		{ "Varnish", "WS_Alloc", "VRT_String" },
		{ "nghttp2", "nghttp2_mem_malloc", "nghttp2_session_new" },
		{ "OpenSSL", "CRYPTO_zalloc", "SSL_new" },
		{ "GLib", "g_malloc0", "g_hash_table_new" },
	};
	const struct jma_heap_fold *r;
	size_t n, i;
	const char *fn;
	int prefix, seen_je = 0, seen_memalign = 0;

	r = jma_heap_default_folds(&n);
	ck_assert_uint_gt(n, 5);
	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		regex_t re;

		for (i = 0; i < n && strcmp(r[i].program, cases[c].program); i++)
			;
		ck_assert_msg(i < n, "no rule for %s", cases[c].program);
		ck_assert_int_eq(regcomp(&re, r[i].re, REG_EXTENDED | REG_NOSUB), 0);
		ck_assert_msg(!regexec(&re, cases[c].fold, 0, NULL, 0), "%s not folded", cases[c].fold);
		ck_assert_msg(regexec(&re, cases[c].keep, 0, NULL, 0), "%s folded", cases[c].keep);
		regfree(&re);
	}
	for (i = 0; (fn = jma_heap_alloc_fn(i, &prefix)) != NULL; i++) {
		seen_je |= prefix && !strcmp(fn, "je_");
		seen_memalign |= !prefix && !strcmp(fn, "posix_memalign");
	}
	ck_assert(seen_je && seen_memalign);
}
END_TEST

struct buf {
	char *p;
	size_t len;
};

static int collect(void *arg, const char *data, size_t len)
{
	struct buf *b = arg;

	b->p = realloc(b->p, b->len + len + 1);
	ck_assert_ptr_nonnull(b->p);
	memcpy(b->p + b->len, data, len);
	b->len += len;
	b->p[b->len] = '\0';
	return 0;
}

static struct buf report(jma_heap *h, enum jma_heap_format f)
{
	struct jma_heap_report_opts o = { .sz = sizeof(o), .format = f };
	struct buf b = { 0 };

	ck_assert_int_eq(jma_heap_report(h, &o, collect, &b), 0);
	return b;
}

START_TEST(test_heap_formats)
{
	jma_heap *h = parse(v2);
	struct buf b = report(h, JMA_HEAP_TEXT);
	char line[96];
	unsigned char out[1 << 16];
	z_stream z = { 0 };
	Perftools__Profiles__Profile *p;
	int64_t sum = 0;

	snprintf(line, sizeof(line), "Total: %.1f MB\n", (DOUBLED + BIG) / 1048576);
	ck_assert_msg(!strncmp(b.p, line, strlen(line)), "%s", b.p);
	ck_assert(strstr(b.p, "% 0x1000\n"));
	free(b.p);
	b = report(h, JMA_HEAP_COLLAPSED);
	snprintf(line, sizeof(line), "0x1fff;0x1000 %.0f\n", round(DOUBLED));
	ck_assert_msg(strstr(b.p, line), "%s", b.p);
	free(b.p);
	b = report(h, JMA_HEAP_JSON);
	ck_assert(strstr(b.p, "\"sample\": \"inuse_space\"") && strstr(b.p, "\"address\": \"0x1fff\""));
	free(b.p);
	/* pprof: gzip around a profile.proto message that protobuf-c reads back. */
	b = report(h, JMA_HEAP_PPROF);
	ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (unsigned char *)b.p;
	z.avail_in = (uInt)b.len;
	z.next_out = out;
	z.avail_out = sizeof(out);
	ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	p = perftools__profiles__profile__unpack(NULL, sizeof(out) - z.avail_out, out);
	inflateEnd(&z);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->n_sample, 2);
	ck_assert_uint_eq(p->n_sample_type, 2);
	ck_assert_str_eq(p->string_table[p->sample_type[1]->type], "inuse_space");
	ck_assert_str_eq(p->string_table[0], "");
	for (size_t i = 0; i < p->n_sample; i++)
		sum += p->sample[i]->value[1];
	ck_assert_int_eq(sum, llround(DOUBLED) + llround(BIG));
	ck_assert_uint_eq(p->n_mapping, 1);
	ck_assert_str_eq(p->string_table[p->mapping[0]->filename], "/usr/bin/dbus-daemon");
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(b.p);
	jma_heap_free(h);
}
END_TEST

/* --- live: the fixture's own dump, symbolized from its MAPPED_LIBRARIES -- */

static struct tproc fx;
static char dir[64];

static void live_setup(void)
{
	static char conf[] = "MALLOC_CONF=prof:true,lg_prof_sample:14";
	char *env[] = { conf, NULL };

	snprintf(dir, sizeof(dir), "/tmp/jma-heap.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	tproc_start(&fx, "heapsites", env);
}

static void live_teardown(void)
{
	char cmd[128];

	tproc_stop(&fx);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static jma_heap *dump(const char *name)
{
	char path[128], cmd[160];
	jma_heap *h;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "dump %s", path);
	ck_assert_str_eq(tproc_cmd(&fx, cmd), "ok");
	ck_assert_msg(jma_heap_load(path, &h, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_int_eq(jma_heap_symbolize(h, NULL), 0);
	return h;
}

/* Let the fixture's sites grow by @big and @small MiB; *b, *s: what they hold now. */
static void grow_sites(const char *big, const char *small, unsigned long *b, unsigned long *s)
{
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "big %s", big);
	ck_assert_str_eq(tproc_cmd(&fx, cmd), "ok");
	snprintf(cmd, sizeof(cmd), "small %s", small);
	ck_assert_str_eq(tproc_cmd(&fx, cmd), "ok");
	ck_assert_int_eq(sscanf(tproc_cmd(&fx, "held"), "big %lu small %lu", b, s), 2);
}

static const struct jma_heap_site *find(const struct jma_heap_site *s, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return &s[i];
	ck_abort_msg("no site %s", name);
	return NULL;
}

START_TEST(test_heap_live_sites)
{
	struct jma_heap_report_opts o = { .sz = sizeof(o) };
	struct jma_heap_site *s;
	unsigned long big, small;
	jma_heap *h;
	size_t n;
	double total;

	grow_sites("64", "8", &big, &small);
	h = dump("a.heap");
	ck_assert_int_eq(jma_heap_sites(h, &o, &s, &n, &total), 0);
	ck_assert_uint_ge(n, 2);
	ck_assert_str_eq(s[0].name, "keep_big");
	ck_assert_msg(fabs(s[0].flat - (double)big) < 0.1 * (double)big, "keep_big %.0f, holds %lu",
		      s[0].flat, big);
	ck_assert_ptr_nonnull(s[0].file);
	ck_assert(strstr(s[0].file, "heapsites.c"));
	/* small_block is inlined into keep_small: its own frame, with keep_small above it.
	 * 8 MiB in 16 KiB blocks at a 16 KiB mean period: about 324 of 512
	 * blocks sampled, a relative standard deviation of 3.4%; 15% is 4.4
	 * of them (10% failed once in a CI-like run, 11.5% off). */
	ck_assert_msg(fabs(find(s, n, "small_block")->flat - (double)small) < 0.15 * (double)small,
		      "small_block %.0f, holds %lu", find(s, n, "small_block")->flat, small);
	ck_assert_double_eq(find(s, n, "keep_small")->cum, find(s, n, "small_block")->flat);
	ck_assert_double_eq(find(s, n, "keep_small")->flat, 0);
	/* No allocator frame is a site: jemalloc and malloc were folded away. */
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(strcmp(s[i].name, "malloc") && !strstr(s[i].name, "jemalloc"), "%s",
			      s[i].name);
	free(s);
	jma_heap_free(h);
}
END_TEST

START_TEST(test_heap_live_base)
{
	struct jma_heap_report_opts o = { .sz = sizeof(o) };
	struct jma_heap_site *s;
	unsigned long big0, big1, small;
	jma_heap *base, *h;
	size_t n;
	double total;

	grow_sites("32", "8", &big0, &small);
	base = dump("base.heap");
	grow_sites("16", "0", &big1, &small);
	h = dump("now.heap");
	ck_assert_int_eq(jma_heap_subtract(h, base), 0);
	ck_assert_int_eq(jma_heap_symbolize(h, NULL), 0);
	ck_assert_int_eq(jma_heap_sites(h, &o, &s, &n, &total), 0);
	ck_assert_str_eq(s[0].name, "keep_big");
	ck_assert_msg(fabs(s[0].flat - (double)(big1 - big0)) < 0.1 * (double)(big1 - big0),
		      "growth %.0f, truth %lu", s[0].flat, big1 - big0);
	/* Unchanged sites cancel out exactly: the same samples are in both dumps. */
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(strcmp(s[i].name, "small_block"), "small_block did not change");
	free(s);
	jma_heap_free(base);
	jma_heap_free(h);
}
END_TEST

Suite *suite_heap(void)
{
	Suite *s = suite_create("heap");
	TCase *logic = tcase_create("logic"), *live = tcase_create("live");

	tcase_add_test(logic, test_heap_parse_v2_unsample);
	tcase_add_test(logic, test_heap_parse_v1);
	tcase_add_test(logic, test_heap_parse_errors);
	tcase_add_test(logic, test_heap_subtract);
	tcase_add_test(logic, test_heap_filters);
	tcase_add_test(logic, test_heap_default_folds);
	tcase_add_test(logic, test_heap_formats);
	suite_add_tcase(s, logic);
	tcase_add_checked_fixture(live, live_setup, live_teardown);
	tcase_set_timeout(live, 120);
	tcase_add_test(live, test_heap_live_sites);
	tcase_add_test(live, test_heap_live_base);
	suite_add_tcase(s, live);
	return s;
}
