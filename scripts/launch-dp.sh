#!/usr/bin/env bash
# Starts N copies of a command as one data-parallel job on this machine, the way torchrun does: each gets
# RANK, LOCAL_RANK (0..N-1), WORLD_SIZE=LOCAL_WORLD_SIZE=N, MASTER_ADDR and MASTER_PORT. Waits for all; if one
# fails, the others are stopped (they would otherwise wait at their next collective until its timeout) and
# the launcher exits with the first failure's status.
#
#   scripts/launch-dp.sh N [--] COMMAND [ARGS...]
#   scripts/launch-dp.sh 2 -- build/app/orbitlaw train --data data.h5 --out runs/dp
#
# MASTER_ADDR (default 127.0.0.1) and MASTER_PORT (default: a random port in 20000..29999) are taken from the
# environment when set. Rank 0's output passes through unchanged; other ranks' lines are prefixed "[rank R]".
set -euo pipefail

usage() {
  echo "usage: $0 N [--] COMMAND [ARGS...]   (N >= 1 processes)" >&2
  exit 2
}
[[ $# -ge 2 ]] || usage
world=$1
shift
[[ $world =~ ^[1-9][0-9]*$ ]] || usage
[[ $1 == "--" ]] && shift
[[ $# -ge 1 ]] || usage

export MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
export MASTER_PORT=${MASTER_PORT:-$((20000 + RANDOM % 10000))}
export WORLD_SIZE=$world LOCAL_WORLD_SIZE=$world

pids=()
stop_all() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap 'stop_all; exit 130' INT TERM

for ((rank = 0; rank < world; ++rank)); do
  if ((rank == 0)); then
    RANK=$rank LOCAL_RANK=$rank "$@" &
  else
    RANK=$rank LOCAL_RANK=$rank "$@" > >(sed -u "s/^/[rank $rank] /") 2>&1 &
  fi
  pids+=($!)
done

# Poll rather than `wait -n`: a failed rank must stop the others at once, whichever rank it is.
status=0
running=("${pids[@]}")
while ((${#running[@]} > 0)); do
  still=()
  for pid in "${running[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      still+=("$pid")
      continue
    fi
    rc=0
    wait "$pid" || rc=$?
    if ((rc != 0 && status == 0)); then
      status=$rc
      echo "launch-dp: a rank exited with status $rc; stopping the others" >&2
      stop_all
    fi
  done
  running=("${still[@]+"${still[@]}"}")
  ((${#running[@]} == 0)) || sleep 0.2
done
exit "$status"
