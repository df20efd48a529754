/* cmd_threads.c -- "threads": every thread's state and symbolized stack, like eu-stack. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *base_name(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;
	return b ? b + 1 : p ? p : "?";
}

static int print_text(void *arg, const struct jma_thread *t)
{
	(void)arg;
	printf("TID %d (%s) state %c", (int)t->tid, t->comm, t->state);
	if (t->syscall >= 0)
		printf(", in %s", t->syscall_name ? t->syscall_name : "a syscall");
	printf("%s\n", t->in_jemalloc ? ", INSIDE JEMALLOC" : "");
	if (t->err)
		printf("    (no stack: %s)\n", t->errmsg);
	for (int i = 0; i < t->nframes; i++) {
		const struct jma_frame *f = &t->frames[i];

		printf("#%-2d 0x%016llx ", i, (unsigned long long)f->pc);
		if (f->func)
			printf("%s+0x%llx", f->func, (unsigned long long)f->off);
		else
			printf("??");
		printf(" (%s)", base_name(f->module));
		if (f->file)
			printf(" %s:%d", f->file, f->line);
		printf("%s\n", f->in_jemalloc ? " [jemalloc]" : "");
	}
	return 0;
}

static int print_json(void *arg, const struct jma_thread *t)
{
	int *first = arg;

	printf("%s{\"tid\": %d, \"comm\": ", *first ? "" : ",\n ", (int)t->tid);
	*first = 0;
	cli_json_string(stdout, t->comm);
	printf(", \"state\": \"%c\", \"syscall\": ", t->state);
	if (t->syscall >= 0 && t->syscall_name)
		cli_json_string(stdout, t->syscall_name);
	else if (t->syscall >= 0)
		printf("%ld", t->syscall);
	else
		printf("null");
	printf(", \"in_jemalloc\": %s", t->in_jemalloc ? "true" : "false");
	if (t->err) {
		printf(", \"error\": ");
		cli_json_string(stdout, t->errmsg);
	}
	printf(", \"frames\": [");
	for (int i = 0; i < t->nframes; i++) {
		const struct jma_frame *f = &t->frames[i];

		printf("%s{\"pc\": \"0x%llx\", \"func\": ", i ? ", " : "", (unsigned long long)f->pc);
		if (f->func)
			cli_json_string(stdout, f->func);
		else
			printf("null");
		printf(", \"off\": %llu, \"module\": ", (unsigned long long)f->off);
		if (f->module)
			cli_json_string(stdout, f->module);
		else
			printf("null");
		if (f->file) {
			printf(", \"file\": ");
			cli_json_string(stdout, f->file);
			printf(", \"line\": %d", f->line);
		}
		printf(", \"jemalloc\": %s}", f->in_jemalloc ? "true" : "false");
	}
	printf("]}");
	return 0;
}

int cmd_threads(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "frames", required_argument, NULL, 'n' },
		{ 0 },
	};
	int json = 0, opt, first = 1;
	long max = 64;
	char *end;

	while ((opt = getopt_long(argc, argv, "jn:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = 1;
			break;
		case 'n':
			errno = 0;
			max = strtol(optarg, &end, 10);
			if (errno || *end || max < 1 || max > 1024)
				return cli_usage(c, "threads", "invalid --frames \"%s\": 1..1024", optarg);
			break;
		default:
			return cli_usage(c, "threads", "invalid option");
		}
	}
	if (optind != argc)
		return cli_usage(c, "threads", "unexpected argument \"%s\"", argv[optind]);
	if (json)
		printf("[");
	if (jma_threads(c->s, (int)max, json ? print_json : print_text, &first))
		return cli_fail_session(c);
	if (json)
		printf("]\n");
	return EXIT_OK;
}
