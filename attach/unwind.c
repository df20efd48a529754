/* unwind.c -- remote stack unwinding through libunwind, memory by process_vm_readv.
 *
 * libunwind-ptrace's own accessors read the target one word per
 * PTRACE_PEEKDATA (~850 system calls for a 7-frame walk, most of them parsing
 * .eh_frame) and, for every frame in another module than the last, read
 * /proc/PID/maps and map the module's file again -- all while the thread is
 * stopped.  Here memory comes from the caller's stack copy or from whole
 * pages cached (for one walk, or while a read-only page of a file stays
 * mapped where it was), and the unwind table of a module is found from
 * its ELF headers in the target's memory (PT_GNU_EH_FRAME) with the caller's
 * maps snapshot; only registers go through libunwind-ptrace.  Its
 * _UPT_find_proc_info is never asked: for a module the snapshot does not
 * know (or one without PT_GNU_EH_FRAME) it opens the path the target's maps
 * name, on our side as root -- a name a hostile target chooses in its own
 * mount namespace, a FIFO here that blocks the walk.  Such a frame ends the
 * walk instead (libunwind may still step it by the frame pointer).
 *
 * The address space is kept between walks (per calling thread, for one
 * target process at a time) with libunwind's global caching: the register
 * rules of a pc already seen are not looked up again, which makes a walk over
 * known code about ten times cheaper (0.1 ms -> 0.01 ms).  att_unwind_at
 * walks a thread that is not stopped, from where it entered its system call,
 * before it is stopped: the walk on the stopped thread then finds its rules
 * cached.
 */
#include <elf.h>
#include <errno.h>
#include <libunwind-ptrace.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "mem.h"
#include "procfs.h"
#include "unwind.h"

#define PAGE		4096u
#define NPAGES		32	/* eh_frame and its tables touch a few pages per module */

struct uw {
	void *upt;			/* libunwind-ptrace's handle, for what we pass through */
	pid_t tid;
	const uint64_t *regs;		/* by libunwind number; NULL: the stopped thread's */
	size_t nregs;
	const struct att_stack *stk;
	const struct att_map *maps;
	size_t nmaps;
	/* Apart from the pages: emptying the cache before a walk then touches
	 * a few cache lines, not 32 pages (each a fault in a new process). */
	uint64_t base[NPAGES];		/* 0: empty (page 0 is never mapped) */
	struct page_of {		/* where a page kept between walks comes from */
		uint64_t dev, inode, pos;
	} from[NPAGES];
	/* Any page in any slot, the least recently used replaced: slots by
	 * address collided (libc's and jemalloc's tables 32 pages apart), and
	 * a third of a Redis `get`'s page reads were pages read before. */
	uint64_t used[NPAGES], clock;
	size_t last;			/* the slot of the last hit: most words are there */
	unsigned char page[NPAGES][PAGE];
};

/* The file and position of the page at @base when its mapping in @m cannot
 * change under us (read-only, from a file: code and unwind tables); 0 when
 * the page must be read again for every walk (a stack, data). */
static int page_of(const struct att_map *m, uint64_t base, struct page_of *f)
{
	if (!m || !m->path || m->perms[1] != '-' || base < m->start || base >= m->end)
		return 0;
	*f = (struct page_of){ m->dev, m->inode, m->offset + (base - m->start) };
	return 1;
}

/* Before a walk: keep the pages that are still the same file's same bytes in
 * this walk's maps.  The walks of one command share the unwind tables of
 * libc and jemalloc, read a page at a time. */
static void keep_file_pages(struct uw *u)
{
	for (size_t i = 0; i < NPAGES; i++) {
		struct page_of now;

		if (u->base[i] && !(page_of(att_maps_find(u->maps, u->nmaps, u->base[i]), u->base[i],
					    &now) && !memcmp(&now, &u->from[i], sizeof(now)))) {
			u->base[i] = 0;
			u->used[i] = 0;
		}
	}
}

/* The walk in progress.  access_mem cannot rely on its argument: libunwind's
 * table search, called from _UPT_find_proc_info, hands it the
 * libunwind-ptrace handle rather than ours. */
static __thread struct uw *cur;

/* The slot holding page @base, or the one to read it into. */
static size_t slot_of(struct uw *u, uint64_t base, int *hit)
{
	size_t victim = 0;

	*hit = 1;
	if (u->base[u->last] == base)
		return u->last;
	for (size_t i = 0; i < NPAGES; i++) {
		if (u->base[i] == base)
			return i;
		if (u->used[i] < u->used[victim])
			victim = i;
	}
	*hit = 0;
	return victim;
}

