# shellcheck shell=bash
# Sourced by experiments/gpu-study.sh before the driver starts: on a GPU machine (bare: CUDA, CMake, a compiler
# and a Python with torch; no registry), and unless ORBITLAW_BIN names a built binary, sets up the build like
# scripts/gpu-check.sh does. The -dev packages come from the carried .deb files (.cache/gpu-debs, filled by
# scripts/fetch-gpu-debs.sh) unpacked into a private prefix; CUDA kernels for this GPU's architecture only;
# Ninja when present; LibTorch and the report's Python from python3 when there is no .venv. It exports the
# variables the driver's build reads (ORBITLAW_CMAKE_ARGS, ORBITLAW_BUILD_DIR) and ORBITLAW_PYTHON; it is bash
# because scripts/gpu-prefix.sh prints shell statements.
gpu_build_env_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if command -v nvidia-smi >/dev/null 2>&1 && [ -z "${ORBITLAW_BIN:-}" ]; then
  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
  debs="${ORBITLAW_GPU_DEBS:-$gpu_build_env_root/.cache/gpu-debs}"
  ORBITLAW_PREFIX_CMAKE_ARGS=""
  if [ ! -f /usr/include/hdf5/serial/H5Cpp.h ] && compgen -G "$debs/*.deb" >/dev/null; then
    eval "$(bash "$gpu_build_env_root/scripts/gpu-prefix.sh" "$debs" "${ORBITLAW_GPU_PREFIX:-/tmp/orbitlaw-prefix}")"
  fi
  if [ -z "${ORBITLAW_CMAKE_ARGS:-}" ]; then
    cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' ')"
    generator=""
    command -v ninja >/dev/null && generator="-G Ninja"
    export ORBITLAW_CMAKE_ARGS="$generator -DORBITLAW_CUDA=ON -DTORCH_CUDA_ARCH_LIST=${cap:-9.0} \
-DORBITLAW_BUILD_TESTS=OFF -DORBITLAW_BUILD_BENCH=OFF ${ORBITLAW_PREFIX_CMAKE_ARGS:-}"
  fi
  export ORBITLAW_BUILD_DIR="${ORBITLAW_BUILD_DIR:-/tmp/orbitlaw-gpu-study-build}"
  [ -x "$gpu_build_env_root/.venv/bin/python" ] || export ORBITLAW_PYTHON="${ORBITLAW_PYTHON:-$(command -v python3)}"
fi
