/* profile.c -- the sampler's samples, by stack, and the heap_v2 profile made of them.
 *
 * Samples are numbered densely by the BPF side, so they are kept in an array
 * indexed by that number (a lost sample leaves a hole); stacks are kept once
 * each in a hash table.  The profile's header has the finest period any
 * sample was taken at: readers unbias its counts with jeprof's formula, as
 * they do jemalloc's own profiles.  Sampled at that period, a line's counts
 * are the raw ones; a sample taken at a sparser rate, or in a burst that
 * stands for more, weighs what its rate and scale make it, and the line's
 * count is that estimate over jeprof's factor (as jemalloc 5.3 itself prints
 * counts chosen for that formula), rounded with the remainder carried along
 * the stack.  Sizes
 * differ within a stack, so every stack is written once per size sampled
 * there, which keeps that formula exact (it works on the average size of a
 * line).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heap.h"
#include "sampler/profile.h"

enum { REC_NONE, REC_SAMPLED, REC_LIVE, REC_FREED };

struct rec {
	uint64_t size;
	uint64_t ptr;		/* once returned */
	uint32_t stack;		/* index into stacks */
	uint8_t state;
	uint8_t shift;		/* sampled at period >> shift */
	uint8_t exact;		/* by an entry probed all the time: no burst's scale */
};

struct stack {
	uint64_t hash;
	uint32_t off, n;	/* pcs[off..off+n) */
};

struct smp_profile {
	uint64_t period;
	uint64_t burst_from;	/* samples from this id on stand for scale times more */
	double scale;
	struct rec *recs;
	size_t nrecs, caprecs;
	struct stack *stacks;
	size_t nstacks, capstacks;
	uint64_t *pcs;
	size_t npcs, cappcs;
	uint32_t *slots;	/* hash of stacks: index + 1, 0 empty */
	size_t nslots;
};

struct smp_profile *smp_profile_new(uint64_t period)
{
	struct smp_profile *p = calloc(1, sizeof(*p));

	if (p) {
		p->period = period;
		p->burst_from = UINT64_MAX;
		p->scale = 1;
	}
	return p;
}

void smp_profile_free(struct smp_profile *p)
{
	if (!p)
		return;
	free(p->recs);
	free(p->stacks);
	free(p->pcs);
	free(p->slots);
	free(p);
}

/* heap_grow, the new room zeroed: records are indexed by id. */
static int grow(void *pv, size_t *cap, size_t need, size_t elem)
{
	void **v = pv;
	size_t old = *cap;

	if (heap_grow(v, cap, need, elem))
		return -ENOMEM;
	memset((char *)*v + old * elem, 0, (*cap - old) * elem);
	return 0;
}

static uint64_t hash_pcs(const uint64_t *pcs, int n)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < n; i++)
		h = (h ^ pcs[i]) * 1099511628211ull;
	return h;
}

static int rehash(struct smp_profile *p)
{
	size_t ns = p->nslots ? p->nslots * 2 : 1024;
	uint32_t *s = calloc(ns, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < p->nstacks; i++) {
		size_t k = p->stacks[i].hash & (ns - 1);

		while (s[k])
			k = (k + 1) & (ns - 1);
		s[k] = (uint32_t)i + 1;
	}
	free(p->slots);
	p->slots = s;
	p->nslots = ns;
	return 0;
}

/* The index of stack @pcs[0..n), added if new; -ENOMEM. */
static long stack_of(struct smp_profile *p, const uint64_t *pcs, int n)
{
	uint64_t h = hash_pcs(pcs, n);
	size_t k;
	struct stack *st;

	if ((p->nstacks + 1) * 2 > p->nslots && rehash(p))
		return -ENOMEM;
	for (k = h & (p->nslots - 1); p->slots[k]; k = (k + 1) & (p->nslots - 1)) {
		st = &p->stacks[p->slots[k] - 1];
		if (st->hash == h && st->n == (uint32_t)n &&
		    !memcmp(&p->pcs[st->off], pcs, (size_t)n * sizeof(*pcs)))
			return p->slots[k] - 1;
	}
	if (grow(&p->stacks, &p->capstacks, p->nstacks + 1, sizeof(*p->stacks)) ||
	    grow(&p->pcs, &p->cappcs, p->npcs + (size_t)n, sizeof(*p->pcs)))
		return -ENOMEM;
	st = &p->stacks[p->nstacks];
	st->hash = h;
	st->off = (uint32_t)p->npcs;
	st->n = (uint32_t)n;
	memcpy(&p->pcs[p->npcs], pcs, (size_t)n * sizeof(*pcs));
	p->npcs += (size_t)n;
	p->slots[k] = (uint32_t)++p->nstacks;
	return (long)p->nstacks - 1;
}

