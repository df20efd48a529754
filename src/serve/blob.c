/* blob.c -- an answer's payload, shared by the requests it serves, bounded in all.
 *
 * Before, every request copied the answer it waited for: 16 concurrent heap
 * requests for a process whose dumps are 128 MB took the server to 1.97 GB.
 * A blob is made once (a child's payload, read straight into it), shared by
 * reference, and counted: all blobs alive at once take at most
 * BLOB_TOTAL_MAX bytes, so what requests cost the server does not grow with
 * how many there are.
 */
#include <errno.h>
#include <stdlib.h>

#include "serve/serve.h"

static atomic_size_t total;

struct blob *blob_new(size_t len)
{
	size_t now = atomic_load(&total);
	struct blob *b;

	/* Counted first, so that two requests at once cannot both pass. */
	do {
		if (len > BLOB_TOTAL_MAX || now > BLOB_TOTAL_MAX - len) {
			errno = ENOSPC;
			return NULL;
		}
	} while (!atomic_compare_exchange_weak(&total, &now, now + len));
	b = malloc(sizeof(*b) + len + 1);
	if (!b) {
		atomic_fetch_sub(&total, len);
		errno = ENOMEM;
		return NULL;
	}
	atomic_init(&b->refs, 1);
	b->len = len;
	b->data[len] = '\0';
	return b;
}

struct blob *blob_get(struct blob *b)
{
	if (b)
		atomic_fetch_add(&b->refs, 1);
	return b;
}

void blob_put(struct blob *b)
{
	if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
		atomic_fetch_sub(&total, b->len);
		free(b);
	}
}

size_t blob_total(void)
{
	return atomic_load(&total);
}
