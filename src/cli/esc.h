/* esc.h -- strings from the target or its files, made safe for a terminal. */
#ifndef CLI_ESC_H
#define CLI_ESC_H

#include <stddef.h>
#include <stdio.h>

/* @s with every control byte (below 0x20 but tab, and 0x7f), every C1
 * control (U+0080-U+009F), every bidirectional override or isolate
 * (U+202A-U+202E, U+2066-U+2069: they reorder what is shown) and every byte
 * of an invalid UTF-8 sequence written as \xNN (the bytes of its UTF-8
 * form), and a backslash that starts such a form doubled, as `git` and
 * `ls -q` do: a thread name, a module path or a symbol can then move no
 * cursor, change no title and hide no text.  The result lives in one of a
 * few rotating buffers, valid until the 8th call after; NULL gives
 * "(null)". */
const char *cli_esc(const char *s);

/* The same, newlines kept: text of several lines (messages, reports). */
const char *cli_esc_lines(const char *s);

/* @s as a JSON string, quotes included: valid JSON whatever the bytes (an
 * invalid one is read as Latin-1, U+00XX), with no control, C1 or override
 * character left raw. */
void cli_esc_json_string(FILE *f, const char *s);

/* A stream of text written to @f with cli_esc_lines' escapes, or, with
 * @json, a JSON document whose strings get control bytes, C1 controls,
 * overrides and invalid UTF-8 as \u00XX (\u202E...) and whose bytes
 * outside strings that are never valid there (controls but whitespace,
 * DEL, non-ASCII) become spaces: jemalloc writes its JSON unescaped.  Pieces may cut a character or an escape anywhere. */
struct cli_esc_stream {
	FILE *f;
	int json;
	int in_str, after_bs;		/* JSON: inside a string, after its backslash */
	unsigned char carry[4];		/* the start of a character cut by the piece's end */
	size_t ncarry;
};

/* 0, or -EIO when @f failed. */
int cli_esc_write(struct cli_esc_stream *e, const char *buf, size_t len);
/* Write what is still carried (as bytes that did not complete); 0 or -EIO. */
int cli_esc_finish(struct cli_esc_stream *e);

/* A stream whose text reaches @under through a cli_esc_stream (for the
 * library's writers that take a FILE); fclose finishes it and flushes
 * @under, which stays open.  NULL when out of memory. */
FILE *cli_esc_open(FILE *under, int json);

#endif
