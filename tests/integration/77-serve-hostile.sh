#!/bin/bash
# 77-serve-hostile.sh -- `jemattach serve` under attack by a local user (issue
# 41), the user an account the script makes (jmatest, as 46-hostile):
# sampler windows, memory, connections, basic auth's timing, control,
# flooding targets, a FUSE page, selectors.
# Every server is given --target selectors that match only processes this
# script started: the machine is shared.
# runner: long (mostly waiting: on rates measured over seconds, deadlines, sampler windows)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-serve.sh"
PROF="MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0"
TUSER=jmatest

# The unprivileged test account (46-hostile's: a system user, kept).
have_user() {
	id "$TUSER" >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin "$TUSER" 2>/dev/null
	id "$TUSER" >/dev/null 2>&1
}

# as_user CMD...: CMD as $TUSER, no supplementary groups (AS_USER: the same
# as a command line, for start_fixture_cmd's exec).
AS_USER=(setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups)
as_user() { "${AS_USER[@]}" "$@"; }

# user_dir: a directory of $TMPD the test user may write in.
user_dir() {
	chmod 0711 "$TMPD"
	mkdir -p "$TMPD/u"
	chmod 0777 "$TMPD/u"
	echo "$TMPD/u"
}

# rate PID SEC: servefix's malloc/free pairs per CPU second of its spinning
# thread over SEC (a probe's trap runs in that thread: it costs its CPU).
rate() { fix "$1" "run $2" | awk '$1 == "pairs" && $4 > 0 { printf "%d\n", $2 / ($4 / 1e9) }'; }

# median: of the numbers on stdin.
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# Before, a default server let any local user's loop of heap requests run
# sampler windows back to back on another user's process (its malloc rate:
# 34.8 -> 15.2 M/s).  Now a window needs --allow-sampler (or authentication):
# the loop gets 403s and the process keeps its rate.  Rates are per CPU
# second of the allocating thread, interleaved with and without the loop.
t_a_loop_of_heap_requests_leaves_another_users_rate() {
	local fix sp loop d i base=() during=() b l
	have_user || skip "no $TUSER user"
	[[ $(id -u) == 0 ]] || skip "not root"
	[[ -d /sys/bus/event_source/devices/uprobe ]] || skip "kernel without uprobes"
	d=$(user_dir)
	start_fixture fix "$FIXTURES/servefix"
	start_serve sp --target "pid=$fix"
	for i in 1 2 3 4; do
		base+=("$(rate "$fix" 1.5)")
		rm -f "$d/stop"
		start_bg loop "${AS_USER[@]}" bash -c 'while [ ! -e "$2/stop" ]; do
			curl -s -o /dev/null -w "%{http_code}\n" --max-time 60 \
				"$1/debug/pprof/heap?pid=$3&seconds=1" >>"$2/codes"; done' \
			_ "$SERVE_URL" "$d" "$fix"
		sleep 0.5
		during+=("$(rate "$fix" 1.5)")
		touch "$d/stop"
		wait "$loop" || true
	done
	b=$(printf '%s\n' "${base[@]}" | median)
	l=$(printf '%s\n' "${during[@]}" | median)
	echo "    note: pairs per CPU second: alone ${base[*]}; with the loop ${during[*]}" >&2
	(( l * 10 >= b * 9 )) || fail "with the loop $l pairs/CPU s, alone $b: more than 10% lost"
	expect_eq "$(sort -u "$d/codes" | tr '\n' ' ')" "403 "
	expect_match "$(as_user curl -s "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=1")" \
		"this server starts none for an unauthenticated client \(the operator allows them with --allow-sampler"
}

# However allowed, a process's sampler windows take at most --max-duty of its
# time: after a window of N s, 429 for N x 19 s (default 5%).  An
# authenticated client may start one without --allow-sampler.
t_sampler_windows_are_budgeted() {
	local fix sp fn before hash ra
	sampler_target fix
	start_serve sp --target "pid=$fix" --allow-sampler --max-overhead 0
	expect_eq "$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=1")" 200
	curl -s -D "$TMPD/h" --max-time 60 "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=1" >"$TMPD/b"
	expect_match "$(head -1 "$TMPD/h")" " 429 "
	expect_match "$(cat "$TMPD/b")" "its budget \(--max-duty 5%\) allows its next sampler window in [0-9]+ s"
	ra=$(tr -d '\r' <"$TMPD/h" | awk -F': ' 'tolower($1) == "retry-after" {print $2}')
	(( ra >= 15 && ra <= 600 )) || fail "Retry-After: '$ra' (a window of 1 s and more: 19 s and more)"
	kill "$sp"; wait "$sp" 2>/dev/null || true
	hash=$(htpasswd -nbBC 4 prom secret | cut -d: -f2-)
	printf 'basic_auth_users:\n  prom: %s\n' "'$hash'" >"$TMPD/web.yml"
	start_serve sp --target "pid=$fix" --web-config "$TMPD/web.yml" --max-overhead 0
	expect_eq "$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 -u prom:secret "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=1")" 200
	expect_eq "$(code_at "$fix" "$fn")" "$before"
}

