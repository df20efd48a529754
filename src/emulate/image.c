/* image.c -- the copy-on-write image: pages copied into unicorn on first touch. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emulate/image.h"

/* Pages are copied a cluster at a time where the source has the whole
 * cluster: unicorn looks memory regions up linearly, so fewer, larger ones
 * make the emulation several times faster. */
#define CLUSTER (16 * EMU_PAGE)

static int is_mapped(struct emu_image *im, uint64_t addr)
{
	uint8_t probe;

	return emu_uc.mem_read(im->uc, addr, &probe, 1) == UC_ERR_OK;
}

/* Copy the whole cluster holding @addr if none of it is in the image yet and
 * the source has all of it; 0 if done. */
static int fetch_cluster(struct emu_image *im, uint64_t addr)
{
	unsigned char *buf = im->cluster;
	uint64_t cl = addr & ~(CLUSTER - 1);

	if (cl >= im->tool_lo && cl < im->tool_hi)
		return -EFAULT;
	for (uint64_t a = cl; a < cl + CLUSTER; a += EMU_PAGE)
		if (is_mapped(im, a) || im->src.read_page(im->src.arg, a, buf + (a - cl)))
			return -EFAULT;
	if (emu_uc.mem_map(im->uc, cl, CLUSTER, UC_PROT_ALL) != UC_ERR_OK)
		return -EFAULT;
	if (emu_uc.mem_write(im->uc, cl, buf, CLUSTER) != UC_ERR_OK)
		return -ENOMEM;
	im->copied += CLUSTER / EMU_PAGE;
	return 0;
}

/* Copy (or, in the tool's regions, zero-fill) the page holding @addr. */
static int fetch_page(struct emu_image *im, uint64_t addr)
{
	unsigned char page[EMU_PAGE];
	uint64_t pg = addr & ~(EMU_PAGE - 1);
	int err;

	if (!fetch_cluster(im, addr))
		return 0;

	if (pg >= im->tool_lo && pg < im->tool_hi) {
		memset(page, 0, sizeof(page));
	} else {
		err = im->src.read_page(im->src.arg, pg, page);
		if (err) {
			im->fault_addr = addr;
			return err;
		}
		im->copied++;
	}
	if (emu_uc.mem_map(im->uc, pg, EMU_PAGE, UC_PROT_ALL) != UC_ERR_OK ||
	    emu_uc.mem_write(im->uc, pg, page, EMU_PAGE) != UC_ERR_OK)
		return -ENOMEM;
	return 0;
}

/* The emulated code touched a page not copied yet: copy it and retry. */
static bool on_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value,
			void *arg)
{
	struct emu_image *im = arg;
	uint64_t last = addr + (size > 0 ? (uint64_t)size - 1 : 0);

	(void)uc;
	(void)type;
	(void)value;
	if (fetch_page(im, addr))
		return false;
	/* An access straddling two pages. */
	if ((last & ~(EMU_PAGE - 1)) != (addr & ~(EMU_PAGE - 1)) && !is_mapped(im, last) &&
	    fetch_page(im, last))
		return false;
	return true;
}

int emu_image_open(struct emu_image *im, const struct emu_arch *arch, const struct emu_source *src,
		   uint64_t tool_lo, uint64_t tool_hi)
{
	memset(im, 0, sizeof(*im));
	im->src = *src;
	im->tool_lo = tool_lo;
	im->tool_hi = tool_hi;
	if (!(im->cluster = malloc(CLUSTER)))
		return -ENOMEM;
	if (emu_uc.open(arch->uc_arch, arch->uc_mode, &im->uc) != UC_ERR_OK) {
		im->uc = NULL;
		emu_image_close(im);
		return -ENOMEM;
	}
	/* The model is chosen before the CPU is first used. */
	if (arch->uc_cpu >= 0 &&
	    emu_uc.ctl(im->uc, UC_CTL_WRITE(UC_CTL_CPU_MODEL, 1), arch->uc_cpu) != UC_ERR_OK) {
		emu_image_close(im);
		return -ENOTSUP;
	}
	if (emu_uc.hook_add(im->uc, &im->hook, UC_HOOK_MEM_UNMAPPED, (void *)on_unmapped, im, 1, 0) !=
	    UC_ERR_OK) {
		emu_image_close(im);
		return -ENOMEM;
	}
	return 0;
}

