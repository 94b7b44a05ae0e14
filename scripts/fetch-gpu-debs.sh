#!/usr/bin/env bash
# Downloads (never installs) the Debian packages that building orbitlaw needs beyond CUDA, CMake, a C++ compiler
# and a Python with torch, into .cache/gpu-debs/ (gitignored). scripts/gpu-check.sh unpacks them with dpkg -x into
# a private prefix on a GPU machine that cannot reach a package registry. Run it here, on the Debian 12 build
# machine; then carry .cache/gpu-debs with the working tree.
#
#   bash scripts/fetch-gpu-debs.sh            # fetch (skips what is already there)
#   bash scripts/fetch-gpu-debs.sh --list     # print the package list and exit
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.cache/gpu-debs"

# Headers, CMake package files and static libraries of the C++ dependencies (scripts/setup.sh installs the same
# from the registry), plus the Gloo headers that LibTorch's ProcessGroupGloo.hpp includes.
dev_packages=(
  libboost1.74-dev libeigen3-dev libhdf5-dev libaec-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
  libspdlog-dev libfmt-dev libgloo-dev
)
# Shared libraries those link against, with their own dependencies. gpu-check.sh drops every library whose
# soname the target machine already has, so these only fill gaps.
runtime_roots=(
  libhdf5-103-1 libhdf5-cpp-103-1 libhdf5-hl-100 libhdf5-hl-cpp-100 libsz2 libaec0
  libfmt9 libspdlog1.10 libbenchmark1debian
)
# Never carried: the C library and compiler runtime of the target machine must be its own.
base_packages='^(libc6|libc6-dev|libgcc-s1|libstdc\+\+6|libstdc\+\+-12-dev|gcc-12-base|libcrypt1|libcrypt-dev|linux-libc-dev|libnsl.*|libtirpc.*|debconf|dpkg|perl-base|tar|libselinux1|libpcre2-8-0|zlib1g|pkg-config|pkgconf|pkgconf-bin|libpkgconf3|catch2|googletest|libhiredis-dev|libhiredis0.14|libibverbs-dev|libibverbs1|ibverbs-providers|libnl-.*|libgloo0|libhdf5-fortran-102|libhdf5-hl-fortran-100|libgfortran5|libjpeg-dev|libjpeg62-turbo-dev|libjpeg62-turbo|libcurl4-openssl-dev|libssl-dev|hdf5-helpers|libquadmath0|gfortran.*|libjs-.*)$'

runtime_packages() {
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
    --no-enhances --no-pre-depends "${runtime_roots[@]}" 2>/dev/null |
    grep -E '^[a-z0-9]' | sort -u
}

mapfile -t runtime < <(runtime_packages)
all=()
for p in "${dev_packages[@]}" "${runtime[@]}"; do
  [[ "$p" =~ $base_packages ]] || all+=("$p")
done
mapfile -t all < <(printf '%s\n' "${all[@]}" | sort -u)

if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${all[@]}"
  exit 0
fi

mkdir -p "$dest"
cd "$dest"
missing=()
for p in "${all[@]}"; do
  compgen -G "${p}_*.deb" >/dev/null || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "fetch-gpu-debs: downloading ${#missing[@]} packages into $dest"
  apt-get download -q "${missing[@]}" 2>&1 | grep -v -E '^(Get:|W: Download is performed unsandboxed)' || true
fi
for p in "${all[@]}"; do
  compgen -G "${p}_*.deb" >/dev/null || { echo "fetch-gpu-debs: failed to download $p" >&2; exit 1; }
done
printf '%s\n' "${all[@]}" >"$dest/PACKAGES"
echo "fetch-gpu-debs: ${#all[@]} packages, $(du -sh "$dest" | cut -f1) in $dest"
