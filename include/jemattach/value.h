/* jemattach/value.h -- typed mallctl values and the table of known names. */
#ifndef JEMATTACH_VALUE_H
#define JEMATTACH_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
};

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

/* Look @name up in the table of jemalloc 3.x-5.x names ("stats.arenas.3.pdirty"
 * matches "stats.arenas.<i>.pdirty").  Returns 0, or -ENOENT when unknown. */
int jma_ctl_lookup(const char *name, enum jma_type *type, unsigned *access);

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

#endif
