#!/bin/bash
# SPDX-License-Identifier: MIT
# Fail when clang-format (.clang-format at the root) would reformat a CHANGED
# line of a C file; the tree itself is never reformatted.
# Usage: tests/tools/format_check.sh [--root DIR] | --self-test
# Base: FORMAT_BASE=<rev>, else the merge-base with main, else (HEAD is main,
# or no main) the parent of HEAD: the files of the last commit.
# Exit: 0 clean, 1 files named, 77 no clang-format (ctest SKIP_RETURN_CODE;
# 1 under FRING_STRICT=1), 2 usage error.
set -euo pipefail

root=.
case "${1:-}" in
--root) root=$2 ;;
--self-test) self_test=1 ;;
"") ;;
*) echo "usage: $0 [--root DIR] | --self-test" >&2; exit 2 ;;
esac

if ! command -v clang-format >/dev/null || ! command -v git-clang-format >/dev/null; then
	echo "format_check: clang-format missing: install the Debian package clang-format"
	[ "${FRING_STRICT:-0}" = 1 ] && exit 1
	exit 77
fi

check() { # $1: repository; prints the files whose changed lines would change
	local base head main
	cd "$1"
	head=$(git rev-parse HEAD)
	if [ -n "${FORMAT_BASE:-}" ]; then
		base=$FORMAT_BASE
	elif main=$(git rev-parse -q --verify main) && [ "$main" != "$head" ]; then
		base=$(git merge-base main HEAD)
	else
		base=$(git rev-parse -q --verify HEAD~1 ||
		       git hash-object -t tree /dev/null)
	fi
	# --diff prints the changes clang-format would make to the changed lines
	# of the working tree against base, per file; "no modified files" if none.
	git clang-format --quiet --diff --extensions c,h "$base" -- 2>&1 |
		sed -n 's|^+++ b/||p' | sort -u
}

run() {
	local bad
	bad=$(check "$1")
	if [ -n "$bad" ]; then
		echo "format_check: clang-format would reformat changed lines of:"
		printf '  %s\n' $bad
		echo "(see: git clang-format --diff <base>)"
		return 1
	fi
	echo "format_check: changed C lines follow .clang-format"
}

if [ -z "${self_test:-}" ]; then
	run "$root"
	exit
fi

# Self-test: a temp repository with this .clang-format; a commit badly
# formatted must fail, a well formatted one must pass.
here=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
git -C "$t" init -q -b main
cp "$here/.clang-format" "$t/"
printf '// SPDX-License-Identifier: MIT\nint a(void)\n{\n\treturn 0;\n}\n' >"$t/a.c"
git -C "$t" add -A
git -C "$t" -c user.name=t -c user.email=t@t commit -qm base
git -C "$t" checkout -q -b bad
printf 'int b(int x){ if(x) return 1;\n  return 0; }\n' >>"$t/a.c"
git -C "$t" -c user.name=t -c user.email=t@t commit -qam bad
if out=$(run "$t"); then
	echo "self-test: a badly formatted change passed"; exit 1
fi
echo "$out" | grep -q '  a\.c$' || { echo "self-test: a.c not named: $out"; exit 1; }
git -C "$t" checkout -q main
git -C "$t" checkout -q -b good
printf '\nint b(int x)\n{\n\tif (x)\n\t\treturn 1;\n\treturn 0;\n}\n' >>"$t/a.c"
git -C "$t" -c user.name=t -c user.email=t@t commit -qam good
run "$t" >/dev/null || { echo "self-test: a well formatted change failed"; run "$t"; exit 1; }
# On main itself (a fresh clone): the last commit's files are checked.
git -C "$t" checkout -q main
git -C "$t" merge -q --ff-only bad
if run "$t" >/dev/null; then
	echo "self-test: the last commit on main was not checked"; exit 1
fi
echo "format_check self-test: ok"
