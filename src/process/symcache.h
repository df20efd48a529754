/* symcache.h -- what finding jemalloc found, kept between runs, keyed by the build-ids of a process's code.
 *
 * Finding jemalloc opens and parses every code file the process maps: on
 * Redis (18 files) about 1.2 ms of a 5.5 ms `get`, and tearing libdwfl
 * down again 0.25 ms more.  So does finding the pthread_cond_*wait functions
 * (the stuck look asks about jemalloc's background thread, asleep in one:
 * 0.3 ms more on Redis), jemalloc's malloc_message variable (`stats` reads
 * it: every module's symbol table, 3-4 ms) and the rt_sigreturn trampoline
 * (a scan of libc's code, 0.1 ms).  All depend only on those files, so they
 * are kept in a directory the caller names, under a key made of every code
 * file's path, device and inode (the kernel's, from the maps) and GNU
 * build-id, read from the target's own memory (the bytes it runs, not the
 * disk): a file rebuilt, replaced or loaded anew changes the key, and a
 * build-id a target forges in its memory cannot stand for another file.  A
 * code file without a build-id, or loaded twice (dlmopen), means no caching.
 *
 * An entry names addresses we will make the target call: the directory and
 * the entries must belong to our user and be writable by nobody else, or
 * they are not read; one is made only inside a directory of ours.
 */
#ifndef JMA_PROCESS_SYMCACHE_H
#define JMA_PROCESS_SYMCACHE_H

#include <stddef.h>
#include <sys/types.h>

#include "attach/procfs.h"
#include "symbols/symbols.h"

/* The key of @pid's code files in @maps and of the search's restrictions
 * (@prefix, @module: NULL for any).  NULL when the process cannot be cached
 * (a code file without a build-id, memory unreadable) or out of memory;
 * free() it. */
char *proc_symcache_key(pid_t pid, const struct att_map *maps, size_t n, const char *prefix,
		       const char *module);

/* What was kept under @key in @dir, its addresses relocated to where @maps
 * has their files: 0, or -ENOENT when there is none to use (missing, another
 * key, malformed, not ours alone).  Its path, prefix, code and waits are
 * malloc'ed. */
int proc_symcache_load(const char *dir, const char *key, const struct att_map *maps, size_t n,
		      struct jma_found *f);

/* Keep @f under @key in @dir (made with mode 0700 when missing, as its
 * parent is).  Written whole or not at all; then what killed writers left
 * is removed, and the oldest written entries past 256.  0 or -errno. */
int proc_symcache_save(const char *dir, const char *key, const struct att_map *maps, size_t n,
		      const struct jma_found *f);

/* The cache in @dir as syms_open uses it (u->hooks, symbols.h), for a
 * search restricted to @prefix and @module (NULL: any): the key is made by
 * the load, from the maps the open read.  @u outlives the open;
 * proc_symcache_done frees what it made. */
struct proc_symcache_use {
	struct jma_syms_cache hooks;
	const char *dir, *prefix, *module;
	char *key;
};
void proc_symcache_use(struct proc_symcache_use *u, const char *dir, const char *prefix,
		      const char *module);
void proc_symcache_done(struct proc_symcache_use *u);

#endif
