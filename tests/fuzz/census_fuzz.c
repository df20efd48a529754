/* census_fuzz.c -- libFuzzer harness: the census snapshot reader, the difference of a
 * snapshot with itself, and every report of both, on arbitrary bytes.
 *
 * `make fuzz` builds it with clang -fsanitize=fuzzer,address,undefined and
 * runs it over tests/fuzz/census_corpus; tests/check_census_fuzz.c includes
 * this file to replay the corpus in `make check`.  An input is a snapshot
 * file, or else a body the harness compresses (so that changes get past the
 * gzip checksum).  The reader's bounds (4 GiB of body, 4 GiB of tables) are
 * lowered to the fuzzer's memory.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <jemattach.h>

#include "census/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int discard(void *arg, const char *buf, size_t len)
{
	(void)arg, (void)buf, (void)len;
	return 0;
}

static void reports(const struct jma_census *c, const struct jma_census *base)
{
	struct jma_census_report_opts ro = { .format = JMA_CENSUS_JSON, .top = 3, .leaks = 1 };
	struct jma_census_row *rows;
	struct jma_census_diff *d;
	size_t n;
	char buf[64];

	if (jma_census_report(c, NULL, &ro, discard, NULL))
		__builtin_trap();
	ro.format = JMA_CENSUS_PPROF;
	if (jma_census_report(c, base, &ro, discard, NULL))
		__builtin_trap();
	for (int by = JMA_CENSUS_BY_SIZE; by <= JMA_CENSUS_BY_OWNER; by++) {
		if (jma_census_rows(c, (enum jma_census_by)by, &rows, &n))
			__builtin_trap();
		for (size_t i = 0; i < n; i++)
			jma_census_row_label(&rows[i], buf, sizeof(buf));
		free(rows);
	}
	if (jma_census_diff(base, NULL, c, NULL, &d))
		__builtin_trap();
	ro.format = JMA_CENSUS_JSON;
	if (jma_census_diff_json(d, &ro, discard, NULL))
		__builtin_trap();
	jma_census_diff_free(d);
}

/* A snapshot file of @body: its header, then the body gzip'd. */
static uint8_t *wrap(const uint8_t *body, size_t len, size_t *olen)
{
	z_stream z = { 0 };
	size_t cap = len + len / 100 + 1024;
	uint8_t *out = malloc(cap);

	if (!out || deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(out);
		return NULL;
	}
	memcpy(out, "JMACENS\001", 8);
	z.next_in = (Bytef *)body;
	z.avail_in = (uInt)len;
	z.next_out = out + 8;
	z.avail_out = (uInt)(cap - 8);
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(out);
		return NULL;
	}
	*olen = 8 + z.total_out;
	deflateEnd(&z);
	return out;
}

/* An input that is not a snapshot file is taken as a body and wrapped: the
 * fuzzer's changes then reach the reader past gzip's checksum. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jma_census *c, *again;
	char msg[512] = "";
	uint8_t *file = NULL;
	size_t len = size;
	int err;

	if (size < 7 || memcmp(data, "JMACENS", 7)) {
		if (!(file = wrap(data, size, &len)))
			return 0;
		data = file;
	}
	err = census_snap_parse(data, len, 64 << 20, 256 << 20, &c, NULL, msg, sizeof(msg));
	if (err) {
		if (!msg[0])
			__builtin_trap();	/* every refusal must say why */
		free(file);
		return 0;
	}
	/* Against itself: every block and row meets its twin in the merges. */
	if (census_snap_parse(data, len, 64 << 20, 256 << 20, &again, NULL, msg, sizeof(msg)))
		__builtin_trap();
	reports(c, again);
	jma_census_free(again);
	jma_census_free(c);
	free(file);
	return 0;
}
