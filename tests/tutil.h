/* tutil.h -- helpers for Check tests: a live target process, small files. */
#ifndef TUTIL_H
#define TUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct tproc {
	pid_t pid;
	FILE *in, *out;		/* its stdin (we write) and stdout (we read) */
	char fn_names[16][32];
	uint64_t fn_addrs[16];
	int nfn;
};

/* Start build/fixtures/NAME (or $FIXTURES/NAME) with @env (NULL-terminated
 * "K=V" list, may be NULL) and wait for its "ready" line, recording any
 * "fn NAME ADDR" lines before it.  Aborts the test on failure. */
void tproc_start(struct tproc *p, const char *name, char *const env[]);
/* Send a command line, return the answer line (static buffer). */
const char *tproc_cmd(struct tproc *p, const char *cmd);
uint64_t tproc_fn(const struct tproc *p, const char *name);
/* Kill and reap. */
void tproc_stop(struct tproc *p);

/* A whole file, malloc'd (with a NUL after it); aborts the test on failure. */
unsigned char *tu_slurp(const char *path, size_t *len);
/* Feed every file of fuzzing corpus @dir to @one (a libFuzzer entry point);
 * returns how many there were. */
int tu_replay_corpus(const char *dir, int (*one)(const uint8_t *data, size_t size));

/* Write @text into the file @dir/@rel (created or truncated). */
void tput(const char *dir, const char *rel, const char *text);

#endif
