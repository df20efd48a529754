#!/bin/bash
# 87-census-grow.sh -- what grew: census --every ranks the type that grows at
# a known rate first (its rate within 15%), the churning and the flat ones
# flat; --base names the blocks born since a snapshot exactly and the global
# container they belong to, on a live process and on a core; Redis filled
# between two snapshots: the database grew by allocator_allocated's change
# (1%); go tool pprof -diff_base shows the growing type first, and with
# --by root each type's owner as its caller; serve's
# /debug/census answers two targets while a third is hung; a hostile
# snapshot is refused with a line; no output follows another user's link.
# runner: long (mostly waiting: census --every, the fixture growing by the clock)
source tests/lib.sh
source tests/lib-serve.sh
PROF="MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0"

# The fixture: app::A grows by RATE objects a second (48 bytes each, held in
# the global std::vector g_a), app::B churns, app::C stays put.
RATE=2000
ABYTES=48

grow_fixture() {
	start_fixture "$1" "$FIXTURES/censusgrow"
	expect_eq "$(fix "${!1}" "start $RATE 2000 ${2:-500} 1000")" ok
}

# rank_row RANKING NAME: the ranking's row for NAME (its last column).
rank_row() { awk -v n="$2" '$1 ~ /^[0-9]+$/ && $NF == n { print; exit }' <<<"$1"; }

t_series_ranks_the_growing_type_first() {
	local pid a b c rate
	grow_fixture pid
	sleep 0.5
	jm "$pid" census --by type --every 1 -n 6 --format jsonl -o "$TMPD/s.jsonl" --svg "$TMPD/s.svg"
	expect_rc 0
	expect_match "$OUT" "types by growth: 6 snapshots"
	a=$(rank_row "$OUT" app::A) b=$(rank_row "$OUT" app::B) c=$(rank_row "$OUT" app::C)
	# First, growing, at the fixture's rate; exact counts, not samples.
	expect_match "$(awk '$1 == 1' <<<"$OUT")" " app::A$"
	expect_match "$a" " growing +5/5 "
	expect_match "$a" " exact "
	rate=$(awk '{ printf "%d", $5 }' <<<"$a")
	within "$rate" $((RATE * ABYTES)) $((RATE * ABYTES * 15 / 100))
	expect_match "$b" " flat "
	expect_match "$c" " flat "
	# Each census's stop, in the series (the JSON lines' hold_ns).
	expect_eq "$(jq -s 'length' "$TMPD/s.jsonl")" 6
	jq -e -s 'all(.[]; .hold_ns > 0 and .exact and .what == "type")' "$TMPD/s.jsonl" >/dev/null ||
		fail "a record without its stop: $(head -c 300 "$TMPD/s.jsonl")"
	grep -q "app::A" "$TMPD/s.svg" || fail "the chart does not draw app::A"
	# report draws and ranks the saved series again.
	jm report sites "$TMPD/s.jsonl" --svg "$TMPD/r.svg"
	expect_rc 0
	expect_eq "$(rank_row "$OUT" app::A | awk '{ print $1, $3, $5 }')" "$(awk '{ print $1, $3, $5 }' <<<"$a")"
	grep -q "live bytes of the top" "$TMPD/r.svg" || fail "report drew no chart"
	# A text series: one line per census with what its stop cost.
	jm "$pid" census --every 0.2 -n 2
	expect_rc 0
	expect_match "$OUT" "\[1\] \+0\.[0-9]+s live .* blocks; threads stopped [0-9.]+ ms, census [0-9.]+ ms"
	expect_match "$OUT" "sizes by growth: 2 snapshots"
}

