#!/usr/bin/env bash
# ablations: LSSAR p = 15 vs p = 3, the sliding-window softmax control, and model size, at equal token budgets.
# Config: experiments/configs/ablations.json; --smoke runs every stage at tiny size. Run folder: runs/ablations (or
# --out DIR); rerunning resumes it. See docs/experiments.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"
launch_experiment ablations "$@"
