#!/usr/bin/env bash
# GGUF K-quant models against einfer's own q4 on the same weights, one thread: the issue-13 table.
#
# From one float GGUF (e.g. llama.cpp's gguf-py writing random weights of the 110M llama2.c shape)
# and its llama-quantize outputs, it packs with einfer-pack (into a temporary folder):
#   q4        einfer's own q4 (group 32) from the float GGUF
#   Q4_K      a pure Q4_K file (llama-quantize --pure ... Q4_K_M: every matrix Q4_K)
#   Q4_K_M    llama-quantize's Q4_K_M mix (Q4_K with some Q6_K)
# (each only when its GGUF is there), then runs einfer-bench on them in alternating rounds and
# prints the medians of prefill (pp64) and decode (tg64 from context 128) tokens/s, each against
# q4's. Not part of CI: the GGUFs are not in the repository.
#
# Usage: tools/scripts/bench-kquant.sh DIR [ROUNDS]     (ROUNDS default 7)
#   DIR holds STEM-f32.gguf and any of STEM-q4_k-pure.gguf, STEM-q4_k_m.gguf (STEM default s110m)
# Environment: EINFER_BIN (einfer-bench's and einfer-pack's folder, default build/release/bin),
#   STEM.
set -euo pipefail

dir=${1:?usage: bench-kquant.sh DIR [ROUNDS]}
rounds=${2:-7}
stem=${STEM:-s110m}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${EINFER_BIN:-$here/build/release/bin}
for tool in einfer-bench einfer-pack; do
  if [[ ! -x $bin/$tool ]]; then
    echo "bench-kquant: no $tool in $bin (build the release preset or set EINFER_BIN)" >&2
    exit 2
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
names=()
pack() {  # name, gguf, extra einfer-pack flags
  [[ -f $2 ]] || return 0
  "$bin/einfer-pack" "$2" "${@:3}" -o "$tmp/$1.ein" >/dev/null 2>&1 ||
    { echo "bench-kquant: einfer-pack failed on $2" >&2; exit 1; }
  names+=("$1")
}
pack q4 "$dir/$stem-f32.gguf" --dtype q4 --group 32
pack Q4_K "$dir/$stem-q4_k-pure.gguf"
pack Q4_K_M "$dir/$stem-q4_k_m.gguf"
if [[ ${#names[@]} -eq 0 ]]; then
  echo "bench-kquant: no $stem-*.gguf in $dir" >&2
  exit 2
fi

load() { cut -d' ' -f1 /proc/loadavg; }
echo "load before: $(load) (1-minute average; the machine may be shared)" >&2
for ((r = 1; r <= rounds; ++r)); do
  for n in "${names[@]}"; do
    "$bin/einfer-bench" -m "$tmp/$n.ein" -t 1 --contexts 128 -p 64 -n 64 -r 3 -o csv 2>/dev/null |
      awk -F, -v pp="$tmp/$n.pp" -v tg="$tmp/$n.tg" '$5 == "pp64" {print $10 >> pp} $5 ~ /^tg64/ {print $10 >> tg}'
  done
  echo "round $r/$rounds done, load $(load)" >&2
done

median() { sort -g "$1" | awk '{v[NR]=$1} END {if (NR % 2) printf "%.1f", v[(NR+1)/2]; else printf "%.1f", (v[NR/2]+v[NR/2+1])/2}'; }
echo "| weights | MB | prefill pp64 t/s | vs q4 | decode tg64@128 t/s | vs q4 |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
base_pp="" base_tg=""
[[ -f $tmp/q4.pp ]] && base_pp=$(median "$tmp/q4.pp") base_tg=$(median "$tmp/q4.tg")
for n in "${names[@]}"; do
  pp=$(median "$tmp/$n.pp") tg=$(median "$tmp/$n.tg")
  mb=$(awk -v b="$(stat -c %s "$tmp/$n.ein")" 'BEGIN {printf "%.1f", b / 1e6}')
  rp="-" rt="-"
  if [[ -n $base_pp ]]; then
    rp=$(awk -v a="$pp" -v b="$base_pp" 'BEGIN {printf "%.2f", a / b}')
    rt=$(awk -v a="$tg" -v b="$base_tg" 'BEGIN {printf "%.2f", a / b}')
  fi
  echo "| $n | $mb | $pp | $rp | $tg | $rt |"
done
echo
echo "medians of $rounds alternating rounds (einfer-bench -t 1 -p 64 -n 64 --contexts 128 -r 3 per model), load after: $(load)"
