/* units.c -- byte counts for people: 1536 -> "1.5 KiB". */
#include <stdio.h>

#include "cli.h"

const char *cli_bytes(unsigned long long n, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)n;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(*unit)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", n);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}