void emu_image_close(struct emu_image *im)
{
	if (im->uc)
		emu_uc.close(im->uc);
	im->uc = NULL;
	free(im->cluster);
	im->cluster = NULL;
}

/* Make sure every page of [addr, addr+len) is in the image. */
static int ensure(struct emu_image *im, uint64_t addr, size_t len)
{
	uint64_t end = addr + len;

	if (end < addr)
		return -EFAULT;
	for (uint64_t pg = addr & ~(EMU_PAGE - 1); pg < end; pg += EMU_PAGE) {
		int err;

		if (is_mapped(im, pg))
			continue;
		err = fetch_page(im, pg);
		if (err)
			return err;
	}
	return 0;
}

/* A page not in the image yet is read from the source without being copied
 * in: the same bytes (nothing wrote it), and a reader of much memory (the
 * census) does not grow unicorn's region list, which it searches linearly. */
int emu_image_read(struct emu_image *im, uint64_t addr, void *buf, size_t len)
{
	unsigned char page[EMU_PAGE];
	uint64_t end = addr + len;

	if (end < addr)
		return -EFAULT;
	while (addr < end) {
		uint64_t pg = addr & ~(EMU_PAGE - 1), off = addr - pg;
		size_t n = EMU_PAGE - off < end - addr ? EMU_PAGE - off : end - addr;

		if (is_mapped(im, pg)) {
			if (emu_uc.mem_read(im->uc, addr, buf, n) != UC_ERR_OK)
				return -EFAULT;
		} else if (pg >= im->tool_lo && pg < im->tool_hi) {
			memset(buf, 0, n);
		} else {
			if (im->src.read_page(im->src.arg, pg, page)) {
				im->fault_addr = addr;
				return -EFAULT;
			}
			memcpy(buf, page + off, n);
		}
		buf = (unsigned char *)buf + n;
		addr += n;
	}
	return 0;
}

int emu_image_write(struct emu_image *im, uint64_t addr, const void *buf, size_t len)
{
	int err = ensure(im, addr, len);

	if (err)
		return err;
	return emu_uc.mem_write(im->uc, addr, buf, len) == UC_ERR_OK ? 0 : -EFAULT;
}

int emu_image_strnlen(struct emu_image *im, uint64_t addr, size_t max, size_t *len)
{
	char chunk[256];

	*len = 0;
	while (*len < max) {
		/* Never read past the page: the next one may not exist. */
		uint64_t a = addr + *len;
		size_t n = EMU_PAGE - (a & (EMU_PAGE - 1));
		int err;

		if (n > sizeof(chunk))
			n = sizeof(chunk);
		if (n > max - *len)
			n = max - *len;
		err = emu_image_read(im, a, chunk, n);
		if (err)
			return err;
		for (size_t i = 0; i < n; i++)
			if (!chunk[i]) {
				*len += i;
				return 0;
			}
		*len += n;
	}
	return 0;
}

int emu_image_read_str(struct emu_image *im, uint64_t addr, size_t max, char **out, int *trunc)
{
	size_t n;
	int err = emu_image_strnlen(im, addr, max, &n);
	char *s;

	*out = NULL;
	if (err)
		return err;
	s = malloc(n + 1);
	if (!s)
		return -ENOMEM;
	err = emu_image_read(im, addr, s, n);
	if (err) {
		free(s);
		return err;
	}
	s[n] = '\0';
	if (trunc)
		*trunc = n == max;
	*out = s;
	return 0;
}

uint64_t emu_find_gap(const uint64_t *lo, const uint64_t *hi, size_t n, uint64_t size)
{
	/* Far above a PIE's heap and far below the libraries and stacks. */
	for (uint64_t base = 0x200000000000ULL; base < 0x700000000000ULL; base += 0x10000000000ULL) {
		size_t i;

		for (i = 0; i < n; i++)
			if (lo[i] < base + size && hi[i] > base)
				break;
		if (i == n)
			return base;
	}
	return 0;
}
