#!/usr/bin/env bash
# Builds the libFuzzer tokenizer target with clang (ASan + UBSan) in build/fuzz and runs it for a
# bounded time over the seed corpus tests/fuzz/corpus_tokenizer/. Exits non-zero on any finding (crash,
# sanitizer report, leak, timeout) or build failure.
#   usage: tools/scripts/fuzz-tokenizer.sh [SECONDS]      (default 60)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${1:-60}"
build="$root/build/fuzz"
CC="${CC_FUZZ:-clang-14}"
CXX="${CXX_FUZZ:-clang++-14}"
command -v "$CXX" >/dev/null || { echo "fuzz-tokenizer: $CXX not found" >&2; exit 1; }

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DEINFER_FUZZ=ON -DEINFER_BUILD_TOOLS=OFF -DEINFER_SANITIZE=address,undefined \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" >/dev/null
cmake --build "$build" --target fuzz_tokenizer -j2

# Work on a scratch copy of the corpus so new inputs do not land in the repository.
work="$build/corpus"
rm -rf "$work" "$build/artifacts"
mkdir -p "$work" "$build/artifacts"
cp "$root"/tests/fuzz/corpus_tokenizer/* "$work"/
echo "fuzz-tokenizer: running for ${seconds}s"
"$build/bin/fuzz_tokenizer" "$work" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 -artifact_prefix="$build/artifacts/" -print_final_stats=1 2>&1 | tail -25
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ] || [ -n "$(ls -A "$build/artifacts")" ]; then
  echo "fuzz-tokenizer: FAILED (exit $status); reproducers in $build/artifacts" >&2
  exit 1
fi
echo "fuzz-tokenizer: no findings"
