#!/usr/bin/env bash
# GPU check of orbitlaw, meant for a bare GPU machine whose only toolchain is CUDA (nvcc), CMake, a C++
# compiler and a Python with torch (LibTorch is taken from that torch), with no package registry in reach.
# The Debian -dev packages the build needs travel as .deb files (bash scripts/fetch-gpu-debs.sh, run beforehand
# on the build machine, fills .cache/gpu-debs/) and are unpacked into a private prefix (scripts/gpu-prefix.sh).
#
# Then, within about 8 minutes: configure and build the GPU targets, run the CUDA tests (fused LSSA/LSSAR
# against the float64 reference), the attention benchmark (fused LSSAR vs unfused LSSAR vs fused softmax at
# L = 1k, 4k, 16k), the data-parallel test (Gloo, CPU), and a paper-109m training-throughput measurement
# (tokens/s, MFU). Results go to $OUT (default out/gpu-check), at most 8 files:
#   summary.txt  machine.txt  build.log  test_model_cuda.txt  bench_attention.txt  bench_attention.json
#   test_distributed.txt  train_step.txt
# Each stage has its own time limit, and a failed stage is recorded in summary.txt without stopping the others.
#
#   bash scripts/gpu-check.sh            # on the GPU machine, from the repository root
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$root/out/gpu-check}"
mkdir -p "$out"
debs="${ORBITLAW_GPU_DEBS:-$root/.cache/gpu-debs}"
prefix="${ORBITLAW_GPU_PREFIX:-/tmp/orbitlaw-prefix}"
build="${ORBITLAW_GPU_BUILD:-/tmp/orbitlaw-gpu-build}"
jobs="$(nproc)"
# Multiplies every stage's time limit (for trying the script on a slow machine without a GPU).
time_scale="${ORBITLAW_GPU_CHECK_TIME_SCALE:-1}"
start=$(date +%s)
summary="$out/summary.txt"
: >"$summary"

note() { echo "[gpu-check +$(($(date +%s) - start))s] $*" | tee -a "$summary"; }
# stage NAME LIMIT_SECONDS OUTPUT_FILE COMMAND...: runs, records rc and time, keeps going on failure.
stage() {
  local name="$1" limit="$2" file="$3"
  shift 3
  local t0
  t0=$(date +%s)
  timeout --kill-after=10 $((limit * time_scale)) "$@" >"$file" 2>&1
  local rc=$?
  local verdict=ok
  [ $rc -eq 0 ] || verdict="FAILED (rc $rc$([ $rc -eq 124 ] && echo ', time limit'))"
  note "$name: $verdict in $(($(date +%s) - t0))s -> $(basename "$file")"
  return $rc
}

# nvcc may be installed without being on PATH.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

# --- the machine
{
  echo "date: $(date -u)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1
  nvcc --version 2>&1 | tail -2
  python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")' 2>&1
  cmake --version | head -1
  c++ --version | head -1
  echo "cores: $jobs"
  echo "git: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown) $(git -C "$root" status --porcelain 2>/dev/null | wc -l) changed files"
} >"$out/machine.txt" 2>&1
note "machine: $(sed -n 2p "$out/machine.txt")"

# --- dependencies from the carried .deb files
if ! eval "$(bash "$root/scripts/gpu-prefix.sh" "$debs" "$prefix")"; then
  note "prefix: FAILED (run scripts/fetch-gpu-debs.sh on the build machine and carry .cache/gpu-debs)"
  exit 1
fi
note "prefix: $(find "$prefix" -name '*.so*' | wc -l) library files kept in $prefix"

# --- configure and build (Hopper only, to halve the device compile time)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# shellcheck disable=SC2086
stage configure 120 "$out/build.log" cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DORBITLAW_CUDA=ON -DTORCH_CUDA_ARCH_LIST=9.0 -DORBITLAW_BUILD_TESTS=ON -DORBITLAW_BUILD_BENCH=ON \
  $ORBITLAW_PREFIX_CMAKE_ARGS || { tail -40 "$out/build.log" >>"$summary"; exit 1; }
mv "$out/build.log" "$out/configure.part"
stage build 300 "$out/build.log" cmake --build "$build" -j "$jobs" --target test_model_cuda bench_attention
build_rc=$?
# Optional targets: built after the essential ones so that their failure costs nothing else.
stage build-extra 150 "$out/build-extra.part" cmake --build "$build" -j "$jobs" --target test_distributed bench_train_step
cat "$out/configure.part" "$out/build-extra.part" >>"$out/build.log" 2>/dev/null
rm -f "$out/configure.part" "$out/build-extra.part"
[ $build_rc -eq 0 ] || { note "build failed; last lines:"; tail -30 "$out/build.log" >>"$summary"; exit 1; }

# --- CUDA tests (fused attention against float64; the CPU emulation cases run too)
stage test_model_cuda 120 "$out/test_model_cuda.txt" "$build/tests/model_cuda/test_model_cuda"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" "$out/test_model_cuda.txt" >>"$summary"

# --- attention benchmark: B=1, H=12, d=64 (the 109M model's heads), bf16, then the fp32 ceiling check
stage bench_attention 240 "$out/bench_attention.txt" "$build/bench/attention/bench_attention" --device cuda \
  --lengths 1024,4096,16384 --batch 1 --heads 12 --head-dim 64 --dtype bf16 --repeats 5 --warmup 2 \
  --matmul-ceiling --json "$out/bench_attention.json"
grep -E "^L =|lssar_fused|softmax_sdpa|lssar_unfused|ceiling|vs unfused" "$out/bench_attention.txt" >>"$summary"

# --- data parallel (two Gloo processes on the CPU; one GPU cannot test NCCL between ranks)
if [ -x "$build/tests/distributed/test_distributed" ]; then
  stage test_distributed 90 "$out/test_distributed.txt" "$build/tests/distributed/test_distributed"
fi

# --- training throughput of paper-109m (bf16 autocast), softmax then fused LSSAR, while time is left
if [ -x "$build/bench/attention/bench_train_step" ]; then
  left=$((460 - ($(date +%s) - start)))
  if [ $left -gt 60 ]; then
    {
      timeout $((left / 2)) "$build/bench/attention/bench_train_step" --preset paper-109m --attention softmax \
        --batch 16 --steps 8 --warmup 3
      echo "rc=$?"
      timeout $((left / 2)) "$build/bench/attention/bench_train_step" --preset paper-109m --attention lssar \
        --batch 16 --steps 8 --warmup 3
      echo "rc=$?"
    } >"$out/train_step.txt" 2>&1
    note "train_step: done -> train_step.txt"
    grep -E "^(preset|step|model FLOPs)|rc=" "$out/train_step.txt" >>"$summary"
  else
    note "train_step: skipped, ${left}s left"
  fi
fi
note "total $(($(date +%s) - start))s"
