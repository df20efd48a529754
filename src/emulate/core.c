/* core.c -- reading an ELF core: segments, NT_FILE, NT_PRSTATUS, the name, pages. */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulate/core.h"
#include "emulate/image.h"
#include "symbols/buildid.h"

#define MAX_NOTE_FILES	65536

static int fail(char *msg, size_t len, int err, const char *what)
{
	snprintf(msg, len, "%s", what);
	return err;
}

/* NT_FILE: count, page size, count x {start, end, page offset}, count names. */
static int parse_nt_file(struct emu_core *c, const unsigned char *d, size_t n)
{
	uint64_t count, pgsz;
	const char *names, *end = (const char *)d + n;

	if (n < 16)
		return -EIO;
	memcpy(&count, d, 8);
	memcpy(&pgsz, d + 8, 8);
	if (count > MAX_NOTE_FILES || 16 + count * 24 > n || !pgsz || pgsz > (1 << 30))
		return -EIO;
	c->files = calloc(count ? count : 1, sizeof(*c->files));
	if (!c->files)
		return -ENOMEM;
	names = (const char *)d + 16 + count * 24;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t v[3];
		const char *nul = memchr(names, '\0', (size_t)(end - names));

		memcpy(v, d + 16 + i * 24, sizeof(v));
		if (!nul || v[1] < v[0] || v[2] > UINT64_MAX / pgsz)
			return -EIO;
		c->files[i] = (struct emu_fmap){ v[0], v[1], v[2] * pgsz, strdup(names), -1, NULL, 0 };
		if (!c->files[i].path)
			return -ENOMEM;
		names = nul + 1;
		c->nfiles++;
	}
	return 0;
}

static int parse_notes(struct emu_core *c, Elf *elf, const GElf_Phdr *ph)
{
	Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph->p_offset, ph->p_filesz, ELF_T_NHDR);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	if (!d)
		return -EIO;
	while (off < d->d_size && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const unsigned char *desc = (const unsigned char *)d->d_buf + desc_off;
		const char *name = (const char *)d->d_buf + name_off;
		int err;

		/* gcore adds its target description (NT_GDB_TDESC) under "GDB". */
		if (nh.n_namesz == 4 && !memcmp(name, "GDB", 4))
			c->by_gdb = 1;
		/* Each thread's other register sets (NT_ARM_TLS, NT_X86_XSTATE...)
		 * follow its NT_PRSTATUS, named "LINUX". */
		if (nh.n_namesz == 6 && !memcmp(name, "LINUX", 6) && c->nthreads) {
			struct emu_thread *t = &c->threads[c->nthreads - 1];

			arch_gpregs_core_note(&t->regs, nh.n_type, desc, nh.n_descsz);
			t->tp = arch_regs_tls_base(&t->regs);
			continue;
		}
		if (nh.n_namesz != 5 || memcmp(name, "CORE", 5))
			continue;
		if (nh.n_type == NT_FILE && !c->files) {
			if ((err = parse_nt_file(c, desc, nh.n_descsz)))
				return err;
		} else if (nh.n_type == NT_PRPSINFO && nh.n_descsz >= sizeof(struct elf_prpsinfo)) {
			struct elf_prpsinfo pi;
			memcpy(&pi, desc, sizeof(pi));
			snprintf(c->comm, sizeof(c->comm), "%.*s", (int)sizeof(pi.pr_fname), pi.pr_fname);
		} else if (nh.n_type == NT_AUXV) {
			for (size_t i = 0; i + 16 <= nh.n_descsz; i += 16) {
				uint64_t av[2];
				memcpy(av, desc + i, sizeof(av));
				if (av[0] == AT_EXECFN)
					c->execfn = av[1];
			}
		} else if (nh.n_type == NT_PRSTATUS && nh.n_descsz >= sizeof(struct elf_prstatus)) {
			struct elf_prstatus ps;
			struct emu_thread *t = realloc(c->threads, (c->nthreads + 1) * sizeof(*t));

			if (!t)
				return -ENOMEM;
			c->threads = t;
			memcpy(&ps, desc, sizeof(ps));
			t[c->nthreads].tid = ps.pr_pid;
			if (arch_gpregs_from_core(&t[c->nthreads].regs, &ps.pr_reg, sizeof(ps.pr_reg)))
				return -EINVAL;
			t[c->nthreads].tp = arch_regs_tls_base(&t[c->nthreads].regs);
			c->nthreads++;
		}
	}
	return 0;
}

