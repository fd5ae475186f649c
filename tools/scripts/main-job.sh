#!/usr/bin/env bash
# The main job: installs what is missing (the host set only: compiler, CMake, Ninja, xsimd; no
# cross toolchain, no test tools), builds the `tools` preset (release libraries and tools, no
# tests), packs a model and runs it end to end, then benchmarks it: generated text, tokens/s,
# latency and memory.
#
# With ../shared/models present it runs the real aidreams260K checkpoint (q8 weights, int8 KV and
# float, its tokenizer packed in). Without it, it generates a deterministic random-weight model of
# the 15M llama2.c shape and says so: its "text" is token ids of noise, only the speed is real.
#
#   tools/scripts/main-job.sh [PROMPT]
set -euo pipefail
cd "$(dirname "$0")/../.."
prompt="${1:-The robot}"

bash tools/scripts/setup-debian.sh
echo "== build (tools preset: release libraries and tools)"
cmake --preset tools >/dev/null
cmake --build --preset tools --target einfer-pack einfer-run einfer-bench

bin=build/tools/bin
out=build/tools/models
mkdir -p "$out"
shared=../shared/models

if [[ -f "$shared/aidreams260K.bin" && -f "$shared/tok512-aidreams.bin" ]]; then
  echo
  echo "== pack ../shared/models/aidreams260K.bin (llama2.c checkpoint) as f32 and q8, tokenizer embedded"
  "$bin/einfer-pack" "$shared/aidreams260K.bin" -o "$out/aidreams-f32.ein" -z "$shared/tok512-aidreams.bin"
  "$bin/einfer-pack" "$shared/aidreams260K.bin" -o "$out/aidreams-q8.ein" --dtype q8 --group 32 \
    -z "$shared/tok512-aidreams.bin"
  echo
  echo "== inspect the q8 pack (arena for context 128, int8 KV)"
  "$bin/einfer-pack" --inspect "$out/aidreams-q8.ein" -c 128 --kv q8 | tail -n 8
  echo
  echo "== einfer-run, f32 weights, greedy, prompt: \"$prompt\""
  "$bin/einfer-run" -m "$out/aidreams-f32.ein" -p "$prompt" -n 96
  echo
  echo "== einfer-run, q8 weights + int8 KV cache, same prompt"
  "$bin/einfer-run" -m "$out/aidreams-q8.ein" -p "$prompt" -n 96 --kv q8
  echo
  echo "== einfer-run, streaming 400 tokens past the 128-token training context (window 48, 4 sinks)"
  "$bin/einfer-run" -m "$out/aidreams-q8.ein" -n 400 --window 48 --sinks 4 --kv q8 --temp 0.8 -s 7 \
    --ignore-eos | tail -c 400
  echo
  echo "== einfer-bench on the q8 pack"
  "$bin/einfer-bench" -m "$out/aidreams-q8.ein" -p 64 -n 64 --contexts 128 --kv q8 -r 3 -v
else
  echo
  echo "== ../shared/models is absent: using a DETERMINISTIC RANDOM-WEIGHT model (15M llama2.c shape)."
  echo "   Its output is meaningless token ids; the speed and memory figures are real."
  spec="dim=288,hidden=768,layers=6,heads=6,kv_heads=6,vocab=32000,seq=256"
  "$bin/einfer-pack" --synthetic "$spec" -o "$out/synthetic-15m-f32.ein"
  "$bin/einfer-pack" --synthetic "$spec" -o "$out/synthetic-15m-q8.ein" --dtype q8 --group 32
  echo
  echo "== einfer-run (random weights), 64 greedy tokens as ids"
  "$bin/einfer-run" -m "$out/synthetic-15m-q8.ein" --prompt-ids 1 -n 64 --ids
  echo
  echo "== einfer-bench on the random-weight q8 model"
  "$bin/einfer-bench" -m "$out/synthetic-15m-q8.ein" -p 64 -n 32 --contexts 128 -r 2 -v
fi
echo
echo "Run your own checkpoint: $bin/einfer-pack MODEL -o m.ein [--dtype q8] [-z tokenizer.bin]"
echo "then $bin/einfer-run -m m.ein -p \"...\" (README.md lists the importers and options)."
