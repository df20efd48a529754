/* demangle.c -- C++ names demangled by the C++ ABI's own demangler.
 *
 * __cxa_demangle is libstdc++'s (libiberty's cp-demangle); the tool links it
 * statically, the library dynamically.  Only names of the Itanium ABI's
 * "_Z" form are passed: it also accepts bare type names ("i" -> "int"),
 * which would turn the C function `i` into a type. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *sym_demangle(const char *name)
{
	int status = -1;
	char *out;

	if (!name || strncmp(name, "_Z", 2))
		return NULL;
	out = __cxa_demangle(name, NULL, NULL, &status);
	if (status) {
		free(out);
		return NULL;
	}
	return out;
}