/* The process's name as the kernel gave it at exec, the first 15 bytes of the
 * last component of the path execve() was called with (AT_EXECFN, a string
 * on the stack the core holds): gcore's pr_fname is the first word of
 * /proc/PID/cmdline instead, which daemons rewrite (Redis: "redis-server
 * 127.0.0.1:6379" gave "redis-server 127").  Kept as it was when the string
 * cannot be read. */
static void comm_from_execfn(struct emu_core *c)
{
	char path[4096];
	const char *base;
	size_t n = 0;

	for (size_t i = 0; c->execfn && i < c->nsegs; i++) {
		const struct emu_seg *g = &c->segs[i];
		uint64_t off = c->execfn - g->vaddr;

		if (c->execfn < g->vaddr || off >= g->filesz)
			continue;
		n = g->filesz - off < sizeof(path) - 1 ? (size_t)(g->filesz - off) : sizeof(path) - 1;
		memcpy(path, c->data + g->offset + off, n);
		break;
	}
	path[n] = '\0';
	if (strlen(path) == n || !path[0])
		return;		/* not NUL-terminated within the segment, or empty */
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (*base)
		snprintf(c->comm, sizeof(c->comm), "%.15s", base);
}

static int cmp_seg(const void *a, const void *b)
{
	const struct emu_seg *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* Two segments holding the same address: which one's bytes the process had
 * cannot be told, and a crafted core uses it to put its own bytes over
 * what a file holds. */
static int segs_overlap(const struct emu_core *c, char *msg, size_t len)
{
	struct emu_seg *s = malloc((c->nsegs ? c->nsegs : 1) * sizeof(*s));

	if (!s)
		return fail(msg, len, -ENOMEM, "out of memory");
	memcpy(s, c->segs, c->nsegs * sizeof(*s));
	qsort(s, c->nsegs, sizeof(*s), cmp_seg);
	for (size_t i = 0; i + 1 < c->nsegs; i++) {
		if (s[i].vaddr + s[i].memsz <= s[i + 1].vaddr)
			continue;
		snprintf(msg, len, "malformed: memory segments 0x%llx-0x%llx and 0x%llx-0x%llx "
			 "overlap", (unsigned long long)s[i].vaddr,
			 (unsigned long long)(s[i].vaddr + s[i].memsz),
			 (unsigned long long)s[i + 1].vaddr,
			 (unsigned long long)(s[i + 1].vaddr + s[i + 1].memsz));
		free(s);
		return -EIO;
	}
	free(s);
	return 0;
}

int emu_core_parse(struct emu_core *c, const void *data, size_t size, char *msg, size_t len)
{
	Elf *elf;
	GElf_Ehdr eh;
	size_t nph;
	int err = 0;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->data = data;
	c->size = size;
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)data, size);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		if (elf)
			elf_end(elf);
		return fail(msg, len, -ENOEXEC, "not an ELF file");
	}
	if (eh.e_type != ET_CORE)
		err = fail(msg, len, -ENOEXEC, "an ELF file, but not a core dump");
	else if (eh.e_machine != ARCH_ELF_MACHINE || gelf_getclass(elf) != ELFCLASS64)
		err = fail(msg, len, -EXDEV, "a core of another architecture (its threads' "
			   "registers are read as this machine's: cores of the machine jemattach "
			   "runs on only)");
	else if (elf_getphdrnum(elf, &nph) || !(c->segs = calloc(nph ? nph : 1, sizeof(*c->segs))))
		err = fail(msg, len, -EIO, "malformed program headers");
	for (size_t i = 0; !err && i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			err = fail(msg, len, -EIO, "malformed program headers");
		} else if (ph.p_type == PT_LOAD) {
			if (ph.p_filesz > ph.p_memsz || ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
				err = fail(msg, len, -EIO, "a malformed PT_LOAD segment");
			else if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
				err = fail(msg, len, -EIO, "truncated: a memory segment extends past "
					   "the end of the file");
			else
				c->segs[c->nsegs++] = (struct emu_seg){ ph.p_vaddr, ph.p_memsz,
					ph.p_offset, ph.p_filesz, ph.p_flags };
		} else if (ph.p_type == PT_NOTE) {
			if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
				err = fail(msg, len, -EIO, "truncated: the notes extend past the end "
					   "of the file");
			else if ((err = parse_notes(c, elf, &ph)))
				fail(msg, len, err, err == -ENOMEM ? "out of memory"
					   : "malformed notes (NT_FILE)");
		}
	}
	if (!err && c->by_gdb)
		comm_from_execfn(c);
	if (!err && !c->nthreads)
		err = fail(msg, len, -EIO, "no thread state (NT_PRSTATUS) in the core");
	if (!err && !c->nsegs)
		err = fail(msg, len, -EIO, "no memory segments in the core");
	if (!err)
		err = segs_overlap(c, msg, len);
	elf_end(elf);
	if (err)
		emu_core_close(c);
	return err;
}

