/* probes.c -- uprobes on one process: uprobe_multi links, or one perf event each.
 *
 * Both are per process (the pid is given to the kernel, which inserts the
 * breakpoints into that address space only) and both go when their
 * descriptor closes.  uprobe_multi (kernel 6.6+) places all the probes of a
 * program in one file with one system call and removes them after a single
 * grace period; a perf event per probe costs a grace period each on removal,
 * one after the other (about 0.1 s each on this VM: 5 s for Debian's 49).
 * libbpf 1.1 predates uprobe_multi, so its link is made here by bpf(2) with
 * the kernel's layout of link_create for it.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heap/heap.h"
#include "sampler/probes.h"

#define UPROBE_MULTI_RETURN	1u	/* BPF_F_UPROBE_MULTI_RETURN */

/* union bpf_attr, as BPF_LINK_CREATE reads it for BPF_TRACE_UPROBE_MULTI. */
struct link_create_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
};

static int link_multi(struct smp_probes *p, int kind)
{
	struct smp_batch *b = &p->batch[kind];
	struct link_create_uprobe_multi a;
	long fd;

	if (!b->n)
		return 0;
	if (heap_grow((void **)&p->fds, &p->capfds, p->nfds + 1, sizeof(*p->fds)))
		return -ENOMEM;
	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)bpf_program__fd(p->prog[kind]);
	a.attach_type = SMP_TRACE_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)b->path;
	a.offsets = (uint64_t)(uintptr_t)b->offs;
	a.cookies = (uint64_t)(uintptr_t)b->cookies;
	a.cnt = (uint32_t)b->n;
	a.multi_flags = kind == SMP_P_RETURN ? UPROBE_MULTI_RETURN : 0;
	a.pid = (uint32_t)(p->pid ? p->pid : getpid());
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	if (fd < 0)
		return -errno;
	p->fds[p->nfds++] = (int)fd;
	p->count += (unsigned)b->n;
	b->n = 0;
	return 0;
}

int smp_probes_add(struct smp_probes *p, int kind, const char *path, uint64_t off, uint64_t cookie)
{
	struct smp_batch *b = &p->batch[kind];
	int err;

	if (!p->multi) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie,
			    .retprobe = kind == SMP_P_RETURN);
		struct bpf_link *l;

		if (heap_grow((void **)&p->links, &p->caplinks, p->nlinks + 1, sizeof(*p->links)))
			return -ENOMEM;
		l = bpf_program__attach_uprobe_opts(p->prog[kind], p->pid, path, off, &opts);
		if (!l)
			return -errno;
		p->links[p->nlinks++] = l;
		p->count++;
		return 0;
	}
	if (b->n && strcmp(b->path, path) && (err = link_multi(p, kind)))
		return err;
	if (heap_grow((void **)&b->offs, &b->cap, b->n + 1, sizeof(*b->offs)) ||
	    !(b->cookies = realloc(b->cookies, b->cap * sizeof(*b->cookies))))
		return -ENOMEM;
	snprintf(b->path, sizeof(b->path), "%s", path);
	b->offs[b->n] = off;
	b->cookies[b->n++] = cookie;
	return 0;
}

int smp_probes_commit(struct smp_probes *p)
{
	int err = 0;

	for (int k = 0; k < SMP_NKINDS && !err; k++)
		err = link_multi(p, k);
	return err;
}

void smp_probes_remove(struct smp_probes *p)
{
	while (p->nlinks)
		bpf_link__destroy(p->links[--p->nlinks]);
	while (p->nfds)
		close(p->fds[--p->nfds]);
	for (int k = 0; k < SMP_NKINDS; k++) {
		free(p->batch[k].offs);
		free(p->batch[k].cookies);
		memset(&p->batch[k], 0, sizeof(p->batch[k]));
	}
	free(p->links);
	free(p->fds);
	p->links = NULL;
	p->fds = NULL;
	p->caplinks = p->capfds = 0;
}
