#!/usr/bin/env bash
# The vafa-slice experiment's probe stage with the law-search engine as it is and as it was before constants were fitted
# on batches and exact fits stopped the search, on the same trained model and probe data, without the probe's
# wall-time limit (so that neither engine is cut short): wall seconds of each search and the Newton galaxies
# it found, and the ratio of the two stages. The earlier engine runs on the same binary unless
# --earlier-orbitlaw names an older build (bench/sr/probe_stage_bench.py says how to make one).
#   bash bench/sr/probe_stage.sh RUN [--model softmax] [--earlier-orbitlaw BINARY] [--out DIR]
# RUN is a finished vafa-slice run folder (bash experiments/vafa-slice.sh --out RUN). About 10 minutes per model
# on 2 cores. Needs a built orbitlaw binary: $ORBITLAW_BUILD_DIR/app/orbitlaw (default build/app/orbitlaw) and
# the project's .venv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ORBITLAW_BUILD_DIR:-$root/build}"
exec "$root/.venv/bin/python" "$root/bench/sr/probe_stage_bench.py" --orbitlaw "$build/app/orbitlaw" "$@"
