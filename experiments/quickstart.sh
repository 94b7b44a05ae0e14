#!/usr/bin/env bash
# quickstart: the README's main command (bash scripts/setup.sh && bash experiments/quickstart.sh).
#
# simulate -> train a softmax and an LSSAR model of a CPU preset at equal token budgets -> evaluate ->
# force probe + symbolic regression -> compare with Newton -> report. Sized (experiments/configs/quickstart.json)
# for at most 20 minutes on 2 CPU cores once set up. Ends by printing where the report is and the side-by-side
# table of recovered laws against Newton. --smoke runs every stage at tiny size in a couple of minutes (CI).
# Run folder: runs/quickstart (or --out DIR); rerunning resumes it. See docs/experiments.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"
launch_experiment quickstart "$@"
