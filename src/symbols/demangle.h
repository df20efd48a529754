/* demangle.h -- C++ names as users read them (`shop::Order::add(int)`), by the
 * C++ ABI's own demangler, __cxa_demangle from libstdc++. */
#ifndef SYMBOLS_DEMANGLE_H
#define SYMBOLS_DEMANGLE_H

/* The demangled form of @name, malloc'd (the caller frees it), or NULL when
 * @name is not a mangled C++ name (C, Rust v0 not handled), is malformed, or
 * memory ran out: then the caller prints @name as it is. */
char *sym_demangle(const char *name);

#endif
