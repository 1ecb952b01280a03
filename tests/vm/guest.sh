#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs inside the guest (run.sh boots it with this as the command, or as
# the shell with --shell). Reads the per-run scratch directory from the
# kernel command line (fring_vm_scratch=), takes the host's environment and
# command from it, prepares what fring's tests need, runs the command and
# leaves its exit status in SCRATCH/rc.
set -uo pipefail
scratch=$(sed -n 's/.*\bfring_vm_scratch=\([^ ]*\).*/\1/p' /proc/cmdline)
[ -d "$scratch" ] || { echo "vm guest: no scratch directory ($scratch)" >&2; exit 1; }
# shellcheck source=/dev/null
. "$scratch/env"

# fusectl: tests abort connections through it
fusectl=/sys/fs/fuse/connections
grep -q " $fusectl fusectl " /proc/mounts || mount -t fusectl fusectl $fusectl
# FUSE-over-io_uring (also asked on the kernel command line)
uring=/sys/module/fuse/parameters/enable_uring
[ "$(cat $uring 2>/dev/null)" = Y ] || echo Y > $uring
# a plain tmpfs for temporary files (the guest's /tmp is an overlay)
mkdir -p /run/fring-tmp && mount -t tmpfs -o mode=1777 fring-tmp /run/fring-tmp
export TMPDIR=/run/fring-tmp

cd "$FRING_VM_CWD" || exit 1
if [ ! -e "$scratch/cmd" ]; then
	echo "vm guest: $(uname -r), enable_uring=$(cat $uring), TMPDIR=$TMPDIR; exit (or Ctrl-D) powers off"
	exec bash -i
fi
mapfile -d '' cmd < "$scratch/cmd"
"${cmd[@]}"
rc=$?
echo $rc > "$scratch/rc"
exit $rc
