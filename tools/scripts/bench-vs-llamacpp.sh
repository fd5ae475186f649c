#!/usr/bin/env bash
# Side-by-side prefill/decode table, einfer vs llama.cpp, one thread, same model shapes.
#
# For each shape (15M and 110M llama2.c shapes) and weight type (f32, q8 / Q8_0, q4 / Q4_0) it
# runs, in alternating rounds, einfer-bench on a synthetic model of that shape and llama-bench on a
# same-shape GGUF, then prints the median tokens/s of each and the ratio einfer / llama.cpp.
# Prefill is pp128 for both; decode is llama-bench's tg32 (from an empty cache) against
# einfer-bench's tg32 from context 16. Each einfer row also gives its prefill against its own f32
# prefill of the same shape (the quantized GEMMs' speedup).
#
# Not part of CI (llama.cpp is not a dependency): without llama-bench or a GGUF the llama.cpp
# columns read "-" and only einfer runs.
#
# Usage: tools/scripts/bench-vs-llamacpp.sh [ROUNDS]      (default 3)
# Environment:
#   EINFER_BIN   einfer-bench's folder          (default: build/release/bin)
#   LLAMA_BENCH  llama-bench                    (default: ../scratch/llama.cpp/build/bin/llama-bench)
#   GGUF_15M     folder with s15m-{f32,q8_0,q4_0}.gguf   (default: ../scratch/threads-gguf)
#   GGUF_110M    folder with s110m-{f32,q8_0,q4_0}.gguf  (default: ../scratch/qgemm-gguf)
#   SHAPES       "15M 110M" or a subset
# The GGUFs: llama.cpp's gguf-py writing random weights of the shape (f32), then llama-quantize.
set -euo pipefail

rounds=${1:-3}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${EINFER_BIN:-$here/build/release/bin}
llama=${LLAMA_BENCH:-$here/../scratch/llama.cpp/build/bin/llama-bench}
gguf_15m=${GGUF_15M:-$here/../scratch/threads-gguf}
gguf_110m=${GGUF_110M:-$here/../scratch/qgemm-gguf}
shapes=${SHAPES:-"15M 110M"}

if [[ ! -x $bin/einfer-bench ]]; then
  echo "bench-vs-llamacpp: no einfer-bench in $bin (build the release preset or set EINFER_BIN)" >&2
  exit 2
fi
have_llama=1
if [[ ! -x $llama ]]; then
  echo "bench-vs-llamacpp: no llama-bench at $llama: llama.cpp columns skipped" >&2
  have_llama=0
fi

spec_of() {
  case $1 in
    15M) echo "dim=288,hidden=768,layers=6,heads=6,kv_heads=6,vocab=32000,seq=256,tied=0" ;;
    110M) echo "dim=768,hidden=2048,layers=12,heads=12,kv_heads=12,vocab=32000,seq=1024,tied=0" ;;
  esac
}
gguf_of() {  # shape dtype
  local dir=$gguf_15m stem=s15m
  [[ $1 == 110M ]] && dir=$gguf_110m stem=s110m
  case $2 in f32) echo "$dir/$stem-f32.gguf" ;; q8) echo "$dir/$stem-q8_0.gguf" ;; q4) echo "$dir/$stem-q4_0.gguf" ;; esac
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) printf "%.1f\n", v[(NR+1)/2]; else printf "%.1f\n", (v[NR/2]+v[NR/2+1])/2}'; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

load() { cut -d' ' -f1 /proc/loadavg; }
echo "load before: $(load) (1-minute average; the machine may be shared)" >&2

for ((r = 1; r <= rounds; ++r)); do
  for shape in $shapes; do
    for dt in f32 q8 q4; do
      key=$shape-$dt
      "$bin/einfer-bench" --synthetic "$(spec_of "$shape"),dtype=$dt" -p 128 -n 32 --contexts 16 \
        -r 3 -t 1 -o csv 2>/dev/null |
        awk -F, -v pp="$tmp/$key.e.pp" -v tg="$tmp/$key.e.tg" '
          $5 == "pp128" {print $10 >> pp} $5 ~ /^tg32/ {print $10 >> tg}'
      g=$(gguf_of "$shape" "$dt")
      if ((have_llama)) && [[ -f $g ]]; then
        "$llama" -m "$g" -p 128 -n 32 -t 1 -r 3 -o csv 2>/dev/null |
          awk -F, -v pp="$tmp/$key.l.pp" -v tg="$tmp/$key.l.tg" '
            NR > 1 {gsub(/"/, ""); if ($26 == 128) print $31 >> pp; else if ($27 == 32) print $31 >> tg}'
      fi
    done
  done
  echo "round $r/$rounds done, load $(load)" >&2
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f\n", a / b }'; }
get() { if [[ -f $tmp/$1 ]]; then median < "$tmp/$1"; else echo "-"; fi; }

echo
echo "| shape | weights | einfer pp128 t/s | llama.cpp pp128 t/s | pp ratio | einfer pp vs own f32 | einfer tg32 t/s | llama.cpp tg32 t/s | tg ratio |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for shape in $shapes; do
  f32pp=$(get "$shape-f32.e.pp")
  for dt in f32 q8 q4; do
    key=$shape-$dt
    epp=$(get "$key.e.pp") lpp=$(get "$key.l.pp") etg=$(get "$key.e.tg") ltg=$(get "$key.l.tg")
    echo "| $shape | $dt | $epp | $lpp | $(ratio "$epp" "$lpp") | $(ratio "$epp" "$f32pp") | $etg | $ltg | $(ratio "$etg" "$ltg") |"
  done
done
echo
echo "medians of $rounds alternating rounds (each round: einfer-bench -r 3 then llama-bench -r 3 per row; wall-clock tokens/s), -t 1, load after: $(load)"
