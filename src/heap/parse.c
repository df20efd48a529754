/* parse.c -- jemalloc heap profiles (heap_v2 and 3.x) into a jma_heap.
 *
 * The input is untrusted: it is read as bytes with an explicit end, never as
 * a C string; every number is checked for overflow, every list is bounded
 * (JMA_HEAP_MAX_FRAMES, PATH_MAX), and anything that does not fit the grammar
 * is an error naming its line.  A profile that stops early (no
 * MAPPED_LIBRARIES, a stack without counts, a last line without its newline)
 * is reported as truncated: jemalloc always writes all three.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heap.h"

struct cur {
	const char *p, *end;
	size_t line;		/* number of the line last taken */
	const char *name;
	char *msg;
	size_t msglen;
};

/* A line being read: [p, end). */
struct tok {
	const char *p, *end;
};

static int bad(struct cur *c, size_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(struct cur *c, size_t line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(c->msg, c->msglen, "%s:%zu: ", c->name, line);

	if (n >= 0 && (size_t)n < c->msglen) {
		va_start(ap, fmt);
		vsnprintf(c->msg + n, c->msglen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The next line, without its newline.  Returns 0 at the end of the input. */
static int next_line(struct cur *c, struct tok *t, int *has_nl)
{
	const char *nl;

	if (c->p >= c->end)
		return 0;
	nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	t->p = c->p;
	t->end = nl ? nl : c->end;
	*has_nl = nl != NULL;
	c->p = nl ? nl + 1 : c->end;
	c->line++;
	/* Profiles written on or copied through Windows end lines in \r\n. */
	if (t->end > t->p && t->end[-1] == '\r')
		t->end--;
	return 1;
}

static void skip_ws(struct tok *t)
{
	while (t->p < t->end && (*t->p == ' ' || *t->p == '\t'))
		t->p++;
}

static int at_end(struct tok *t)
{
	skip_ws(t);
	return t->p == t->end;
}

static int take(struct tok *t, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(t->end - t->p) < n || memcmp(t->p, word, n))
		return 0;
	t->p += n;
	return 1;
}

static int take_u64(struct tok *t, uint64_t *v)
{
	const char *start = t->p;

	*v = 0;
	for (; t->p < t->end && *t->p >= '0' && *t->p <= '9'; t->p++) {
		unsigned d = (unsigned)(*t->p - '0');
		if (*v > (UINT64_MAX - d) / 10)
			return 0;
		*v = *v * 10 + d;
	}
	return t->p > start;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Hex with an optional 0x, at most 16 digits. */
static int take_hex(struct tok *t, uint64_t *v)
{
	int digits = 0, d;

	if (!take(t, "0x"))
		take(t, "0X");
	*v = 0;
	for (; t->p < t->end && (d = hexval(*t->p)) >= 0; t->p++) {
		if (++digits > 16)
			return 0;
		*v = (*v << 4) | (uint64_t)d;
	}
	return digits > 0;
}

/* "N: N [N: N]": cur objects, cur bytes, accumulated objects and bytes. */
static int take_counts(struct tok *t, uint64_t raw[HEAP_NVAL])
{
	static const char *const after[HEAP_NVAL] = { ":", "[", ":", "]" };

	for (int i = 0; i < HEAP_NVAL; i++) {
		skip_ws(t);
		if (!take_u64(t, &raw[i]))
			return 0;
		skip_ws(t);
		if (!take(t, after[i]))
			return 0;
	}
	return 1;
}

static int oom(struct cur *c)
{
	snprintf(c->msg, c->msglen, "%s: out of memory", c->name);
	return -ENOMEM;
}

static int too_big(jma_heap *h, struct cur *c, size_t need)
{
	char distinct[48] = "";

	if (h->ndistinct)
		snprintf(distinct, sizeof(distinct), " (%zu distinct)", h->ndistinct);
	snprintf(c->msg, c->msglen, "%s: %zu addresses%s in %zu stacks would take about %zu MiB "
		 "to analyze besides the text, more than the %zu MiB allowed for a profile of this "
		 "size (%d times its size + %llu MiB in all): refused (jemalloc does not write such "
		 "profiles)", c->name, h->npcs, distinct, h->nstacks, need >> 20, h->mem_max >> 20,
		 HEAP_MEM_PER_BYTE, HEAP_MEM_BASE >> 20);
	return -E2BIG;
}

/* The addresses of "@ 0x.. 0x.." (the '@' already taken) as a new stack. */
static int take_stack(jma_heap *h, struct cur *c, struct tok *t)
{
	struct heap_stack *s;
	uint32_t n = 0;
	size_t need;

	if (heap_grow((void **)&h->stacks, &h->stacks_cap, h->nstacks + 1, sizeof(*h->stacks)))
		return oom(c);
	s = &h->stacks[h->nstacks];
	memset(s, 0, sizeof(*s));
	s->pc = h->npcs;
	while (!at_end(t)) {
		uint64_t a;

		if (n == JMA_HEAP_MAX_FRAMES)
			return bad(c, c->line, "more than %d frames in one stack", JMA_HEAP_MAX_FRAMES);
		if (!take_hex(t, &a) || (t->p < t->end && *t->p != ' ' && *t->p != '\t'))
			return bad(c, c->line, "bad address in stack: expected 0x<hex>");
		if (heap_grow((void **)&h->pcs, &h->pcs_cap, h->npcs + 1, sizeof(*h->pcs)))
			return oom(c);
		/* Callers are return addresses; the call is the byte before (jeprof does the same). */
		h->pcs[h->npcs++] = n && a ? a - 1 : a;
		n++;
	}
	/* jemalloc 3.x ends every stack with the unwinder's 0 terminator: not a frame. */
	while (n > 1 && h->pcs[h->npcs - 1] == 0) {
		h->npcs--;
		n--;
	}
	s->npc = n;
	h->nstacks++;
	if (heap_mem_check(h, h->npcs, h->nstacks, 0, &need))
		return too_big(h, c, need);
	return 0;
}

static int take_map_line(jma_heap *h, struct heap_maps *maps, struct cur *c, struct tok *t)
{
	struct heap_map m = { 0 };
	uint64_t dev, inode;
	char path[PATH_MAX];
	size_t plen;

	if (!take_hex(t, &m.start) || !take(t, "-") || !take_hex(t, &m.end) || m.end < m.start)
		return bad(c, c->line, "bad mapping: expected \"START-END PERMS OFFSET DEV INODE [PATH]\"");
	skip_ws(t);
	if (t->end - t->p < 4)
		return bad(c, c->line, "bad mapping permissions");
	memcpy(m.perms, t->p, 4);
	t->p += 4;
	skip_ws(t);
	if (!take_hex(t, &m.offset))
		return bad(c, c->line, "bad mapping offset");
	skip_ws(t);
	if (!take_hex(t, &dev) || !take(t, ":") || !take_hex(t, &dev))
		return bad(c, c->line, "bad mapping device");
	skip_ws(t);
	if (!take_u64(t, &inode))
		return bad(c, c->line, "bad mapping inode");
	m.inode = inode;
	skip_ws(t);
	while (t->end > t->p && (t->end[-1] == ' ' || t->end[-1] == '\t'))
		t->end--;
	plen = (size_t)(t->end - t->p);
	if (plen >= sizeof(path))
		return bad(c, c->line, "mapping path longer than %d bytes", PATH_MAX - 1);
	if (memchr(t->p, '\0', plen))
		return bad(c, c->line, "NUL byte in mapping path");
	memcpy(path, t->p, plen);
	path[plen] = '\0';
	if (plen) {
		m.path = heap_str(&h->str, path);
		if (m.path == UINT32_MAX)
			return oom(c);
	}
	if (heap_grow((void **)&maps->v, &maps->cap, maps->n + 1, sizeof(*maps->v)))
		return oom(c);
	maps->v[maps->n++] = m;
	return 0;
}

static int parse_maps_cur(jma_heap *h, struct heap_maps *maps, struct cur *c)
{
	struct tok t;
	int nl, err;

	while (next_line(c, &t, &nl)) {
		if (!nl)
			return bad(c, c->line, "the last line is incomplete (truncated?)");
		if (at_end(&t))
			continue;
		err = take_map_line(h, maps, c, &t);
		if (err)
			return err;
	}
	return 0;
}

int heap_parse_maps(jma_heap *h, struct heap_maps *m, const char *text, size_t len,
		    const char *name, char *msg, size_t msglen)
{
	struct cur c = { .p = text, .end = text + len, .name = name, .msg = msg, .msglen = msglen };

	return parse_maps_cur(h, m, &c);
}

static int is_maps_marker(struct tok *t)
{
	return take(t, "MAPPED_LIBRARIES:") || take(t, "--- Memory map:");
}

/* heap_v2/PERIOD, then "t*:"/"tN:" summary lines, then records of
 *   @ 0xLEAF 0xCALLER ...
 *     t*: objs: bytes [objs: bytes]
 *     tN: ...                         (per thread, ignored)
 * then MAPPED_LIBRARIES. */
static int parse_v2(jma_heap *h, struct cur *c, struct tok *t)
{
	size_t stack_line = 0;	/* line of the stack still waiting for its t* */
	int in_stack = 0, nl, err;

	if (!take_u64(t, &h->period) || !at_end(t) || h->period == 0 || h->period > (1ULL << 62))
		return bad(c, c->line, "bad sample period in \"heap_v2/N\" (N: 1..2^62)");
	while (next_line(c, t, &nl)) {
		uint64_t raw[HEAP_NVAL], thread;

		if (!nl)
			return bad(c, c->line, "the last line is incomplete (truncated?)");
		skip_ws(t);
		if (stack_line && !take(t, "t*:"))
			return bad(c, c->line, "expected \"t*: N: N [N: N]\" after the stack on line %zu",
				   stack_line);
		if (stack_line) {
			if (!take_counts(t, raw) || !at_end(t))
				return bad(c, c->line, "bad counts: expected \"t*: N: N [N: N]\"");
			memcpy(h->stacks[h->nstacks - 1].raw, raw, sizeof(raw));
			stack_line = 0;
			in_stack = 1;
		} else if (at_end(t)) {
			continue;
		} else if (is_maps_marker(t)) {
			return parse_maps_cur(h, &h->maps, c);
		} else if (take(t, "@")) {
			err = take_stack(h, c, t);
			if (err)
				return err;
			stack_line = c->line;
		} else if (take(t, "t*:")) {
			if (in_stack)
				return bad(c, c->line, "a second \"t*:\" line for one stack");
			if (!take_counts(t, raw) || !at_end(t))
				return bad(c, c->line, "bad counts: expected \"t*: N: N [N: N]\"");
		} else if (take(t, "t") && take_u64(t, &thread) && take(t, ":")) {
			if (!take_counts(t, raw) || !at_end(t))
				return bad(c, c->line, "bad counts: expected \"tN: N: N [N: N]\"");
		} else {
			return bad(c, c->line, "unexpected text: expected \"@ ADDRESSES\", \"tN: counts\" "
				   "or MAPPED_LIBRARIES:");
		}
	}
	if (stack_line)
		return bad(c, stack_line, "the stack has no \"t*:\" counts (truncated?)");
	return bad(c, c->line, "the profile ends before MAPPED_LIBRARIES: (truncated?)");
}

/* heap profile: N: N [N: N] @ heapprofile | heap_v2/PERIOD
 * N: N [N: N] @ 0xLEAF 0xCALLER ...
 * MAPPED_LIBRARIES: */
static int parse_v1(jma_heap *h, struct cur *c, struct tok *t)
{
	uint64_t raw[HEAP_NVAL];
	int nl, err;

	if (!take_counts(t, raw))
		return bad(c, c->line, "bad header counts: expected \"heap profile: N: N [N: N] @ TYPE\"");
	skip_ws(t);
	if (!take(t, "@"))
		return bad(c, c->line, "expected \"@ heapprofile\" or \"@ heap_v2/N\" in the header");
	skip_ws(t);
	if (take(t, "heap_v2/")) {
		if (!take_u64(t, &h->period) || h->period == 0 || h->period > (1ULL << 62))
			return bad(c, c->line, "bad sample period in \"heap_v2/N\" (N: 1..2^62)");
	} else if (!take(t, "heapprofile")) {
		return bad(c, c->line, "unsupported profile type: expected \"heapprofile\" or "
			   "\"heap_v2/N\" (jemalloc 3.x)");
	}
	if (!at_end(t))
		return bad(c, c->line, "unexpected text after the profile type");
	while (next_line(c, t, &nl)) {
		if (!nl)
			return bad(c, c->line, "the last line is incomplete (truncated?)");
		if (at_end(t))
			continue;
		if (is_maps_marker(t))
			return parse_maps_cur(h, &h->maps, c);
		if (!take_counts(t, raw))
			return bad(c, c->line, "bad record: expected \"N: N [N: N] @ ADDRESSES\"");
		skip_ws(t);
		if (!take(t, "@"))
			return bad(c, c->line, "bad record: expected \"@\" after the counts");
		err = take_stack(h, c, t);
		if (err)
			return err;
		memcpy(h->stacks[h->nstacks - 1].raw, raw, sizeof(raw));
	}
	return bad(c, c->line, "the profile ends before MAPPED_LIBRARIES: (truncated?)");
}

static int finish(jma_heap *h, struct cur *c)
{
	size_t need;
	int err;

	for (size_t i = 0; i < h->nstacks; i++)
		if (h->stacks[i].raw[HEAP_ACC_OBJS] || h->stacks[i].raw[HEAP_ACC_BYTES])
			h->has_alloc = 1;
	heap_unsample(h);
	err = heap_index(h);
	if (err == -E2BIG) {
		heap_mem_check(h, h->npcs, h->nstacks, h->ndistinct, &need);
		return too_big(h, c, need);
	}
	return err ? oom(c) : 0;
}

int jma_heap_parse(const void *buf, size_t len, const char *name, jma_heap **out, char *msg,
		   size_t msglen)
{
	struct cur c = { .p = buf, .end = (const char *)buf + len, .name = name ? name : "profile",
			 .msg = msg, .msglen = msglen };
	struct tok t;
	jma_heap *h;
	int nl, err;

	*out = NULL;
	if (len > JMA_HEAP_MAX_BYTES) {
		snprintf(msg, msglen, "%s: larger than %llu bytes", c.name, JMA_HEAP_MAX_BYTES);
		return -EFBIG;
	}
	h = calloc(1, sizeof(*h));
	/* Never NULL, even when empty: stacks index into these. */
	if (!h || heap_strtab_init(&h->str) ||
	    heap_grow((void **)&h->pcs, &h->pcs_cap, 1, sizeof(*h->pcs)) ||
	    heap_grow((void **)&h->stacks, &h->stacks_cap, 1, sizeof(*h->stacks))) {
		jma_heap_free(h);
		return oom(&c);
	}
	h->mem_max = heap_mem_max(len);
	if (!next_line(&c, &t, &nl)) {
		err = bad(&c, 1, "empty file: not a heap profile");
	} else if (take(&t, "heap_v2/")) {
		h->version = 2;
		err = parse_v2(h, &c, &t);
	} else if (take(&t, "heap profile:")) {
		h->version = 1;
		err = parse_v1(h, &c, &t);
	} else {
		err = bad(&c, 1, "not a jemalloc heap profile: expected \"heap_v2/N\" (jemalloc >= 4) "
			  "or \"heap profile:\" (3.x)");
	}
	if (!err)
		err = finish(h, &c);
	if (err) {
		jma_heap_free(h);
		return err;
	}
	*out = h;
	return 0;
}

int jma_heap_load(const char *path, jma_heap **out, char *msg, size_t msglen)
{
	char *buf = NULL;
	size_t len = 0;
	int err = heap_read_file(path, JMA_HEAP_MAX_BYTES, &buf, &len, msg, msglen);

	*out = NULL;
	if (!err)
		err = jma_heap_parse(buf, len, path, out, msg, msglen);
	free(buf);
	return err;
}
