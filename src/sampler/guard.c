/* guard.c -- what the probes may cost the target, and what the sampler gives up past it.
 *
 * The cost of a hit falls on the thread that made the call.  A process that
 * is mostly idle absorbs it in its idle time: its throughput does not move,
 * though its own CPU time may double (leakfix: 6 ms a second of its own, 10
 * more in probes).  A process with a thread always running or runnable
 * (Redis under load) pays it out of its throughput.  So the budget is a
 * share of one CPU, less what the busiest thread used or waited for, and
 * never less than that share of the CPU time the process gets (see
 * smp_guard_allowed).  Past it the sampler degrades, never stops while there
 * is something to give up: every call probed -> the entries in short bursts
 * (frees then read from jemalloc's metadata at the end), fewer of them, a
 * sampling rate that keeps the samples' count -> no free slow paths.
 * A burst's cost is what is measured and planned with, not its length: the
 * kernel places and removes probes under the address-space lock of every
 * process mapping the library, so on a loaded machine a burst asked for 5 ms
 * stays in place 10 to 300 ms.  Pure: sampler.c measures, this decides
 * (tests/check_sampler.c).
 */
#include <math.h>

#include "sampler/guard.h"

double smp_guard_allowed(double budget, const struct smp_period *p)
{
	double got, room;

	if (p->wall <= 0)
		return 0;
	/* A thread always runnable does its work with the CPU it gets, less
	 * what the probes take of it: that share is what its throughput loses. */
	got = p->run / p->wall;
	room = 1 - (p->busiest < 1 ? p->busiest : 1);
	return budget * (got > room ? got : room);
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

unsigned smp_guard_shift(const struct smp_guard *g)
{
	double duty = g->level != SMP_BURSTS ? 1 : g->duty_seen > 0 ? g->duty_seen : g->duty;
	double s = (duty > 0 && duty < 1 ? floor(log2(1 / duty) + 0.5) : 0) + (double)g->fine;

	return s < 0 ? 0 : s > g->max_shift ? g->max_shift : (unsigned)s;
}

/* Bursts a second for @cost CPU seconds a second of them; the duty and
 * shift that follow.  SMP_G_RATE when that changed much. */
static int set_rate(struct smp_guard *g, double cost)
{
	double direct = g->burst_cost > 0 ? g->burst_cost : g->calls_rate * SMP_BURST_GUESS_S;
	double per = direct * (g->k > 1 ? g->k : 1);
	/* k is read from a few bursts' periods on a loaded machine: a 36% loss
	 * read from one held a 10 s window of Redis to one burst.  The bursts a
	 * profile needs stay as long as what they cost directly fits. */
	double least = direct > 0 ? fmin(g->min_rate, cost / direct) : g->min_rate;
	double rate = per > 0 ? clamp(fmax(cost / per, least), SMP_RATE_MIN, SMP_RATE_MAX)
			      : SMP_RATE_MAX;
	unsigned shift;

	/* Small changes are noise: keep the bursts as they are. */
	if (g->rate > 0 && fabs(rate - g->rate) < g->rate / 4)
		return 0;
	g->rate = rate;
	g->duty = clamp(rate * (g->burst_len > 0 ? g->burst_len : SMP_BURST_GUESS_S), 0, 1);
	shift = smp_guard_shift(g);
	g->shift = shift;
	return SMP_G_RATE;
}

/* An automatic rate: sparser at once past SMP_SAMPLES_MAX samples a second,
 * finer again (one step a check, up to where it started) below a quarter of
 * that. */
static int rate_check(struct smp_guard *g, double per_s)
{
	int fine = g->fine;

	if (per_s > SMP_SAMPLES_MAX)
		fine -= (int)ceil(log2(per_s / SMP_SAMPLES_MAX));
	else if (per_s < SMP_SAMPLES_MAX / 4 && fine < g->fine_max)
		fine++;
	if (fine < -(int)g->max_shift)
		fine = -(int)g->max_shift;
	if (fine == g->fine)
		return 0;
	g->fine = fine;
	g->shift = smp_guard_shift(g);
	return SMP_G_RATE;
}

/* What one burst costs and how long it stays, from a period's bursts
 * (a moving average: bursts differ by ten times on a loaded machine); and k,
 * from what the target's progress lost against what the hits cost directly
 * (a busy target's throughput loses its CPU share: k = lost / share). */
static void learn(struct smp_guard *g, const struct smp_period *p)
{
	double cost, len, share, k;

	if (p->duty > 0)
		g->duty_seen = p->duty;
	if (g->fresh) {
		/* The every-call probes' last hits (until their removal) would make
		 * the first burst cost 40 ms against 6-11 ms for the next (Redis),
		 * and the average takes many bursts to forget it. */
		g->fresh = 0;
		return;
	}
	if (!p->bursts)
		return;
	share = p->run > 0 ? (p->calls + p->base) / p->run : 0;
	if (p->lost >= 0 && share > 0 && p->busiest >= SMP_BUSY) {
		k = clamp(p->lost / share, 1, SMP_K_MAX);
		g->k = g->k > 0 ? (g->k + k) / 2 : k;
	}
	cost = p->calls / p->bursts;
	len = p->calls_on / p->bursts;
	g->burst_cost = g->burst_cost > 0 ? (g->burst_cost + cost) / 2 : cost;
	if (len > 0)
		g->burst_len = g->burst_len > 0 ? (g->burst_len + len) / 2 : len;
}

int smp_guard_check(struct smp_guard *g, const struct smp_period *p, int sampling, int early)
{
	double cost = p->calls + p->frees + p->base, rate, room;
	int over, ch = 0;

	if (p->wall <= 0)
		return 0;
	if (sampling && g->auto_rate)
		ch |= rate_check(g, p->samples);
	if (g->budget <= 0)
		return ch;
	g->allowed = smp_guard_allowed(g->budget, p);
	rate = cost / p->wall * (g->k > 1 && g->level == SMP_BURSTS ? g->k : 1);
	over = rate > g->allowed * (early ? 2 : 1);
	if (g->level == SMP_EVERY_CALL) {
		if (!over)
			return ch;
		g->calls_rate = p->calls_on > 0 ? (p->calls + p->frees) / p->calls_on : 0;
		g->full_rate = rate;
		g->full_allowed = g->allowed;
		g->level = SMP_BURSTS;
		g->fresh = 1;
		if (g->frees) {
			g->frees = 0;
			ch |= SMP_G_FREES_OFF;
		}
		if (sampling) {
			/* Every call's samples say nothing of a burst's. */
			g->fine = g->fine_max;
			g->rate = 0;
			set_rate(g, g->allowed / 2);
			ch |= SMP_G_BURSTS | SMP_G_RATE;
		}
		return ch;
	}
	learn(g, p);
	if (sampling && g->duty_seen > 0 && smp_guard_shift(g) != g->shift) {
		g->shift = smp_guard_shift(g);
		ch |= SMP_G_RATE;
	}
	room = g->allowed - (g->base ? p->base / p->wall * (g->k > 1 ? g->k : 1) : 0);
	if (g->base && room < 0 && over) {
		g->base = 0;
		ch |= SMP_G_BASE_OFF;
		room = g->allowed;
	}
	if (sampling)
		ch |= set_rate(g, room > 0 ? room * 0.6 : 0);
	if (over && !(ch & (SMP_G_RATE | SMP_G_BASE_OFF)) && !g->base &&
	    (!sampling || g->rate <= SMP_RATE_MIN))
		ch |= SMP_G_OVER;
	return ch;
}
