#!/usr/bin/env bash
# Training throughput of the sweeps' model (the locality and quickstart experiments' 2-layer, width-32,
# context-128 RoPE regression model, batch 16) for every attention kind, on the CPU, all measured in this run:
#   today   the reference attention formulas (model.allow_fused off), one 2-thread process at a time: how the
#           driver trained a sweep before scaled_dot_product_attention and before --jobs defaulted to the cores;
#   new     the fused path (scaled_dot_product_attention for softmax, window and ssmax; the CPU kernel for lssa
#           and lssar; sigmoid has neither and runs its reference), one 1-thread process per core side by side
#           (--jobs = cores);
#   alone   the new path's 1-thread process with the machine to itself, beside
#   PyTorch the same model and path in Python PyTorch (gpt_reference.py), one thread.
# It prints tokens/s per core, models per hour for a sweep of 6000-step trainings (the locality default) with
# every core busy, the ratio new / today, and the fraction of one core's float32 matrix-product rate (a 1024^3
# product measured here) that the model's arithmetic reaches. Each figure is the median step of STEPS steps after
# WARMUP; each configuration runs REPEATS times alternating with the others, and the best process counts.
#
#   bash bench/model/sweep.sh [BUILD_DIR]      env: KINDS, STEPS (30), WARMUP (5), REPEATS (2), TRAIN_STEPS (6000)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/build}"
python="${ORBITLAW_PYTHON:-$root/.venv/bin/python}"
bench="$build/bench/model/bench_model_train"
kinds="${KINDS:-softmax window ssmax lssa lssar sigmoid}"
steps="${STEPS:-30}"; warmup="${WARMUP:-5}"; repeats="${REPEATS:-2}"; train_steps="${TRAIN_STEPS:-6000}"
cores="$(nproc)"
if [[ ! -x "$bench" ]]; then
  cmake --build "$build" --target bench_model_train -j"$cores" >/dev/null
fi
common=(--shape sweep --batch 16 --steps "$steps" --warmup "$warmup")
results="$(mktemp)"
trap 'rm -f "$results"' EXIT
tag() { sed "s/^{/{\"setting\": \"$1\", /"; }
"$bench" --peak --threads 1 | tag peak >>"$results"
for ((r = 0; r < repeats; r++)); do
  for kind in $kinds; do
    "$bench" --kind "$kind" --path reference --threads "$cores" "${common[@]}" | tag today >>"$results"
    # One 1-thread process per core, started together: their summed rate is the machine's.
    for ((c = 0; c < cores; c++)); do
      "$bench" --kind "$kind" --path fused --threads 1 "${common[@]}" | tag "new-$r" >>"$results" &
    done
    wait
    "$bench" --kind "$kind" --path fused --threads 1 "${common[@]}" | tag alone >>"$results"
    "$python" "$here/gpt_reference.py" --kind "$kind" --path fused --threads 1 "${common[@]}" | tag pytorch >>"$results"
  done
done
"$python" - "$results" "$cores" "$train_steps" "$repeats" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
cores, train_steps, repeats = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
peak = next(r["matmul_gflops"] for r in rows if r["setting"] == "peak")
T, C, L, B, WINDOW = 128, 32, 2, 16, 2


def flop_per_step(kind):
    """The model's arithmetic per training step (3 x forward): the linear maps, and attention over the keys
    each row needs (causal: (T + 1) / 2 on average; the window: at most WINDOW)."""
    keys = sum(min(i + 1, WINDOW) for i in range(T)) / T if kind == "window" else (T + 1) / 2
    per_position = L * (2 * 12 * C * C + 2 * 2 * keys * C) + 2 * 2 * C * 2
    return 3 * per_position * B * T


def best(kind, setting):
    """The fastest process (tokens/s) of a setting for a kind."""
    return max(r["tokens_per_s"] for r in rows if r.get("kind") == kind and r["setting"] == setting)


def machine_rate(kind):
    """The new setting's summed tokens/s of its side-by-side processes, best repeat."""
    return max(sum(r["tokens_per_s"] for r in rows if r.get("kind") == kind and r["setting"] == f"new-{k}")
               for k in range(repeats))


tokens_per_model = train_steps * B * T
print(f"sweep model (2 layers, width 32, context {T}, batch {B}, RoPE, regression head; window {WINDOW}), "
      f"{cores} cores; one core's 1024^3 float32 matrix product: {peak:.1f} GFLOP/s")
print(f"{'kind':8} {'today tok/s/core':>17} {'new tok/s/core':>15} {'1 thread alone':>15} {'PyTorch':>8} {'C++/Py':>7} "
      f"{'today models/h':>15} {'new models/h':>13} {'new/today':>10} {'% of peak':>10}")
for kind in dict.fromkeys(r["kind"] for r in rows if "kind" in r):
    today = best(kind, "today")  # one process on every core
    new = machine_rate(kind)
    py, alone = best(kind, "pytorch"), best(kind, "alone")
    per_core_new = new / cores
    models_today = 3600 * today / tokens_per_model
    models_new = 3600 * new / tokens_per_model
    fraction = flop_per_step(kind) * per_core_new / (B * T) / (peak * 1e9)
    print(f"{kind:8} {today / cores:17.0f} {per_core_new:15.0f} {alone:15.0f} {py:8.0f} {alone / py:7.2f} "
          f"{models_today:15.1f} {models_new:13.1f} {models_new / models_today:10.2f} {100 * fraction:9.1f}%")
print(f"models/h: {train_steps}-step trainings per hour with every core busy (training only; eval and probe "
      "stages not included); today: one process on all cores, reference attention; new: one 1-thread process "
      "per core, fused path; 1 thread alone: the new path's process with the machine to itself, and C++/Py its ratio to PyTorch's (one thread, same path); % of peak: the model's arithmetic per second on one "
      "core over one core's matrix-product rate")
PY
