#!/bin/bash
# 49-cgroup.sh -- a target with little room under its memory cgroup limit is
# not OOM-killed by our first call: refused with exit 5 (issue 17 row 7).
. "$(dirname "$0")/../lib.sh"

# A memory cgroup of our own: v1's memory hierarchy, else cgroup2 with the
# memory controller.  Prints its directory, or nothing when none can be made.
make_cgroup() {
	local base
	for base in /sys/fs/cgroup/memory /sys/fs/cgroup/unified /sys/fs/cgroup; do
		[[ -e $base/memory.usage_in_bytes || -e $base/cgroup.controllers ]] || continue
		[[ $base == */memory || $(cat "$base/cgroup.subtree_control" 2>/dev/null) == *memory* ]] || continue
		mkdir "$base/jemattach-test.$$" 2>/dev/null || continue
		echo "$base/jemattach-test.$$"
		return 0
	done
}

t_little_headroom_is_refused() {
	local pid cg usage lim
	cg=$(make_cgroup)
	[[ -n $cg ]] || { echo "    (no memory cgroup can be created here: check_cgmem covers the decision)"; return 0; }
	start_fixture pid "$FIXTURES/jemfix"
	echo "$pid" >"$cg/cgroup.procs"
	# Everything below runs in a subshell so the cgroup is emptied and removed
	# whatever happens.
	local rc
	set +e	# not "( ... ) || rc=$?": that would turn off set -e inside
	(
		set -e
		if [[ -e $cg/memory.limit_in_bytes ]]; then
			usage=$(cat "$cg/memory.usage_in_bytes"); lim=$cg/memory.limit_in_bytes
		else
			usage=$(cat "$cg/memory.current"); lim=$cg/memory.max
		fi
		echo $((usage + 128 * 1024)) >"$lim"
		jm "$pid" get stats.allocated
		expect_rc 5
		expect_match "$ERR" "process $pid has [0-9]+ KiB left under its memory cgroup's limit .*could get it OOM-killed: refused \(--force"
		echo $((usage + 64 * 1024 * 1024)) >"$lim"
		jm "$pid" get stats.allocated
		expect_rc 0
		expect_eq "$OUT" "$(fix "$pid" "get z stats.allocated")"
	)
	rc=$?
	set -e
	# (An old jemattach gets the fixture OOM-killed: then there is nothing to move.)
	echo "$pid" >"$(dirname "$cg")/cgroup.procs" 2>/dev/null || :
	# A killed fixture stays in the cgroup until it is reaped.
	for _ in $(seq 50); do
		rmdir "$cg" 2>/dev/null && break
		[[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]] || wait "$pid" 2>/dev/null || :
		sleep 0.1
	done
	[[ ! -d $cg ]] || fail "could not remove $cg"
	return $rc
}

run_tests
