/* commands.c -- the table of commands: name, whether it needs a PID, its function, synopsis and help. */
#include <stddef.h>

#include "cli.h"

const struct cli_cmd cli_commands[] = {
	{ "info", 1, 0, cmd_info, "info [--json]",
	  "jemalloc version, where it was found, profiling state, thread to use", NULL },
	{ "get", 1, 0, cmd_get, "get [--json] [--type TYPE] NAME...",
	  "read mallctl values (stats.* refresh the epoch first; --type for names no table knows)", NULL },
	{ "set", 1, 0, cmd_set, "set [--type TYPE] NAME VALUE",
	  "write a mallctl value; prints old -> new when readable", NULL },
	{ "stats", 1, 0, cmd_stats, "stats [--json] [--opts LETTERS] [-o FILE]",
	  "the full malloc_stats_print report, captured here (not on the target's stderr)", NULL },
	{ "prof", 1, 0, cmd_prof, "prof status [--json]\nprof on|off\n"
	  "prof dump [-o FILE|-] [--analyze [--top N]]\nprof reset [LG_SAMPLE]\nprof gdump on|off\n"
	  "prof window SECONDS [-o DIR] [--top N]\n"
	  "prof track [-i SEC] [--churn SIZE] [-n COUNT] [-o FILE] [--format text|jsonl] [--top N] "
	  "[--svg OUT.svg] [--fold REGEX] [--no-default-folds]",
	  "heap-profiling control (needs MALLOC_CONF=prof:true at the target's start)", NULL },
	{ "purge", 1, 0, cmd_purge, "purge [ARENA|all]",
	  "purge unused dirty pages now (arena.<i>.purge); shows resident/retained before -> after", NULL },
	{ "decay", 1, 0, cmd_decay, "decay [ARENA|all]",
	  "run decay-based purging now (arena.<i>.decay); shows the effect", NULL },
	{ "threads", 1, JMA_F_ANY_PROCESS, cmd_threads, "threads [--json] [--frames N]",
	  "every thread: state, system call, symbolized stack; jemalloc frames marked", NULL },
	{ "watch", 1, 0, cmd_watch,
	  "watch [-i SEC] [-n COUNT] [-o FILE] [--format jsonl|csv|prom] [--arenas]",
	  "record memory stats every SEC seconds (default 10) until Ctrl-C or the process exits "
	  "(exit 0; 1 if fewer than COUNT samples)", NULL },
	{ "shell", 1, 0, cmd_shell, "shell [FILE|-]\n-",
	  "run commands (one a line, as after PID) from stdin or FILE in one session: "
	  "jemalloc is found once, each command pays only its own stop", NULL },
	{ "report", 0, 0, cmd_report,
	  "report abs|del|eff SERIES [-t SIZE] [--from I] [--to J] [-m METRIC] [--svg OUT]\n"
	  "report sites TRACK.jsonl|DIR [--top N] [--svg OUT]",
	  "per-arena peaks, changes or active/mapped of a watch series or stats JSON log "
	  "(threshold: 5% of the process's peak unless -t); growth of allocation sites", NULL },
	{ "core", 0, 0, cmd_core, "core [--sysroot DIR] CORE [EXECUTABLE] COMMAND [ARGS]",
	  "run info, get, stats, prof dump or prof status on a core file (kernel core or gcore): "
	  "jemalloc's code is emulated on the dumped memory", NULL },
	{ "analyze", 0, 0, cmd_analyze,
	  "analyze PROFILE [--base PROFILE] [--top N] [--format text|json|collapsed|pprof] "
	  "[-o FILE] [--lines] [--pid PID] [...]\nanalyze --list-folds",
	  "which code holds the memory in a heap profile (jeprof's columns, JSON, "
	  "flame-graph stacks, pprof)",
	  "  --inuse-space|--inuse-objects|--alloc-space|--alloc-objects   what to count\n"
	  "  --lines             a site is function + file:line (and the DWARF of separate\n"
	  "                      debuginfo files is read: their inlined frames)\n"
	  "  --focus RE, --ignore RE   keep / drop stacks with a frame matching RE\n"
	  "  --fold RE           fold these wrappers away too, like malloc\n"
	  "  --no-default-folds  do not fold the well-known wrappers --list-folds shows\n"
	  "  --debuginfo-path P  where separate debuginfo is (DIR/.build-id/xx/rest.debug)\n"
	  "  --debuginfod        allow fetching debuginfo from $DEBUGINFOD_URLS (network)\n"
	  "  -o -                standard output\n" },
	{ "serve", 0, 0, cmd_serve,
	  "serve [--listen ADDR:PORT] [--target SELECTOR]... [--min-interval SEC] "
	  "[--web-config FILE] [--allow-control] [--arenas]",
	  "an HTTP exporter of the host's jemalloc processes: /metrics for Prometheus, "
	  "/debug/pprof/heap?pid=N for pprof and Parca, /stats?pid=N, /targets",
	  "  --listen ADDR:PORT  where to listen (default 127.0.0.1:9711); a non-loopback\n"
	  "                      address needs TLS in --web-config, or --insecure\n"
	  "  --target SELECTOR   serve only these (and refuse others, 403): pid=N,\n"
	  "                      comm=REGEX, uid=U, cgroup=PATH; repeat for more; default:\n"
	  "                      every process with a jemalloc\n"
	  "  --min-interval SEC  answers are kept this long: at most one attach per target\n"
	  "                      per SEC (default 1)\n"
	  "  --timeout SEC       the longest a request waits for one target (default 5);\n"
	  "                      a target that does not answer in time is up 0, reason timeout\n"
	  "  --discover-interval SEC  how often /proc is scanned for new processes (default 5)\n"
	  "  --max-attaches N    targets attached at once, at most (default 4)\n"
	  "  --web-config FILE   TLS and basic auth (bcrypt), exporter-toolkit's YAML format\n"
	  "  --allow-control     allow POST /prof?pid=N&action=on|off|reset\n"
	  "  --insecure          allow plain HTTP on a non-loopback address\n"
	  "  --arenas            per-arena series too\n" },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL },
};
