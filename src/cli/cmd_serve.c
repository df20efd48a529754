/* cmd_serve.c -- "serve": options for the HTTP exporter (src/serve), validated here. */
#include <dlfcn.h>
#include <limits.h>
#include <getopt.h>
#include <netdb.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "cli.h"
#include "serve/module.h"

#define DEFAULT_LISTEN "127.0.0.1:9711"

/* "HOST:PORT", "[V6]:PORT" or ":PORT" (every IPv4 address); numeric hosts
 * and "localhost" only: a name resolved at start could change meaning. */
static int parse_listen(const char *s, struct serve_cfg *cfg)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	char host[256];
	const char *colon, *port;
	long long p;

	if (strlen(s) >= sizeof(cfg->listen))
		return -1;
	snprintf(cfg->listen, sizeof(cfg->listen), "%s", s);
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':' || (size_t)(rb - s - 1) >= sizeof(host))
			return -1;
		snprintf(host, sizeof(host), "%.*s", (int)(rb - s - 1), s + 1);
		port = rb + 2;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= sizeof(host))
			return -1;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
		port = colon + 1;
	}
	if (cli_parse_int(port, 1, 65535, &p))
		return -1;
	if (!host[0])
		snprintf(host, sizeof(host), "0.0.0.0");
	else if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	if (getaddrinfo(host, port, &hints, &ai) || !ai)
		return -1;
	memcpy(&cfg->addr, ai->ai_addr, ai->ai_addrlen);
	cfg->addrlen = ai->ai_addrlen;
	freeaddrinfo(ai);
	if (cfg->addr.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)&cfg->addr;

		cfg->loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	} else {
		const struct sockaddr_in6 *a = (const void *)&cfg->addr;

		cfg->loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
	}
	return 0;
}

#define SEL_FORMS "pid=N, uid=U, unit=NAME, exe=PATH, cgroup=PATH or comm=REGEX, " \
	"several joined by commas (all must hold; comm= last)"

/* uid=U: a number or a user's name; -1 (reason in @why) when neither. */
static int parse_uid(const char *v, uid_t *uid, char *why, size_t whylen)
{
	struct passwd *pw;
	long long n;

	if (!cli_parse_int(v, 0, 4294967294LL, &n)) {
		*uid = (uid_t)n;
	} else if ((pw = getpwnam(v))) {
		*uid = pw->pw_uid;
	} else {
		snprintf(why, whylen, "no such user");
		return -1;
	}
	return 0;
}

/* One condition, @len bytes of @s: pid=N, uid=U (number or name), unit=NAME
 * (a systemd unit), exe=PATH, cgroup=PATH, comm=REGEX. */
static int parse_cond(const char *s, size_t len, struct serve_cond *c, char *why, size_t whylen)
{
	char v[sizeof(c->path)];
	const char *eq = memchr(s, '=', len);
	size_t klen = eq ? (size_t)(eq - s) : 0;
	long long n;

	if (!eq || (size_t)(s + len - eq - 1) >= sizeof(v) || eq + 1 == s + len) {
		snprintf(why, whylen, "%s", SEL_FORMS);
		return -1;
	}
	snprintf(v, sizeof(v), "%.*s", (int)(s + len - eq - 1), eq + 1);
#define KEY(k) (klen == sizeof(k) - 1 && !strncmp(s, k, klen))
	if (KEY("pid")) {
		if (cli_parse_int(v, 1, 4194304, &n)) {
			snprintf(why, whylen, "not a process ID");
			return -1;
		}
		c->kind = SEL_PID;
		c->pid = (pid_t)n;
	} else if (KEY("comm")) {
		int err = regcomp(&c->re, v, REG_EXTENDED | REG_NOSUB);

		if (err) {
			regerror(err, &c->re, why, whylen);
			return -1;
		}
		c->kind = SEL_COMM;
	} else if (KEY("uid")) {
		if (parse_uid(v, &c->uid, why, whylen))
			return -1;
		c->kind = SEL_UID;
	} else if (KEY("cgroup") || KEY("exe")) {
		if (v[0] != '/') {
			snprintf(why, whylen, "a %s path starts with /", KEY("exe") ? "exe" : "cgroup");
			return -1;
		}
		c->kind = KEY("exe") ? SEL_EXE : SEL_CGROUP;
		snprintf(c->path, sizeof(c->path), "%s", v);
	} else if (KEY("unit")) {
		if (strchr(v, '/')) {
			snprintf(why, whylen, "a unit's name, as redis-server.service (no /)");
			return -1;
		}
		c->kind = SEL_UNIT;
		snprintf(c->path, sizeof(c->path), "%s", v);
	} else {
		snprintf(why, whylen, "%s", SEL_FORMS);
		return -1;
	}
#undef KEY
	return 0;
}

