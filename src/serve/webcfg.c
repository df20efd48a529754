/* webcfg.c -- --web-config: TLS and basic auth as Prometheus's exporter-toolkit reads them.
 *
 *   tls_server_config:
 *     cert_file: server.crt          (relative paths: from the file's directory)
 *     key_file: server.key
 *   basic_auth_users:
 *     prometheus: $2y$10$...         (bcrypt, as `htpasswd -nBC 10 USER` makes)
 *
 * Parsed with libyaml.  A key this server does not implement (client_auth_type,
 * http_server_config, ...) is an error, not ignored: a config that asks for
 * client certificates must not silently run without them.  Passwords are
 * checked with libxcrypt's crypt_r; a verified user+password is remembered
 * (by its SHA-256) so that a scrape a second costs no bcrypt round each.
 *
 * An unknown user's password is checked against a dummy setting of the
 * users' highest cost, made at load: the check takes as long as a known
 * user's (before, a fixed cost-10 dummy answered an unknown name in 72 ms and
 * a cost-12 user in 274 ms, telling which names exist).  Users of different
 * costs still differ from each other: serve warns at start.  One bcrypt
 * check runs at a time, so that wrong passwords sent at will cost the host
 * one CPU at most; a remembered user+password needs none.
 */
#include <errno.h>
#include <crypt.h>
#include <gnutls/crypto.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "serve/serve.h"

#define PEM_MAX (1u << 20)

static int err_out(char *err, size_t len, int rc, const char *fmt, const char *a, const char *b)
{
	snprintf(err, len, fmt, a, b);
	return rc;
}

static const char *scalar(yaml_document_t *d, yaml_node_t *n)
{
	(void)d;
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The file at @name (relative to @dir), whole, NUL-terminated. */
static int read_file(const char *dir, const char *name, char **out, char *err, size_t errlen)
{
	char path[4096];
	FILE *f;
	size_t n;
	char *buf;

	if (snprintf(path, sizeof(path), "%s%s%s", name[0] == '/' ? "" : dir,
		     name[0] == '/' ? "" : "/", name) >= (int)sizeof(path))
		return err_out(err, errlen, -ENAMETOOLONG, "%s: path too long%s", name, "");
	f = fopen(path, "re");
	if (!f)
		return err_out(err, errlen, -errno, "%s: %s", path, strerror(errno));
	buf = malloc(PEM_MAX + 1);
	n = buf ? fread(buf, 1, PEM_MAX + 1, f) : 0;
	fclose(f);
	if (!buf)
		return -ENOMEM;
	if (n == 0 || n > PEM_MAX) {
		free(buf);
		return err_out(err, errlen, -EINVAL, "%s: %s", path, n ? "larger than 1 MiB" : "empty");
	}
	buf[n] = '\0';
	*out = buf;
	return 0;
}

static int tls_section(yaml_document_t *d, yaml_node_t *m, const char *dir, struct webcfg *w,
		       char *err, size_t errlen)
{
	const char *cert = NULL, *key = NULL;
	int rc;

	if (m->type != YAML_MAPPING_NODE)
		return err_out(err, errlen, -EINVAL, "tls_server_config: not a mapping%s%s", "", "");
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *k = scalar(d, yaml_document_get_node(d, p->key));
		const char *v = scalar(d, yaml_document_get_node(d, p->value));

		if (k && v && !strcmp(k, "cert_file"))
			cert = v;
		else if (k && v && !strcmp(k, "key_file"))
			key = v;
		else
			return err_out(err, errlen, -EINVAL, "tls_server_config: \"%s\" is not "
				       "supported (only cert_file and key_file)%s", k ? k : "?", "");
	}
	if (!cert || !key)
		return err_out(err, errlen, -EINVAL, "tls_server_config: needs cert_file and "
			       "key_file%s%s", "", "");
	if ((rc = read_file(dir, cert, &w->cert_pem, err, errlen)) ||
	    (rc = read_file(dir, key, &w->key_pem, err, errlen)))
		return rc;
	return 0;
}

/* A bcrypt hash libxcrypt accepts. */
static int hash_ok(const char *h)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *r;
	int ok;

	if (!cd)
		return 0;
	r = crypt_r("", h, cd);
	ok = strncmp(h, "$2", 2) == 0 && r && r[0] != '*' && strlen(r) == strlen(h);
	free(cd);
	return ok;
}

/* The cost of bcrypt hash @h ("$2y$12$..."): 12. */
static unsigned long cost_of(const char *h)
{
	return strtoul(h + 4, NULL, 10);
}

/* w->dummy: a bcrypt setting of the users' highest cost, with a random salt. */
static int make_dummy(struct webcfg *w, char *err, size_t errlen)
{
	unsigned long cost = 0;

	for (size_t i = 0; i < w->nusers; i++) {
		unsigned long c = cost_of(w->users[i].hash);

		if (i && c != cost)
			w->mixed_costs = 1;
		if (c > cost)
			cost = c;
	}
	if (!w->nusers)
		return 0;
	if (!crypt_gensalt_rn("$2y$", cost, NULL, 0, w->dummy, sizeof(w->dummy))) {
		snprintf(err, errlen, "basic_auth_users: cannot make a bcrypt setting of cost %lu",
			 cost);
		return -EINVAL;
	}
	return 0;
}

