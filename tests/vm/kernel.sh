#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian kernel the VM suite boots: the newest linux-binary-ABI-amd64
# of version 7.3 or later (with its linux-modules-ABI-amd64 of the same
# version) in the experimental or unstable suite of the machine's own Debian
# mirror, downloaded with a private apt configuration and extracted under
# $FRING_VM_CACHE (default /var/cache/fring-vm)/VERSION/root. Nothing is
# installed and the machine's apt sources are not touched.
#   kernel.sh           look for a newer kernel, download it if there is one
#   kernel.sh --cached  use the newest cached kernel; download only if none
# Prints the kernel's cache directory on stdout and one line naming it on
# stderr. With the mirror unreachable the newest cached kernel is used; with
# none cached: one line saying why, exit 77 (ctest: skipped).
set -euo pipefail
cache=${FRING_VM_CACHE:-/var/cache/fring-vm}
min=7.3
. "$(dirname "$0")/skip.sh"
for t in apt-get apt-cache dpkg dpkg-deb timeout; do
	command -v $t >/dev/null || skip "no $t on this machine"
done
apt=$cache/apt
mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/etc"
exec 9> "$cache/.lock" # one kernel.sh or modules.sh at a time
flock -w 1800 9 || { echo "vm: $cache/.lock is held by another run" >&2; exit 1; }

# the newest complete cached version (a finished download has "ready")
newest_cached() {
	local best="" f v
	for f in "$cache"/*/ready; do
		[ -e "$f" ] || continue
		v=$(basename "$(dirname "$f")")
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
	done
	echo "$best"
}

# "URI<TAB>KEYRING" of the machine's Debian entries for the release codename
# (deb822 .sources and one-line .list files).
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
mirrors() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		awk -v cn="$codename" '
		function flush(i) { if (ok && deb) for (i in u) print u[i] "\t" key
				    ok = deb = 0; key = ""; delete u }
		/^[ \t]*$/ { flush(); next }
		/^[ \t]*#/ { next }
		tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
		tolower($1) == "uris:" { for (i = 2; i <= NF; i++) u[i] = $i }
		tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == cn) ok = 1 }
		tolower($1) == "signed-by:" { key = $2 }
		END { flush() }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] || continue
		sed -n -E "s/^deb[ \t]+(\[([^]]*)\][ \t]+)?([^ \t]+)[ \t]+${codename}[ \t].*/\3\t\2/p" "$f" |
			sed -E 's/\t.*signed-by=([^ ]+).*/\t\1/; s/\t[^/].*$/\t/'
	done
}
: > "$apt/etc/sources.list"
while IFS=$'\t' read -r uri key; do
	# Debian's archive only: its keyring, or a URI ending in /debian
	case "$key $uri" in
	*debian-archive-keyring* | */debian | */debian/) ;;
	*) continue ;;
	esac
	for suite in experimental unstable; do
		echo "deb${key:+ [signed-by=$key]} $uri $suite main" >> "$apt/etc/sources.list"
	done
done < <(mirrors | sort -u)

opts=(-o Dir::Etc::SourceList="$apt/etc/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt" -o Dir::Cache::archives="$apt/archives"
      -o Debug::NoLocking=1 -o APT::Architecture=amd64 -o APT::Sandbox::User=root
      -o Acquire::Retries=2 -o Acquire::http::Timeout=30)
versions() { apt-cache "${opts[@]}" madison "$1" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}'; }

have=$(newest_cached)
pick="" series=""
if [ "${1:-}" = --cached ] && [ -n "$have" ]; then
	pick=$have
elif [ ! -s "$apt/etc/sources.list" ]; then
	[ -n "$have" ] || skip "no Debian mirror for '$codename' in the machine's apt sources"
	pick=$have
else
	timeout 240 apt-get "${opts[@]}" -q update > "$apt/update.log" 2>&1 || true
	# every linux-binary-ABI-amd64 (ABI 7.3 in experimental, 7.3.1+deb14
	# in unstable) of 7.3 or later with a linux-modules-ABI-amd64 of the
	# same version; the newest version wins
	for pkg in $(apt-cache "${opts[@]}" pkgnames linux-binary- 2>/dev/null |
		     grep -E '^linux-binary-[0-9]+\.[0-9]+(\.[0-9]+)?(\+deb[0-9]+)?-amd64$'); do
		abi=${pkg#linux-binary-} abi=${abi%-amd64}
		dpkg --compare-versions "$(grep -oE '^[0-9]+\.[0-9]+' <<< "$abi")" ge "$min" || continue
		mods=$(versions "linux-modules-$abi-amd64")
		for v in $(versions "$pkg"); do
			grep -qxF -- "$v" <<< "$mods" || continue
			if [ -z "$pick" ] || dpkg --compare-versions "$v" gt "$pick"; then
				pick=$v series=$abi
			fi
		done
	done
	# apt's first error and its reason (the indented line after it)
	why=$(grep -m1 -A1 -E '^(Err|E):' "$apt/update.log" | tr -s ' \n' ' ' | sed 's/ $//' || true)
	if [ -n "$pick" ] && [ -n "$why" ]; then
		echo "vm: Debian's package lists could not be refreshed ($why): using the last ones" >&2
	elif [ -z "$pick" ]; then
		if [ -n "$why" ]; then
			[ -n "$have" ] || skip "no kernel cached and Debian's package lists cannot be fetched ($why)"
			echo "vm: Debian's package lists cannot be fetched ($why): using the cached kernel" >&2
		else
			[ -n "$have" ] || skip "no linux-binary-7.N-amd64 (N >= 3) in Debian experimental or unstable"
		fi
		pick=$have
	fi
fi

if [ ! -e "$cache/$pick/ready" ]; then
	echo "vm: downloading Debian's linux-binary-$series-amd64 and linux-modules-$series-amd64 $pick" >&2
	tmp=$cache/.download
	rm -rf "$tmp" && mkdir -p "$tmp/root"
	rm -f "$apt/archives/"*.deb
	if ! (cd "$apt/archives" && timeout 600 apt-get "${opts[@]}" -qq download \
		"linux-binary-$series-amd64=$pick" "linux-modules-$series-amd64=$pick") >&2; then
		rm -rf "$tmp" "$apt/archives/"*.deb
		[ -n "$have" ] || skip "download of Debian kernel $pick failed"
		echo "vm: download failed, using the cached kernel $have" >&2
		pick=$have
	else
		for deb in "$apt/archives/"*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
		rm -f "$apt/archives/"*.deb
		krel=$(ls "$tmp/root/usr/lib/modules")
		[ -f "$tmp/root/usr/lib/modules/$krel/vmlinuz" ] ||
			{ echo "vm: no usr/lib/modules/*/vmlinuz in Debian kernel $pick" >&2; exit 1; }
		echo "$krel" > "$tmp/krel"
		touch "$tmp/ready"
		rm -rf "${cache:?}/$pick" && mv "$tmp" "$cache/$pick"
		# one kernel is kept: the older ones go
		for f in "$cache"/*/ready; do
			d=$(dirname "$f")
			[ "$d" = "$cache/$pick" ] || rm -rf "$d"
		done
	fi
fi
dpkg --compare-versions "$pick" ge "$min~" || skip "kernel $pick is older than $min"
echo "vm: Debian kernel $pick ($(cat "$cache/$pick/krel")), cached in $cache/$pick" >&2
echo "$cache/$pick"
