/* core_fuzz.c -- libFuzzer harness: the ELF core parser (notes, segments, the
 * maps text, page reads) on arbitrary bytes.
 *
 * `make fuzz` builds it with clang -fsanitize=fuzzer,address,undefined and
 * runs it over tests/fuzz/core_corpus; tests/check_core.c includes this file
 * to replay the corpus.  Files the input's NT_FILE names are looked up under
 * a sysroot that does not exist, so nothing on this machine is opened.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "emulate/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct emu_core c;
	char msg[512], *maps;
	unsigned char page[4096];
	size_t len;

	if (emu_core_parse(&c, data, size, msg, sizeof(msg)))
		return 0;
	c.sysroot = "/nonexistent-fuzz-sysroot";
	if (!emu_core_maps_text(&c, &maps, &len))
		free(maps);
	for (size_t i = 0; i < c.nsegs && i < 8; i++) {
		emu_core_page(&c, c.segs[i].vaddr & ~4095ULL, page);
		emu_core_page(&c, (c.segs[i].vaddr + c.segs[i].memsz - 1) & ~4095ULL, page);
	}
	for (size_t i = 0; i < c.nfiles && i < 8; i++)
		emu_core_page(&c, c.files[i].start & ~4095ULL, page);
	emu_core_close(&c);
	return 0;
}
