/* bits.c -- a set of block numbers: a bitmap with summaries, to find the next member fast.
 *
 * Level 0 has a bit per block; each level above a bit per word of the one
 * below, set while that word is not zero.  cen_bits_next skips an empty
 * stretch of 64^k blocks in one word at level k: a pass over a few members
 * of a set of a hundred million costs a few words each, not the whole
 * bitmap (the leak scan's passes over what is pending, issue 42).  About
 * 1.02 bits per block.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

int cen_bits_init(struct cen_bits *s, size_t n)
{
	size_t words = n / 64 + 1;

	memset(s, 0, sizeof(*s));
	s->n = n;
	do {
		if (s->nlv == CEN_BITS_LEVELS || !(s->lv[s->nlv] = calloc(words, 8))) {
			cen_bits_free(s);
			return -ENOMEM;
		}
		s->nw[s->nlv++] = words;
		words = (words + 63) / 64;
	} while (s->nw[s->nlv - 1] > 1);
	return 0;
}

void cen_bits_free(struct cen_bits *s)
{
	for (unsigned l = 0; l < s->nlv; l++)
		free(s->lv[l]);
	memset(s, 0, sizeof(*s));
}

size_t cen_bits_bytes(const struct cen_bits *s)
{
	size_t b = 0;

	for (unsigned l = 0; l < s->nlv; l++)
		b += s->nw[l] * 8;
	return b;
}

void cen_bits_set(struct cen_bits *s, size_t i)
{
	for (unsigned l = 0; l < s->nlv; l++, i /= 64) {
		uint64_t *w = &s->lv[l][i / 64], was = *w;
		*w |= 1ULL << (i % 64);
		if (was)
			break;	/* the levels above knew already */
	}
}

void cen_bits_clear(struct cen_bits *s, size_t i)
{
	for (unsigned l = 0; l < s->nlv; l++, i /= 64) {
		uint64_t *w = &s->lv[l][i / 64];
		*w &= ~(1ULL << (i % 64));
		if (*w)
			break;	/* still not empty: the levels above stay */
	}
}

int cen_bits_test(const struct cen_bits *s, size_t i)
{
	return (int)(s->lv[0][i / 64] >> (i % 64) & 1);
}

size_t cen_bits_next(const struct cen_bits *s, size_t i)
{
	unsigned l = 0;

	if (i >= s->n)
		return SIZE_MAX;
	/* Up: the first level whose word has a member at or after @i. */
	for (;;) {
		uint64_t w = s->lv[l][i / 64] & (~0ULL << (i % 64));
		if (w) {
			i = (i / 64) * 64 + (size_t)__builtin_ctzll(w);
			break;
		}
		/* The next word of this level, as a bit of the one above. */
		i = i / 64 + 1;
		if (++l == s->nlv || i >= s->nw[l - 1])
			return SIZE_MAX;
	}
	/* Down: the first member under that bit. */
	while (l--) {
		uint64_t w = s->lv[l][i];
		i = i * 64 + (size_t)__builtin_ctzll(w);
	}
	return i < s->n ? i : SIZE_MAX;
}
