#!/bin/bash
# 75-serve.sh -- `jemattach serve`: scraped by a real Prometheus and `go tool
# pprof`, one attach per interval under concurrent scrapes, a lock-holding
# target answered in time, restarts followed, TLS and basic auth, the
# allowlist, and a fuzz of malformed requests (SERVE_FUZZ, default 2000).
# Then serve under attack by a local user (issue 41), the user an account the
# script makes (jmatest, as 46-hostile): sampler windows, memory, connections,
# basic auth's timing, control, flooding targets, a FUSE page, selectors.
# Every server is given --target selectors that match only processes this
# script started: the machine is shared.
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

# code_at PID ADDR: 16 bytes of PID's code at ADDR, read through /proc (a
# breakpoint left there would show).
code_at() { dd if="/proc/$1/mem" bs=1 count=16 skip=$(($2)) iflag=skip_bytes 2>/dev/null | od -An -tx1; }

# sampler_target VAR: the leak fixture (no prof:true) when uprobes can run, its
# malloc's address in $fn and code in $before; a skip otherwise.
sampler_target() {
	[[ $(id -u) == 0 ]] || skip "not root"
	[[ -d /sys/bus/event_source/devices/uprobe ]] || skip "kernel without uprobes"
	start_fixture "$1" "$FIXTURES/leakfix"
	fn=$(fix "${!1}" fn | awk '{ print $2 }')
	before=$(code_at "${!1}" "$fn")
}

