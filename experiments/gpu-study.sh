#!/usr/bin/env bash
# gpu-study: the whole study inside one GPU call (issue 9). Target: one H200 (bf16 ceiling measured ~790
# TFLOP/s), 16 CPU cores, at most 9 minutes of wall time including the build, a bare machine that downloads
# nothing and returns only a few files of <= 16 MB.
#
#   build (16 cores) -> simulate (all cores) -> train softmax and LSSAR at equal token budgets -> eval ->
#   force probes + symbolic regression (all cores) -> compare with Newton -> report -> pack the results
#
# Time budget (configs/gpu-study.json "budget"): 540 s in all. Whatever the build leaves, minus 20 s for
# packing, is shared up front: simulate 12%, train 52% (half per model), eval 6%, probe 19%, compare 4%,
# report 7%. Each stage is started with its limit and cut at it (SIGTERM, SIGKILL 10 s later); training is
# also told to stop itself at 90% of its limit (budget.train_time_key) so its last checkpoint is clean. A cut
# or failed stage is marked in the report (stages/<stage>.cut / .failed) and the run goes on: the report and
# the packed results always arrive.
#
# Size and why (assumptions to check against the first run's tokens/s, which the report shows):
#   model   8 layers x 8 heads x width 512, context 999, the paper's 7000-bin tokenizer (so the data and
#           tokens are Vafa et al.'s): ~25.2M parameters in the blocks + 14.3M in the two embedding tables and
#           the 2 x 7003 output head + 1.3M projection/positions = ~41M.
#   tokens  1000 steps x 64 sequences x 999 positions = 6.4e7 per model, the same for both (equal budgets by
#           steps, batch and context; a model cut by its time limit has fewer, and the report says so).
#   FLOP    (6 N + 12 L d ctx) per token = 2.9e8 -> 1.9e16 per model, 3.7e16 for both.
#   why     train gets ~52% of the ~340 s left after a ~3 min build: ~85 s per model. At 35% of the measured
#           790 TFLOP/s, 85 s is 2.3e16 FLOP: the 41M model at 6.4e7 tokens uses ~80% of it, leaving room
#           for LSSAR's slower unfused attention. The data bounds the tokens: 12k systems simulated in the
#           simulate share give ~12M positions, so 6.4e7 tokens is ~5 epochs; a bigger model would see the
#           same data more times rather than more data. The 109M paper model would need ~2.3x the FLOP per
#           token and would not finish 1000 steps in 85 s.
#
# Output: the run folder (default runs/gpu-study; datasets and checkpoints stay there) and the packed results
# in $OUT/gpu-study (or RUN/bundle when $OUT is unset): report.html (self-contained), report.md, laws.md,
# compare.md, results.json (all metrics/eval/SR/compare JSON), logs.txt. Each file <= 16 MB.
# --smoke: the same script on the CPU at tiny size (CI runs it). Other options: see docs/experiments.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/run.sh"

# On the GPU machine (bare: CUDA, CMake, a compiler and a Python with torch; no registry), build like
# scripts/gpu-check.sh does: the -dev packages come from the carried .deb files (.cache/gpu-debs, filled by
# scripts/fetch-gpu-debs.sh) unpacked into a private prefix; CUDA kernels for this GPU's architecture only;
# Ninja when present; LibTorch and the report's Python from python3 when there is no .venv.
root_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if command -v nvidia-smi >/dev/null 2>&1 && [ -z "${ORBITLAW_BIN:-}" ]; then
  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
  debs="${ORBITLAW_GPU_DEBS:-$root_dir/.cache/gpu-debs}"
  ORBITLAW_PREFIX_CMAKE_ARGS=""
  if [ ! -f /usr/include/hdf5/serial/H5Cpp.h ] && compgen -G "$debs/*.deb" >/dev/null; then
    eval "$(bash "$root_dir/scripts/gpu-prefix.sh" "$debs" "${ORBITLAW_GPU_PREFIX:-/tmp/orbitlaw-prefix}")"
  fi
  if [ -z "${ORBITLAW_CMAKE_ARGS:-}" ]; then
    cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' ')"
    generator=""
    command -v ninja >/dev/null && generator="-G Ninja"
    export ORBITLAW_CMAKE_ARGS="$generator -DORBITLAW_CUDA=ON -DTORCH_CUDA_ARCH_LIST=${cap:-9.0} \
-DORBITLAW_BUILD_TESTS=OFF -DORBITLAW_BUILD_BENCH=OFF ${ORBITLAW_PREFIX_CMAKE_ARGS:-}"
  fi
  export ORBITLAW_BUILD_DIR="${ORBITLAW_BUILD_DIR:-/tmp/orbitlaw-gpu-study-build}"
  [ -x "$root_dir/.venv/bin/python" ] || export ORBITLAW_PYTHON="${ORBITLAW_PYTHON:-$(command -v python3)}"
fi

# Pack the results on every exit, so that whatever ran comes back.
pack_results() {
  local rc=$?
  if [ -n "${run:-}" ] && [ -f "$run/experiment.json" ] && [ -n "${python_bin:-}" ]; then
    local dest="${OUT:+$OUT/gpu-study}"
    "$python_bin" "$root/experiments/lib/bundle.py" "$run" "${dest:-$run/bundle}" --max-mb 16 || rc=1
  fi
  exit "$rc"
}
trap pack_results EXIT
experiment_main gpu-study "$@"
