/* esc.c -- control bytes escaped before they reach a terminal (see esc.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define RING 8

/* Where escaped text goes: a buffer large enough, or a stream. */
struct sink {
	char *buf;
	size_t o;
	FILE *f;
	int err;
};

static void put(struct sink *k, const void *p, size_t n)
{
	if (k->f) {
		if (fwrite(p, 1, n, k->f) != n)
			k->err = -EIO;
	} else {
		memcpy(k->buf + k->o, p, n);
		k->o += n;
	}
}

static void put_hex(struct sink *k, const char *fmt, unsigned v)
{
	char b[8];

	put(k, b, (size_t)snprintf(b, sizeof(b), fmt, v));
}

/* The UTF-8 character at @p (@avail bytes): its length with its code point
 * in *@cp, 0 when invalid (overlong, surrogate, past U+10FFFF, a stray
 * byte), -1 when the bytes end inside it. */
static int utf8_char(const unsigned char *p, size_t avail, unsigned *cp)
{
	size_t n;
	unsigned min, c;

	if (*p < 0x80) {
		*cp = *p;
		return 1;
	}
	if ((*p & 0xe0) == 0xc0)
		n = 2, min = 0x80, c = *p & 0x1f;
	else if ((*p & 0xf0) == 0xe0)
		n = 3, min = 0x800, c = *p & 0x0f;
	else if ((*p & 0xf8) == 0xf0)
		n = 4, min = 0x10000, c = *p & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (i >= avail)
			return -1;
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return (int)n;
}

/* Controls (C0 but tab and, when kept, newline; DEL; C1) and the
 * bidirectional overrides and isolates. */
static int unsafe(unsigned cp, int keep_nl)
{
	if (cp == '\t' || (keep_nl && cp == '\n'))
		return 0;
	return cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* How many bytes at @p need nothing: printable ASCII but the backslash (and
 * newlines when kept) -- written at once, not a character at a time. */
static size_t plain_run(const unsigned char *p, size_t n, int keep_nl)
{
	size_t i = 0;

	while (i < n && ((p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') || p[i] == '\t' ||
			 (keep_nl && p[i] == '\n')))
		i++;
	return i;
}

/* [p, p + n) as text; returns how much was taken: all of it when @final,
 * else it stops before a character or a backslash the end cuts. */
static size_t esc_text(struct sink *k, const unsigned char *p, size_t n, int keep_nl, int final)
{
	size_t i = 0;

	while (i < n) {
		unsigned cp;
		size_t run = plain_run(p + i, n - i, keep_nl);
		int m;

		if (run) {
			put(k, p + i, run);
			i += run;
			continue;
		}
		m = utf8_char(p + i, n - i, &cp);
		if (m < 0 && !final)
			break;
		if (m <= 0 || unsafe(cp, keep_nl)) {
			for (int j = 0; j < (m > 0 ? m : 1); j++)
				put_hex(k, "\\x%02x", p[i++]);
			continue;
		}
		if (p[i] == '\\') {
			if (i + 1 == n && !final)
				break;
			/* "\x" written by the target reads as ours unless doubled. */
			if (i + 1 < n && p[i + 1] == 'x')
				put(k, "\\", 1);
		}
		put(k, p + i, (size_t)m);
		i += (size_t)m;
	}
	return i;
}

/* The start of [p, p + n) (n > 0) outside a JSON string: the bytes up to a
 * quote as they are, or that quote (a string begins), or one byte never
 * valid there (a control, DEL, anything not ASCII) as a space.  Returns how
 * many bytes were taken (at least one). */
static size_t json_outside(struct cli_esc_stream *e, struct sink *k, const unsigned char *p,
			   size_t n)
{
	size_t run = 0;

	while (run < n && p[run] != '"' && p[run] < 0x7f &&
	       (p[run] >= 0x20 || p[run] == '\n' || p[run] == '\r' || p[run] == '\t'))
		run++;
	if (run) {
		put(k, p, run);
		return run;
	}
	if (p[0] == '"')
		e->in_str = 1;
	put(k, p[0] == '"' ? "\"" : " ", 1);
	return 1;
}

/* [p, p + n) as a piece of a JSON document (see esc.h); taken as above. */
static size_t esc_json(struct cli_esc_stream *e, struct sink *k, const unsigned char *p, size_t n,
		       int final)
{
	size_t i = 0;

	while (i < n) {
		unsigned cp;
		int m;

		if (!e->in_str) {
			i += json_outside(e, k, p + i, n - i);
			continue;
		}
		if (!e->after_bs) {
			size_t run = 0;

			while (i + run < n && p[i + run] >= 0x20 && p[i + run] < 0x7f &&
			       p[i + run] != '"' && p[i + run] != '\\')
				run++;
			if (run) {
				put(k, p + i, run);
				i += run;
				continue;
			}
		}
		m = utf8_char(p + i, n - i, &cp);
		if (m < 0 && !final)
			break;
		if (m <= 0 || cp < 0x20 || unsafe(cp, 0)) {
			/* An invalid byte is read as Latin-1: U+00XX. */
			put_hex(k, "\\u%04x", m <= 0 ? p[i] : cp);
			i += m > 0 ? (size_t)m : 1;
			e->after_bs = 0;
			continue;
		}
		if (e->after_bs)
			e->after_bs = 0;
		else if (p[i] == '\\')
			e->after_bs = 1;
		else if (p[i] == '"')
			e->in_str = 0;
		put(k, p + i, (size_t)m);
		i += (size_t)m;
	}
	return i;
}

void cli_esc_json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;
	struct sink k = { .f = f };

	put(&k, "\"", 1);
	while (i < n) {
		unsigned cp;
		int m = utf8_char(p + i, n - i, &cp);

		if (m > 0 && (cp == '"' || cp == '\\')) {
			put(&k, cp == '"' ? "\\\"" : "\\\\", 2);
		} else if (m > 0 && (cp == '\n' || cp == '\t')) {
			put(&k, cp == '\n' ? "\\n" : "\\t", 2);
		} else if (m <= 0 || cp < 0x20 || unsafe(cp, 0)) {
			/* An invalid byte is read as Latin-1: U+00XX. */
			put_hex(&k, "\\u%04x", m <= 0 ? p[i] : cp);
			i += m > 0 ? (size_t)m : 1;
			continue;
		} else {
			put(&k, p + i, (size_t)m);
		}
		i += (size_t)m;
	}
	put(&k, "\"", 1);
}

static const char *esc_ring(const char *s, int keep_nl)
{
	static char *ring[RING];
	static size_t cap[RING];
	static unsigned next;
	const char *in = s ? s : "(null)";
	size_t n = strlen(in), need = n * 4 + 1;
	unsigned slot = next++ % RING;
	struct sink k = { 0 };

	if (cap[slot] < need) {
		char *b = realloc(ring[slot], need);

		if (!b)
			return "(out of memory)";
		ring[slot] = b;
		cap[slot] = need;
	}
	k.buf = ring[slot];
	esc_text(&k, (const unsigned char *)in, n, keep_nl, 1);
	k.buf[k.o] = '\0';
	return k.buf;
}

const char *cli_esc(const char *s)
{
	return esc_ring(s, 0);
}

const char *cli_esc_lines(const char *s)
{
	return esc_ring(s, 1);
}

static int esc_piece(struct cli_esc_stream *e, const unsigned char *p, size_t n, int final)
{
	struct sink k = { .f = e->f };
	size_t took = e->json ? esc_json(e, &k, p, n, final) : esc_text(&k, p, n, 1, final);

	/* Never more than 3 bytes of a character, or a backslash, are left. */
	e->ncarry = n - took;
	memmove(e->carry, p + took, e->ncarry);
	return k.err;
}

int cli_esc_write(struct cli_esc_stream *e, const char *buf, size_t len)
{
	unsigned char *tmp;
	int err;

	if (!e->ncarry)
		return esc_piece(e, (const unsigned char *)buf, len, 0);
	tmp = malloc(e->ncarry + len);
	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, e->carry, e->ncarry);
	memcpy(tmp + e->ncarry, buf, len);
	err = esc_piece(e, tmp, e->ncarry + len, 0);
	free(tmp);
	return err;
}

