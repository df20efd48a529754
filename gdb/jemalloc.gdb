# jemalloc.gdb -- jemalloc's mallctl and malloc_stats_print from inside gdb, in plain gdb
# command language (many production gdb builds have none of gdb's scripting extensions).
#
#   (gdb) source /usr/local/share/jemattach/jemalloc.gdb      (jemattach --gdb-script)
#   (gdb) help jem
#   gdb -p PID -batch -nx -x jemalloc.gdb -ex 'jem-stats /tmp/s.txt'
#
# How it works, and why:
# - Every call goes through a function pointer cast to the exact C prototype, because
#   libjemalloc (Debian's, a static je_ build, Redis) usually has no debug info: without the
#   cast gdb would guess "int f()" and pass 4-byte integers in 8-byte registers.
# - Out-values, names and strings need inferior memory.  A gdb string literal passed to a
#   call would be copied into the inferior with the inferior's *malloc* (jemalloc itself:
#   allocation under the debugger, and a leak); so would a literal given to printf as a
#   %s argument, so messages pass strings through $convenience variables.  Each command
#   mmaps a private anonymous scratch area, writes bytes there with
#   "set {char[N]}ADDR = ...", and munmaps it before it returns: the process is left with
#   the mappings it had.
# - malloc_stats_print(write_cb, cbopaque, opts) calls write_cb(cbopaque, text).  glibc's
#   strcat(dest, src) has that shape, so with cbopaque = a scratch buffer the report is
#   appended there; "dump binary memory" then writes it to a file on the debugger's side.
#   strcat is a GNU ifunc: "*strcat" makes gdb resolve it to the implementation.
# - A command that fails after its scratch is mapped still unmaps it, then raises a gdb
#   error ("jem: command failed: WHAT", see jem--fail) so batch runs exit non-zero.
#
# Hazards (see README "gdb command library"): gdb stops every thread while it is attached,
# and a call made in a thread that is itself inside jemalloc holding a lock never returns.
# jemattach stops one thread for about a millisecond and checks for that; prefer it in
# production.

# A signal inside a called function (a crash in the call) pops the call's frame instead of
# leaving the program stopped inside jemalloc.
set unwindonsignal on

# C++ names as users read them (Allocator<false>::realloc(void*, ...)) in backtraces and
# printed pointers (print demangle, gdb's default), and in "<symbol+offset>" of x/i,
# disassemble and info symbol (print asm-demangle, off by default).
set print demangle on
set print asm-demangle on

if $_isvoid($jem_prefix)
  set $jem_prefix = ""
end
# Address of the scratch area while a command runs, 0 otherwise.
if $_isvoid($jem_s)
  set $jem_s = 0
end

# mallctl leaf names (last dot component) whose 8-byte value is a string or signed, as in
# jemattach's src/ctltable.c; every other 8-byte value is unsigned (size_t, uint64_t).
set $jem_string_leaves = "|version|malloc_conf|metadata_thp|dss|percpu_arena|purge|stats_print_opts|stats_interval_opts|junk|thp|prof_prefix|prof_time_resolution|zero_realloc|name|prefix|dump|log_start|"
set $jem_signed_leaves = "|dirty_decay_ms|muzzy_decay_ms|lg_dirty_mult|decay_time|lg_tcache_max|lg_prof_interval|prof_recent_alloc_max|recent_alloc_max|lg_san_uaf_align|"

# Scratch layout (offsets from $jem_s):
#      0  the mallctl name (at most 1023 bytes)
#   1024  size_t oldlen
#   1032  old value (8 bytes)
#   1040  new value (8 bytes)
#   1048  "|leaf|" key for the lists above; "epoch"
#   2048  a copy of one list
#   4096  a string argument: jem-set VALUE, jem-prof-dump FILE, jem-stats OPTS (< 4096)
#   8192  jem-stats: the report

define jem
  help jem
end
document jem
gdb command library for jemalloc (shipped with jemattach; plain gdb commands only).
  jem-info                   version, build options, profiling state and heap totals
  jem-get NAME               read one mallctl value (stats.* refresh the epoch first)
  jem-set NAME VALUE         write a bool, unsigned, size_t/ssize_t or string mallctl value
  jem-stats [FILE] [OPTS]    the full malloc_stats_print report, into FILE or here ("-")
  jem-prof-on                prof.active = true  (needs MALLOC_CONF=prof:true at start)
  jem-prof-off               prof.active = false
  jem-prof-status            profiling settings and state
  jem-prof-dump [FILE]       the target writes a heap profile (jeprof reads it)
  jem-purge                  return all arenas' unused dirty pages to the system
  jem-prefix [PFX]           symbol prefix of the jemalloc API: je_, _rjem_; none by default
