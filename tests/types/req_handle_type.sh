#!/bin/sh
# SPDX-License-Identifier: MIT
# The compiler keeps the plugin's request handle (fring_req *) and the
# runtime's request (struct fring_request *) apart: req_handle_mix.c with
# MIX=0 (every conversion written out) builds, and each MIX=1..4 (one
# conversion missing) fails with incompatible-pointer-types.
# usage: req_handle_type.sh CC SRC COMPILER-ARGS...
cc=$1 src=$2
shift 2
fail() { echo "req_handle_type: $*" >&2; exit 1; }

out=$("$cc" -std=gnu11 -fsyntax-only -Wall -Werror=incompatible-pointer-types \
	"$@" -DMIX=0 "$src" 2>&1) ||
	fail "the control (MIX=0) does not build (is the runtime's request" \
		"renamed to struct fring_request? the script is in the message" \
		"of the commit that did it): $out"
for mix in 1 2 3 4; do
	if out=$("$cc" -std=gnu11 -fsyntax-only -Werror=incompatible-pointer-types \
		"$@" -DMIX=$mix "$src" 2>&1); then
		fail "MIX=$mix built: the runtime's request and the plugin's" \
			"handle are one C type again (core/request/req.h)"
	fi
	echo "$out" | grep -q 'incompatible-pointer-types' ||
		fail "MIX=$mix failed for another reason: $out"
	echo "MIX=$mix: refused ($(echo "$out" | grep -m1 'error:' | sed 's/.*error: //'))"
done
