/* jemattach/mallctl.h -- jemalloc's mallctl, run inside the target. */
#ifndef JEMATTACH_MALLCTL_H
#define JEMATTACH_MALLCTL_H

#include <stddef.h>

#include <jemattach/session.h>
#include <jemattach/value.h>
#include <jemattach/api.h>

JMA_API_BEGIN

/* Raw mallctl.  @oldp/@oldlenp are local buffers (copied back from the
 * target); @newp's @newlen bytes are copied into target memory as they are --
 * for pointer values use jma_set with a string.  Returns 0, the errno mallctl
 * returned (negated; kind JMA_ERR_TARGET), or an attach/call error. */
int jma_mallctl(jma_session *s, const char *name, void *oldp, size_t *oldlenp, const void *newp,
		size_t newlen) JMA_MUST_CHECK;

/* Typed read.  The type comes from the table, else is probed.  Reads of
 * "stats.*" refresh the epoch first (once per attachment). */
int jma_get(jma_session *s, const char *name, struct jma_value *out) JMA_MUST_CHECK;
/* The same, read as @type (JMA_T_UNKNOWN: as jma_get) -- for names the table
 * does not know and the probe cannot type, e.g. pointers and arrays' first element. */
int jma_get_as(jma_session *s, const char *name, enum jma_type type, struct jma_value *out)
	JMA_MUST_CHECK;

/* Typed write of @in (its type must match the name's; strings are placed in
 * target scratch memory).  When @old is not NULL and the name is readable, the
 * previous value is returned in it (old->type is JMA_T_UNKNOWN otherwise). */
int jma_set(jma_session *s, const char *name, const struct jma_value *in, struct jma_value *old)
	JMA_MUST_CHECK;

/* Type of @name: from the table, else probed in the target (needs a readable
 * name).  *access is JMA_ACC_R|W as far as known. */
int jma_ctl_type(jma_session *s, const char *name, enum jma_type *type, unsigned *access)
	JMA_MUST_CHECK;

/* The target's jemalloc version as JMA_JEVERSION(major, minor, patch), read
 * once per session; 0 when it cannot be read. */
uint32_t jma_jemalloc_version(jma_session *s);

/* arenas.page in *@page, read once per session: it is fixed when jemalloc
 * is built, and a watch sample saves a call. */
int jma_page_size(jma_session *s, uint64_t *page) JMA_MUST_CHECK;

/* Write the "epoch" so that stats.* are current. */
int jma_refresh(jma_session *s) JMA_MUST_CHECK;

/* What mallctl's errno means in words, for @name. */
const char *jma_mallctl_strerror(const char *name, int err);

JMA_API_END

#endif
