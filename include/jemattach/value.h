/* jemattach/value.h -- typed mallctl values and the table of known names. */
#ifndef JEMATTACH_VALUE_H
#define JEMATTACH_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jemattach/api.h>

JMA_API_BEGIN

enum jma_type {
	JMA_T_UNKNOWN,
	JMA_T_BOOL,
	JMA_T_UNSIGNED,		/* unsigned */
	JMA_T_SIZE,		/* size_t */
	JMA_T_SSIZE,		/* ssize_t */
	JMA_T_U64,		/* uint64_t */
	JMA_T_U32,		/* uint32_t */
	JMA_T_STRING,		/* const char * */
	JMA_T_VOID,		/* neither read nor written: an action */
	JMA_T_SIZEP,		/* size_t *: read through the pointer (stats.cactive before 5.0) */
};

/* A jemalloc version as one comparable number: JMA_JEVERSION(5, 3, 0). */
#define JMA_JEVERSION(major, minor, patch) \
	((uint32_t)(((major) << 16) | ((minor) << 8) | (patch)))

#define JMA_ACC_R 1
#define JMA_ACC_W 2

struct jma_value {
	enum jma_type type;
	union {
		bool b;
		unsigned u;
		uint32_t u32;
		size_t z;
		ssize_t sz;
		uint64_t u64;
	};
	char *str;		/* JMA_T_STRING: malloc'ed copy, NULL for a NULL pointer */
};

/* Look @name up in the table of jemalloc 3.x-dev names ("stats.arenas.3.pdirty"
 * matches "stats.arenas.<i>.pdirty") for jemalloc @version (JMA_JEVERSION; 0:
 * the newest).  Returns 0, or -ENOENT when unknown. */
int jma_ctl_lookup_v(const char *name, uint32_t version, enum jma_type *type, unsigned *access);
/* The same for the newest version. */
int jma_ctl_lookup(const char *name, enum jma_type *type, unsigned *access);
/* "5.2.1-0-gea6b3e9..." -> JMA_JEVERSION(5, 2, 1); 0 when unparsable. */
uint32_t jma_jeversion_parse(const char *version);

/* Size in the target of a scalar type; 0 for strings and actions. */
size_t jma_type_size(enum jma_type t);
const char *jma_type_name(enum jma_type t);
/* "bool", "unsigned", "size_t", ... back to the type; JMA_T_UNKNOWN if none. */
enum jma_type jma_type_from_name(const char *s);

/* Parse @text as a value of @type: bools take true/false/1/0, integers decimal
 * or 0x hex, sizes also K/M/G suffixes.  -EINVAL on bad input, -ERANGE when it
 * does not fit. */
int jma_value_parse(enum jma_type type, const char *text, struct jma_value *out);
/* Format for people and for JSON ("true", "1234", the string).  Returns the
 * length that was needed, as snprintf does. */
int jma_value_format(const struct jma_value *v, char *buf, size_t len);
void jma_value_clear(struct jma_value *v);

/* Decode @len raw bytes read from the target into @out, given the probed size
 * when @type is unknown (1 -> bool, 4 -> unsigned, 8 -> uint64_t). */
int jma_value_from_bytes(enum jma_type type, const void *raw, size_t len, struct jma_value *out);

JMA_API_END

#endif
