#!/bin/bash
# 35-stats.sh -- malloc_stats_print captured through the emulated callback.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

# Top-level structure of a text report: the first word of every line that is
# not indented (section titles, mutex names), without the values after it.
sections() { awk '/^[^ ]/ {w = $1; sub(/[:(].*/, "", w); print w}' "$1" | uniq; }
# Every key path of a JSON report.
json_keys() { jq -r '[paths | map(tostring) | join(".")] | .[]' "$1" | sort; }

t_stats_text_is_the_document_the_target_prints() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	fix "$pid" "alloc 500 3000" >/dev/null
	jm "$pid" stats -o "$TMPD/ours.txt"
	expect_rc 0
	expect_eq "$(fix "$pid" "stats $TMPD/theirs.txt")" ok
	expect_eq "$(sections "$TMPD/ours.txt")" "$(sections "$TMPD/theirs.txt")"
	expect_match "$(head -1 "$TMPD/ours.txt")" "___ Begin jemalloc statistics ___"
	expect_match "$(tail -1 "$TMPD/ours.txt")" "--- End jemalloc statistics ---"
	# Nothing went to the target's own stderr or files.
	expect_eq "$(ls -A "$(fix_cwd "$pid")")" ""
}

t_stats_json_has_the_same_keys_as_in_process() {
	local pid page
	start_fixture pid "$FIXTURES/jemfix"
	jm "$pid" stats --json -o "$TMPD/ours.json"
	expect_rc 0
	expect_eq "$(fix "$pid" "stats $TMPD/theirs.json J")" ok
	expect_eq "$(json_keys "$TMPD/ours.json")" "$(json_keys "$TMPD/theirs.json")"
	# The fixture's own print allocates a stdio buffer first: a few KiB apart,
	# up to a page where jemalloc's page is larger (64 KiB: Debian's arm64 build).
	page=$(fix "$pid" "get z arenas.page")
	within "$(jq .jemalloc.stats.allocated "$TMPD/ours.json")" \
		"$(jq .jemalloc.stats.allocated "$TMPD/theirs.json")" $((page > 16384 ? page : 16384))
}

t_stats_opts_pass_through() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	jm "$pid" stats --opts gmdablxeh
	expect_rc 0
	expect_eq "$(wc -l <<<"$OUT")" "$(fix "$pid" "stats $TMPD/t.txt gmdablxeh" >/dev/null; wc -l <"$TMPD/t.txt")"
	jm "$pid" stats --json --opts a
	expect_rc 0
	[[ $(jq '.jemalloc["stats.arenas"] | has("0")' <<<"$OUT") == false ]] || fail "per-arena stats present"
	jm "$pid" stats --opts J
	expect_rc 2
	jm "$pid" stats --opts 'g;'
	expect_rc 2
}

t_many_megabytes_from_250_arenas() {
	local pid size
	start_fixture pid "$FIXTURES/jemfix"
	expect_eq "$(fix "$pid" "arenas 250")" ok
	jm "$pid" stats --json -o "$TMPD/big.json"
	expect_rc 0
	size=$(stat -c %s "$TMPD/big.json")
	(( size > 2000000 )) || fail "only $size bytes"
	# As many arenas as the target itself reports (uninitialised ones are skipped).
	expect_eq "$(fix "$pid" "stats $TMPD/own.json J")" ok
	narenas() { jq '.jemalloc["stats.arenas"] | keys | map(select(test("^[0-9]+$"))) | length' "$1"; }
	expect_eq "$(narenas "$TMPD/big.json")" "$(narenas "$TMPD/own.json")"
	(( $(narenas "$TMPD/big.json") >= 250 )) || fail "too few arenas"
	jm "$pid" stats -o "$TMPD/big.txt"
	expect_rc 0
	expect_eq "$(grep -c '^arenas\[[0-9]' "$TMPD/big.txt")" "$(narenas "$TMPD/own.json")"
	expect_eq "$(fix "$pid" check)" ok
}

t_closed_pipe_leaves_target_intact() {
	local pid before
	start_fixture pid "$FIXTURES/jemfix"
	expect_eq "$(fix "$pid" "arenas 50")" ok
	before=$(proc_state "$pid")
	# head exits after one line: our writes then fail, the call still completes.
	"$JEMATTACH" "$pid" stats | head -1 >/dev/null
	expect_state "$pid" "$before"
	expect_eq "$(fix "$pid" ping)" pong
	jm "$pid" get stats.allocated
	expect_rc 0
}

t_redis_stats_match_info_and_malloc_stats() {
	local pid ours theirs
	start_redis pid
	expect_eq "$(redis-cli -p "$REDIS_PORT" debug populate 30000 key 200)" OK
	jm "$pid" stats --json -o "$TMPD/r.json"
	expect_rc 0
	ours=$(jq .jemalloc.stats.allocated "$TMPD/r.json")
	# Redis refreshes its allocator figures in serverCron, every 100 ms or
	# later on a loaded machine: wait for one taken after the keys.
	for _ in $(seq 50); do
		theirs=$(redis-cli -p "$REDIS_PORT" info memory | tr -d '\r' | awk -F: '$1 == "allocator_allocated" {print $2}')
		(( theirs - ours <= 262144 && ours - theirs <= 262144 )) && break
		sleep 0.1
	done
	within "$ours" "$theirs" $((256 * 1024))
	jm "$pid" stats -o "$TMPD/r.txt"
	redis-cli -p "$REDIS_PORT" memory malloc-stats > "$TMPD/r-own.txt"
	expect_eq "$(sections "$TMPD/r.txt")" "$(sections "$TMPD/r-own.txt")"
}

run_tests
