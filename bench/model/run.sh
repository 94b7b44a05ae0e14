#!/usr/bin/env bash
# Training throughput and peak memory of the LibTorch GPT against the same model in Python PyTorch
# (gpt_reference.py): same preset, attention kind, batch and threads, measured in the same run. Each side
# runs in its own process (alternating, REPEATS times); the figure per side is the median step time of its
# best-of-repeats process after warm-up. Prints a table with the ratio C++ / Python (> 1: C++ faster).
# The C++ side keeps freed activations in the heap (orbitlaw::retain_freed_memory, as the orbitlaw tool does);
# Python runs with glibc's defaults, as a PyTorch user gets it. Given the same setting through
# GLIBC_TUNABLES=glibc.malloc.mmap_threshold=...:glibc.malloc.trim_threshold=..., Python gains about 6%.
#
#   bash bench/model/run.sh [BUILD_DIR]       env: PRESET (small), KINDS, BATCH (8), THREADS (2), STEPS (10),
#                                             WARMUP (3), REPEATS (2)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/build}"
python="${ORBITLAW_PYTHON:-$root/.venv/bin/python}"
bench="$build/bench/model/bench_model_train"
preset="${PRESET:-small}"
kinds="${KINDS:-softmax lssa lssar ssmax window}"
batch="${BATCH:-8}"; threads="${THREADS:-2}"; steps="${STEPS:-10}"; warmup="${WARMUP:-3}"; repeats="${REPEATS:-2}"
if [[ ! -x "$bench" ]]; then
  cmake --build "$build" --target bench_model_train -j"$threads" >/dev/null
fi
args=(--preset "$preset" --batch "$batch" --threads "$threads" --steps "$steps" --warmup "$warmup")
results="$(mktemp)"
trap 'rm -f "$results"' EXIT
for kind in $kinds; do
  for ((r = 0; r < repeats; r++)); do
    "$bench" --kind "$kind" "${args[@]}" >>"$results"
    "$python" "$here/gpt_reference.py" --kind "$kind" "${args[@]}" >>"$results"
  done
done
"$python" - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
best = {}
for r in rows:  # best (fastest) process per side and kind; peak memory: the largest seen
    key = (r["kind"], r["impl"])
    b = best.setdefault(key, dict(r))
    if r["tokens_per_s"] > b["tokens_per_s"]:
        peak = max(b["peak_rss_mib"], r["peak_rss_mib"])
        best[key] = dict(r, peak_rss_mib=peak)
    else:
        b["peak_rss_mib"] = max(b["peak_rss_mib"], r["peak_rss_mib"])
first = rows[0]
print(f"training step throughput, preset {first['preset']}, batch {first['batch']}, context {first['context']}, "
      f"threads {first['threads']}, {first['parameters']} parameters")
print(f"{'kind':8} {'C++ tok/s':>10} {'Py tok/s':>10} {'ratio':>6} {'C++ peak MiB':>13} {'Py peak MiB':>12} "
      f"{'C++ model MiB':>14} {'Py model MiB':>13}")
for kind in dict.fromkeys(r["kind"] for r in rows):
    c, p = best[(kind, "libtorch")], best[(kind, "pytorch")]
    print(f"{kind:8} {c['tokens_per_s']:10.0f} {p['tokens_per_s']:10.0f} {c['tokens_per_s'] / p['tokens_per_s']:6.2f} "
          f"{c['peak_rss_mib']:13.0f} {p['peak_rss_mib']:12.0f} {c['peak_rss_mib'] - c['rss_before_model_mib']:14.0f} "
          f"{p['peak_rss_mib'] - p['rss_before_model_mib']:13.0f}")
print("ratio = C++ tokens/s / Python tokens/s (> 1: the LibTorch path is faster); model MiB = peak RSS minus RSS "
      "before the model was built")
PY
