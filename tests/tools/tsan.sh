#!/bin/bash
# SPDX-License-Identifier: MIT
# The ThreadSanitizer step of CI (ctest test "sanitize_tsan", label "sanitize"): a
# build with -DFRING_TSAN=ON (gcc, -fsanitize=thread) runs
#   unit   `ctest -L unit` (Criterion under tsan_criterion_shim.so, see
#          there: BoxFort cannot place its arenas beside TSan's shadow);
#   mount  real mounts over /dev/fuse and io_uring where replies come from
#          threads that are not the transport's queue threads:
#          tsan_mounts.py (passthrough's io_threads workers under fio, and
#          SIGTERM while they are busy), the faulty fixture's watcher thread
#          (integration/test_faults.py: interrupted, late and stale-handle
#          replies, SIGTERM during fsync'ing writers), concurrent writers
#          (test_fs_basic.py) and passthrough's backing I/O on the ring
#          (test_uring.py), and every READ answered by two threads at once
#          (test_owner_race.py: 20,000 READs here, FRING_OWNER_RACE_N).
# TSan halts at its first report (halt_on_error=1, exit code 66) and writes
# it to a file (log_path): a test process that dies that way fails its
# test, and every report file fails this step even when the test passed
# (Criterion ignores how a test process ends after its test passed; a
# mount test may kill fring). No suppressions: a race in fring's code is a
# bug to fix, not to hide.
#
# Usage: tests/tools/tsan.sh [SOURCE_DIR [BUILD_DIR]]. BUILD_DIR is the regular
# build (default SOURCE_DIR/build); the TSan tree and the logs go inside it
# (tsan/, tsan-logs/; reports in tsan-logs/reports/).
# Environment: FRING_TSAN_STEPS (subset of "unit mount", default both),
# FRING_TSAN_OPTIONS (appended to TSAN_OPTIONS; halt_on_error=0 lists every
# report of a run instead of stopping at the first).
set -uo pipefail

src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
main=$(cd "${2:-$src/build}" && pwd -P)
tsan=$main/tsan
logs=$main/tsan-logs
steps=" ${FRING_TSAN_STEPS:-unit mount} "
jobs=$(nproc)
t0=$SECONDS

say() { echo "tsan: $*"; }
note() { echo "$*" >>"$logs/summary"; }
fail() { say "FAILED: $*"; echo "$*" >>"$logs/failed"; }
want() { [[ $steps == *" $1 "* ]]; }

rm -rf "$logs"
mkdir -p "$logs/reports"
: >"$logs/summary"

# Reports: the files of log_path, plus any that reached a test's output
# (a process started without our TSAN_OPTIONS, or before log_path).
tsan_reports() {
	local f n=0
	local pat='(WARNING|ERROR|FATAL): ThreadSanitizer|ThreadSanitizer:DEADLYSIGNAL'
	if grep -q -E "$pat" "$logs/$1.log"; then
		n=1
		say "ThreadSanitizer output in $logs/$1.log:"
		grep -B2 -A40 -m1 -E "$pat" "$logs/$1.log"
	fi
	for f in "$logs"/reports/tsan.*; do
		[ -s "$f" ] || continue
		n=$((n + 1))
		say "ThreadSanitizer report ($1) $f:"
		head -n 80 "$f"
		mv "$f" "$logs/$1-report-$n.txt"
	done
	((n)) && fail "$1 under TSan: $n reports ($logs/$1-report-*.txt)"
	note "$1: $2, $n reports"
}

tsan_build() {
	local t=$SECONDS
	say "ThreadSanitizer build in $tsan"
	# No -Werror: the regular build is the warnings gate.
	if ! cmake -S "$src" -B "$tsan" -G Ninja -DFRING_TSAN=ON \
		-DFRING_WERROR=OFF >"$logs/configure.log" 2>&1 ||
	   ! nice cmake --build "$tsan" -j "$jobs" >"$logs/build.log" 2>&1; then
		tail -n 30 "$logs/configure.log" "$logs/build.log"
		fail "TSan build"
		return 1
	fi
	# An unknown FRING_TSAN option would build without the sanitizer.
	grep -q -- '-fsanitize=thread' "$tsan/build.ninja" ||
		{ fail "TSan build: FRING_TSAN added no -fsanitize=thread"; return 1; }
	cc -O2 -shared -fPIC -o "$tsan/tsan_criterion_shim.so" \
		"$src/tests/tools/tsan_criterion_shim.c" >>"$logs/build.log" 2>&1 ||
		{ fail "TSan build: tsan_criterion_shim.so"; return 1; }
	note "build ($((SECONDS - t)) s)"
}

