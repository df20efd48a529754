/* check_serve.c -- `serve`'s pure parts: the web config, label escaping, decoding a
 * child's answer, and the child mechanism itself (crash, hang, oversize). */
#include <check.h>
#include <crypt.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "serve/serve.h"

static char dir[64];

static void put(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static int load(const char *name, struct webcfg *w, char *err, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return webcfg_load(path, w, err, len);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_serve.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	put("c.pem", "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n");
	put("k.pem", "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n");
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_serve_webcfg_users_and_tls)
{
	struct serve_cfg cfg = { 0 };
	struct serve_ctx sc = { .cfg = &cfg };
	struct crypt_data cd = { 0 };
	char salt[64], yml[512], err[256] = "";
	const char *hash;

	/* Cost 4: the check is the same, only faster than a real config's 10. */
	ck_assert_ptr_nonnull(crypt_gensalt_rn("$2b$", 4, NULL, 0, salt, sizeof(salt)));
	hash = crypt_r("pa ss", salt, &cd);
	ck_assert_ptr_nonnull(hash);
	snprintf(yml, sizeof(yml), "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n"
		 "basic_auth_users:\n  alice: '%s'\n", hash);
	put("ok.yml", yml);
	ck_assert_int_eq(load("ok.yml", &cfg.web, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(cfg.web.cert_pem, "CERTIFICATE"));
	ck_assert_ptr_nonnull(strstr(cfg.web.key_pem, "PRIVATE KEY"));
	ck_assert_uint_eq(cfg.web.nusers, 1);
	pthread_mutex_init(&sc.auth.mu, NULL);
	pthread_cond_init(&sc.auth.cv, NULL);
	ck_assert_int_eq(webcfg_check(&sc, "alice", "pa ss"), 1);
	ck_assert_int_eq(webcfg_check(&sc, "alice", "pa ss"), 1);	/* from the cache */
	ck_assert_uint_eq(sc.auth.n, 1);
	ck_assert_int_eq(webcfg_check(&sc, "alice", "pa s"), 0);
	ck_assert_int_eq(webcfg_check(&sc, "bob", "pa ss"), 0);
	ck_assert_int_eq(webcfg_check(&sc, "", ""), 0);
	webcfg_free(&cfg.web);
}
END_TEST

/* An unknown user is checked against a dummy of the users' highest cost;
 * users of different costs are flagged (serve warns). */
START_TEST(test_serve_webcfg_dummy_has_the_highest_cost)
{
	struct crypt_data cd = { 0 };
	char s4[64], s5[64], h4[128], h5[128], yml[512], err[256] = "";
	struct webcfg w;

	ck_assert_ptr_nonnull(crypt_gensalt_rn("$2b$", 4, NULL, 0, s4, sizeof(s4)));
	ck_assert_ptr_nonnull(crypt_gensalt_rn("$2b$", 5, NULL, 0, s5, sizeof(s5)));
	snprintf(h4, sizeof(h4), "%s", crypt_r("a", s4, &cd));
	snprintf(h5, sizeof(h5), "%s", crypt_r("b", s5, &cd));
	snprintf(yml, sizeof(yml), "basic_auth_users:\n  a: '%s'\n  b: '%s'\n", h4, h5);
	put("mixed.yml", yml);
	ck_assert_int_eq(load("mixed.yml", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(strncmp(w.dummy, "$2y$05$", 7), 0);
	ck_assert_int_eq(w.mixed_costs, 1);
	webcfg_free(&w);
	snprintf(yml, sizeof(yml), "basic_auth_users:\n  a: '%s'\n", h4);
	put("one.yml", yml);
	ck_assert_int_eq(load("one.yml", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(strncmp(w.dummy, "$2y$04$", 7), 0);
	ck_assert_int_eq(w.mixed_costs, 0);
	webcfg_free(&w);
}
END_TEST

/* Of 4 attach slots, one user's processes hold 2 at most; the others are
 * left for other users. */
START_TEST(test_serve_slots_half_per_user)
{
	struct serve_cfg cfg = { 0 };
	struct serve_ctx sc = { .cfg = &cfg };
	struct serve_slots s;

	slots_init(&s, 4);
	ck_assert_uint_eq(s.per_uid, 2);
	ck_assert_int_eq(slots_take(&sc, &s, 1000), 0);
	ck_assert_int_eq(slots_take(&sc, &s, 1000), 0);
	atomic_store(&sc.closing, 1);	/* a wait ends at once: this one would wait */
	ck_assert_int_eq(slots_take(&sc, &s, 1000), -ECANCELED);
	atomic_store(&sc.closing, 0);
	ck_assert_int_eq(slots_take(&sc, &s, 0), 0);
	ck_assert_int_eq(slots_take(&sc, &s, 2000), 0);
	ck_assert_uint_eq(s.left, 0);
	slots_give(&s, 1000);
	ck_assert_int_eq(slots_take(&sc, &s, 1000), 0);
	slots_init(&s, 1);
	ck_assert_uint_eq(s.per_uid, 1);
}
END_TEST

START_TEST(test_serve_webcfg_refusals)
{
	struct webcfg w;
	char err[256];

	put("a.yml", "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n"
	    "  client_auth_type: RequireAndVerifyClientCert\n");
	ck_assert_int_eq(load("a.yml", &w, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "client_auth_type"));
	put("b.yml", "basic_auth_users:\n  u: secret\n");
	ck_assert_int_eq(load("b.yml", &w, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not bcrypt"));
	put("c.yml", "tls_server_config:\n  cert_file: c.pem\n");
	ck_assert_int_eq(load("c.yml", &w, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "key_file"));
	put("d.yml", "tls_server_config:\n  cert_file: nope.pem\n  key_file: k.pem\n");
	ck_assert_int_eq(load("d.yml", &w, err, sizeof(err)), -ENOENT);
	put("e.yml", "basic_auth_users: [\n");
	ck_assert_int_eq(load("e.yml", &w, err, sizeof(err)), -EINVAL);
	put("f.yml", "http_server_config:\n  http2: false\n");
	ck_assert_int_eq(load("f.yml", &w, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "http_server_config"));
	put("g.yml", "- a\n- b\n");
	ck_assert_int_eq(load("g.yml", &w, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(load("missing.yml", &w, err, sizeof(err)), -ENOENT);
}
END_TEST

START_TEST(test_serve_label_escaping)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	metrics_label(f, "a\"b\\c\nd\x01\xc3\xa9");
	fclose(f);
	ck_assert_str_eq(buf, "a\\\"b\\\\c\\nd???");
	free(buf);
}
END_TEST

START_TEST(test_serve_sample_decode_bounds)
{
	struct op_sample os = { 0 }, out;
	struct op_result r = { 0 };
	char buf[sizeof(os) + 2 * sizeof(struct jma_arena_sample)];

	os.smp.narenas = 2;
	os.smp.allocated = 1234;
	memcpy(buf, &os, sizeof(os));
	memset(buf + sizeof(os), 0, sizeof(buf) - sizeof(os));
	r.data = buf;
	r.len = sizeof(buf);
	ck_assert_int_eq(op_sample_decode(&r, &out), 0);
	ck_assert_uint_eq(out.smp.allocated, 1234);
	ck_assert_ptr_eq(out.smp.arenas, (void *)(buf + sizeof(os)));
	r.len = sizeof(buf) - 1;
	ck_assert_int_eq(op_sample_decode(&r, &out), -EINVAL);
	r.len = sizeof(os) + sizeof(struct jma_arena_sample);
	ck_assert_int_eq(op_sample_decode(&r, &out), -EINVAL);	/* says 2, holds 1 */
	r.len = sizeof(os) - 1;
	ck_assert_int_eq(op_sample_decode(&r, &out), -EINVAL);
	r.len = sizeof(buf);
	r.rc = -EIO;
	ck_assert_int_eq(op_sample_decode(&r, &out), -EINVAL);
}
END_TEST

static void child_ok(const void *arg, size_t len, struct op_result *r)
{
	r->data = strdup(arg);
	r->len = len;
	r->held_ns = 42;
	r->attached = 1;
	snprintf(r->msg, sizeof(r->msg), "note");
}

static void child_crash(const void *arg, size_t len, struct op_result *r)
{
	(void)arg, (void)len, (void)r;
	raise(SIGKILL);		/* not SIGSEGV: under ASan its handler would exit instead */
}

static void child_hang(const void *arg, size_t len, struct op_result *r)
{
	(void)arg, (void)len, (void)r;
	for (;;)
		pause();
}

/* As the sampler's window: until SIGTERM, then an answer with what it has. */
static void child_window(const void *arg, size_t len, struct op_result *r)
{
	(void)arg, (void)len;
	while (!child_cancelled)
		pause();
	snprintf(r->msg, sizeof(r->msg), "stopped by %d", (int)child_cancelled);
}

START_TEST(test_serve_child_outcomes)
{
	struct child_opts o = { .hard_limit = 10, .max = 100, .target = 1, .owner = 12345 };
	struct op_result r;
	double t0;

	ck_assert_int_eq(child_forker_start(), 0);
	ck_assert_int_eq(child_run(child_ok, &(struct iovec){ "payload", 7 }, 1, &o, &r), 0);
	ck_assert_str_eq(r.data, "payload");
	ck_assert_uint_eq(r.len, 7);
	ck_assert_uint_eq(r.held_ns, 42);
	ck_assert_int_eq(r.attached, 1);
	ck_assert_str_eq(r.msg, "note");
	op_result_clear(&r);

	o.max = 3;
	ck_assert_int_eq(child_run(child_ok, &(struct iovec){ "payload", 7 }, 1, &o, &r), -EFBIG);
	o.max = 100;
	ck_assert_ptr_null(r.data);
	op_result_clear(&r);

	ck_assert_int_eq(child_run(child_crash, NULL, 0, &o, &r), -EIO);
	ck_assert_ptr_nonnull(strstr(r.msg, "signal 9"));
	op_result_clear(&r);

	t0 = jma_clock_s(CLOCK_MONOTONIC);
	o.hard_limit = 0.3;
	ck_assert_int_eq(child_run(child_hang, NULL, 0, &o, &r), -ETIMEDOUT);
	ck_assert(jma_clock_s(CLOCK_MONOTONIC) - t0 < 5);
	ck_assert_ptr_nonnull(strstr(r.msg, "killed"));
	ck_assert_int_eq(r.killed, 1);
	op_result_clear(&r);

	/* The server stops: a cancellable child is asked to finish, once, and
	 * answers; any other is killed at once. */
	{
		atomic_int stop = 1;

		o.hard_limit = 20;
		o.stop = &stop;
		o.cancellable = 1;
		t0 = jma_clock_s(CLOCK_MONOTONIC);
		ck_assert_int_eq(child_run(child_window, NULL, 0, &o, &r), 0);
		ck_assert(jma_clock_s(CLOCK_MONOTONIC) - t0 < 10);
		ck_assert_str_eq(r.msg, "stopped by 15");
		op_result_clear(&r);
		o.cancellable = 0;
		t0 = jma_clock_s(CLOCK_MONOTONIC);
		ck_assert_int_eq(child_run(child_hang, NULL, 0, &o, &r), -ECANCELED);
		ck_assert(jma_clock_s(CLOCK_MONOTONIC) - t0 < 5);
		op_result_clear(&r);
	}
	ck_assert_uint_eq(child_reap(), 0);
	ck_assert_int_eq(child_refused(1, 12345, (char[64]){ 0 }, 64), 0);
}
END_TEST

/* A shared payload is one copy, counted against the bound until its last
 * reference goes; past the bound none is made. */
START_TEST(test_serve_blob_shared_and_bounded)
{
	size_t before = blob_total();
	struct blob *a = blob_new(1000), *b;
	struct op_result r1 = { 0 }, r2;

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(blob_total(), before + 1000);
	r1.blob = a;
	r1.data = a->data;
	r1.len = a->len;
	op_result_share(&r2, &r1);
	ck_assert_ptr_eq(r2.data, r1.data);
	op_result_clear(&r1);
	ck_assert_uint_eq(blob_total(), before + 1000);	/* r2 holds it */
	op_result_clear(&r2);
	ck_assert_uint_eq(blob_total(), before);
	errno = 0;
	ck_assert_ptr_null(blob_new(BLOB_TOTAL_MAX + 1));
	ck_assert_int_eq(errno, ENOSPC);
	b = blob_new(BLOB_TOTAL_MAX - before);
	ck_assert_ptr_nonnull(b);	/* virtual until touched */
	ck_assert_ptr_null(blob_new(1));
	blob_put(b);
	ck_assert_uint_eq(blob_total(), before);
}
END_TEST

Suite *suite_serve(void)
{
	Suite *s = suite_create("serve");
	TCase *tc = tcase_create("pure");
	TCase *tch = tcase_create("child");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_serve_webcfg_users_and_tls);
	tcase_add_test(tc, test_serve_webcfg_refusals);
	tcase_add_test(tc, test_serve_webcfg_dummy_has_the_highest_cost);
	tcase_add_test(tc, test_serve_slots_half_per_user);
	tcase_add_test(tc, test_serve_label_escaping);
	tcase_add_test(tc, test_serve_sample_decode_bounds);
	tcase_add_test(tc, test_serve_blob_shared_and_bounded);
	suite_add_tcase(s, tc);
	tcase_add_test(tch, test_serve_child_outcomes);
	tcase_set_timeout(tch, 30);
	suite_add_tcase(s, tch);
	return s;
}
