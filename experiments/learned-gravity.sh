#!/usr/bin/env bash
# learned-gravity: the behavioural test of learned gravity (docs/design.md section 6c) in the locality regime:
# each model's own predictions on the ladder, its implied acceleration and the curvature transplant, with the
# controls that learn nothing; no probe is fitted. `experiments/lib/behaviour_table.py RUN` prints the table.
# Config: experiments/configs/learned-gravity.json; --smoke runs every stage at tiny size; --seeds N trains
# every model N times. Run folder: runs/learned-gravity (or --out DIR); rerunning resumes it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"
launch_experiment learned-gravity "$@"
