#!/usr/bin/env bash
# solar-system: the force-vector figure: true vs predicted force arrows along each planet's orbit in our solar system.
# Config: experiments/configs/solar-system.json; --smoke runs every stage at tiny size. Run folder: runs/solar-system (or
# --out DIR); rerunning resumes it. See docs/experiments.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"
launch_experiment solar-system "$@"
