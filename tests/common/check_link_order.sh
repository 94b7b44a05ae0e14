#!/usr/bin/env bash
# Checks that each program binds the C++ standard library's own functions, not copies exported by LibTorch.
# Some torch wheels (2.5 to at least 2.11; pytorch/pytorch#133437) export std::filesystem functions from
# libtorch.so and libtorch_cpu.so; with torch 2.11 a program that binds to them crashes in
# std::filesystem::remove_all. cmake/OrbitlawDependencies.cmake names libstdc++ first among the libraries
# the dynamic loader searches; this test fails if that order is lost, whatever torch the build uses.
#
#   check_link_order.sh PROGRAM...
set -uo pipefail
status=0
for program in "$@"; do
  needed="$(readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
  stdcxx="$(grep -n -m1 '^libstdc++\.so' <<<"$needed" | cut -d: -f1)"
  torch="$(grep -n -m1 '^libtorch' <<<"$needed" | cut -d: -f1)"
  if [ -z "$torch" ]; then
    echo "FAIL: $program does not link LibTorch (expected libtorch*.so among: $(tr '\n' ' ' <<<"$needed"))"
    status=1
  elif [ -z "$stdcxx" ] || [ "$stdcxx" -gt "$torch" ]; then
    echo "FAIL: $program lists libstdc++ after LibTorch: $(tr '\n' ' ' <<<"$needed")"
    status=1
  fi
  # What the loader actually does: bind every symbol at start-up and look for std:: functions taken from torch.
  from_torch="$(LD_BIND_NOW=1 LD_DEBUG=bindings "$program" --help 2>&1 >/dev/null |
    grep -E "symbol \`_ZNSt10filesystem" | grep -E "to [^ ]*libtorch" | head -3)"
  if [ -n "$from_torch" ]; then
    echo "FAIL: $program binds std::filesystem to LibTorch's copies:"
    echo "$from_torch"
    status=1
  fi
  [ $status -eq 0 ] && echo "ok: $program: libstdc++ is searched before LibTorch"
done
exit $status
