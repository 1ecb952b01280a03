#!/bin/bash
# SPDX-License-Identifier: MIT
# modules.sh KDIR: make the cached kernel KDIR (from kernel.sh) bootable by
# virtme-ng: its modules tree goes to /lib/modules/KREL (hard links to the
# cache where the filesystem allows, else a copy) and depmod indexes it.
# virtme-ng then treats the kernel as one of the host's: the guest, which
# sees the host root, finds its modules at /lib/modules/KREL. (A symlink
# to the cache does not do: the guest mounts a tmpfs over /var/cache.)
# Only a tree this script put there (marked .fring-vm) is ever replaced;
# nothing else of the system is touched (/boot and the boot loader never).
# Prints /lib/modules/KREL/vmlinuz.
set -euo pipefail
kdir=$1
krel=$(cat "$kdir/krel")
version=$(basename "$kdir")
dest=/lib/modules/$krel
mark=$dest/.fring-vm
. "$(dirname "$0")/skip.sh"
command -v depmod >/dev/null || skip "no depmod (Debian package kmod)"
exec 9> "$(dirname "$kdir")/.lock" # one kernel.sh or modules.sh at a time
flock -w 1800 9 || { echo "vm: $(dirname "$kdir")/.lock is held by another run" >&2; exit 1; }

if [ ! -e "$mark" ] || [ "$(cat "$mark")" != "$version" ]; then
	if [ -e "$dest" ] && [ ! -e "$mark" ]; then
		skip "$dest exists and is not the VM suite's (an installed kernel?): left alone"
	fi
	tmp=/lib/modules/.fring-vm-$krel
	rm -rf "$tmp"
	mkdir -p /lib/modules
	cp -al "$kdir/root/usr/lib/modules/$krel" "$tmp" 2>/dev/null ||
		{ rm -rf "$tmp"; cp -a "$kdir/root/usr/lib/modules/$krel" "$tmp"; }
	# depmod writes its index files anew (never through the hard links)
	rm -f "$tmp"/modules.*
	echo "$version" > "$tmp/.fring-vm"
	rm -rf "$dest"
	mv "$tmp" "$dest"
	depmod -a "$krel"
	echo "vm: modules of $version placed in $dest (depmod run)" >&2
fi
echo "$dest/vmlinuz"
