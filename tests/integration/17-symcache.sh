#!/bin/bash
# 17-symcache.sh -- where jemalloc was found, kept by build-id: used again
# only for the same code, and only from a directory that is ours alone.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

CACHE=$XDG_CACHE_HOME/jemattach

entries() { find "$CACHE" -type f 2>/dev/null | wc -l; }

# get_checked PID: a get whose value the fixture confirms; -v output in $ERR.
get_checked() {
	jm -v "$1" get stats.allocated
	expect_rc 0
	expect_eq "$OUT" "$(fix "$1" "get z stats.allocated")"
}

expect_cached() { expect_match "$ERR" "known from the cache"; }
expect_searched() {
	[[ $ERR != *"known from the cache"* ]] || fail "used the cache: $ERR"
}

stop() { kill -KILL "$1"; wait "$1" 2>/dev/null || true; }

# get_in_env PID ENV-ARG...: a get run under `env ENV-ARG...`; RC, OUT, ERR as jm.
get_in_env() {
	local pid=$1; shift
	jm_run env "$@" "$JEMATTACH" "$pid" get stats.allocated
}

t_second_run_comes_from_the_cache_and_agrees() {
	local pid bin info
	for bin in jemfix jemfix-static-je jemfix-in-so; do
		rm -rf "$CACHE"
		start_fixture pid "$FIXTURES/$bin"
		jm --no-cache "$pid" info
		expect_rc 0
		info=$OUT
		get_checked "$pid"
		expect_searched
		expect_eq "$(entries)" 1
		expect_eq "$(stat -c %a "$CACHE")" 700
		expect_eq "$(stat -c %a "$CACHE"/*)" 600
		get_checked "$pid"
		expect_cached
		jm -v "$pid" info
		expect_cached
		# The same copy, prefix and code ranges as a search finds.
		expect_eq "$OUT" "$info"
		stop "$pid"
	done
}

# Other code at the same path (rewritten in place: same inode) is another
# build-id, so another key: searched again, never the old addresses.
# The entry keeps where malloc_message is: a program that set its own logger
# still has the report handed over through the callback, from the cache.
t_an_own_logger_is_known_from_the_cache() {
	local pid
	rm -rf "$CACHE"
	start_fixture pid "$FIXTURES/victim" VICTIM_LOGGER=1
	jm -v "$pid" info
	expect_rc 0
	expect_searched
	grep -q '^message=[0-9a-f]*:[0-9a-f]*$' "$CACHE"/* || fail "no message line: $(cat "$CACHE"/*)"
	jm -v "$pid" stats
	expect_rc 0
	expect_cached
	expect_match "$OUT" "End jemalloc statistics"
	# The report comes through the text sink, which jemalloc prefers to
	# the logger: no warning.
	expect_match "$ERR" "text taken at"
	[[ $ERR != *"own malloc_message"* ]] || fail "$ERR"
	# And without a logger, also from the cache.
	start_fixture pid "$FIXTURES/jemfix"
	jm -v "$pid" info
	jm -v "$pid" stats
	expect_rc 0
	expect_cached
	expect_match "$OUT" "End jemalloc statistics"
	[[ $ERR != *"own malloc_message"* ]] || fail "$ERR"
}

# The entry keeps where the target's rt_sigreturn trampoline is, which the
# call returns through.  A kept address whose bytes are not the trampoline
# (here 16 bytes past it) is searched again, never returned to: the target
# lives and answers, and the entry is used for the rest.
t_a_kept_trampoline_is_checked_before_use() {
	local pid line off
	rm -rf "$CACHE"
	start_fixture pid "$FIXTURES/jemfix"
	get_checked "$pid"
	line=$(grep '^restorer=' "$CACHE"/*) || fail "no restorer line: $(cat "$CACHE"/*)"
	[[ $line =~ ^restorer=([0-9a-f]+):([0-9a-f]+)$ ]] || fail "restorer line: $line"
	off=$(printf '%x' $((0x${BASH_REMATCH[2]} + 16)))
	sed -i "s/^restorer=.*/restorer=${BASH_REMATCH[1]}:$off/" "$CACHE"/*
	get_checked "$pid"
	expect_cached
	get_checked "$pid"
	stop "$pid"
}

