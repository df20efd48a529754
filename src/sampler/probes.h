/* probes.h -- uprobes on one process: uprobe_multi links, or one perf event each. */
#ifndef JMA_SAMPLER_PROBES_H
#define JMA_SAMPLER_PROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct bpf_link;

enum { SMP_P_ENTRY, SMP_P_RETURN, SMP_P_FREE, SMP_NKINDS };

struct smp_batch {
	char path[4200];	/* map_files link, or the file in the target's root */
	uint64_t *offs, *cookies;
	size_t n, cap;
};

struct smp_probes {
	pid_t pid;			/* whose address space (0: our own) */
	int multi;			/* uprobe_multi: the programs were loaded for it */
	struct bpf_program *prog[SMP_NKINDS];
	struct smp_batch batch[SMP_NKINDS];	/* multi: collected until commit */
	int *fds;			/* multi: the links */
	size_t nfds, capfds;
	struct bpf_link **links;	/* perf events: one link each */
	size_t nlinks, caplinks;
	unsigned count;			/* probes placed */
};

/* The expected attach type the programs must be loaded with for uprobe_multi
 * (kernel 6.6+; libbpf 1.1 does not know it). */
#define SMP_TRACE_UPROBE_MULTI	48

/* Probe offset @off of the file at @path (a /proc/PID/map_files link) with
 * the program of @kind and @cookie.  Perf events are placed at once; multi
 * probes are collected and placed by smp_probes_commit (or when a probe of
 * another file follows).  -errno. */
int smp_probes_add(struct smp_probes *p, int kind, const char *path, uint64_t off, uint64_t cookie);
int smp_probes_commit(struct smp_probes *p);
/* Remove every probe placed; free what was collected.  Safe to repeat. */
void smp_probes_remove(struct smp_probes *p);

#endif
