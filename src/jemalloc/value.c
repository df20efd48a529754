/* value.c -- parsing, formatting and decoding typed mallctl values. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jemattach/value.h>

static const char *const type_names[] = {
	[JMA_T_UNKNOWN] = "unknown", [JMA_T_BOOL] = "bool", [JMA_T_UNSIGNED] = "unsigned",
	[JMA_T_SIZE] = "size_t", [JMA_T_SSIZE] = "ssize_t", [JMA_T_U64] = "uint64_t",
	[JMA_T_U32] = "uint32_t", [JMA_T_STRING] = "string", [JMA_T_VOID] = "void",
	[JMA_T_SIZEP] = "size_t *",
};

const char *jma_type_name(enum jma_type t)
{
	return (unsigned)t < sizeof(type_names) / sizeof(*type_names) ? type_names[t] : "?";
}

enum jma_type jma_type_from_name(const char *s)
{
	for (unsigned i = 1; i < sizeof(type_names) / sizeof(*type_names); i++)
		if (!strcmp(s, type_names[i]))
			return (enum jma_type)i;
	if (!strcmp(s, "size") || !strcmp(s, "size_t"))
		return JMA_T_SIZE;
	if (!strcmp(s, "ssize"))
		return JMA_T_SSIZE;
	if (!strcmp(s, "u64"))
		return JMA_T_U64;
	if (!strcmp(s, "u32"))
		return JMA_T_U32;
	if (!strcmp(s, "str") || !strcmp(s, "const char *"))
		return JMA_T_STRING;
	return JMA_T_UNKNOWN;
}

size_t jma_type_size(enum jma_type t)
{
	switch (t) {
	case JMA_T_BOOL: return sizeof(bool);
	case JMA_T_UNSIGNED: return sizeof(unsigned);
	case JMA_T_U32: return sizeof(uint32_t);
	case JMA_T_SIZE: return sizeof(size_t);
	case JMA_T_SSIZE: return sizeof(ssize_t);
	case JMA_T_U64: return sizeof(uint64_t);
	case JMA_T_SIZEP: return sizeof(size_t *);
	default: return 0;
	}
}

void jma_value_clear(struct jma_value *v)
{
	free(v->str);
	memset(v, 0, sizeof(*v));
}

/* Unsigned with optional 0x prefix and, when @suffixes, a K/M/G/T multiplier. */
static int parse_u64(const char *text, int suffixes, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!*text || *text == '-' || *text == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == text)
		return -EINVAL;
	if (suffixes && *end) {
		switch (*end) {
		case 'k': case 'K': mul = 1ULL << 10; break;
		case 'm': case 'M': mul = 1ULL << 20; break;
		case 'g': case 'G': mul = 1ULL << 30; break;
		case 't': case 'T': mul = 1ULL << 40; break;
		default: return -EINVAL;
		}
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
	}
	if (*end)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

int jma_value_parse(enum jma_type type, const char *text, struct jma_value *out)
{
	uint64_t u;
	int err;

	memset(out, 0, sizeof(*out));
	out->type = type;
	switch (type) {
	case JMA_T_BOOL:
		if (!strcasecmp(text, "true") || !strcmp(text, "1") || !strcasecmp(text, "on"))
			out->b = true;
		else if (!strcasecmp(text, "false") || !strcmp(text, "0") || !strcasecmp(text, "off"))
			out->b = false;
		else
			return -EINVAL;
		return 0;
	case JMA_T_SSIZE: {
		char *end;
		long long v;
		errno = 0;
		v = strtoll(text, &end, 0);
		if (!*text || *end)
			return -EINVAL;
		if (errno == ERANGE)
			return -ERANGE;
		out->sz = (ssize_t)v;
		return 0;
	}
	case JMA_T_UNSIGNED:
	case JMA_T_U32:
		if ((err = parse_u64(text, 0, &u)))
			return err;
		if (u > UINT32_MAX)
			return -ERANGE;
		if (type == JMA_T_U32)
			out->u32 = (uint32_t)u;
		else
			out->u = (unsigned)u;
		return 0;
	case JMA_T_SIZE:
	case JMA_T_U64:
		if ((err = parse_u64(text, type == JMA_T_SIZE, &u)))
			return err;
		if (type == JMA_T_SIZE)
			out->z = (size_t)u;
		else
			out->u64 = u;
		return 0;
	case JMA_T_STRING:
		out->str = strdup(text);
		return out->str ? 0 : -ENOMEM;
	case JMA_T_VOID:
		return *text ? -EINVAL : 0;
	default:
		return -EINVAL;
	}
}

int jma_value_format(const struct jma_value *v, char *buf, size_t len)
{
	switch (v->type) {
	case JMA_T_BOOL: return snprintf(buf, len, "%s", v->b ? "true" : "false");
	case JMA_T_UNSIGNED: return snprintf(buf, len, "%u", v->u);
	case JMA_T_U32: return snprintf(buf, len, "%" PRIu32, v->u32);
	case JMA_T_SIZE: return snprintf(buf, len, "%zu", v->z);
	case JMA_T_SSIZE: return snprintf(buf, len, "%zd", v->sz);
	case JMA_T_U64: return snprintf(buf, len, "%" PRIu64, v->u64);
	case JMA_T_STRING: return snprintf(buf, len, "%s", v->str ? v->str : "(null)");
	default: return snprintf(buf, len, "(none)");
	}
}

int jma_value_from_bytes(enum jma_type type, const void *raw, size_t len, struct jma_value *out)
{
	memset(out, 0, sizeof(*out));
	if (type == JMA_T_UNKNOWN)
		type = len == 1 ? JMA_T_BOOL : len == 4 ? JMA_T_UNSIGNED : len == 8 ? JMA_T_U64
										: JMA_T_UNKNOWN;
	if (type == JMA_T_UNKNOWN || type == JMA_T_STRING || len != jma_type_size(type))
		return -EINVAL;
	out->type = type;
	switch (type) {
	case JMA_T_BOOL: out->b = *(const unsigned char *)raw != 0; break;
	case JMA_T_UNSIGNED: memcpy(&out->u, raw, len); break;
	case JMA_T_U32: memcpy(&out->u32, raw, len); break;
	case JMA_T_SIZE: memcpy(&out->z, raw, len); break;
	case JMA_T_SSIZE: memcpy(&out->sz, raw, len); break;
	case JMA_T_U64: memcpy(&out->u64, raw, len); break;
	default: return -EINVAL;
	}
	return 0;
}
