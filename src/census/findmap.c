/* findmap.c -- finding jemalloc's map of active extents, with or without symbols.
 *
 * The map is `arena_emap_global` (5.3+) or `extents_rtree` (5.0-5.2): a
 * two-level radix tree, root[2^18] -> leaves of 2^18 words, one word per
 * 4 KiB page (with 64 KiB pages root[2^16] -> leaves of 2^16: cen_geometry).  With symbols it is named.  In a stripped library,
 * malloc_usable_size looks it up on its slow path: every rip-relative lea
 * (arm64: adrp + add) in its first bytes is a candidate (the map, sz_index2size_tab, test hooks),
 * and the one whose root validates is the map.  Failing that, once the
 * threads are stopped: a thread's lookup cache (tsd.rtree_ctx) holds
 * {leafkey, leaf} pairs, and the root entry for leafkey's leaf holds it --
 * found among jemalloc's writable data, it places the root.  Valid: every root entry is
 * null or a user-space pointer, and leaf words decode to extents that cover
 * the page of their index -- what chap checks of tcmalloc's page map.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

#define CODE_SCAN	1024
#define CHECK_MAX	64	/* leaf words checked per root validation */

/* The edata pointer in leaf word @w. */
static uint64_t leaf_edata(const struct cen *c, uint64_t w)
{
	return w & ((1ULL << 48) - 1) & ~c->L->edata_low;
}

int cen_root_valid(struct cen *c, uint64_t map)
{
	unsigned root_n = 1u << c->g.root_bits, leaf_n = 1u << c->g.leaf_bits;
	uint64_t *root = malloc(root_n * sizeof(*root)), *leaf = NULL, pmask = c->g.page - 1;
	unsigned leaves = 0, good = 0, bad = 0;
	int err = -EINVAL;

	if (!root || (leaf = malloc(leaf_n * sizeof(*leaf))) == NULL)
		goto out;
	if (cen_read(c, map + c->L->root_off, root, root_n * sizeof(*root)))
		goto out;
	for (unsigned i = 0; i < root_n; i++) {
		if (!root[i])
			continue;
		if (!cen_ptr_ok(root[i]) || root[i] % 8 ||
		    !att_maps_find(c->maps, c->nmaps, root[i]))
			goto out;
		if (++leaves > 4096)	/* 4 TiB of heap (64 with 64 KiB pages): not a root */
			goto out;
		if (good >= CHECK_MAX || cen_read(c, root[i], leaf, leaf_n * sizeof(*leaf)))
			continue;
		for (unsigned j = 0; j < leaf_n && good + bad < CHECK_MAX; j++) {
			uint64_t w = leaf[j], ed = leaf_edata(c, w), e[3], page;

			if (!w || (w >> 48) >= CEN_NSIZES)
				continue;
			page = ((uint64_t)i << c->g.root_shift) | ((uint64_t)j << c->L->lg_page);
			if (!cen_ptr_ok(ed) || cen_read(c, ed, e, sizeof(e))) {
				bad++;
				continue;
			}
			uint64_t base = e[1] & ~pmask, size = e[2] & ~pmask;
			if (page >= base && page - base < size)
				good++;
			else
				bad++;
		}
	}
	/* Threads run during this check: a word may change under us. */
	if (good && bad * 4 <= good)
		err = 0;
out:
	free(root);
	free(leaf);
	return err;
}

static int add_addr(uint64_t *out, size_t *n, uint64_t t)
{
	for (size_t k = 0; k < *n; k++)
		if (out[k] == t)
			return 0;
	out[(*n)++] = t;
	return 1;
}

/* Targets of `adrp xN, page; add xM, xN, #imm` (arm64's pc-relative address
 * of a symbol, the two instructions not necessarily adjacent) in @code at @pc;
 * with @got, the addresses `adrp xN, page; ldr xM, [xN, #imm]` loads from
 * instead (GOT slots: Debian's arm64 library reaches the map through one). */