static int users_section(yaml_document_t *d, yaml_node_t *m, struct webcfg *w, char *err,
			 size_t errlen)
{
	size_t n;

	if (m->type != YAML_MAPPING_NODE)
		return err_out(err, errlen, -EINVAL, "basic_auth_users: not a mapping%s%s", "", "");
	n = (size_t)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
	w->users = calloc(n ? n : 1, sizeof(*w->users));
	if (!w->users)
		return -ENOMEM;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *k = scalar(d, yaml_document_get_node(d, p->key));
		const char *v = scalar(d, yaml_document_get_node(d, p->value));

		if (!k || !v || !k[0])
			return err_out(err, errlen, -EINVAL, "basic_auth_users: each entry is "
				       "USER: BCRYPT-HASH%s%s", "", "");
		if (!hash_ok(v))
			return err_out(err, errlen, -EINVAL, "basic_auth_users: the hash of \"%s\" is "
				       "not bcrypt (make one with htpasswd -nBC 10 %s)", k, k);
		w->users[w->nusers].name = strdup(k);
		w->users[w->nusers].hash = strdup(v);
		if (!w->users[w->nusers].name || !w->users[w->nusers].hash)
			return -ENOMEM;
		w->nusers++;
	}
	return make_dummy(w, err, errlen);
}

int webcfg_load(const char *path, struct webcfg *w, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	char dirbuf[4096];
	const char *dir;
	FILE *f;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	dir = dirname(dirbuf);
	f = fopen(path, "re");
	if (!f)
		return err_out(err, errlen, -errno, "%s: %s", path, strerror(errno));
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%zu: %s", path, parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		fclose(f);
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_MAPPING_NODE)
		rc = err_out(err, errlen, -EINVAL, "%s: not a mapping of settings%s", path, "");
	for (yaml_node_pair_t *p = root && !rc ? root->data.mapping.pairs.start : NULL;
	     p && p < root->data.mapping.pairs.top && !rc; p++) {
		const char *k = scalar(&doc, yaml_document_get_node(&doc, p->key));
		yaml_node_t *v = yaml_document_get_node(&doc, p->value);

		if (k && v && !strcmp(k, "tls_server_config"))
			rc = tls_section(&doc, v, dir, w, err, errlen);
		else if (k && v && !strcmp(k, "basic_auth_users"))
			rc = users_section(&doc, v, w, err, errlen);
		else
			rc = err_out(err, errlen, -EINVAL, "%s: \"%s\" is not supported "
				     "(tls_server_config, basic_auth_users)", path, k ? k : "?");
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	if (rc)
		webcfg_free(w);
	return rc;
}

void webcfg_free(struct webcfg *w)
{
	for (size_t i = 0; i < w->nusers; i++) {
		free(w->users[i].name);
		free(w->users[i].hash);
	}
	free(w->users);
	if (w->key_pem)
		explicit_bzero(w->key_pem, strlen(w->key_pem));
	free(w->key_pem);
	free(w->cert_pem);
	memset(w, 0, sizeof(*w));
}

static int same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

int webcfg_check(struct serve_ctx *sc, const char *user, const char *pass)
{
	const struct webcfg *w = &sc->cfg->web;
	const char *hash = w->dummy;
	struct crypt_data *cd;
	unsigned char key[32];
	size_t ul = strlen(user), pl = strlen(pass);
	char *kb;
	int ok = 0, known = 0;

	for (size_t i = 0; i < w->nusers; i++)
		if (!strcmp(w->users[i].name, user)) {
			hash = w->users[i].hash;
			known = 1;
		}
	kb = malloc(ul + pl + 2);
	if (!kb)
		return 0;
	memcpy(kb, user, ul + 1);
	memcpy(kb + ul + 1, pass, pl + 1);
	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, kb, ul + pl + 2, key) < 0)
		memset(key, 0, sizeof(key));
	explicit_bzero(kb, ul + pl + 2);
	free(kb);
	pthread_mutex_lock(&sc->auth.mu);
	for (unsigned i = 0; known && i < sc->auth.n; i++)
		if (!memcmp(sc->auth.key[i], key, sizeof(key)))
			ok = 1;
	pthread_mutex_unlock(&sc->auth.mu);
	if (ok)
		return 1;
	cd = calloc(1, sizeof(*cd));
	if (cd) {
		const char *r;

		pthread_mutex_lock(&sc->auth.mu);
		while (sc->auth.hashing)
			pthread_cond_wait(&sc->auth.cv, &sc->auth.mu);
		sc->auth.hashing = 1;
		pthread_mutex_unlock(&sc->auth.mu);
		r = crypt_r(pass, hash, cd);
		ok = known && r && same(r, hash);
		pthread_mutex_lock(&sc->auth.mu);
		sc->auth.hashing = 0;
		pthread_cond_signal(&sc->auth.cv);
		pthread_mutex_unlock(&sc->auth.mu);
		explicit_bzero(cd, sizeof(*cd));
		free(cd);
	}
	if (ok) {
		pthread_mutex_lock(&sc->auth.mu);
		memcpy(sc->auth.key[sc->auth.next], key, sizeof(key));
		sc->auth.next = (sc->auth.next + 1) % 16;
		if (sc->auth.n < 16)
			sc->auth.n++;
		pthread_mutex_unlock(&sc->auth.mu);
	}
	return ok;
}
