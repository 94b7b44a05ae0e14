#!/usr/bin/env bash
# Symbolic regression side by side on Feynman equations: `orbitlaw sr` against pyoperon (constant optimisation
# on) and gplearn, each on 2 cores with the same operators and data. Installs the pinned peers into .venv first.
#   bash bench/sr/run.sh [--time 10] [--rows 500] [--noise 0,0.001,0.01,0.1] [--only I.9.18] [--out FILE.json]
# SRBench's four noise levels by default: about 45 minutes for the 20 equations at --time 10.
# Needs a built orbitlaw binary: $ORBITLAW_BUILD_DIR/app/orbitlaw (default build/app/orbitlaw).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ORBITLAW_BUILD_DIR:-$root/build}"
"$root/.venv/bin/pip" install --quiet pyoperon==0.6.2 gplearn==0.4.3
exec "$root/.venv/bin/python" "$root/bench/sr/feynman_bench.py" --orbitlaw "$build/app/orbitlaw" "$@"