t_a_program_rebuilt_in_place_is_searched_again() {
	local pid
	rm -rf "$CACHE"
	cp "$FIXTURES/jemfix-static" "$TMPD/prog"
	start_fixture pid "$TMPD/prog"
	get_checked "$pid"
	get_checked "$pid"
	expect_cached
	stop "$pid"
	cat "$FIXTURES/jemfix-static-je" >"$TMPD/prog"
	start_fixture pid "$TMPD/prog"
	get_checked "$pid"
	expect_searched
	expect_match "$ERR" 'prefix "je_"'
	expect_eq "$(entries)" 2
	get_checked "$pid"
	expect_cached
	expect_match "$ERR" 'prefix "je_"'
}

# The same build-id in another file (copied, then moved over it): the key
# holds the kernel's device and inode too, so a build-id a target claims
# never stands for another file.
t_the_same_build_in_another_file_is_searched_again() {
	local pid
	rm -rf "$CACHE"
	cp "$FIXTURES/jemfix-static" "$TMPD/prog"
	start_fixture pid "$TMPD/prog"
	get_checked "$pid"
	stop "$pid"
	cp "$TMPD/prog" "$TMPD/prog.new"
	mv "$TMPD/prog.new" "$TMPD/prog"
	start_fixture pid "$TMPD/prog"
	get_checked "$pid"
	expect_searched
	get_checked "$pid"
	expect_cached
}

t_a_library_loaded_later_changes_the_key() {
	local pid
	rm -rf "$CACHE"
	start_fixture pid "$FIXTURES/jemfix"
	get_checked "$pid"
	get_checked "$pid"
	expect_cached
	stop "$pid"
	# One more code file mapped: the whole set is the key.
	start_fixture pid "$FIXTURES/jemfix" LD_PRELOAD=libz.so.1
	get_checked "$pid"
	expect_searched
}

# The program mapping its jemalloc library again, below the loader's
# mappings (as one reading its own ELF files does): the cached addresses are
# relative to the mappings that hold the code, not to the lowest of the file.
t_another_mapping_of_the_library_does_not_move_it() {
	local pid lib
	rm -rf "$CACHE"
	start_fixture pid "$FIXTURES/jemfix"
	get_checked "$pid"
	lib=$(awk '$2 ~ /x/ && $6 ~ /libjemalloc/ {print $6; exit}' "/proc/$pid/maps")
	expect_match "$(fix "$pid" "mapfile $lib")" '^ok 0x'
	get_checked "$pid"
	expect_cached
	# And a search made while it is there finds the same.
	rm -rf "$CACHE"
	get_checked "$pid"
	expect_searched
	get_checked "$pid"
	expect_cached
}

t_entries_others_could_write_are_not_read() {
	local pid
	rm -rf "$CACHE"
	start_fixture pid "$FIXTURES/jemfix"
	get_checked "$pid"
	chmod 0666 "$CACHE"/*
	get_checked "$pid"
	expect_searched
	# Written anew, ours alone again.
	expect_eq "$(stat -c %a "$CACHE"/*)" 600
	chown nobody "$CACHE"/*
	get_checked "$pid"
	expect_searched
	get_checked "$pid"
	expect_cached
	chmod 0777 "$CACHE"
	get_checked "$pid"
	expect_searched
	chmod 0700 "$CACHE"
	chown nobody "$CACHE"
	get_checked "$pid"
	expect_searched
	chown root "$CACHE"
	# A symbolic link in the entry's place is not followed.
	local e; e=$(ls "$CACHE")
	mv "$CACHE/$e" "$TMPD/real"
	ln -s "$TMPD/real" "$CACHE/$e"
	get_checked "$pid"
	expect_searched
}

t_a_damaged_entry_is_a_miss_and_is_rewritten() {
	local pid e
	rm -rf "$CACHE"
	start_fixture pid "$FIXTURES/jemfix"
	get_checked "$pid"
	e=$(ls "$CACHE"/*)
	for cut in 40 $(( $(stat -c %s "$e") - 5 )); do
		truncate -s "$cut" "$e"
		get_checked "$pid"
		expect_searched
		get_checked "$pid"
		expect_cached
	done
	# An offset outside the module, or no code ranges: not used.
	sed -i 's/^mallctl=.*/mallctl=ffffffffff/' "$e"
	get_checked "$pid"
	expect_searched
	sed -i '/^range=/d' "$e"
	get_checked "$pid"
	expect_searched
}