/* COND[,COND...]: a comm= regular expression takes the rest of the text. */
static int parse_sel(const char *s, struct serve_sel *sel, char *why, size_t whylen)
{
	memset(sel, 0, sizeof(*sel));
	snprintf(sel->text, sizeof(sel->text), "%s", s);
	for (const char *p = s;;) {
		size_t len = strncmp(p, "comm=", 5) ? strcspn(p, ",") : strlen(p);

		if (sel->n == SEL_CONDS) {
			snprintf(why, whylen, "at most %d conditions", SEL_CONDS);
			return -1;
		}
		if (parse_cond(p, len, &sel->c[sel->n], why, whylen))
			return -1;
		sel->n++;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static void free_cfg(struct serve_cfg *cfg)
{
	for (size_t i = 0; i < cfg->nsel; i++)
		for (size_t k = 0; k < cfg->sel[i].n; k++)
			if (cfg->sel[i].c[k].kind == SEL_COMM)
				regfree(&cfg->sel[i].c[k].re);
	free(cfg->sel);
}

/* @path, a server module: its entry point when it is this build's (SERVE_ABI),
 * else NULL and the error said. */
static int (*open_server(const char *path))(struct serve_cfg *)
{
	const struct serve_module *m;
	const char *err;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		/* A module of another build may call what this tool does not have. */
		err = dlerror();
		cli_error(EXIT_MISSING, "serve: the server module %s cannot be loaded: %s%s", path,
			  err ? err : "?", err && strstr(err, "undefined symbol") ?
			  " (a module of another build of jemattach?)" : "");
		return NULL;
	}
	m = dlsym(h, SERVE_MODULE_SYM);
	if (m && !strncmp(m->abi, SERVE_ABI, sizeof(m->abi)))
		return m->run;
	if (m)
		cli_error(EXIT_MISSING, "serve: %s is the server module of another build of "
			  "jemattach (interface %.*s; this jemattach's is %s): install this build's",
			  path, (int)strnlen(m->abi, sizeof(m->abi)), m->abi, SERVE_ABI);
	else
		cli_error(EXIT_MISSING, "serve: %s is not a server module of this jemattach (no %s "
			  "in it; interface %s): install this build's", path, SERVE_MODULE_SYM,
			  SERVE_ABI);
	dlclose(h);
	return NULL;
}

/* The server is a module of its own (jemattach-serve.so, serve/module.h),
 * loaded only here: its libraries (libmicrohttpd, GnuTLS and what GnuTLS
 * loads) would cost every other command about 2.5 ms of start-up CPU.
 * Looked for next to the program (a build tree), then where make install
 * puts it; the first found is the one run, or refused. */
static int (*load_server(void))(struct serve_cfg *)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	static const char *const rel[] = { "/jemattach-serve.so", "/../lib/jemattach/jemattach-serve.so" };

	if (!cli_exe_dir(exe, sizeof(exe))) {
		for (size_t i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
			snprintf(path, sizeof(path), "%s%s", exe, rel[i]);
			if (!access(path, F_OK))
				return open_server(path);
		}
	}
	snprintf(path, sizeof(path), "%s/jemattach-serve.so", JMA_LIBDIR);
	if (!access(path, F_OK))
		return open_server(path);
	cli_error(EXIT_MISSING, "serve: the server module jemattach-serve.so is not installed "
		  "(looked for next to jemattach, and in %s)", JMA_LIBDIR);
	return NULL;
}

static const struct option longopts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "target", required_argument, NULL, 's' },
	{ "min-interval", required_argument, NULL, 'i' },
	{ "timeout", required_argument, NULL, 't' },
	{ "discover-interval", required_argument, NULL, 'd' },
	{ "max-attaches", required_argument, NULL, 'm' },
	{ "web-config", required_argument, NULL, 'w' },
	{ "allow-control", no_argument, NULL, 'C' },
	{ "insecure", no_argument, NULL, 'I' },
	{ "arenas", no_argument, NULL, 'a' },
	{ "max-overhead", required_argument, NULL, 'o' },
	{ "allow-sampler", no_argument, NULL, 'S' },
	{ "max-duty", required_argument, NULL, 'D' },
	{ "census-interval", required_argument, NULL, 'c' },
	{ "census-owners", no_argument, NULL, 'O' },
	{ "census-metrics", required_argument, NULL, 'M' },
	{ 0 },
};

static int add_sel(struct cli *c, struct serve_cfg *cfg, const char *arg)
{
	struct serve_sel *nv = realloc(cfg->sel, (cfg->nsel + 1) * sizeof(*nv));
	char why[256];

	if (!nv)
		return cli_error(EXIT_TARGET, "out of memory");
	cfg->sel = nv;
	if (parse_sel(arg, &cfg->sel[cfg->nsel], why, sizeof(why))) {
		struct serve_sel *bad = &cfg->sel[cfg->nsel];

		for (size_t k = 0; k < bad->n; k++)
			if (bad->c[k].kind == SEL_COMM)
				regfree(&bad->c[k].re);
		return cli_usage(c, "serve", "invalid --target \"%s\": %s", arg, why);
	}
	for (size_t k = 0; k < cfg->sel[cfg->nsel].n; k++)
		cfg->need_exe |= cfg->sel[cfg->nsel].c[k].kind == SEL_EXE;
	cfg->nsel++;
	return EXIT_OK;
}