size_t cen_adrp_refs(const unsigned char *code, size_t len, uint64_t pc, int got, uint64_t *out,
		     size_t max)
{
	uint64_t page[32];
	uint32_t known = 0;	/* registers whose page an adrp set */
	size_t n = 0;

	for (size_t i = 0; i + 4 <= len && n < max; i += 4) {
		uint32_t insn;

		memcpy(&insn, code + i, 4);
		if ((insn & 0x9f000000) == 0x90000000) {	/* adrp */
			int64_t imm = (int64_t)((((insn >> 5) & 0x7ffff) << 2) | ((insn >> 29) & 3));

			imm = (imm ^ (1LL << 20)) - (1LL << 20);	/* 21 bits, signed */
			page[insn & 31] = ((pc + i) & ~0xfffULL) + (uint64_t)(imm * 4096);
			known |= 1u << (insn & 31);
		} else if (!got && (insn & 0xff800000) == 0x91000000) {	/* add xd, xn, #imm{, lsl 12} */
			unsigned rn = (insn >> 5) & 31;
			uint64_t imm = (insn >> 10) & 0xfff;

			if (rn != 31 && known >> rn & 1)
				add_addr(out, &n, page[rn] + (insn >> 22 & 1 ? imm << 12 : imm));
		} else if (got && (insn & 0xffc00000) == 0xf9400000) {	/* ldr xt, [xn, #imm] */
			unsigned rn = (insn >> 5) & 31;

			if (rn != 31 && known >> rn & 1)
				add_addr(out, &n, page[rn] + ((insn >> 10) & 0xfff) * 8);
		}
	}
	return n;
}

/* Targets of `lea disp32(%rip), %reg` (REX.W 8d, mod 00 r/m 101) in @code at @pc. */
size_t cen_rip_leas(const unsigned char *code, size_t len, uint64_t pc, uint64_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i + 7 <= len && n < max; i++) {
		int32_t disp;
		uint64_t t;

		if ((code[i] != 0x48 && code[i] != 0x4c) || code[i + 1] != 0x8d ||
		    (code[i + 2] & 0xc7) != 0x05)
			continue;
		memcpy(&disp, code + i + 3, 4);
		t = pc + i + 7 + (uint64_t)(int64_t)disp;
		add_addr(out, &n, t);
	}
	return n;
}

int cen_map_find(struct cen *c)
{
	jma_session *s = c->s;
	const struct jma_copy *je = jma_syms_jemalloc(s->syms);
	const char *name = c->L->leaf_state ? "arena_emap_global" : "extents_rtree";
	unsigned char code[CODE_SCAN];
	uint64_t a, sz, fn = 0, cand[32];
	char fname[96];
	size_t n;
	int tls;

	if (jma_syms_jemalloc_sym(s->syms, name, &a, &sz, &tls) && !tls) {
		if (cen_root_valid(c, a))
			return jma_fail(s, JMA_ERR_MISSING, -EINVAL, "census: %s at 0x%llx does not "
					"hold a valid map of extents (layout %s)", name,
					(unsigned long long)a, c->L->name);
		c->map = a;
		snprintf(c->out->map_how, sizeof(c->out->map_how), "symbol %s", name);
		return 0;
	}
	snprintf(fname, sizeof(fname), "%smalloc_usable_size", je->prefix);
	if (!jma_syms_jemalloc_sym(s->syms, fname, &fn, &sz, &tls) || tls || !fn)
		return jma_fail(s, JMA_ERR_MISSING, -ENOENT, "census: jemalloc's map of extents has "
				"no symbol (%s) and %s was not found", name, fname);
	if (cen_read(c, fn, code, sizeof(code)))
		return jma_fail(s, JMA_ERR_MISSING, -EFAULT, "census: reading the code of %s at 0x%llx",
				fname, (unsigned long long)fn);
	if (c->L->machine == EM_AARCH64) {
		uint64_t slot[16], v;
		size_t ns = cen_adrp_refs(code, sizeof(code), fn, 1, slot, sizeof(slot) / sizeof(*slot));

		n = cen_adrp_refs(code, sizeof(code), fn, 0, cand, sizeof(cand) / sizeof(*cand));
		for (size_t i = 0; i < ns && n < sizeof(cand) / sizeof(*cand); i++)
			if (!cen_read(c, slot[i], &v, sizeof(v)) && cen_ptr_ok(v) && v % 8 == 0)
				cand[n++] = v;
	} else {
		n = cen_rip_leas(code, sizeof(code), fn, cand, sizeof(cand) / sizeof(*cand));
	}
	/* sz_index2size_tab is among them: another size-class table is refused. */
	for (size_t i = 0; i < n; i++)
		if (cen_sizes_check(c, cand[i]) < 0)
			return -ENOTSUP;
	for (size_t i = 0; i < n; i++) {
		if (cen_root_valid(c, cand[i]))
			continue;
		c->map = cand[i];
		snprintf(c->out->map_how, sizeof(c->out->map_how),
			 "decoded from %s (no symbols), root validated", fname);
		return 0;
	}
	return jma_fail(s, JMA_ERR_MISSING, -ENOENT, "census: jemalloc's map of extents not found: "
			"no symbol %s, and none of the %zu addresses %s uses holds a valid one", name, n,
			fname);
}