t_prometheus_scrapes_redis_and_a_fixture() {
	local fix redis sp pp pyml val theirs own n
	start_fixture fix "$FIXTURES/jemfix"
	expect_eq "$(fix "$fix" "alloc 200 50000")" ok
	start_redis redis
	expect_eq "$(redis-cli -p "$REDIS_PORT" debug populate 100000 key 100)" OK
	start_serve sp --target "pid=$fix" --target "pid=$redis"
	# Lint of what is served, in the text format promtool reads.
	curl -sS "$SERVE_URL/metrics" >"$TMPD/m.txt" 2>"$TMPD/curl.err" ||
		fail "curl: exit $?: $(cat "$TMPD/curl.err"); serve: $(cat "$TMPD/serve.sp.err")"
	expect_match "$(cat "$TMPD/m.txt")" "jemattach_target_up\{pid=\"$redis\",comm=\"redis-server\",unit=\"[^\"]*\"\} 1"
	promtool check metrics <"$TMPD/m.txt" >"$TMPD/lint" 2>&1 || fail "promtool: $(cat "$TMPD/lint")"
	expect_eq "$(cat "$TMPD/lint")" ""
	# OpenMetrics when asked for, as Prometheus asks.
	curl -sS -D "$TMPD/h" -H 'Accept: application/openmetrics-text;version=1.0.0' "$SERVE_URL/metrics" \
		>"$TMPD/om.txt" 2>"$TMPD/curl.err" || fail "curl: exit $?: $(cat "$TMPD/curl.err")"
	expect_match "$(cat "$TMPD/h")" "Content-Type: application/openmetrics-text; version=1.0.0"
	expect_eq "$(tail -1 "$TMPD/om.txt")" "# EOF"
	expect_match "$(cat "$TMPD/om.txt")" "# TYPE jemattach_attaches counter"

	pyml="$TMPD/prometheus.yml"
	cat >"$pyml" <<-EOF
	global:
	  scrape_interval: 1s
	  scrape_timeout: 1s
	scrape_configs:
	  - job_name: jemattach
	    static_configs:
	      - targets: ['127.0.0.1:$SERVE_PORT']
	EOF
	# A port taken between free_port and the bind makes Prometheus exit: another is tried.
	local prom
	for _ in 1 2 3; do
		pp=$(free_port)
		start_bg prom prometheus --config.file="$pyml" --storage.tsdb.path="$TMPD/tsdb" \
			--web.listen-address="127.0.0.1:$pp" --log.level=warn 2>"$TMPD/prom.err"
		for _ in $(seq 600); do
			curl -sf "http://127.0.0.1:$pp/-/ready" >/dev/null 2>&1 && break 2
			kill -0 "$prom" 2>/dev/null || break
			sleep 0.1
		done
		kill "$prom" 2>/dev/null
		wait "$prom" 2>/dev/null
	done
	curl -sf "http://127.0.0.1:$pp/-/ready" >/dev/null || fail "Prometheus did not start: $(tail -2 "$TMPD/prom.err")"
	local api="http://127.0.0.1:$pp/api/v1/query"
	# An answer that is not JSON (Prometheus busy) is no value, not an abort
	# of the test without a word (errexit).
	q() { curl -s --max-time 10 "$api" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty' 2>/dev/null || true; }
	# Three scrapes at least (Prometheus may take a while to start on a busy machine).
	for _ in $(seq 240); do
		n=$(q "count_over_time(jemattach_target_up{pid=\"$redis\"}[5m])" 2>/dev/null)
		[[ -n $n && $n -ge 3 ]] && break
		sleep 0.25
	done
	[[ -n $n && $n -ge 3 ]] || fail "Prometheus did not scrape 3 times (got '$n')"
	expect_eq "$(q "jemattach_target_up{pid=\"$redis\"}")" 1
	expect_eq "$(q "jemattach_target_up{pid=\"$fix\"}")" 1
	# Redis's own figure, read at the same moment: within 1%.
	val=$(q "jemalloc_allocated_bytes{pid=\"$redis\"}")
	[[ -n $val ]] || fail "Prometheus has no jemalloc_allocated_bytes for Redis"
	theirs=$(redis-cli -p "$REDIS_PORT" info memory | tr -d '\r' | awk -F: '$1 == "allocator_allocated" {print $2}')
	within "$val" "$theirs" $((theirs / 100))
	# The fixture's own mallctl.
	val=$(q "jemalloc_allocated_bytes{pid=\"$fix\"}")
	own=$(fix "$fix" "get z stats.allocated")
	within "$val" "$own" $((own / 100))
	expect_eq "$(fix "$fix" check)" ok
	expect_eq "$(redis-cli -p "$REDIS_PORT" ping)" PONG
}

t_go_tool_pprof_shows_the_top_site_and_total() {
	local fix sp total out
	start_fixture fix "$FIXTURES/jemfix" "$PROF"
	expect_eq "$(fix "$fix" "alloc 100 100000")" ok
	start_serve sp --target "pid=$fix"
	jm "$fix" prof dump -o "$TMPD/a.heap"
	expect_rc 0
	jm analyze "$TMPD/a.heap" --format json --top 1 --pid "$fix"
	expect_rc 0
	total=$(jq -r .total <<<"$OUT")
	expect_eq "$(jq -r '.sites[0].function' <<<"$OUT")" main
	mkdir -p "$TMPD/home"
	out=$(HOME="$TMPD/home" GOCACHE="$TMPD/home/gocache" GOFLAGS= timeout 120 \
		go tool pprof -top -unit=B "$SERVE_URL/debug/pprof/heap?pid=$fix" 2>&1) ||
		fail "go tool pprof: $out"
	expect_match "$out" "Type: inuse_space"
	# "Showing nodes accounting for NB, P% of TOTALB total", then the top row.
	local theirs
	theirs=$(sed -n 's/.* of \([0-9]*\)B total$/\1/p' <<<"$out")
	within "$theirs" "$total" $((total / 100))
	expect_match "$(grep -A1 'flat  flat%' <<<"$out" | tail -1)" " main$"
	# The text form and its headers.
	curl -s -D "$TMPD/h" "$SERVE_URL/debug/pprof/heap?pid=$fix&debug=1" >"$TMPD/t"
	expect_match "$(head -2 "$TMPD/t" | tail -1)" " main$"
	curl -s -D "$TMPD/h" -o "$TMPD/p.gz" "$SERVE_URL/debug/pprof/heap?pid=$fix"
	expect_match "$(cat "$TMPD/h")" 'Content-Disposition: attachment; filename="heap"'
	gzip -t "$TMPD/p.gz" || fail "not gzip"
	expect_eq "$(fix "$fix" check)" ok
}

# An empty heap answer says why, in the profile's pprof comment (`go tool
# pprof -comments`) and the X-Jemattach-Profile header: a prof:true process
# whose prof.active is false has sampled nothing (before: a profile of 0 B,
# no word why).
t_pprof_empty_says_why() {
	local fix sp out
	start_fixture fix "$FIXTURES/jemfix" MALLOC_CONF=prof:true,prof_active:false
	start_serve sp --target "pid=$fix"
	curl -s -D "$TMPD/h" -o "$TMPD/e.gz" "$SERVE_URL/debug/pprof/heap?pid=$fix"
	expect_match "$(cat "$TMPD/h")" "X-Jemattach-Profile: the profile is empty: prof.active is false"
	mkdir -p "$TMPD/home"
	out=$(HOME="$TMPD/home" GOCACHE="$TMPD/home/gocache" GOFLAGS= timeout 120 \
		go tool pprof -comments "$TMPD/e.gz" 2>&1) || fail "go tool pprof: $out"
	expect_match "$out" "the profile is empty: prof.active is false: jemalloc samples nothing"
}

# Without opt.prof, the sampler's window (uprobes) is the profile: leakfix
# leaks 2.5 MiB/s in leak_site and frees what churn_site allocates.
t_pprof_without_prof_samples_by_uprobes() {
	local fix sp out fn before code1 code2 r1 r2
	sampler_target fix
	# Its CPU is mostly allocation: no overhead limit, or the window ends at once;
	# windows allowed, and no budget between them (t_sampler_windows_are_budgeted).
	start_serve sp --target "pid=$fix" --max-overhead 0 --allow-sampler --max-duty 100
	mkdir -p "$TMPD/home"
	out=$(HOME="$TMPD/home" GOCACHE="$TMPD/home/gocache" GOFLAGS= timeout 120 \
		go tool pprof -top -unit=B "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=5" 2>&1) ||
		fail "go tool pprof: $out"
	expect_match "$out" "Type: inuse_space"
	expect_match "$(grep -A1 'flat  flat%' <<<"$out" | tail -1)" "^ *[1-9][0-9]*B .* leak_site$"
	# How it was made, in a header; the text form.
	curl -s -D "$TMPD/h" --max-time 60 "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=2&debug=1" >"$TMPD/t"
	expect_match "$(cat "$TMPD/h")" "X-Jemattach-Profile: sampled by uprobes \(the process runs without heap profiling\): 2\.[0-9] s of a 2 s window, [1-9][0-9]* samples"
	expect_match "$(head -2 "$TMPD/t" | tail -1)" " leak_site$"
	# One window per target at a time: of two at once, one is refused (503).
	curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=3" >"$TMPD/c1" &
	r1=$!
	curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$SERVE_URL/debug/pprof/allocs?pid=$fix&seconds=3" >"$TMPD/c2" &
	r2=$!
	wait "$r1" "$r2"
	code1=$(cat "$TMPD/c1") code2=$(cat "$TMPD/c2")
	if [[ $(nm -D "$JEMATTACH" 2>/dev/null) == *__asan_init* ]]; then
		# Under ASan a worker forked while the other request's thread
		# allocates can wait forever on libasan's lock (src/serve/child.c):
		# the refusal is checked, the served window may fail.
		expect_match "$code1 $code2" "503"
		[[ "$code1 $code2" == *200* ]] || echo "note: under ASan the window gave $code1 $code2" >&2
	else
		expect_eq "$(printf '%s\n' "$code1" "$code2" | sort | tr '\n' ' ')" "200 503 "
	fi
	# The window is bounded.
	expect_eq "$(curl -s -o /dev/null -w '%{http_code}' "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=121")" 400
	# The probes are gone: malloc's code as it was; the process runs on.
	expect_eq "$(code_at "$fix" "$fn")" "$before"
	expect_match "$(fix "$fix" rate)" "^leak [0-9]+ churn"
}

# Without opt.prof nor the sampler's privileges: a 409 naming both reasons.
t_pprof_without_prof_nor_sampler_says_why() {
	local fix sp
	command -v setpriv >/dev/null || skip "no setpriv"
	start_fixture fix "$FIXTURES/jemfix"
	SERVE_WRAP=(setpriv --bounding-set=-bpf,-perfmon,-sys_admin)
	start_serve sp --target "pid=$fix" --allow-sampler
	SERVE_WRAP=()
	curl -s -D "$TMPD/h" --max-time 60 "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=1" >"$TMPD/b"
	expect_match "$(head -1 "$TMPD/h")" " 409 "
	expect_match "$(cat "$TMPD/b")" "no heap profile \(opt\.prof is false\), and the sampler cannot run: .*CAP_BPF"
	expect_eq "$(fix "$fix" ping)" pong
}

t_allocs_needs_prof_accum() {
	local a b sp
	start_fixture a "$FIXTURES/jemfix" "MALLOC_CONF=prof:true,prof_accum:true,lg_prof_sample:0"
	start_fixture b "$FIXTURES/jemfix" "$PROF"
	expect_eq "$(fix "$a" "alloc 20 100000")" ok
	start_serve sp --target "pid=$a" --target "pid=$b"
	expect_match "$(curl -s "$SERVE_URL/debug/pprof/allocs?pid=$a&debug=1" | head -2)" "Total: [0-9.]+ MB.* main"
	curl -s -D "$TMPD/h" "$SERVE_URL/debug/pprof/allocs?pid=$b" >"$TMPD/b"
	expect_match "$(head -1 "$TMPD/h")" " 409 "
	expect_match "$(cat "$TMPD/b")" "prof_accum"
}

t_arenas_per_arena_series() {
	local fix sp out
	start_fixture fix "$FIXTURES/jemfix"
	expect_eq "$(fix "$fix" "arenas 3")" ok
	start_serve sp --target "pid=$fix" --arenas
	out=$(curl -s "$SERVE_URL/metrics")
	# Arena 0 and the 3 created (and the automatic ones jemalloc made).
	(( $(grep -c "^jemalloc_arena_active_bytes{pid=\"$fix\".*arena=" <<<"$out") >= 4 )) ||
		fail "$(grep '^jemalloc_arena_active_bytes' <<<"$out")"
	promtool check metrics <<<"$out" >"$TMPD/lint" 2>&1 || fail "promtool: $(cat "$TMPD/lint")"
}

t_pprof_seconds_is_the_change() {
	local fix sp out freer
	start_fixture fix "$FIXTURES/jemfix" "$PROF"
	expect_eq "$(fix "$fix" "alloc 50 100000")" ok
	start_serve sp --target "pid=$fix" --min-interval 0
	# Freed during the window: the change is negative, about -5 MB.
	( sleep 1; fix "$fix" free >/dev/null ) &
	freer=$!
	out=$(curl -s --max-time 60 "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=2&debug=1")
	wait "$freer"
	expect_match "$(head -1 <<<"$out")" "^Total: -[45]\.[0-9] MB"
}

t_50_concurrent_scrapes_one_attach() {
	local fix sp before i curls=()
	start_fixture fix "$FIXTURES/jemfix"
	expect_eq "$(fix "$fix" "alloc 10 1000")" ok
	before=$(proc_state "$fix")
	start_serve sp --target "pid=$fix" --min-interval 5
	for i in $(seq 50); do
		curl -s --max-time 30 -o "$TMPD/c.$i" "$SERVE_URL/metrics" &
		curls+=($!)
	done
	wait "${curls[@]}"
	for i in $(seq 50); do
		grep -q "^jemattach_target_up{pid=\"$fix\".*} 1$" "$TMPD/c.$i" || fail "scrape $i: $(head -c 300 "$TMPD/c.$i")"
	done
	expect_eq "$(metric jemattach_attaches_total "$fix")" 1
	expect_eq "$(fix "$fix" check)" ok
	expect_eq "$(fix "$fix" ping)" pong
	expect_state "$fix" "$before"
}

t_lock_holder_is_down_in_time_and_others_served() {
	local held ok sp t0 t1 out
	start_fixture held "$FIXTURES/jemfix" "$PROF"
	start_fixture ok "$FIXTURES/jemfix"
	mkfifo "$TMPD/fifo"
	# A fixture thread holds jemalloc's dump lock until the FIFO is read.
	expect_eq "$(fix "$held" "dump $TMPD/fifo")" ok
	sleep 0.3
	start_serve sp --target "pid=$held" --target "pid=$ok" --timeout 4 --min-interval 0
	t0=$(ms)
	out=$(curl -s --max-time 30 "$SERVE_URL/metrics")
	t1=$(ms)
	(( t1 - t0 < 6000 )) || fail "the scrape took $((t1 - t0)) ms (timeout 4 s)"
	expect_match "$out" "jemattach_target_up\{pid=\"$held\"[^}]*\} 0"
	expect_match "$out" "jemattach_target_down_reason\{pid=\"$held\"[^}]*,reason=\"(unsafe|timeout)\"\} 1"
	expect_match "$out" "jemattach_target_up\{pid=\"$ok\"[^}]*\} 1"
	expect_match "$out" "jemalloc_allocated_bytes\{pid=\"$ok\""
	expect_match "$(curl -s "$SERVE_URL/targets")" "may hold a lock|no answer within"
	# Released, it answers again.
	cat "$TMPD/fifo" >/dev/null
	for _ in $(seq 100); do
		[[ $(metric jemattach_target_up "$held") == 1 ]] && break
		sleep 0.2
	done
	expect_eq "$(metric jemattach_target_up "$held")" 1
	expect_eq "$(fix "$held" ping)" pong
}

t_restarted_target_followed_by_comm() {
	local name a b sp
	# A name of our own: comm selects only what this test started.
	name="jf$$x$RANDOM"
	name=${name:0:15}
	ln -s "$FIXTURES/jemfix" "$TMPD/$name"
	start_fixture_cmd a "$TMPD/$name"
	start_serve sp --target "comm=^$name\$" --discover-interval 0.5 --min-interval 0
	expect_eq "$(metric jemattach_target_up "$a")" 1
	fix "$a" exit >/dev/null 2>&1 || true
	for _ in $(seq 100); do kill -0 "$a" 2>/dev/null || break; sleep 0.05; done
	start_fixture_cmd b "$TMPD/$name"
	for _ in $(seq 100); do
		[[ $(metric jemattach_target_up "$b") == 1 ]] && break
		sleep 0.2
	done
	expect_eq "$(metric jemattach_target_up "$b")" 1
	expect_eq "$(metric jemattach_target_up "$a")" ""
	expect_match "$(curl -s "$SERVE_URL/targets")" "\"pid\": $b, \"comm\": \"$name\""
}

t_non_loopback_needs_tls_or_insecure() {
	jm serve --listen "0.0.0.0:$(free_port)"
	expect_rc 2
	expect_match "$ERR" "not a loopback address: give TLS in --web-config"
	jm serve --listen "[::]:$(free_port)"
	expect_rc 2
	jm serve --listen "nohost:1"
	expect_rc 2
	jm serve --target "bogus=1"
	expect_rc 2
	jm serve --target "comm=("
	expect_rc 2
}

t_default_is_loopback() {
	local sp
	serve_bg sp --target "pid=$$"
	serve_wait "$sp" "$TMPD/serve.sp.err" || true
	grep -q "cannot listen" "$TMPD/serve.sp.err" && skip "port 9711 is in use here"
	expect_match "$(cat "$TMPD/serve.sp.err")" "serving http://127\.0\.0\.1:9711/"
}

t_tls_and_basic_auth() {
	local fix sp sp2 hash port
	start_fixture fix "$FIXTURES/jemfix"
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=127.0.0.1" \
		-addext "subjectAltName=IP:127.0.0.1" -keyout "$TMPD/key.pem" -out "$TMPD/cert.pem" \
		>/dev/null 2>&1 || fail "openssl could not make a certificate"
	hash=$(htpasswd -nbBC 10 prom 's3cret pass' | cut -d: -f2-)
	cat >"$TMPD/web.yml" <<-EOF
	tls_server_config:
	  cert_file: cert.pem
	  key_file: key.pem
	basic_auth_users:
	  prom: '$hash'
	EOF
	start_serve sp --target "pid=$fix" --web-config "$TMPD/web.yml"
	local url="https://127.0.0.1:$SERVE_PORT"
	expect_eq "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMPD/cert.pem" -u 'prom:s3cret pass' "$url/metrics")" 200
	expect_match "$(curl -s --cacert "$TMPD/cert.pem" -u 'prom:s3cret pass' "$url/metrics")" "jemattach_target_up\{pid=\"$fix\"[^}]*\} 1"
	expect_eq "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMPD/cert.pem" -u 'prom:wrong' "$url/metrics")" 401
	expect_eq "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMPD/cert.pem" -u 'nobody:s3cret pass' "$url/metrics")" 401
	expect_eq "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMPD/cert.pem" "$url/metrics")" 401
	curl -s -D "$TMPD/h" -o /dev/null --cacert "$TMPD/cert.pem" "$url/metrics"
	expect_match "$(cat "$TMPD/h")" "WWW-Authenticate: Basic realm=\"jemattach\""
	# Plain HTTP to the TLS port gets no answer.
	expect_eq "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$SERVE_PORT/metrics")" 000
	# With TLS, a non-loopback address is allowed.
	# A port taken between free_port and the bind: another is tried.
	for _ in 1 2 3; do
		port=$(free_port)
		serve_bg sp2 --listen "0.0.0.0:$port" --target "pid=$fix" --web-config "$TMPD/web.yml"
		serve_wait "$sp2" "$TMPD/serve.sp2.err" && break
		grep -q "cannot listen" "$TMPD/serve.sp2.err" || break
	done
	expect_match "$(cat "$TMPD/serve.sp2.err")" "serving https://0\.0\.0\.0:$port/"
	# A config asking for what serve does not offer is refused, not ignored.
	printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n  client_auth_type: RequireAndVerifyClientCert\n' >"$TMPD/bad.yml"
	jm serve --web-config "$TMPD/bad.yml"
	expect_rc 2
	expect_match "$ERR" "client_auth_type"
	printf 'basic_auth_users:\n  u: plaintext\n' >"$TMPD/bad2.yml"
	jm serve --web-config "$TMPD/bad2.yml"
	expect_rc 2
	expect_match "$ERR" "not bcrypt"
}