int smp_profile_add(struct smp_profile *p, uint64_t id, uint64_t size, unsigned shift, int exact,
		    const uint64_t *pcs, int n)
{
	long st;

	if (id >= SMP_MAX_RECORDS)
		return -E2BIG;
	if (n > SMP_MAX_FRAMES)
		n = SMP_MAX_FRAMES;
	if (grow(&p->recs, &p->caprecs, id + 1, sizeof(*p->recs)) || (st = stack_of(p, pcs, n)) < 0)
		return -ENOMEM;
	p->recs[id] = (struct rec){ size, 0, (uint32_t)st, REC_SAMPLED, (uint8_t)(shift < 40 ? shift : 40),
				    exact != 0 };
	if (id >= p->nrecs)
		p->nrecs = id + 1;
	return 0;
}

void smp_profile_returned(struct smp_profile *p, uint64_t id, uint64_t ptr)
{
	if (id < p->nrecs && p->recs[id].state == REC_SAMPLED) {
		p->recs[id].state = REC_LIVE;
		p->recs[id].ptr = ptr;
	}
}

void smp_profile_freed(struct smp_profile *p, uint64_t id)
{
	if (id < p->nrecs && p->recs[id].state == REC_LIVE)
		p->recs[id].state = REC_FREED;
}

void smp_profile_scale(struct smp_profile *p, uint64_t first_id, double scale)
{
	p->burst_from = first_id;
	p->scale = scale > 0 ? scale : 1;
}

int smp_profile_unfreed(const struct smp_profile *p, struct smp_unfreed **v, size_t *n)
{
	size_t k = 0;

	*n = 0;
	*v = malloc((p->nrecs ? p->nrecs : 1) * sizeof(**v));
	if (!*v)
		return -ENOMEM;
	for (size_t i = 0; i < p->nrecs; i++)
		if (p->recs[i].state == REC_LIVE && p->recs[i].ptr)
			(*v)[k++] = (struct smp_unfreed){ i, p->recs[i].ptr, p->recs[i].size };
	*n = k;
	return 0;
}

void smp_expo_fill(volatile uint64_t *t, size_t n, uint64_t period)
{
	for (size_t i = 0; i < n; i++)
		t[i] = (uint64_t)(-log(((double)i + 0.5) / (double)n) * (double)period) + 1;
}

double smp_unbias(uint64_t size, uint64_t period)
{
	double r = (double)size / (double)period;

	return r > 0 ? (double)size / -expm1(-r) : 0;
}

/* The bytes sample @id stands for: its rate's unbiasing, its burst's scale. */
static double weight(const struct smp_profile *p, size_t id)
{
	const struct rec *r = &p->recs[id];
	double w = smp_unbias(r->size, p->period >> r->shift ? p->period >> r->shift : 1);

	return id >= p->burst_from && !r->exact ? w * p->scale : w;
}

void smp_profile_totals(const struct smp_profile *p, double *alloc, double *inuse, uint64_t *live)
{
	*alloc = *inuse = 0;
	*live = 0;
	for (size_t i = 0; i < p->nrecs; i++) {
		const struct rec *r = &p->recs[i];
		double b;

		if (r->state == REC_NONE)
			continue;
		b = weight(p, i);
		*alloc += b;
		if (r->state == REC_LIVE) {
			*inuse += b;
			(*live)++;
		}
	}
}

/* A sample as the profile writes it. */
struct item {
	uint32_t stack;
	uint64_t size;
	double w;		/* the bytes it stands for */
	int live;
};

