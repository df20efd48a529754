/* num.c -- numbers on the command line, parsed one way: the whole argument,
 * decimal, in a range; the caller says what it is in its usage error. */
#include <errno.h>
#include <stdlib.h>

#include "cli.h"

int cli_parse_int(const char *s, long long lo, long long hi, long long *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(s, &end, 10);
	if (!*s || *end || errno || x < lo || x > hi)
		return -1;
	*v = x;
	return 0;
}

int cli_parse_num(const char *s, double lo, double hi, double *v)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	/* !(x >= lo): NaN is in no range. */
	if (!*s || *end || errno || !(x >= lo) || !(x <= hi))
		return -1;
	*v = x;
	return 0;
}

int cli_arg_int(struct cli *c, const char *cmd, const char *what, const char *s, long long lo,
		long long hi, long long *v)
{
	return cli_parse_int(s, lo, hi, v) ? cli_usage(c, cmd, "invalid %s \"%s\"", what, s) : EXIT_OK;
}

int cli_arg_num(struct cli *c, const char *cmd, const char *what, const char *s, double lo,
		double hi, double *v)
{
	return cli_parse_num(s, lo, hi, v) ? cli_usage(c, cmd, "invalid %s \"%s\"", what, s) : EXIT_OK;
}
