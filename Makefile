# jemattach -- build, test, demo and install.
#
#   make            build/jemattach, build/libjemattach.{a,so}, test fixtures
#   make check      install missing Debian packages (as root), then unit + integration
#                   tests, then the same suite against an ASan+UBSan build of the tool
#   make demo       start a demo jemalloc process and show jemattach on it
#   make install    PREFIX=/usr/local DESTDIR=
#   make deb        build/jemattach_VERSION-1_ARCH.deb (dpkg-deb)
#   make check-deb  install that package in a clean Debian bookworm root (mmdebstrap) and try it
#   make bench      benchmarks (by hand; never part of check)
#   make check-aarch64  boot a Debian arm64 guest under qemu (TCG) and run integration
#                   tests in it (TESTS=pattern; by hand, never part of check: doc/aarch64.md)

ARCH      ?= $(shell uname -m)
PREFIX    ?= /usr/local
BUILD     ?= build
CC        ?= cc
VERSION   := 0.2.0
VERSION_H  = $(BUILD)/gen/jemattach/version.h
VERSION_W := $(subst ., ,$(VERSION))

PKGS      := libdw libelf libunwind-ptrace libprotobuf-c zlib jansson
# unicorn's headers only: the emulator dlopens it (src/emulate/uc.h).
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) unicorn 2>/dev/null)
PKG_LIBS  := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lbpf -lstdc++
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

