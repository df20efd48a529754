/* leaks.c -- chap's classes: anchored, leaked, unreferenced (placeholder until the scan lands). */
#include <errno.h>

#include "census/census.h"

int cen_leaks(struct cen *c)
{
	return jma_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: --leaks is not implemented yet");
}