Each command maps a scratch area in the process and unmaps it before returning.
Calls run in the selected thread: pick one that is not inside jemalloc (see README).
end

# --- internals (names start with "jem--") ---------------------------------------------

# jem--fail: raise a gdb error after a message was printed and the scratch unmapped; the
# error says what failed: $jem_why, set by the caller (no text of the user's: a quote would
# end the expression).  Plain gdb has no command that fails with a message of our own; a
# quoted symbol that cannot exist fails with its name, so the one line gdb adds reads
#   No symbol "jem: command failed: jem-prof-dump: mallctl error 14 (EFAULT)" in current context.
# and the process is not touched (a symbol lookup only).
define jem--fail
  eval "print 'jem: command failed: %s'", $jem_why
end

# jem--resolve: function addresses for this process, with $jem_prefix for jemalloc's API.
define jem--resolve
  eval "set $jem_fn_mallctl = (unsigned long)&%smallctl", $jem_prefix
  eval "set $jem_fn_stats = (unsigned long)&%smalloc_stats_print", $jem_prefix
  # glibc's string functions are ifuncs: "*f" is the implementation, "&f" the resolver.
  set $jem_fn_strcat = (unsigned long)*strcat
  set $jem_fn_strlen = (unsigned long)*strlen
  set $jem_fn_strstr = (unsigned long)*strstr
  set $jem_fn_strrchr = (unsigned long)*strrchr
  set $jem_fn_strcpy = (unsigned long)*strcpy
  set $jem_fn_mmap = (unsigned long)*mmap
  set $jem_fn_munmap = (unsigned long)*munmap
end

# jem--begin EXTRA: map 8192 + EXTRA bytes of scratch at $jem_s.  MAP_NORESERVE: a large
# jem-stats buffer costs only the pages the report touches.
define jem--begin
  if $jem_s != 0
    printf "jem: warning: an interrupted command left scratch at %#lx (%lu bytes) mapped in the process it ran in\n", $jem_s, $jem_size
  end
  jem--resolve
  set $jem_size = 8192 + (unsigned long)($arg0)
  # PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE
  set $jem_s = ((unsigned long(*)(unsigned long, unsigned long, int, int, int, long))$jem_fn_mmap)(0, $jem_size, 3, 0x4022, -1, 0)
  if $jem_s == (unsigned long)-1
    set $jem_s = 0
    printf "jem: mmap of %lu bytes of scratch in the process failed\n", $jem_size
    set $jem_why = "mmap of scratch failed in the process"
    jem--fail
  end
end

# jem--end: unmap the scratch.
define jem--end
  set $jem_rc_munmap = ((int(*)(unsigned long, unsigned long))$jem_fn_munmap)($jem_s, $jem_size)
  if $jem_rc_munmap != 0
    printf "jem: warning: munmap(%#lx, %lu) failed in the process\n", $jem_s, $jem_size
  end
  set $jem_s = 0
end

# jem--poke ADDR $STRVAR: copy a string held by gdb, NUL included, to inferior ADDR.
# gdb's type syntax wants a literal array length, hence eval.
define jem--poke
  eval "set {char[%lu]}(%lu) = $arg1", sizeof($arg1), $arg0
end

# jem--mallctl NAMEP OLDP OLDLENP NEWP NEWLEN: $jem_rc = mallctl(...) (each argument one
# word without spaces).
define jem--mallctl
  set $jem_rc = ((int(*)(unsigned long, unsigned long, unsigned long, unsigned long, unsigned long))$jem_fn_mallctl)($arg0, $arg1, $arg2, $arg3, $arg4)
end

# jem--set-name NAME: $jem_name = NAME, checked before anything is mapped, so that a name
# gdb cannot quote fails here with nothing to clean up.
define jem--set-name
  set $jem_name = "$arg0"
  if sizeof($jem_name) > 1024
    printf "jem: mallctl name too long\n"
    set $jem_why = "mallctl name too long"
    jem--fail
  end
end

