# lib-census.sh -- what the census tests share (85-census.sh, 88-census-builds.sh):
# censusfix's own lists of its blocks against the census; sourced after lib.sh.

# census_lists PID TAG: the fixture's own lists of its live and freed blocks.
census_lists() {
	fix "$1" "list $TMPD/$2.live" >/dev/null
	fix "$1" "freed $TMPD/$2.freed" >/dev/null
	[[ -s $TMPD/$2.live ]] || fail "$2: the fixture listed no block"
	[[ -s $TMPD/$2.freed ]] || fail "$2: the fixture freed nothing"
}

# census_check TAG WHERE...: the census of WHERE (a PID, or core CORE)
# against the lists of TAG; its bytes + thread-cached bytes in CENSUS_SUM,
# the JSON in CENSUS_JSON.
census_check() {
	local tag=$1; shift
	jm "$@" census --json --no-stats --blocks "$TMPD/$tag.blocks"
	expect_rc 0
	local json=$OUT bad
	# Every live block: present, same usable size.
	bad=$(awk 'NR == FNR { s[$1] = $2; next } !($1 in s) { m++ } ($1 in s) && s[$1] != $2 { d++ }
		END { printf "%d %d", m, d }' "$TMPD/$tag.blocks" "$TMPD/$tag.live")
	expect_eq "$bad" "0 0"
	# No freed block live: none at a freed address with the freed block's
	# size (any allocation may take the address since, as another size).
	bad=$(awk 'NR == FNR { s[$1] = $2; next } s[$1] == $2 { n++ } END { print n + 0 }' \
		"$TMPD/$tag.blocks" "$TMPD/$tag.freed")
	expect_eq "$bad" 0
	CENSUS_JSON=$json
	CENSUS_SUM=$(jq '.bytes + .thread_cached.bytes' <<<"$json")
	CENSUS_CACHED=$(jq '.thread_cached.blocks' <<<"$json")
}

# census_exact PID TAG: census_check, and the sum equals stats.allocated.
census_exact() {
	census_lists "$1" "$2"
	census_check "$2" "$1"
	jm "$1" get stats.allocated
	expect_rc 0
	expect_eq "$CENSUS_SUM" "$OUT"
	((CENSUS_CACHED > 0)) || fail "$2: no thread-cached block found"
}

# census_fill PID: blocks of every kind, and threads with full caches.
census_fill() {
	expect_eq "$(fix "$1" "alloc 20000")" ok
	expect_eq "$(fix "$1" "threads 3")" ok
}
