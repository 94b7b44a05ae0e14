#!/usr/bin/env bash
# Builds orbitlaw (Release, warnings as errors) and runs every test suite through CTest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ORBITLAW_BUILD_DIR:-$root/build}"
jobs="$(nproc)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_COMPILE_WARNING_AS_ERROR=ON ${ORBITLAW_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$jobs"
cd "$build"
# CTest runs one suite per core; LibTorch would otherwise start one thread per core in each of them.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
ctest --output-on-failure -j "$jobs" --timeout 900 "$@"