t_allowlist_and_parameters() {
	local fix other sp
	start_fixture fix "$FIXTURES/jemfix"
	start_fixture other "$FIXTURES/jemfix"
	start_serve sp --target "pid=$fix"
	code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
	expect_eq "$(code "$SERVE_URL/stats?pid=$fix")" 200
	expect_match "$(curl -s "$SERVE_URL/stats?pid=$fix" | jq -r .jemalloc.version)" "^[0-9]+\."
	expect_eq "$(code "$SERVE_URL/stats?pid=$other")" 403
	expect_eq "$(code "$SERVE_URL/stats?pid=$sp")" 403
	expect_eq "$(code "$SERVE_URL/stats?pid=1")" 403
	expect_eq "$(code "$SERVE_URL/stats")" 400
	expect_eq "$(code "$SERVE_URL/stats?pid=-1")" 400
	expect_eq "$(code "$SERVE_URL/stats?pid=$fix&pid=$fix")" 400
	expect_eq "$(code "$SERVE_URL/stats?pid=${fix}x")" 400
	# An empty key once made the check of keys loop forever (found by the fuzz).
	expect_eq "$(code --max-time 5 "$SERVE_URL/stats?=1")" 400
	expect_eq "$(code --max-time 5 "$SERVE_URL/stats?pid=$fix&")" 200
	expect_eq "$(code "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=0")" 400
	expect_eq "$(code "$SERVE_URL/debug/pprof/heap?pid=$fix&debug=2")" 400
	expect_eq "$(code "$SERVE_URL/nope")" 404
	expect_eq "$(code -X POST "$SERVE_URL/metrics")" 405
	expect_eq "$(code -X POST "$SERVE_URL/prof?pid=$fix&action=off")" 403
	# A body beyond 4 KiB is not read on: the connection is closed.
	head -c 100000 /dev/zero >"$TMPD/body"
	expect_eq "$(code --max-time 10 -X POST --data-binary @"$TMPD/body" "$SERVE_URL/prof?pid=$fix&action=off")" 000
	expect_eq "$(code "$SERVE_URL/-/healthy")" 200
	expect_match "$(curl -s "$SERVE_URL/")" "/stats\?pid=$fix"
	expect_match "$(curl -s "$SERVE_URL/targets" | jq -r '.targets[0].module')" "jemalloc"
	# Never touched: the other process is not traced and was never attached.
	expect_eq "$(fix "$other" ping)" pong
}