t_base_names_the_born_blocks_and_their_owner() {
	local pid json n
	grow_fixture pid
	sleep 0.3
	expect_eq "$(fix "$pid" pause)" ok
	fix "$pid" "list $TMPD/base.a" >/dev/null
	jm "$pid" census --by root --save "$TMPD/base.snap" --addresses
	expect_rc 0
	[[ -s $TMPD/base.snap ]] || fail "no snapshot written"
	expect_eq "$(fix "$pid" "add 3000")" ok
	fix "$pid" "list $TMPD/now.a" >/dev/null
	jm "$pid" census --base "$TMPD/base.snap" --born "$TMPD/born" --json
	expect_rc 0
	json=$OUT
	# Per type: exactly the 3000 added A's.
	expect_eq "$(jq -c '.types[] | select(.type == "app::A") | [.blocks, .bytes]' <<<"$json")" \
		"[3000,$((3000 * ABYTES))]"
	expect_eq "$(jq -c '.born_types[] | select(.type == "app::A") | [.now_blocks, .now_bytes]' <<<"$json")" \
		"[3000,$((3000 * ABYTES))]"
	# The born blocks of type A are exactly the fixture's new ones.
	sort "$TMPD/base.a" >"$TMPD/base.s"
	sort "$TMPD/now.a" >"$TMPD/now.s"
	comm -13 "$TMPD/base.s" "$TMPD/now.s" >"$TMPD/added"
	expect_eq "$(wc -l <"$TMPD/added")" 3000
	awk '$3 == "app::A" { print $1 }' "$TMPD/born" | sort >"$TMPD/born.a"
	cmp -s "$TMPD/added" "$TMPD/born.a" ||
		fail "born A's differ from the added ones: $(diff "$TMPD/added" "$TMPD/born.a" | head -5)"
	# Whom they belong to: the global container g_a, which grew by them.
	expect_eq "$(jq -r '.roots[0].root' <<<"$json")" "g_a (censusgrow)"
	# (Its newest block may still be in a register: reached from two roots,
	# owned by neither of them alone.)
	within "$(jq '.roots[0].bytes' <<<"$json")" $((3000 * ABYTES)) $((3 * ABYTES))
	expect_match "$(jq -r '.born_owners[0].owner' <<<"$json")" "^g_a \(censusgrow\) -> 0x[0-9a-f]+ \([0-9]+\)$"
	n=$(awk -F'\t' '$1 ~ / app::A$/ && $2 ~ /^g_a \(censusgrow\)/' "$TMPD/born" | wc -l)
	within "$n" 3000 3
	# The text says the same.
	jm "$pid" census --base "$TMPD/base.snap" --top 3
	expect_rc 0
	expect_match "$OUT" "\+3000 +\+$((3000 * ABYTES)) +[0-9]+ +[0-9]+  app::A"
	expect_match "$OUT" "born since the base: [0-9]+ blocks"
	expect_match "$OUT" "  born, by owner \(whom they belong to\):"
}

# The same difference read from cores: nothing grew while paused, then 700 A's.
t_core_against_a_live_snapshot() {
	local pid json
	command -v gcore >/dev/null || skip "no gcore"
	grow_fixture pid 0
	sleep 0.3
	expect_eq "$(fix "$pid" pause)" ok
	jm "$pid" census --save "$TMPD/live.snap" --addresses --no-stats
	expect_rc 0
	gcore -o "$TMPD/c1" "$pid" >/dev/null 2>&1 || fail "gcore failed"
	jm core "$TMPD/c1.$pid" census --base "$TMPD/live.snap" --json
	[[ $ERR == *"a core of another architecture"* ]] && skip "$(uname -m) cores: ${ERR#jemattach: }"
	expect_rc 0
	expect_eq "$(jq '[.born_types[] | select(.type == "app::A")] | length' <<<"$OUT")" 0
	expect_eq "$(fix "$pid" "add 700")" ok
	gcore -o "$TMPD/c2" "$pid" >/dev/null 2>&1 || fail "gcore failed"
	jm core "$TMPD/c2.$pid" census --base "$TMPD/live.snap" --json
	expect_rc 0
	expect_eq "$(jq -c '.born_types[] | select(.type == "app::A") | .now_blocks' <<<"$OUT")" 700
	# A series needs a process that changes.
	jm core "$TMPD/c2.$pid" census --every 1
	expect_rc 2
}

redis_allocated() {
	redis-cli -p "$REDIS_PORT" info memory | tr -d '\r' | awk -F: '$1 == "allocator_allocated" { print $2 }'
}

# Until Redis is idle: its keyspace's table no longer rehashed (an
# incremental rehash moves entries between two tables while the census reads
# them, and frees the old table at its end), and INFO's allocator figures,
# refreshed by its cron every 100 ms, the same in two reads 300 ms apart.
redis_settled() {
	local a b
	for _ in $(seq 100); do
		[[ $(redis-cli -p "$REDIS_PORT" debug htstats 0) == *"rehashing target"* ]] || break
		sleep 0.1
	done
	b=$(redis_allocated)
	for _ in $(seq 60); do
		sleep 0.3
		a=$b b=$(redis_allocated)
		[[ $a == "$b" ]] && break
	done
	echo "$b"
}

