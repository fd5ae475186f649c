#!/usr/bin/env bash
# All tests, every target: installs prerequisites (setup-debian.sh), runs the source checks
# (.ci/check-layers.sh, which first proves on a scratch tree that it rejects an injected bad
# include; .ci/check-format.sh), then for each CMake preset
# configures, builds (-j2) and runs ctest --output-on-failure. Prints a summary with timings and
# exits non-zero if any step of any preset failed. With no arguments it also runs every libFuzzer
# target for 10 s, two at a time (tools/scripts/fuzz.sh; its clang build takes longer than that).
#
#   tools/scripts/test-all.sh                  all presets
#   tools/scripts/test-all.sh release armhf    only these presets
set -uo pipefail
cd "$(dirname "$0")/../.."

# The host set plus the test tools and the cross toolchains of the presets asked for.
bash tools/scripts/setup-debian.sh --tests "$@" || exit 1

presets=("$@")
if [[ ${#presets[@]} -eq 0 ]]; then
  presets=(release debug tsan nosimd aarch64 aarch64-nodot armhf cortex-m cortex-m55)
fi

summary=()
failed=0
total_start=$(date +%s)

# Source checks first (seconds): the layering of includes and clang-format.
for check in check-layers check-format; do
  start=$(date +%s)
  echo "=== $check"
  status=ok
  bash ".ci/$check.sh" || status="FAILED"
  [[ "$status" == ok ]] || failed=1
  summary+=("$(printf '%-14s %-18s %4d s' "$check" "$status" "$(( $(date +%s) - start ))")")
done

for preset in "${presets[@]}"; do
  start=$(date +%s)
  status=ok
  echo "=== $preset: configure"
  if ! cmake --preset "$preset"; then
    status="configure FAILED"
  else
    echo "=== $preset: build"
    if ! cmake --build --preset "$preset"; then
      status="build FAILED"
    else
      echo "=== $preset: test"
      if ! ctest --preset "$preset" --output-on-failure; then
        status="tests FAILED"
      fi
    fi
  fi
  seconds=$(( $(date +%s) - start ))
  [[ "$status" == ok ]] || failed=1
  summary+=("$(printf '%-14s %-18s %4d s' "$preset" "$status" "$seconds")")
done

# Every libFuzzer target (clang), 10 s each, two at a time, when every preset was asked for.
# Longer campaigns: docs/hostile-input.md.
if [[ $# -eq 0 ]]; then
  start=$(date +%s)
  echo "=== fuzz: every target (10 s each, two at a time)"
  status=ok
  FUZZ_PARALLEL=2 bash tools/scripts/fuzz.sh 10 || status="FAILED"
  [[ "$status" == ok ]] || failed=1
  summary+=("$(printf '%-14s %-18s %4d s' "fuzz" "$status" "$(( $(date +%s) - start ))")")
fi

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
echo "total $(( $(date +%s) - total_start )) s"
if [[ $failed -ne 0 ]]; then
  echo "FAILED"
  exit 1
fi
echo "all presets passed"
