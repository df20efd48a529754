/* check_ctltable.c -- the mallctl name table across jemalloc versions
 * (src/jemalloc/ctltable.c): pure logic, no process. */
#include <check.h>
#include <errno.h>
#include <stdint.h>

#include <jemattach.h>

#include "jemalloc/ctltable.h"

#define V JMA_JEVERSION

/* The type @name has in jemalloc @version; JMA_T_UNKNOWN when the lookup fails. */
static enum jma_type type_in(const char *name, uint32_t version)
{
	enum jma_type t;
	unsigned a;

	return jma_ctl_lookup_v(name, version, &t, &a) ? JMA_T_UNKNOWN : t;
}

START_TEST(test_ctltable_jeversion_parse)
{
	ck_assert_uint_eq(jma_jeversion_parse("5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c"),
			  V(5, 3, 0));
	ck_assert_uint_eq(jma_jeversion_parse("5.3.1-47-g295e48944b200b595a72902a81e1ed8cad6a3866"),
			  V(5, 3, 1));
	ck_assert_uint_eq(jma_jeversion_parse("3.6.0-0-g46c0af68"), V(3, 6, 0));
	/* Two components are a version; one, text, a component over 255 or NULL are not. */
	ck_assert_uint_eq(jma_jeversion_parse("4.5"), V(4, 5, 0));
	ck_assert_uint_eq(jma_jeversion_parse("5"), 0);
	ck_assert_uint_eq(jma_jeversion_parse("dev"), 0);
	ck_assert_uint_eq(jma_jeversion_parse("5.256.0"), 0);
	ck_assert_uint_eq(jma_jeversion_parse(""), 0);
	ck_assert_uint_eq(jma_jeversion_parse(NULL), 0);
	/* Comparable as numbers: the order of releases. */
	ck_assert_uint_lt(V(4, 5, 0), V(5, 0, 1));
	ck_assert_uint_lt(V(5, 2, 1), V(5, 3, 0));
}
END_TEST

/* Names whose type changed get the type of the target's version. */
START_TEST(test_ctltable_types_follow_the_version)
{
	ck_assert_int_eq(type_in("opt.narenas", V(3, 6, 0)), JMA_T_SIZE);
	ck_assert_int_eq(type_in("opt.narenas", V(4, 5, 0)), JMA_T_UNSIGNED);
	ck_assert_int_eq(type_in("opt.junk", V(3, 6, 0)), JMA_T_BOOL);
	ck_assert_int_eq(type_in("opt.junk", V(5, 3, 0)), JMA_T_STRING);
	ck_assert_int_eq(type_in("opt.thp", V(4, 5, 0)), JMA_T_BOOL);
	ck_assert_int_eq(type_in("opt.thp", V(5, 2, 1)), JMA_T_STRING);
	ck_assert_int_eq(type_in("arenas.nlruns", V(3, 6, 0)), JMA_T_SIZE);
	/* stats.cactive: a pointer to the counter before 5.0, gone after. */
	ck_assert_int_eq(type_in("stats.cactive", V(4, 5, 0)), JMA_T_SIZEP);
	ck_assert_int_eq(type_in("stats.cactive", V(5, 0, 1)), JMA_T_UNKNOWN);
	/* Version 0 (unknown) is the newest. */
	ck_assert_int_eq(type_in("opt.narenas", 0), JMA_T_UNSIGNED);
	ck_assert_int_eq(type_in("opt.thp", 0), JMA_T_STRING);
	/* The boundary is exclusive: 4.0.0 already has the new type. */
	ck_assert_int_eq(type_in("opt.narenas", V(4, 0, 0)), JMA_T_UNSIGNED);
	ck_assert_int_eq(type_in("opt.narenas", V(3, 255, 255)), JMA_T_SIZE);
}
END_TEST

START_TEST(test_ctltable_versioned)
{
	ck_assert(ctl_is_versioned("opt.narenas"));
	ck_assert(ctl_is_versioned("stats.cactive"));
	ck_assert(!ctl_is_versioned("stats.allocated"));
	ck_assert(!ctl_is_versioned("no.such.name"));
}
END_TEST

/* '#' is one all-digit component, '*' any one component, and nothing more. */
START_TEST(test_ctltable_patterns)
{
	ck_assert_int_eq(type_in("stats.arenas.4096.bins.3.mutex.num_ops", 0), JMA_T_U64);
	ck_assert_int_eq(type_in("stats.arenas.0.bins.0.mutex.max_num_thds", 0), JMA_T_U32);
	ck_assert_int_eq(type_in("stats.arenas.1.mutexes.large.max_num_thds", 0), JMA_T_U32);
	ck_assert_int_eq(type_in("stats.arenas.1.mutexes.large.num_wait", 0), JMA_T_U64);
	ck_assert_int_eq(type_in("stats.arenas.x.bins.3.mutex.num_ops", 0), JMA_T_UNKNOWN);
	ck_assert_int_eq(type_in("stats.arenas..pdirty", 0), JMA_T_UNKNOWN);
	ck_assert_int_eq(type_in("stats.arenas.1.mutexes.large", 0), JMA_T_UNKNOWN);
	ck_assert_int_eq(type_in("stats.arenas.1.mutexes.large.num_wait.more", 0), JMA_T_UNKNOWN);
	/* Listed as unknown on purpose: their type is probed, never guessed. */
	ck_assert_int_eq(type_in("stats.arenas.0.hpa_shard.npageslabs", 0), JMA_T_UNKNOWN);
	ck_assert_int_eq(type_in("experimental.hooks.install", 0), JMA_T_UNKNOWN);
	ck_assert_int_eq(type_in("", 0), JMA_T_UNKNOWN);
}
END_TEST

/* When a name appeared or went away, so that messages can say so. */
START_TEST(test_ctltable_spans)
{
	uint32_t since = 1, until = 1;

	ck_assert(ctl_span_find("stats.cactive", &since, &until));
	ck_assert_uint_eq(since, 0);
	ck_assert_uint_eq(until, V(5, 0, 0));
	ck_assert(ctl_span_find("arena.12.decay", &since, &until));
	ck_assert_uint_eq(since, V(4, 0, 0));
	ck_assert_uint_eq(until, 0);
	ck_assert(ctl_span_find("arenas.decay_time", &since, &until));
	ck_assert_uint_eq(since, V(4, 0, 0));
	ck_assert_uint_eq(until, V(5, 0, 0));
	ck_assert(ctl_span_find("prof.prefix", &since, &until));
	ck_assert_uint_eq(since, V(5, 3, 0));
	ck_assert(!ctl_span_find("arena.all.decay", &since, &until));
	ck_assert(!ctl_span_find("stats.allocated", &since, &until));
}
END_TEST

Suite *suite_ctltable(void)
{
	Suite *s = suite_create("ctltable");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_ctltable_jeversion_parse);
	tcase_add_test(tc, test_ctltable_types_follow_the_version);
	tcase_add_test(tc, test_ctltable_versioned);
	tcase_add_test(tc, test_ctltable_patterns);
	tcase_add_test(tc, test_ctltable_spans);
	suite_add_tcase(s, tc);
	return s;
}