# 16 concurrent heap requests for a process whose dumps are 128 MB: one dump,
# one report, one copy of each in the server (before: every request copied
# the dump, 1.97 GB).  serve's peak RSS stays under the dump plus 128 MiB.
# Then the budget: the dump held the process's thread for seconds, so the
# next requests get the answer kept (no new attach), and one that needs a
# new attach (/stats) is told when to come back (429).
t_16_heap_requests_for_a_large_profile_share_one_copy() {
	local fix sp size i peak base curls=() ra
	start_fixture fix "$FIXTURES/servefix" "$PROF"
	expect_eq "$(fix "$fix" "sites 80000 100")" ok
	jm -t 60 "$fix" prof dump -o "$TMPD/big.heap"
	expect_rc 0
	size=$(stat -c %s "$TMPD/big.heap")
	rm -f "$TMPD/big.heap"
	(( size >= 120 << 20 )) || fail "the fixture's dump is $((size >> 20)) MiB, not 128"
	# A budget of 0.5%: its effect outlasts the reports on any machine.
	start_serve sp --target "pid=$fix" --timeout 30 --min-interval 1 --max-duty 0.5
	base=$(awk '/^VmRSS/ {print $2}' "/proc/$sp/status")
	for i in $(seq 16); do
		curl -s --max-time 300 -o "$TMPD/p.$i" -w '%{http_code}' \
			"$SERVE_URL/debug/pprof/heap?pid=$fix" >"$TMPD/c.$i" &
		curls+=($!)
	done
	wait "${curls[@]}"
	peak=$(awk '/^VmHWM/ {print $2}' "/proc/$sp/status")
	echo "    note: dump $((size >> 20)) MiB; serve's RSS $((base >> 10)) MiB at start, $((peak >> 10)) MiB at its peak" >&2
	for i in $(seq 16); do
		expect_eq "$(cat "$TMPD/c.$i")" 200
		cmp -s "$TMPD/p.1" "$TMPD/p.$i" || fail "answer $i differs from the first"
	done
	gzip -t "$TMPD/p.1" || fail "not gzip"
	(( peak * 1024 < size + (128 << 20) )) || fail "serve's peak RSS $((peak >> 10)) MiB (dump $((size >> 20)) MiB)"
	expect_eq "$(curl -s "$SERVE_URL/targets" | jq ".targets[] | select(.pid == $fix) | .attaches")" 1
	# The budget: kept answers, no new attach; a new kind of answer waits.
	sleep 1.5
	expect_eq "$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$SERVE_URL/debug/pprof/heap?pid=$fix")" 200
	curl -s -D "$TMPD/h" --max-time 60 "$SERVE_URL/stats?pid=$fix" >"$TMPD/b"
	expect_match "$(head -1 "$TMPD/h")" " 429 "
	expect_match "$(cat "$TMPD/b")" "budget \(--max-duty 0\.5%\) allows its next attach in"
	ra=$(tr -d '\r' <"$TMPD/h" | awk -F': ' 'tolower($1) == "retry-after" {print $2}')
	(( ra >= 1 )) || fail "Retry-After: '$ra'"
	expect_eq "$(curl -s "$SERVE_URL/targets" | jq ".targets[] | select(.pid == $fix) | .attaches")" 1
	# Scrapes have a budget of their own: the dump does not freeze the metrics.
	expect_eq "$(metric jemattach_target_up "$fix")" 1
	expect_eq "$(curl -s "$SERVE_URL/targets" | jq ".targets[] | select(.pid == $fix) | .attaches")" 2
	expect_eq "$(fix "$fix" ping)" pong
}