int cli_esc_finish(struct cli_esc_stream *e)
{
	unsigned char tmp[sizeof(e->carry)];
	size_t n = e->ncarry;

	memcpy(tmp, e->carry, n);
	return n ? esc_piece(e, tmp, n, 1) : 0;
}

/* The cookie of cli_esc_open's stream. */
struct esc_file {
	struct cli_esc_stream e;
};

static ssize_t esc_file_write(void *cookie, const char *buf, size_t len)
{
	struct esc_file *x = cookie;

	return cli_esc_write(&x->e, buf, len) ? -1 : (ssize_t)len;
}

static int esc_file_close(void *cookie)
{
	struct esc_file *x = cookie;
	int err = cli_esc_finish(&x->e);

	if (fflush(x->e.f))
		err = -EIO;
	free(x);
	return err ? EOF : 0;
}

FILE *cli_esc_open(FILE *under, int json)
{
	static const cookie_io_functions_t io = { .write = esc_file_write, .close = esc_file_close };
	struct esc_file *x = calloc(1, sizeof(*x));
	FILE *f;

	if (!x)
		return NULL;
	x->e.f = under;
	x->e.json = json;
	f = fopencookie(x, "w", io);
	if (!f)
		free(x);
	return f;
}

int cli_heap_report(jma_heap *h, const struct jma_heap_report_opts *o, FILE *f)
{
	FILE *esc;
	int err;

	/* pprof is binary, for a file: as it is. */
	if (o->format == JMA_HEAP_PPROF)
		return jma_heap_report_file(h, o, f);
	esc = cli_esc_open(f, o->format == JMA_HEAP_JSON);
	if (!esc)
		return -ENOMEM;
	err = jma_heap_report_file(h, o, esc);
	if (fclose(esc) && !err)
		err = -EIO;
	return err;
}
