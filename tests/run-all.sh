#!/bin/bash
# run-all.sh -- what `make check` runs after building: the Check unit tests
# against the normal and the ASan+UBSan build of the tool, then the
# integration tests once (see below which build each file runs).
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

# The unit tests against both builds; the integration tests once, against
# the ASan+UBSan build (every path they take checked for memory errors and
# undefined behaviour), but for the files with a "# build: tool" line, which
# run the normal build: 65-sampler measures what the probes cost a target
# against its own rate, 76-deb packages the normal build.  05-install runs
# the installed normal build too.  (Both builds through every file made
# make check 34 minutes on 2 cores.)
for build in build build/asan; do
	label=$([[ $build == build ]] && echo "tool" || echo "tool under ASan+UBSan")
	echo "== unit tests ($label)"
	log=$(mktemp)
	JEMATTACH=$build/jemattach "$build/check_runner" 2>&1 | tee "$log"
	count "$log"
	failed+=$(grep -E ':[EF]:' "$log" | sed "s|^|  [$label] |")$'\n'
	rm -f "$log"
done
echo "== integration tests (the tool under ASan+UBSan; # build: tool files the normal build)"
log=$(mktemp)
JEMATTACH=build/asan/jemattach JEMATTACH_TOOL=build/jemattach tests/run-integration.sh 2>&1 | tee "$log"
line=$(grep -E '^integration: ' "$log" | tail -1)
skips+=$(grep -E '^    [A-Za-z0-9_-]+/[A-Za-z0-9_]+: skipped: ' "$log" | cut -c1-300 |
	sed "s|^ *|  |")$'\n'
failed+=$(grep -E '^(FAILED |    [A-Za-z0-9_-]+/[A-Za-z0-9_]+: )' "$log" | grep -v ': skipped: ' | cut -c1-300 |
	sed "s|^|  |")$'\n'
if [[ -z $line ]]; then
	total_fail=$((total_fail + 1))
else
	total_pass=$((total_pass + $(sed -E 's/integration: ([0-9]+) passed.*/\1/' <<<"$line")))
	total_fail=$((total_fail + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")))
	total_skip=$((total_skip + $(sed -E 's/.* ([0-9]+) skipped/\1/' <<<"$line")))
fi
rm -f "$log"
echo
skips=$(grep -v '^$' <<<"$skips")
[[ -n $skips ]] && printf 'skipped, with the reason:\n%s\n' "$skips"
echo "check: $total_pass passed, $total_fail failed, $total_skip skipped"
# Repeated last, so that the tail of a long CI log names what failed.
failed=$(grep -v '^$' <<<"$failed")
[[ -n $failed ]] && printf 'failed:\n%s\n' "$failed"
[[ $total_fail == 0 ]]
