/* server.c -- the server's life: its web config checked, the libmicrohttpd daemon
 * started with its limits, SIGTERM obeyed within STOP_S.
 *
 * One thread per connection (libmicrohttpd's own), at most CONN_MAX
 * connections, CONN_PER_CLIENT from one client, each request within its
 * deadlines (conns.c), headers within CONN_MEM bytes; requests go to
 * http.c.
 *
 * SIGTERM: the server stops within STOP_S whatever its workers do: the
 * waits end, workers are killed (a sampler's window asked to end first), and
 * one that does not end (asleep in the kernel) is left behind.
 */
#include <errno.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "serve/module.h"

#define CONN_MEM	(32 * 1024)
#define CONN_IDLE_S	30
#define STOP_S		10

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct serve_ctx *sc = cls;

	if (sc->cfg->verbose) {
		fputs("jemattach: http: ", stderr);
		vfprintf(stderr, fmt, ap);
	}
}

/* "http://127.0.0.1:9711/" and the like. */
static void url_of(const struct serve_cfg *cfg, uint16_t port, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	const struct sockaddr_in *a4 = (const void *)&cfg->addr;
	const struct sockaddr_in6 *a6 = (const void *)&cfg->addr;
	int v6 = cfg->addr.ss_family == AF_INET6;

	inet_ntop(cfg->addr.ss_family, v6 ? (const void *)&a6->sin6_addr : (const void *)&a4->sin_addr,
		  host, sizeof(host));
	snprintf(out, len, "%s://%s%s%s:%u/", cfg->web.cert_pem ? "https" : "http", v6 ? "[" : "",
		 host, v6 ? "]" : "", (unsigned)port);
}

/* The stop, in a thread of its own: the main thread gives it STOP_S. */
struct stopper {
	struct serve_ctx *sc;
	struct MHD_Daemon *d;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
};

static void *stop_main(void *arg)
{
	struct stopper *st = arg;
	struct serve_ctx *sc = st->sc;

	MHD_stop_daemon(st->d);
	targets_stop(sc);
	/* Children at work are ended (the server's stop), each target restored. */
	pthread_mutex_lock(&sc->fmu);
	while (sc->inflight)
		pthread_cond_wait(&sc->fcv, &sc->fmu);
	pthread_mutex_unlock(&sc->fmu);
	conns_stop(sc);
	pthread_mutex_lock(&st->mu);
	st->done = 1;
	pthread_cond_signal(&st->cv);
	pthread_mutex_unlock(&st->mu);
	return NULL;
}

/* End the server within STOP_S; 0 when everything ended, 1 when some of it
 * was left (then the process must exit now: its threads go with it). */
