/* image.h -- a copy-on-write image of a process's memory inside a unicorn CPU.
 *
 * Pages are copied from a source (a live process through process_vm_readv,
 * or a core file) the first time the emulated code or the tool touches them;
 * every write lands in the copy only.  The tool's own regions (stack, scratch,
 * service stubs, memory handed out for mmap) live in a gap of the address
 * space that the source does not use.
 */
#ifndef JMA_EMULATE_IMAGE_H
#define JMA_EMULATE_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include "emulate/arch.h"
#include "emulate/uc.h"

#define EMU_PAGE 4096ULL

/* Where the pages come from.  read_page fills one page at @addr (page
 * aligned); -EFAULT when the source has nothing there. */
struct emu_source {
	int (*read_page)(void *arg, uint64_t addr, void *page);
	void *arg;
};

struct emu_image {
	uc_engine *uc;
	struct emu_source src;
	uint64_t tool_lo, tool_hi;	/* the tool's own regions: zero pages on demand */
	uint64_t fault_addr;		/* the last address no source had */
	size_t copied;			/* pages copied from the source */
	uc_hook hook;
	/* A cluster on its way in (fetch_cluster).  Not static thread-local:
	 * every process start, emulating or not, would zero 64 KiB of TLS. */
	unsigned char *cluster;
};

/* A CPU of @arch over @src; the tool's regions go in [@tool_lo, @tool_hi). */
int emu_image_open(struct emu_image *im, const struct emu_arch *arch, const struct emu_source *src,
		   uint64_t tool_lo, uint64_t tool_hi);
void emu_image_close(struct emu_image *im);

/* Read / write the image, copying pages in first (uc_mem_read does not fault
 * them in).  -EFAULT when a page exists nowhere. */
int emu_image_read(struct emu_image *im, uint64_t addr, void *buf, size_t len);
int emu_image_write(struct emu_image *im, uint64_t addr, const void *buf, size_t len);
/* A NUL-terminated string of at most @max bytes (malloc'd). */
int emu_image_read_str(struct emu_image *im, uint64_t addr, size_t max, char **out, int *trunc);
/* Length of the string at @addr (strlen on the image), at most @max. */
int emu_image_strnlen(struct emu_image *im, uint64_t addr, size_t max, size_t *len);

/* The lowest address of a free stretch of @size bytes, given the sorted or
 * unsorted used ranges [lo[i], hi[i]). */
uint64_t emu_find_gap(const uint64_t *lo, const uint64_t *hi, size_t n, uint64_t size);

#endif