static int read_word(struct uw *u, uint64_t addr, unw_word_t *val)
{
	uint64_t base = addr & ~(uint64_t)(PAGE - 1);
	size_t i;
	int hit;

	if (u->stk && addr >= u->stk->lo && addr - u->stk->lo + sizeof(*val) <= u->stk->len) {
		memcpy(val, (const char *)u->stk->buf + (addr - u->stk->lo), sizeof(*val));
		return 0;
	}
	if ((addr & (PAGE - 1)) > PAGE - sizeof(*val)) {
		/* Straddles two pages (unaligned data in .eh_frame): read it as is. */
		return att_mem_read(u->tid, addr, val, sizeof(*val)) ? -UNW_EINVAL : 0;
	}
	if (!base)
		return -UNW_EINVAL;
	i = slot_of(u, base, &hit);
	if (!hit) {
		u->base[i] = 0;
		if (att_mem_read(u->tid, base, u->page[i], PAGE))
			return -UNW_EINVAL;
		if (!page_of(att_maps_find(u->maps, u->nmaps, base), base, &u->from[i]))
			memset(&u->from[i], 0, sizeof(u->from[i]));
		u->base[i] = base;
	}
	if (!hit || i != u->last) {
		u->used[i] = ++u->clock;
		u->last = i;
	}
	memcpy(val, u->page[i] + (addr - base), sizeof(*val));
	return 0;
}

static int read_bytes(struct uw *u, uint64_t addr, void *buf, size_t len)
{
	unw_word_t w;

	for (size_t i = 0; i < len; i += sizeof(w)) {
		if (read_word(u, addr + i, &w))
			return -1;
		memcpy((char *)buf + i, &w, len - i < sizeof(w) ? len - i : sizeof(w));
	}
	return 0;
}

/* libunwind's search of a .eh_frame_hdr table (what libunwind-ptrace calls
 * after locating the table in the module's file).  Exported by libunwind but
 * not declared in its public headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

#define EH_HDR_VERSION		1
#define EH_PE_UDATA4		0x03
#define EH_PE_DATAREL_SDATA4	0x3b

/* The remote .eh_frame_hdr table of the module mapping @ip, read from the
 * module's ELF and program headers in memory (its mapping at file offset 0).
 * -1 when there is none (not in the snapshot, no PT_GNU_EH_FRAME, an encoding
 * libunwind's binary search does not handle). */
static int eh_table(struct uw *u, uint64_t ip, unw_dyn_info_t *di)
{
	const struct att_map *m = att_maps_find(u->maps, u->nmaps, ip), *b;
	uint64_t lo, hi, bias = 0, hdr = 0;
	size_t first, last;
	unsigned char h[12];
	Elf64_Ehdr eh;
	int have_bias = 0;

	/* Files, and the vDSO (an ELF image in memory like the others): a
	 * thread is often stopped inside clock_gettime there. */
	if (!m || !m->path || (m->path[0] != '/' && strcmp(m->path, "[vdso]")))
		return -1;
	/* The module: the run of mappings of this file around @ip. */
	att_maps_run(u->maps, u->nmaps, (size_t)(m - u->maps), &first, &last);
	b = &u->maps[first];
	lo = hi = 0;
	for (const struct att_map *x = b; x <= &u->maps[last]; x++)
		if (x->perms[2] == 'x') {
			lo = lo ? lo : x->start;
			hi = x->end;
		}
	if (b->offset != 0 || read_bytes(u, b->start, &eh, sizeof(eh)) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (read_bytes(u, b->start + eh.e_phoff + i * sizeof(ph), &ph, sizeof(ph)))
			return -1;
		if (ph.p_type == PT_LOAD && !have_bias) {
			/* The first PT_LOAD is the mapping at offset 0. */
			bias = b->start - (ph.p_vaddr & ~(uint64_t)(PAGE - 1));
			have_bias = 1;
		} else if (ph.p_type == PT_GNU_EH_FRAME) {
			hdr = ph.p_vaddr;
		}
	}
	if (!have_bias || !hdr || read_bytes(u, bias + hdr, h, sizeof(h)) ||
	    h[0] != EH_HDR_VERSION || h[2] != EH_PE_UDATA4 || h[3] != EH_PE_DATAREL_SDATA4 ||
	    (h[1] & 0x0f) != 0x0b)	/* eh_frame_ptr: 4 bytes */
		return -1;
	memset(di, 0, sizeof(*di));
	di->format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di->start_ip = lo;
	di->end_ip = hi;
	di->u.rti.segbase = bias + hdr;
	di->u.rti.table_data = bias + hdr + 12;
	/* Entries are two int32 (start, fde), counted in words. */
	di->u.rti.table_len = (uint64_t)(h[8] | h[9] << 8 | h[10] << 16 | (uint32_t)h[11] << 24) *
			      8 / sizeof(unw_word_t);
	return 0;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	(void)as;
	(void)arg;
	if (write || !cur)
		return -UNW_EINVAL;	/* we never change the target while looking at it */
	return read_word(cur, addr, val);
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
	struct uw *u = arg;
	unw_dyn_info_t di;

	if (eh_table(u, ip, &di) == 0 && ip >= di.start_ip && ip < di.end_ip)
		return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need, u->upt);
	return -UNW_ENOINFO;	/* never _UPT_find_proc_info: see the top of this file */
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	_UPT_put_unwind_info(as, pi, ((struct uw *)arg)->upt);
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	return _UPT_get_dyn_info_list_addr(as, addr, ((struct uw *)arg)->upt);
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
	struct uw *u = arg;

	if (!u->regs)
		return _UPT_access_reg(as, reg, val, write, u->upt);
	/* Registers the caller has: what it does not is unknown (0). */
	if (write)
		return -UNW_EINVAL;
	*val = reg >= 0 && (size_t)reg < u->nregs ? u->regs[reg] : 0;
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	return _UPT_access_fpreg(as, reg, val, write, ((struct uw *)arg)->upt);
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as;
	(void)c;
	(void)arg;
	return -UNW_EINVAL;	/* only ever walked, never resumed */
}