static int stop_within(struct serve_ctx *sc, struct MHD_Daemon *d)
{
	struct stopper st = { .sc = sc, .d = d };
	struct timespec ts;
	pthread_t th;
	int done;

	atomic_store(&sc->closing, 1);	/* waits end; workers are ended */
	pthread_mutex_init(&st.mu, NULL);
	serve_cond_init(&st.cv);
	if (pthread_create(&th, NULL, stop_main, &st)) {
		stop_main(&st);
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += STOP_S;
	pthread_mutex_lock(&st.mu);
	while (!st.done && pthread_cond_timedwait(&st.cv, &st.mu, &ts) != ETIMEDOUT)
		;
	done = st.done;
	pthread_mutex_unlock(&st.mu);
	if (done)
		pthread_join(th, NULL);
	return !done;
}

static int serve(struct serve_cfg *cfg)
{
	struct serve_ctx sc = { .cfg = cfg };
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ERROR_LOG;
	struct MHD_OptionItem opts[16];	/* connection threads keep glibc's 8 MiB stacks: a
					 * control or report child runs the library on one */
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *di;
	sigset_t stop, old;
	char url[128];
	int sig, err, k = 0;

	/* Before any thread exists, so that all of them inherit it: the
	 * termination signals are taken by sigwait below, SIGPIPE by nobody. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigaddset(&stop, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	if ((err = child_forker_start())) {
		fprintf(stderr, "jemattach: serve: cannot start the process workers come from: %s\n",
			strerror(-err));
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return 3;
	}

	targets_init(&sc);
	slots_init(&sc.attach_slots, cfg->max_attaches);
	slots_init(&sc.report_slots, 2);
	slots_init(&sc.probe_slots, 4);
	slots_init(&sc.census_slots, CENSUS_MAX);
	pthread_mutex_init(&sc.fmu, NULL);
	pthread_cond_init(&sc.fcv, NULL);
	pthread_mutex_init(&sc.auth.mu, NULL);
	pthread_cond_init(&sc.auth.cv, NULL);

	if (cfg->addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (cfg->web.cert_pem)
		flags |= MHD_USE_TLS;
	/* First, or libmicrohttpd logs the options before it by itself. */
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, &sc };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, &cfg->addr };
	/* Per client, not per address (127.0.0.2 and .3 are one local user): conns.c. */
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, CONN_MAX, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONN_MEM, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, CONN_IDLE_S, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)http_completed, &sc };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)conns_notify, &sc };
	if (cfg->web.cert_pem) {
		opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, cfg->web.cert_pem };
		opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, cfg->web.key_pem };
	}
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };

	/* The first scan before the first request, so /metrics starts complete. */
	targets_scan(&sc);
	conns_start(&sc);
	d = MHD_start_daemon(flags, 0, NULL, NULL, http_handle, &sc, MHD_OPTION_ARRAY, opts,
			     MHD_OPTION_END);
	if (!d) {
		conns_stop(&sc);
		fprintf(stderr, "jemattach: serve: cannot listen on %s (in use, no such address, "
			"or a bad TLS certificate or key)\n", cfg->listen);
		targets_fini(&sc);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return 3;
	}
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	url_of(cfg, di ? di->port : 0, url, sizeof(url));
	targets_start(&sc);
	if (cfg->web.mixed_costs)
		fprintf(stderr, "jemattach: serve: warning: the users' bcrypt hashes differ in cost: "
			"how long a check takes tells a user of a lower cost from an unknown name "
			"(give them all one cost)\n");
	fprintf(stderr, "jemattach: serving %s (%s); %s\n", url,
		cfg->nsel ? "the processes --target chooses" : "every jemalloc process",
		cfg->web.nusers ? "basic auth" : "no authentication");

	do {
		while (sigwait(&stop, &sig))
			;
	} while (sig == SIGPIPE);
	fprintf(stderr, "jemattach: serve: stopping (signal %d)\n", sig);
	if (stop_within(&sc, d)) {
		/* A thread still waits (for a worker that does not end): the
		 * process's end ends it; workers get SIGKILL (PR_SET_PDEATHSIG). */
		fprintf(stderr, "jemattach: serve: some work did not end within %d s: left "
			"behind (%u workers stuck in the kernel)\n", STOP_S, child_reap());
		_exit(0);
	}
	targets_fini(&sc);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}

static int serve_run(struct serve_cfg *cfg)
{
	char why[256];
	int rc;

	if (cfg->web_config && (rc = webcfg_load(cfg->web_config, &cfg->web, why, sizeof(why)))) {
		fprintf(stderr, "jemattach: --web-config: %s\n", why);
		return 2;
	}
	if (!cfg->loopback && !cfg->web.cert_pem && !cfg->insecure) {
		fprintf(stderr, "jemattach: serve: %s is not a loopback address: give TLS in "
			"--web-config (tls_server_config), or --insecure to serve plain HTTP to the "
			"network\n", cfg->listen);
		webcfg_free(&cfg->web);
		return 2;
	}
	rc = serve(cfg);
	webcfg_free(&cfg->web);
	return rc;
}

/* The module's entry point (module.h): what jemattach-serve.so exports. */
const struct serve_module jemattach_serve_module = { SERVE_ABI, serve_run };
