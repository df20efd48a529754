#!/bin/bash
# 70-watch.sh -- watch (jsonl, csv, prom; Ctrl-C; busy targets) and report abs/del/eff/--svg
# against a process whose arenas grow and shrink on a known schedule.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

MiB=1048576

# human BYTES: what report prints (one decimal, binary units).
human() {
	awk -v b="$1" 'BEGIN { s = b < 0 ? "-" : ""; v = b < 0 ? -b : b; split("KiB MiB GiB TiB", u, " ");
		if (v < 1024) { printf "%d B\n", b; exit } for (i = 0; v >= 1024 && i < 4; i++) v /= 1024;
		printf "%s%.1f %s\n", s, v, u[i] }'
}

# The schedule: two new arenas A and B, one sample after each step, the truth
# from the process itself alongside.  Sets P, A, B, SERIES; TRUTH_<k>_<what>.
schedule() {
	start_fixture P "$FIXTURES/grower"
	A=$(fix "$P" arena) B=$(fix "$P" arena)
	SERIES=$(mktemp "$TMPD/series.XXXX")
	local k=0 step
	for step in "" "grow $A 24" "grow $B 40" "shrink $A 24" "grow $A 8"; do
		[[ -z $step ]] || [[ $(fix "$P" "$step") == ok ]] || fail "grower: $step"
		jm "$P" watch -n 1 --arenas
		expect_rc 0
		printf '%s\n' "$OUT" >>"$SERIES"
		printf -v "TRUTH_${k}_all" '%s' "$(fix "$P" "stat stats.allocated")"
		printf -v "TRUTH_${k}_active" '%s' "$(fix "$P" "stat stats.active")"
		printf -v "TRUTH_${k}_mapped" '%s' "$(fix "$P" "stat stats.mapped")"
		local x
		for x in A B; do
			local i=${!x}
			printf -v "TRUTH_${k}_${x}_large" '%s' "$(fix "$P" "stat stats.arenas.$i.large.allocated")"
			printf -v "TRUTH_${k}_${x}_pactive" '%s' "$(fix "$P" "stat stats.arenas.$i.pactive")"
			printf -v "TRUTH_${k}_${x}_mapped" '%s' "$(fix "$P" "stat stats.arenas.$i.mapped")"
		done
		k=$((k + 1))
	done
	PAGE=$(fix "$P" "stat arenas.page")
}

t_watch_records_what_the_target_reports() {
	schedule
	local k x field v
	[[ $(wc -l <"$SERIES") == 5 ]] || fail "expected 5 records"
	# The schedule's own numbers: what each arena holds after each step.
	local -a want_A=(0 24 24 0 8) want_B=(0 0 40 40 40)
	for k in 0 1 2 3 4; do
		for x in A B; do
			local i=${!x} w="want_$x[$k]"
			field=$(jq -r --argjson a "$i" '.arenas[] | select(.arena == $a) | .large_allocated' \
				< <(sed -n "$((k + 1))p" "$SERIES"))
			expect_eq "$field" $(( ${!w} * MiB ))
			v="TRUTH_${k}_${x}_large"; expect_eq "$field" "${!v}"
			field=$(jq -r --argjson a "$i" '.arenas[] | select(.arena == $a) | .pactive * 1' \
				< <(sed -n "$((k + 1))p" "$SERIES"))
			v="TRUTH_${k}_${x}_pactive"; expect_eq "$field" "${!v}"
		done
		v="TRUTH_${k}_all"
		expect_eq "$(sed -n "$((k + 1))p" "$SERIES" | jq -r .allocated)" "${!v}"
	done
	expect_eq "$(head -1 "$SERIES" | jq -r .page)" "$PAGE"
	expect_eq "$(head -1 "$SERIES" | jq -r .pid)" "$P"
	(( $(head -1 "$SERIES" | jq -r .hold_ns) > 0 )) || fail "no hold time recorded"
}

