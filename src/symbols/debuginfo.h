/* debuginfo.h -- separate debuginfo found as gdb finds it, within bounds a
 * hostile file cannot move.
 *
 * A module's .gnu_debuglink is text its owner chose.  libdwfl's standard
 * callback (dwfl_standard_find_debuginfo) joins it to directories as it is:
 * "../../dev/zero" leads to a device it then checksums forever, a FIFO
 * blocks the open, a file of the target's mount namespace is looked up on
 * the host.  Here a link is a plain file name, looked up where gdb looks
 * (next to the module, in its .debug/, under /usr/lib/debug), through an
 * opener the caller chooses (the target's view and rights for a live
 * process, the invoking user's for files on this host), and only a regular
 * file of bounded size is read.
 *
 * Compressed debug sections (SHF_COMPRESSED, .zdebug_*) say how large they
 * inflate to; libdw inflates every one of a file at once.  A budget per
 * command bounds the sum: a file that would pass it keeps its symbols but
 * not its DWARF. */
#ifndef SYMBOLS_DEBUGINFO_H
#define SYMBOLS_DEBUGINFO_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

/* The largest separate debuginfo file whose CRC is computed (a debuglink
 * without a build-id to compare), and the inflated size of all compressed
 * debug sections one command accepts. */
#define SYM_DEBUGLINK_CRC_MAX	(256ULL << 20)
#define SYM_INFLATE_MAX		(512ULL << 20)

struct sym_dbg {
	/* Open @path (absolute) with @flags (O_RDONLY | O_NONBLOCK | O_NOCTTY)
	 * with the rights of whoever may read there; an fd or -errno. */
	int (*open)(void *arg, const char *path, int flags);
	void *arg;
	/* libdwfl's search path (":.debug:/usr/lib/debug" when NULL): each
	 * entry "" (the module's directory), relative (under it) or absolute
	 * (the module's directory under it); a '+' or '-' before one is ignored. */
	const char *path;
	/* After the local search, ask debuginfod by build-id (libdwfl's own
	 * client, when DEBUGINFOD_URLS is set). */
	int debuginfod;
	/* Told why a candidate was refused (may be NULL). */
	void (*warn)(void *arg, const char *msg);
};

/* Is @name a plain file name: not empty, no '/', not "." or "..", no control
 * byte, at most 255 bytes? */
int sym_debuglink_name_ok(const char *name);

/* The find_debuginfo callback's work (libdwfl.h), with @d's opener and policy:
 * a file found by build-id first (libdwfl's local lookup), then the debuglink
 * places; each must be a regular file matching the module (build-id, else the
 * link's CRC) whose compressed sections fit the budget.  An fd or -1. */
int sym_find_debuginfo(const struct sym_dbg *d, Dwfl_Module *mod, void **userdata,
		       const char *modname, Dwarf_Addr base, const char *file_name,
		       const char *debuglink, GElf_Word crc, char **out);

/* An opener for files of this host with our own rights. */
int sym_open_host(void *arg, const char *path, int flags);

/* Charge @elf's compressed debug sections to the command's budget.  When they
 * do not fit, nothing is charged and -EFBIG is returned; with @strip (an Elf
 * opened ELF_C_READ_MMAP_PRIVATE) the sections are then made SHT_NOBITS so
 * that libdw never inflates them, and the module keeps its symbol table.
 * *@size (may be NULL) gets their inflated size. */
int sym_inflate_charge(Elf *elf, int strip, uint64_t *size);

#endif