WARN      := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral -Wno-format-truncation
CFLAGS    ?= -O2 -g
ifeq ($(SANITIZE),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
ALL_CFLAGS := $(CFLAGS) $(WARN) $(SAN_FLAGS) -std=gnu11 -fPIC -D_GNU_SOURCE \
	-DJMA_DATADIR='"$(PREFIX)/share/jemattach"' \
	-DJMA_LIBDIR='"$(PREFIX)/lib/jemattach"' \
	-Iinclude -I. -Isrc -Iattach/arch/$(ARCH) -I$(BUILD)/gen $(PKG_CFLAGS)
ALL_LDFLAGS := $(LDFLAGS) $(SAN_FLAGS)
ifeq ($(SANITIZE),1)
# ASan intercepts crypt_r: libcrypt must be loaded with the program for the
# interceptor to find it, not later with the serve module (a null call).
SAN_TOOL_LIBS := -Wl,--push-state,--no-as-needed -lcrypt -Wl,--pop-state
endif

# The library: the ptrace engine (attach/) and src/ by concern (see README "Layout").
LIB_DIRS  := symbols core process emulate jemalloc heap series census sampler
# One rule for architectures (attach/machine.h): the host's, at build time, only
# where ptrace needs it (attach/arch/$(ARCH)); a target's, at run time, by its
# ELF machine: every machine's descriptor (attach/machine) and the emulator's
# tables (src/emulate/arch) are built.
# The test hook (attach/crashpoint.c) is not part of it: see "test hooks" below.
LIB_SRCS  := $(filter-out %.bpf.c attach/crashpoint.c,$(wildcard attach/*.c attach/arch/$(ARCH)/*.c \
	     attach/machine/*.c $(foreach d,$(LIB_DIRS),src/$(d)/*.c) src/emulate/arch/*.c))
CLI_SRCS  := $(wildcard src/cli/*.c)
PROTOS    := $(wildcard src/heap/*.proto)
GEN_SRCS  := $(patsubst src/heap/%.proto,$(BUILD)/gen/%.pb-c.c,$(PROTOS))
LIB_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) $(GEN_SRCS:.c=.o)
CLI_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRCS))
# The HTTP exporter (`serve`, src/serve), over the public API: a module of its
# own, jemattach-serve.so, that `jemattach serve` loads (src/cli/cmd_serve.c),
# so that no other command pays for loading libmicrohttpd, libyaml, GnuTLS and
# libxcrypt (about 2.5 ms of CPU at each start, GnuTLS's initialisation most).
# A part of the tool, not of the library (src/serve/module.h, doc/library.md):
# it carries no copy of the library but calls the tool's, which exports the
# jma_ functions the module uses and no other (SERVE_EXPORTS); the module
# exports its entry point only (src/serve/module.map), named with SERVE_ABI.
SERVE_PKGS := libmicrohttpd yaml-0.1 gnutls libxcrypt
SERVE_SRCS := $(wildcard src/serve/*.c)
SERVE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SERVE_SRCS))
SERVE_LIBS := $(shell pkg-config --libs $(SERVE_PKGS) 2>/dev/null)
SERVE_SO  := $(BUILD)/jemattach-serve.so
SERVE_ABI_H := $(BUILD)/gen/serve/abi.h
SERVE_EXPORTS := $(BUILD)/gen/serve/exports

# Check unit tests: every tests/check_<m>.c defines Suite *suite_<m>(void);
# one runner runs them all so Check prints one summary line.
TEST_SRCS := $(wildcard tests/check_*.c)
TEST_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(TEST_SRCS) tests/tutil.c tests/fake_backend.c)
SUITES    := $(patsubst tests/check_%.c,%,$(TEST_SRCS))

# Fixture targets are never sanitized: only the tool is.
FIX_DIR   := $(BUILD)/fixtures
FIX_CFLAGS := -O1 -g -Wall -Wextra -Werror -D_GNU_SOURCE -pthread
FIX_SRCS  := $(wildcard tests/fixtures/*.c)
FIX_DYN   := $(patsubst tests/fixtures/%.c,$(FIX_DIR)/%,$(filter-out tests/fixtures/callee.c \
	     tests/fixtures/hangfs.c,$(FIX_SRCS)))
# The FUSE fixture where libfuse3's headers are (make deps installs them).
FIX_FUSE  := $(if $(shell pkg-config --exists fuse3 2>/dev/null && echo y),$(FIX_DIR)/hangfs)
FIX_STATIC := $(FIX_DIR)/jemfix-static $(FIX_DIR)/jemfix-static-je $(FIX_DIR)/jemfix-static-rjem \
	$(FIX_DIR)/leakfix-static-rjem \
	$(FIX_DIR)/jemfix-static-stripped $(FIX_DIR)/jemfix-static-debuglink $(FIX_DIR)/jemfix-in-so \
	$(FIX_DIR)/jemfix-full-static
# C++ fixtures (g++): mangled names for the demangling tests.
FIX_CXX   := $(patsubst tests/fixtures/%.cc,$(FIX_DIR)/%,$(wildcard tests/fixtures/*.cc))
FIXTURES  := $(FIX_DYN) $(FIX_FUSE) $(FIX_DIR)/callee $(FIX_STATIC) $(FIX_DIR)/libctorwait.so \
	$(FIX_DIR)/libloadstall.so $(FIX_DIR)/jemfix-nobuildid $(FIX_CXX)
JEM_PIC   := /usr/lib/$(shell $(CC) -print-multiarch)/libjemalloc_pic.a

.PHONY: all deps check check-build-tool check-build-asan check-aarch64 check-deb demo install uninstall clean bench soak fuzz versions census-builds check-versions deb
.DELETE_ON_ERROR:

all: $(VERSION_H) $(BUILD)/jemattach $(SERVE_SO) $(BUILD)/libjemattach.a $(BUILD)/libjemattach.so fixtures

fixtures: $(FIXTURES)

deps:
	@scripts/deps.sh

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: src/heap/%.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=src/heap --c_out=$(BUILD)/gen $<

$(BUILD)/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c
	$(CC) $(filter-out -Wshadow,$(ALL_CFLAGS)) -c -o $@ $<

# The public header of the version (include/jemattach/version.h.in), from
# VERSION; rewritten only when what it says changes.
$(VERSION_H): include/jemattach/version.h.in Makefile
	@mkdir -p $(dir $@)
	@sed -e 's/@MAJOR@/$(word 1,$(VERSION_W))/' -e 's/@MINOR@/$(word 2,$(VERSION_W))/' \
		-e 's/@PATCH@/$(word 3,$(VERSION_W))/' -e 's/@VERSION@/$(VERSION)/' $< >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

# Generated headers must exist before anything includes them.
$(LIB_OBJS) $(CLI_OBJS) $(SERVE_OBJS) $(TEST_OBJS) $(BUILD)/obj/tests/runner.o \
	$(BUILD)/obj/tests/stress_driver.o: | $(GEN_SRCS) $(VERSION_H)
$(SERVE_OBJS): ALL_CFLAGS += $(shell pkg-config --cflags $(SERVE_PKGS) 2>/dev/null)

# --- the sampler's BPF program (src/sampler, `prof sample`) ---------------
# Compiled for the BPF target against the uapi headers only (no vmlinux.h,
# no CO-RE: it reads nothing of the kernel's), then embedded in a skeleton
# header that sampler.c includes; libbpf loads it only when `prof sample` runs.
BPF_ARCH  := $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(ARCH)))
$(BUILD)/gen/sampler.bpf.o: src/sampler/sampler.bpf.c src/sampler/events.h attach/arch/$(ARCH)/bpf_regs.h
	@mkdir -p $(dir $@)
	@echo "  BPF     $@"
	@clang -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -g -O2 -mcpu=v3 -Wall -Werror -Isrc \
		-Iattach/arch/$(ARCH) -I/usr/include/$(ARCH)-linux-gnu -c -o $@ $<

$(BUILD)/gen/sampler.skel.h: $(BUILD)/gen/sampler.bpf.o
	@echo "  SKEL    $@"
	@bpftool gen skeleton $< name sampler_bpf > $@

$(BUILD)/obj/src/sampler/sampler.o $(BUILD)/obj/src/sampler/window.o: $(BUILD)/gen/sampler.skel.h

$(BUILD)/libjemattach.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# --- the library's face ----------------------------------------------------
# Only the public API (include/jemattach/, between JMA_API_BEGIN and
# JMA_API_END) is visible outside the shared object, and of it only jma_*
# (src/libjemattach.map); the tool and tests link the archive and still reach
# the internals.
$(LIB_OBJS): ALL_CFLAGS += -fvisibility=hidden

$(BUILD)/libjemattach.so: $(LIB_OBJS) src/libjemattach.map
	$(CC) -shared -Wl,-soname,libjemattach.so.0 -Wl,--version-script=src/libjemattach.map \
		-o $@ $(LIB_OBJS) $(ALL_LDFLAGS) $(PKG_LIBS) -lm

# The tool takes the libraries every run loads in statically: a `get` is
# mostly its own process start, and mapping, relocating and tearing down 12
# shared objects cost it 0.4-0.5 ms (`-V`: 2.1-2.2 -> 1.7 ms, interleaved).
# libunwind too, built once from Debian's source (Debian's archive is not
# position-independent; see scripts/build-libunwind.sh): `-V` 1.7 -> 1.2 ms.
# UNWIND=shared links Debian's shared libunwind instead.
CLI_LIBS  := -Wl,-Bstatic -lbpf -ldw -lelf -lprotobuf-c -ljansson -lbz2 -lz -llzma -lstdc++ -Wl,-Bdynamic \
	-pthread -ldl -lm
UNWIND_DIR := build/libunwind

ifeq ($(UNWIND),shared)
$(UNWIND_DIR)/link.shared:
	@mkdir -p $(dir $@)
	echo "-lunwind-ptrace -lunwind-generic -lunwind" > $@
UNWIND_LINK := $(UNWIND_DIR)/link.shared
else
$(UNWIND_DIR)/link: scripts/build-libunwind.sh
	@scripts/build-libunwind.sh $(UNWIND_DIR)
UNWIND_LINK := $(UNWIND_DIR)/link
endif

# --- the server module (src/serve/module.h) ----------------------------------
# What the module calls of the library, from its objects' undefined symbols:
# the tool exports these (--dynamic-list), pulled from the archive and
# required to be there (--require-defined), and no other; a gcc @file of
# options for every link of the tool.
$(SERVE_EXPORTS): $(SERVE_OBJS)
	@mkdir -p $(dir $@)
	@nm -u $(SERVE_OBJS) | awk '$$2 ~ /^jma_/ { print $$2 }' | sort -u >$@.syms
	@{ echo '{'; sed 's/.*/\t&;/' $@.syms; echo '};'; } >$@.list
	@{ echo '-Wl,--dynamic-list=$@.list'; sed 's/.*/-Wl,--require-defined=&/' $@.syms; } >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

# The interface between the tool and the module named: the version and a
# checksum of the headers it is written in; rewritten only when it changes.
SERVE_ABI_SRCS := src/serve/serve.h src/serve/module.h src/core/clock.h include/jemattach.h \
	$(wildcard include/jemattach/*.h)
$(SERVE_ABI_H): $(SERVE_ABI_SRCS) $(VERSION_H)
	@mkdir -p $(dir $@)
	@echo "#define SERVE_ABI \"$(VERSION)/$$(cat $^ | cksum | cut -d' ' -f1)\"" >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/obj/src/serve/server.o $(BUILD)/obj/src/cli/cmd_serve.o: $(SERVE_ABI_H)

# Nothing of the library in it: its jma_ symbols stay undefined, for the tool's.
$(SERVE_SO): $(SERVE_OBJS) src/serve/module.map
	$(CC) -shared -Wl,--version-script=src/serve/module.map -o $@ $(SERVE_OBJS) \
		$(ALL_LDFLAGS) $(SERVE_LIBS) -pthread

# The server module comes with the tool (make check builds the ASan tool by name).
$(BUILD)/jemattach: $(CLI_OBJS) $(BUILD)/libjemattach.a $(UNWIND_LINK) $(SERVE_EXPORTS) | $(SERVE_SO)
	$(CC) -o $@ $(CLI_OBJS) $(BUILD)/libjemattach.a $(ALL_LDFLAGS) @$(SERVE_EXPORTS) \
		-Wl,--start-group $$(cat $(UNWIND_LINK)) -Wl,--end-group $(CLI_LIBS) $(SAN_TOOL_LIBS)

# --- test hooks ------------------------------------------------------------
# The crash points (attach/crashpoint.h) exist only in $(BUILD)/hooks/jemattach,
# the tool that the tests which kill it at an engine step run (40-prof,
# 52-survive): the files that call them compiled again with -DJMA_TEST_HOOKS,
# and the hook itself.  The library, the tool, the server module and what is
# installed have none (05-install).
HOOKED_SRCS := $(shell grep -l '"crashpoint\.h"' $(LIB_SRCS))
HOOKED_OBJS := $(patsubst %.c,$(BUILD)/obj/hooks/%.o,$(HOOKED_SRCS) attach/crashpoint.c)

$(BUILD)/obj/hooks/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) $(ALL_CFLAGS) -fvisibility=hidden -DJMA_TEST_HOOKS -MMD -MP -c -o $@ $<

$(HOOKED_OBJS): | $(GEN_SRCS) $(VERSION_H)

$(BUILD)/hooks/jemattach: $(CLI_OBJS) $(filter-out $(patsubst %.c,$(BUILD)/obj/%.o,$(HOOKED_SRCS)),$(LIB_OBJS)) \
		$(HOOKED_OBJS) $(UNWIND_LINK) $(SERVE_EXPORTS)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(filter %.o,$^) $(ALL_LDFLAGS) @$(SERVE_EXPORTS) \
		-Wl,--start-group $$(cat $(UNWIND_LINK)) -Wl,--end-group $(CLI_LIBS) $(SAN_TOOL_LIBS)

$(BUILD)/gen/suites.h: Makefile $(TEST_SRCS)
	@mkdir -p $(dir $@)
	@{ for s in $(SUITES); do echo "Suite *suite_$$s(void);"; done; \
	   printf 'static Suite *(*const all_suites[])(void) = {'; \
	   for s in $(SUITES); do printf ' suite_%s,' $$s; done; echo ' };'; } > $@

$(BUILD)/obj/tests/runner.o: $(BUILD)/gen/suites.h

$(BUILD)/check_runner: $(BUILD)/obj/tests/runner.o $(TEST_OBJS) $(SERVE_OBJS) $(BUILD)/libjemattach.a
	$(CC) -o $@ $^ $(ALL_LDFLAGS) $(PKG_LIBS) $(CHECK_LIBS) -lm $(SERVE_LIBS)

# Drives the stress test through the library (built with the tool's flags:
# sanitized in the ASan pass).
$(BUILD)/stress_driver: $(BUILD)/obj/tests/stress_driver.o $(BUILD)/libjemattach.a
	$(CC) -o $@ $^ $(ALL_LDFLAGS) $(PKG_LIBS) -lm

# --- fixtures -------------------------------------------------------------
$(FIX_DIR)/%: tests/fixtures/%.c tests/fixtures/fixture.h tests/fixtures/khz_timer.h
	@mkdir -p $(FIX_DIR)
	$(CC) $(FIX_CFLAGS) -o $@ $< -ljemalloc

$(FIX_DIR)/%: tests/fixtures/%.cc
	@mkdir -p $(FIX_DIR)
	$(CXX) $(FIX_CFLAGS) -o $@ $< -ljemalloc

# callee: a plain program (no jemalloc) for the generic call-engine tests.
$(FIX_DIR)/callee: tests/fixtures/callee.c
	@mkdir -p $(FIX_DIR)
	$(CC) $(FIX_CFLAGS) -o $@ $< -lpthread

$(FIX_DIR)/jemfix-static: tests/fixtures/jemfix.c tests/fixtures/fixture.h
	$(CC) $(FIX_CFLAGS) -o $@ $< $(JEM_PIC) -lm -ldl

# Prefixed copies of the static archive, as Redis (je_) and tikv-jemallocator
# (_rjem_) ship them: only the public API is renamed.
$(FIX_DIR)/libjemalloc-%.a: $(JEM_PIC) tests/fixtures/public-symbols.txt
	@mkdir -p $(FIX_DIR)
	sed 's/.*/& $*&/' tests/fixtures/public-symbols.txt > $@.map
	objcopy --redefine-syms=$@.map $< $@

$(FIX_DIR)/jemfix-static-je: tests/fixtures/jemfix.c tests/fixtures/fixture.h $(FIX_DIR)/libjemalloc-je_.a
	$(CC) $(FIX_CFLAGS) -DJE_PREFIX=je_ -o $@ $< $(FIX_DIR)/libjemalloc-je_.a -lm -ldl

$(FIX_DIR)/jemfix-static-rjem $(FIX_DIR)/leakfix-static-rjem: $(FIX_DIR)/%-static-rjem: tests/fixtures/%.c \
		tests/fixtures/fixture.h $(FIX_DIR)/libjemalloc-_rjem_.a
	$(CC) $(FIX_CFLAGS) -DJE_PREFIX=_rjem_ -o $@ $< $(FIX_DIR)/libjemalloc-_rjem_.a -lm -ldl

# Everything static, libc too: no PLT to libc, its ifunc slots relocated by
# IRELATIVE (the emulator's hardest case).  Profiling aborts at start in such
# a binary (no dlsym), so it runs without prof:true.
$(FIX_DIR)/jemfix-full-static: tests/fixtures/jemfix.c tests/fixtures/fixture.h
	$(CC) $(FIX_CFLAGS) -static -o $@ $< $(JEM_PIC) -lm -ldl

$(FIX_DIR)/jemfix-static-stripped: $(FIX_DIR)/jemfix-static
	strip -o $@ $<

# Stripped, with its symbols in a separate file found through .gnu_debuglink.
$(FIX_DIR)/jemfix-static-debuglink: $(FIX_DIR)/jemfix-static
	objcopy --only-keep-debug $< $@.debug
	strip -o $@ $<
	cd $(FIX_DIR) && objcopy --add-gnu-debuglink=jemfix-static-debuglink.debug jemfix-static-debuglink

# jemalloc statically inside a shared object, prefixed, as in a Rust cdylib.
$(FIX_DIR)/libjemfix-rjem.so: tests/fixtures/jemfix.c tests/fixtures/fixture.h $(FIX_DIR)/libjemalloc-_rjem_.a
	$(CC) $(FIX_CFLAGS) -fPIC -shared -DJE_PREFIX=_rjem_ -Dmain=jemfix_main -o $@ $< \
		$(FIX_DIR)/libjemalloc-_rjem_.a -lm -ldl

# Without a GNU build-id: what is found in it is not cached (17-symcache).
$(FIX_DIR)/jemfix-nobuildid: tests/fixtures/jemfix.c tests/fixtures/fixture.h
	$(CC) $(FIX_CFLAGS) -Wl,--build-id=none -o $@ $< -ljemalloc

# A FUSE file system whose reads are never answered (46-hostile-fuse): libfuse3.
$(FIX_DIR)/hangfs: tests/fixtures/hangfs.c
	@mkdir -p $(FIX_DIR)
	$(CC) $(FIX_CFLAGS) $$(pkg-config --cflags fuse3) -o $@ $< $$(pkg-config --libs fuse3)

# Preloaded: holds a program's start in its constructor (45-safety).
$(FIX_DIR)/libctorwait.so: tests/fixtures/so/ctorwait.c
	$(CC) $(FIX_CFLAGS) -fPIC -shared -o $@ $<

# An audit module (LD_AUDIT) that holds the loader between libjemalloc and
# libc (47-exec); without libc of its own, nor the compiler's stack guard.
$(FIX_DIR)/libloadstall.so: tests/fixtures/so/loadstall.c
	$(CC) -O1 -g -Wall -Wextra -Werror -D_GNU_SOURCE -fPIC -shared -nostdlib -fno-stack-protector -o $@ $<

$(FIX_DIR)/jemfix-in-so: tests/fixtures/so/loader.c $(FIX_DIR)/libjemfix-rjem.so
	$(CC) $(FIX_CFLAGS) -o $@ $< -L$(FIX_DIR) -ljemfix-rjem -Wl,-rpath,'$$ORIGIN'

# --- the jemalloc version matrix (tests/integration/80-versions.sh) -------
# Upstream releases, each built once under $(BUILD)/versions/NAME/inst by
# scripts/build-jemalloc.sh (from JEMALLOC_SRC, ../shared/jemalloc when it
# exists, else the release asset fetched and checked against its pinned
# SHA-256), and the fixture linked against it.  A version whose source cannot
# be had is not built (NAME/unavailable says why) and its tests are skipped.
# make check runs JE_CHECK, check-versions JE_ALL.
JE_ALL    := 3.6.0 4.5.0 5.0.1 5.2.1 5.2.1-je_ 5.3.0 dev-295e489
JE_CHECK  ?= 4.5.0 5.2.1-je_ dev-295e489
JE_BUILD  ?= $(JE_CHECK)
VER_DIR   := $(BUILD)/versions

# Kept: make would otherwise delete these as intermediates, and rebuild jemalloc.
.PRECIOUS: $(VER_DIR)/%/inst/.done
$(VER_DIR)/%/inst/.done:
	@scripts/build-jemalloc.sh $*

# A fixture linked against one version of the matrix; none when that
# version's source could not be had (NAME/unavailable; its tests skip).
VER_FIX = @[ ! -f $(VER_DIR)/$*/unavailable ] || exit 0; \
	echo "  FIXTURE $@"; $(CC) $(FIX_CFLAGS) $(if $(findstring -je_,$*),-DJE_PREFIX=je_) \
		-I$(VER_DIR)/$*/inst/include -o $@ $< -L$(VER_DIR)/$*/inst/lib \
		-Wl,-rpath,$(abspath $(VER_DIR)/$*/inst/lib) -ljemalloc

$(VER_DIR)/%/jemfix: tests/fixtures/jemfix.c tests/fixtures/fixture.h $(VER_DIR)/%/inst/.done
	$(VER_FIX)

# The census's (85-census) and the sampler's (65-sampler) fixtures, on every version of the matrix.
$(VER_DIR)/%/censusfix: tests/fixtures/censusfix.c tests/fixtures/fixture.h $(VER_DIR)/%/inst/.done
	$(VER_FIX)

$(VER_DIR)/%/leakfix: tests/fixtures/leakfix.c tests/fixtures/fixture.h $(VER_DIR)/%/inst/.done
	$(VER_FIX)

# 3.6.0's other page-map layout (no prof) and TLS model (initial-exec), for
# the census only (80-versions' 3.6.0 census tests; make check-versions).
JE_CENSUS := 3.6.0-ie-noprof

versions: $(foreach v,$(JE_BUILD),$(VER_DIR)/$(v)/jemfix $(VER_DIR)/$(v)/censusfix $(VER_DIR)/$(v)/leakfix)

# --- the census on the builds people run (tests/integration/88-census-builds.sh)
# jemalloc configured as a project ships it (scripts/build-jemalloc.sh's NAME
# flags: redis, tikv, vaddr57, page14, page16) under $(CB_DIR)/NAME, and
# censusfix linked as that project links it: statically with je_ names for
# Redis (lib/libjemalloc.a, -rdynamic as Redis links), with _rjem_ names for
# tikv-jemallocator (lib/libjemalloc_pic.a, as cargo links it), against the
# shared library otherwise; the static ones also stripped and with their
# symbols in a separate file (.gnu_debuglink).  make check builds CB_CHECK:
# Redis's, and tikv's as cargo builds it on a host with 57-bit addresses (the
# private namespace, a program stripped of every symbol, three levels and
# two-word leaves: one build for both; about 1.7 min of CPU each);
# check-versions CB_ALL.
CB_DIR    := $(BUILD)/census-builds
CB_ALL    := 5.3.0-redis 5.3.0-tikv 5.3.0-tikv-vaddr57 5.3.0-vaddr57 5.3.0-page14 5.3.0-page16 \
	     5.2.1-redis
CB_CHECK  ?= 5.3.0-redis 5.3.0-tikv-vaddr57
CB_BUILD  ?= $(CB_CHECK)

.PRECIOUS: $(CB_DIR)/%/inst/.done
$(CB_DIR)/%/inst/.done:
	@JE_DEST=$(abspath $(CB_DIR)) scripts/build-jemalloc.sh $*

# A fixture linked as that project links jemalloc; none when its source could
# not be had.  Redis's build is also the sampler's --disable-prof jemalloc
# (65-sampler: its leakfix, as a Redis links it).
CB_FIX = @[ ! -f $(CB_DIR)/$*/unavailable ] || exit 0; echo "  FIXTURE $@"; lib=$(CB_DIR)/$*/inst/lib; \
	case $* in \
	*-redis*) $(CC) $(FIX_CFLAGS) -DJE_PREFIX=je_ -rdynamic -o $@ $< $$lib/libjemalloc.a -lm -ldl ;; \
	*-tikv*) $(CC) $(FIX_CFLAGS) -DJE_PREFIX=_rjem_ -o $@ $< $$lib/libjemalloc_pic.a -lm -ldl ;; \
	*) $(CC) $(FIX_CFLAGS) -o $@ $< -L$$lib -Wl,-rpath,$(abspath $(CB_DIR))/$*/inst/lib -ljemalloc ;; \
	esac