# A save removes what killed writers left (NAME.PID of processes gone) and
# the oldest written entries past 256; a writer still alive, and files
# whose names are not the cache's, are left alone.
t_the_cache_stays_small_and_tidy() {
	local pid i real
	rm -rf "$CACHE"
	mkdir -p -m 700 "$CACHE"
	for i in $(seq 300); do
		printf 'old\n' > "$CACHE/$(printf '%016x' "$i")"
	done
	chmod 600 "$CACHE"/*
	touch -d '2020-01-01' "$CACHE"/*
	: > "$CACHE/ffffffffffffffff.999999999"
	: > "$CACHE/eeeeeeeeeeeeeeee.$$"
	: > "$CACHE/notes.txt"
	start_fixture pid "$FIXTURES/jemfix"
	get_checked "$pid"
	expect_searched
	expect_eq "$(ls "$CACHE" | grep -c -E '^[0-9a-f]{16}$')" 256
	real=$(grep -l '^end$' "$CACHE"/*) || fail "the new entry was removed"
	[[ ! -e $CACHE/ffffffffffffffff.999999999 ]] || fail "a dead writer's file is left"
	[[ -e $CACHE/eeeeeeeeeeeeeeee.$$ ]] || fail "a live writer's file was removed"
	[[ -e $CACHE/notes.txt ]] || fail "a file not of the cache was removed"
	get_checked "$pid"
	expect_cached
	[[ -e $real ]] || fail "the entry in use was removed"
	stop "$pid"
}

t_no_build_id_no_cache() {
	local pid
	rm -rf "$CACHE"
	start_fixture pid "$FIXTURES/jemfix-nobuildid"
	get_checked "$pid"
	get_checked "$pid"
	expect_searched
	expect_eq "$(entries)" 0
}

t_no_cache_option_writes_nothing() {
	local pid
	rm -rf "$CACHE"
	start_fixture pid "$FIXTURES/jemfix"
	jm --no-cache "$pid" get stats.allocated
	expect_rc 0
	[[ ! -e $CACHE ]] || fail "--no-cache made $CACHE"
	# Nowhere to keep it (no $HOME, no $XDG_CACHE_HOME): still works.
	get_in_env "$pid" -u HOME -u XDG_CACHE_HOME
	expect_rc 0
	expect_eq "$OUT" "$(fix "$pid" "get z stats.allocated")"
	[[ ! -e $CACHE ]] || fail "made $CACHE without a cache directory"
}

# As root with another user's $HOME (sudo -E), nothing is made in that home;
# in a home of our own, ~/.cache is made as needed.
t_no_cache_made_in_another_users_home() {
	local pid
	rm -rf "$CACHE"
	start_fixture pid "$FIXTURES/jemfix"
	mkdir "$TMPD/theirs" "$TMPD/ours"
	chown nobody "$TMPD/theirs"
	get_in_env "$pid" -u XDG_CACHE_HOME HOME="$TMPD/theirs"
	expect_rc 0
	expect_eq "$OUT" "$(fix "$pid" "get z stats.allocated")"
	[[ ! -e $TMPD/theirs/.cache ]] || fail "made $TMPD/theirs/.cache"
	get_in_env "$pid" -u XDG_CACHE_HOME HOME="$TMPD/ours"
	expect_rc 0
	expect_eq "$(stat -c %a "$TMPD/ours/.cache") $(stat -c %a "$TMPD/ours/.cache/jemattach")" "700 700"
}

t_cache_in_a_directory_that_cannot_be_made() {
	local pid
	rm -rf "$CACHE"
	start_fixture pid "$FIXTURES/jemfix"
	: >"$TMPD/file"
	get_in_env "$pid" XDG_CACHE_HOME="$TMPD/file/sub"
	expect_rc 0
	expect_eq "$ERR" ""
	expect_eq "$OUT" "$(fix "$pid" "get z stats.allocated")"
}

run_tests
