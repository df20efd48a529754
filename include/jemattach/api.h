/* jemattach/api.h -- what marks libjemattach's public face.
 *
 * The library is compiled with -fvisibility=hidden, so nothing is exported
 * unless declared between JMA_API_BEGIN and JMA_API_END: every public header
 * puts its declarations there, and a function added to a public header is
 * exported without further marking.  The version script
 * (src/libjemattach.map) then exports only the jma_* names among them.
 */
#ifndef JEMATTACH_API_H
#define JEMATTACH_API_H

#define JMA_API_BEGIN _Pragma("GCC visibility push(default)")
#define JMA_API_END _Pragma("GCC visibility pop")

/* Structs that can grow: every options struct, and every result struct the
 * caller provides, opens with `size_t sz`, the size the caller was built
 * with, as libbpf's opts do.  Declare one with JMA_OPTS, which sets it:
 *
 *   JMA_OPTS(jma_census_opts, o, .flags = JMA_CENSUS_TYPES);
 *   jma_census_run(s, &o, &c);
 *
 * (or `struct jma_census_opts o = { .sz = sizeof(o), ... }`).  A library newer
 * than the program reads its shorter struct with the newer fields zero and
 * fills only what its result struct holds; an older library refuses a
 * struct that sets fields it does not know (-E2BIG) and any sz too small
 * to be one (-EINVAL).  Structs the library allocates (jma_census, ...) grow
 * at their end only.  src/libjemattach.map has the rule for the rest. */
#define JMA_OPTS(TYPE, NAME, ...) struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

#endif
