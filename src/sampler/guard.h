/* guard.h -- what the probes may cost the target, and what the sampler gives up past it. */
#ifndef JMA_SAMPLER_GUARD_H
#define JMA_SAMPLER_GUARD_H

/* The sampler's levels: every allocation and free call probed, or their
 * entries placed in short bursts only (jemalloc's free slow path probed
 * throughout for large blocks; the other frees read from jemalloc's
 * metadata at the end). */
enum smp_level { SMP_EVERY_CALL, SMP_BURSTS };

#define SMP_BURST_S	0.005	/* a burst's length as asked (the kernel takes longer
				 * to place and remove its probes: SMP_BURST_GUESS_S) */
#define SMP_BURST_GUESS_S 0.015	/* its length in place, before one was measured (placing
				 * the free entries 5-20 ms, the allocations' 5 ms) */
#define SMP_RATE_MIN	(1.0 / 30)	/* bursts a second */
#define SMP_BURSTS_MIN	5	/* a window's bursts for a profile, when their direct cost fits */
#define SMP_RATE_MAX	20.0
#define SMP_SAMPLES_MAX	200	/* samples a second, past which a fine rate is made sparser */
#define SMP_BUSY	0.9	/* a thread this busy (running or runnable) makes a busy target */
/* The most k (a busy target's loss over the hits' CPU share) is believed:
 * measured 1.3-1.4 on Redis, but a loss read from half-second periods on a
 * loaded machine is mostly noise when the bursts are few, and at 20 it held
 * the bursts to 0.3% of a window (2 in 10 s, 220 samples, Redis's top site
 * missed: make check, 2026-11-28). */
#define SMP_K_MAX	5

/* What happened in a period of the window, as the target felt it. */
struct smp_period {
	double wall;			/* seconds */
	double calls, frees, base;	/* CPU seconds the target spent in each group's hits:
					 * allocation entries (and, in bursts, the free entries
					 * with them), free entries, free slow paths */
	double calls_on;		/* seconds the allocation entries were in place */
	unsigned bursts;		/* bursts ended */
	double run, wait;		/* the target's CPU seconds (all threads, probes
					 * included) and seconds runnable but waiting */
	double busiest;			/* its busiest thread's (run + wait) / wall (0..1) */
	double samples;			/* samples a second: this period's with every call probed,
					 * since bursts began in bursts (they come in spikes) */
	double duty;			/* bursts: the share of the time since they began that
					 * their probes were in place (measured), 0 unknown */
	double lost;			/* the share of its progress the bursts cost it: the
					 * bytes it allocated (jemalloc's counter, read in its
					 * memory) while bursts were in place or being placed,
					 * against its rate between them; -1 unknown */
};

struct smp_guard {
	double budget;			/* share (0..1): of one CPU, or of the CPU the target
					 * gets when it has no room; 0: no limit */
	enum smp_level level;
	int frees;			/* the free entries are in place (every call) */
	int base;			/* the free slow paths are in place */
	double rate;			/* bursts a second */
	double min_rate;		/* SMP_BURSTS_MIN over the window: the rate k may not
					 * push below while the bursts' direct cost fits */
	double burst_cost;		/* CPU seconds a burst costs the target (measured) */
	double burst_len;		/* seconds a burst's probes are in place (measured) */
	double duty;			/* rate * burst_len: the share of the time probed, as planned */
	double duty_seen;		/* ... as measured (what the sampling shift follows) */
	unsigned shift;			/* sampling at a mean of 2^lg_sample >> shift: the duty's
					 * log2(1/duty) (as many samples as every call would
					 * give), plus fine */
	unsigned max_shift;
	int auto_rate;			/* the rate is the sampler's to choose (no --lg-sample) */
	int fine, fine_max;		/* that rate's log2 against the duty's: a finer rate
					 * while samples are few, sparser past SMP_SAMPLES_MAX a
					 * second (unwinding them is ours to pay), even sparser
					 * than the nominal one */
	double calls_rate;		/* CPU seconds a second every call cost (every-call level) */
	int fresh;			/* the bursts just began: the period holds every call's
					 * last hits, which say nothing of a burst's cost */
	double k;			/* what the target loses of its progress for each share of
					 * its CPU the hits cost it directly (the kernel's work to
					 * place and remove probes, the caches the traps evict):
					 * measured (lost), 1 until then */
	/* When it left SMP_EVERY_CALL: what every call cost, what was allowed. */
	double full_rate, full_allowed;
	double allowed;			/* at the last check */
};

/* What smp_guard_check changed (or-ed). */
#define SMP_G_BURSTS	0x1	/* from now on, the entries in bursts only */
#define SMP_G_FREES_OFF	0x2	/* remove the free entries */
#define SMP_G_RATE	0x4	/* burst rate or sampling shift changed */
#define SMP_G_BASE_OFF	0x8	/* remove the free slow paths' probes too */
#define SMP_G_OVER	0x10	/* over the budget with nothing left to give up: end */

/* CPU seconds a second the probes may take in period @p: the budget's share
 * of one CPU, less the share of it the target used or waited for (its
 * busiest thread's), and never less than the budget's share of the CPU time
 * the target got.  A quiet process has the room of one CPU to spare; a busy
 * one (a thread always running or runnable) only the budget's share of the
 * CPU it gets, which is what its throughput loses. */
double smp_guard_allowed(double budget, const struct smp_period *p);

/* Look at period @p and degrade when its cost (the hits' CPU time, times k
 * once measured) passed what was allowed:
 * first the every-call level for bursts (at a rate for half the room), then
 * the rate of bursts with the cost of one measured (at 60% of the room,
 * finer or sparser), then the free slow paths when they alone pass it;
 * @early: a short first period, acted on only when clearly over.  An
 * automatic sampling rate is made sparser past SMP_SAMPLES_MAX samples a
 * second, budget or not.  @sampling: allocations are being sampled (not
 * --settle).  Returns SMP_G_*. */
int smp_guard_check(struct smp_guard *g, const struct smp_period *p, int sampling, int early);
/* The sampling shift for the duty and fine rate (set by smp_guard_check). */
unsigned smp_guard_shift(const struct smp_guard *g);

#endif
