# SPDX-License-Identifier: MIT
# skip REASON...: the Linux 7.3 guest cannot start here (sourced by
# run.sh, kernel.sh, modules.sh, accel.sh). One line saying why, then exit
# 77 (ctest: skipped) on a developer's machine, or exit 1 under
# FRING_STRICT=1 (.ci/run): CI must run the VM suite, not pass without it.
skip() {
	if [ "${FRING_STRICT:-}" = 1 ]; then
		echo "vm: FAILED (FRING_STRICT=1, the VM suite must run): $*" >&2
		exit 1
	fi
	echo "vm: skipped: $*" >&2
	exit 77
}
