#!/usr/bin/env bash
# locality: where the attention mechanism puts a transformer between local (Newtonian) and global (Keplerian)
# prediction: sliding-window softmax (4, 6, 16 positions), full softmax, LSSA, LSSAR (p = 15, 3), probed for the
# planet's acceleration.
# Config: experiments/configs/locality.json; --smoke runs every stage at tiny size. Run folder: runs/locality (or
# --out DIR); rerunning resumes it. See docs/experiments.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"
launch_experiment locality "$@"
