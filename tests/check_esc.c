/* check_esc.c -- cli_esc and its streams: nothing a terminal acts on gets through.
 * The CLI is not in libjemattach: its one file is compiled in here. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../src/cli/esc.c"

/* Does @s hold a byte a terminal acts on (C0 but \t and, with @nl, \n; DEL)
 * or the UTF-8 lead of a C1 control? */
static int has_control(const char *s, int nl)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p < 0x20 && *p != '\t' && !(nl && *p == '\n')) || *p == 0x7f ||
		    (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
			return 1;
	return 0;
}

START_TEST(test_esc_controls)
{
	ck_assert_str_eq(cli_esc("plain name"), "plain name");
	ck_assert_str_eq(cli_esc("a\x1b]0;t\x07z"), "a\\x1b]0;t\\x07z");
	ck_assert_str_eq(cli_esc("tab\tnl\ncr\r"), "tab\tnl\\x0acr\\x0d");
	ck_assert_str_eq(cli_esc("del\x7f"), "del\\x7f");
	ck_assert_str_eq(cli_esc(NULL), "(null)");
	ck_assert_str_eq(cli_esc(""), "");
}
END_TEST

START_TEST(test_esc_utf8)
{
	/* Valid text passes, C1 (U+009B is CSI), overrides, bad bytes do not. */
	ck_assert_str_eq(cli_esc("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");
	ck_assert_str_eq(cli_esc("\xc2\x9b" "2J"), "\\xc2\\x9b2J");
	ck_assert_str_eq(cli_esc("a\xe2\x80\xae" "b"), "a\\xe2\\x80\\xaeb");
	ck_assert_str_eq(cli_esc("\xe2\x81\xa6x"), "\\xe2\\x81\\xa6x");
	ck_assert_str_eq(cli_esc("\xff\xc0\xaf"), "\\xff\\xc0\\xaf");
	ck_assert_str_eq(cli_esc("\xed\xa0\x80"), "\\xed\\xa0\\x80");
	ck_assert_str_eq(cli_esc("cut \xe2\x82"), "cut \\xe2\\x82");
}
END_TEST

START_TEST(test_esc_backslash)
{
	/* A target's own "\x1b" text is told from ours. */
	ck_assert_str_eq(cli_esc("\\x1b"), "\\\\x1b");
	ck_assert_str_eq(cli_esc("a\\b\\"), "a\\b\\");
}
END_TEST

START_TEST(test_esc_lines)
{
	ck_assert_str_eq(cli_esc_lines("one\ntwo\x1b[2J\n"), "one\ntwo\\x1b[2J\n");
}
END_TEST

START_TEST(test_esc_ring)
{
	const char *a = cli_esc("first\x01");
	char keep[32];

	strcpy(keep, a);
	for (int i = 0; i < 7; i++)
		cli_esc("other");
	ck_assert_str_eq(a, keep);
}
END_TEST

/* Every byte value through cli_esc: never a control out. */
START_TEST(test_esc_all_bytes)
{
	char in[3] = { 0 };

	for (int a = 1; a < 256; a++)
		for (int b = 0; b < 256; b++) {
			in[0] = (char)a;
			in[1] = (char)b;
			ck_assert_msg(!has_control(cli_esc(in), 0), "bytes %02x %02x", a, b);
		}
}
END_TEST

/* Write @in to a stream in pieces of @piece bytes; the output, NUL-ended, malloc'd. */
static char *through(const char *in, size_t len, int json, size_t piece)
{
	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	struct cli_esc_stream e = { .f = f, .json = json };

	for (size_t i = 0; i < len; i += piece)
		ck_assert_int_eq(cli_esc_write(&e, in + i, len - i < piece ? len - i : piece), 0);
	ck_assert_int_eq(cli_esc_finish(&e), 0);
	fclose(f);
	return out;
}

START_TEST(test_esc_stream_text)
{
	static const char in[] = "line \xe2\x82\xac one\n\x1b[31mred\\x\xc2\x9b\n";
	char *whole = through(in, sizeof(in) - 1, 0, sizeof(in));

	ck_assert_str_eq(whole, "line \xe2\x82\xac one\n\\x1b[31mred\\\\x\\xc2\\x9b\n");
	/* Cut anywhere, the same. */
	for (size_t piece = 1; piece < sizeof(in); piece++) {
		char *cut = through(in, sizeof(in) - 1, 0, piece);

		ck_assert_str_eq(cut, whole);
		free(cut);
	}
	free(whole);
}
END_TEST

START_TEST(test_esc_stream_json)
{
	/* jemalloc writes strings as they are: a prefix with escapes, a bad byte. */
	static const char in[] = "{\"opt\": {\"prof_prefix\": \"jeprof\x1b]0;t\x07\t\xff\\\"x\", "
				 "\"n\": 1}\x01\xc2\x9b}\n";
	json_error_t err;
	json_t *j;

	for (size_t piece = 1; piece < sizeof(in); piece++) {
		char *out = through(in, sizeof(in) - 1, 1, piece);

		ck_assert_msg(!has_control(out, 1), "piece %zu: %s", piece, out);
		j = json_loads(out, 0, &err);
		ck_assert_msg(j != NULL, "piece %zu: %s: %s", piece, err.text, out);
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "opt"),
								   "prof_prefix")),
				 "jeprof\x1b]0;t\x07\t\xc3\xbf\"x");
		json_decref(j);
		free(out);
	}
}
END_TEST

/* The CLI's own JSON strings: valid for any bytes, nothing raw. */
START_TEST(test_esc_json_string)
{
	static const char in[] = "q\"b\\n\nt\te\x1b\xc2\x9b\xe2\x80\xae\xff\xc3\xa9";
	char *out = NULL, doc[512];
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	json_error_t err;
	json_t *j;

	cli_esc_json_string(f, in);
	fclose(f);
	ck_assert_str_eq(out, "\"q\\\"b\\\\n\\nt\\te\\u001b\\u009b\\u202e\\u00ff\xc3\xa9\"");
	snprintf(doc, sizeof(doc), "[%s]", out);
	j = json_loads(doc, 0, &err);
	ck_assert_msg(j != NULL, "%s: %s", err.text, doc);
	ck_assert_str_eq(json_string_value(json_array_get(j, 0)),
			 "q\"b\\n\nt\te\x1b\xc2\x9b\xe2\x80\xae\xc3\xbf\xc3\xa9");
	json_decref(j);
	free(out);
}
END_TEST

Suite *suite_esc(void)
{
	Suite *s = suite_create("esc");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_esc_controls);
	tcase_add_test(tc, test_esc_utf8);
	tcase_add_test(tc, test_esc_backslash);
	tcase_add_test(tc, test_esc_lines);
	tcase_add_test(tc, test_esc_ring);
	tcase_add_test(tc, test_esc_all_bytes);
	tcase_add_test(tc, test_esc_stream_text);
	tcase_add_test(tc, test_esc_stream_json);
	tcase_add_test(tc, test_esc_json_string);
	suite_add_tcase(s, tc);
	return s;
}