# jem--explain WHAT: say why mallctl failed ($jem_rc is an errno value); $jem_why for
# jem--fail: "WHAT: mallctl error N (ENAME)".
define jem--explain
  set $jem_what = "$arg0"
  printf "%s: %s: mallctl error %d", $jem_what, $jem_name, $jem_rc
  set $jem_ename = ""
  if $jem_rc == 1
    set $jem_ename = "EPERM"
    printf " (EPERM: this name cannot be read, or cannot be written, this way)\n"
  else
    if $jem_rc == 2
      set $jem_ename = "ENOENT"
      printf " (ENOENT: no such name in this jemalloc, or the feature is unavailable; profiling needs MALLOC_CONF=prof:true at process start)\n"
    else
      if $jem_rc == 14
        set $jem_ename = "EFAULT"
        printf " (EFAULT: the operation failed in the process, e.g. it could not create the file)\n"
      else
        if $jem_rc == 22
          set $jem_ename = "EINVAL"
          printf " (EINVAL: invalid value, or a size this library does not handle)\n"
        else
          if $jem_rc == 11
            set $jem_ename = "EAGAIN"
            printf " (EAGAIN: resource temporarily unavailable)\n"
          else
            if $jem_rc == 12
              set $jem_ename = "ENOMEM"
              printf " (ENOMEM: out of memory in the process)\n"
            else
              printf "\n"
            end
          end
        end
      end
    end
  end
  if $jem_ename[0] != 0
    eval "set $jem_why = \"%s: mallctl error %d (%s)\"", $jem_what, $jem_rc, $jem_ename
  else
    eval "set $jem_why = \"%s: mallctl error %d\"", $jem_what, $jem_rc
  end
end

# jem--in-list LIST: $jem_hit = whether the last component of the name in scratch is
# one of the "|a|b|" LIST.
define jem--in-list
  set $jem_p = ((unsigned long(*)(unsigned long, int))$jem_fn_strrchr)($jem_s, '.')
  if $jem_p == 0
    set $jem_p = $jem_s
  else
    set $jem_p = $jem_p + 1
  end
  set {char}($jem_s + 1048) = '|'
  set $jem_p = ((unsigned long(*)(unsigned long, unsigned long))$jem_fn_strcpy)($jem_s + 1049, $jem_p)
  set $jem_p = $jem_s + 1048 + ((unsigned long(*)(unsigned long))$jem_fn_strlen)($jem_s + 1048)
  set {char[2]}($jem_p) = "|"
  jem--poke $jem_s+2048 $arg0
  set $jem_hit = ((unsigned long(*)(unsigned long, unsigned long))$jem_fn_strstr)($jem_s + 2048, $jem_s + 1048) != 0
end

# jem--type-of-8: the type of an 8-byte value by its name: 3 size_t, 4 ssize_t, 5 string.
define jem--type-of-8
  jem--in-list $jem_string_leaves
  if $jem_hit
    set $jem_type = 5
  else
    jem--in-list $jem_signed_leaves
    if $jem_hit
      set $jem_type = 4
    else
      set $jem_type = 3
    end
  end
end

# jem--get: read the mallctl $jem_name (stats.* after an epoch refresh) into scratch+1032.
# Sets $jem_rc and $jem_type: 1 bool, 2 unsigned, 3 size_t/uint64_t, 4 ssize_t, 5 string.
# The size is probed: asked for 8 bytes, mallctl copies a smaller value, stores its size in
# oldlen and returns EINVAL.
define jem--get
  jem--poke $jem_s $jem_name
  # "stats." read as one little-endian 6-byte integer.
  if ({unsigned long}($jem_s) & 0xffffffffffff) == 0x2e7374617473
    set {char[6]}($jem_s + 1048) = "epoch"
    set {unsigned long}($jem_s + 1040) = 1
    jem--mallctl $jem_s+1048 0 0 $jem_s+1040 8
  end
  set {unsigned long}($jem_s + 1024) = 8
  set {unsigned long}($jem_s + 1032) = 0
  jem--mallctl $jem_s $jem_s+1032 $jem_s+1024 0 0
  set $jem_type = 0
  set $jem_len = {unsigned long}($jem_s + 1024)
  if $jem_rc == 0 && $jem_len == 8
    jem--type-of-8
  end
  if $jem_rc == 22 && $jem_len == 1
    set $jem_rc = 0
    set $jem_type = 1
  end
  if $jem_rc == 22 && $jem_len == 4
    set $jem_rc = 0
    set $jem_type = 2
  end
end

