#!/bin/bash
# run-all.sh -- what `make check` runs after building: for the normal build and
# the ASan+UBSan build of the tool, the Check unit tests and the integration tests.
set -u
cd "$(dirname "$0")/.."
total_pass=0 total_fail=0 total_skip=0 failed="" skips=""
export FIXTURES=${FIXTURES:-build/fixtures}
# ASan's leak check would also see the fixtures' and helpers' children; the
# tool's own leaks are checked in the check_runner pass.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

count() {
	# Check: "100%: Checks: 12, Failures: 0, Errors: 0"
	local line n f e
	line=$(grep -E '^[0-9]+%: Checks: ' "$1" | tail -1)
	if [[ -z $line ]]; then total_fail=$((total_fail + 1)); return; fi
	n=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
	f=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
	e=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
	total_pass=$((total_pass + n - f - e)); total_fail=$((total_fail + f + e))
}

for build in build build/asan; do
	label=$([[ $build == build ]] && echo "tool" || echo "tool under ASan+UBSan")
	# The version matrix once in full; under ASan one version is enough.
	[[ $build == build/asan ]] && export JE_VERSIONS=${JE_VERSIONS%% *}
	# The package is made from the normal build and checked once, above.
	[[ $build == build/asan ]] && export SKIP=76-deb
	echo "== unit tests ($label)"
	log=$(mktemp)
	JEMATTACH=$build/jemattach "$build/check_runner" 2>&1 | tee "$log"
	count "$log"
	failed+=$(grep -E ':[EF]:' "$log" | sed "s|^|  [$label] |")$'\n'
	echo "== integration tests ($label)"
	JEMATTACH=$build/jemattach tests/run-integration.sh 2>&1 | tee "$log"
	line=$(grep -E '^integration: ' "$log" | tail -1)
	skips+=$(grep -E '^    [A-Za-z0-9_-]+/[A-Za-z0-9_]+: skipped: ' "$log" | cut -c1-300 |
		sed "s|^ *|  [$label] |")$'\n'
	failed+=$(grep -E '^(FAILED |    [A-Za-z0-9_-]+/[A-Za-z0-9_]+: )' "$log" | grep -v ': skipped: ' | cut -c1-300 |
		sed "s|^|  [$label] |")$'\n'
	if [[ -z $line ]]; then
		total_fail=$((total_fail + 1))
	else
		total_pass=$((total_pass + $(sed -E 's/integration: ([0-9]+) passed.*/\1/' <<<"$line")))
		total_fail=$((total_fail + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")))
		total_skip=$((total_skip + $(sed -E 's/.* ([0-9]+) skipped/\1/' <<<"$line")))
	fi
	rm -f "$log"
done
echo
skips=$(grep -v '^$' <<<"$skips")
[[ -n $skips ]] && printf 'skipped, with the reason:\n%s\n' "$skips"
echo "check: $total_pass passed, $total_fail failed, $total_skip skipped"
# Repeated last, so that the tail of a long CI log names what failed.
failed=$(grep -v '^$' <<<"$failed")
[[ -n $failed ]] && printf 'failed:\n%s\n' "$failed"
[[ $total_fail == 0 ]]
