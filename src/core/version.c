/* version.c -- the library's version (jemattach/version.h, made from the Makefile's VERSION). */
#include <jemattach/version.h>

unsigned jma_version(void)
{
	return JMA_VERSION_NUMBER;
}
