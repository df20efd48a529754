/* conns.c -- connections: per-client limits, deadlines for a request and its answer.
 *
 * libmicrohttpd gives a global cap (CONN_MAX) and an idle timeout, reset by
 * every byte: a client that sends one byte every 29 s holds its connection
 * for good, and its per-address limit counts 127.0.0.2 and 127.0.0.3 as two
 * clients.  So, for every connection (MHD_OPTION_NOTIFY_CONNECTION):
 *  - its client (peer.c: a local user by uid, else its address) may hold
 *    CONN_PER_CLIENT connections; one more is closed at once;
 *  - a request must be in, headers and body, within CONN_REQUEST_S of the
 *    connection's start or of the previous answer (an idle keep-alive
 *    connection too); the handler's own time is bounded by --timeout and
 *    the sampler's window;
 *  - an answer must be taken within CONN_SEND_S.
 * A guard thread looks twice a second and shuts down what is late:
 * shutdown(2), under this list's lock, which libmicrohttpd's close notice
 * takes before the socket is closed -- so the descriptor is still that
 * connection's.  The connection's thread then reads the end and closes it.
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "serve/serve.h"

static void conn_close(struct conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
}

void conns_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
		  enum MHD_ConnectionNotificationCode code)
{
	struct serve_ctx *sc = cls;
	struct conns *cs = &sc->conns;
	struct conn *c = *socket_context;
	const union MHD_ConnectionInfo *ci;
	unsigned same = 0;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (!c)
			return;
		pthread_mutex_lock(&cs->mu);
		if (c->prev)
			c->prev->next = c->next;
		else
			cs->head = c->next;
		if (c->next)
			c->next->prev = c->prev;
		cs->n--;
		pthread_mutex_unlock(&cs->mu);
		free(c);
		*socket_context = NULL;
		return;
	}
	if (code != MHD_CONNECTION_NOTIFY_STARTED || !(c = calloc(1, sizeof(*c))))
		return;
	ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	c->fd = ci ? ci->connect_fd : -1;
	if (c->fd < 0 || peer_of(c->fd, &c->peer))
		snprintf(c->peer.name, sizeof(c->peer.name), "unknown");
	c->phase = CONN_RECEIVING;
	c->since = jma_clock_s(CLOCK_MONOTONIC);
	pthread_mutex_lock(&cs->mu);
	for (struct conn *o = cs->head; o; o = o->next)
		same += !o->refused && !strcmp(o->peer.name, c->peer.name);
	if (same >= CONN_PER_CLIENT || c->fd < 0) {
		c->refused = 1;
		atomic_fetch_add(&cs->refused, 1);
		if (c->fd >= 0)
			conn_close(c);
	}
	c->next = cs->head;
	if (cs->head)
		cs->head->prev = c;
	cs->head = c;
	cs->n++;
	pthread_mutex_unlock(&cs->mu);
	*socket_context = c;
	if (c->refused && sc->cfg->verbose)
		fprintf(stderr, "jemattach: serve: %s holds %u connections already: one more closed\n",
			c->peer.name, same);
}

void conns_phase(struct serve_ctx *sc, struct conn *c, enum conn_phase phase)
{
	if (!c)
		return;
	pthread_mutex_lock(&sc->conns.mu);
	c->phase = phase;
	c->since = jma_clock_s(CLOCK_MONOTONIC);
	pthread_mutex_unlock(&sc->conns.mu);
}

static void *guard(void *arg)
{
	struct serve_ctx *sc = arg;
	struct conns *cs = &sc->conns;

	pthread_mutex_lock(&cs->mu);
	while (!cs->stop) {
		double now = jma_clock_s(CLOCK_MONOTONIC);
		struct timespec ts;

		for (struct conn *c = cs->head; c; c = c->next) {
			double limit = c->phase == CONN_RECEIVING ? CONN_REQUEST_S
				       : c->phase == CONN_SENDING ? CONN_SEND_S : 0;

			if (limit && !c->refused && now - c->since > limit) {
				c->refused = 1;
				atomic_fetch_add(&cs->expired, 1);
				conn_close(c);
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 500 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_sec++, ts.tv_nsec -= 1000000000L;
		pthread_cond_timedwait(&cs->cv, &cs->mu, &ts);
	}
	pthread_mutex_unlock(&cs->mu);
	return NULL;
}

int conns_start(struct serve_ctx *sc)
{
	struct conns *cs = &sc->conns;
	int err;

	pthread_mutex_init(&cs->mu, NULL);
	serve_cond_init(&cs->cv);
	err = pthread_create(&cs->guard, NULL, guard, sc);
	cs->guard_on = !err;
	return -err;
}

void conns_stop(struct serve_ctx *sc)
{
	struct conns *cs = &sc->conns;

	pthread_mutex_lock(&cs->mu);
	cs->stop = 1;
	pthread_cond_broadcast(&cs->cv);
	pthread_mutex_unlock(&cs->mu);
	if (cs->guard_on)
		pthread_join(cs->guard, NULL);
	cs->guard_on = 0;
}
