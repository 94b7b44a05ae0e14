#!/usr/bin/env bash
# One published-protocol law-search restart on probe-sized galaxies (1000 rows of a noisy Newtonian force):
# `orbitlaw sr` with constants fitted on every row (the probe's setting before batches) against 128-row batches,
# and pyoperon, on the same galaxy files; prints time ratios and recovery. Installs the pinned pyoperon first.
#   bash bench/sr/galaxies.sh [--galaxies 5] [--rows 1000] [--noise 0.12] [--batch 128] [--out FILE.json]
# Needs a built orbitlaw binary: $ORBITLAW_BUILD_DIR/app/orbitlaw (default build/app/orbitlaw).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ORBITLAW_BUILD_DIR:-$root/build}"
"$root/.venv/bin/pip" install --quiet pyoperon==0.6.2
exec "$root/.venv/bin/python" "$root/bench/sr/galaxy_bench.py" --orbitlaw "$build/app/orbitlaw" "$@"
