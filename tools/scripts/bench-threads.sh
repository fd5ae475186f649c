#!/usr/bin/env bash
# The issue-14 acceptance table in one run: 2 threads against 1, for the 15M and 110M llama2.c
# shapes (synthetic weights) in f32, q8 and q4, prefill of 128 tokens and decode of 32, with
# llama.cpp's llama-bench on same-shape GGUFs beside it when it is there. Not part of CI: wall-clock
# speedups mean something only on a quiet machine, so the load average is printed with every row.
#
#   tools/scripts/bench-threads.sh [BUILD_DIR]       (default build/release; ~3-5 min on 2 cores)
#
# einfer: ROUNDS einfer-bench -t 2 processes per row; each alternates 1- and 2-thread passes itself
# and reports its medians' ratio (prefill: whole 128-token prompt; decode: p50 step at context 128).
# The row shows the medians over the processes (a load burst on a shared host, which often slows
# one vCPU only and so only the 2-thread passes, then spoils one process, not the row).
# VERBOSE=1 prints every process's ratios.
# llama.cpp: llama-bench -t 1 and -t 2 (-p 128 -n 32 -r 1) in alternating order, ROUNDS times;
# medians of tokens/s. Found in $LLAMA_BIN (default /work/scratch/llama.cpp/build/bin), GGUFs in
# $GGUF_DIR (default /work/scratch/threads-gguf: s15m-{f32,q8_0,q4_0}.gguf, s110m-...). Either
# missing: its columns say "-". Neither is ever part of the repository.
# Environment: ROUNDS (llama.cpp rounds and einfer repetitions, default 5), SHAPES ("15M 110M"),
# DTYPES ("f32 q8 q4").
set -euo pipefail

build=${1:-build/release}
bench="$build/bin/einfer-bench"
llama_bin=${LLAMA_BIN:-/work/scratch/llama.cpp/build/bin}
gguf_dir=${GGUF_DIR:-/work/scratch/threads-gguf}
rounds=${ROUNDS:-5}
shapes=${SHAPES:-"15M 110M"}
dtypes=${DTYPES:-"f32 q8 q4"}

if [[ ! -x $bench ]]; then
  echo "bench-threads: $bench not found (build the release preset first)" >&2
  exit 1
fi
if [[ $(nproc) -lt 2 ]]; then
  echo "bench-threads: needs at least 2 online cores" >&2
  exit 1
fi

spec_of() {
  case $1 in
    15M) echo "dim=288,hidden=768,layers=6,heads=6,kv_heads=6,vocab=32000,seq=256" ;;
    110M) echo "dim=768,hidden=2048,layers=12,heads=12,kv_heads=12,vocab=32000,seq=1024" ;;
  esac
}
gguf_of() {  # shape dtype -> path
  local s=s${1,,} q
  case $2 in f32) q=f32 ;; q8) q=q8_0 ;; q4) q=q4_0 ;; esac
  echo "$gguf_dir/$s-$q.gguf"
}
load1() { cut -d' ' -f1 /proc/loadavg; }