/* A number option: its value in [lo, hi], or the usage error naming it. */
static int num_opt(struct cli *c, const char *name, const char *what, double lo, double hi,
		   double *v)
{
	if (!cli_parse_num(optarg, lo, hi, v))
		return EXIT_OK;
	return cli_usage(c, "serve", "invalid --%s \"%s\": %s", name, optarg, what);
}

/* One option into @cfg (--listen and --web-config into @listen, @web). */
static int serve_option(struct cli *c, int opt, struct serve_cfg *cfg, const char **listen,
			const char **web)
{
	double v;
	int rc;

	switch (opt) {
	case 'l': *listen = optarg; return EXIT_OK;
	case 'w': *web = optarg; return EXIT_OK;
	case 'C': cfg->allow_control = 1; return EXIT_OK;
	case 'S': cfg->allow_sampler = 1; return EXIT_OK;
	case 'I': cfg->insecure = 1; return EXIT_OK;
	case 'a': cfg->arenas = 1; return EXIT_OK;
	case 's': return add_sel(c, cfg, optarg);
	case 'i':
		return num_opt(c, "min-interval", "seconds, 0 to 3600", 0, 3600, &cfg->min_interval);
	case 't':
		return num_opt(c, "timeout", "seconds, 0.1 to 600", 0.1, 600, &cfg->timeout);
	case 'd':
		return num_opt(c, "discover-interval", "seconds, 0.2 to 3600", 0.2, 3600,
			       &cfg->discover_interval);
	case 'm':
		if ((rc = num_opt(c, "max-attaches", "1 to 256", 1, 256, &v)) != EXIT_OK)
			return rc;
		if (v != (unsigned)v)
			return cli_usage(c, "serve", "invalid --max-attaches \"%s\": 1 to 256", optarg);
		cfg->max_attaches = (unsigned)v;
		return EXIT_OK;
	case 'o':
		if ((rc = num_opt(c, "max-overhead", "a percentage, 0 to 100", 0, 100, &v)) == EXIT_OK)
			cfg->max_overhead = v / 100;
		return rc;
	case 'D':
		if ((rc = num_opt(c, "max-duty", "a percentage, 0.1 to 100", 0.1, 100, &v)) == EXIT_OK)
			cfg->max_duty = v / 100;
		return rc;
	case 'c':
		return num_opt(c, "census-interval", "seconds, 1 to 86400", 1, 86400,
			       &cfg->census_interval);
	case 'O': cfg->census_owners = 1; return EXIT_OK;
	case 'M':
		if ((rc = num_opt(c, "census-metrics", "a number of types, 1 to 1000", 1, 1000, &v)))
			return rc;
		if (v != (unsigned)v)
			return cli_usage(c, "serve", "invalid --census-metrics \"%s\": 1 to 1000", optarg);
		cfg->census_metrics = (unsigned)v;
		return EXIT_OK;
	default:
		return cli_usage(c, "serve", "invalid option");
	}
}

/* The options given, checked together; @cfg then holds what serve_run needs. */
static int serve_config(struct cli *c, int argc, char **argv, struct serve_cfg *cfg)
{
	const char *listen = DEFAULT_LISTEN, *web = NULL;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1)
		if ((rc = serve_option(c, opt, cfg, &listen, &web)) != EXIT_OK)
			return rc;
	if (optind < argc)
		return cli_usage(c, "serve", "unexpected argument \"%s\"", argv[optind]);
	if (parse_listen(listen, cfg))
		return cli_usage(c, "serve", "invalid --listen \"%s\": ADDRESS:PORT, [IPv6]:PORT or "
				 ":PORT, the address numeric", listen);
	if (c->opt.flags & (JMA_F_FORCE | JMA_F_FREEZE))
		return cli_usage(c, "serve", "serve never forces a call nor freezes a process "
				 "(--force, --freeze)");
	cfg->web_config = web;
	cfg->opt = c->opt;
	/* One call never outlasts the request that waits for it. */
	if (cfg->opt.timeout <= 0)
		cfg->opt.timeout = cfg->timeout;
	/* systemd's CacheDirectory= (the unit's home is read-only). */
	if (getenv("CACHE_DIRECTORY") && getenv("CACHE_DIRECTORY")[0] == '/' && c->opt.cache_dir)
		cfg->opt.cache_dir = getenv("CACHE_DIRECTORY");
	if (!c->verbose)
		cfg->opt.log = NULL;
	cfg->verbose = c->verbose;
	return EXIT_OK;
}

int cmd_serve(struct cli *c, int argc, char **argv)
{
	struct serve_cfg cfg = { .min_interval = 1, .timeout = 5, .discover_interval = 5,
				 .max_attaches = 4, .max_overhead = 0.05, .max_duty = 0.05,
				 .census_interval = 60 };
	int (*run)(struct serve_cfg *);
	int rc = serve_config(c, argc, argv, &cfg);

	if (rc == EXIT_OK) {
		run = load_server();
		rc = run ? run(&cfg) : EXIT_MISSING;
	}
	free_cfg(&cfg);
	return rc;
}
