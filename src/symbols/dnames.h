/* dnames.h -- C++ names demangled once each and kept, for code that names
 * the same functions again and again (the frames of a thousand threads in
 * the same wait, -v's descriptions of one call site). */
#ifndef SYMBOLS_DNAMES_H
#define SYMBOLS_DNAMES_H

struct sym_dnames;

/* NULL when out of memory. */
struct sym_dnames *sym_dnames_new(void);
void sym_dnames_free(struct sym_dnames *d);

/* @name as users read it: its demangled form (sym_demangle), owned by @d
 * and valid until sym_dnames_free; @name itself when it is not a mangled C++
 * name, is malformed, or memory ran out.  NULL gives NULL. */
const char *sym_dnames_get(struct sym_dnames *d, const char *name);

#endif
