/* module.h -- the entry point of jemattach-serve.so, and its ABI with the jemattach that loads it.
 *
 * The server is a part of the command line, built apart only so that no
 * other command loads libmicrohttpd, libyaml, GnuTLS and libxcrypt (the
 * Makefile, SERVE_SO).  It carries no copy of the library: the jma_
 * functions it calls are the tool's own, which the tool exports (exactly
 * those: the Makefile lists them from the module's undefined symbols), and it
 * exports one symbol, the struct below (src/serve/module.map).  So
 * `jemattach serve` runs one library, the one the rest of the tool runs; the
 * library's face stays what include/ says, and serve's configuration is no
 * promise to anyone but this tool.
 *
 * The ABI between the two: struct serve_cfg (serve.h, with the public
 * struct jma_options in it), the jma_ functions' prototypes and this struct.
 * SERVE_ABI names it: the version and a checksum of the headers it is written
 * in ($(BUILD)/gen/serve/abi.h).  The tool runs a module whose SERVE_ABI is
 * its own, and refuses any other (a stale install, a copy from another
 * build) saying which it found, before it calls any of it.
 */
#ifndef JMA_SERVE_MODULE_H
#define JMA_SERVE_MODULE_H

#include "serve/abi.h"		/* SERVE_ABI, generated */
#include "serve/serve.h"

/* The name of the module's one exported symbol, a struct serve_module. */
#define SERVE_MODULE_SYM "jemattach_serve_module"

struct serve_module {
	char abi[64];		/* SERVE_ABI of its build: first, never moved nor resized */
	/* Read the web config, refuse a non-loopback address without TLS
	 * (unless insecure), then run the server until SIGINT/SIGTERM; returns
	 * the exit code: 0, 2 (bad web config, or TLS missing), 3 (cannot
	 * listen) (server.c). */
	int (*run)(struct serve_cfg *cfg);
};

#endif
