#!/usr/bin/env bash
# Fails when an include points up the layers runtime/ <- kernels/ <- models/ <- tools/: a folder
# includes only itself and folders to its left (docs/architecture.md). Prints each offending
# file:line.
set -uo pipefail
cd "$(dirname "$0")/.."
declare -A forbidden=(
  [runtime]='kernels|models|tools'
  [kernels]='models|tools'
  [models]='tools'
)
bad=0
for layer in runtime kernels models; do
  while IFS= read -r hit; do
    echo "check-layers: $hit  ($layer/ must not include ${forbidden[$layer]})" >&2
    bad=1
  done < <(git ls-files "$layer/" | grep -E '\.(h|hpp|c|cc|cpp)$' |
           xargs -r grep -nHE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<](${forbidden[$layer]})/")
done
if [[ $bad -ne 0 ]]; then
  echo "check-layers: includes point up the layers (runtime <- kernels <- models <- tools)" >&2
  exit 1
fi
echo "check-layers: every include points down the layers"
