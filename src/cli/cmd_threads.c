/* cmd_threads.c -- "threads": every thread's state and symbolized stack, like eu-stack. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli/esc.h"

static const char *base_name(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;
	return b ? b + 1 : p ? p : "?";
}

/* What a thread is doing, in the words -v uses for the thread it borrows:
 * "asleep in epoll_wait", "running", "stopped". */
static const char *activity(const struct jma_thread *t, char *buf, size_t len)
{
	const char *in = t->syscall >= 0 && t->syscall_name ? t->syscall_name : NULL;

	switch (t->state) {
	case 'S':
		snprintf(buf, len, "asleep in %s", in ? in : "the kernel");
		break;
	case 'D':
		snprintf(buf, len, "in uninterruptible sleep%s%s", in ? " in " : "", in ? in : "");
		break;
	case 'R':
		snprintf(buf, len, "running");
		break;
	case 'T':
	case 't':
		snprintf(buf, len, "stopped");
		break;
	case 'Z':
	case 'X':
		snprintf(buf, len, "exiting");
		break;
	default:
		snprintf(buf, len, "in state %c", t->state);
	}
	return buf;
}

/* The file the process runs, when its name is not the one it goes by:
 * Debian's redis-server is a link to redis-check-rdb, which frames name. */
static void print_executable(pid_t pid)
{
	char exe[PATH_MAX], comm[64];

	if (jma_process_exe(pid, exe, sizeof(exe), comm, sizeof(comm)))
		return;
	/* comm is the first 15 bytes of the name it was started as. */
	if (strncmp(base_name(exe), comm, strlen(comm)) || !comm[0])
		printf("process %d (%s) runs %s\n", (int)pid, cli_esc(comm), cli_esc(exe));
}

static int print_text(void *arg, const struct jma_thread *t)
{
	const int *mangled = arg;
	char act[128];

	printf("TID %d (%s) %s%s%s\n", (int)t->tid, cli_esc(t->comm), cli_esc(activity(t, act, sizeof(act))),
	       t->in_jemalloc ? ", INSIDE JEMALLOC" : "", t->may_hold_lock ? ", MAY HOLD A LOCK" : "");
	if (t->err)
		printf("    (no stack: %s)\n", cli_esc(t->errmsg));
	for (int i = 0; i < t->nframes; i++) {
		const struct jma_frame *f = &t->frames[i];

		printf("#%-2d 0x%016llx ", i, (unsigned long long)f->pc);
		if (f->func)
			printf("%s+0x%llx", cli_esc(*mangled ? f->func : f->demangled),
			       (unsigned long long)f->off);
		else
			printf("??");
		printf(" (%s)", cli_esc(base_name(f->module)));
		if (f->file)
			printf(" %s:%d", cli_esc(f->file), f->line);
		printf("%s\n", f->in_jemalloc ? " [jemalloc]" : "");
	}
	return 0;
}

static int print_json(void *arg, const struct jma_thread *t)
{
	int *first = arg;
	char act[128];

	printf("%s{\"tid\": %d, \"comm\": ", *first ? "" : ",\n ", (int)t->tid);
	*first = 0;
	cli_json_string(stdout, t->comm);
	printf(", \"state\": \"%c\", \"activity\": ", t->state);
	cli_json_string(stdout, activity(t, act, sizeof(act)));
	printf(", \"syscall\": ");
	if (t->syscall >= 0 && t->syscall_name)
		cli_json_string(stdout, t->syscall_name);
	else if (t->syscall >= 0)
		printf("%ld", t->syscall);
	else
		printf("null");
	printf(", \"in_jemalloc\": %s, \"may_hold_lock\": %s", t->in_jemalloc ? "true" : "false",
	       t->may_hold_lock ? "true" : "false");
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
		/* Both, whatever --no-demangle says: scripts pick. */
		printf(", \"demangled\": ");
		if (f->func)
			cli_json_string(stdout, f->demangled);
		else
			printf("null");
		/* No symbol, no offset: the pc is all there is. */
		if (f->func)
			printf(", \"off\": %llu", (unsigned long long)f->off);
		else
			printf(", \"off\": null");
		printf(", \"module\": ");
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
		{ "no-demangle", no_argument, NULL, 'M' },
		{ 0 },
	};
	int json = 0, opt, first = 1, mangled = !!(c->opt.flags & JMA_F_NO_DEMANGLE);
	long long max = 64;

	while ((opt = getopt_long(argc, argv, "jn:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = 1;
			break;
		case 'M':
			mangled = 1;
			break;
		case 'n':
			if (cli_parse_int(optarg, 1, 1024, &max))
				return cli_usage(c, "threads", "invalid --frames \"%s\": 1..1024", optarg);
			break;
		default:
			return cli_usage(c, "threads", "invalid option");
		}
	}
	if (optind != argc)
		return cli_usage(c, "threads", "unexpected argument \"%s\"", argv[optind]);
	if (!json)
		print_executable(c->pid);
	if (json)
		printf("[");
	if (jma_threads(c->s, (int)max, json ? print_json : print_text, json ? &first : &mangled))
		return cli_fail_session(c);
	if (json)
		printf("]\n");
	return EXIT_OK;
}
