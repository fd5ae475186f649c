#!/usr/bin/env bash
# einfer-pack --emit-c on Cortex-M: packs the tiny llama2.c v2 test model as q4 with a tokenizer,
# compiles the header together with the runtime loader for Cortex-M4 (arm-none-eabi-g++, no
# exceptions/RTTI) and runs load_model on it under qemu-system-arm (mps2-an386, semihosting).
#   usage: tools/scripts/emit-c-cortex-m.sh [BUILD_DIR with bin/einfer-pack]   (default build/rel)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/rel}"
out="$root/build/emit-c-cortex-m"
mkdir -p "$out"
"$build/bin/einfer-pack" "$root/tests/data/format/llama2c_v2.bin" --dtype q4 --group 8 \
  -z "$root/tests/data/format/tiny_tokenizer.bin" --emit-c "$out/emitted_model.c" -o "$out/model.ein"
cpu=(-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16)
src="$root/tests/emit_c_cortex_m"
arm-none-eabi-gcc "${cpu[@]}" -O2 -c "$src/startup.c" -o "$out/startup.o"
arm-none-eabi-gcc "${cpu[@]}" -std=c11 -O2 -Wall -Wextra -Werror -c "$out/emitted_model.c" -o "$out/emitted_model.o"
# -Wno-format: runtime/status_arena.cpp prints int32_t with %d (long on arm-none-eabi).
arm-none-eabi-g++ "${cpu[@]}" -std=c++20 -O2 -Wall -Wextra -Werror -Wno-format -fno-exceptions \
  -fno-rtti -I"$root" -I"$out" -DEINFER_SIMD=0 "$src/main.cpp" "$root/runtime/loader.cpp" \
  "$root/runtime/model_roles.cpp" "$root/runtime/status_arena.cpp" "$out/startup.o" "$out/emitted_model.o" \
  --specs=rdimon.specs -T "$src/link.ld" -o "$out/emit_c.elf"
timeout 60 qemu-system-arm -M mps2-an386 -nographic -semihosting -kernel "$out/emit_c.elf" | tee "$out/log.txt"
grep -q "cortex-m: PASS" "$out/log.txt"
