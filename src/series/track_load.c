/* track_load.c -- a saved track read back: prof track's JSON lines, or a
 * directory of heap profiles jemalloc wrote itself (lg_prof_interval, prof_gdump).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jemattach/heap.h>

#include "series/track_priv.h"

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

static int load_site(jma_track *t, json_t *o)
{
	const char *ids = json_string_value(json_object_get(o, "id"));
	json_t *fr = json_object_get(o, "frames");
	struct track_point p = {
		.live_bytes = num(o, "live_bytes"), .live_objs = num(o, "live_objs"),
		.acc_bytes = num(o, "acc_bytes"), .acc_objs = num(o, "acc_objs"),
		.samples = (uint64_t)num(o, "samples"),
	};
	char *end;
	uint64_t id;
	long i;

	if (!ids || !*ids)
		return -EINVAL;
	id = strtoull(ids, &end, 16);
	if (*end)
		return -EINVAL;
	if ((i = track_site(t, id)) < 0)
		return -ENOMEM;
	track_add_point(t, (size_t)i, &p);
	if (!t->sites[i].name && json_is_array(fr)) {
		size_t n = json_array_size(fr);
		const char **v = calloc(n ? n : 1, sizeof(*v));
		int err;

		if (!v)
			return -ENOMEM;
		for (size_t j = 0; j < n; j++) {
			v[j] = json_string_value(json_array_get(fr, j));
			if (!v[j]) {
				free(v);
				return -EINVAL;
			}
		}
		err = track_site_name(t, (size_t)i, v, n,
				      json_string_value(json_object_get(o, "module")));
		free(v);
		return err;
	}
	return 0;
}

static int load_record(jma_track *t, json_t *o)
{
	struct jma_track_meta m = {
		.time = num(o, "time"), .allocated = (uint64_t)num(o, "allocated"),
		.hold_ns = (uint64_t)num(o, "hold_ns"),
	};
	json_t *sites = json_object_get(o, "sites");
	const char *what = json_string_value(json_object_get(o, "what"));
	static const char *const unnamed[] = { "?" };
	size_t from = t->nsites;
	int err = 0;

	if (!json_is_object(o) || !json_is_array(sites))
		return -EINVAL;
	track_begin(t, &m, (uint64_t)num(o, "period"), json_is_true(json_object_get(o, "accum")));
	/* A census series (exact counts of types, owners...) says so. */
	t->exact = json_is_true(json_object_get(o, "exact"));
	if (what && *what && strlen(what) < sizeof(t->what) &&
	    strspn(what, "abcdefghijklmnopqrstuvwxyz") == strlen(what))
		snprintf(t->what, sizeof(t->what), "%s", what);
	for (size_t j = 0; j < json_array_size(sites) && !err; j++)
		err = load_site(t, json_array_get(sites, j));
	/* A record whose names were cut off still gives numbers. */
	for (size_t i = from; i < t->nsites && !err; i++)
		if (!t->sites[i].name)
			err = track_site_name(t, i, unnamed, 1, NULL);
	track_end(t);
	return err;
}

static int load_jsonl(jma_track *t, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, no = 0;
	int err = 0;

	if (!f)
		return track_fail(t, -errno, "%s: %s", path, strerror(errno));
	while (!err && getline(&line, &cap, f) > 0) {
		json_error_t je;
		json_t *o;

		no++;
		if (line[strspn(line, " \t\r\n")] == 0)
			continue;
		o = json_loads(line, 0, &je);
		if (!o)
			err = track_fail(t, -EINVAL, "%s:%zu: %s", path, no, je.text);
		else if ((err = load_record(t, o)))
			track_fail(t, err, "%s:%zu: %s", path, no, err == -ENOMEM ? "out of memory" :
				   "not a prof track record");
		json_decref(o);
	}
	free(line);
	fclose(f);
	if (!err && !t->nsnaps)
		err = track_fail(t, -EINVAL, "%s: no snapshot", path);
	return err;
}

struct entry {
	char *name;
	struct timespec mtime;
};

/* jemalloc names its dumps <prefix>.<pid>.<seq>.<kind><kseq>.heap with one
 * <seq> for all kinds: version order of the names is the order written. */
static int cmp_entry(const void *a, const void *b)
{
	return strverscmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static int read_all(int dfd, const char *name, char **buf, size_t *len)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t cap = 1 << 16;
	ssize_t r;

	if (fd < 0)
		return -errno;
	*len = 0;
	*buf = malloc(cap);
	while (*buf && (r = read(fd, *buf + *len, cap - *len)) > 0) {
		*len += (size_t)r;
		if (*len == cap) {
			char *n = cap >= JMA_HEAP_MAX_BYTES ? NULL : realloc(*buf, cap *= 2);
			if (!n) {
				free(*buf);
				*buf = NULL;
			}
			*buf = n;
		}
	}
	close(fd);
	return *buf ? 0 : -ENOMEM;
}

static int load_dir(jma_track *t, const char *path)
{
	DIR *d = opendir(path);
	struct entry *e = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int err = 0;

	if (!d)
		return track_fail(t, -errno, "%s: %s", path, strerror(errno));
	while (!err && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct stat st;

		if (l < 6 || strcmp(de->d_name + l - 5, ".heap") ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			struct entry *v = realloc(e, (cap = cap ? cap * 2 : 64) * sizeof(*e));
			if (!v) {
				err = -ENOMEM;
				break;
			}
			e = v;
		}
		e[n].mtime = st.st_mtim;
		if (!(e[n].name = strdup(de->d_name)))
			err = -ENOMEM;
		else
			n++;
	}
	if (err)
		track_fail(t, err, "%s: out of memory", path);
	else if (!n)
		err = track_fail(t, -ENOENT, "%s: no *.heap profiles", path);
	qsort(e, n, sizeof(*e), cmp_entry);
	for (size_t i = 0; i < n && !err; i++) {
		struct jma_track_meta m = {
			.time = (double)e[i].mtime.tv_sec + (double)e[i].mtime.tv_nsec / 1e9,
		};
		char *buf = NULL;
		size_t len = 0;

		if ((err = read_all(dirfd(d), e[i].name, &buf, &len)))
			track_fail(t, err, "%s/%s: %s", path, e[i].name, strerror(-err));
		else
			err = jma_track_add(t, buf, len, e[i].name, &m);
		free(buf);
	}
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
	closedir(d);
	return err;
}

int jma_track_load(jma_track *t, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return track_fail(t, -errno, "%s: %s", path, strerror(errno));
	return S_ISDIR(st.st_mode) ? load_dir(t, path) : load_jsonl(t, path);
}
