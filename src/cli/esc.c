/* esc.c -- control bytes escaped before they reach a terminal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/esc.h"

#define RING 8

/* Length of the valid UTF-8 sequence at @p (1 for ASCII), 0 if invalid. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n;
	unsigned min;
	unsigned cp;

	if (*p < 0x80)
		return 1;
	if ((*p & 0xe0) == 0xc0)
		n = 2, min = 0x80, cp = *p & 0x1f;
	else if ((*p & 0xf0) == 0xe0)
		n = 3, min = 0x800, cp = *p & 0x0f;
	else if ((*p & 0xf8) == 0xf0)
		n = 4, min = 0x10000, cp = *p & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and C1 controls (U+0080-U+009F) are escaped. */
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa0)
		return 0;
	return n;
}

const char *cli_esc(const char *s)
{
	static char *ring[RING];
	static size_t cap[RING];
	static unsigned next;
	const unsigned char *p = (const unsigned char *)(s ? s : "(null)");
	size_t need = strlen((const char *)p) * 4 + 1, o = 0;
	unsigned slot = next++ % RING;
	char *out;

	if (cap[slot] < need) {
		char *n = realloc(ring[slot], need);

		if (!n)
			return "(out of memory)";
		ring[slot] = n;
		cap[slot] = need;
	}
	out = ring[slot];
	while (*p) {
		size_t n = utf8_len(p);

		if (n == 1 && ((*p < 0x20 && *p != '\t') || *p == 0x7f)) {
			o += (size_t)sprintf(out + o, "\\x%02x", *p++);
		} else if (n == 1 && *p == '\\' && p[1] == 'x') {
			out[o++] = '\\';
			out[o++] = *p++;
		} else if (!n) {
			o += (size_t)sprintf(out + o, "\\x%02x", *p++);
		} else {
			memcpy(out + o, p, n);
			o += n;
			p += n;
		}
	}
	out[o] = '\0';
	return out;
}
