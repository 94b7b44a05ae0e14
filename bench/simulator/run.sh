#!/usr/bin/env bash
# Outer solar system (Sun, Jupiter..Neptune), 1000 Jupiter orbits: our integrators beside REBOUND's IAS15 and
# WHFast on identical initial conditions, one core each, median of 3; then dataset throughput for vafa-paper
# on 2 threads. Usage: bash bench/simulator/run.sh [build_dir] [orbits] [throughput_systems]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
orbits="${2:-1000}"
systems="${3:-1000}"
python="$root/.venv/bin/python"
REBOUND_VERSION=4.4.3

"$python" -c "import rebound, sys; sys.exit(rebound.__version__ != '$REBOUND_VERSION')" 2>/dev/null ||
  "$root/.venv/bin/pip" install --quiet "rebound==$REBOUND_VERSION"
cmake --build "$build" --target bench_simulator -j2 >/dev/null 2>&1

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Repeats alternate between us and REBOUND so that a change in machine load hits both alike.
for _ in 1 2 3; do
  "$build/bench/simulator/bench_simulator" outer "$orbits" 1 "$work/ic.json" >> "$work/ours.jsonl"
  "$python" "$root/bench/simulator/rebound_peer.py" "$work/ic.json" 1 >> "$work/rebound.jsonl"
done
"$build/bench/simulator/bench_simulator" throughput "$systems" 2 vafa-paper rkf78 > "$work/throughput.jsonl"
"$build/bench/simulator/bench_simulator" throughput "$systems" 2 vafa-paper kepler >> "$work/throughput.jsonl"

"$python" - "$work" "$orbits" <<'PY'
import json, sys
work, orbits = sys.argv[1], sys.argv[2]
load = lambda name: [json.loads(line) for line in open(f"{work}/{name}") if line.strip()]
def medians(rows):
    names = list(dict.fromkeys(r["name"] for r in rows))
    out = []
    for name in names:
        runs = sorted((r for r in rows if r["name"] == name), key=lambda r: r["seconds"])
        out.append(dict(runs[len(runs) // 2]))
    return out
ours, peers = medians(load("ours.jsonl")), medians(load("rebound.jsonl"))
ias15 = next(p for p in peers if "IAS15" in p["name"])
import os
print(f"load average at the end: {os.getloadavg()[0]:.1f} (2-core machine; times are comparable only within one run)")
print(f"outer solar system, {orbits} Jupiter orbits, one core, median of 3 interleaved runs "
      f"(REBOUND {peers[0]['rebound_version']})")
print(f"{'integrator':38s} {'rel. energy error':>18s} {'wall s':>9s} {'time / IAS15':>13s}")
for r in peers + ours:
    print(f"{r['name']:38s} {r['energy_error']:18.2e} {r['seconds']:9.3f} {r['seconds'] / ias15['seconds']:13.2f}")
goal = [r for r in ours if r["energy_error"] <= 1e-13]
if goal:
    best = min(goal, key=lambda r: r["seconds"])
    print(f"IAS15 accuracy class (<= 1e-13) reached by {best['name']} at {best['seconds'] / ias15['seconds']:.2f}x IAS15's time")
else:
    best = min(ours, key=lambda r: r["energy_error"])
    print(f"IAS15 accuracy class (<= 1e-13) NOT reached; best: {best['name']} {best['energy_error']:.2e} "
          f"at {best['seconds'] / ias15['seconds']:.2f}x IAS15's time")
for t in load("throughput.jsonl"):
    print(f"dataset throughput ({t['name']}, {t['threads']} threads): {t['systems_per_second']:.1f} systems/s "
          f"({t['systems']} systems in {t['seconds']:.2f} s, {t['bytes'] / t['systems'] / 1024:.1f} KiB/system, "
          f"{t['rejected']} draws rejected)")
PY