int emu_core_open(struct emu_core *c, const char *path, char *msg, size_t len)
{
	/* Non-blocking: a FIFO at @path is refused, never waited on. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), err;
	struct stat st;
	void *p;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (fd < 0) {
		err = -errno;
		snprintf(msg, len, "%s", strerror(errno));
		return err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return fail(msg, len, -ENOEXEC, "not a regular, non-empty file");
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		snprintf(msg, len, "mmap: %s", strerror(errno));
		close(fd);
		return err;
	}
	err = emu_core_parse(c, p, (size_t)st.st_size, msg, len);
	if (err) {
		munmap(p, (size_t)st.st_size);
		close(fd);
		return err;
	}
	c->mapped = 1;
	c->fd = fd;
	c->uid = st.st_uid;
	c->gid = st.st_gid;
	return 0;
}

void emu_core_close(struct emu_core *c)
{
	if (c->fd >= 0)
		close(c->fd);
	for (size_t i = 0; i < c->nfiles; i++) {
		if (c->files[i].fd >= 0)
			close(c->files[i].fd);
		free(c->files[i].path);
		free(c->files[i].why);
	}
	if (c->mapped)
		munmap((void *)c->data, c->size);
	free(c->segs);
	free(c->files);
	free(c->threads);
	memset(c, 0, sizeof(*c));
}

/* Bytes of the image the core itself holds. */
static int core_bytes(const struct emu_core *c, uint64_t addr, void *buf, size_t n)
{
	for (size_t i = 0; i < c->nsegs; i++) {
		const struct emu_seg *s = &c->segs[i];
		if (addr >= s->vaddr && addr - s->vaddr <= s->filesz &&
		    n <= s->filesz - (addr - s->vaddr)) {
			memcpy(buf, c->data + s->offset + (addr - s->vaddr), n);
			return 0;
		}
	}
	return -EFAULT;
}

static int core_read(void *arg, uint64_t addr, void *buf, size_t n)
{
	return core_bytes(arg, addr, buf, n);
}

/* @f's file is not used: why (c->err) is kept for emu_core_why. */
static int refused(struct emu_core *c, struct emu_fmap *f)
{
	free(f->why);
	f->why = strdup(c->err);
	return -2;
}

const char *emu_core_why(struct emu_core *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nfiles; i++) {
		struct emu_fmap *f = &c->files[i];

		if (addr < f->start || addr >= f->end || !f->why || f->told)
			continue;
		f->told = 1;
		return f->why;
	}
	return NULL;
}

/* Open the file of mapping @f, checking its build-id against the core's. */
static int open_mapped(struct emu_core *c, struct emu_fmap *f)
{
	char path[4096];
	unsigned char mem_id[64];
	const void *file_id;
	ssize_t mem_n = -1, file_n = -1;
	uint64_t start = f->start - f->offset;
	Elf *elf;
	int fd;

	snprintf(path, sizeof(path), "%s%s", c->sysroot ? c->sysroot : "", f->path);
	fd = c->open_file ? c->open_file(c->open_arg, f->path, path, sizeof(path)) : -EPERM;
	if (fd == -ENOENT) {
		snprintf(c->err, sizeof(c->err), "%s is missing (%s); it holds memory the core "
			 "omitted", path, strerror(-fd));
		return refused(c, f);
	}
	if (fd < 0) {
		snprintf(c->err, sizeof(c->err), "%s, which holds memory the core omitted, is not "
			 "read: %s (a core's files are read only when they are regular files its "
			 "owner, uid %u, can read)", path, fd == -ENOEXEC ? "not a regular file" :
			 strerror(-fd), (unsigned)c->uid);
		return refused(c, f);
	}
	/* The ELF header sits at file offset 0: find where the core mapped that. */
	for (size_t i = 0; i < c->nfiles; i++)
		if (!strcmp(c->files[i].path, f->path) && c->files[i].offset == 0)
			start = c->files[i].start;
	mem_n = syms_build_id_at(core_read, c, start, mem_id, sizeof(mem_id));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf)
		file_n = dwelf_elf_gnu_build_id(elf, &file_id);
	if (mem_n > 0 && (file_n != mem_n || memcmp(file_id, mem_id, (size_t)mem_n))) {
		snprintf(c->err, sizeof(c->err), "%s is not the file the process had mapped "
			 "(build-id differs)", path);
		c->wrong_file = 1;
		elf_end(elf);
		close(fd);
		return refused(c, f);
	}
	elf_end(elf);
	return fd;
}

