#!/usr/bin/env bash
# attention-axis: every attention kind at one budget and 5 seeds, with a star of fixed mass and with one whose
# mass must be inferred from the track, judged by the behavioural test of learned gravity (docs/design.md
# section 6c); the report's answer gives each kind's verdict and the differences between kinds with 95% intervals
# over seeds. `experiments/lib/behaviour_table.py RUN` prints the table. Config:
# experiments/configs/attention-axis.json; --smoke runs every stage at tiny size; --models A,B,... a subset.
# Run folder: runs/attention-axis (or --out DIR); rerunning resumes it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"
launch_experiment attention-axis "$@"
