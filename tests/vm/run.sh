#!/bin/bash
# SPDX-License-Identifier: MIT
# Boot the cached Debian 7.3+ kernel (kernel.sh) under QEMU with virtme-ng
# and run a command in the guest, from the current directory:
#   tests/vm/run.sh [--timeout S] [--accel tcg|kvm] [--] CMD [ARG]...
#   tests/vm/run.sh --shell [--timeout S]      an interactive shell instead
# The guest sees the host's root filesystem read-only (so the repository
# and build tree at their paths), the host's environment (PATH, FRING_*,
# PYTHON*, PYTEST*), fusectl mounted, enable_uring=Y and TMPDIR on a tmpfs
# (guest.sh). CMD's output and exit status come back. --timeout (default
# 600 s) bounds the whole run: past it QEMU is killed by its PID, exit 124.
# Exit 77 with one line when the VM cannot start (no QEMU, virtme-ng or
# kernel). Environment: FRING_VM_QEMU (QEMU binary), FRING_VM_ACCEL
# (tcg|kvm|auto, default auto: accel.sh), FRING_VM_CPUS (2),
# FRING_VM_MEMORY (2G), FRING_VM_NUMA (NUMA nodes, default none: one
# node; N splits the CPUs and the memory evenly, node k gets CPUs
# k*C/N..(k+1)*C/N-1, e.g. FRING_VM_NUMA=2 FRING_VM_CPUS=4: CPUs 0-1 on
# node 0, 2-3 on node 1, 1 GiB each: vng's --numa per node, which rules
# out QEMU's microvm machine, used by vng only with KVM), FRING_VM_CACHE
# (/var/cache/fring-vm), FRING_VM_VERBOSE=1 (show the guest's boot console).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '4,5s/^# *//p' "$0" >&2; exit 2; }
. "$here/skip.sh"

timeout="" shell=0 accel=${FRING_VM_ACCEL:-auto}
while (($#)); do
	case $1 in
	--timeout) [[ ${2:-} =~ ^[0-9]+$ ]] || usage; timeout=$2; shift 2 ;;
	--accel) accel=${2:-}; shift 2 ;;
	--shell) shell=1; shift ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