t_control_only_by_post_when_allowed() {
	local fix sp
	start_fixture fix "$FIXTURES/jemfix" "$PROF"
	start_serve sp --target "pid=$fix" --allow-control --min-interval 0
	code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
	expect_eq "$(metric jemalloc_prof_active "$fix")" 1
	expect_eq "$(code "$SERVE_URL/prof?pid=$fix&action=off")" 405
	expect_eq "$(code -X POST "$SERVE_URL/prof?pid=$fix&action=maybe")" 400
	expect_eq "$(curl -s -X POST "$SERVE_URL/prof?pid=$fix&action=off")" "prof.active: true -> false"
	expect_eq "$(fix "$fix" "get b prof.active")" false
	# What changes is read at every scrape (the version and options once).
	expect_eq "$(metric jemalloc_prof_active "$fix")" 0
	expect_eq "$(metric jemalloc_prof_enabled "$fix")" 1
	expect_eq "$(curl -s -X POST "$SERVE_URL/prof?pid=$fix&action=on")" "prof.active: false -> true"
	expect_eq "$(fix "$fix" "get b prof.active")" true
	expect_eq "$(metric jemalloc_prof_active "$fix")" 1
	expect_eq "$(curl -s -X POST "$SERVE_URL/prof?pid=$fix&action=reset")" "prof.reset: samples cleared"
}

