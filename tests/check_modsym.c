/* check_modsym.c -- naming the addresses of one module (src/heap/modsym.c).
 *
 * The module is the test's own executable, reported by libdwfl at its live
 * addresses: the functions below have names, aliases, an inlined call and a
 * size-less label whose addresses the test knows.  A stripped fixture
 * (build/fixtures/jemfix-static-stripped, strip of jemfix-static) is named by
 * its frame descriptions only.
 */
#include <check.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap/heap.h"
#include "heap/modsym.h"

/* Aliases: one address, names of each binding. */
__attribute__((noinline, used)) static void modsym_local(void)
{
	__asm__ volatile("nop");
}
void modsym_weak(void) __attribute__((weak, alias("modsym_local")));
void modsym_global(void) __attribute__((alias("modsym_local")));

__attribute__((noinline, used)) static void modsym_local2(void)
{
	__asm__ volatile("nop; nop");
}
void modsym_weak2(void) __attribute__((weak, alias("modsym_local2")));

/* An allocator entry point by its name (a "je_" prefixed copy). */
__attribute__((noinline)) void *je_modsym_alloc(size_t n)
{
	__asm__ volatile("" ::: "memory");
	return n ? (void *)je_modsym_alloc : NULL;
}

/* An inlined call, with the address of a call inside it. */
static uint64_t inl_pc;
static int line_inner, line_outer;

