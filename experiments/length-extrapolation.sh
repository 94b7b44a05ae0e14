#!/usr/bin/env bash
# length-extrapolation: softmax, LSSA and LSSAR (RoPE) trained at one context, evaluated at 1x..16x it (eval's length-extrapolation curves).
# Config: experiments/configs/length-extrapolation.json; --smoke runs every stage at tiny size. Run folder: runs/length-extrapolation (or
# --out DIR); rerunning resumes it. See docs/experiments.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"
launch_experiment length-extrapolation "$@"
