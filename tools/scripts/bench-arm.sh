#!/usr/bin/env bash
# Guest instructions per token on emulated Arm cores, einfer beside llama.cpp: the docs/bench.md
# "Arm" tables. For each core it packs the GGUFs for that core's target (einfer-pack --target:
# cortex-a53, cortex-a72 and cortex-a76 take the 4x4 layout, max the i8mm 4x8 one) and runs
# ../shared/tools/arm-instructions.sh (qemu-aarch64 with the insncount plugin: deterministic, so
# exact on a shared x86 host) against llama.cpp's llama-bench built for the same core.
#
# Usage: tools/scripts/bench-arm.sh LLAMA_DIR MODEL.gguf...
#   LLAMA_DIR holds build-a72/bin, build-a76/bin and build-max/bin (static aarch64 llama-bench for
#   -DGGML_CPU_ARM_ARCH=armv8-a, armv8.2-a+dotprod+fp16, armv8.6-a+dotprod+i8mm+fp16; the
#   armv8-a build serves the Cortex-A53 too); a missing one leaves the llama.cpp columns empty.
# Environment: EINFER_AARCH64_BIN (einfer-run of the aarch64 preset, default build/aarch64/bin),
#   EINFER_PACK (the host einfer-pack, default build/release/bin/einfer-pack), CORES (default
#   "cortex-a72 cortex-a76 max"; cortex-a53 also, the in-order core of e.g. an i.MX 8M, where
#   instruction counts track time most closely), ARM_INSTRUCTIONS (default ../shared/tools/arm-instructions.sh).
# Not part of CI: the GGUFs and llama.cpp are not in the repository.
set -euo pipefail

llama=${1:?usage: bench-arm.sh LLAMA_DIR MODEL.gguf...}
shift
[[ $# -ge 1 ]] || { echo "bench-arm: no model given" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${EINFER_AARCH64_BIN:-$here/build/aarch64/bin}
pack=${EINFER_PACK:-$here/build/release/bin/einfer-pack}
script=${ARM_INSTRUCTIONS:-$here/../shared/tools/arm-instructions.sh}
for f in "$bin/einfer-run" "$pack" "$script"; do
  [[ -e $f ]] || { echo "bench-arm: $f is missing" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for cpu in ${CORES:-cortex-a72 cortex-a76 max}; do
  case $cpu in
    cortex-a53) dir=build-a72; target=cortex-a53 ;;
    cortex-a72) dir=build-a72; target=cortex-a72 ;;
    cortex-a76) dir=build-a76; target=cortex-a76 ;;
    max) dir=build-max; target=arm64-i8mm ;;
    *) echo "bench-arm: unknown core $cpu (cortex-a53, cortex-a72, cortex-a76, max)" >&2; exit 2 ;;
  esac
  # arm-instructions.sh packs with "$EINFER_PACK" MODEL -o OUT: a wrapper adds the target.
  printf '#!/bin/sh\nexec "%s" "$@" --target %s\n' "$pack" "$target" > "$tmp/pack-$target"
  chmod +x "$tmp/pack-$target"
  args=(-c "$cpu")
  [[ -x $llama/$dir/bin/llama-bench ]] && args+=(-l "$llama/$dir/bin")
  EINFER_PACK="$tmp/pack-$target" "$script" "${args[@]}" "$bin" "$@"
done
