#!/bin/bash
# 75-serve.sh -- `jemattach serve`: scraped by a real Prometheus and `go tool
# pprof`, one attach per interval under concurrent scrapes, a lock-holding
# target answered in time, restarts followed, TLS and basic auth, the
# allowlist, and a fuzz of malformed requests (SERVE_FUZZ, default 2000); the
# server module, the tool's own build's only.  Serve under attack by a local
# user: 77-serve-hostile.
# Every server is given --target selectors that match only processes this
# script started: the machine is shared.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-serve.sh"
PROF="MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0"

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
	expect_eq "$(printf '%s\n' "$code1" "$code2" | sort | tr '\n' ' ')" "200 503 "
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

# 50 scrapes at once: one attach, every one answered with the process up.
t_50_concurrent_scrapes_one_attach() {
	local fix sp before i down curls
	start_fixture fix "$FIXTURES/jemfix"
	expect_eq "$(fix "$fix" "alloc 10 1000")" ok
	before=$(proc_state "$fix")
	start_serve sp --target "pid=$fix" --min-interval 5
	curls=()
	for i in $(seq 50); do
		curl -s --max-time 30 -o "$TMPD/c.$i" "$SERVE_URL/metrics" &
		curls+=($!)
	done
	wait "${curls[@]}"
	down=""
	for i in $(seq 50); do
		grep -q "^jemattach_target_up{pid=\"$fix\".*} 1$" "$TMPD/c.$i" ||
			down+="scrape $i: $(grep "^jemattach_target_[a-z_]*{pid=\"$fix\"" "$TMPD/c.$i" | tr '\n' ' ')"$'\n'
	done
	[[ -z $down ]] || fail "$(head -3 <<<"$down")"
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

# The server module is the tool's part: it exports its entry point and
# nothing else, carries no copy of the library (before: 68 jma_ symbols and
# 50 others of its own exported, and the library's libraries loaded again)
# but calls the tool's, which exports exactly the jma_ functions the module
# calls; and no other command loads the server's libraries.
t_module_exports_its_entry_point_only() {
	local exe so
	exe=$(readlink -f "$JEMATTACH")
	so=$(dirname "$exe")/jemattach-serve.so
	[[ -f $so ]] || fail "no $so"
	expect_eq "$(nm -D --defined-only "$so" | awk '{ print $3 }')" jemattach_serve_module
	readelf -d "$so" | grep -E 'NEEDED.*(jemattach|libdw|libelf|libunwind|protobuf-c|jansson|libbpf)' &&
		fail "the module links the library or what the library needs"
	nm -D --undefined-only "$so" | awk '$2 ~ /^jma_/ { print $2 }' | sort >"$TMPD/calls"
	[[ -s $TMPD/calls ]] || fail "the module calls no jma_ function"
	nm -D --defined-only "$exe" | awk '$3 ~ /^jma_/ { print $3 }' | sort >"$TMPD/exports"
	expect_eq "$(comm -3 "$TMPD/calls" "$TMPD/exports" | tr -s '\t\n' '  ')" ""
	ldd "$exe" | grep -E 'microhttpd|gnutls|yaml' && fail "the tool itself loads the server's libraries"
	return 0
}

# A module of another build (here this build's with its interface's name
# changed: a stale install, a copy) is refused with both names, exit 4, and
# so is a shared object that is no server module (before: any
# jemattach-serve.so with a serve_run was run, whatever it was built with).
t_module_of_another_build_is_refused() {
	local exe d
	exe=$(readlink -f "$JEMATTACH")
	d=$TMPD/other
	mkdir "$d"
	cp "$exe" "$d/jemattach"
	python3 - "$(dirname "$exe")/jemattach-serve.so" "$d/jemattach-serve.so" \
		"$(sed -n 's/^VERSION *:= *//p' Makefile)" <<-'EOF' ||
	import re, sys
	b = open(sys.argv[1], "rb").read()
	(m,) = re.finditer(rb"(?<![0-9.])" + re.escape(sys.argv[3].encode()) + rb"/(\d+)\0", b)
	new = bytes(0x31 if c != 0x31 else 0x32 for c in m.group(1))
	open(sys.argv[2], "wb").write(b[:m.start(1)] + new + b[m.end(1):])
	EOF
		fail "no interface name in the module"
	# (A module taken would serve: bounded.)
	jm_run timeout 30 "$d/jemattach" serve --listen "127.0.0.1:$(free_port)" --target "pid=$$"
	expect_rc 4
	expect_match "$ERR" "^jemattach: serve: $d/jemattach-serve\.so is the server module of another build of jemattach \(interface [0-9.]+/[0-9]+; this jemattach's is [0-9.]+/[0-9]+\): install this build's$"
	echo 'int serve_run(void) { return 0; }' | cc -shared -fPIC -x c -o "$d/jemattach-serve.so" - ||
		fail "cc"
	jm_run timeout 30 "$d/jemattach" serve --listen "127.0.0.1:$(free_port)" --target "pid=$$"
	expect_rc 4
	expect_match "$ERR" "is not a server module of this jemattach \(no jemattach_serve_module in it"
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
	# Up at a scrape after it.
	local up=0 i=0 end=$((SECONDS + 30))
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
# (no orphan keeps probes in the target), and so does the forker the workers
# come from (src/serve/child.c), its first child; the target's code is as it was.
t_sigkill_takes_the_workers_along() {
	local fix sp fn before workers="" w
	sampler_target fix
	start_serve sp --target "pid=$fix" --max-overhead 0 --allow-sampler
	curl -s -o /dev/null --max-time 60 "$SERVE_URL/debug/pprof/heap?pid=$fix&seconds=30" &
	STARTED+=("$!")
	for _ in $(seq 200); do
		workers=$(cat /proc/"$sp"/task/*/children 2>/dev/null || true)
		(($(wc -w <<<"$workers") >= 2)) && break
		sleep 0.05
	done
	(($(wc -w <<<"$workers") >= 2)) || { fail "no worker beside the forker for the window: $workers"; return; }
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

run_tests