t_redis_the_database_grew() {
	local pid a1 a2 json grew path
	start_redis pid
	expect_eq "$(redis-cli -p "$REDIS_PORT" debug populate 50000 key 100)" OK
	a1=$(redis_settled)
	jm --timeout 300 "$pid" census --by root --save "$TMPD/r1.snap" --addresses --no-stats
	expect_rc 0
	expect_eq "$(redis-cli -p "$REDIS_PORT" debug populate 100000 more 100)" OK
	a2=$(redis_settled)
	jm --timeout 300 "$pid" census --base "$TMPD/r1.snap" --json
	expect_rc 0
	json=$OUT
	# The owner that grew: what `server` reaches the keyspace through, its
	# db array (allocated once), by as much as jemalloc's count.
	path=$(jq -r '.holders[0].path' <<<"$json")
	expect_match "$path" "^server \(redis[-a-z]*\) -> 0x[0-9a-f]+ \([0-9]+\)$"
	grew=$(jq '.holders[0].bytes' <<<"$json")
	((a2 - a1 > 5000000)) || fail "redis grew by $((a2 - a1)) bytes only"
	within "$grew" $((a2 - a1)) $(((a2 - a1) / 100))
	expect_eq "$(jq -r '.born_owners[0].owner' <<<"$json")" "$path"
}

t_pprof_diff_base_shows_the_growing_type_first() {
	local pid out
	command -v go >/dev/null || skip "no go (golang-go) to run go tool pprof"
	grow_fixture pid
	sleep 0.3
	jm "$pid" census --by type --format pprof -o "$TMPD/a.pb.gz" --save "$TMPD/a.snap"
	expect_rc 0
	sleep 2
	jm "$pid" census --by type --format pprof -o "$TMPD/b.pb.gz"
	expect_rc 0
	out=$(HOME=$TMPD GOCACHE=$TMPD/gocache go tool pprof -top -diff_base "$TMPD/a.pb.gz" \
		"$TMPD/b.pb.gz" 2>&1) || fail "go tool pprof failed: $out"
	expect_match "$(awk '/ flat%/ { getline; print; exit }' <<<"$out")" " app::A$"
	# The difference made here is the same profile.
	jm "$pid" census --base "$TMPD/a.snap" --format pprof -o "$TMPD/d.pb.gz"
	expect_rc 0
	out=$(HOME=$TMPD GOCACHE=$TMPD/gocache go tool pprof -top "$TMPD/d.pb.gz" 2>&1) ||
		fail "go tool pprof failed: $out"
	expect_match "$(awk '/ flat%/ { getline; print; exit }' <<<"$out")" " app::A$"
	# By root: each type's owner is its caller -- the A's belong to g_a's vector.
	jm "$pid" census --by root --format pprof -o "$TMPD/o.pb.gz"
	expect_rc 0
	out=$(HOME=$TMPD GOCACHE=$TMPD/gocache go tool pprof -peek 'app::A' "$TMPD/o.pb.gz" 2>&1) ||
		fail "go tool pprof failed: $out"
	# Its callers, the most bytes first (pprof shortens names: what is in
	# parentheses goes; the newest A may be reached from several roots).
	expect_match "$(awk '/[|]   / { print; exit }' <<<"$out")" "%  *[|]   g_a +-> 0x[0-9a-f]+ *$"
}

