#!/bin/bash
# SPDX-License-Identifier: MIT
# Integrity soak: the CI checks of test_integrity.py, run much longer
# (README.md in this directory). As root, after building:
#   tests/integrity/soak.sh [BUILD_DIR [PYTEST_ARGS...]]
# BUILD_DIR defaults to ./build. Sizes come from the environment:
#   FSXR_OPS (1000000), FSXR_DIRECT_OPS (200000), FSXR_LARGE_OPS (50000),
#   FSXR_SEED (from the clock), FIO_SIZE (1g), STRESS_TIME (300 seconds).
# Example, memfs only, another seed:
#   FSXR_SEED=42 tests/integrity/soak.sh build -k memfs
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "soak: run as root (FUSE mounts)" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
shift $(($# > 0 ? 1 : 0))
for tool in "$build/bin/fring" "$build/tests/fsxr"; do
	[ -x "$tool" ] || { echo "soak: $tool missing: build first" >&2; exit 1; }
done

export FRING_BIN=$build/bin/fring
export FRING_PLUGIN_DIR=$build/lib/fring/plugins
export FSXR_BIN=$build/tests/fsxr
export PYTHONDONTWRITEBYTECODE=1
export FSXR_OPS=${FSXR_OPS:-1000000}
export FSXR_DIRECT_OPS=${FSXR_DIRECT_OPS:-200000}
export FSXR_LARGE_OPS=${FSXR_LARGE_OPS:-50000}
export FSXR_SEED=${FSXR_SEED:-$(date +%s)}
export FIO_SIZE=${FIO_SIZE:-1g}
export STRESS_TIME=${STRESS_TIME:-300}

echo "soak: seed $FSXR_SEED, fsxr $FSXR_OPS ops (O_DIRECT $FSXR_DIRECT_OPS," \
	"large $FSXR_LARGE_OPS)," \
	"fio $FIO_SIZE, stress-ng ${STRESS_TIME}s per target"
cd "$here"
exec nice python3 -m pytest -v -s -p no:cacheprovider --durations=0 test_integrity.py "$@"
