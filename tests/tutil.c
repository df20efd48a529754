/* tutil.c -- starting and talking to fixture processes, small files and corpus files, for Check tests. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"

void tproc_start(struct tproc *p, const char *name, char *const env[])
{
	int in[2], out[2];
	char path[512], line[256];
	const char *dir = getenv("FIXTURES");

	memset(p, 0, sizeof(*p));
	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "build/fixtures", name);
	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(out), 0);
	p->pid = fork();
	ck_assert_int_ge(p->pid, 0);
	if (p->pid == 0) {
		char *argv[] = { path, NULL };
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (env)
			for (char *const *e = env; *e; e++)
				putenv(*e);
		execv(path, argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in = fdopen(in[1], "w");
	p->out = fdopen(out[0], "r");
	setvbuf(p->in, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), p->out)) {
		char nm[32];
		unsigned long long a;
		if (sscanf(line, "fn %31s %llx", nm, &a) == 2 && p->nfn < 16) {
			snprintf(p->fn_names[p->nfn], sizeof(p->fn_names[0]), "%s", nm);
			p->fn_addrs[p->nfn++] = a;
		}
		if (!strncmp(line, "ready", 5))
			return;
	}
	ck_abort_msg("fixture %s did not start", path);
}

const char *tproc_cmd(struct tproc *p, const char *cmd)
{
	static char line[512];

	fprintf(p->in, "%s\n", cmd);
	fflush(p->in);
	if (!fgets(line, sizeof(line), p->out))
		return "(eof)";
	line[strcspn(line, "\n")] = '\0';
	return line;
}

uint64_t tproc_fn(const struct tproc *p, const char *name)
{
	for (int i = 0; i < p->nfn; i++)
		if (!strcmp(p->fn_names[i], name))
			return p->fn_addrs[i];
	ck_abort_msg("fixture has no function %s", name);
	return 0;
}

void tproc_stop(struct tproc *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
	}
	if (p->in)
		fclose(p->in);
	if (p->out)
		fclose(p->out);
	memset(p, 0, sizeof(*p));
}

unsigned char *tu_slurp(const char *path, size_t *len)
{
	unsigned char *buf;
	FILE *f = fopen(path, "rb");
	long n;

	ck_assert_msg(f != NULL, "cannot open %s (run from the top of the tree)", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

int tu_replay_corpus(const char *dir, int (*one)(const uint8_t *data, size_t size))
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_msg(d != NULL, "cannot open %s (run from the top of the tree)", dir);
	while ((e = readdir(d))) {
		char path[512];
		unsigned char *buf;
		size_t len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		buf = tu_slurp(path, &len);
		one(buf, len);
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

void tput(const char *dir, const char *rel, const char *text)
{
	char p[1400];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}
