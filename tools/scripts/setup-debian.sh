#!/usr/bin/env bash
# Installs what einfer's builds and tests need on Debian 12 (bookworm), idempotently: only the
# packages that are missing, `apt-get update` only when one of them has no install candidate yet.
# Uses sudo only when not root.
#
#   tools/scripts/setup-debian.sh                    the host set: compiler, CMake, Ninja, xsimd
#                                                    (all the main job needs; no cross toolchain)
#   tools/scripts/setup-debian.sh --tests [PRESET..] the host set, the test tools, and the cross
#                                                    toolchains + QEMU of the named presets (all
#                                                    presets and the fuzzer when none is named)
#   tools/scripts/setup-debian.sh --generators       also numpy/PyTorch for tests/gen/*.py
set -euo pipefail

host_packages=(
  g++ cmake ninja-build                   # host build (binutils' nm comes with g++)
  libxsimd-dev                            # the only library dependency (header-only)
)
test_packages=(
  doctest-dev                             # the test suites (header-only)
  pkgconf                                 # tests/consumer: the pkg-config consumer
  clang-format                            # the format check (.ci/check-format.sh)
  libopenblas-dev                         # benchmark baseline only (einfer-bench --kernels)
)
# Cross toolchains and emulators per preset (only for tests or a named target).
preset_packages() {
  case "$1" in
    release | debug | nosimd | tools | tsan) ;;
    aarch64 | aarch64-nodot) echo g++-aarch64-linux-gnu qemu-user ;;
    armhf) echo g++-arm-linux-gnueabihf qemu-user ;;
    cortex-m | cortex-m55) echo gcc-arm-none-eabi libnewlib-arm-none-eabi \
                   libstdc++-arm-none-eabi-newlib qemu-system-arm ;;  # mps2-an386, mps3-an547
    fuzz) echo clang-14 libclang-rt-14-dev ;;  # libFuzzer targets (tools/scripts/fuzz-loader.sh)
    *) echo "setup-debian: unknown preset '$1'" >&2; exit 2 ;;
  esac
}

packages=("${host_packages[@]}")
case "${1:-}" in
  "") ;;
  --tests)
    shift
    presets=("$@")
    [[ ${#presets[@]} -gt 0 ]] || presets=(aarch64 armhf cortex-m fuzz)
    packages+=("${test_packages[@]}")
    for preset in "${presets[@]}"; do
      list=$(preset_packages "$preset") || exit 2
      read -r -a extra <<<"$list"
      packages+=("${extra[@]}")
    done
    ;;
  --generators)
    packages+=("${test_packages[@]}" python3-numpy python3-torch)
    ;;
  *)
    echo "usage: setup-debian.sh [--tests [PRESET...] | --generators]" >&2
    exit 2
    ;;
esac
# Each package once (qemu-user is named by two presets).
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | awk '!seen[$0]++')

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