# jem--print-value: print the value jem--get read, without a newline.
define jem--print-value
  if $jem_type == 1
    if {unsigned char}($jem_s + 1032)
      printf "true"
    else
      printf "false"
    end
  end
  if $jem_type == 2
    printf "%u", {unsigned int}($jem_s + 1032)
  end
  if $jem_type == 3
    printf "%lu", {unsigned long}($jem_s + 1032)
  end
  if $jem_type == 4
    printf "%ld", {long}($jem_s + 1032)
  end
  if $jem_type == 5
    if {unsigned long}($jem_s + 1032) == 0
      printf "(null)"
    else
      printf "%s", {char *}($jem_s + 1032)
    end
  end
end

# jem--row NAME: "NAME  value" for a table, "n/a" when the name is absent.
define jem--row
  set $jem_name = "$arg0"
  jem--get
  printf "%-24s ", $jem_name
  if $jem_rc == 0
    jem--print-value
    printf "\n"
  else
    printf "n/a\n"
  end
end

# --- commands ---------------------------------------------------------------------------

define jem-prefix
  if $argc == 0
    set $jem_prefix = ""
  else
    set $jem_prefix = "$arg0"
  end
  # Resolve at once when attached, so a wrong prefix is reported here.
  if $_thread != 0
    jem--resolve
    printf "jem: using %smallctl at %#lx, %smalloc_stats_print at %#lx\n", $jem_prefix, $jem_fn_mallctl, $jem_prefix, $jem_fn_stats
  else
    printf "jem: symbol prefix \"%s\"\n", $jem_prefix
  end