median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print ""; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# llama-bench -t T on one GGUF, one repetition: "pp_tps tg_tps" (empty on failure).
llama_once() {
  "$llama_bin/llama-bench" -m "$1" -t "$2" -p 128 -n 32 -r 1 -o csv 2>/dev/null |
    awk -F, 'NR == 1 {for (i = 1; i <= NF; ++i) {gsub(/"/, "", $i); col[$i] = i}; next}
             {gsub(/"/, ""); if ($col["n_prompt"] > 0) pp = $col["avg_ts"]; else tg = $col["avg_ts"]}
             END {if (pp != "" && tg != "") print pp, tg}'
}

have_llama=0
[[ -x $llama_bin/llama-bench ]] && have_llama=1

echo "# bench-threads: 2 threads vs 1, $(nproc) online cores, $(date -u +%FT%TZ), commit $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
echo "# einfer: $rounds processes of einfer-bench --synthetic SHAPE,dtype=D -t 2 --contexts 128 --prompt 128 --gen 32 --repeat 5 (each alternates 1- and 2-thread passes; medians over the processes, wall clock)"
if ((have_llama)); then
  echo "# llama.cpp: llama-bench -t 1|2 -p 128 -n 32 -r 1, $rounds alternated rounds, medians of t/s ($llama_bin)"
else
  echo "# llama.cpp: not found at $llama_bin (columns skipped)"
fi
echo
printf '| %-5s | %-4s | %-22s | %-22s | %-27s | %-27s | %-9s |\n' shape type \
  "einfer prefill 1t/2t ms" "einfer decode 1t/2t ms" "llama.cpp pp128 1t/2t t/s" "llama.cpp tg32 1t/2t t/s" "load"
printf '|%s|\n' "-------|------|------------------------|------------------------|-----------------------------|-----------------------------|-----------"

for shape in $shapes; do
  spec=$(spec_of "$shape")
  if [[ -z $spec ]]; then
    echo "bench-threads: unknown shape $shape (15M or 110M)" >&2
    exit 1
  fi
  for dtype in $dtypes; do
    load_before=$(load1)
    # ROUNDS separate processes, each alternating 1- and 2-thread passes (5 each) and reporting
    # medians: a burst of load on a shared host then spoils one process, not the row. The row
    # gives the medians over the processes of the 1- and 2-thread times and of their ratios.
    p1=() p2=() pr=() d1=() d2=() dr=()
    for ((r = 0; r < rounds; ++r)); do
      out=$("$bench" --synthetic "$spec,dtype=$dtype" -t 2 --contexts 128 --prompt 128 --gen 32 \
        --repeat 5 -o text)
      # threads  prefill 2 threads vs 1 (...): A ms vs B ms = Rx / threads  decode@128 p50 A ms vs B ms = Rx
      read -r two one ratio <<<"$(awk '/^threads +prefill/ {for (i = 1; i <= NF; ++i) if ($i == "vs") {two = $(i-2); one = $(i+1)}; r = $NF; sub(/x$/, "", r); print two, one, r}' <<<"$out")"
      p1+=("$one") p2+=("$two") pr+=("$ratio")
      read -r two one ratio <<<"$(awk '/^threads +decode/ {for (i = 1; i <= NF; ++i) if ($i == "vs") {two = $(i-2); one = $(i+1)}; r = $NF; sub(/x$/, "", r); print two, one, r}' <<<"$out")"
      d1+=("$one") d2+=("$two") dr+=("$ratio")
    done
    row() {  # one-thread ms, two-thread ms, ratios (as arrays' names)
      local -n a=$1 b=$2 c=$3
      printf '%s / %s = %sx' "$(printf '%s\n' "${a[@]}" | median)" "$(printf '%s\n' "${b[@]}" | median)" \
        "$(printf '%s\n' "${c[@]}" | median)"
    }
    pre=$(row p1 p2 pr) dec=$(row d1 d2 dr)
    [[ -n ${VERBOSE:-} ]] && echo "# $shape $dtype prefill ratios: ${pr[*]}; decode ratios: ${dr[*]}"
    lpp="-" ltg="-"
    gguf=$(gguf_of "$shape" "$dtype")
    if ((have_llama)) && [[ -f $gguf ]]; then
      pp1=() pp2=() tg1=() tg2=()
      for ((r = 0; r < rounds; ++r)); do
        order="1 2"
        ((r % 2)) && order="2 1"
        for t in $order; do
          read -r pp tg <<<"$(llama_once "$gguf" "$t")" || true
          [[ -z ${pp:-} ]] && continue
          if [[ $t == 1 ]]; then pp1+=("$pp") tg1+=("$tg"); else pp2+=("$pp") tg2+=("$tg"); fi
        done
      done
      if ((${#pp1[@]} && ${#pp2[@]})); then
        m_pp1=$(printf '%s\n' "${pp1[@]}" | median) m_pp2=$(printf '%s\n' "${pp2[@]}" | median)
        m_tg1=$(printf '%s\n' "${tg1[@]}" | median) m_tg2=$(printf '%s\n' "${tg2[@]}" | median)
        lpp=$(awk -v a="$m_pp1" -v b="$m_pp2" 'BEGIN {printf "%.0f / %.0f = %.2fx", a, b, b / a}')
        ltg=$(awk -v a="$m_tg1" -v b="$m_tg2" 'BEGIN {printf "%.0f / %.0f = %.2fx", a, b, b / a}')
      else
        lpp="failed" ltg="failed"
      fi
    fi
    printf '| %-5s | %-4s | %-22s | %-22s | %-27s | %-27s | %-9s |\n' "$shape" "$dtype" "$pre" "$dec" \
      "$lpp" "$ltg" "$load_before-$(load1)"
  done
done
echo
echo "# ratios: time at 1 thread / time at 2 (einfer), t/s at 2 / t/s at 1 (llama.cpp); load: 1-minute"
echo "# load average before-after the row (2 cores: above ~0.5 the figures are not a quiet machine's)"
