#!/usr/bin/env bash
# Unpacks the .deb files fetched by scripts/fetch-gpu-debs.sh into a private prefix (dpkg -x, nothing installed
# system-wide), repairs absolute symlinks, and drops every shared library whose soname the machine already
# provides, so that only missing libraries come from the prefix. Prints shell statements that point the
# compiler, CMake and the dynamic loader at the prefix.
#
#   eval "$(bash scripts/gpu-prefix.sh DEB_DIR PREFIX)"
# exports CPLUS_INCLUDE_PATH, C_INCLUDE_PATH, LIBRARY_PATH and LD_LIBRARY_PATH (prefix first) and sets
# ORBITLAW_PREFIX_CMAKE_ARGS.
set -euo pipefail
debs="${1:?usage: gpu-prefix.sh DEB_DIR PREFIX}"
prefix="${2:?usage: gpu-prefix.sh DEB_DIR PREFIX}"
multiarch=x86_64-linux-gnu

compgen -G "$debs/*.deb" >/dev/null || { echo "gpu-prefix: no .deb files in $debs" >&2; exit 1; }
mkdir -p "$prefix"
for f in "$debs"/*.deb; do dpkg -x "$f" "$prefix"; done

# Absolute symlinks (e.g. usr/lib/.../libz.so -> /lib/.../libz.so.1.2.13) point at the machine's files: send them
# into the prefix when the target was unpacked there, else to the machine's library with the same soname.
while IFS= read -r link; do
  target="$(readlink "$link")"
  if [ -e "$prefix$target" ]; then
    ln -sfn "$prefix$target" "$link"
  elif [ ! -e "$target" ]; then
    stem="$(basename "$target" | sed -E 's/(\.so\.[0-9]+).*/\1/')"
    system_lib="$(ldconfig -p | awk -v s="$stem" '$1 == s {print $NF; exit}')"
    if [ -n "$system_lib" ]; then ln -sfn "$system_lib" "$link"; else rm -f "$link"; fi
  fi
done < <(find "$prefix" -type l -lname '/*')

# Prefer the machine's own copy of every shared library it already has (same soname): the prefix's file becomes
# a link to it, so that the prefix's development links (libfoo.so -> libfoo.so.N) still resolve.
while IFS= read -r lib; do
  system_lib="$(ldconfig -p | awk -v s="$(basename "$lib")" '$1 == s {print $NF; exit}')"
  if [ -n "$system_lib" ]; then ln -sfn "$system_lib" "$lib"; fi
done < <(find "$prefix/usr/lib/$multiarch" "$prefix/lib/$multiarch" -maxdepth 1 -name 'lib*.so.*' \
           -regex '.*\.so\.[0-9]+$' 2>/dev/null)

libs="$prefix/usr/lib/$multiarch:$prefix/lib/$multiarch:$prefix/usr/lib/$multiarch/hdf5/serial"
# The prefix's headers go in through the compiler's own search path, like /usr/include on a normal machine:
# CMake then counts the folder as implicit and never emits it as -isystem ahead of LibTorch's include folders,
# which would let Debian's fmt shadow the fmt that LibTorch's headers were built with.
printf 'export CPLUS_INCLUDE_PATH=%q\n' "$prefix/usr/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}"
printf 'export C_INCLUDE_PATH=%q\n' "$prefix/usr/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
printf 'export LIBRARY_PATH=%q\n' "$libs${LIBRARY_PATH:+:$LIBRARY_PATH}"
printf 'export LD_LIBRARY_PATH=%q\n' "$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cmake_args=(
  "-DCMAKE_PREFIX_PATH=$prefix/usr"
  "-DHDF5_ROOT=$prefix/usr/lib/$multiarch/hdf5/serial"
  "-DORBITLAW_GLOO_INCLUDE_DIR=$prefix/usr/include"
)
printf 'ORBITLAW_PREFIX_CMAKE_ARGS=%q\n' "${cmake_args[*]}"
