#!/bin/bash
# SPDX-License-Identifier: MIT
# accel.sh: prints tcg or kvm, the faster way to run the VM suite's guest
# here. KVM is used only when it boots the guest faster than emulation
# (TCG): on a nested-virtualisation host it can be much slower or fail.
# Measured once per host kernel, CPU model and QEMU version (two boots of
# `true`), then cached in $FRING_VM_CACHE/accel-KEY.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${FRING_VM_CACHE:-/var/cache/fring-vm}
. "$here/skip.sh"
qemu=$(command -v "${FRING_VM_QEMU:-qemu-system-x86_64}") ||
	skip "no QEMU (${FRING_VM_QEMU:-qemu-system-x86_64}): Debian package qemu-system-x86"
key=$({ uname -r; grep -m1 '^model name' /proc/cpuinfo; "$qemu" --version | head -1; } | md5sum | cut -c1-12)
file=$cache/accel-$key
if [ -s "$file" ]; then
	sed -n 2p "$file" >&2
	sed -n 1p "$file"
	exit 0
fi
ms() { echo $(($(date +%s%N) / 1000000)); }

t0=$(ms)
"$here/run.sh" --accel tcg --timeout 180 true > /dev/null 2>&1
rc=$?
tcg=$(($(ms) - t0))
if ((rc)); then
	echo "vm: the guest does not boot under TCG (exit $rc); try tests/vm/run.sh --accel tcg true" >&2
	exit $((rc == 77 ? 77 : 1))
fi
pick=tcg kvm=none
if [ -w /dev/kvm ]; then
	t0=$(ms)
	# KVM has to beat TCG's time to be worth it
	if "$here/run.sh" --accel kvm --timeout $((tcg / 1000 + 1)) true > /dev/null 2>&1; then
		kvm=$(($(ms) - t0))
		((kvm < tcg)) && pick=kvm
		kvm="$kvm ms"
	else
		kvm="failed or slower"
	fi
fi
printf '%s\nvm: accelerator %s (measured %s: boot of `true` TCG %s ms, KVM %s)\n' \
	$pick $pick "$(date +%F)" $tcg "$kvm" > "$file"
sed -n 2p "$file" >&2
echo $pick
