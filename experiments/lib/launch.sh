# shellcheck shell=bash
# Sourced by experiments/<name>.sh: finds the Python the experiment driver runs on and hands the command line
# to it (experiments/lib/driver.py does the rest). The Python is ORBITLAW_PYTHON, or the project's .venv.
launch_experiment() {
  local root python
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  python="${ORBITLAW_PYTHON:-$root/.venv/bin/python}"
  if [ ! -x "$python" ]; then
    echo "experiment: error: no Python at $python; run 'bash scripts/setup.sh' first" >&2
    exit 1
  fi
  exec "$python" "$root/experiments/lib/driver.py" "$@"
}