t_report_abs() {
	schedule
	jm report abs "$SERIES" --threshold 16M --metric allocated
	expect_rc 0
	local peak=0 at k v
	for k in 0 1 2 3 4; do v="TRUTH_${k}_all"; (( ${!v} > peak )) && { peak=${!v}; at=$k; }; done
	# Greatest first: the process, B's 40 MiB (iteration 2), A's 24 MiB (iteration 1).
	expect_eq "$(sed -n 3,5p <<<"$OUT" | tr -s ' ')" "$(printf 'all %s %s\n%s 40.0 MiB 2\n%s 24.0 MiB 1' \
		"$(human "$peak")" "$at" "$B" "$A")"
	[[ $(grep -vc '^(' <<<"$OUT") == 5 ]] || fail "unexpected rows: $OUT"
	# A window: iterations 3-4 (inclusive); A's peak there is 8 MiB.
	jm report abs "$SERIES" -t 4M --from 3 --to 4 -m total
	expect_rc 0
	expect_match "$OUT" "iterations 3-4 of 5"
	expect_match "$OUT" "
$B +40.0 MiB +3
"
	expect_match "$OUT" "
$A +8.0 MiB +4"
	# Without --metric: the seed's three metrics, one table each.
	jm report abs "$SERIES"
	expect_rc 0
	expect_eq "$(grep -c '^abs: ' <<<"$OUT")" 3
	expect_match "$OUT" "^abs: allocated, the greatest per arena >= [0-9.]+ [KM]iB \\(5% of the process.s peak; -t SIZE to choose\\), iterations 0-4 of 5"
	# The default threshold comes from the data: both arenas of tens of MiB show.
	expect_match "$OUT" "
$B +40.0 MiB +2
"
	# What a threshold hides is said.
	jm report abs "$SERIES" -t 30M -m allocated
	expect_match "$OUT" "
\\([0-9]+ arenas below the threshold not shown; -t 0 shows all\\)"
	expect_match "$OUT" "
$B +40.0 MiB +2"
	[[ $OUT != *"
$A "* ]] || fail "arena $A shown under a 30M threshold: $OUT"
}

t_report_del() {
	schedule
	jm report del "$SERIES" --threshold 16M --metric allocated
	expect_rc 0
	local want="" k v w d
	# The process's own changes, computed from its own numbers.
	for k in 1 2 3 4; do
		v="TRUTH_${k}_all" w="TRUTH_$((k - 1))_all"; d=$(( ${!v} - ${!w} ))
		(( ${d#-} >= 16 * MiB )) && want+="all $((k - 1)) -> $k $(human "${!w}") $(human "${!v}") $( ((d > 0)) && echo +)$(human $d)"$'\n'
	done
	local rows; rows=$(sed -n '3,$p' <<<"$OUT" | grep -v '^(' | tr -s ' ' | sed 's/^ //')
	expect_match "$rows" "^$B 1 -> 2 0 B 40.0 MiB \+40.0 MiB"
	expect_match "$rows" "
$A 0 -> 1 0 B 24.0 MiB \+24.0 MiB"
	expect_match "$rows" "
$A 2 -> 3 24.0 MiB 0 B -24.0 MiB"
	while IFS= read -r line; do
		[[ -z $line ]] && continue
		grep -qxF "$line" <<<"$rows" || fail "missing row '$line' in: $rows"
	done <<<"$want"
	[[ $(wc -l <<<"$rows") == $(( 3 + $(grep -c . <<<"$want") )) ]] || fail "unexpected rows: $rows"
}

t_report_eff() {
	schedule
	jm report eff "$SERIES" --threshold 16M
	expect_rc 0
	local hdr; hdr=$(sed -n 2p <<<"$OUT" | tr -s ' ')
	expect_eq "$hdr" "iteration all $A $B"
	local k x
	for k in 0 1 2 3 4; do
		local row="$k" v m
		v="TRUTH_${k}_active" m="TRUTH_${k}_mapped"
		row+=" $(awk -v a="${!v}" -v m="${!m}" 'BEGIN { printf "%.1f%%", a * 100 / m }')"
		for x in A B; do
			v="TRUTH_${k}_${x}_pactive" m="TRUTH_${k}_${x}_mapped"
			if (( ${!m} == 0 )); then row+=" -"; else
				row+=" $(awk -v a="${!v}" -v p="$PAGE" -v m="${!m}" 'BEGIN { printf "%.1f%%", a * p * 100 / m }')"
			fi
		done
		expect_eq "$(sed -n "$((k + 3))p" <<<"$OUT" | tr -s ' ')" "$row"
	done
	# No arena reaches it: no rows of bare iteration numbers.
	jm report eff "$SERIES" --threshold 100G
	expect_rc 0
	[[ $OUT != *$'\n'[0-9]* ]] || fail "empty rows: $OUT"
	expect_match "$OUT" "no arena maps as much as the threshold"
}

t_report_svg() {
	schedule
	jm report abs "$SERIES" -t 16M -m active --svg "$TMPD/chart.svg"
	expect_rc 0
	xmllint --noout "$TMPD/chart.svg" || fail "not well-formed XML"
	# Lines for the process and the top arenas, A and B among them, each
	# labelled with its peak as the process counts it.
	local x v
	for x in A B; do
		local i=${!x} peak=0
		for k in 0 1 2 3 4; do
			v="TRUTH_${k}_${x}_pactive"; (( ${!v} > peak )) && peak=${!v}
		done
		grep -q "arena $i, peak $(human $((peak * PAGE)))<" "$TMPD/chart.svg" ||
			fail "no line for arena $i"
	done
	expect_match "$(grep -c '<path ' "$TMPD/chart.svg")" '^[2-9]$'
	grep -q "grower (pid $P): active" "$TMPD/chart.svg" || fail "no title"
}

t_report_reads_stats_json() {
	start_fixture P "$FIXTURES/grower"
	A=$(fix "$P" arena)
	fix "$P" "grow $A 20" >/dev/null
	jm "$P" stats --json
	printf '%s\n' "$OUT" >"$TMPD/log.json"
	fix "$P" "grow $A 12" >/dev/null
	jm "$P" stats --json
	printf '%s' "$OUT" >>"$TMPD/log.json"
	jm report del "$TMPD/log.json" -t 1M -m allocated
	expect_rc 0
	expect_match "$OUT" "iterations 0-1 of 2"
	expect_match "$OUT" "
$A +0 -> 1 +20.0 MiB +32.0 MiB +\+12.0 MiB"
	# The process's peak is what the second document says.
	jm report abs "$TMPD/log.json" -t 1M -m allocated
	expect_match "$OUT" "
all +$(human "$(jq -s '.[1].jemalloc.stats.allocated' "$TMPD/log.json")") +1
"
}

t_csv_and_prom_parse() {
	start_fixture P "$FIXTURES/grower"
	A=$(fix "$P" arena)
	fix "$P" "grow $A 16" >/dev/null
	fix "$P" "bind $A" >/dev/null
	jm "$P" watch -n 3 -i 0.2 --arenas -o "$TMPD/w.csv"
	expect_rc 0
	awk -F, 'NR == 1 { n = NF; next } NF != n { bad = 1 } END { exit bad }' "$TMPD/w.csv" ||
		fail "ragged CSV"
	expect_eq "$(grep -c ',all,' "$TMPD/w.csv")" 3
	local cols; cols=$(head -1 "$TMPD/w.csv")
	expect_eq "$(awk -F, -v a="$A" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$3 == a { print $c["large_allocated"], $c["nthreads"]; exit }' "$TMPD/w.csv")" "$((16 * MiB)) 1"
	expect_eq "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$3 == "all" { v = $c["allocated"] } END { print v }' "$TMPD/w.csv")" "$(fix "$P" "stat stats.allocated")"
	[[ $cols == time,iter,arena,* ]] || fail "header: $cols"

	jm "$P" watch -n 3 -i 0.1 --arenas --format prom -o "$TMPD/node.prom"
	expect_rc 0
	# Exposition format: comments, or name{labels} value, families contiguous.
	awk '/^# (HELP|TYPE) / { next }
		!/^[a-z_]+\{[a-z]+="[^"]*"(,[a-z]+="[^"]*")*\} [0-9.e+-]+$/ { print "bad: " $0; bad = 1 }
		{ split($0, p, "{"); if (p[1] != last && seen[p[1]]++) { print "split family " p[1]; bad = 1 } last = p[1] }
		END { exit bad }' "$TMPD/node.prom" || fail "not Prometheus text format"
	expect_eq "$(grep "^jemalloc_arena_large_allocated_bytes{.*arena=\"$A\"}" "$TMPD/node.prom" | awk '{print $2}')" \
		"$((16 * MiB))"
	expect_eq "$(grep '^jemalloc_allocated_bytes{' "$TMPD/node.prom" | awk '{print $2}')" \
		"$(fix "$P" "stat stats.allocated")"
	expect_eq "$(ls "$TMPD" | grep -c 'node.prom.tmp')" 0
}

# A reader polling the prom file never sees a partial one.
t_prom_replaced_atomically() {
	start_fixture P "$FIXTURES/grower"
	local W
	start_bg W "$JEMATTACH" "$P" watch -i 0.02 --arenas -o "$TMPD/node.prom"
	for _ in $(seq 100); do [[ -s $TMPD/node.prom ]] && break; sleep 0.05; done
	for _ in $(seq 150); do
		tail -1 "$TMPD/node.prom" | grep -q '^jemattach_sample_time_seconds{' || fail "partial file"
		sleep 0.01
	done
	kill -INT "$W"
	wait "$W"; expect_eq "$?" 0
}

# interrupted SIGNAL FORMAT: a watch ended by SIGNAL leaves complete records.
interrupted() {
	start_fixture P "$FIXTURES/grower"
	A=$(fix "$P" arena)
	fix "$P" "grow $A 4" >/dev/null
	local W out=$TMPD/int.$2
	start_bg W "$JEMATTACH" "$P" watch -i 0.05 --arenas --format "$2" -o "$out"
	for _ in $(seq 100); do (( $(wc -l 2>/dev/null <"$out" || echo 0) >= 6 )) && break; sleep 0.05; done
	kill "-$1" "$W"
	wait "$W"; expect_eq "$?" 0
	[[ $(tail -c1 "$out" | od -An -c | tr -d ' ') == '\n' ]] || fail "last line incomplete"
	# The target is unharmed and its locks are free: its own mallctl answers.
	expect_match "$(fix "$P" "stat stats.allocated")" '^[0-9]+$'
}

t_interrupted_jsonl() {
	interrupted INT jsonl
	jq -e . "$TMPD/int.jsonl" >/dev/null || fail "not valid JSON lines"
	(( $(wc -l <"$TMPD/int.jsonl") >= 3 )) || fail "too few records"
	jm report abs "$TMPD/int.jsonl" -t 4M -m allocated
	expect_rc 0
	expect_match "$OUT" "
$A +4.0 MiB"
}

t_interrupted_csv() {
	interrupted TERM csv
	awk -F, 'NR == 1 { n = NF } NF != n { exit 1 }' "$TMPD/int.csv" || fail "ragged CSV"
}

# A process whose other thread allocates without pause is still sampled.
t_busy_target() {
	start_fixture P "$FIXTURES/grower"
	local C; C=$(fix "$P" churn)
	jm "$P" watch -n 5 -i 0.05 --arenas -o "$TMPD/busy.jsonl"
	expect_rc 0
	expect_eq "$(wc -l <"$TMPD/busy.jsonl")" 5
	expect_eq "$(tail -1 "$TMPD/busy.jsonl" | jq --argjson c "$C" '.arenas[] | select(.arena == $c) | .nthreads')" 1
	expect_match "$(fix "$P" "stat stats.allocated")" '^[0-9]+$'
}

t_bad_input() {
	jm report abs "$TMPD/none.jsonl"
	expect_rc 2
	expect_match "$ERR" "none.jsonl: No such file"
	echo 'time,iter' >"$TMPD/x.csv"
	jm report abs "$TMPD/x.csv"
	expect_rc 2
	[[ $(wc -l <<<"$ERR") == 1 ]] || fail "more than one line: $ERR"
	echo '{"allocated": -5}' >"$TMPD/neg.jsonl"
	jm report abs "$TMPD/neg.jsonl"
	expect_rc 2
	expect_match "$ERR" "not a byte count"
	echo '{"allocated": 5}' >"$TMPD/one.jsonl"
	jm report abs "$TMPD/one.jsonl" --from 3
	expect_rc 2
	jm report abs "$TMPD/one.jsonl" -t 12Q
	expect_rc 2
	jm report nope "$TMPD/one.jsonl"
	expect_rc 2
	jm report abs "$TMPD/one.jsonl" -t 0 -m allocated
	expect_rc 0
	expect_match "$OUT" "all +5 B +0"
	start_fixture P "$FIXTURES/grower"
	jm "$P" watch --format prom
	expect_rc 2
	jm "$P" watch -i 0
	expect_rc 2
	jm "$P" watch -n 1 -o "$TMPD/no/such/dir.jsonl"
	expect_rc 2
}

run_tests
