#!/usr/bin/env bash
# Installs what einfer's builds and tests need on Debian 12 (bookworm), idempotently: only the
# packages that are missing, `apt-get update` only when one of them has no install candidate yet.
# Uses sudo only when not root.
#
#   tools/scripts/setup-debian.sh               build + all test presets (x86, aarch64, armhf, Cortex-M)
#   tools/scripts/setup-debian.sh --generators  also numpy/PyTorch for tests/gen/*.py (not needed by CI)
set -euo pipefail

packages=(
  cmake ninja-build g++ binutils          # host build (nm for the no-heap check)
  libxsimd-dev doctest-dev                # the only library dependencies (header-only)
  g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user      # Linux-on-Arm presets
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
  qemu-system-arm                         # cortex-m, cortex-m55 presets (mps2-an386, mps3-an547 + semihosting)
  clang-14 libclang-rt-14-dev clang-format  # libFuzzer targets; the format check (.ci/check-format.sh)
  libopenblas-dev                         # benchmark baseline only (einfer-bench --kernels)
)
if [[ "${1:-}" == "--generators" ]]; then
  packages+=(python3-numpy python3-torch)
fi

if [[ $(id -u) -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null; then
  as_root=(sudo)
else
  as_root=()
fi

missing=()
for p in "${packages[@]}"; do
  state=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  if [[ "$state" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup-debian: all ${#packages[@]} packages already installed"
  exit 0
fi

if [[ $(id -u) -ne 0 && ${#as_root[@]} -eq 0 ]]; then
  echo "setup-debian: missing packages ${missing[*]} and not root, no sudo: install them as root" >&2
  exit 1
fi

need_update=0
for p in "${missing[@]}"; do
  candidate=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ {print $2}')
  if [[ -z "$candidate" || "$candidate" == "(none)" ]]; then
    need_update=1
  fi
done
if [[ $need_update -eq 1 ]]; then
  echo "setup-debian: apt-get update (some packages have no install candidate yet)"
  "${as_root[@]}" apt-get update
fi

echo "setup-debian: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
echo "setup-debian: done"
