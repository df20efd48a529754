/* target.c -- one target: made from what /proc says of a process, shared by
 * reference between the scanner, the cache and the requests, freed with its
 * last reference.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "serve/serve.h"

struct target *target_new(const struct pinfo *p, uint64_t mark, int named)
{
	struct target *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->refs = 1;
	t->pid = p->pid;
	t->mark = mark;
	t->uid = p->uid;
	t->named = named;
	snprintf(t->comm, sizeof(t->comm), "%s", p->comm);
	snprintf(t->cgroup, sizeof(t->cgroup), "%s", p->cgroup);
	pinfo_unit(p->cgroup, t->unit, sizeof(t->unit));
	pthread_mutex_init(&t->mu, NULL);
	serve_cond_init(&t->cv);
	return t;
}

void target_free(struct target *t)
{
	for (int k = 0; k < OP_NCACHED; k++)
		op_result_clear(&t->fl[k].res);
	for (int i = 0; i < REPORTS_KEPT; i++)
		op_result_clear(&t->rep[i].res);
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
	free(t);
}

void target_put(struct serve_ctx *sc, struct target *t)
{
	int last;

	pthread_mutex_lock(&sc->mu);
	last = --t->refs == 0;
	pthread_mutex_unlock(&sc->mu);
	if (last)
		target_free(t);
}
