/* json.c -- the little JSON the CLI writes: escaped strings and typed values. */
#include <stdio.h>

#include "cli.h"

void cli_json_string(FILE *f, const char *s)
{
	cli_esc_json_string(f, s);
}

void cli_json_value(FILE *f, const struct jma_value *v)
{
	char buf[64];

	if (v->type == JMA_T_STRING) {
		if (v->str)
			cli_json_string(f, v->str);
		else
			fputs("null", f);
		return;
	}
	if (v->type == JMA_T_UNKNOWN || v->type == JMA_T_VOID) {
		fputs("null", f);
		return;
	}
	jma_value_format(v, buf, sizeof(buf));
	fputs(buf, f);
}

void cli_json_values(FILE *f, const char *const *names, const struct jma_value *v, const int *have,
		     size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fputs(", ", f);
		cli_json_string(f, names[i]);
		fputs(": ", f);
		if (have[i])
			cli_json_value(f, &v[i]);
		else
			fputs("null", f);
	}
}
