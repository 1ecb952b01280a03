#!/bin/bash
# SPDX-License-Identifier: MIT
# Prepare a fresh Debian 12 machine (as root) to build and test fring:
# build and test dependencies (fio, stress-ng: integrity, fio also
# tests/tools/tsan.sh; clang-14 and its runtime: libFuzzer; libtsan2: gcc's
# ThreadSanitizer, tests/tools/tsan.sh; valgrind: leak checks; abigail-tools: the
# ABI check against abi/baseline; libclang1-14: bindgen for the Rust
# binding; cffi from PyPI: the Python binding; python3-venv: its install
# test; qemu-system-x86, kmod,
# busybox-static, udev, file and virtme-ng from PyPI: the Linux 7.3 VM
# suite, tests/vm; scdoc: the man pages, man/; man-db: their check;
# ceph-mon, ceph-mgr, ceph-osd, radosgw, ceph-common: the Ceph gateway of
# the s3 suite, tests/s3 (they install non-interactively and start no
# daemon: their units are templates without instances, and the tests run
# every daemon from a temporary directory with its own -c CONF),
# clang-format: tests/tools/format_check.sh;
# libcurl4-openssl-dev, libxml2-dev: plugins/s3 (SigV4 signing, listings);
# the fuse module, FUSE-over-io_uring.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "setup: run as root" >&2; exit 1; }

packages=(cmake ninja-build gcc pkg-config libfuse3-dev fuse3 libyaml-dev
	  liburing-dev libnuma-dev libcriterion-dev python3 python3-pytest python3-venv attr
	  fio stress-ng valgrind libtsan2 clang-14 libclang-rt-14-dev util-linux
	  abigail-tools libclang1-14 scdoc man-db libsystemd-dev systemd
	  qemu-system-x86 kmod busybox-static udev file
	  ceph-mon ceph-mgr ceph-osd radosgw ceph-common clang-format
	  libcurl4-openssl-dev libxml2-dev)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if ((${#missing[@]})); then
	echo "setup: installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The Python binding's tests run with the python3 on PATH (as ctest's).
python3 -c 'import cffi' 2>/dev/null || python3 -m pip install -q cffi ||
	echo "setup: pip install cffi failed: the Python binding tests skip" >&2
# The VM suite boots its kernel with virtme-ng (vng), from PyPI.
python3 -c 'import virtme_ng' 2>/dev/null || python3 -m pip install -q virtme-ng==1.42 ||
	echo "setup: pip install virtme-ng failed: the VM suite skips" >&2
command -v cargo >/dev/null || [ -x "$HOME/.cargo/bin/cargo" ] ||
	echo "setup: no cargo (rustup): the Rust binding tests skip" >&2

# The module may be built in (no modprobe needed) or absent from a container.
modprobe fuse 2>/dev/null || true
[ -c /dev/fuse ] || { echo "setup: /dev/fuse is missing" >&2; exit 1; }

# FUSE-over-io_uring is off by default; fring falls back to /dev/fuse without it.
uring=/sys/module/fuse/parameters/enable_uring
if [ -w "$uring" ]; then
	echo Y > "$uring" || echo "setup: could not enable $uring (using /dev/fuse)" >&2
fi
echo "setup: ready"
