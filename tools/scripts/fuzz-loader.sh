#!/usr/bin/env bash
# Builds the libFuzzer loader target with clang (ASan + UBSan) in build/fuzz and runs it for a
# bounded time over the seed corpus tests/fuzz/corpus/. Exits non-zero on any finding (crash,
# sanitizer report, leak, timeout) or build failure.
#   usage: tools/scripts/fuzz-loader.sh [SECONDS]      (default 60)
# FUZZ_TARGET / FUZZ_CORPUS select another target and seed folder (tools/scripts/fuzz-tokenizer.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${1:-60}"
target="${FUZZ_TARGET:-fuzz_loader}"
corpus="${FUZZ_CORPUS:-tests/fuzz/corpus}"
build="$root/build/fuzz"
CC="${CC_FUZZ:-clang-14}"
CXX="${CXX_FUZZ:-clang++-14}"
command -v "$CXX" >/dev/null || { echo "fuzz-loader: $CXX not found" >&2; exit 1; }

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DEINFER_FUZZ=ON -DEINFER_BUILD_TOOLS=OFF -DEINFER_SANITIZE=address,undefined \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" >/dev/null
cmake --build "$build" --target "$target" -j2

# Work on a scratch copy of the corpus so new inputs do not land in the repository.
work="$build/corpus"
rm -rf "$work" "$build/artifacts"
mkdir -p "$work" "$build/artifacts"
cp "$root/$corpus"/* "$work"/
echo "fuzz-loader: running for ${seconds}s"
"$build/bin/$target" "$work" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 -artifact_prefix="$build/artifacts/" -print_final_stats=1 2>&1 | tail -25
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ] || [ -n "$(ls -A "$build/artifacts")" ]; then
  echo "fuzz-loader: FAILED (exit $status); reproducers in $build/artifacts" >&2
  exit 1
fi
echo "fuzz-loader: no findings"
