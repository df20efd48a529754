# lib-serve.sh -- helpers for tests of `jemattach serve` (source after lib.sh).

# serve_bg VAR ARGS...: `jemattach serve ARGS` in the background (under the
# command in the array SERVE_WRAP, if any), recorded for cleanup; its stderr
# in $TMPD/serve.VAR.err.
SERVE_WRAP=()
serve_bg() {
	local __var=$1; shift
	# Emptied here: the background job's own redirection comes later, and
	# serve_wait must not read a file an earlier server of that name left.
	: >"$TMPD/serve.$__var.err"
	"${SERVE_WRAP[@]}" "$JEMATTACH" serve "$@" 2>"$TMPD/serve.$__var.err" &
	STARTED+=("$!")
	printf -v "$__var" '%s' "$!"
}

# serve_wait PID ERRFILE: until the server listens (0) or exits (1).
serve_wait() {
	for _ in $(seq 300); do
		grep -q "serving" "$2" 2>/dev/null && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# start_serve VAR ARGS...: serve on a free loopback port (in $SERVE_PORT,
# URL in $SERVE_URL); waits until it listens.
start_serve() {
	local __var=$1 __pid; shift
	for _ in 1 2 3; do
		SERVE_PORT=$(free_port) || { fail "no free port"; return 1; }
		serve_bg __pid --listen "127.0.0.1:$SERVE_PORT" "$@"
		serve_wait "$__pid" "$TMPD/serve.__pid.err" && break
		grep -q "cannot listen" "$TMPD/serve.__pid.err" || break
	done
	grep -q "serving" "$TMPD/serve.__pid.err" ||
		{ fail "serve did not start: $(cat "$TMPD/serve.__pid.err")"; return 1; }
	mv "$TMPD/serve.__pid.err" "$TMPD/serve.$__var.err"
	SERVE_URL="http://127.0.0.1:$SERVE_PORT"
	printf -v "$__var" '%s' "$__pid"
}

# metric NAME PID [URL]: the value of series NAME for PID in /metrics.
metric() {
	curl -s --max-time 30 "${3:-$SERVE_URL}/metrics" |
		awk -v n="$1" -v p="pid=\"$2\"" '$1 ~ "^" n "[{]" && index($1, p) {print $2; exit}'
}

ms() { echo $(($(date +%s%N) / 1000000)); }

# code_at PID ADDR: 16 bytes of PID's code at ADDR, read through /proc (a
# breakpoint left there would show).
code_at() { dd if="/proc/$1/mem" bs=1 count=16 skip=$(($2)) iflag=skip_bytes 2>/dev/null | od -An -tx1; }

# sampler_target VAR: the leak fixture (no prof:true) when uprobes can run, its
# malloc's address in $fn and code in $before; a skip otherwise.
sampler_target() {
	[[ $(id -u) == 0 ]] || skip "not root"
	[[ -d /sys/bus/event_source/devices/uprobe ]] || skip "kernel without uprobes"
	start_fixture "$1" "$FIXTURES/leakfix"
	fn=$(fix "${!1}" fn | awk '{ print $2 }')
	before=$(code_at "${!1}" "$fn")
}
