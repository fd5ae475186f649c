#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan + UBSan (-fno-sanitize-recover), in
# build/fuzz, and runs each for a bounded time over its seeds. Exits non-zero on any finding
# (crash, sanitizer report, leak, allocation over the limit, timeout) or build failure, and prints
# each target's executions from libFuzzer's final stats.
#   usage: tools/scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 20 s, all targets)
#   targets: loader tokenizer einsum_spec gguf safetensors llama2c json tokenizer_file npy capi
#   env: FUZZ_JOBS=N (default 1) parallel fuzzing processes per target; FUZZ_NICE=1 runs at nice 19.
# Reproducers land in build/fuzz/artifacts/<target>/; re-run one with build/fuzz/bin/fuzz_<target> FILE.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${1:-20}"
shift || true
all=(loader tokenizer einsum_spec gguf safetensors llama2c json tokenizer_file npy capi)
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

failed=0
for t in "${targets[@]}"; do
  work="$build/corpus/$t"
  art="$build/artifacts/$t"
  rm -rf "$work" "$art"
  mkdir -p "$work" "$art"
  log="$build/fuzz_$t.log"
  status=0
  # shellcheck disable=SC2046
  "${nice_cmd[@]}" "$build/bin/fuzz_$t" "$work" $(seeds_for "$t") -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 \
    -artifact_prefix="$art/" -print_final_stats=1 >"$log" 2>&1 || status=$?
  execs=$(grep -m1 "stat::number_of_executed_units" "$log" | awk '{print $2}' || true)
  if [[ "$status" -ne 0 || -n "$(ls -A "$art")" ]]; then
    echo "fuzz: $t FAILED (exit $status, ${execs:-?} executions); log $log, reproducers in $art" >&2
    tail -30 "$log" >&2
    failed=1
  else
    echo "fuzz: $t ok: ${execs:-?} executions in ${seconds}s, no findings"
  fi
done
exit $failed