# 64 half-sent requests each from 127.0.0.2 and 127.0.0.3, a header line
# every 2 s (before: they held all 128 connections, every other client
# starved).  A local client is its user, whatever address it uses: 64
# connections at most, each request in within 10 s.
t_half_sent_requests_from_loopback_aliases_starve_no_one() {
	local fix sp d slow i n m last
	have_user || skip "no $TUSER user"
	d=$(user_dir)
	start_fixture fix "$FIXTURES/jemfix"
	start_serve sp --target "pid=$fix"
	cat >"$d/slow.py" <<-'EOF'
	import socket, sys, time
	port, hold = int(sys.argv[1]), float(sys.argv[2])
	socks = []
	for src in ("127.0.0.2", "127.0.0.3"):
	    for _ in range(64):
	        s = socket.socket()
	        s.settimeout(5)
	        try:
	            s.bind((src, 0))
	            s.connect(("127.0.0.1", port))
	            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
	            socks.append((s, time.monotonic()))
	        except OSError:
	            s.close()
	print("opened", len(socks), flush=True)
	closed, end = {}, time.monotonic() + hold
	while time.monotonic() < end and len(closed) < len(socks):
	    for i, (s, t0) in enumerate(socks):
	        if i in closed:
	            continue
	        try:
	            s.sendall(b"X-Slow: 1\r\n")
	            s.setblocking(False)
	            try:
	                if s.recv(1) == b"":
	                    closed[i] = time.monotonic() - t0
	            except BlockingIOError:
	                pass
	            s.setblocking(True)
	        except OSError:
	            closed[i] = time.monotonic() - t0
	    time.sleep(2)
	print("closed", len(closed), "of", len(socks), "last after", int(max(closed.values(), default=-1)), flush=True)
	EOF
	start_bg slow "${AS_USER[@]}" /usr/bin/python3 "$d/slow.py" "$SERVE_PORT" 30 >"$d/slow.out"
	for _ in $(seq 100); do grep -q opened "$d/slow.out" && break; sleep 0.1; done
	expect_match "$(cat "$d/slow.out")" "opened [0-9]+"
	for i in 1 2 3 4 5; do
		expect_eq "$(curl -s --max-time 5 "$SERVE_URL/-/healthy")" OK
		expect_match "$(curl -s --max-time 10 "$SERVE_URL/metrics")" "jemattach_target_up\{pid=\"$fix\"[^}]*\} 1"
		sleep 2
	done
	wait "$slow" || true
	# Every one closed by the server, the last within the request deadline
	# (10 s) and the guard's half second, with room for a loaded machine.
	echo "    note: half-sent requests: $(tr '\n' ' ' <"$d/slow.out")" >&2
	read -r _ n _ m _ _ last <<<"$(grep closed "$d/slow.out")"
	[[ -n $n && $n == "$m" ]] || fail "not all closed by the server: $(cat "$d/slow.out")"
	(( last <= 20 )) || fail "the last half-sent request was closed after $last s: $(cat "$d/slow.out")"
}

# An unknown user costs as much bcrypt as a known one (before: 72 ms against
# 274 ms with a cost-12 hash, telling which names exist).
t_basic_auth_costs_the_same_for_unknown_users() {
	local fix sp hash i known=() unknown=() k u
	start_fixture fix "$FIXTURES/jemfix"
	hash=$(htpasswd -nbBC 12 prom secret | cut -d: -f2-)
	printf 'basic_auth_users:\n  prom: %s\n' "'$hash'" >"$TMPD/web.yml"
	start_serve sp --target "pid=$fix" --web-config "$TMPD/web.yml"
	t() { curl -s -o /dev/null -w '%{time_total}' -u "$1" "$SERVE_URL/-/healthy" | awk '{printf "%d\n", $1 * 1000}'; }
	for i in 1 2 3; do
		known+=("$(t prom:wrong)")
		unknown+=("$(t nobody:wrong)")
	done
	k=$(printf '%s\n' "${known[@]}" | median)
	u=$(printf '%s\n' "${unknown[@]}" | median)
	echo "    note: ms for a known user, a wrong password: ${known[*]}; an unknown user: ${unknown[*]}" >&2
	(( u * 3 >= k * 2 && k * 3 >= u * 2 )) || fail "known $k ms, unknown $u ms (medians)"
	expect_eq "$(curl -s -o /dev/null -w '%{http_code}' -u prom:secret "$SERVE_URL/-/healthy")" 200
}