# halt_on_error: the first report ends the process with exitcode 66.
# history_size=4: enough access history for the second stack of a race.
opts() {
	echo "halt_on_error=1:exitcode=66:second_deadlock_stack=1:history_size=4:log_path=$logs/reports/tsan${FRING_TSAN_OPTIONS:+:$FRING_TSAN_OPTIONS}"
}

unit_tests() {
	local t=$SECONDS
	say "unit tests"
	if ! LD_PRELOAD=$tsan/tsan_criterion_shim.so TSAN_OPTIONS=$(opts) \
	     ctest --test-dir "$tsan" -L '^unit$' -j "$jobs" -V >"$logs/unit.log" 2>&1; then
		grep -E '\*\*\*(Failed|Timeout|Exception)|Not Run|\[FAIL\]|Crash' "$logs/unit.log" | head -n 40
		fail "unit tests under TSan ($logs/unit.log)"
	fi
	tsan_reports unit "$(grep -o '[0-9]* tests failed out of [0-9]*' "$logs/unit.log" ||
		echo "no tests") ($((SECONDS - t)) s)"
}

# pytest node selections, run in the source tree against the TSan build.
MOUNT_TESTS=(
	tools/tsan_mounts.py
	"integration/test_faults.py -k interrupted_request_answered or interrupted_request_never or late_reply or stale_handle or heavy_io"
	"integration/test_fs_basic.py -k concurrent_writers"
	"integration/test_uring.py -k backing_io"
	integration/test_owner_race.py
)

# One pytest run of the TSan build: $1 its log, the rest its arguments.
tsan_pytest() {
	local log=$1
	shift
	(cd "$src/tests" && PYTHONDONTWRITEBYTECODE=1 TSAN_OPTIONS=$(opts) \
	  FRING_OWNER_RACE_N=${FRING_OWNER_RACE_N:-20000} \
	  FRING_BIN=$tsan/bin/fring FRING_PLUGIN_DIR=$tsan/lib/fring/plugins \
	  FRING_FIXTURE_DIR=$tsan/tests/fixtures FRING_EMBED_PROG=$tsan/tests/embed_prog \
	  timeout 600 python3 -m pytest -v -p no:cacheprovider -rfE "$@") >"$log" 2>&1
}

# Each selection once; its failed tests a second time, which decides (as
# sanitize.sh's ASan mount run does: TSan's slow-down can miss a test's
# deadline, or, seen once in test_owner_race, end a server by SIGSEGV with
# no report). A TSan report fails the step either way (tsan_reports reads
# every run's report files), and a second-run pass is named in the summary.
mount_tests() {
	local t=$SECONDS sel k rc=0 try=$logs/mount-try.log failed again="" p f
	local -a nodes
	say "mount tests"
	: >"$logs/mount.log"
	p=0
	f=0
	for sel in "${MOUNT_TESTS[@]}"; do
		k=()
		[[ $sel == *" -k "* ]] && k=(-k "${sel#* -k }")
		tsan_pytest "$try" "${sel%% -k *}" "${k[@]}"
		cat "$try" >>"$logs/mount.log"
		p=$((p + $(grep -c -E '^[^ ]+::[^ ]+ PASSED' "$try")))
		failed=$(grep -oE '^(FAILED|ERROR) [^ ]+::[^ ]+' "$try" | awk '{ print $2 }' | sort -u)
		[ -n "$failed" ] || { grep -q -E ' passed| no tests ran' "$try" || rc=1; continue; }
		mapfile -t nodes <<<"$failed"
		echo "=== second run of: ${nodes[*]}" >>"$logs/mount.log"
		tsan_pytest "$try" "${nodes[@]}"
		cat "$try" >>"$logs/mount.log"
		p=$((p + $(grep -c -E '^[^ ]+::[^ ]+ PASSED' "$try")))
		if grep -q -E '^(FAILED|ERROR) ' "$try" || ! grep -q ' passed' "$try"; then
			rc=1
			f=$((f + $(grep -c -E '^(FAILED|ERROR) ' "$try")))
		else
			again="$again ${nodes[*]}"
		fi
	done
	rm -f "$try"
	if ((rc)); then
		grep -E '^(FAILED|ERROR)|^E  ' "$logs/mount.log" | head -n 60
		fail "mount tests under TSan ($logs/mount.log)"
	fi
	tsan_reports mount "$p passed, $f failed${again:+, passed on a second run:$again} ($((SECONDS - t)) s)"
}

if tsan_build; then
	want unit && unit_tests
	want mount && mount_tests
fi

say "summary: $(paste -s -d ';' "$logs/summary" | sed 's/;/; /g'); total $((SECONDS - t0)) s"
if [ -s "$logs/failed" ]; then
	say "FAILED: $(paste -s -d ';' "$logs/failed" | sed 's/;/; /g')"
	exit 1
fi
say "no ThreadSanitizer reports"
