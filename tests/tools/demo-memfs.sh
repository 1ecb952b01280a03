#!/bin/bash
# SPDX-License-Identifier: MIT
# The main job on the embedded default: serve plugins/memfs/example.yaml
# (memfs at /tmp/fring-memfs), use it, then stop fring with SIGINT.
set -euo pipefail
cd "$(dirname "$0")/../.."

mnt=/tmp/fring-memfs
mkdir -p "$mnt"
out=$(mktemp)
build/bin/fring run plugins/memfs/example.yaml > "$out" &
pid=$!
stop() { kill -INT "$pid" 2>/dev/null || true; rm -f "$out"; }
trap stop EXIT

for _ in $(seq 100); do
	grep -q " ready " "$out" && break
	kill -0 "$pid" 2>/dev/null || { wait "$pid"; exit 1; }
	sleep 0.1
done
cat "$out"
grep -q " ready " "$out" || { echo "demo: fring did not become ready" >&2; exit 1; }
# Show each command as written, redirections included (set -x would print
# `echo 'hello from fring'` without its `> file`), then run it.
step() {
	printf '$ %s\n' "${1//\$mnt/$mnt}"
	eval "$1"
}
step 'echo "hello from fring" > "$mnt/hi"'
step 'cat "$mnt/hi"'
step 'mkdir "$mnt/dir"'
step 'ls -l "$mnt"'
step 'df -h "$mnt"'
trap - EXIT
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
rm -f "$out"
if mountpoint -q "$mnt"; then
	echo "demo: $mnt is still mounted" >&2
	exit 1
fi
echo "fring exited with status $rc and unmounted $mnt"
exit "$rc"
