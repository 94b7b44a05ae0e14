#!/usr/bin/env bash
# quickstart: the README's main command (bash scripts/setup.sh && bash experiments/quickstart.sh).
#
# Does a transformer trained only on a planet's positions learn Newton's law, judged by its own predictions?
# simulate one-planet systems (fixed star, weekly, heliocentric) -> train a full-softmax and an LSSAR p = 15
# model predicting the step's change, and an untrained control -> eval: the behavioural test of docs/design.md
# section 6c (ladder, implied acceleration, curvature transplant, verdict) and a symbolic-regression search on
# each model's implied accelerations -> report. Sized (experiments/configs/quickstart.json) for at most 10 minutes
# on 2 CPU cores once built. Ends by printing where the report is and the verdict table. --seeds 3 gives the
# verdict its seeds; --smoke runs every stage at tiny size in seconds (CI).
# Run folder: runs/quickstart (or --out DIR); rerunning resumes it. See docs/learned-gravity.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"
launch_experiment quickstart "$@"
