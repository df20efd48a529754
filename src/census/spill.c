/* spill.c -- a stream of 32-bit words kept on disk: the pointer graph of --by root.
 *
 * The graph has a word per pointer between blocks (and one per block that
 * has any); kept in memory it was the largest of --by root's tables.  It is
 * written once, in order, and read front to back a few times (the
 * dominator rounds), so it goes to an unnamed file (O_TMPFILE: no name
 * anyone else could open or replace, gone when closed) in $TMPDIR, else
 * /var/tmp, through a buffer of BUF bytes.  Where no such file can be made
 * it stays in memory, and the census says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "census/census.h"

#define BUF	(4u << 20)
#define BUFW	(BUF / 4)

int cen_spill_open(struct cen_spill *sp)
{
	const char *dir = getenv("TMPDIR");

	memset(sp, 0, sizeof(*sp));
	sp->fd = -1;
	if (!(sp->buf = malloc(BUF)))
		return -ENOMEM;
	if (!dir || dir[0] != '/')
		dir = "/var/tmp";
	sp->fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (sp->fd < 0 && strcmp(dir, "/var/tmp"))
		sp->fd = open("/var/tmp", O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	return 0;
}

void cen_spill_close(struct cen_spill *sp)
{
	if (sp->fd >= 0)
		close(sp->fd);
	free(sp->buf);
	free(sp->mem);
	memset(sp, 0, sizeof(*sp));
	sp->fd = -1;
}

static int write_all(int fd, const void *p, size_t len, uint64_t off)
{
	const char *b = p;

	while (len) {
		ssize_t w = pwrite(fd, b, len, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		b += w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* The buffer's words to the file, or to memory when there is no file. */
static int flush(struct cen_spill *sp)
{
	int err = 0;

	if (!sp->nbuf)
		return 0;
	if (sp->fd >= 0) {
		err = write_all(sp->fd, sp->buf, sp->nbuf * 4, sp->n * 4);
	} else if (!(err = cen_grow(&sp->mem, &sp->capmem, sp->n + sp->nbuf, 4))) {
		memcpy(sp->mem + sp->n, sp->buf, sp->nbuf * 4);
	}
	if (!err) {
		sp->n += sp->nbuf;
		sp->nbuf = 0;
	}
	return err;
}

int cen_spill_put(struct cen_spill *sp, uint32_t w)
{
	int err;

	if (sp->nbuf == BUFW && (err = flush(sp)))
		return err;
	sp->buf[sp->nbuf++] = w;
	return 0;
}

int cen_spill_each(struct cen_spill *sp, int rewrite, int (*fn)(void *arg, uint32_t *w, size_t n),
		   void *arg)
{
	int err = flush(sp);

	for (uint64_t at = 0; !err && at < sp->n;) {
		size_t n = sp->n - at < BUFW ? (size_t)(sp->n - at) : BUFW;
		uint32_t *w = sp->buf;

		if (sp->fd < 0) {
			w = sp->mem + at;
		} else {
			ssize_t r = pread(sp->fd, w, n * 4, (off_t)(at * 4));
			if (r != (ssize_t)(n * 4)) {
				err = r < 0 ? -errno : -EIO;
				break;
			}
		}
		err = fn(arg, w, n);
		if (!err && rewrite && sp->fd >= 0)
			err = write_all(sp->fd, w, n * 4, at * 4);
		at += n;
	}
	return err;
}

uint64_t cen_spill_memory(const struct cen_spill *sp)
{
	return BUF + (sp->fd < 0 ? sp->capmem * 4 : 0);
}