$(CB_DIR)/%/censusfix: tests/fixtures/censusfix.c tests/fixtures/fixture.h $(CB_DIR)/%/inst/.done
	$(CB_FIX)

$(CB_DIR)/%/leakfix: tests/fixtures/leakfix.c tests/fixtures/fixture.h $(CB_DIR)/%/inst/.done
	$(CB_FIX)

$(CB_DIR)/%/censusfix-stripped: $(CB_DIR)/%/censusfix
	@[ ! -f $< ] || strip -o $@ $<

$(CB_DIR)/%/censusfix-debuglink: $(CB_DIR)/%/censusfix
	@[ ! -f $< ] || { objcopy --only-keep-debug $< $@.debug && strip -o $@ $< && \
		cd $(@D) && objcopy --add-gnu-debuglink=$(@F).debug $(@F); }

census-builds: $(foreach b,$(CB_BUILD),$(CB_DIR)/$(b)/censusfix \
	$(if $(findstring -redis,$(b)),$(CB_DIR)/$(b)/leakfix) \
	$(if $(findstring -redis,$(b))$(findstring -tikv,$(b)),$(CB_DIR)/$(b)/censusfix-stripped \
	$(CB_DIR)/$(b)/censusfix-debuglink))

check-versions: deps
	@$(MAKE) --no-print-directory all JE_BUILD="$(JE_ALL)" CB_BUILD="$(CB_ALL)" versions \
		$(VER_DIR)/$(JE_CENSUS)/censusfix census-builds
	@JE_VERSIONS="$(JE_ALL)" tests/run-integration.sh 80-versions
	@JE_VERSIONS="$(JE_ALL)" ONLY=versions_and_static_prefixed tests/run-integration.sh 65-sampler
	@CB_BUILDS="$(CB_ALL)" tests/run-integration.sh 88-census-builds

