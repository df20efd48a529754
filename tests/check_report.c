/* check_report.c -- series files and the abs/del/eff reports (pure logic, no target). */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jemattach.h>

#define MiB (1ULL << 20)

START_TEST(test_report_parse_size)
{
	uint64_t v;

	ck_assert_int_eq(jma_parse_size("200M", &v), 0);
	ck_assert_uint_eq(v, 200 * MiB);
	ck_assert_int_eq(jma_parse_size("1G", &v), 0);
	ck_assert_uint_eq(v, 1024 * MiB);
	ck_assert_int_eq(jma_parse_size("1.5GiB", &v), 0);
	ck_assert_uint_eq(v, 1536 * MiB);
	ck_assert_int_eq(jma_parse_size("512kb", &v), 0);
	ck_assert_uint_eq(v, 512 * 1024);
	ck_assert_int_eq(jma_parse_size("4096B", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(jma_parse_size("200", &v), 0);	/* the seed's MB */
	ck_assert_uint_eq(v, 200 * MiB);
	ck_assert_int_eq(jma_parse_size("-1M", &v), -EINVAL);
	ck_assert_int_eq(jma_parse_size("12Q", &v), -EINVAL);
	ck_assert_int_eq(jma_parse_size("", &v), -EINVAL);
	ck_assert_int_eq(jma_parse_size("nan", &v), -EINVAL);
	ck_assert_int_eq(jma_parse_size("9000000T", &v), -ERANGE);
}
END_TEST

START_TEST(test_report_format_size)
{
	char b[32];

	jma_format_size(512, b, sizeof(b));
	ck_assert_str_eq(b, "512 B");
	jma_format_size(1536, b, sizeof(b));
	ck_assert_str_eq(b, "1.5 KiB");
	jma_format_size((int64_t)(200 * MiB), b, sizeof(b));
	ck_assert_str_eq(b, "200.0 MiB");
	jma_format_size(-(int64_t)(3 * 1024 * MiB + 256 * MiB), b, sizeof(b));
	ck_assert_str_eq(b, "-3.2 GiB");
	jma_format_size(-7, b, sizeof(b));
	ck_assert_str_eq(b, "-7 B");
}
END_TEST

START_TEST(test_report_metric_names)
{
	enum jma_metric m;

	ck_assert_int_eq(jma_metric_parse("total", &m), 0);
	ck_assert_int_eq(m, JMA_M_ALLOCATED);
	for (int i = 0; i < JMA_M_COUNT; i++) {
		ck_assert_int_eq(jma_metric_parse(jma_metric_name((enum jma_metric)i), &m), 0);
		ck_assert_int_eq(m, i);
	}
	ck_assert_int_eq(jma_metric_parse("huge", &m), -EINVAL);
}
END_TEST

/* A watch series: arena 3 grows to 300 MiB and falls back; arena 5 appears
 * at iteration 2 with 250 MiB; page 4096. */
static const char series_text[] =
	"{\"iter\":0,\"page\":4096,\"allocated\":104857600,\"active\":125829120,\"mapped\":209715200,"
	"\"arenas\":[{\"arena\":3,\"pactive\":25600,\"mapped\":209715200,\"small_allocated\":0,"
	"\"large_allocated\":104857600}]}\n"
	"{\"iter\":1,\"page\":4096,\"allocated\":314572800,\"active\":335544320,\"mapped\":419430400,"
	"\"arenas\":[{\"arena\":3,\"pactive\":76800,\"mapped\":419430400,\"small_allocated\":1048576,"
	"\"large_allocated\":313524224}]}\n"
	"{\"iter\":2,\"page\":4096,\"allocated\":576716800,\"active\":597688320,\"mapped\":681574400,"
	"\"arenas\":[{\"arena\":3,\"pactive\":76800,\"mapped\":419430400,\"large_allocated\":314572800},"
	"{\"arena\":5,\"pactive\":64000,\"mapped\":262144000,\"large_allocated\":262144000}]}\n"
	"{\"iter\":3,\"page\":4096,\"allocated\":367001600,\"active\":388021248,\"mapped\":681574400,"
	"\"arenas\":[{\"arena\":3,\"pactive\":25600,\"mapped\":419430400,\"large_allocated\":104857600},"
	"{\"arena\":5,\"pactive\":64000,\"mapped\":262144000,\"large_allocated\":262144000}]}\n";

static void load(struct jma_series *ser)
{
	char err[256];

	ck_assert_msg(jma_series_parse(series_text, strlen(series_text), ser, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_uint_eq(ser->n, 4);
}

START_TEST(test_report_series_pages_to_bytes)
{
	struct jma_series ser;
	uint64_t v;

	load(&ser);
	ck_assert_uint_eq(ser.v[1].arenas[0].active, 76800ULL * 4096);
	ck_assert_int_eq(jma_sample_metric(&ser.v[1], 3, JMA_M_ALLOCATED, &v), 0);
	ck_assert_uint_eq(v, 300 * MiB);
	ck_assert_int_eq(jma_sample_metric(&ser.v[1], 5, JMA_M_ALLOCATED, &v), -ENOENT);
	ck_assert_int_eq(jma_sample_metric(&ser.v[2], JMA_ARENA_ALL, JMA_M_MAPPED, &v), 0);
	ck_assert_uint_eq(v, 650 * MiB);
	jma_series_free(&ser);
}
END_TEST

START_TEST(test_report_abs)
{
	struct jma_series ser;
	struct jma_abs_row *r;
	size_t n;

	load(&ser);
	ck_assert_int_eq(jma_report_abs(&ser, JMA_M_ALLOCATED, 200 * MiB, 0, UINT_MAX, &r, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(r[0].arena, JMA_ARENA_ALL);
	ck_assert_uint_eq(r[0].value, 550 * MiB);
	ck_assert_uint_eq(r[0].iter, 2);
	ck_assert_int_eq(r[1].arena, 3);
	ck_assert_uint_eq(r[1].value, 300 * MiB);
	ck_assert_uint_eq(r[1].iter, 1);	/* the first time it got there */
	ck_assert_int_eq(r[2].arena, 5);
	ck_assert_uint_eq(r[2].value, 250 * MiB);
	free(r);
	/* --to is inclusive: iterations 0-1 see neither arena 5 nor 550 MiB. */
	ck_assert_int_eq(jma_report_abs(&ser, JMA_M_ALLOCATED, 200 * MiB, 0, 1, &r, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(r[0].value, 300 * MiB);
	ck_assert_int_eq(r[1].arena, 3);
	free(r);
	ck_assert_int_eq(jma_report_abs(&ser, JMA_M_ALLOCATED, 0, 4, 9, &r, &n), -ERANGE);
	ck_assert_int_eq(jma_report_abs(&ser, JMA_M_ALLOCATED, 0, 2, 1, &r, &n), -ERANGE);
	jma_series_free(&ser);
}
END_TEST

START_TEST(test_report_del)
{
	struct jma_series ser;
	struct jma_del_row *r;
	size_t n;

	load(&ser);
	ck_assert_int_eq(jma_report_del(&ser, JMA_M_ALLOCATED, 200 * MiB, 0, UINT_MAX, &r, &n), 0);
	/* all +250 (1->2), 5 +250 (from nothing), all -200 (2->3), 3 -200, all +200, 3 +200 */
	ck_assert_uint_eq(n, 6);
	ck_assert_int_eq(r[0].arena, JMA_ARENA_ALL);
	ck_assert_int_eq(r[0].change, (int64_t)(250 * MiB));
	ck_assert_uint_eq(r[0].iter, 2);
	ck_assert_int_eq(r[1].arena, 5);
	ck_assert_uint_eq(r[1].before, 0);
	ck_assert_int_eq(r[1].change, (int64_t)(250 * MiB));
	ck_assert_int_eq(r[2].arena, JMA_ARENA_ALL);
	ck_assert_int_eq(r[2].change, (int64_t)(200 * MiB));
	ck_assert_uint_eq(r[2].iter, 1);
	ck_assert_int_eq(r[3].arena, 3);
	ck_assert_uint_eq(r[3].iter, 1);
	ck_assert_int_eq(r[5].arena, 3);
	ck_assert_int_eq(r[5].change, -(int64_t)(200 * MiB));
	ck_assert_uint_eq(r[5].iter, 3);
	free(r);
	ck_assert_int_eq(jma_report_del(&ser, JMA_M_ALLOCATED, 201 * MiB, 2, 3, &r, &n), 0);
	ck_assert_uint_eq(n, 0);
	free(r);
	jma_series_free(&ser);
}
END_TEST

START_TEST(test_report_eff)
{
	struct jma_series ser;
	struct jma_eff e;

	load(&ser);
	ck_assert_int_eq(jma_report_eff(&ser, 300 * MiB, 0, UINT_MAX, &e), 0);
	/* arena 5 never maps 300 MiB */
	ck_assert_uint_eq(e.narenas, 2);
	ck_assert_int_eq(e.arenas[0], JMA_ARENA_ALL);
	ck_assert_int_eq(e.arenas[1], 3);
	ck_assert_uint_eq(e.niters, 4);
	ck_assert(fabs(e.ratio[0 * 2 + 1] - 0.5) < 1e-12);
	ck_assert(fabs(e.ratio[1 * 2 + 1] - 0.75) < 1e-12);
	ck_assert(fabs(e.ratio[0 * 2 + 0] - 0.6) < 1e-12);
	jma_eff_free(&e);
	ck_assert_int_eq(jma_report_eff(&ser, 0, 1, 2, &e), 0);
	ck_assert_uint_eq(e.narenas, 3);
	ck_assert(isnan(e.ratio[0 * 3 + 2]));	/* arena 5 does not exist at iteration 1 */
	ck_assert(fabs(e.ratio[1 * 3 + 2] - 1.0) < 1e-12);
	jma_eff_free(&e);
	jma_series_free(&ser);
}
END_TEST

static char *capture(void (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	fn(f, arg);
	fclose(f);
	return buf;
}

static void write_fmt(FILE *f, void *arg)
{
	const enum jma_series_fmt *fmt = arg;
	struct jma_series ser;
	char err[128];

	ck_assert_int_eq(jma_series_parse(series_text, strlen(series_text), &ser, err, sizeof(err)), 0);
	ser.v[2].pid = 42;
	snprintf(ser.v[2].comm, sizeof(ser.v[2].comm), "a\"b\\c");
	ck_assert_int_eq(jma_series_write_header(f, *fmt), 0);
	ck_assert_int_eq(jma_series_write(f, *fmt, &ser.v[2]), 0);
	jma_series_free(&ser);
}

START_TEST(test_report_jsonl_roundtrip)
{
	enum jma_series_fmt fmt = JMA_SERIES_JSONL;
	char *text = capture(write_fmt, &fmt), err[128];
	struct jma_series ser;

	ck_assert_int_eq(jma_series_parse(text, strlen(text), &ser, err, sizeof(err)), 0);
	ck_assert_uint_eq(ser.n, 1);
	ck_assert_str_eq(ser.v[0].comm, "a\"b\\c");
	ck_assert_int_eq(ser.v[0].pid, 42);
	ck_assert_uint_eq(ser.v[0].narenas, 2);
	ck_assert_uint_eq(ser.v[0].arenas[1].active, 64000ULL * 4096);
	ck_assert_uint_eq(ser.v[0].mapped, 650 * MiB);
	ck_assert_ptr_nonnull(strstr(text, "\"pactive\":64000"));
	jma_series_free(&ser);
	free(text);
}
END_TEST

START_TEST(test_report_csv_and_prom_text)
{
	enum jma_series_fmt fmt = JMA_SERIES_CSV;
	char *text = capture(write_fmt, &fmt), *line, *save;
	int rows = 0, fields0 = -1;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), rows++) {
		int fields = 1;
		for (char *p = line; *p; p++)
			fields += *p == ',';
		if (fields0 < 0)
			fields0 = fields;
		ck_assert_int_eq(fields, fields0);
	}
	ck_assert_int_eq(rows, 1 + 1 + 2);	/* header, "all", two arenas */
	free(text);

	fmt = JMA_SERIES_PROM;
	text = capture(write_fmt, &fmt);
	ck_assert_ptr_nonnull(strstr(text, "# TYPE jemalloc_mapped_bytes gauge\n"
				     "jemalloc_mapped_bytes{pid=\"42\",comm=\"a\\\"b\\\\c\"} 681574400\n"));
	ck_assert_ptr_nonnull(strstr(text, "jemalloc_arena_large_allocated_bytes{pid=\"42\","
				     "comm=\"a\\\"b\\\\c\",arena=\"5\"} 262144000\n"));
	free(text);
}
END_TEST

START_TEST(test_report_stats_documents)
{
	/* Two malloc_stats_print("J") documents back to back, as a server logs them. */
	static const char two[] =
		"{\"jemalloc\": {\"version\": \"5.3.0\", \"arenas\": {\"page\": 16384},\n"
		"  \"stats\": {\"allocated\": 10, \"active\": 16384, \"mapped\": 65536},\n"
		"  \"stats.arenas\": {\"merged\": {\"pdirty\": 2, \"pmuzzy\": 1},\n"
		"    \"0\": {\"nthreads\": 3, \"pactive\": 1, \"mapped\": 65536,\n"
		"      \"small\": {\"allocated\": 10}, \"large\": {\"allocated\": 0}}}}}"
		"{\"jemalloc\": {\"arenas\": {\"page\": 16384}, \"stats\": {\"allocated\": 20}}}\n";
	struct jma_series ser;
	char err[128];

	ck_assert_int_eq(jma_series_parse(two, strlen(two), &ser, err, sizeof(err)), 0);
	ck_assert_uint_eq(ser.n, 2);
	ck_assert_uint_eq(ser.v[0].dirty, 2 * 16384);
	ck_assert_uint_eq(ser.v[0].muzzy, 16384);
	ck_assert_uint_eq(ser.v[0].narenas, 1);
	ck_assert_uint_eq(ser.v[0].arenas[0].nthreads, 3);
	ck_assert_uint_eq(ser.v[0].arenas[0].active, 16384);
	ck_assert_uint_eq(ser.v[0].arenas[0].small_allocated, 10);
	ck_assert_uint_eq(ser.v[1].allocated, 20);
	ck_assert_uint_eq(ser.v[1].iter, 1);
	jma_series_free(&ser);
}
END_TEST

START_TEST(test_report_bad_series)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ "", "no samples" },
		{ "{\"allocated\": 1}\n{\"allocated\": ", "document 2: line 2" },
		{ "[1, 2]", "not a JSON object" },
		{ "{\"foo\": 1}", "neither a watch record" },
		{ "{\"allocated\": \"x\"}", "\"allocated\" is not a byte count" },
		{ "{\"allocated\": 1, \"arenas\": [{\"pactive\": 3}]}", "no \"arena\" number" },
		{ "{\"allocated\": 1, \"arenas\": [{\"arena\": 0, \"pactive\": 3}]}", "page size" },
		{ "{\"jemalloc\": {\"version\": \"5\"}}", "without \"stats\"" },
	};
	struct jma_series ser;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		ck_assert_int_eq(jma_series_parse(bad[i].text, strlen(bad[i].text), &ser, err,
						  sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, bad[i].msg), "case %zu: \"%s\" lacks \"%s\"", i, err,
			      bad[i].msg);
		ck_assert_ptr_null(ser.v);
	}
}
END_TEST

static void svg(FILE *f, void *arg)
{
	struct jma_series *ser = arg;

	ck_assert_int_eq(jma_report_svg(f, ser, JMA_M_ALLOCATED, 0, UINT_MAX, "a <b> & c"), 0);
}

START_TEST(test_report_svg)
{
	struct jma_series ser;
	char *text;
	int paths = 0;

	load(&ser);
	text = capture(svg, &ser);
	for (const char *p = text; (p = strstr(p, "<path ")); p++)
		paths++;
	ck_assert_int_eq(paths, 3);	/* all, arena 3, arena 5 */
	ck_assert_ptr_nonnull(strstr(text, "a &lt;b&gt; &amp; c"));
	ck_assert_ptr_nonnull(strstr(text, "arena 3, peak 300.0 MiB"));
	ck_assert_ptr_nonnull(strstr(text, "</svg>\n"));
	/* arena 5 starts at iteration 2: its line begins with a move there. */
	ck_assert_ptr_nonnull(strstr(text, "stroke=\"#ff7f0e\" stroke-width=\"2\" d=\"M530.0 "));
	free(text);
	jma_series_free(&ser);
}
END_TEST

Suite *suite_report(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_report_parse_size);
	tcase_add_test(tc, test_report_format_size);
	tcase_add_test(tc, test_report_metric_names);
	tcase_add_test(tc, test_report_series_pages_to_bytes);
	tcase_add_test(tc, test_report_abs);
	tcase_add_test(tc, test_report_del);
	tcase_add_test(tc, test_report_eff);
	tcase_add_test(tc, test_report_jsonl_roundtrip);
	tcase_add_test(tc, test_report_csv_and_prom_text);
	tcase_add_test(tc, test_report_stats_documents);
	tcase_add_test(tc, test_report_bad_series);
	tcase_add_test(tc, test_report_svg);
	suite_add_tcase(s, tc);
	return s;
}