/* Lines of the profile: one per (stack, size), its counts rounded. */
struct line {
	uint32_t stack;
	uint64_t size, cur, acc;
};

static int by_stack_size(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* The count of a line of size @size whose samples stand for @w bytes (plus
 * the carry *@carry, updated) such that jeprof's unbiasing gives them back. */
static uint64_t count_for(uint64_t size, uint64_t period, double w, double *carry)
{
	double u = smp_unbias(size, period), x;
	uint64_t n;

	w += *carry;
	x = u > 0 ? w / u : 0;
	n = x > 0 ? (uint64_t)(x + 0.5) : 0;
	*carry = w - (double)n * u;
	return n;
}

/* The lines of the items @v[0..n) (sorted), for a header of @period, into
 * *@out (@nl of them). */
static int make_lines(uint64_t period, const struct item *v, size_t n, struct line **out, size_t *nl)
{
	struct line *l = malloc((n ? n : 1) * sizeof(*l));
	double ccur = 0, cacc = 0;
	size_t k = 0;

	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		double wcur = 0, wacc = 0;
		size_t j;

		if (i && v[i].stack != v[i - 1].stack)
			ccur = cacc = 0;
		for (j = i; j < n && v[j].stack == v[i].stack && v[j].size == v[i].size; j++) {
			wacc += v[j].w;
			if (v[j].live)
				wcur += v[j].w;
		}
		l[k].stack = v[i].stack;
		l[k].size = v[i].size;
		l[k].acc = count_for(v[i].size, period, wacc, &cacc);
		l[k].cur = count_for(v[i].size, period, wcur, &ccur);
		if (l[k].acc < l[k].cur)
			l[k].acc = l[k].cur;
		if (l[k].acc)
			k++;
		i = j;
	}
	*out = l;
	*nl = k;
	return 0;
}

int smp_profile_write(const struct smp_profile *p, const char *maps, char **out, size_t *len)
{
	struct item *v = malloc((p->nrecs ? p->nrecs : 1) * sizeof(*v));
	uint64_t tcur = 0, tcurb = 0, tacc = 0, taccb = 0, period;
	struct line *l = NULL;
	size_t n = 0, nl = 0;
	unsigned shift = 0;
	FILE *f;

	*out = NULL;
	*len = 0;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->nrecs; i++)
		if (p->recs[i].state != REC_NONE) {
			v[n++] = (struct item){ p->recs[i].stack, p->recs[i].size, weight(p, i),
						p->recs[i].state == REC_LIVE };
			if (p->recs[i].shift > shift)
				shift = p->recs[i].shift;
		}
	/* The finest rate used: every sample then counts one or more. */
	period = p->period >> shift ? p->period >> shift : 1;
	qsort(v, n, sizeof(*v), by_stack_size);
	if (make_lines(period, v, n, &l, &nl)) {
		free(v);
		return -ENOMEM;
	}
	free(v);
	for (size_t i = 0; i < nl; i++) {
		tacc += l[i].acc;
		taccb += l[i].acc * l[i].size;
		tcur += l[i].cur;
		tcurb += l[i].cur * l[i].size;
	}
	if (!(f = open_memstream(out, len))) {
		free(l);
		return -ENOMEM;
	}
	fprintf(f, "heap_v2/%llu\n  t*: %llu: %llu [%llu: %llu]\n", (unsigned long long)period,
		(unsigned long long)tcur, (unsigned long long)tcurb, (unsigned long long)tacc,
		(unsigned long long)taccb);
	for (size_t i = 0; i < nl; i++) {
		const struct stack *st = &p->stacks[l[i].stack];

		fputc('@', f);
		for (uint32_t k = 0; k < st->n; k++)
			fprintf(f, " 0x%llx", (unsigned long long)p->pcs[st->off + k]);
		fprintf(f, "\n  t*: %llu: %llu [%llu: %llu]\n", (unsigned long long)l[i].cur,
			(unsigned long long)(l[i].cur * l[i].size), (unsigned long long)l[i].acc,
			(unsigned long long)(l[i].acc * l[i].size));
	}
	fprintf(f, "\nMAPPED_LIBRARIES:\n%s", maps ? maps : "");
	free(l);
	if (fclose(f)) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}