# --- tests ----------------------------------------------------------------
# The builds check needs, the tool's, the ASan one's and the jemalloc
# versions', side by side: make -j$(CHECK_JOBS) (the machine's cores) unless
# make was given its own -j.  Serial, they were half of a 20-minute check.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check: deps
	@j=-j$(CHECK_JOBS); case " $$MAKEFLAGS" in *-j*|*jobserver*) j= ;; esac; \
	$(MAKE) --no-print-directory $$j check-build-tool check-build-asan
	@JE_VERSIONS="$(JE_CHECK)" CB_BUILDS="$(CB_CHECK)" tests/run-all.sh

# Both link the one libunwind under build/libunwind: its script builds it once.
check-build-tool:
	@$(MAKE) --no-print-directory all $(BUILD)/hooks/jemattach $(BUILD)/check_runner \
		$(BUILD)/stress_driver versions census-builds

check-build-asan:
	@$(MAKE) --no-print-directory BUILD=build/asan SANITIZE=1 build/asan/jemattach \
		build/asan/hooks/jemattach build/asan/check_runner build/asan/stress_driver

# The arm64 port, proven in a Debian bookworm arm64 guest under qemu-system-aarch64 (TCG):
# the image is built once under build/aarch64 (scripts/aarch64/image.sh), the tree built in it.
check-aarch64:
	@scripts/aarch64/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/jemattach $(DESTDIR)$(PREFIX)/include/jemattach \
		$(DESTDIR)$(PREFIX)/share/jemattach $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(BUILD)/jemattach $(DESTDIR)$(PREFIX)/bin/jemattach
	install -m 644 $(SERVE_SO) $(DESTDIR)$(PREFIX)/lib/jemattach/jemattach-serve.so
	install -m 644 $(BUILD)/libjemattach.a $(DESTDIR)$(PREFIX)/lib/libjemattach.a
	install -m 755 $(BUILD)/libjemattach.so $(DESTDIR)$(PREFIX)/lib/libjemattach.so.0
	ln -sf libjemattach.so.0 $(DESTDIR)$(PREFIX)/lib/libjemattach.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@REQUIRES@|$(PKGS)|' \
		src/jemattach.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/jemattach.pc
	install -m 644 include/jemattach.h $(DESTDIR)$(PREFIX)/include/jemattach.h
	install -m 644 include/jemattach/*.h $(VERSION_H) $(DESTDIR)$(PREFIX)/include/jemattach/
	install -m 644 doc/jemattach.1 $(DESTDIR)$(PREFIX)/share/man/man1/jemattach.1
	if [ -f gdb/jemalloc.gdb ]; then install -m 644 gdb/jemalloc.gdb $(DESTDIR)$(PREFIX)/share/jemattach/; fi

# A Debian package of what install installs (scripts/deb.sh): the tool, the
# library with headers and a pkg-config file, the gdb library, the man page,
# the systemd unit of `serve`.  Check it with: lintian $(BUILD)/jemattach_*.deb
deb: all $(BUILD)/jemattach-shared
	rm -rf $(BUILD)/deb
	@$(MAKE) --no-print-directory -s install DESTDIR=$(abspath $(BUILD)/deb/root) PREFIX=/usr
	install -m 755 $(BUILD)/jemattach-shared $(BUILD)/deb/root/usr/bin/jemattach
	scripts/deb.sh $(BUILD) $(VERSION)

# The package on a clean machine: a Debian bookworm root made by mmdebstrap
# from Debian's archive (network; kept in $(BUILD)/debclean), the package
# dpkg -i'ed there with apt fetching its dependencies, the installed tool run
# on a fixture and the unit verified (scripts/deb-clean.sh).  By hand, not in
# check: about 2-3 min (doc/serve.md).
check-deb: deb $(FIX_DIR)/jemfix
	scripts/deb-clean.sh $(BUILD) $(BUILD)/jemattach_$(VERSION)-1_$(shell dpkg --print-architecture).deb

# The packaged tool links Debian's shared libraries (policy: no embedded
# copies of zlib, bzip2...); the static link above is for speed from source.
$(BUILD)/jemattach-shared: $(CLI_OBJS) $(BUILD)/libjemattach.a $(UNWIND_LINK) $(SERVE_EXPORTS)
	$(CC) -o $@ $(CLI_OBJS) $(BUILD)/libjemattach.a $(ALL_LDFLAGS) @$(SERVE_EXPORTS) \
		-Wl,--start-group $$(cat $(UNWIND_LINK)) -Wl,--end-group $(PKG_LIBS) -pthread -ldl -lm

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/jemattach $(DESTDIR)$(PREFIX)/lib/libjemattach.* \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/jemattach.pc \
		$(DESTDIR)$(PREFIX)/include/jemattach.h $(DESTDIR)$(PREFIX)/share/man/man1/jemattach.1
	rm -rf $(DESTDIR)$(PREFIX)/include/jemattach $(DESTDIR)$(PREFIX)/share/jemattach \
		$(DESTDIR)$(PREFIX)/lib/jemattach

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@bench/run.sh

# The long versions of tests in make check: 10000 stress operations; 750 + 375
# runs of jemattach killed at random instants (tests/integration/52-survive.sh), 200 borrowings of
# every EINTR interface.
soak: deps
	@$(MAKE) --no-print-directory all $(BUILD)/hooks/jemattach $(BUILD)/stress_driver
	@STRESS_DRIVER=$(BUILD)/stress_driver tests/stress.sh $${SOAK_OPS:-10000}
	@SURVIVE_KILLS=$${SOAK_KILLS:-750} SURVIVE_EINTR=$${SOAK_EINTR:-200} \
		DEATH_KILLS=$${SOAK_DEATH_KILLS:-200} JEMATTACH=$(BUILD)/jemattach \
		FIXTURES=$(BUILD)/fixtures tests/run-integration.sh 52-survive
	@SAMPLER_KILLS=$${SOAK_SAMPLER_KILLS:-50} ONLY=sigkill_leaves_no_breakpoint \
		JEMATTACH=$(BUILD)/jemattach FIXTURES=$(BUILD)/fixtures tests/run-integration.sh 65-sampler

# --- fuzzing (by hand: `make fuzz FUZZ_TIME=600`; make check replays the corpus) ---
# New inputs land in $(BUILD)/fuzz/corpus; merge the interesting ones into
# tests/fuzz/corpus with: $(BUILD)/fuzz/heap_fuzz -merge=1 tests/fuzz/corpus $(BUILD)/fuzz/corpus
FUZZ_TIME ?= 600
FUZZ_SRCS := tests/fuzz/heap_fuzz.c $(wildcard src/heap/*.c) $(BUILD)/gen/profile.pb-c.c

$(BUILD)/fuzz/heap_fuzz: $(FUZZ_SRCS) $(wildcard src/heap/*.h include/jemattach/*.h) $(VERSION_H)
	@mkdir -p $(BUILD)/fuzz/corpus
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-std=gnu11 -D_GNU_SOURCE -Iinclude -I. -Isrc -Iattach/arch/$(ARCH) -I$(BUILD)/gen $(PKG_CFLAGS) \
		-o $@ $(FUZZ_SRCS) attach/procfs.c attach/yield.c attach/defer.c src/symbols/fdes.c \
		attach/targetfs.c attach/backing.c src/symbols/debuginfo.c src/symbols/dwfl.c src/symbols/view.c \
		src/symbols/demangle.c $(PKG_LIBS) -lm

# The ELF core parser of the emulator (corpus: tests/fuzz/core_corpus).
$(BUILD)/fuzz/core_fuzz: tests/fuzz/core_fuzz.c src/emulate/core.c src/emulate/core.h
	@mkdir -p $(BUILD)/fuzz/core_corpus
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-std=gnu11 -D_GNU_SOURCE -I. -Isrc -Iattach/arch/$(ARCH) $(PKG_CFLAGS) -o $@ tests/fuzz/core_fuzz.c \
		src/emulate/core.c src/symbols/buildid.c attach/arch/$(ARCH)/regs.c $(PKG_LIBS)

# Census snapshots: the reader, the difference and the reports (corpus:
# tests/fuzz/census_corpus), instrumented with the heap code they write with;
# the rest of the census (jma_census_free's file) from the library, as built.
CENSUS_FUZZ_SRCS := tests/fuzz/census_fuzz.c src/census/snapshot.c src/census/diff.c \
	src/census/blocks.c src/census/index.c \
	src/census/report.c $(wildcard src/heap/*.c) $(BUILD)/gen/profile.pb-c.c
$(BUILD)/fuzz/census_fuzz: $(CENSUS_FUZZ_SRCS) $(wildcard src/census/*.h src/heap/*.h) $(BUILD)/libjemattach.a
	@mkdir -p $(BUILD)/fuzz/census_corpus
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-std=gnu11 -D_GNU_SOURCE -Iinclude -I. -Isrc -Iattach/arch/$(ARCH) -I$(BUILD)/gen $(PKG_CFLAGS) \
		-o $@ $(CENSUS_FUZZ_SRCS) $(BUILD)/libjemattach.a $(PKG_LIBS) -pthread -ldl -lm

fuzz: $(BUILD)/fuzz/heap_fuzz $(BUILD)/fuzz/core_fuzz $(BUILD)/fuzz/census_fuzz
	$(BUILD)/fuzz/heap_fuzz -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=4096 \
		$(BUILD)/fuzz/corpus tests/fuzz/corpus
	$(BUILD)/fuzz/core_fuzz -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=4096 \
		$(BUILD)/fuzz/core_corpus tests/fuzz/core_corpus
	$(BUILD)/fuzz/census_fuzz -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=4096 \
		$(BUILD)/fuzz/census_corpus tests/fuzz/census_corpus

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
