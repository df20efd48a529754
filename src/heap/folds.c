/* folds.c -- what a report folds away: allocator entry points, always, and
 * the well-known wrappers of daemons that link jemalloc, by default.
 *
 * A folded frame and everything under it (toward the leaf) is the
 * allocator's business; the site is the first frame above them.
 */
#include <string.h>

#include "heap/heap.h"

/* The malloc API, jemalloc's non-standard API, glibc's internal names, the
 * dynamic linker's own malloc (ld.so's minimal malloc, used until libc's is
 * relocated; glibc before 2.32 exported it from ld.so as malloc, calloc...),
 * Rust's global allocator shims. */
static const char *const alloc_fns[] = {
	"malloc", "calloc", "realloc", "reallocarray", "reallocf", "free", "cfree", "memalign",
	"posix_memalign", "aligned_alloc", "valloc", "pvalloc", "mallocx", "rallocx", "xallocx",
	"smallocx", "dallocx", "sdallocx", "sdallocx_noflags", "__libc_malloc", "__libc_calloc",
	"__libc_realloc", "__libc_memalign", "__libc_valloc", "__libc_pvalloc", "__minimal_malloc",
	"__minimal_calloc", "__minimal_realloc", "__rust_alloc", "__rust_alloc_zeroed",
	"__rust_realloc", "__rg_alloc", "__rg_alloc_zeroed", "__rg_realloc", "__rdl_alloc",
	"__rdl_alloc_zeroed", "__rdl_realloc",
};

/* Prefixes: jemalloc's private namespace (je_*), tikv-jemallocator's
 * (_rjem_*), C++'s operator new and new[] in all their variants. */
static const char *const alloc_prefixes[] = { "je_", "_rjem_", "_Znw", "_Zna" };

int heap_is_alloc_fn(const char *name)
{
	for (size_t i = 0; i < sizeof(alloc_prefixes) / sizeof(*alloc_prefixes); i++)
		if (!strncmp(name, alloc_prefixes[i], strlen(alloc_prefixes[i])))
			return 1;
	for (size_t i = 0; i < sizeof(alloc_fns) / sizeof(*alloc_fns); i++)
		if (!strcmp(name, alloc_fns[i]))
			return 1;
	return 0;
}

/* Wrappers that only pass a request on to malloc: their callers are the sites. */
static const struct jma_heap_fold fold_rules[] = {
	{ "Redis", "^(z|ztry)(malloc|calloc|realloc)(_usable|_num|_no_tcache)?(_internal)?$|"
		   "^zstrdup$|^extend_to_usable$" },
	{ "BIND (ISC)", "^isc_+mem_(get|allocate|reallocate|reget|strdup|strndup|cget|callocate)|"
			"^isc_+mempool_get|^mem_(get|allocate|reallocate)$" },
	/* ATS's ink_memory and freelists; C++ builds may mangle them: the
	 * demangled form "ats_malloc(unsigned long)" matches too. */
	{ "Traffic Server", "^(ats_(malloc|calloc|realloc|memalign|track_malloc|track_realloc)|"
			    "_xstrdup|ink_freelist_new)(\\(.*)?$" },
	{ "Varnish", "^WS_(Alloc|Copy|Printf|VSB_finish)$|^sma_(alloc|realloc)$" },
	{ "nghttp2", "^nghttp2_mem_(malloc|calloc|realloc)$|^default_(malloc|calloc|realloc)$" },
	{ "Knot", "^mm_(alloc|calloc|realloc)$|^mp_alloc$" },
	{ "GLib", "^g_(try_)?(malloc0?|realloc|malloc0?_n|realloc_n)$|^g_(strdup|strndup|memdup2?)$|"
		  "^g_slice_alloc0?$" },
	{ "OpenSSL", "^CRYPTO_(malloc|zalloc|realloc|clear_realloc|strdup|strndup|memdup)$" },
	{ "APR", "^apr_(palloc|pcalloc|pstrdup|pstrndup|pmemdup)$|^(apr_)?allocator_alloc$" },
	{ "libstdc++", "^_ZNSt15__new_allocator.*8allocate|^_ZN9__gnu_cxx13new_allocator.*8allocate" },
	{ "Rust alloc", "^_ZN5alloc5alloc(5alloc|12alloc_zeroed|7realloc|15exchange_malloc)|"
			"^_ZN5alloc7raw_vec" },
};

const struct jma_heap_fold *jma_heap_default_folds(size_t *n)
{
	*n = sizeof(fold_rules) / sizeof(*fold_rules);
	return fold_rules;
}

const char *jma_heap_alloc_fn(size_t i, int *prefix)
{
	size_t np = sizeof(alloc_prefixes) / sizeof(*alloc_prefixes);

	*prefix = i < np;
	if (i < np)
		return alloc_prefixes[i];
	i -= np;
	return i < sizeof(alloc_fns) / sizeof(*alloc_fns) ? alloc_fns[i] : NULL;
}
