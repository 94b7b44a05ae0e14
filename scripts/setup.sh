#!/usr/bin/env bash
# Installs everything orbitlaw needs on a fresh Debian 12 machine, and does nothing when all is present:
# Debian packages for the C++ libraries and tools, and a project-local virtual environment (.venv) with the
# pinned torch wheel (LibTorch), the plotting packages and the Markdown renderer of the report (scripts/requirements.txt),
# with python/orbitlaw_sr (the engine from Python) on its import path.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

debian_packages=(
  build-essential cmake git pkg-config
  libboost-dev libeigen3-dev libhdf5-dev hdf5-tools
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libgloo-dev
  clang-format
  parallel  # GNU parallel: runs the shards of a sweep side by side (docs/sweeps.md)
)
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

venv="$root/.venv"
python="${ORBITLAW_PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating $venv"
  "$python" -m venv "$venv"
fi
if ! "$venv/bin/python" - "$root/scripts/requirements.txt" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line:
        name, pinned = line.split("==")
        assert version(name) == pinned, name
PY
  echo "setup: installing Python packages (torch is large; a few minutes)"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$root/scripts/requirements.txt"
fi
# The Python entry point (python/orbitlaw_sr, probe/README.md) importable from the .venv: a .pth file naming
# python/, so the package is the working tree's (no copy to go stale) and installing it needs no network.
site_packages="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
if [ "$(cat "$site_packages/orbitlaw_sr.pth" 2>/dev/null)" != "$root/python" ]; then
  echo "setup: adding $root/python to the .venv's import path ($site_packages/orbitlaw_sr.pth)"
  echo "$root/python" > "$site_packages/orbitlaw_sr.pth"
fi
echo "setup: ready"
