#!/usr/bin/env bash
# locality: where the attention mechanism puts a transformer between local (Newtonian) and global (Keplerian)
# prediction, in Liu et al.'s two-body regime with the regression head: sliding-window softmax (2, 4, 16
# positions), full softmax, LSSA, LSSAR (p = 15, 3), and window 2 in a 1/r^2.5 universe, probed for the
# planet's acceleration.
# Config: experiments/configs/locality.json; --smoke runs every stage at tiny size. Run folder: runs/locality (or
# --out DIR); rerunning resumes it. See docs/experiments.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"
launch_experiment locality "$@"