# --allow-control: a local user may switch profiling in its own processes,
# not in another user's (before: in anyone's); root may.
t_control_needs_authentication_or_ownership() {
	local mine theirs sp
	have_user || skip "no $TUSER user"
	start_fixture mine "$FIXTURES/jemfix" "$PROF"
	start_fixture_cmd theirs "${AS_USER[@]}" env "$PROF" "$(user_fixture jemfix)"
	start_serve sp --target "pid=$mine" --target "pid=$theirs" --allow-control
	code() { "$@" -s -o /dev/null -w '%{http_code}' -X POST; }
	expect_eq "$(as_user curl -s -X POST "$SERVE_URL/prof?pid=$mine&action=off")" \
		"jemattach: process $mine: control needs an authenticated client (--web-config), or a local one whose user owns the process; this client is uid $(id -u "$TUSER")"
	expect_eq "$(fix "$mine" "get b prof.active")" true
	expect_eq "$(as_user curl -s -X POST "$SERVE_URL/prof?pid=$theirs&action=off")" "prof.active: true -> false"
	expect_eq "$(fix "$theirs" "get b prof.active")" false
	expect_eq "$(curl -s -X POST "$SERVE_URL/prof?pid=$mine&action=off")" "prof.active: true -> false"
	expect_eq "$(fix "$mine" "get b prof.active")" false
}

# Four processes of one user whose statistics never end, each asked for
# /stats by that user: they hold at most half the attach slots, and the other
# target is answered (before: all four slots, up 0 for 40 s).
t_flooding_targets_leave_slots_for_others() {
	local ok sp f c fl=() sel=() i out
	have_user || skip "no $TUSER user"
	[[ $(uname -m) == x86_64 ]] || skip "hostilefix patches x86-64 code"
	start_fixture ok "$FIXTURES/jemfix"
	for i in 1 2 3 4; do
		start_fixture_cmd f "${AS_USER[@]}" "$(user_fixture hostilefix)"
		expect_eq "$(fix "$f" slow-stats)" ok
		fl+=("$f")
		sel+=(--target "pid=$f")
	done
	start_serve sp --target "pid=$ok" "${sel[@]}" --min-interval 0 --timeout 10
	for f in "${fl[@]}"; do
		start_bg c "${AS_USER[@]}" curl -s -o /dev/null --max-time 60 "$SERVE_URL/stats?pid=$f"
	done
	sleep 1.5
	# A scrape waits for the flooders until its deadline (7.5 s): the other
	# target must be in by then, also under ASan on a loaded machine.
	for i in 1 2; do
		out=$(curl -s --max-time 30 -H 'X-Prometheus-Scrape-Timeout-Seconds: 8' "$SERVE_URL/metrics")
		expect_match "$out" "jemattach_target_up\{pid=\"$ok\"[^}]*\} 1"
		sleep 1
	done
	expect_eq "$(fix "$ok" ping)" pong
}

