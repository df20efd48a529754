/* codescan.h -- finding code by its bytes in another process's executable file mappings.
 *
 * What the self-restoring call borrows from the target (the rt_sigreturn
 * trampoline, restorer.h; the text sink, sink.h) is found by the bytes of
 * its instructions, not by symbols: any copy of those bytes does the same
 * thing, started there, and a stripped or static program has them too.
 */
#ifndef ATTACH_CODESCAN_H
#define ATTACH_CODESCAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct att_map;

/* The first place in @buf[0..len) where the code looked for starts (its
 * whole length inside @buf), or NULL. */
typedef const unsigned char *(*att_code_match_fn)(const unsigned char *buf, size_t len);

/* Search the vDSO first with @vdso_first (arm64 keeps its rt_sigreturn
 * trampoline there), then libc's code, then every other executable file
 * mapping (a static program carries its own libc), up to 64 MiB in all, in chunks that
 * overlap by @overlap bytes (the code's length) so that a match across two
 * is found.  @maps is a snapshot of /proc/PID/maps (NULL: read it now).
 * 0 and the address in *addr, -ENOENT when there is none, -ESTALE when it
 * was not found and a mapping of @maps could not be read (the process has
 * changed since the snapshot, an exec most often: whether it has the code is
 * not known), -ENOMEM. */
int att_code_search(pid_t pid, const struct att_map *maps, size_t n, att_code_match_fn match,
		    size_t overlap, int vdso_first, uint64_t *addr);

/* 0 when @match finds its code exactly at @addr among the @len bytes there
 * (one found before: is it still there?), -ENOENT when not, -errno when they
 * cannot be read. */
int att_code_check(pid_t pid, uint64_t addr, size_t len, att_code_match_fn match);

#endif
