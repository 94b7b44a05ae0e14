#!/usr/bin/env bash
# vafa-slice: Vafa et al.'s pipeline, token head and supervised force probes, on a CPU-sized slice of their
# distribution (1-3 planets within 5 AU, weekly, barycentric).
#
# simulate -> train a softmax and an LSSAR model of a CPU preset at equal token budgets -> evaluate ->
# force probe + symbolic regression -> compare with Newton -> report. Sized (experiments/configs/vafa-slice.json)
# for at most 20 minutes on 2 CPU cores once set up. Ends by printing where the report is and the side-by-side
# table of recovered laws against Newton. --smoke runs every stage at tiny size in a couple of minutes (CI).
# Its force probes cannot tell a model that learned gravity from one that learned nothing (an untrained control's
# probe recovers its labels' law as well; docs/learned-gravity.md); the quickstart answers with the behavioural
# test instead. Run folder: runs/vafa-slice (or --out DIR); rerunning resumes it. See docs/experiments.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"
launch_experiment vafa-slice "$@"
