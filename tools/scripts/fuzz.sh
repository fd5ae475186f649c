#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan + UBSan (-fno-sanitize-recover), in
# build/fuzz, and runs each for a bounded time over its seeds. Exits non-zero on any finding
# (crash, sanitizer report, leak, allocation over the limit, timeout) or build failure, and prints
# each target's executions from libFuzzer's final stats.
#   usage: tools/scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 20 s, all targets)
#   targets: loader tokenizer einsum_spec gguf safetensors llama2c json tokenizer_file npy capi
#            hf_folder hf_bert
#   env: FUZZ_PARALLEL=N (default 1) targets fuzzed at a time; FUZZ_NICE=1 runs at nice 19.
# Reproducers land in build/fuzz/artifacts/<target>/; re-run one with build/fuzz/bin/fuzz_<target> FILE.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${1:-20}"
shift || true
all=(loader tokenizer einsum_spec gguf safetensors llama2c json tokenizer_file npy capi hf_folder hf_bert)
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${all[@]}")
build="$root/build/fuzz"
CC="${CC_FUZZ:-clang-14}"
CXX="${CXX_FUZZ:-clang++-14}"
command -v "$CXX" >/dev/null || { echo "fuzz: $CXX not found" >&2; exit 1; }
nice_cmd=()
[[ "${FUZZ_NICE:-0}" == 1 ]] && nice_cmd=(nice -n 19)

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DEINFER_FUZZ=ON -DEINFER_BUILD_TOOLS=ON -DEINFER_SANITIZE=address,undefined \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" >/dev/null
"${nice_cmd[@]}" cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}"

# Seed directories per target: its committed corpus, plus test data of the same kind (read only).
seeds_for() {
  local dirs=("$root/tests/fuzz/corpus/$1")
  case "$1" in
    gguf | safetensors | llama2c | tokenizer_file) dirs+=("$root/tests/data/format") ;;
    tokenizer) dirs+=("$root/tests/fuzz/corpus_tokenizer") ;;
    json) dirs+=("$root/tests/data/format/hf_llama") ;;
    npy) dirs+=("$root/tests/data/einsum") ;;
  esac
  for d in "${dirs[@]}"; do [[ -d "$d" ]] && echo "$d"; done
  return 0
}

# One target: fuzz it, then print its result line to $build/result_TARGET (0 ok, 1 finding).
fuzz_one() {
  local t="$1" work="$build/corpus/$1" art="$build/artifacts/$1" log="$build/fuzz_$1.log"
  local status=0 execs
  rm -rf "$work" "$art"
  mkdir -p "$work" "$art"
  # shellcheck disable=SC2046
  "${nice_cmd[@]}" "$build/bin/fuzz_$t" "$work" $(seeds_for "$t") -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 \
    -artifact_prefix="$art/" -print_final_stats=1 >"$log" 2>&1 || status=$?
  execs=$(grep -m1 "stat::number_of_executed_units" "$log" | awk '{print $2}' || true)
  if [[ "$status" -ne 0 || -n "$(ls -A "$art")" ]]; then
    { echo "fuzz: $t FAILED (exit $status, ${execs:-?} executions); log $log, reproducers in $art"
      tail -30 "$log"; } >"$build/result_$t"
    return 1
  fi
  echo "fuzz: $t ok: ${execs:-?} executions in ${seconds}s, no findings" >"$build/result_$t"
}

# FUZZ_PARALLEL targets at a time (default 1); results are printed in the order asked.
parallel="${FUZZ_PARALLEL:-1}"
running=0
for t in "${targets[@]}"; do
  rm -f "$build/result_$t"
  if [[ "$running" -ge "$parallel" ]]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait || true
failed=0
for t in "${targets[@]}"; do
  if [[ -f "$build/result_$t" ]] && grep -q "^fuzz: $t ok:" "$build/result_$t"; then
    cat "$build/result_$t"
  else
    cat "$build/result_$t" >&2 2>/dev/null || echo "fuzz: $t produced no result" >&2
    failed=1
  fi
done
exit $failed
