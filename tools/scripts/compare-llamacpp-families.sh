#!/usr/bin/env bash
# einfer against llama.cpp on the GGUF forms of the families llama.cpp c392e509 runs (gemma2,
# phi3): random-weight models with the 512-token vocabulary of ../shared/models/tinystories260K
# (tests/gen/gen_families.py --llamacpp), a 26-layer gemma2 (llama.cpp's 2B type: it aborts on
# other layer counts for gemma2) with soft-capping 50 / 30 and a window of 8, and a phi3 with
# longrope over an original context of 64 and a window of 12. For each: the greedy continuation of
# a prompt (llama-cli --temp 0, einfer-run --temp 0) and the logits llama-eval-callback prints for
# the prompt's last position (its first and last three) beside einfer-run --logits'.
#
#   tools/scripts/compare-llamacpp-families.sh [LLAMA_BIN] [EINFER_BIN] [WORK]
# defaults: /work/scratch/llama.cpp/build/bin, build/release/bin, /tmp/einfer-llamacpp-families.
# Not a ctest test: llama.cpp is a scratch peer, never part of einfer's build.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
llama="${1:-/work/scratch/llama.cpp/build/bin}"
einfer="${2:-$root/build/release/bin}"
work="${3:-/tmp/einfer-llamacpp-families}"
prompt="Once upon a time"
mkdir -p "$work"
/usr/bin/python3 "$root/tests/gen/gen_families.py" --llamacpp "$work"
export LD_LIBRARY_PATH="$llama${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
for m in gemma2 phi3; do
  gguf="$work/llamacpp_$m.gguf"
  "$einfer/einfer-pack" "$gguf" -o "$work/$m.ein" 2>/dev/null
  # Greedy text: llama.cpp prints byte pieces of incomplete UTF-8 and control bytes as they come,
  # einfer-run whole printable characters only, so both are compared without those.
  "$llama/llama-cli" -m "$gguf" -p "$prompt" -n 32 --temp 0 -no-cnv -s 1 -t 1 \
    -ctk f32 -ctv f32 2>/dev/null >"$work/$m.llamacpp.txt" </dev/null
  "$einfer/einfer-run" "$work/$m.ein" -p "$prompt" -n 32 --temp 0 2>/dev/null >"$work/$m.einfer.txt"
  "$llama/llama-eval-callback" -m "$gguf" -p "$prompt" -n 1 --temp 0 -t 1 -ctk f32 -ctv f32 \
    >"$work/$m.callback.txt" 2>&1
  "$einfer/einfer-run" "$work/$m.ein" -p "$prompt" -n 1 --temp 0 --logits "$work/$m.logits.npy" \
    >/dev/null 2>&1
  /usr/bin/python3 - "$m" "$work" <<'EOF' || status=1
import re, sys
import numpy as np
m, work = sys.argv[1], sys.argv[2]
def text(path):
    t = open(path, "rb").read().decode("utf-8", "ignore").replace("\ufffd", "")
    return "".join(ch for ch in t if ch == "\n" or ord(ch) >= 32).strip()
a, b = text(f"{work}/{m}.llamacpp.txt"), text(f"{work}/{m}.einfer.txt")
lines = open(f"{work}/{m}.callback.txt").read().split("result_output")[-1].splitlines()
vals = [float(v) for v in re.findall(r"-?\d+\.\d+", next(l for l in lines if "..." in l))]
logits = np.load(f"{work}/{m}.logits.npy")
ours = np.concatenate([logits[-2][:3], logits[-2][-3:]])  # the prompt's last position
diff = np.abs(ours - np.array(vals)).max()
print(f"{m}: greedy text {'equal' if a == b else 'DIFFERENT'}: {b!r}")
if a != b:
    print(f"{m}: llama.cpp: {a!r}")
print(f"{m}: last prompt position, first/last 3 logits: llama.cpp {vals}")
print(f"{m}:                                          einfer    {[round(float(x), 4) for x in ours]}"
      f"  (max |diff| {diff:.2g})")
sys.exit(0 if a == b else 1)
EOF
done
exit $status