case $accel in tcg | kvm | auto) ;; *) usage ;; esac
((shell || $#)) || usage

# What virtme-ng needs on the host (tests/setup.sh installs it all).
qemu=$(command -v "${FRING_VM_QEMU:-qemu-system-x86_64}") ||
	skip "no QEMU (${FRING_VM_QEMU:-qemu-system-x86_64}): Debian package qemu-system-x86"
scripts=$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null)
export PATH=$PATH${scripts:+:$scripts}
vng=$(command -v vng) || skip "no vng: pip install virtme-ng"
command -v busybox >/dev/null || skip "no busybox (virtme-ng's initramfs): Debian package busybox-static"
[ -x /lib/systemd/systemd-udevd ] ||
	skip "no systemd-udevd (the guest's script I/O ports): Debian package udev"

kdir=$("$here/kernel.sh" --cached) || exit $?
kimg=$("$here/modules.sh" "$kdir") || exit $?
if [ "$accel" = auto ]; then
	accel=$("$here/accel.sh") || exit $?
fi

scratch=$(mktemp -d /tmp/fring-vm.XXXXXX)
vpid=""
# QEMU writes its PID to $scratch/qemu.pid; only a process whose command
# line names that file is signalled as QEMU.
kill_qemu() {
	local pid
	pid=$(cat "$scratch/qemu.pid" 2>/dev/null) || return 0
	[[ $pid =~ ^[0-9]+$ ]] || return 0
	tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-pidfile $scratch/qemu.pid" || return 0
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	echo "vm: QEMU (pid $pid) killed" >&2
}
tree() { # PID and its descendants
	local c
	echo "$1"
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done
}
# QEMU first; then, if vng (our child) has not ended 10 s later, vng and
# what it started, each by its PID.
stop_vm() {
	kill_qemu
	[ -n "$vpid" ] || return 0
	for _ in $(seq 100); do
		kill -0 "$vpid" 2>/dev/null || return 0
		sleep 0.1
	done
	# shellcheck disable=SC2046
	kill -TERM $(tree "$vpid") 2>/dev/null
	kill_qemu
}
cleanup() {
	stop_vm
	rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# the host environment and the command for guest.sh
{
	for v in PATH HOME LANG LC_ALL $(compgen -e | grep -E '^(FRING_|PYTHON|PYTEST)'); do
		[ -n "${!v+x}" ] && declare -p "$v"
	done
	printf 'export FRING_VM_CWD=%q\n' "$PWD"
} > "$scratch/env"
((shell)) || printf '%s\0' "$@" > "$scratch/cmd"

# udev would load a driver for every emulated PC device (AHCI, CD-ROM,
# watchdogs, KVM...) from /lib/modules, which takes many seconds under TCG:
# keep it from loading these by alias (modprobe NAME still works).
noload=ahci,sr_mod,sg,i2c_i801,iTCO_wdt,i6300esb,lpc_ich,intel_pmc_bxt,kvm_amd,kvm_intel,powernow_k8,pcspkr,psmouse,serio_raw,evdev,button,qemu_fw_cfg,ccp,aesni_intel,ghash_clmulni_intel,crc32c_intel,joydev
args=(--run "$kimg" --qemu "$qemu" --cpus "${FRING_VM_CPUS:-2}" --memory "${FRING_VM_MEMORY:-2G}"
      --rwdir="$scratch" --append "fuse.enable_uring=1 modprobe.blacklist=$noload fring_vm_scratch=$scratch")
# FRING_VM_NUMA=N: N nodes, the CPUs and the memory split evenly between
# them (both must divide; vng wants the nodes' memory to add up to --memory).
numa=${FRING_VM_NUMA:-}
if [ -n "$numa" ] && [ "$numa" != 1 ]; then
	cpus=${FRING_VM_CPUS:-2} mem=${FRING_VM_MEMORY:-2G}
	[[ $numa =~ ^[1-9][0-9]*$ && $cpus =~ ^[1-9][0-9]*$ ]] ||
		{ echo "vm: FRING_VM_NUMA ($numa) and FRING_VM_CPUS ($cpus) must be numbers" >&2; exit 2; }
	case $mem in
	*[0-9]G) mib=$((${mem%G} * 1024)) ;;
	*[0-9]M) mib=${mem%M} ;;
	*) echo "vm: FRING_VM_MEMORY ($mem) must be NG or NM with FRING_VM_NUMA" >&2; exit 2 ;;
	esac
	((cpus % numa == 0 && mib % numa == 0)) ||
		{ echo "vm: FRING_VM_NUMA=$numa does not divide $cpus CPUs and $mib MiB evenly" >&2; exit 2; }
	for ((k = 0; k < numa; k++)); do
		first=$((k * cpus / numa)) last=$(((k + 1) * cpus / numa - 1))
		args+=(--numa "$((mib / numa))M,cpus=$first-$last")
	done
fi
[ "$accel" = tcg ] && args+=(--disable-kvm)
[ "${FRING_VM_VERBOSE:-0}" = 1 ] && args+=(--verbose)
if ((shell)); then
	args+=(--shell "$here/guest.sh")
else
	args+=(--exec "$here/guest.sh")
fi
args+=(--qemu-opts="-pidfile $scratch/qemu.pid") # must be the last option

start=$SECONDS
if ((shell)) && [ -z "$timeout" ]; then
	"$vng" "${args[@]}" # a person ends it
	exit $?
fi
timeout=${timeout:-600}
# A guest that ends without the command's exit status (seen once in a CI
# run: vng exit 255 after 11 s, before the command started) is booted once
# more, within the same time bound.
for attempt in 1 2; do
	if ((shell)); then
		"$vng" "${args[@]}" <&0 &
	else
		# through pipes: QEMU reopens its stdout and stderr, which
		# truncates them when they are files
		"$vng" "${args[@]}" < /dev/null > >(cat) 2> >(cat >&2) &
	fi
	vpid=$!
	timed_out=0
	while kill -0 "$vpid" 2>/dev/null; do
		if ((SECONDS - start >= timeout)); then
			timed_out=1
			echo "vm: timed out after ${timeout} s" >&2
			stop_vm
			break
		fi
		sleep 0.2
	done
	wait "$vpid"
	rc=$?
	vpid=""
	wait # for the output pipes
	((timed_out)) && exit 124
	((shell)) && exit $rc
	if [ -s "$scratch/rc" ]; then
		exit "$(cat "$scratch/rc")"
	fi
	again=""
	((attempt == 1 && SECONDS - start < timeout / 2)) && again="; booting it once more"
	echo "vm: the guest ended without the command's exit status (vng exit $rc; FRING_VM_VERBOSE=1 shows its console)$again" >&2
	[ -n "$again" ] || break
	rm -f "$scratch/qemu.pid"
done
exit $((rc ? rc : 1))
