/* core.h -- an ELF core file (kernel or gcore) as the source of an image.
 *
 * PT_LOAD segments give the memory the core holds; mappings it omitted
 * (file-backed code and read-only data, usually) come from the files its
 * NT_FILE note names, through the caller's opener (postmortem.c: regular
 * files only, never a blocking open, with the core owner's rights,
 * optionally under a sysroot), each checked against the build-id the core's
 * own copy of its ELF header carries.  NT_PRSTATUS gives the threads and
 * their thread pointers.  Everything in the file is untrusted: every offset
 * and count is checked against the file's size, and segments that overlap
 * (no kernel or gcore writes them) make it malformed.
 */
#ifndef JMA_EMULATE_CORE_H
#define JMA_EMULATE_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/arch.h"

struct emu_seg {
	uint64_t vaddr, memsz, offset, filesz;
	unsigned flags;		/* PF_R | PF_W | PF_X */
};

struct emu_fmap {
	uint64_t start, end, offset;	/* offset in bytes */
	char *path;			/* copied out of the note */
	int fd;				/* opened on first use; -1 not yet, -2 unusable */
	char *why;			/* ... why unusable */
	int told;			/* ... and emu_core_why said it */
};

struct emu_thread {
	pid_t tid;
	uint64_t tp;			/* the thread pointer (x86_64 fs_base, arm64 TPIDR_EL0) */
	struct arch_gpregs regs;	/* NT_PRSTATUS's pr_reg */
};

struct emu_core {
	const unsigned char *data;	/* the whole file (mapped or the caller's buffer) */
	size_t size;
	int mapped;
	struct emu_seg *segs;
	size_t nsegs;
	struct emu_fmap *files;
	size_t nfiles;
	struct emu_thread *threads;	/* the first is the one that crashed (kernel cores) */
	size_t nthreads;
	char comm[17];			/* the name: NT_PRPSINFO's pr_fname (a kernel
					 * core: comm); of a gcore, AT_EXECFN's last component */
	uint64_t execfn;		/* NT_AUXV's AT_EXECFN, 0 unknown */
	int by_gdb;			/* written by gcore (a "GDB" note) */
	int fd;				/* emu_core_open's file, -1 for a caller's buffer */
	uid_t uid;			/* ... its owner */
	gid_t gid;
	/* Opens the file NT_FILE names @path (an fd or -errno), @shown the name
	 * it was opened by; NULL: no file is opened (their pages are not in the
	 * core). */
	int (*open_file)(void *arg, const char *path, char *shown, size_t len);
	void *open_arg;
	const char *sysroot;		/* for messages: files looked for under it */
	char err[512];			/* why a file mapping could not be used */
	int wrong_file;			/* ...because its build-id differs */
};

/* Parse a core held in memory (@data stays the caller's).  -ENOEXEC not a
 * core, -EXDEV another architecture, -EIO truncated or malformed; the
 * message in @msg. */
int emu_core_parse(struct emu_core *c, const void *data, size_t size, char *msg, size_t len);
/* Open @path (a regular file: a FIFO or device is refused without
 * waiting), map and parse it; the file stays open in c->fd. */
int emu_core_open(struct emu_core *c, const char *path, char *msg, size_t len);
void emu_core_close(struct emu_core *c);

/* One page at @addr: from the core, else from the file mapped there, else
 * zero inside a PT_LOAD; -EFAULT outside every mapping, or when the file is
 * missing or its build-id differs (reason in c->err). */
int emu_core_page(struct emu_core *c, uint64_t addr, void *page);

/* Why the page at @addr, in a file mapping whose file is not used, is not
 * in the image: once per file, then NULL (NULL too for any other page). */
const char *emu_core_why(struct emu_core *c, uint64_t addr);

/* Open every file the core names, checking build-ids: -ESTALE when one is
 * not the file the process had (c->err says which), -ENOENT when one is
 * missing (c->err), else 0. */
int emu_core_check_files(struct emu_core *c);

/* The process's mappings in /proc/PID/maps format (malloc'd). */
int emu_core_maps_text(const struct emu_core *c, char **text, size_t *len);

#endif