end
document jem-prefix
jem-prefix [PFX]: use PFXmallctl, PFXmalloc_stats_print (e.g. je_ for Redis built from
source or other static builds, _rjem_ for Rust's tikv-jemallocator).  Without PFX: no
prefix (Debian's libjemalloc, LD_PRELOAD).  A command failing with 'No symbol "mallctl"
in current context.' needs this.
end

define jem-info
  jem--begin 0
  printf "prefix                   \"%s\" (%smallctl at %#lx)\n", $jem_prefix, $jem_prefix, $jem_fn_mallctl
  jem--row version
  jem--row config.prof
  jem--row config.stats
  jem--row opt.prof
  jem--row prof.active
  jem--row arenas.narenas
  jem--row stats.allocated
  jem--row stats.active
  jem--row stats.resident
  jem--row stats.mapped
  jem--row stats.retained
  jem--end
end
document jem-info
jem-info: jemalloc version, build options, profiling state, arena count and heap
totals (stats.* after an epoch refresh).  Absent names show "n/a".
end

define jem-get
  if $argc != 1
    printf "usage: jem-get NAME\n"
  else
    jem--set-name $arg0
    jem--begin 0
    jem--get
    if $jem_rc == 0
      jem--print-value
      printf "\n"
    else
      jem--explain jem-get
    end
    jem--end
    if $jem_rc != 0
      jem--fail
    end
  end
end
document jem-get
jem-get NAME: read a mallctl value and print it: bool (true/false), unsigned, size_t,
uint64_t, ssize_t or string, by its size and name.  stats.* names refresh the epoch
first, so they are current.  Example: jem-get stats.allocated
end

define jem-set
  if $argc != 2
    printf "usage: jem-set NAME VALUE\n"
  else
    jem--set-name $arg0
    # 1. the type: read the current value (EPERM: a write-only name, typed by its name).
    jem--begin 0
    jem--get
    if $jem_rc == 1
      jem--type-of-8
      set $jem_rc = 0
    end
    set $jem_settype = $jem_type
    set $jem_rc_read = $jem_rc
    jem--end
    if $jem_rc_read != 0
      jem--explain jem-set
      jem--fail
    end
    if $jem_settype == 0
      printf "jem-set: %s: a %lu-byte value, which this library does not write\n", $jem_name, $jem_len
      set $jem_why = "jem-set: a value of a size this library does not write"
      jem--fail
    end
    # 2. the value, parsed with nothing mapped (a gdb error here leaves nothing behind).
    if $jem_settype == 1
      set $jem_text = "$arg1"
      if $jem_text[0] == 't' || $jem_text[0] == '1'
        set $jem_newv = 1
      else
        if $jem_text[0] == 'f' || $jem_text[0] == '0'
          set $jem_newv = 0
        else
          printf "jem-set: %s is a bool: VALUE is true or false\n", $jem_name
          set $jem_why = "jem-set: VALUE is not a bool"
          jem--fail
        end
      end
      set $jem_newlen = 1
    end
    if $jem_settype == 2
      set $jem_newv = (unsigned long)($arg1)
      set $jem_newlen = 4
    end
    if $jem_settype == 3 || $jem_settype == 4
      set $jem_newv = (long)($arg1)
      set $jem_newlen = 8
    end
    if $jem_settype == 5
      set $jem_text = "$arg1"
      if sizeof($jem_text) > 4096
        printf "jem-set: VALUE too long\n"
        set $jem_why = "jem-set: VALUE too long"
        jem--fail
      end
      set $jem_newlen = 8
    end
    # 3. write it: "NAME: OLD -> NEW" when the name is readable, "NAME: set" otherwise.
    jem--begin 0
    jem--get
    printf "%s: ", $jem_name
    if $jem_rc == 0
      jem--print-value
    end
    if $jem_settype == 5
      jem--poke $jem_s+4096 $jem_text
      set {unsigned long}($jem_s + 1040) = $jem_s + 4096
    else
      set {unsigned long}($jem_s + 1040) = $jem_newv
    end
    jem--mallctl $jem_s 0 0 $jem_s+1040 $jem_newlen
    set $jem_rc_write = $jem_rc
    if $jem_rc_write == 0
      jem--get
      if $jem_rc == 0
        printf " -> "
        jem--print-value
        printf "\n"
      else
        printf "set\n"
      end
    else
      printf "\n"
      set $jem_rc = $jem_rc_write
      jem--explain jem-set
    end
    jem--end
    if $jem_rc_write != 0
      jem--fail
    end
  end
end
document jem-set
jem-set NAME VALUE: write a mallctl value: bool (true/false), unsigned, size_t, ssize_t
or string (no spaces, no quotes), typed from the current value and the name.  Prints
"NAME: OLD -> NEW".  Examples: jem-set arenas.dirty_decay_ms 5000, jem-set prof.active true,
jem-set thread.prof.name worker
end

define jem-stats
  if $argc > 2
    printf "usage: jem-stats [FILE|-] [OPTS]\n"
  else
    set $jem_to_file = 0
    if $argc >= 1
      set $jem_text = "$arg0"
      set $jem_to_file = !($jem_text[0] == '-' && $jem_text[1] == 0)
    if $jem_to_file
      # Create FILE now: if gdb cannot, it says so while nothing is mapped.
      dump binary value $arg0 (char)0
    end
    end
    set $jem_opts = ""
    if $argc == 2
      set $jem_opts = "$arg1"
      if sizeof($jem_opts) > 4096
        printf "jem-stats: OPTS too long\n"
        set $jem_why = "jem-stats: OPTS too long"
        jem--fail
      end
    end
    # The buffer: 1 MiB + 512 KiB for each arena and for the merged and destroyed
    # summaries (a busy arena's full report is well under 100 KiB); $jem_stats_bufsize
    # can only make it larger: strcat cannot stop at the end of the buffer.  Only the
    # pages written are ever touched.
    set $jem_name = "arenas.narenas"
    jem--begin 0
    jem--get
    set $jem_bufsize = (1 << 20) + ({unsigned int}($jem_s + 1032) + 2) * (512 << 10)
    jem--end
    # (gdb evaluates both sides of &&: a void variable cannot be compared.)
    if !$_isvoid($jem_stats_bufsize)
      if $jem_stats_bufsize > $jem_bufsize
        set $jem_bufsize = (unsigned long)$jem_stats_bufsize
      end
    end
    jem--begin $jem_bufsize
    jem--poke $jem_s+4096 $jem_opts
    set {char}($jem_s + 8192) = 0
    call ((void(*)(unsigned long, unsigned long, unsigned long))$jem_fn_stats)($jem_fn_strcat, $jem_s + 8192, $jem_s + 4096)
    set $jem_len = ((unsigned long(*)(unsigned long))$jem_fn_strlen)($jem_s + 8192)
    if $jem_len == 0
      printf "jem-stats: malloc_stats_print wrote nothing\n"
    else
      if $jem_to_file
        dump binary memory $arg0 $jem_s+8192 $jem_s+8192+$jem_len
        printf "jem-stats: %lu bytes written to %s\n", $jem_len, $jem_text
      else
        printf "%s", (char *)($jem_s + 8192)
      end
    end
    jem--end
  end
end
document jem-stats
jem-stats [FILE|-] [OPTS]: the full malloc_stats_print report, brought into gdb: written
to FILE (on the debugger's side, by gdb), or printed here without FILE or with "-".  Not
the target's stderr.  OPTS are malloc_stats_print's letters: J for JSON; omit g general,
m merged, d destroyed, a per-arena, b bins, l large, x mutex, e extents, h HPA.
The report is collected in a scratch buffer mapped in the process (MAP_NORESERVE: only
the pages written are touched) of 1 MiB + 512 KiB per arena (arenas.narenas + 2); set
$jem_stats_bufsize = BYTES for a larger one.  It needs that much free address space:
with vm.overcommit_memory=2 the mmap may fail (nothing is changed then).
Examples: jem-stats /tmp/s.txt, jem-stats - J, jem-stats - bl
end

define jem-prof-on
  jem-set prof.active true
end
document jem-prof-on
jem-prof-on: start sampling allocations (prof.active = true).  Needs a jemalloc built with
--enable-prof and started with MALLOC_CONF=prof:true (prof_active:false to start idle).
end

define jem-prof-off
  jem-set prof.active false
end
document jem-prof-off
jem-prof-off: stop sampling allocations (prof.active = false).
end

define jem-prof-status
  jem--begin 0
  jem--row config.prof
  jem--row opt.prof
  jem--row prof.active
  jem--row prof.thread_active_init
  jem--row prof.lg_sample
  jem--row prof.interval
  jem--row opt.lg_prof_interval
  jem--row opt.prof_prefix
  jem--end
end
document jem-prof-status
jem-prof-status: profiling build option, start-up setting and current state: config.prof,
opt.prof, prof.active, prof.thread_active_init, prof.lg_sample (sampling period 2^N bytes),
prof.interval, opt.lg_prof_interval, opt.prof_prefix.  Absent names show "n/a".
end

define jem-prof-dump
  if $argc > 1
    printf "usage: jem-prof-dump [FILE]\n"
  else
    set $jem_name = "prof.dump"
    if $argc == 1
      set $jem_text = "$arg0"
      if sizeof($jem_text) > 4096
        printf "jem-prof-dump: FILE too long\n"
        set $jem_why = "jem-prof-dump: FILE too long"
        jem--fail
      end
    end
    jem--begin 0
    jem--poke $jem_s $jem_name
    if $argc == 1
      jem--poke $jem_s+4096 $jem_text
      set {unsigned long}($jem_s + 1040) = $jem_s + 4096
      jem--mallctl $jem_s 0 0 $jem_s+1040 8
    else
      # No file name: jemalloc picks <opt.prof_prefix>.<pid>.<seq>.m<mseq>.heap.
      jem--mallctl $jem_s 0 0 0 0
    end
    jem--end
    if $jem_rc == 0
      if $argc == 1
        printf "jem-prof-dump: heap profile written by the process to %s\n", $jem_text
      else
        printf "jem-prof-dump: heap profile written by the process as PREFIX.PID.SEQ.mSEQ.heap (PREFIX: prof.prefix, else opt.prof_prefix; relative to its working directory)\n"
      end
    else
      jem--explain jem-prof-dump
      jem--fail
    end
  end
end
document jem-prof-dump
jem-prof-dump [FILE]: the process writes a heap profile (prof.dump) to FILE -- opened by
the process, in its own file system and relative to its working directory, so prefer
an absolute path -- or, without FILE, to <opt.prof_prefix>.<pid>.<seq>.m<mseq>.heap.
Read it with: jeprof --text /path/to/binary FILE.  Needs MALLOC_CONF=prof:true at start.
end

define jem-purge
  set $jem_name = "stats.resident"
  jem--begin 0
  jem--get
  set $jem_before = {unsigned long}($jem_s + 1032)
  # MALLCTL_ARENAS_ALL = 4096
  set $jem_name = "arena.4096.purge"
  jem--poke $jem_s $jem_name
  jem--mallctl $jem_s 0 0 0 0
  set $jem_rc_purge = $jem_rc
  if $jem_rc_purge == 0
    set $jem_name = "stats.resident"
    jem--get
    printf "jem-purge: all arenas purged; stats.resident %lu -> %lu\n", $jem_before, {unsigned long}($jem_s + 1032)
  else
    jem--explain jem-purge
  end
  jem--end
  if $jem_rc_purge != 0
    jem--fail
  end
end
document jem-purge
jem-purge: purge every arena (arena.4096.purge, 4096 = MALLCTL_ARENAS_ALL): unused dirty
pages go back to the system now rather than after the decay time.  Prints stats.resident
before and after.
end