/* Names come from our own symbol tables; libunwind-ptrace's would open the
 * module's file by the target's path, on our side (see the top). */
static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	(void)as;
	(void)addr;
	(void)buf;
	(void)len;
	(void)off;
	(void)arg;
	return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

/* Kept between walks of one calling thread (see the top). */
static __thread struct uw *kept;
static __thread unw_addr_space_t kept_as;
static __thread pid_t kept_pid;

static int walk(pid_t pid, pid_t tid, const uint64_t *regs, size_t nregs, const struct att_stack *stk,
		const struct att_map *maps, size_t nmaps, uint64_t *pcs, int max, int *complete)
{
	unw_cursor_t c;
	struct uw *u;
	int n = 0, r;

	*complete = 0;
	if (!kept && !(kept = calloc(1, sizeof(*kept))))
		return -ENOMEM;
	if (!kept_as) {
		kept_as = unw_create_addr_space(&accessors, 0);
		if (!kept_as)
			return -ENOMEM;
		unw_set_caching_policy(kept_as, UNW_CACHE_GLOBAL);
	}
	if (kept_pid != pid) {
		/* Cached rules and pages are by address: another process, other
		 * code (and its relocated read-only data another's). */
		unw_flush_cache(kept_as, 0, 0);
		memset(kept->base, 0, sizeof(kept->base));
		memset(kept->used, 0, sizeof(kept->used));
		kept_pid = pid;
	}
	u = kept;
	u->tid = tid;
	u->regs = regs;
	u->nregs = nregs;
	u->stk = stk;
	u->maps = maps;
	u->nmaps = nmaps;
	keep_file_pages(u);
	u->upt = _UPT_create(tid);
	if (!u->upt)
		return -ENOMEM;
	cur = u;
	r = unw_init_remote(&c, kept_as, u);
	while (r >= 0 && n < max) {
		unw_word_t ip;

		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		pcs[n++] = ip;
		r = unw_step(&c);
		if (r == 0)
			*complete = 1;
		if (r <= 0)
			break;
	}
	cur = NULL;
	_UPT_destroy(u->upt);
	u->upt = NULL;
	/* Without unwind rules for a frame libunwind falls back on the frame
	 * pointer chain, which can end "cleanly" on garbage: a walk is only
	 * complete when every frame it found is code. */
	for (int i = 0; i < n && *complete; i++) {
		const struct att_map *m = att_maps_find(maps, nmaps, pcs[i] - (i > 0));

		if (!m || m->perms[2] != 'x')
			*complete = 0;
	}
	return n > 0 ? n : -EIO;
}

int att_unwind(pid_t pid, pid_t tid, const struct att_stack *stk, const struct att_map *maps,
	       size_t nmaps, uint64_t *pcs, int max, int *complete)
{
	return walk(pid, tid, NULL, 0, stk, maps, nmaps, pcs, max, complete);
}

int att_unwind_regs(pid_t pid, const uint64_t *regs, size_t nregs, const struct att_stack *stk,
		    const struct att_map *maps, size_t nmaps, uint64_t *pcs, int max, int *complete)
{
	return walk(pid, pid, regs, nregs, stk, maps, nmaps, pcs, max, complete);
}

int att_unwind_at(pid_t pid, pid_t tid, uint64_t sp, uint64_t pc, const struct att_map *maps,
		  size_t nmaps, uint64_t *pcs, int max)
{
	uint64_t at[ARCH_UNW_NREGS] = { 0 };
	int complete;

	_Static_assert(ARCH_UNW_NREGS > UNW_REG_IP && ARCH_UNW_NREGS > UNW_REG_SP,
		       "ARCH_UNW_NREGS holds libunwind's sp and ip");
	at[UNW_REG_SP] = sp;
	at[UNW_REG_IP] = pc;
	arch_unwind_from_sp(sp, pc, at, sizeof(at) / sizeof(*at));
	return walk(pid, tid, at, sizeof(at) / sizeof(*at), NULL, maps, nmaps, pcs, max, &complete);
}
