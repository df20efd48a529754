/* commands.c -- the table of commands: name, properties (needs a PID, writes to
 * the process, ...), its function, synopsis and help. */
#include <stddef.h>

#include "cli.h"

/* prof's subcommands that change the process or run until stopped. */
static const struct cli_sub prof_subs[] = {
	{ "on", CLI_WRITES },
	{ "off", CLI_WRITES },
	{ "reset", CLI_WRITES },
	{ "gdump", CLI_WRITES },
	{ "window", CLI_WRITES },
	{ "track", CLI_UNTIL_STOP },
	{ NULL, 0 },
};

const struct cli_cmd cli_commands[] = {
	{ "info", CLI_PID, 0, cmd_info, "info [--json]",
	  "jemalloc version, where it was found, profiling state, thread to use", NULL, NULL },
	{ "get", CLI_PID, 0, cmd_get, "get [--json] [--type TYPE] NAME...",
	  "read mallctl values (stats.* refresh the epoch first; --type for names no table knows)", NULL, NULL },
	{ "set", CLI_PID | CLI_WRITES, 0, cmd_set, "set [--type TYPE] NAME VALUE",
	  "write a mallctl value; prints old -> new when readable", NULL, NULL },
	{ "stats", CLI_PID, 0, cmd_stats, "stats [--json] [--opts LETTERS] [-o FILE]",
	  "the full malloc_stats_print report, captured here (not on the target's stderr)", NULL, NULL },
	{ "prof", CLI_PID, 0, cmd_prof, "prof status [--json]\nprof on|off\n"
	  "prof dump [-o FILE|-] [--analyze [--top N]]\nprof reset [LG_SAMPLE]\nprof gdump on|off\n"
	  "prof window SECONDS [-o DIR] [--top N] [--sampler] [--lg-sample N] [--max-overhead PCT]\n"
	  "prof track [-i SEC] [--churn SIZE] [-n COUNT] [-o FILE] [--format text|jsonl] [--top N] "
	  "[--svg OUT.svg] [--fold REGEX] [--no-default-folds] [--no-demangle] "
	  "[--sampler [--max-overhead PCT]]\n"
	  "prof sample SECONDS [-o FILE|-] [--lg-sample N] [--alloc-only] [--slow-paths] "
	  "[--analyze [--top N]] [--max-overhead PCT]",
	  "heap-profiling control (needs MALLOC_CONF=prof:true at the target's start; "
	  "prof sample does not: uprobes and eBPF, root; window and track use it without prof:true)",
	  "  prof sample: a heap_v2 profile of what the process allocated in the window\n"
	  "  and what of it is still in use at its end, without prof:true or a restart.\n"
	  "  Every malloc/free-family call traps into the kernel (~5 us on a VM): the\n"
	  "  cost is measured and kept within --max-overhead PCT (default 5) of one CPU,\n"
	  "  less what the process's busiest thread uses, and never less than PCT% of\n"
	  "  the CPU it gets; past it the sampler degrades (the entries in short\n"
	  "  bursts, scaled by jemalloc's own byte counter; frees then read from\n"
	  "  jemalloc's metadata at the end) and says so.  --max-overhead 0: every\n"
	  "  call probed, no limit.  --lg-sample N: one sample per 2^N bytes on\n"
	  "  average (default: 2^14 to start with, sparser past 200 samples a second,\n"
	  "  up to jemalloc's 19).  --alloc-only: no frees followed, fewer traps.\n"
	  "  --slow-paths (jemalloc 5): bursts from the start.  Exit 4 when the kernel\n"
	  "  or privileges do not allow it.\n"
	  "  prof window, prof track: on a process without opt.prof they use the\n"
	  "  sampler (said on stderr), never sparser than the process's\n"
	  "  opt.lg_prof_sample; --sampler makes them use it on a prof:true process\n"
	  "  too (--lg-sample and --max-overhead are its options).  The track's\n"
	  "  snapshots are then what was allocated since it began and is still in use\n"
	  "  (no --churn).\n", prof_subs },
	{ "purge", CLI_PID | CLI_WRITES, 0, cmd_purge, "purge [ARENA|all]",
	  "purge unused dirty pages now (arena.<i>.purge); shows resident/retained before -> after", NULL, NULL },
	{ "decay", CLI_PID | CLI_WRITES, 0, cmd_decay, "decay [ARENA|all]",
	  "run decay-based purging now (arena.<i>.decay); shows the effect", NULL, NULL },
	{ "threads", CLI_PID | CLI_LIVE_ONLY, JMA_F_ANY_PROCESS, cmd_threads, "threads [--json] [--frames N] [--no-demangle]",
	  "every thread: state, system call, symbolized stack; jemalloc frames marked", NULL, NULL },
	{ "watch", CLI_PID | CLI_UNTIL_STOP | CLI_LIVE_ONLY, 0, cmd_watch,
	  "watch [-i SEC] [-n COUNT] [-o FILE] [--format jsonl|csv|prom] [--arenas]",
	  "record memory stats every SEC seconds (default 10) until Ctrl-C or the process exits "
	  "(exit 0; 1 if fewer than COUNT samples)", NULL, NULL },
	{ "census", CLI_PID | CLI_RUNS_NOTHING, JMA_F_STRIPPED, cmd_census,
	  "census [--by size|type|root] [--leaks] [--top N] [--json] [--blocks FILE] [--no-stats]\n"
	  "census ... [--save FILE [--addresses]] [--base FILE [--born FILE]] "
	  "[--format text|json|pprof] [-o FILE]\n"
	  "census [--by size|type|root] --every SEC [-n COUNT] [--format text|jsonl] [-o FILE] "
	  "[--svg OUT.svg] [--top N]",
	  "every live block, from jemalloc's own map of extents read with every thread stopped "
	  "(nothing runs in the target): by size class or C++ type (vtable), thread-cached "
	  "blocks apart, leaks (anchored/leaked/unreferenced), what grew; 5.0 and later, 4.5, 3.6 "
	  "with symbols",
	  "  --by size|type|root group by size class (default), by the type of the vtable\n"
	  "                      the block's first word points to (demangled), or by what\n"
	  "                      each global and thread retains (dominator tree)\n"
	  "  --leaks             blocks no static data, stack or register reaches\n"
	  "  --top N             the N largest rows only\n"
	  "  --blocks FILE       every live block as '0xADDR USABLE_SIZE [TYPE]', one a line\n"
	  "  --no-stats          do not read stats.allocated afterwards (one short call)\n"
	  "  --save FILE         a snapshot of the census (sizes, types, roots) to compare\n"
	  "                      with later; --addresses: every block's address too\n"
	  "  --base FILE         what was added and removed since that snapshot: per size,\n"
	  "                      type, root and holder; with its addresses, the blocks born\n"
	  "                      since and whom they belong to (--born FILE lists them).\n"
	  "                      The census runs with the base's --by type / root\n"
	  "  --format pprof      a gzip'd profile.proto: types as samples, owners above\n"
	  "                      them (go tool pprof -diff_base compares two); with --base\n"
	  "                      the difference itself\n"
	  "  -o FILE             where a difference, a profile or a series goes\n"
	  "  --every SEC         a census every SEC seconds (-n COUNT of them, or until\n"
	  "                      Ctrl-C), then types (--by type), owners (--by root) or\n"
	  "                      sizes ranked by growth as prof track ranks sites; each\n"
	  "                      census's stop is shown; --format jsonl for report sites,\n"
	  "                      --svg for a chart of the top rows\n", NULL },
	{ "shell", CLI_PID | CLI_STDIN, 0, cmd_shell, "shell [FILE|-]\n-",
	  "run commands (one a line, as after PID) from stdin or FILE in one session: "
	  "jemalloc is found once, each command pays only its own stop", NULL, NULL },
	{ "report", 0, 0, cmd_report,
	  "report abs|del|eff SERIES [-t SIZE] [--from I] [--to J] [-m METRIC] [--svg OUT]\n"
	  "report sites TRACK.jsonl|DIR [--top N] [--svg OUT] [--no-demangle]",
	  "per-arena peaks, changes or active/mapped of a watch series or stats JSON log "
	  "(threshold: 5% of the process's peak unless -t); growth of allocation sites", NULL, NULL },
	{ "core", 0, 0, cmd_core, "core [--sysroot DIR] CORE [EXECUTABLE] COMMAND [ARGS]",
	  "run info, get, stats, prof dump or prof status on a core file (kernel core or gcore): "
	  "jemalloc's code is emulated on the dumped memory", NULL, NULL },
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
	  "  --no-demangle       C++ names as mangled (JSON and pprof carry both anyway)\n"
	  "  --debuginfo-path P  where separate debuginfo is (DIR/.build-id/xx/rest.debug)\n"
	  "  --debuginfod        allow fetching debuginfo from $DEBUGINFOD_URLS (network)\n"
	  "  -o -                standard output\n", NULL },
	{ "serve", 0, 0, cmd_serve,
	  "serve [--listen ADDR:PORT] [--target SELECTOR]... [--min-interval SEC] "
	  "[--web-config FILE] [--allow-sampler] [--allow-control] [--max-duty PCT] [--arenas] "
	  "[--census-interval SEC] [--census-owners] [--census-metrics N]",
	  "an HTTP exporter of the host's jemalloc processes: /metrics for Prometheus, "
	  "/debug/pprof/heap?pid=N for pprof and Parca, /debug/census?pid=N, /stats?pid=N, /targets",
	  "  --listen ADDR:PORT  where to listen (default 127.0.0.1:9711); a non-loopback\n"
	  "                      address needs TLS in --web-config, or --insecure\n"
	  "  --target SELECTOR   serve only these (and refuse others, 403): uid=U,\n"
	  "                      unit=NAME, exe=PATH, cgroup=PATH, pid=N, comm=REGEX, or\n"
	  "                      several joined by commas (all must hold); repeat for more;\n"
	  "                      default: every process with a jemalloc.  comm= is the\n"
	  "                      process's own choice: prefer uid=, unit=, exe=\n"
	  "  --min-interval SEC  answers are kept this long: at most one attach per target\n"
	  "                      per SEC (default 1)\n"
	  "  --timeout SEC       the longest a request waits for one target (default 5);\n"
	  "                      a target that does not answer in time is up 0, reason timeout\n"
	  "  --discover-interval SEC  how often /proc is scanned for new processes (default 5)\n"
	  "  --max-attaches N    targets attached at once, at most (default 4); one user's\n"
	  "                      processes hold half at most\n"
	  "  --max-duty PCT      serve's work takes at most PCT% of each process's time, over\n"
	  "                      time: threads held, sampler windows (default 5; 429 past it)\n"
	  "  --allow-sampler     sampler windows (heap profiles of processes without\n"
	  "                      prof:true) for unauthenticated clients too (403 otherwise)\n"
	  "  --max-overhead PCT  a sampler window keeps its probes within PCT (default 5;\n"
	  "                      0: none), as prof sample does\n"
	  "  --web-config FILE   TLS and basic auth (bcrypt), exporter-toolkit's YAML format\n"
	  "  --allow-control     allow POST /prof?pid=N&action=on|off|reset, to authenticated\n"
	  "                      clients and to a local user on its own processes\n"
	  "  --insecure          allow plain HTTP on a non-loopback address\n"
	  "  --arenas            per-arena series too\n"
	  "  --census-interval SEC  /debug/census?pid=N answers are kept this long: a\n"
	  "                      census (every thread stopped for its metadata) at most\n"
	  "                      once per SEC per target, 2 at once (default 60)\n"
	  "  --census-owners     censuses find what each root retains too (reads every\n"
	  "                      block: the child's CPU, no longer stop)\n"
	  "  --census-metrics N  /metrics: bytes of the N largest types of each target,\n"
	  "                      from a census every --census-interval\n", NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL, NULL },
};
