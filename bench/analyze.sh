#!/bin/bash
# analyze.sh -- `jemattach analyze` against `jeprof --text` on the same heap
# dump of a real program: Debian's redis-server with heap profiling on,
# filled with DEBUG POPULATE and a redis-benchmark run so that its stacks vary.
# Prints the wall time of each (median of RUNS), the totals and how many of
# jeprof's top sites jemattach names the same.
# Env: JEMATTACH (build/jemattach), RUNS (5), KEYS (300000), LG_SAMPLE (14).
set -u
cd "$(dirname "$0")/.."
JEMATTACH=${JEMATTACH:-build/jemattach}
RUNS=${RUNS:-5}
KEYS=${KEYS:-300000}
LG_SAMPLE=${LG_SAMPLE:-14}
REDIS=$(command -v redis-server) || { echo "bench/analyze: redis-server is not installed" >&2; exit 1; }
command -v jeprof >/dev/null || { echo "bench/analyze: jeprof (libjemalloc-dev) is not installed" >&2; exit 1; }

dir=$(mktemp -d /tmp/jemattach-bench.XXXXXX)
port=$((20000 + RANDOM % 40000))
pid=
cleanup() {
	[[ -n $pid ]] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
	rm -rf "$dir"
}
trap cleanup EXIT

MALLOC_CONF=prof:true,lg_prof_sample:$LG_SAMPLE "$REDIS" --port "$port" --bind 127.0.0.1 \
	--save '' --appendonly no --dir "$dir" --enable-debug-command yes --daemonize no \
	>/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do
	[[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]] && break
	sleep 0.05
done
redis-cli -p "$port" DEBUG POPULATE "$KEYS" key 100 >/dev/null
redis-benchmark -p "$port" -q -n 20000 -r 100000 -t set,lpush,sadd,hset,zadd >/dev/null 2>&1
# The dump is written by redis itself (jemalloc's prof.dump), through jemattach's set.
"$JEMATTACH" "$pid" set prof.dump "$dir/redis.heap" >/dev/null || exit 1
echo "profile: $(wc -c <"$dir/redis.heap") bytes, $(grep -c '^@' "$dir/redis.heap") stacks" \
	"(redis-server $("$REDIS" --version | sed 's/.*v=\([^ ]*\).*/\1/'), lg_prof_sample $LG_SAMPLE)"

# median_time CMD...: the median wall time of RUNS runs, in seconds; output of the last in $dir/out.
median_time() {
	local t0 times=()
	for _ in $(seq "$RUNS"); do
		t0=$(date +%s%N)
		"$@" >"$dir/out" 2>/dev/null
		times+=($(( $(date +%s%N) - t0 )))
	done
	printf '%s\n' "${times[@]}" | sort -n |
		awk '{ a[NR] = $1 } END { printf "%.3f", a[int((NR + 1) / 2)] / 1e9 }'
}

# Like for like with jeprof: Redis's zmalloc wrappers stay sites (the last table folds them).
t_jm=$(median_time "$JEMATTACH" analyze "$dir/redis.heap" --top 0 --no-default-folds)
cp "$dir/out" "$dir/jm.txt"
t_jp=$(median_time jeprof --text "$REDIS" "$dir/redis.heap")
cp "$dir/out" "$dir/jp.txt"

total_jm=$(awk '/^Total:/ { print $2 }' "$dir/jm.txt")
total_jp=$(awk '/^Total:/ { print $2 }' "$dir/jp.txt")
# Top sites by flat, names compared without jeprof's @@VERSION suffixes.
top() { awk 'NR > 1 && $1 > 0 { print $6 }' "$1" | sed 's/@@.*//' | head -10; }
same=$(comm -12 <(top "$dir/jm.txt" | sort) <(top "$dir/jp.txt" | sort) | wc -l)
n=$(top "$dir/jp.txt" | wc -l)
flat_diff=$(paste <(awk 'NR > 1 { print $6, $1 }' "$dir/jm.txt" | sed 's/@@[^ ]*//' | sort) \
	<(awk 'NR > 1 { print $6, $1 }' "$dir/jp.txt" | sed 's/@@[^ ]*//' | sort) |
	awk '$1 == $3 { d = $2 - $4; if (d < 0) d = -d; if (d > m) m = d } END { printf "%.1f", m }')

printf '%-22s %10s %12s\n' "" "jemattach" "jeprof --text"
printf '%-22s %9ss %11ss\n' "wall time (median)" "$t_jm" "$t_jp"
printf '%-22s %7s MB %9s MB\n' "Total" "$total_jm" "$total_jp"
echo "top sites by flat: $same of jeprof's top $n named the same; largest flat difference" \
	"on a shared name: $flat_diff MB"
awk -v a="$t_jm" -v b="$t_jp" 'BEGIN { if (a > 0) printf "speed-up: %.0fx\n", b / a }'
echo "named differently (jemattach | jeprof):"
diff <(top "$dir/jm.txt" | sort) <(top "$dir/jp.txt" | sort) | grep '^[<>]' | tr '\n' ' '; echo
echo "jemattach's top 5:"; sed -n 2,6p "$dir/jm.txt"
echo "jeprof's top 5:"; sed -n 2,6p "$dir/jp.txt"
echo "jemattach's top 5 with Redis's own wrappers folded away (its default fold rules):"
"$JEMATTACH" analyze "$dir/redis.heap" --top 5 |
	tail -n +2