__attribute__((noinline)) static void record_pc(void)
{
	inl_pc = (uint64_t)(uintptr_t)__builtin_return_address(0) - 1;
	__asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void modsym_inlined(void)
{
	line_inner = __LINE__; record_pc();
}

__attribute__((noinline)) void modsym_outer(void)
{
	line_outer = __LINE__; modsym_inlined();
	__asm__ volatile("" ::: "memory");
}

/* Hand-written code without a size, type or frame description (as ld.so's
 * _dl_start_user). */
__asm__(".pushsection .text\n.globl modsym_label\nmodsym_label:\n\tnop\n\tnop\n\tnop\n\tret\n"
	".popsection\n");
extern const char modsym_label[];

struct named {
	jma_heap *h;
	Dwfl *dwfl;
	Dwfl_Module *dm;
	struct modsym *t;
	struct heap_module m;
};

static const Dwfl_Callbacks live_cb = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static const Dwfl_Callbacks file_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static uint64_t live_in = 0;	/* an address of the module to name; 0: this program */

static void named_open(struct named *n, const char *path, int use_dwarf)
{
	n->h = calloc(1, sizeof(*n->h));
	ck_assert_ptr_nonnull(n->h);
	ck_assert_int_eq(heap_strtab_init(&n->h->str), 0);
	if (path) {
		/* At the file's own addresses. */
		n->dwfl = dwfl_begin(&file_cb);
		ck_assert_ptr_nonnull(n->dwfl);
		dwfl_report_begin(n->dwfl);
		n->dm = dwfl_report_elf(n->dwfl, path, path, -1, 0, false);
	} else {
		/* This process, at its live addresses. */
		n->dwfl = dwfl_begin(&live_cb);
		ck_assert_ptr_nonnull(n->dwfl);
		dwfl_report_begin(n->dwfl);
		ck_assert_int_eq(dwfl_linux_proc_report(n->dwfl, getpid()), 0);
		n->dm = dwfl_addrmodule(n->dwfl, live_in ? live_in : (uintptr_t)modsym_outer);
	}
	ck_assert_int_eq(dwfl_report_end(n->dwfl, NULL, NULL), 0);
	ck_assert_msg(n->dm != NULL, "%s: %s", path ? path : "self", dwfl_errmsg(-1));
	n->m.path = heap_str(&n->h->str, path ? path : "/proc/self/exe");
	n->t = modsym_new(n->h, n->dm, use_dwarf);
	ck_assert_ptr_nonnull(n->t);
}

static void named_close(struct named *n)
{
	modsym_free(n->t);
	dwfl_end(n->dwfl);
	jma_heap_free(n->h);
}

/* Name @addr; its location in *l. */
static void name_at(struct named *n, uint64_t addr, struct heap_loc *l)
{
	*l = (struct heap_loc){ .addr = addr };
	ck_assert_int_eq(modsym_name(n->h, n->t, &n->m, l), 0);
}

static const char *frame_func(struct named *n, const struct heap_loc *l, uint32_t i)
{
	ck_assert_uint_lt(i, l->nframe);
	return n->h->str.str[n->h->frames[l->frame + i].func];
}

START_TEST(test_modsym_function_symbols)
{
	struct named n = { 0 };
	struct heap_loc l;

	named_open(&n, NULL, 0);
	/* Its first byte, and one inside. */
	name_at(&n, (uintptr_t)je_modsym_alloc, &l);
	ck_assert_int_eq(l.named, HEAP_NAMED_SYMBOL);
	ck_assert_uint_eq(l.nframe, 1);
	ck_assert_str_eq(frame_func(&n, &l, 0), "je_modsym_alloc");
	ck_assert_str_eq(n.h->str.str[l.symbol], "je_modsym_alloc");
	ck_assert_int_eq(l.alloc, 1);
	name_at(&n, (uintptr_t)modsym_outer + 1, &l);
	ck_assert_str_eq(frame_func(&n, &l, 0), "modsym_outer");
	ck_assert_int_eq(l.alloc, 0);
	named_close(&n);
}
END_TEST

/* One address, several names: the strongest binding names it. */
START_TEST(test_modsym_aliases)
{
	struct named n = { 0 };
	struct heap_loc l;

	named_open(&n, NULL, 0);
	name_at(&n, (uintptr_t)modsym_weak, &l);
	ck_assert_str_eq(frame_func(&n, &l, 0), "modsym_global");
	name_at(&n, (uintptr_t)modsym_weak2 + 1, &l);
	ck_assert_str_eq(frame_func(&n, &l, 0), "modsym_weak2");
	named_close(&n);
}
END_TEST

/* With DWARF, an inlined call is a frame of its own, innermost first, each
 * with its line; without, the function alone. */
START_TEST(test_modsym_inlined_frames)
{
	struct named n = { 0 };
	struct heap_loc l;
	const struct heap_frame *f;

	modsym_outer();
	named_open(&n, NULL, 1);
	name_at(&n, inl_pc, &l);
	ck_assert_int_eq(l.named, HEAP_NAMED_SYMBOL);
	ck_assert_uint_eq(l.nframe, 2);
	ck_assert_str_eq(frame_func(&n, &l, 0), "modsym_inlined");
	ck_assert_str_eq(frame_func(&n, &l, 1), "modsym_outer");
	f = &n.h->frames[l.frame];
	ck_assert_int_eq(f[0].line, line_inner);
	ck_assert_int_eq(f[1].line, line_outer);
	ck_assert_msg(strstr(n.h->str.str[f[0].file], "check_modsym.c"), "%s",
		      n.h->str.str[f[0].file]);
	named_close(&n);

	named_open(&n, NULL, 0);
	name_at(&n, inl_pc, &l);
	ck_assert_uint_eq(l.nframe, 1);
	ck_assert_str_eq(frame_func(&n, &l, 0), "modsym_outer");
	ck_assert_int_eq(n.h->frames[l.frame].line, 0);
	named_close(&n);
}
END_TEST

/* A size-less label names the code after it. */
START_TEST(test_modsym_label)
{
	struct named n = { 0 };
	struct heap_loc l;

	named_open(&n, NULL, 0);
	name_at(&n, (uintptr_t)modsym_label + 2, &l);
	ck_assert_int_eq(l.named, HEAP_NAMED_SYMBOL);
	ck_assert_str_eq(frame_func(&n, &l, 0), "modsym_label");
	named_close(&n);
}
END_TEST

/* Versioned definitions (pthread_cond_wait@@GLIBC_2.3.2 in libc's symbol
 * table, where its debuginfo is installed: libc6-dbg) are named without the
 * version. */
START_TEST(test_modsym_symbol_versions)
{
	struct named n = { 0 };
	struct heap_loc l;
	const char *name;

	live_in = (uintptr_t)pthread_cond_wait;
	named_open(&n, NULL, 0);
	name_at(&n, live_in, &l);
	ck_assert_int_eq(l.named, HEAP_NAMED_SYMBOL);
	/* As this libc binds its aliases: either name, no version. */
	name = frame_func(&n, &l, 0);
	ck_assert_msg(!strcmp(name, "pthread_cond_wait") || !strcmp(name, "__pthread_cond_wait"),
		      "%s", name);
	named_close(&n);
}
END_TEST

/* The address of "main" in @path by its symbol table; 0 when none. */
static uint64_t main_of(Dwfl_Module *dm)
{
	int nsym = dwfl_module_getsymtab(dm);

	for (int i = 1; i < nsym; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(dm, i, &s, &addr, NULL, NULL, NULL);

		if (nm && !strcmp(nm, "main") && GELF_ST_TYPE(s.st_info) == STT_FUNC)
			return addr;
	}
	return 0;
}

/* A stripped program: its functions are bounded by their FDEs and named
 * "module!fn_0xSTART"; the unstripped original names the same one. */
START_TEST(test_modsym_stripped_by_fde)
{
	const char *dir = getenv("FIXTURES") ? getenv("FIXTURES") : "build/fixtures";
	char full[512], stripped[512], want[600];
	struct named n = { 0 };
	struct heap_loc l;
	uint64_t main_lo;

	snprintf(full, sizeof(full), "%s/jemfix-static", dir);
	snprintf(stripped, sizeof(stripped), "%s/jemfix-static-stripped", dir);
	ck_assert_msg(access(full, R_OK) == 0 && access(stripped, R_OK) == 0,
		      "%s and its stripped copy are built by make fixtures", full);
	named_open(&n, full, 0);
	main_lo = main_of(n.dm);
	ck_assert_uint_ne(main_lo, 0);
	name_at(&n, main_lo + 4, &l);
	ck_assert_str_eq(frame_func(&n, &l, 0), "main");
	named_close(&n);

	named_open(&n, stripped, 0);
	ck_assert_uint_eq(main_of(n.dm), 0);
	name_at(&n, main_lo + 4, &l);
	snprintf(want, sizeof(want), "jemfix-static-stripped!fn_0x%llx", (unsigned long long)main_lo);
	ck_assert_int_eq(l.named, HEAP_NAMED_BOUNDARY);
	ck_assert_str_eq(frame_func(&n, &l, 0), want);
	ck_assert_uint_eq(l.symbol, 0);
	named_close(&n);
}
END_TEST

Suite *suite_modsym(void)
{
	Suite *s = suite_create("modsym");
	TCase *t = tcase_create("modules");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_modsym_function_symbols);
	tcase_add_test(t, test_modsym_aliases);
	tcase_add_test(t, test_modsym_inlined_frames);
	tcase_add_test(t, test_modsym_label);
	tcase_add_test(t, test_modsym_symbol_versions);
	tcase_add_test(t, test_modsym_stripped_by_fde);
	suite_add_tcase(s, t);
	return s;
}