# Two targets answered while a third is hung: a thread of it holds
# jemalloc's dump lock (writing to a FIFO nobody reads).
t_serve_census_two_answered_one_hung() {
	local a b held sp t0 t1 code m
	grow_fixture a
	grow_fixture b
	start_fixture held "$FIXTURES/jemfix" "$PROF"
	fix "$held" "alloc 100 1000" >/dev/null
	mkfifo "$TMPD/fifo"
	expect_eq "$(fix "$held" "dump $TMPD/fifo")" ok
	sleep 0.3
	start_serve sp --target "pid=$a" --target "pid=$b" --target "pid=$held" --timeout 4 \
		--census-metrics 3
	# Its probe (symbols only, no attach) done before asking, as a scrape
	# would find it: under load the probe may outlast a request's wait.
	for _ in $(seq 300); do
		curl -s "$SERVE_URL/targets" | jq -e --argjson p "$held" \
			'.targets[] | select(.pid == $p) | .jemalloc' >/dev/null 2>&1 && break
		sleep 0.1
	done
	# The hung one first: it holds one of the two census slots while it waits.
	code=$(curl -s -o "$TMPD/held.out" -w '%{http_code}' --max-time 30 "$SERVE_URL/debug/census?pid=$held")
	[[ $code == 503 ]] || fail "the hung one: $code, not 503: $(head -c 300 "$TMPD/held.out")"
	expect_match "$(cat "$TMPD/held.out")" "process $held \(jemfix\): a census: "
	for p in "$a" "$b"; do
		t0=$(ms)
		code=$(curl -s -o "$TMPD/c.$p" -w '%{http_code}' --max-time 30 "$SERVE_URL/debug/census?pid=$p")
		t1=$(ms)
		expect_eq "$code" 200
		((t1 - t0 < 4000)) || fail "census of $p took $((t1 - t0)) ms"
		expect_eq "$(jq .pid "$TMPD/c.$p")" "$p"
		jq -e '.types[] | select(.type == "app::A") | .blocks > 0' "$TMPD/c.$p" >/dev/null ||
			fail "no app::A in $(head -c 300 "$TMPD/c.$p")"
		jq -e '.stop_ns > 0' "$TMPD/c.$p" >/dev/null || fail "no stop in the answer"
	done
	# The answer is kept: the same census again, no new stop.
	curl -s -o "$TMPD/again" "$SERVE_URL/debug/census?pid=$a"
	expect_eq "$(jq .time "$TMPD/again")" "$(jq .time "$TMPD/c.$a")"
	# pprof of it.
	curl -s -o "$TMPD/a.pb.gz" "$SERVE_URL/debug/census?pid=$a&format=pprof"
	gzip -t "$TMPD/a.pb.gz" || fail "not a gzip'd profile"
	expect_eq "$(curl -s -o /dev/null -w '%{http_code}' "$SERVE_URL/debug/census?pid=$a&format=svg")" 400
	# /metrics: the hung one is down, the others' types are gauges.
	m=$(curl -s --max-time 30 "$SERVE_URL/metrics")
	expect_match "$m" "jemattach_target_up\{pid=\"$held\"[^}]*\} 0"
	expect_match "$m" "jemattach_target_up\{pid=\"$a\"[^}]*\} 1"
	expect_match "$m" "jemalloc_census_type_bytes\{pid=\"$a\"[^}]*,cxx_type=\"app::A\"\} [1-9]"
	expect_match "$m" "jemattach_census_stop_seconds\{pid=\"$b\"[^}]*\} "
	if command -v promtool >/dev/null; then
		promtool check metrics <<<"$m" >"$TMPD/lint" 2>&1 || fail "promtool: $(cat "$TMPD/lint")"
	fi
	cat "$TMPD/fifo" >/dev/null
	expect_eq "$(fix "$held" ping)" pong
}

t_hostile_snapshots_and_usage() {
	local pid
	grow_fixture pid
	jm "$pid" census --save "$TMPD/ok.snap"
	expect_rc 0
	mkfifo "$TMPD/fifo.snap"
	jm "$pid" census --base "$TMPD/fifo.snap"
	expect_rc 2
	expect_match "$ERR" "not a regular file"
	head -c 40 "$TMPD/ok.snap" >"$TMPD/cut.snap"
	jm "$pid" census --base "$TMPD/cut.snap"
	expect_rc 2
	expect_match "$ERR" "^jemattach: census: --base .*cut.snap: census snapshot: "
	printf 'JMACENS\001\037\213garbage' >"$TMPD/bad.snap"
	jm "$pid" census --base "$TMPD/bad.snap"
	expect_rc 2
	head -c 4096 /dev/urandom >"$TMPD/rand.snap"
	jm "$pid" census --base "$TMPD/rand.snap"
	expect_rc 2
	expect_match "$ERR" "not a census snapshot"
	for args in "--addresses" "--born x" "--every 1 --save x" "-n 3" "--format jsonl" \
		"-o x" "--every 0.01" "--svg x.svg" "--json --format pprof" "--every 1 --blocks x"; do
		jm "$pid" census $args
		expect_rc 2
	done
	expect_match "$(fix "$pid" count)" "^[0-9]+$"
}

# Every file census writes (--save, --born, -o, --svg) goes through the
# output rules (doc/safety.md): another user's link in a sticky directory is
# not followed, root's file behind it stays as it was.
t_outputs_never_follow_another_users_link() {
	local pid tuser=jmatest o
	id "$tuser" >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin "$tuser" 2>/dev/null
	id "$tuser" >/dev/null 2>&1 || skip "no $tuser user"
	grow_fixture pid
	jm "$pid" census --save "$TMPD/base.snap" --addresses
	expect_rc 0
	chmod 0711 "$TMPD"	# the other user reaches shared/ (nothing else is listable)
	mkdir -m 1777 "$TMPD/shared"
	echo precious >"$TMPD/victim"
	runuser -u "$tuser" -- ln -s "$TMPD/victim" "$TMPD/shared/out"
	o=$TMPD/shared/out
	for args in "--save $o" "--base $TMPD/base.snap --born $o" "--format pprof -o $o" \
		"--base $TMPD/base.snap -o $o" "--every 0.1 -n 1 --svg $o" "--every 0.1 -n 1 -o $o"; do
		jm "$pid" census $args
		expect_rc 2
		expect_match "$ERR" "symlink owned by another user"
	done
	expect_eq "$(cat "$TMPD/victim")" precious
}

run_tests
