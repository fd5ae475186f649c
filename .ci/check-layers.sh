#!/usr/bin/env bash
# Fails when an include breaks the layering (docs/architecture.md), printing each offending
# file:line:
#   1. up the layers runtime/ <- kernels/ <- models/ <- tools/: a folder includes only itself and
#      folders to its left;
#   2. into another kernel op's private files: kernels/<op>/<op>.h is the op's one public header,
#      every other file under kernels/<op>/ is private to that folder, so runtime/, models/,
#      tools/, examples/ and the other op folders include only kernels/<op>/<op>.h (tests/ may reach
#      inside, to check microkernels against their twins);
#   3. a kernel file outside an op folder, or an op folder without its public header.
# It first proves on a scratch tree that each rule rejects an injected bad include (and accepts the
# good ones), then checks this tree. `--self-test` runs only the first part.
set -uo pipefail
cd "$(dirname "$0")/.."

declare -A forbidden=(
  [runtime]='kernels|models|tools'
  [kernels]='models|tools'
  [models]='tools'
)
sources='\.(h|hpp|c|cc|cpp|inc)$'
include_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]'

# check_tree DIR: the three rules over the C/C++ files of DIR (a git checkout: its tracked files;
# otherwise every file). Prints the offences, returns 1 if there is any.
check_tree() {
  local root=$1 bad=0 hit layer file line inc op inc_op rest dir
  local files
  if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git -C "$root" ls-files runtime kernels models tools examples | grep -E "$sources")
  else
    files=$(cd "$root" && find runtime kernels models tools examples -type f 2>/dev/null |
            grep -E "$sources")
  fi
  # 1. Up the layers.
  for layer in runtime kernels models; do
    while IFS= read -r hit; do
      [[ -n "$hit" ]] || continue
      echo "check-layers: $hit  ($layer/ must not include ${forbidden[$layer]})" >&2
      bad=1
    done < <(cd "$root" && grep -E "^$layer/" <<<"$files" |
             xargs -r grep -nHE "${include_re}(${forbidden[$layer]})/")
  done
  # 2. Into another op's private files.
  while IFS= read -r hit; do
    [[ -n "$hit" ]] || continue
    file=${hit%%:*}
    line=${hit#*:}
    inc=$(sed -E 's/.*include[[:space:]]*["<]kernels\/([^">]+)[">].*/\1/' <<<"${line#*:}")
    inc_op=${inc%%/*}
    rest=${inc#*/}
    op=""
    [[ "$file" == kernels/*/* ]] && op=$(cut -d/ -f2 <<<"$file")
    if [[ "$op" != "$inc_op" && "$rest" != "$inc_op.h" ]]; then
      echo "check-layers: $file:${line%%:*}  (kernels/$inc is private to kernels/$inc_op/;" \
           "include kernels/$inc_op/$inc_op.h)" >&2
      bad=1
    fi
  done < <(cd "$root" && xargs -r grep -nHE "${include_re}kernels/[^/\">]+/" <<<"$files")
  # 3. Every kernel file in an op folder, every op folder with its public header.
  while IFS= read -r file; do
    [[ -n "$file" ]] || continue
    echo "check-layers: $file  (kernel sources live in an op folder, kernels/<op>/)" >&2
    bad=1
  done < <(grep -E '^kernels/[^/]+$' <<<"$files")
  for dir in $(grep -E '^kernels/[^/]+/' <<<"$files" | cut -d/ -f2 | sort -u); do
    if [[ ! -f "$root/kernels/$dir/$dir.h" ]]; then
      echo "check-layers: kernels/$dir/  (an op folder has its public header kernels/$dir/$dir.h)" >&2
      bad=1
    fi
  done
  return $bad
}

# The rules on a scratch tree: each bad include alone must fail the check, the good ones pass.
self_test() {
  local tmp ok=1 name
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  mkdir -p "$tmp"/{runtime,models,tools/x,kernels/vec,kernels/gemm_quant/x86}
  printf '#pragma once\n' >"$tmp/kernels/vec/vec.h"
  printf '#pragma once\n' >"$tmp/kernels/gemm_quant/gemm_quant.h"
  printf '#pragma once\n' >"$tmp/kernels/gemm_quant/gemm_quant_internal.h"
  printf '#pragma once\n' >"$tmp/runtime/status.h"
  # Good: an op's own private files (its subfolders too), other ops' public headers, down-layer.
  printf '#include "kernels/gemm_quant/gemm_quant_internal.h"\n#include "kernels/vec/vec.h"\n' \
    >"$tmp/kernels/gemm_quant/x86/gemm_q8_4x4_avx2.cpp"
  printf '#include "kernels/gemm_quant/gemm_quant.h"\n#include "runtime/status.h"\n' \
    >"$tmp/models/llama.cpp"
  if ! check_tree "$tmp" 2>/dev/null; then
    echo "check-layers: self-test: a tree of good includes was rejected" >&2
    ok=0
  fi
  # Bad, one at a time.
  local -A bad_files=(
    [cross-op private include]='kernels/vec/vec_f32_simd.cpp|#include "kernels/gemm_quant/gemm_quant_internal.h"'
    [private include from models/]='models/mha.cpp|#include "kernels/gemm_quant/x86/gemm_q8_4x4_avx2.cpp"'
    [private include from tools/]='tools/x/main.cpp|  #  include "kernels/gemm_quant/gemm_quant_internal.h"'
    [include up the layers]='kernels/vec/vec_f32_scalar.cpp|#include "models/llama.h"'
    [kernel file outside an op folder]='kernels/loose.cpp|#include "kernels/vec/vec.h"'
    [op folder without its public header]='kernels/rope/rope_scalar.cpp|#include "kernels/vec/vec.h"'
  )
  for name in "${!bad_files[@]}"; do
    local spec=${bad_files[$name]} path
    path=$tmp/${spec%%|*}
    mkdir -p "$(dirname "$path")"
    printf '%s\n' "${spec#*|}" >"$path"
    local out
    if out=$(check_tree "$tmp" 2>&1) || ! grep -q "$(dirname "${spec%%|*}")/" <<<"$out"; then
      echo "check-layers: self-test: the $name (${spec%%|*}) was not rejected" >&2
      ok=0
    fi
    rm -f "$path"
  done
  if [[ $ok -ne 1 ]]; then
    echo "check-layers: self-test FAILED" >&2
    return 1
  fi
  echo "check-layers: self-test: each injected bad include is rejected, good ones pass"
}

self_test || exit 1
[[ "${1:-}" == "--self-test" ]] && exit 0
if ! check_tree .; then
  echo "check-layers: includes break the layering (runtime <- kernels <- models <- tools; one" \
       "public header per kernel op)" >&2
  exit 1
fi
echo "check-layers: every include points down the layers and into kernel ops through their public headers"
