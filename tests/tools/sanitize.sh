#!/bin/bash
# SPDX-License-Identifier: MIT
# The sanitizer, fuzzing and leak step of CI (ctest test "sanitize_and_fuzz",
# label "sanitize"):
#   asan      a second build with -DFRING_SANITIZE=ON (gcc, ASan + UBSan,
#             no recovery) runs `ctest -L unit` and `ctest -L mount` with
#             LeakSanitizer on, in the fring processes of the mount tests too;
#   fuzz      a clang build with -DFRING_FUZZ=ON runs `ctest -L fuzz`: each
#             libFuzzer target for FRING_FUZZ_TIME seconds, then its saved
#             regression inputs;
#   valgrind  every unit test binary of the regular build under memcheck,
#             children traced (Criterion runs each test in its own process),
#             failing on any error or definitely/indirectly lost block.
# The mount tests and valgrind run side by side (one is mostly waiting on
# the kernel, the other on the CPU); everything else in sequence.
#
# Usage: tests/tools/sanitize.sh [SOURCE_DIR [BUILD_DIR]]. BUILD_DIR is the
# regular build (default SOURCE_DIR/build); the two extra trees and the logs
# go inside it (sanitize-asan/, sanitize-fuzz/, sanitize-logs/).
# Environment: FRING_FUZZ_TIME (seconds per fuzzer, default 60),
# FRING_SAN_MOUNT (ctest -R regex of the mount tests run under ASan,
# default all), FRING_SAN_STEPS (subset of "asan fuzz valgrind").
set -uo pipefail

src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
main=$(cd "${2:-$src/build}" && pwd -P)
san=$main/sanitize-asan
fuzz=$main/sanitize-fuzz
logs=$main/sanitize-logs
steps=" ${FRING_SAN_STEPS:-asan fuzz valgrind} "
jobs=$(nproc)
t0=$SECONDS

say() { echo "sanitize: $*"; }
# Results go to files so that steps run in the background can report.
note() { echo "$*" >>"$logs/summary"; }
fail() { say "FAILED: $*"; echo "$*" >>"$logs/failed"; }
want() { [[ $steps == *" $1 "* ]]; }
ctest_count() { grep -o '[0-9]* tests failed out of [0-9]*' "$1" || echo "no tests"; }
# Tests that passed only on their second run, named in the summary.
reruns() {
	local r
	r=$(grep -oE 'Test +#[0-9]+: [^ ]+ \.+\*\*\*(Failed|Timeout)' "$1" |
		awk '{ print $3 }' | sort -u | paste -s -d ' ')
	[ -z "$r" ] || printf ', passed on a second run: %s' "$r"
}

rm -rf "$logs"
mkdir -p "$logs/asan-reports"
: >"$logs/summary"