t_fuzz_leaves_server_and_target_untouched() {
	local fix sp before fds n=${SERVE_FUZZ:-2000}
	start_fixture fix "$FIXTURES/jemfix"
	expect_eq "$(fix "$fix" "alloc 20 4096")" ok
	start_serve sp --target "pid=$fix" --min-interval 0.5
	curl -s "$SERVE_URL/metrics" >/dev/null
	before=$(proc_state "$fix")
	fds=$(ls "/proc/$sp/fd" | wc -l)
	python3 - "$SERVE_PORT" "$n" "$fix" <<-'EOF' || fail "fuzzer failed"
	import random, socket, sys, threading
	port, n, pid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
	rnd = random.Random(75)
	paths = ["/", "/metrics", "/targets", "/stats", "/debug/pprof/heap", "/debug/pprof/allocs",
	         "/prof", "/-/healthy", "/%00", "/..%2f..%2fetc/passwd", "//metrics", "/metrics/"]
	keys = ["pid", "debug", "seconds", "gc", "action", "x", "", "pid[]", "%ff"]
	vals = [pid, "1", "0", "-1", "99999999999", "abc", "", "%", "%zz", "1e3", " 1", pid + "\x00",
	        "A" * 200]
	methods = ["GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE", "CONNECT", "GE T", "X" * 50]
	def one(r):
	    k = r.randrange(9)
	    if k == 0:
	        return bytes(r.randrange(256) for _ in range(r.randrange(1, 600)))
	    if k == 1:
	        return b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * r.randrange(20000, 80000) + b"\r\n\r\n"
	    if k == 2:
	        return (r.choice(methods) + " " + r.choice(paths) + " HTTP/1.1\r\nHost: x\r\n"
	                "Content-Length: " + str(r.randrange(0, 10**9)) + "\r\n\r\n" + "b" * r.randrange(0, 9000)).encode()
	    if k == 3:
	        return b"GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nfoo\r\n"
	    if k == 4:
	        return ("GET " + r.choice(paths) + "?" + "&".join(r.choice(keys) + "=" + r.choice(vals)
	                for _ in range(r.randrange(0, 12))) + " HTTP/1.1\r\nHost: x\r\n\r\n").encode("latin-1")
	    if k == 5:
	        return b"GET /metrics HTTP/1.1\r\n" + b"H: v\r\n" * r.randrange(100, 3000) + b"\r\n"
	    if k == 6:
	        return b"GET /metrics HTTP/9.9\r\n\r\n"
	    if k == 7:
	        return ("GET /stats?pid=" + pid + " HTTP/1.1\r\nHost: x\r\nAuthorization: Basic " +
	                "".join(r.choice("AZaz09+/=!") for _ in range(r.randrange(0, 300))) + "\r\n\r\n").encode()
	    return b"GET /" + bytes(r.randrange(33, 256) for _ in range(r.randrange(1, 3000))) + b" HTTP/1.0\r\n\r\n"
	def worker(seed, count):
	    r = random.Random(seed)
	    for _ in range(count):
	        s = socket.socket()
	        s.settimeout(2)
	        try:
	            s.connect(("127.0.0.1", port))
	            s.sendall(one(r))
	            if r.random() < 0.8:
	                s.shutdown(socket.SHUT_WR)
	                try:
	                    while s.recv(65536):
	                        pass
	                except OSError:
	                    pass
	        except OSError:
	            pass
	        finally:
	            s.close()
	threads = [threading.Thread(target=worker, args=(i, n // 8 + (i < n % 8))) for i in range(8)]
	for t in threads: t.start()
	for t in threads: t.join()
	EOF
	kill -0 "$sp" || fail "the server died"
	expect_eq "$(curl -s --max-time 10 "$SERVE_URL/-/healthy")" OK
	# Up at a scrape after it.  Under ASan a worker forked during the fuzz can
	# wait forever for a lock of ASan's allocator (src/serve/child.c) until
	# its hard limit (4 x 5 s + 30 s) kills it: wait past that there.
	local up=0 i=0 end=$((SECONDS + 30))
	[[ $(nm -D "$JEMATTACH" 2>/dev/null) == *__asan_init* ]] && end=$((SECONDS + 70))
	while ((SECONDS < end)); do
		i=$((i + 1))
		curl -s --max-time 30 "$SERVE_URL/metrics" >"$TMPD/after"
		up=$(awk -v p="pid=\"$fix\"" '$1 ~ /^jemattach_target_up[{]/ && index($1, p) {print $2; exit}' "$TMPD/after")
		[[ $up == 1 ]] && break
		echo "    note: scrape $i after the fuzz: $(grep -E "^jemattach_target_down_reason[{]pid=\"$fix\"" "$TMPD/after")" >&2
		sleep 1
	done
	expect_eq "$up" 1
	expect_eq "$(fix "$fix" check)" ok
	expect_eq "$(fix "$fix" ping)" pong
	expect_state "$fix" "$before"
	# No descriptor leaked by the server (a connection or two may still close,
	# and a sampler window the fuzz asked for runs up to 30 s).
	for _ in $(seq 40); do
		(( $(ls "/proc/$sp/fd" | wc -l) <= fds + 2 )) && break
		sleep 1
	done
	(( $(ls "/proc/$sp/fd" | wc -l) <= fds + 2 )) || fail "fds $fds -> $(ls -l "/proc/$sp/fd")"
	# Refused requests are counted.
	local rejected
	rejected=$(curl -s "$SERVE_URL/metrics" | awk '$1 == "jemattach_http_rejected_total" {print $2}')
	(( rejected > 0 )) || fail "no rejected request counted ($rejected)"
}

t_sigterm_stops_cleanly() {
	local fix sp rc=0
	start_fixture fix "$FIXTURES/jemfix"
	start_serve sp --target "pid=$fix"
	curl -s "$SERVE_URL/metrics" >/dev/null
	kill -TERM "$sp"
	wait "$sp" || rc=$?
	expect_eq "$rc" 0
	expect_match "$(cat "$TMPD/serve.sp.err")" "stopping \(signal 15\)"
	expect_eq "$(awk '/TracerPid/ {print $2}' "/proc/$fix/status")" 0
	expect_eq "$(fix "$fix" ping)" pong
}

# serve killed outright (SIGKILL) during a sampler window: its worker goes with it
# (no orphan keeps probes in the target), and the target's code is as it was.
t_sigkill_takes_the_workers_along() {
	local fix sp fn before workers="" w
	sampler_target fix
	start_serve sp --target "pid=$fix" --max-overhead 0 --allow-sampler
	curl -s -o /dev/null --max-time 60 "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=30" &
	STARTED+=("$!")
	for _ in $(seq 200); do
		workers=$(cat /proc/"$sp"/task/*/children 2>/dev/null || true)
		[[ -n ${workers// /} ]] && break
		sleep 0.05
	done
	[[ -n ${workers// /} ]] || { fail "no worker started for the window"; return; }
	sleep 1
	kill -KILL "$sp"
	wait "$sp" 2>/dev/null || true
	for w in $workers; do
		for _ in $(seq 100); do
			[[ -e /proc/$w ]] && [[ $(awk '{print $3}' "/proc/$w/stat" 2>/dev/null) != Z ]] || break
			sleep 0.1
		done
		[[ ! -e /proc/$w || $(awk '{print $3}' "/proc/$w/stat" 2>/dev/null) == Z ]] ||
			fail "worker $w still running 10 s after serve's SIGKILL"
	done
	for _ in $(seq 100); do
		[[ $(code_at "$fix" "$fn") == "$before" ]] && break
		sleep 0.1
	done
	expect_eq "$(code_at "$fix" "$fn")" "$before"
	expect_match "$(fix "$fix" rate)" "^leak [0-9]+ churn"
}

t_systemd_unit_verifies() {
	command -v systemd-analyze >/dev/null || skip "no systemd-analyze"
	local unit=dist/jemattach-serve.service
	[[ -f $unit ]] || unit="$(dirname "$0")/../../dist/jemattach-serve.service"
	# The tool under test in place of the installed one; man pages may not be installed.
	sed "s|/usr/bin/jemattach|$JEMATTACH|" "$unit" >"$TMPD/jemattach-serve.service"
	jm_run systemd-analyze verify --man=no "$TMPD/jemattach-serve.service"
	expect_rc 0
	expect_eq "$ERR$OUT" ""
	# The command line it runs is one serve accepts.
	expect_match "$(grep '^ExecStart=' "$unit")" "serve --listen 127\.0\.0\.1:"
}

# doc/serve.md's configurations: Prometheus's passes promtool; Parca's and the
# DaemonSet parse, and the DaemonSet asks for the unit's capabilities and no more.
t_doc_configs_are_valid() {
	local top
	top=$(cd "$(dirname "$0")/../.." && pwd)
	python3 - "$top/doc/serve.md" "$top/dist/jemattach-serve.service" "$TMPD" <<-'EOF' ||
	import re, sys, textwrap, yaml
	doc, unit, out = sys.argv[1:]
	blocks = [yaml.safe_load(textwrap.dedent(b)) for b in
	          re.findall(r"^ *```yaml\n(.*?)^ *```", open(doc).read(), re.S | re.M)]
	found = {}
	for b in blocks:
	    if b.get("kind") == "DaemonSet":
	        found["daemonset"] = b
	    elif "scrape_configs" in b:
	        found["parca" if "profiling_config" in b["scrape_configs"][0] else "prometheus"] = b
	    elif "tls_server_config" in b:
	        found["web"] = b
	assert sorted(found) == ["daemonset", "parca", "prometheus", "web"], sorted(found)
	pod = found["daemonset"]["spec"]["template"]
	assert pod["spec"]["hostPID"] is True
	c = pod["spec"]["containers"][0]
	assert pod["metadata"]["annotations"]["container.apparmor.security.beta.kubernetes.io/" + c["name"]] == "unconfined"
	assert c["args"][0] == "serve" and "--web-config" in c["args"], c["args"]
	caps = c["securityContext"]["capabilities"]
	bound = re.search(r"^CapabilityBoundingSet=(.*)$", open(unit).read(), re.M).group(1).split()
	assert caps["drop"] == ["ALL"] and sorted("CAP_" + x for x in caps["add"]) == sorted(bound), (caps, bound)
	sc = found["parca"]["scrape_configs"][0]
	assert sc["profiling_config"]["pprof_config"]["memory"]["path"] == "/debug/pprof/heap"
	assert "pid" in sc["params"]
	assert set(found["web"]) <= {"tls_server_config", "basic_auth_users"}
	yaml.safe_dump(found["prometheus"], open(out + "/prometheus.yml", "w"))
	EOF
		fail "doc/serve.md's configurations"
	jm_run promtool check config "$TMPD/prometheus.yml"
	expect_rc 0
	expect_match "$OUT" "SUCCESS"
}

# --- serve under attack by a local user (issue 41) --------------------------

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
	start_fixture_cmd theirs "${AS_USER[@]}" env "$PROF" "$FIXTURES/jemfix"
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
		start_fixture_cmd f "${AS_USER[@]}" "$FIXTURES/hostilefix"
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
