/* dwfl.h -- the one libdwfl set-up: modules' files opened in their process's
 * view (view.h), separate debuginfo found by one policy (debuginfo.h).
 *
 * Used by live stacks and the search for jemalloc (symbols.c), heap-profile
 * analysis (heap/sym.c) and cores (emulate/postmortem.c).  libdwfl's
 * callbacks take no argument of ours: each finds its set-up as the thread's
 * current one, which sym_dwfl_enter sets around every libdwfl call that may
 * open a file (reporting, dwfl_module_getelf, getsymtab, getdwarf, ...).
 *
 * The network: libdwfl asks the servers of $DEBUGINFOD_URLS (Debian sets it
 * in login shells) from dwfl_standard_find_debuginfo and
 * dwfl_build_id_find_elf, after loading its client (curl, TLS, LDAP: ~30
 * libraries, 10-20 ms).  Neither is called unless the policy allows it
 * (.debuginfod): the environment is left alone, and a program that embeds
 * the library gets the same policy as the tool.  A live command never sets it.
 */
#ifndef JMA_SYMBOLS_DWFL_H
#define JMA_SYMBOLS_DWFL_H

#include <elfutils/libdwfl.h>

#include "symbols/view.h"

struct sym_policy {
	/* Where separate debuginfo is looked for, libdwfl's syntax (NULL:
	 * ":.debug:/usr/lib/debug"). */
	const char *debuginfo_path;
	/* May ask debuginfod servers (network): 0 unless the user asked. */
	int debuginfod;
	/* A core's executable as the user named it, used for the module whose
	 * build-id it has when the core's own path cannot be read (NULL: none). */
	const char *executable;
	/* Told, when set, of each module file opened (@fd) or not (-errno),
	 * with the module's libdwfl userdata. */
	void (*opened)(void *arg, void *ud, const char *path, int fd);
	/* Told, when set, why a file was refused or read in part. */
	void (*warn)(void *arg, const char *msg);
	void *arg;
};

struct sym_dwfl;

/* A new set-up for modules seen through @v (copied, its maps borrowed) by
 * policy @p (copied; NULL: the defaults).  0 or -ENOMEM. */
int sym_dwfl_new(const struct sym_view *v, const struct sym_policy *p, struct sym_dwfl **out);
/* Ends libdwfl's session too.  NULL is fine. */
void sym_dwfl_free(struct sym_dwfl *d);

Dwfl *sym_dwfl_get(const struct sym_dwfl *d);

/* Make @d (may be NULL) this thread's current set-up; returns the one
 * before, to give back to sym_dwfl_leave. */
struct sym_dwfl *sym_dwfl_enter(struct sym_dwfl *d);
void sym_dwfl_leave(struct sym_dwfl *prev);

/* The live process's maps taken anew (syms_refresh_maps), borrowed. */
void sym_dwfl_set_maps(struct sym_dwfl *d, const struct att_map *maps, size_t n);

/* Report the modules of /proc/PID/maps lines @text.  0 or -errno (-EIO:
 * libdwfl's own error, dwfl_errmsg(-1)). */
int sym_dwfl_report_maps(struct sym_dwfl *d, const char *text);
/* Report the modules of core file @core (kept open by the caller while @d
 * lives).  0 or -EIO (dwfl_errmsg(-1)). */
int sym_dwfl_report_core(struct sym_dwfl *d, Elf *core);

#endif
