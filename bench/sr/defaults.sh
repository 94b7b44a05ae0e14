#!/usr/bin/env bash
# The engine at its default settings (operators, loss, selection): non-integer power laws and square-root forms
# of up to three variables, noiseless, and Newton's law with 1% noise in ten seeds; 30 s per search.
#   bash bench/sr/defaults.sh [--time 30] [--seeds 3] [--noisy-seeds 10] [--out FILE.json]
#     [--only vis-viva,power] [--first-seed 3] [--search-seeds 4]   (more searches of some cases)
# About 6 minutes (5 min 48 s measured) on one core. Needs a built orbitlaw binary: $ORBITLAW_BUILD_DIR/app/orbitlaw
# (default build/app/orbitlaw) and the project's .venv (numpy).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ORBITLAW_BUILD_DIR:-$root/build}"
exec "$root/.venv/bin/python" "$root/bench/sr/defaults_bench.py" --orbitlaw "$build/app/orbitlaw" "$@"
