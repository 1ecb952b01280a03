#!/bin/bash
# SPDX-License-Identifier: MIT
#
# A new opcode and a new YAML key take exactly the edits the folders'
# READMEs list (core/proto/README.md "Adding an opcode", core/config/
# README.md "A new key"): in a throw-away copy of the tree (a detached
# git worktree in /tmp, with the tree's uncommitted changes), this applies
# them to a test-only op (FUSE_FRING_TEST_OP, reusing the node decoder,
# the statfs slot and its reply kind) and a test-only key
# (transport.test_key, a number), builds, and checks that
#   - the enum member alone fails test_ops_table, and with its row passes;
#   - the key's field and row without fring.yaml(5)'s key reference fail
#     test_config_keys, and with the pasted reference pass; test_config fails
#     until its "expected one of" message names the key;
#   - test_proto_decode and test_dispatch pass with the new op.
# A step a list names that the demo skips: the plugin ABI (the op reuses
# a slot), the decode and fuzz seeds of step 6, using the key's field.
#
# usage: tests/tools/new_op_key_demo.sh [SOURCE_TREE]   (ctest new_op_key_demo)
set -euo pipefail

src=$(git -C "${1:-$(dirname "$0")/../..}" rev-parse --show-toplevel 2>/dev/null) ||
	{ echo "new_op_key_demo: skipped: not a git checkout"; exit 77; }
tmp=$(mktemp -d /tmp/fring-op-key-demo.XXXXXX)
wt=$tmp/src
bld=$tmp/build

cleanup() {
	[ -z "${FRING_DEMO_KEEP:-}" ] || { say "kept $tmp"; return; }
	git -C "$src" worktree remove --force "$wt" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

say() { printf 'new_op_key_demo: %s\n' "$*"; }
fail() { say "FAILED: $*"; exit 1; }

git -C "$src" worktree add --detach -q "$wt" HEAD
git -C "$src" diff HEAD --binary | git -C "$wt" apply --allow-empty

# edit FILE: replace the one occurrence of OLD by NEW (python, so that
# neither needs escaping); an anchor that moved is an error, not a no-op.
edit() {
	python3 - "$wt/$1" "$2" "$3" <<'EOF'
import sys
path, old, new = sys.argv[1:]
s = open(path).read()
if s.count(old) != 1:
    sys.exit(f"{path}: anchor found {s.count(old)} times: {old!r}")
open(path, "w").write(s.replace(old, new))
EOF
}

build() {
	say "build: $1"
	cmake --build "$bld" --target test_ops_table test_config_keys \
		test_config test_proto_decode test_dispatch fring_config_keys \
		>"$tmp/build.log" 2>&1 ||
		{ tail -30 "$tmp/build.log"; fail "build ($1)"; }
}

# expect pass|fail TEST WHAT [WHY]: a failure must say WHY in its log.
expect() {
	if "$bld/tests/$2" --jobs 1 >"$tmp/$2.log" 2>&1; then got=pass; else got=fail; fi
	[ "$got" = "$1" ] || { tail -20 "$tmp/$2.log"; fail "$2 should $1 $3"; }
	[ -z "${4:-}" ] || grep -qF -- "$4" "$tmp/$2.log" ||
		{ tail -20 "$tmp/$2.log"; fail "$2 failed, but not with '$4'"; }
	[ "$1" = pass ] && got=passes || got=fails
	say "$2 $got $3"
}

cmake -S "$wt" -B "$bld" -G Ninja -DFRING_WERROR=ON >"$tmp/cmake.log" 2>&1 ||
	{ tail -20 "$tmp/cmake.log"; fail cmake; }

# ---- a new opcode: core/proto/README.md, steps 1, 3, 4 (5 not needed) ----
max=$(sed -n 's/^\tFUSE_OPCODE_MAX = \([0-9]*\),$/\1/p' "$wt/core/proto/fring_uapi.h")
[ -n "$max" ] || fail "no FUSE_OPCODE_MAX in fring_uapi.h"
# Step 1: the enum member (and FUSE_OPCODE_MAX); NOARG, so no structs.
edit core/proto/fring_uapi.h "	FUSE_OPCODE_MAX = $max," \
"	FUSE_FRING_TEST_OP = $max,
	FUSE_OPCODE_MAX = $((max + 1)),"
build "enum member only"
expect fail test_ops_table "with the enum member and no row" \
	"FUSE_FRING_TEST_OP ($max) has no row"

# Step 3: its row. Step 4: the node decoder serves any node-only op (its
# comment names the ops, no switch). Step 2: an existing slot fits.
edit core/proto/ops.def "#undef OP
#undef HOST_OP" "OP(FRING_TEST_OP, NOARG, node, node, statfs, R(STATFS), 0)

#undef OP
#undef HOST_OP"
edit core/proto/decode_ops.c "/* READLINK STATFS DESTROY SYNCFS NOTIFY_REPLY: the node only. */" \
"/* READLINK STATFS DESTROY SYNCFS NOTIFY_REPLY FRING_TEST_OP: the node only. */"
build "enum member and row"
expect pass test_ops_table "with the enum member and its row"

# ---- a new key: core/config/README.md, steps 1-3 and 5 (4: nothing acts on it) ----
# Step 1: the field.
edit core/config/config.h "	uint32_t poll_us;         /* io_uring busy-poll budget, 0 = off */" \
"	uint32_t poll_us;         /* io_uring busy-poll budget, 0 = off */
	uint32_t test_key;        /* new_op_key_demo.sh's */"
# Step 2: the row, a plain kind, after poll_us.
edit core/config/config_keys.c "	{ \"placement\", CFG_TRANSPORT, cfg_key_words, T(placement)," \
"	{ \"test_key\", CFG_TRANSPORT, cfg_key_uint, T(test_key), .lo = 1,
	  .hi = 99, .def = 7, .uring_only = 1,
	  .doc = \"a key only tests/tools/new_op_key_demo.sh adds\" },
	{ \"placement\", CFG_TRANSPORT, cfg_key_words, T(placement),"
build "key field and row"
expect fail test_config_keys "with the key's field and row, the man page's reference not pasted" \
	"key reference is stale"

# Step 3: paste the generated reference between the man page's markers.
"$bld/bin/fring-config-keys" >"$tmp/keys.scd"
python3 - "$wt/man/fring.yaml.5.scd" "$tmp/keys.scd" <<'EOF'
import sys
path, table = sys.argv[1], open(sys.argv[2]).read()
s = open(path).read()
a = s.index("; config keys:")
a = s.index("\n", a) + 1
b = s.index("; end of config keys")
open(path, "w").write(s[:a] + table + s[b:])
EOF
grep -qF '*transport.test\_key*' "$wt/man/fring.yaml.5.scd" || fail "the pasted reference has no test_key"
expect pass test_config_keys "with the key's row and the pasted reference"
expect fail test_config "until the \"expected one of\" list names the key" \
	"[FAIL] config::invalid_files"

# Step 5: the list a user reads for an unknown transport key.
edit tests/unit/test_config.c "request_timeout, poll_us, placement," \
	"request_timeout, poll_us, test_key, placement,"
build "the unknown-key message"
expect pass test_config "with the key in the \"expected one of\" list"

# The other readers of both tables take the new rows as they are.
expect pass test_ops_table "beside the new key"
expect pass test_proto_decode "with the new op"
expect pass test_dispatch "with the new op"
say "ok: the READMEs' edit lists are complete for an op and a key"