# Any sanitizer report is a failure: a report file (ASan, LeakSanitizer),
# or a report on stderr (UBSan ignores log_path) anywhere in the output.
asan_reports() {
	local f n
	n=$(grep -c -E 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$logs/asan-$1.log")
	((n)) && grep -B2 -A12 -E 'runtime error:|ERROR: (Address|Leak)Sanitizer' \
		"$logs/asan-$1.log" | head -n 60
	for f in "$logs"/asan-reports/*; do
		[ -f "$f" ] || continue
		# LeakSanitizer's notes that it could not stop an exiting thread
		# or read a thread's registers (it then takes that thread's whole
		# stack as reachable) are warnings, not reports: drop files that
		# hold only those. A leak found anyway writes an ERROR line.
		if ! grep -qvE '^(==[0-9]+==(Running thread [0-9]+ was not suspended\. False leaks are possible\.|Unable to get registers from thread [0-9]+\.))?$' "$f"; then
			rm -f "$f"
			continue
		fi
		n=$((n + 1))
		say "sanitizer report ($1) $f:"
		head -n 40 "$f"
		mv "$f" "$logs/asan-$1-report-$n.txt"
	done
	((n)) && fail "$1 tests under ASan: $n sanitizer reports ($logs/asan-$1-report-*.txt)"
	note "asan $1: $2, $n sanitizer reports"
}

asan_build() {
	local t=$SECONDS
	say "ASan+UBSan build in $san"
	# No -Werror here: gcc 12 warns falsely (-Wuse-after-free ...) under
	# -fsanitize; the regular build is the warnings gate.
	if ! cmake -S "$src" -B "$san" -G Ninja -DFRING_SANITIZE=ON \
		-DFRING_WERROR=OFF >"$logs/asan-configure.log" 2>&1 ||
	   ! nice cmake --build "$san" -j "$jobs" >"$logs/asan-build.log" 2>&1; then
		tail -n 30 "$logs"/asan-*.log
		fail "ASan build"
		return 1
	fi
	# An unknown FRING_SANITIZE option would build without sanitizers.
	grep -q -- '-fsanitize=address' "$san/build.ninja" ||
		{ fail "ASan build: FRING_SANITIZE added no -fsanitize flags"; return 1; }
	note "asan build ($((SECONDS - t)) s)"
}

# $1: unit or mount; the rest: ctest selection.
asan_tests() {
	local what=$1 t=$SECONDS opts=detect_leaks=1:halt_on_error=1
	shift
	# Mount tests crash plugins on purpose and expect death by SIGSEGV:
	# ASan's handler would turn that into exit(1).
	[ "$what" = mount ] && opts=$opts:handle_segv=0:handle_sigbus=0
	# The mount tests' deadlines (interrupts, log lines within seconds)
	# are for a plain build; beside valgrind, ASan's 2-3x slow-down can
	# miss one. A second run decides; a sanitizer report fails either way
	# (asan_reports reads every run's report files).
	[ "$what" = mount ] && set -- "$@" --repeat until-pass:2
	# Reports go to files: Criterion ignores how a test process exits after
	# its test passed, so a leak found at exit would go unseen otherwise.
	if ! ASAN_OPTIONS=$opts:log_path=$logs/asan-reports/asan \
	     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$logs/asan-reports/ubsan \
	     ctest --test-dir "$san" -L "^$what\$" "$@" -V \
		>"$logs/asan-$what.log" 2>&1; then
		grep -E '\*\*\*(Failed|Timeout|Exception)|Not Run|^[0-9]+: (FAILED|ERROR|E  )' \
			"$logs/asan-$what.log" | head -n 80
		fail "$what tests under ASan+UBSan ($logs/asan-$what.log)"
	fi
	asan_reports "$what" "$(ctest_count "$logs/asan-$what.log")$(reruns "$logs/asan-$what.log") ($((SECONDS - t)) s)"
}

fuzz_run() {
	local cc art t=$SECONDS
	say "libFuzzer build in $fuzz"
	cc=$(command -v clang-14 || command -v clang) ||
		{ fail "fuzz: no clang (tests/setup.sh installs clang-14)"; return; }
	if ! CC=$cc cmake -S "$src" -B "$fuzz" -G Ninja -DFRING_FUZZ=ON \
		-DFRING_SANITIZE=ON -DFRING_FUZZ_TIME="${FRING_FUZZ_TIME:-60}" \
		>"$logs/fuzz-configure.log" 2>&1 ||
	   ! nice cmake --build "$fuzz" -j "$jobs" --target fuzz_decode fuzz_config fuzz_ring \
		>"$logs/fuzz-build.log" 2>&1; then
		tail -n 30 "$logs"/fuzz-*.log
		fail "fuzz build"
		return
	fi
	say "fuzzing, ${FRING_FUZZ_TIME:-60} s per target"
	rm -rf "$fuzz/fuzz-artifacts"
	if ! ctest --test-dir "$fuzz" -L '^fuzz$' -j "$jobs" -V >"$logs/fuzz.log" 2>&1; then
		grep -E 'ERROR|SUMMARY|failed:|Test unit written|runtime error|Test +#' \
			"$logs/fuzz.log" | head -n 40
		fail "fuzzing: crash inputs in $fuzz/fuzz-artifacts/ (tests/fuzz/README.md)"
	fi
	art=$(find "$fuzz/fuzz-artifacts" -type f 2>/dev/null | wc -l)
	note "fuzz: $(awk '/stat::number_of_executed_units/ { n += $NF; k++ }
		END { printf "%d targets, %d executions", k, n }' "$logs/fuzz.log"), $art crash inputs ($((SECONDS - t)) s)"
}

# Unit test binaries of the regular build under memcheck, $1 at a time.
valgrind_run() {
	local list n procs bad=0 f errs lost t=$SECONDS
	command -v valgrind >/dev/null || { fail "valgrind is not installed"; return; }
	# name<TAB>dir<TAB>argv of each unit test program built here (not
	# python & co.) as ctest runs it, most Criterion tests (= processes,
	# each a valgrind start) first.
	list=$(ctest --test-dir "$main" -L '^unit$' --show-only=json-v1 | python3 -c '
import json, os, re, subprocess, sys
rows = []
for t in json.load(sys.stdin)["tests"]:
    cmd = t.get("command") or []
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if not cmd or not os.path.realpath(cmd[0]).startswith(sys.argv[1] + "/"):
        continue
    out = subprocess.run([cmd[0], "--list"], capture_output=True, text=True).stdout
    n = sum(int(m) for m in re.findall(r"^\S.*: (\d+) tests?$", out, re.M))
    rows.append((-n, "\t".join([t["name"], props.get("WORKING_DIRECTORY", ".")] + cmd)))
print("\n".join(r for _, r in sorted(rows)))
' "$main") || { fail "valgrind: cannot list the unit tests of $main"; return; }
	n=$(grep -c . <<<"$list")
	say "valgrind over $n unit test binaries"
	export VG_LOGS=$logs/valgrind
	# shellcheck disable=SC2016
	xargs -d '\n' -P "$1" -I{} bash -c '
		IFS=$'"'\t'"' read -r -a a <<<"$1"
		mkdir -p "$VG_LOGS/${a[0]}"
		cd "${a[1]}" && timeout 900 valgrind --tool=memcheck --leak-check=full \
			--errors-for-leak-kinds=definite,indirect \
			--show-leak-kinds=definite,indirect --read-inline-info=no \
			--trace-children=yes --error-exitcode=99 \
			--log-file="$VG_LOGS/${a[0]}/%p.log" "${a[@]:2}" \
			>"$VG_LOGS/${a[0]}/output.txt" 2>&1 ||
			echo "${a[0]} exited $? under valgrind" >>"$VG_LOGS/exit-failures"
	' _ {} <<<"$list"
	if [ -s "$VG_LOGS/exit-failures" ]; then
		cat "$VG_LOGS/exit-failures"
		fail "valgrind: $(wc -l <"$VG_LOGS/exit-failures") unit binaries failed ($VG_LOGS)"
	fi
	# Criterion runs each test in a child process and valgrind's exit code
	# covers only the parent: read every process's log.
	procs=$(find "$VG_LOGS" -name '*.log' | wc -l)
	for f in $(grep -l -E 'ERROR SUMMARY: [1-9]|(definitely|indirectly) lost: [1-9]' \
			$(find "$VG_LOGS" -name '*.log') /dev/null); do
		bad=$((bad + 1))
		say "valgrind findings in $f:"
		grep -A12 -E 'Invalid|uninitialised|lost in loss record|ERROR SUMMARY' "$f" | head -n 60
	done
	errs=$(find "$VG_LOGS" -name '*.log' -exec cat {} + |
		awk '/ERROR SUMMARY:/ { s += $4 } END { print s + 0 }')
	lost=$(find "$VG_LOGS" -name '*.log' -exec cat {} + |
		awk '/definitely lost:/ { gsub(",", "", $4); s += $4 } END { print s + 0 }')
	((bad)) && fail "valgrind: $bad processes with errors or leaks ($VG_LOGS)"
	note "valgrind: $n unit binaries, $procs processes, $errs errors, $lost bytes definitely lost ($((SECONDS - t)) s)"
}

asan_ok=0
want asan && asan_build && asan_ok=1
want fuzz && fuzz_run
((asan_ok)) && asan_tests unit -j "$jobs"
if ((asan_ok)); then
	# Side by side: the mount tests mostly wait on the kernel.
	want valgrind && { valgrind_run "$jobs" & }
	# Not the binding tests: Python cannot load the ASan libfring.so (the
	# ASan runtime must come first), an embedded interpreter "leaks" by
	# design at exit, and the Rust code is not instrumented anyway (so
	# neither the conformance runs over the Python and Rust memfs).
	asan_tests mount -R "${FRING_SAN_MOUNT:-.}" \
		-E 'mount_test_(python|rust)(_.*)?$|^conformance_(py|rust)memfs$'

	wait
elif want valgrind; then
	valgrind_run "$jobs"
fi

say "summary: $(paste -s -d ';' "$logs/summary" | sed 's/;/; /g'); total $((SECONDS - t0)) s"
if [ -s "$logs/failed" ]; then
	say "FAILED: $(paste -s -d ';' "$logs/failed" | sed 's/;/; /g')"
	exit 1
fi
say "all clean"
