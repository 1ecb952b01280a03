#!/bin/sh
# SPDX-License-Identifier: MIT
# ABI check with libabigail. PROBE is the built abi_probe.so (its debug
# info holds every public type of abi/include/fring).
#
#   check.sh PROBE            compare against abi/baseline/
#   check.sh PROBE --update   write the baseline of the current version
#
# The current version (FRING_ABI_MAJOR.MINOR in plugin.h) must have a
# baseline and match it exactly: any layout change needs a version bump
# and a new baseline (abi/CHANGELOG.md). Every older minor of the same
# major must still be served: abidiff may only report growth (members
# inserted, sizes grown), never a removal, a moved offset or a change it
# calls incompatible.
set -eu
probe=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
hdr=$root/abi/include/fring/plugin.h
major=$(sed -n 's/^#define FRING_ABI_MAJOR \([0-9][0-9]*\)$/\1/p' "$hdr")
minor=$(sed -n 's/^#define FRING_ABI_MINOR \([0-9][0-9]*\)$/\1/p' "$hdr")
base=$root/abi/baseline/fring-abi-$major.$minor.xml
command -v abidiff >/dev/null || { echo "abi: abidiff not found (Debian: abigail-tools)"; exit 1; }

if [ "${2:-}" = --update ]; then
	abidw --no-corpus-path --out-file "$base" "$probe"
	echo "abi: wrote $base"
	exit 0
fi
if [ ! -f "$base" ]; then
	echo "abi: no baseline for ABI $major.$minor ($base); a version bump adds one:"
	echo "     tests/abi/check.sh $probe --update"
	exit 1
fi

status=0
rc=0
out=$(abidiff "$base" "$probe") || rc=$?
if [ "$rc" -ne 0 ]; then
	echo "abi: the headers differ from the ABI $major.$minor baseline: bump"
	echo "     FRING_ABI_MINOR (additions) or MAJOR (breaks) and add a baseline"
	echo "$out"
	status=1
else
	echo "abi: $major.$minor matches its baseline"
fi
for old in "$root"/abi/baseline/fring-abi-"$major".*.xml; do
	[ "$old" = "$base" ] && continue
	v=${old##*/fring-abi-}
	v=${v%.xml}
	[ "${v#*.}" -lt "$minor" ] || continue
	rc=0
	out=$(abidiff "$old" "$probe") || rc=$?
	if [ $((rc & 8)) -ne 0 ] || [ $((rc & 3)) -ne 0 ] ||
	   printf '%s\n' "$out" | grep -Eq \
		'[1-9][0-9]* Removed|deletion|offset changed|renamed|type name changed'; then
		echo "abi: $v -> $major.$minor is not a compatible extension (abidiff $rc):"
		echo "$out"
		status=1
	else
		echo "abi: $v -> $major.$minor only grows"
	fi
done
exit $status
