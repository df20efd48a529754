/* probes.h -- uprobes on one process: uprobe_multi links, or one perf event each. */
#ifndef JMA_SAMPLER_PROBES_H
#define JMA_SAMPLER_PROBES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct bpf_link;

/* ENTRY: on_alloc (a session where the kernel has them); RETURN: on_alloc_ret;
 * FREE: on_free; FREE_SLOW: on_free_slow; EXACT: on_alloc_exact (as ENTRY). */
enum { SMP_P_ENTRY, SMP_P_RETURN, SMP_P_FREE, SMP_P_FREE_SLOW, SMP_P_EXACT, SMP_NKINDS };

/* Bytes of a probed instruction compared to tell that its breakpoint is out:
 * x86_64's int3 replaces one, arm64's BRK four. */
#define SMP_INSN_PEEK	4

/* Where a probe is in the process, and what was there before it was placed. */
struct smp_at {
	uint64_t addr;
	unsigned char orig[SMP_INSN_PEEK];
	int known;			/* orig was read (at the last attach) */
};

/* The probes of one kind in one file. */
struct smp_batch {
	int kind;
	char path[4200];	/* map_files link, or the file in the target's root */
	uint64_t *offs, *cookies;
	size_t n, cap;
};

/* A group of probes placed and removed together, as often as wanted. */
struct smp_probes {
	pid_t pid;			/* whose address space (0: our own) */
	int multi;			/* uprobe_multi: the programs were loaded for it */
	int session;			/* multi: ENTRY is a uprobe session (kernel 6.13+) */
	struct bpf_program *prog[SMP_NKINDS];
	struct smp_batch *batches;
	size_t nbatches, capbatches;
	int *fds;			/* multi: the links */
	size_t nfds, capfds;
	struct bpf_link **links;	/* perf events: one link each */
	size_t nlinks, caplinks;
	struct smp_at *at;		/* their addresses in the process, each once */
	size_t nat, capat;
	unsigned count;			/* probes in place */
	unsigned total;			/* probes collected */
};

/* The expected attach types the programs must be loaded with for
 * uprobe_multi (kernel 6.6+) and a uprobe session (6.13+); libbpf 1.1
 * knows neither. */
#define SMP_TRACE_UPROBE_MULTI		48
#define SMP_TRACE_UPROBE_SESSION	57

/* Collect a probe at offset @off of the file at @path (a /proc/PID/map_files
 * link), address @addr in the process (0: not said), with the program of
 * @kind and @cookie, for smp_probes_attach.  -ENOMEM. */
int smp_probes_add(struct smp_probes *p, int kind, const char *path, uint64_t off, uint64_t addr,
		   uint64_t cookie);
/* Place every probe collected (first reading what is at their addresses);
 * on failure none stays.  -errno. */
int smp_probes_attach(struct smp_probes *p);
/* Remove the probes placed (the kernel has taken the breakpoints out when it
 * returns); what was collected stays for the next attach.  Safe to repeat. */
void smp_probes_detach(struct smp_probes *p);
/* Detach, and forget what was collected. */
void smp_probes_free(struct smp_probes *p);

/* A thread that removes probes for the sampler, at a deadline: closing a
 * link waits for a grace period after the breakpoints are out (20-190 ms
 * measured here under load), which a burst of a few milliseconds cannot wait
 * for, nor its free probes, which go after its allocation probes: those are
 * closed in a thread of their own, the free probes as soon as the allocation
 * probes' breakpoints are out (after the close, they stayed 30-80 ms longer,
 * and a burst of Redis cost 3-4 times what its allocation probes did); and a
 * thread that sleeps until the deadline is woken on time on a loaded machine
 * more often than one busy unwinding samples gets its turn back (bursts of
 * 1 ms lasted 30-50 ms when our main thread ended them). */
struct smp_closer {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started, quit;
	int *fds;			/* links to close */
	size_t nfds, capfds;
	struct bpf_link **links;	/* perf events to destroy */
	size_t nlinks, caplinks;
	double since;			/* when the probes handed over were placed */
	double deadline;		/* when they are to be removed */
	double on;			/* seconds from placing to the start of removal, summed */
	unsigned pending;		/* handed over, not yet removed */
	/* The first group of the batch: its share of fds and links, and where
	 * its probes are in process @pid (the rest goes once they are out). */
	size_t first_fds, first_links;
	struct smp_at *at;
	size_t nat, capat;
	pid_t pid;
};

/* Start @c's thread (every signal blocked in it).  -errno: then @c removes
 * what it is handed at once, in the caller's thread. */
int smp_closer_start(struct smp_closer *c);
/* Hand the probes placed in the groups @p[0..n) (since @placed, a
 * CLOCK_MONOTONIC time in seconds) to @c to remove at @deadline (the same
 * clock), in that order: the others once @p[0]'s breakpoints are out (the
 * bytes at its addresses are back), not after the grace period that follows;
 * none is counted as placed in @p afterwards.  Waits for the batch before,
 * if any, to be taken. */
void smp_probes_detach_by(struct smp_probes *p, size_t n, struct smp_closer *c, double placed,
			  double deadline);
/* The seconds probes stayed in place so far, summed, and how many batches
 * are still to be removed. */
double smp_closer_on(struct smp_closer *c, unsigned *pending);
/* Remove everything handed over (now), and end the thread.  Safe to repeat. */
void smp_closer_stop(struct smp_closer *c);

#endif
