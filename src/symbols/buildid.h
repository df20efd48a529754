/* buildid.h -- the GNU build-id of an ELF image, read where it is mapped.
 *
 * The bytes come through a reader: a live process's memory (symcache.c),
 * a core file's copy of it (emulate/core.c).  The note sits in the first
 * loaded segment of every image the linker gave one, so a reader that has
 * the image's first page answers without a further read.
 */
#ifndef JMA_SYMBOLS_BUILDID_H
#define JMA_SYMBOLS_BUILDID_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copy @n bytes at @addr to @buf: 0, or nonzero when they cannot be read. */
typedef int (*jma_read_fn)(void *arg, uint64_t addr, void *buf, size_t n);

/* The build-id of the image whose ELF header is at @start: its length
 * (the bytes in @id, at most @max), -1 when it has none or it is unreadable. */
ssize_t syms_build_id_at(jma_read_fn rd, void *arg, uint64_t start, unsigned char *id, size_t max);

#endif