#define CTX_ENTRIES	16	/* RTREE_CTX_NCACHE */
#define SCAN_CHUNK	(256 * 1024)
#define DATA_MAX	(64ULL << 20)	/* jemalloc's writable data scanned, at most */

/* jemalloc's writable data: its module's rw mappings and the .bss after them. */
static int je_data(const struct cen *c, size_t i)
{
	const struct att_map *m = &c->maps[i], *prev = i ? &c->maps[i - 1] : NULL;
	const char *path = m->path;

	if (m->perms[1] != 'w')
		return 0;
	if (!path && prev && prev->end == m->start && prev->path && prev->perms[1] == 'w')
		path = prev->path;
	return path && c->je_path && !strcmp(path, c->je_path);
}

/* Where in jemalloc's writable data the word @leaf is; each hit tried as the
 * root entry of @idx. */
static int find_root_entry(struct cen *c, uint64_t leaf, uint64_t idx, uint64_t *buf)
{
	uint64_t scanned = 0;

	for (size_t i = 0; i < c->nmaps; i++) {
		const struct att_map *m = &c->maps[i];

		if (!je_data(c, i))
			continue;
		for (uint64_t a = m->start; a < m->end && scanned < DATA_MAX; a += SCAN_CHUNK) {
			uint64_t n = m->end - a < SCAN_CHUNK ? m->end - a : SCAN_CHUNK;

			scanned += n;
			if (cen_read(c, a, buf, n))
				continue;
			for (size_t k = 0; k < n / 8; k++) {
				uint64_t map = a + k * 8 - c->L->root_off - idx * 8;
				if (buf[k] == leaf && a + k * 8 >= c->L->root_off + idx * 8 &&
				    !cen_root_valid(c, map)) {
					c->map = map;
					return 0;
				}
			}
		}
	}
	return -ENOENT;
}

int cen_map_from_tsd(struct cen *c)
{
	uint64_t ctx[CTX_ENTRIES * 2], *buf;
	int err = -ENOENT;

	if (!c->L->rtree_ctx_off || !c->have_tpoff)
		return err;
	if (!(buf = malloc(SCAN_CHUNK)))
		return -ENOMEM;
	for (size_t t = 0; t < c->nth && err; t++) {
		uint64_t tsd = arch_regs_tls_base(&c->th[t].regs) + c->tpoff;

		if (!cen_ptr_ok(tsd) || cen_read(c, tsd + c->L->rtree_ctx_off, ctx, sizeof(ctx)))
			continue;
		for (unsigned e = 0; e < CTX_ENTRIES && err; e++) {
			uint64_t key = ctx[2 * e], leaf = ctx[2 * e + 1];

			/* An unused entry's key is RTREE_LEAFKEY_INVALID (1). */
			if (key & ((1ULL << c->g.root_shift) - 1) || !cen_ptr_ok(leaf) || leaf % 8)
				continue;
			err = find_root_entry(c, leaf, (key >> c->g.root_shift) &
					      ((1ULL << c->g.root_bits) - 1), buf);
		}
	}
	free(buf);
	if (!err)
		snprintf(c->out->map_how, sizeof(c->out->map_how), "found from a thread's lookup cache "
			 "(tsd.rtree_ctx), root validated");
	return err;
}