int emu_core_check_files(struct emu_core *c)
{
	int missing = 0;

	for (size_t i = 0; i < c->nfiles; i++) {
		if (c->files[i].fd == -1)
			c->files[i].fd = open_mapped(c, &c->files[i]);
		if (c->wrong_file)
			return -ESTALE;
		missing |= c->files[i].fd < 0;
	}
	return missing ? -ENOENT : 0;
}

int emu_core_page(struct emu_core *c, uint64_t addr, void *page)
{
	int in_seg = 0;

	if (!core_bytes(c, addr, page, EMU_PAGE))
		return 0;
	for (size_t i = 0; i < c->nsegs; i++)
		in_seg |= addr >= c->segs[i].vaddr && addr - c->segs[i].vaddr < c->segs[i].memsz;
	for (size_t i = 0; i < c->nfiles; i++) {
		struct emu_fmap *f = &c->files[i];
		ssize_t n;

		if (addr < f->start || addr >= f->end)
			continue;
		if (f->fd == -1)
			f->fd = open_mapped(c, f);
		if (f->fd < 0)
			return -EFAULT;
		memset(page, 0, EMU_PAGE);
		n = pread(f->fd, page, EMU_PAGE, (off_t)(f->offset + (addr - f->start)));
		return n < 0 ? -EFAULT : 0;
	}
	if (!in_seg)
		return -EFAULT;
	memset(page, 0, EMU_PAGE);	/* in a segment, not dumped: never touched */
	return 0;
}

struct maps_line {
	uint64_t start, end, offset;
	unsigned flags;
	const char *path;
};

static int cmp_line(const void *a, const void *b)
{
	const struct maps_line *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Every NT_FILE mapping (gcore omits code segments entirely; their
 * permissions are then unknown and taken to be r-x), and every PT_LOAD no file
 * backs, sorted as the kernel lists them. */
int emu_core_maps_text(const struct emu_core *c, char **text, size_t *len)
{
	struct maps_line *l = calloc(c->nsegs + c->nfiles + 1, sizeof(*l));
	size_t n = 0, cap = 4096 * 2 + 300 * (c->nsegs + c->nfiles), off = 0;
	char *t = malloc(cap);

	if (!l || !t) {
		free(l);
		free(t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->nfiles; i++) {
		l[n] = (struct maps_line){ c->files[i].start, c->files[i].end, c->files[i].offset,
					   PF_R | PF_X, c->files[i].path };
		for (size_t k = 0; k < c->nsegs; k++)
			if (c->segs[k].vaddr == c->files[i].start)
				l[n].flags = c->segs[k].flags;
		n++;
	}
	for (size_t k = 0; k < c->nsegs; k++) {
		size_t i;
		for (i = 0; i < c->nfiles && c->files[i].start != c->segs[k].vaddr; i++)
			;
		if (i == c->nfiles)
			l[n++] = (struct maps_line){ c->segs[k].vaddr, c->segs[k].vaddr + c->segs[k].memsz,
						     0, c->segs[k].flags, "" };
	}
	qsort(l, n, sizeof(*l), cmp_line);
	for (size_t i = 0; i < n && off < cap; i++) {
		/* A path is printed up to its first control character: one line each. */
		int plen = 0;
		while (l[i].path[plen] && (unsigned char)l[i].path[plen] >= 0x20 && plen < 4096)
			plen++;
		off += (size_t)snprintf(t + off, cap - off, "%llx-%llx %c%c%cp %08llx 00:00 0 %.*s\n",
					(unsigned long long)l[i].start, (unsigned long long)l[i].end,
					l[i].flags & PF_R ? 'r' : '-', l[i].flags & PF_W ? 'w' : '-',
					l[i].flags & PF_X ? 'x' : '-', (unsigned long long)l[i].offset,
					plen, l[i].path);
	}
	free(l);
	*text = t;
	*len = off < cap ? off : cap - 1;
	return 0;
}
