/* sized.h -- the public structs that can grow (jemattach/api.h's JMA_OPTS),
 * read and written at the size their caller was built with (libbpf's
 * OPTS_VALID and its copy, in spirit): a program built against an older
 * header passes a shorter struct, which reads as ours with the new fields
 * zero; one built against a newer header is accepted while it leaves what
 * we do not know zero.  Inline: every layer's entry points use it, the heap
 * layer's fuzz build included, which links no core. */
#ifndef JEMATTACH_CORE_SIZED_H
#define JEMATTACH_CORE_SIZED_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* @in (NULL: every field zero), a struct the caller built with sz = the
 * size it knew, into @out (@size bytes, ours): what it gave, the newer
 * fields zero, @out's sz ours.  -EINVAL when sz does not even hold sz;
 * -E2BIG when it is longer than ours and sets a field we do not know (a
 * program built against a newer library).  @out unchanged on error. */
static inline int sized_in(const void *in, void *out, size_t size)
{
	size_t sz;

	if (!in) {
		memset(out, 0, size);
		memcpy(out, &size, sizeof(size));
		return 0;
	}
	memcpy(&sz, in, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	for (size_t i = size; i < sz; i++)
		if (((const unsigned char *)in)[i])
			return -E2BIG;
	memset(out, 0, size);
	memcpy(out, in, sz < size ? sz : size);
	memcpy(out, &size, sizeof(size));
	return 0;
}
#define SIZED_IN(in, out) sized_in((in), (out), sizeof(*(out)))

/* The result @src (@size bytes, ours) into the caller's @dst, as much of it
 * as the caller's sz holds, its sz left as the caller set it.  -EINVAL when
 * that sz is smaller than @min (the fields every caller has) or @dst NULL. */
static inline int sized_out(void *dst, const void *src, size_t size, size_t min)
{
	size_t sz;

	if (!dst)
		return -EINVAL;
	memcpy(&sz, dst, sizeof(sz));
	if (sz < min)
		return -EINVAL;
	memcpy((char *)dst + sizeof(sz), (const char *)src + sizeof(sz),
	       (sz < size ? sz : size) - sizeof(sz));
	return 0;
}

/* The caller's sz of the result struct at @dst (0: NULL). */
static inline size_t sized_of(const void *dst)
{
	size_t sz = 0;

	if (dst)
		memcpy(&sz, dst, sizeof(sz));
	return sz;
}

#endif
