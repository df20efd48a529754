/* heap_fuzz.c -- libFuzzer harness: the heap-profile parser, base subtraction
 * and every report format on arbitrary bytes.
 *
 * `make fuzz` builds it with clang -fsanitize=fuzzer,address,undefined and
 * runs it over tests/fuzz/corpus; tests/check_heap_fuzz.c includes this file
 * to replay the corpus in `make check`.  Symbolization is left out: it would
 * open whatever paths the input names.
 */
#include <stddef.h>
#include <stdint.h>

#include <jemattach.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int discard(void *arg, const char *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
	return 0;
}

static void reports(jma_heap *h)
{
	for (int f = JMA_HEAP_TEXT; f <= JMA_HEAP_PPROF; f++) {
		struct jma_heap_report_opts o = { .sz = sizeof(o), .format = (enum jma_heap_format)f, .top = 3,
						  .lines = f & 1, .fold = "^f" };
		o.sample = (enum jma_heap_sample)(f & 1);
		if (jma_heap_report(h, &o, discard, NULL) && !*jma_heap_errmsg(h))
			__builtin_trap();	/* every failure must say why */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char msg[512];
	jma_heap *h, *base;

	if (jma_heap_parse(data, size, "fuzz", &h, msg, sizeof(msg))) {
		if (!msg[0])
			__builtin_trap();
		return 0;
	}
	reports(h);
	/* A profile minus itself: every stack meets its twin in the merge. */
	if (!jma_heap_parse(data, size, "base", &base, msg, sizeof(msg))) {
		if (!jma_heap_subtract(h, base))
			reports(h);
		jma_heap_free(base);
	}
	jma_heap_free(h);
	return 0;
}
