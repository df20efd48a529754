# lib-sampler.sh -- what the tests of the sampler share (65-sampler.sh, and
# prof window / track on a process without prof:true in 40-prof.sh,
# 42-track.sh); sourced after lib.sh.

RATE=2621440			# leakfix's bytes a second, per site

can_sample() {
	[[ $(id -u) == 0 ]] || skip "not root"
	[[ -d /sys/bus/event_source/devices/uprobe ]] || skip "kernel without uprobes"
}

# window_secs: the window's length from the summary jemattach printed.
window_secs() { sed -n 's/^jemattach: \([0-9.]*\) s, [0-9]* probes.*/\1/p' <<<"$ERR"; }

# site JSON NAME: a site's flat bytes in an analyze --format json report (0: absent).
site() { jq -r --arg n "$2" '[.sites[] | select(.name == $n) | .flat] | (.[0] // 0) | floor' <<<"$1"; }
