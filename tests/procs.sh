# procs.sh -- the processes of one session, read from /proc: how the runner and
# lib.sh find what a test left running.  By session id, which only the
# runner's setsid hands out (never by name: no pgrep).  Sourced, not run.

# session_of PID: the session id of PID (empty when PID is gone).
session_of() {
	local st
	read -r st 2>/dev/null <"/proc/$1/stat" || return 0
	st=${st##*) }
	read -r _ _ _ st _ <<<"$st"
	echo "$st"
}

# session_procs SID: "PID PPID COMM" of each live process of session SID
# (zombies left out: they are dead), other than SID itself and this shell.
session_procs() {
	local f st p comm state ppid sid
	for f in /proc/[0-9]*/stat; do
		read -r st 2>/dev/null <"$f" || continue
		p=${st%% *} comm=${st#*(} comm=${comm%)*}
		read -r state ppid _ sid _ <<<"${st##*) }"
		[[ $sid == "$1" && $p != "$1" && $p != "$BASHPID" && $state != Z ]] || continue
		echo "$p $ppid ${comm//[^[:alnum:]._:\/-]/?}"
	done
}
