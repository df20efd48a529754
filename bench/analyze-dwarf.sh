#!/bin/bash
# analyze-dwarf.sh -- `jemattach analyze` against `jeprof --text` on the heap
# profile of a generated 2000-function program (one compilation unit), built
# with -g and then stripped: the case where a DWARF walk per address made
# analyze slower than jeprof.  Prints the wall time of each (median of RUNS),
# both totals and the speed-up; fails when the totals differ.
# Env: JEMATTACH (build/jemattach), RUNS (5), NFUNC (2000), KEEP (set: keep the files).
set -u
cd "$(dirname "$0")/.."
JEMATTACH=$(realpath "${JEMATTACH:-build/jemattach}")
RUNS=${RUNS:-5}
NFUNC=${NFUNC:-2000}
for t in jeprof hyperfine jq; do
	command -v $t >/dev/null || { echo "bench/analyze-dwarf: $t is not installed" >&2; exit 1; }
done

dir=$(mktemp -d /tmp/jemattach-bench.XXXXXX)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$dir"' EXIT

# Function i allocates (i % 13 + 1) * 48 bytes and calls i/2 so that stacks
# are deep and varied; main calls each one and dumps its own profile.
awk -v n="$NFUNC" 'BEGIN {
	print "#include <stdlib.h>\n#include <jemalloc/jemalloc.h>\nvoid *keep[1 << 20];\nint nkeep;"
	for (i = 0; i < n; i++) print "void f" i "(int d);"
	for (i = 0; i < n; i++) {
		print "void __attribute__((noinline)) f" i "(int d) {"
		print "\tfor (int k = 0; k < 8; k++) keep[nkeep++ & ((1 << 20) - 1)] = malloc(" (i % 13 + 1) * 48 ");"
		if (i > 0) print "\tif (d > 0) f" int(i / 2) "(d - 1);"
		print "}"
	}
	print "int main(int argc, char **argv) {\n\t(void)argc;"
	for (i = 0; i < n; i++) print "\tf" i "(4);"
	print "\tconst char *p = argv[1];\n\treturn mallctl(\"prof.dump\", NULL, NULL, &p, sizeof(p));\n}"
}' >"$dir/many.c"
cc -O1 -g -o "$dir/many-g" "$dir/many.c" -ljemalloc || exit 1
strip -o "$dir/many-stripped" "$dir/many-g"

# median CMD: the median wall time of RUNS runs of CMD (a shell command), in
# seconds, measured by hyperfine; CMD's output of one run is in $dir/out.
median() {
	hyperfine -N --runs "$RUNS" --export-json "$dir/t.json" "$1" >/dev/null 2>&1 || return 1
	$1 >"$dir/out" 2>/dev/null
	jq -r '.results[0].median | . * 1000 | round / 1000' "$dir/t.json"
}

rc=0
printf '%-14s %8s %10s %10s %10s %8s\n' binary stacks jemattach jeprof Total speed-up
for kind in g stripped; do
	bin=$dir/many-$kind
	MALLOC_CONF=prof:true,lg_prof_sample:0 "$bin" "$dir/$kind.heap" || { echo "the program could not dump" >&2; exit 1; }
	t_jm=$(median "$JEMATTACH analyze $dir/$kind.heap --top 0")
	total_jm=$(awk '/^Total:/ { print $2 }' "$dir/out")
	t_jp=$(median "jeprof --text $bin $dir/$kind.heap")
	total_jp=$(awk '/^Total:/ { print $2 }' "$dir/out")
	printf '%-14s %8s %9ss %9ss %7s MB %7s\n' "many-$kind" "$(grep -c '^@' "$dir/$kind.heap")" \
		"$t_jm" "$t_jp" "$total_jm" \
		"$(awk -v a="$t_jm" -v b="$t_jp" 'BEGIN { if (a > 0) printf "%.0fx", b / a }')"
	[[ $total_jm == "$total_jp" ]] || { echo "totals differ: jemattach $total_jm MB, jeprof $total_jp MB"; rc=1; }
done
exit $rc
