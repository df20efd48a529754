#!/bin/sh
# funclen.sh -- the longest functions of C files: "LINES FILE:LINE NAME", longest first.
# Usage: scripts/funclen.sh [-max N] FILE...   (with -max, exit 1 when one is longer than N)
# A function is counted from the line that names it to its closing brace in column 0,
# the kernel style every file here follows.
max=
if [ "$1" = -max ]; then max=$2; shift 2; fi
awk '
/^[A-Za-z_].*[A-Za-z_0-9]+\(/ && !/;[ \t]*$/ && !/^(static )?(const )?struct [a-z_]+ [a-z_]+\[\] =/ {
	head = FNR; name = $0; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
}
/^\{/ && head { start = head }
/^\}/ && start { printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, name; start = 0; head = 0 }
' "$@" | sort -rn > "${TMPDIR:-/tmp}/funclen.$$"
cat "${TMPDIR:-/tmp}/funclen.$$"
worst=$(head -1 "${TMPDIR:-/tmp}/funclen.$$" | cut -d" " -f1)
rm -f "${TMPDIR:-/tmp}/funclen.$$"
[ -z "$max" ] || [ "${worst:-0}" -le "$max" ]