# A process whose page of AT_RANDOM (which a process's identity was read from)
# is a FUSE file whose reads are never answered.  Before, serve's scanner
# slept in the kernel holding the target list's lock: /metrics and /targets
# stopped answering, and SIGTERM was not obeyed.  Now the server reads no
# target memory (the worker that does is stuck, left behind): it answers,
# and stops within its bound.  The file system: a few lines of the raw
# /dev/fuse protocol, root's, in a mount namespace of its own (gone with its
# processes); the target is the test user's, in that namespace.
t_a_fuse_page_stalls_no_thread_of_serve() {
	local fused py sp mnt t0 rc=0 workers w i
	have_user || skip "no $TUSER user"
	[[ -c /dev/fuse ]] && grep -qw fuse /proc/filesystems || skip "no FUSE here"
	mnt="$TMPD/fuse"
	mkdir -m 0755 "$mnt"
	chmod 0711 "$TMPD"
	cat >"$TMPD/fused.py" <<-'EOF'
	# Answers what mmap needs (init, lookup, getattr, open); never a read.
	import ctypes, os, struct, sys
	mnt = sys.argv[1].encode()
	fd = os.open("/dev/fuse", os.O_RDWR)
	libc = ctypes.CDLL(None, use_errno=True)
	opts = b"fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other" % fd
	if libc.mount(b"jmafuse", mnt, b"fuse", 6, opts):
	    sys.exit("mount: " + os.strerror(ctypes.get_errno()))
	print("mounted", flush=True)
	def attr(node):
	    mode, size, nlink = (0o40755, 0, 2) if node == 1 else (0o100644, 4096, 1)
	    return struct.pack("<QQQQQQIIIIIIIIII", node, size, size // 512, 0, 0, 0, 0, 0, 0,
	                       mode, nlink, 0, 0, 0, 4096, 0)
	def reply(unique, err=0, body=b""):
	    os.write(fd, struct.pack("<IiQ", 16 + len(body), err, unique) + body)
	while True:
	    try:
	        m = os.read(fd, 1 << 20)
	    except OSError:
	        break
	    n, op, unique, node = struct.unpack_from("<IIQQ", m)
	    arg = m[40:n]
	    if op == 26:    # INIT
	        reply(unique, 0, struct.pack("<IIIIHHIIHHI7I", 7, 31, 65536, 0, 16, 12, 65536, 1,
	                                     0, 0, 0, *[0] * 7))
	    elif op == 1:   # LOOKUP
	        if arg.rstrip(b"\0") == b"f":
	            reply(unique, 0, struct.pack("<QQQQII", 2, 0, 60, 60, 0, 0) + attr(2))
	        else:
	            reply(unique, -2)
	    elif op == 3:   # GETATTR
	        reply(unique, 0, struct.pack("<QII", 60, 0, 0) + attr(node))
	    elif op in (14, 27):  # OPEN, OPENDIR
	        reply(unique, 0, struct.pack("<QII", 0, 0, 0))
	    elif op in (18, 25, 29, 34):  # RELEASE, FLUSH, RELEASEDIR, ACCESS
	        reply(unique)
	    elif op == 15:  # READ: never answered
	        print("read", flush=True)
	    elif op in (2, 36, 42):  # FORGET, INTERRUPT, BATCH_FORGET: no answer
	        pass
	    else:
	        reply(unique, -38)
	EOF
	cat >"$TMPD/target.py" <<-'EOF'
	# "map PATH": PATH mapped over the page of this process's AT_RANDOM bytes.
	import ctypes, os, sys
	libc = ctypes.CDLL(None, use_errno=True)
	libc.getauxval.restype = ctypes.c_ulong
	libc.mmap.restype = ctypes.c_void_p
	libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
	                      ctypes.c_int, ctypes.c_long]
	print("ready", flush=True)
	for line in sys.stdin:
	    if line.startswith("map "):
	        f = os.open(line[4:].strip(), os.O_RDONLY)
	        page = libc.getauxval(25) & ~4095
	        r = libc.mmap(page, 4096, 1, 0x12, f, 0)   # PROT_READ, MAP_PRIVATE | MAP_FIXED
	        print("ok" if r == page else "error", flush=True)
	EOF
	start_bg fused unshare -m --propagation private /usr/bin/python3 "$TMPD/fused.py" "$mnt" >"$TMPD/fused.out"
	for _ in $(seq 100); do grep -q mounted "$TMPD/fused.out" && break; sleep 0.1; done
	grep -q mounted "$TMPD/fused.out" || { fail "the FUSE file system did not mount"; return 1; }
	# 1000 variables: the pointers to them fill the pages below AT_RANDOM's,
	# so that no stack frame is on that page (it becomes read-only, unreadable).
	local -a pad=()
	for i in $(seq 1000); do pad+=("P$i=1"); done
	start_fixture_cmd py nsenter -t "$fused" -m "${AS_USER[@]}" env -i "${pad[@]}" \
		/usr/bin/python3 "$TMPD/target.py"
	start_serve sp --target "pid=$py" --discover-interval 0.5 --timeout 2
	expect_eq "$(fix "$py" "map $mnt/f")" ok
	# The scanner (before) or a probe meets the page -- unless the library
	# refuses such a mapping before it reads it (doc/safety-input.md).
	for _ in $(seq 100); do grep -q read "$TMPD/fused.out" && break; sleep 0.1; done
	grep -q read "$TMPD/fused.out" || echo "    note: nothing read the page" >&2
	sleep 1
	t0=$(ms)
	expect_match "$(curl -s --max-time 10 "$SERVE_URL/targets")" "\"scans\": [0-9]+"
	expect_match "$(curl -s --max-time 10 "$SERVE_URL/metrics")" "jemattach_targets "
	expect_eq "$(curl -s --max-time 10 "$SERVE_URL/-/healthy")" OK
	(( $(ms) - t0 < 15000 )) || fail "the answers took $(( $(ms) - t0 )) ms"
	# Scans go on past it (a scan waits 5 s for its probes).
	local s1 s2
	s1=$(curl -s --max-time 10 "$SERVE_URL/targets" | jq .scans)
	for _ in $(seq 30); do
		sleep 0.5
		s2=$(curl -s --max-time 10 "$SERVE_URL/targets" | jq .scans)
		(( s2 > s1 + 1 )) && break
	done
	(( s2 > s1 + 1 )) || fail "the scanner is stuck: scans $s1, then $s2"
	workers=$(cat /proc/"$sp"/task/*/children 2>/dev/null || true)
	t0=$(ms)
	kill -TERM "$sp"
	for _ in $(seq 300); do
		child_state "$sp"
		[[ $CHILD_STATE == Z || -z $CHILD_STATE ]] && break
		sleep 0.1
	done
	(( $(ms) - t0 < 20000 )) || fail "serve took $(( $(ms) - t0 )) ms to stop on SIGTERM"
	wait "$sp" || rc=$?
	expect_eq "$rc" 0
	echo "    note: serve stopped in $(( $(ms) - t0 )) ms: $(tail -1 "$TMPD/serve.sp.err")" >&2
	# The file system ends: its stuck readers (a worker left behind) end too.
	kill "$fused"
	wait "$fused" 2>/dev/null || true
	for w in $workers; do
		for _ in $(seq 100); do [[ -e /proc/$w ]] || break; sleep 0.1; done
		[[ ! -e /proc/$w ]] || fail "worker $w still there after the file system ended"
	done
}

# comm= is whatever a process calls itself: another user's process of that
# name is chosen too.  uid= and exe= are the kernel's word, and together
# they choose the service's process only; unit= chooses a systemd unit's
# processes, not those of a like-named cgroup below a delegated one.
t_selectors_by_uid_exe_and_unit() {
	local name mine theirs sp out base cg="" orig1 orig2 unit_out=""
	have_user || skip "no $TUSER user"
	name="jf$$y$RANDOM"
	name=${name:0:15}
	chmod 0711 "$TMPD"
	ln -s "$FIXTURES/jemfix" "$TMPD/$name"
	start_fixture_cmd mine "$TMPD/$name"
	start_fixture_cmd theirs "${AS_USER[@]}" "$TMPD/$name"
	start_serve sp --target "comm=^$name\$"
	out=$(curl -s "$SERVE_URL/targets" | jq -c '[.targets[].pid] | sort')
	expect_eq "$out" "$(printf '[%s]' "$(printf '%s\n' "$mine" "$theirs" | sort -n | paste -sd,)")"
	kill "$sp"; wait "$sp" 2>/dev/null || true
	start_serve sp --target "uid=0,exe=$(readlink -f "$FIXTURES/jemfix")"
	expect_eq "$(curl -s "$SERVE_URL/targets" | jq -c '[.targets[].pid]')" "[$mine]"
	expect_eq "$(curl -s -o /dev/null -w '%{http_code}' "$SERVE_URL/stats?pid=$theirs")" 403
	kill "$sp"; wait "$sp" 2>/dev/null || true
	# unit=: cgroup v2, when one can be made here (kept whole: emptied and
	# removed whatever happens, checked after).
	for base in /sys/fs/cgroup/unified /sys/fs/cgroup; do
		[[ -e $base/cgroup.controllers ]] || continue
		mkdir -p "$base/jmatest-$$.slice/$name.service" \
			"$base/jmatest-$$.slice/user@1.service/$name.service" 2>/dev/null || continue
		cg=$base/jmatest-$$.slice
		break
	done
	[[ -n $cg ]] || { echo "    note: no cgroup v2 to make: unit= not tried" >&2; return 0; }
	orig1=$(sed -n 's/^0:://p' "/proc/$mine/cgroup")
	orig2=$(sed -n 's/^0:://p' "/proc/$theirs/cgroup")
	if echo "$mine" >"$cg/$name.service/cgroup.procs" &&
	   echo "$theirs" >"$cg/user@1.service/$name.service/cgroup.procs" &&
	   start_serve sp --target "unit=$name.service"; then
		unit_out=$(curl -s "$SERVE_URL/targets" | jq -c '[.targets[] | [.pid, .unit]]')
		kill "$sp"; wait "$sp" 2>/dev/null || true
	fi
	echo "$mine" >"$base$orig1/cgroup.procs" || true
	echo "$theirs" >"$base$orig2/cgroup.procs" || true
	rmdir "$cg/user@1.service/$name.service" "$cg/user@1.service" "$cg/$name.service" "$cg" || true
	expect_eq "$unit_out" "[[$mine,\"$name.service\"]]"
}

run_tests
