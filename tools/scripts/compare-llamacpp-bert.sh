#!/usr/bin/env bash
# einfer against llama.cpp's llama-embedding on a GGUF "bert" written with llama.cpp's gguf-py the
# way convert_hf_to_gguf.py BertModel writes it (tests/gen/gen_bert.py --llamacpp): a MiniLM-shaped
# random model (6 layers, 384 wide, 12 heads, 512 positions) with all-MiniLM-L6-v2's real
# 30522-token vocabulary (from ../scratch/tok/minilm), and the Hugging Face folder it came from.
# For a few sentences it compares
#   - the token ids: llama-tokenize against einfer-run --tokenize (same GGUF);
#   - the sentence embeddings (mean pooling, L2-normalized: llama-embedding's defaults, the GGUF's
#     pooling_type 1) of llama-embedding and einfer-run --embed on the GGUF, as cosine and the
#     largest difference relative to the vector's largest value;
#   - einfer on the GGUF against einfer on the Hugging Face folder (the same weights: identical);
#   - the GGUF quantized by llama-quantize to Q8_0, einfer against llama-embedding on it;
#   - both against the float64 reference of tests/gen/gen_bert.py, once with BERT's GELU (erf, what
#     einfer runs) and once with ggml's (tanh through an f16 table, what llama.cpp runs).
#   usage: tools/scripts/compare-llamacpp-bert.sh [LLAMA_BIN] [EINFER_BIN] [WORK]
#   defaults: /work/scratch/llama.cpp/build/bin, build/release/bin, /tmp/einfer-llamacpp-bert.
# Not a ctest test: llama.cpp is a scratch peer, never part of einfer's build.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
llama="${1:-/work/scratch/llama.cpp/build/bin}"
bin="${2:-$root/build/release/bin}"
work="${3:-/tmp/einfer-llamacpp-bert}"
py=/usr/bin/python3

"$py" "$root/tests/gen/gen_bert.py" --llamacpp "$work" >/dev/null
gguf="$work/bert-minilm-random.gguf"
"$bin/einfer-pack" "$gguf" -o "$work/gguf.ein" 2>/dev/null
"$bin/einfer-pack" "$work/hf" -o "$work/hf.ein" 2>/dev/null
cat >"$work/texts.txt" <<'EOF'
Hello, world! How are you?
Once upon a time, there was a little girl named Lily.
The quick brown fox jumps over the lazy dog.
Edge devices run sentence encoders for search and classification.
I'm don't you'll we've they're she'd it's
1,000,000 costs $100.00 on 2024-01-31.
EOF

# Token ids, text by text.
same=0 total=0
while IFS= read -r text; do
  a=$("$llama/llama-tokenize" -m "$gguf" -p "$text" --ids --log-disable 2>/dev/null | tail -1 |
      tr -d '[],')
  b=$("$bin/einfer-run" "$work/gguf.ein" --tokenize -p "$text" 2>/dev/null)
  total=$((total + 1))
  if [[ "$a" == "$b" ]]; then same=$((same + 1)); else echo "ids differ for '$text': $a / $b"; fi
done <"$work/texts.txt"
echo "token ids: $same of $total texts identical (llama-tokenize vs einfer-run --tokenize)"

"$llama/llama-embedding" -m "$gguf" -f "$work/texts.txt" --embd-output-format json -t 1 -c 512 \
  -b 512 -ub 512 >"$work/llama.json" 2>"$work/llama.err"
"$bin/einfer-run" "$work/gguf.ein" --embed -f "$work/texts.txt" --json -t 1 >"$work/einfer_gguf.json" \
  2>/dev/null
"$bin/einfer-run" "$work/hf.ein" --embed -f "$work/texts.txt" --json -t 1 >"$work/einfer_hf.json" \
  2>/dev/null
"$bin/einfer-run" "$work/gguf.ein" --tokenize -f "$work/texts.txt" >"$work/ids.txt" 2>/dev/null
# The same model quantized by llama-quantize to Q8_0 (einfer packs its blocks as q8, group 32).
"$llama/llama-quantize" "$gguf" "$work/q8_0.gguf" Q8_0 >/dev/null 2>&1
"$bin/einfer-pack" "$work/q8_0.gguf" -o "$work/q8_0.ein" 2>/dev/null
"$llama/llama-embedding" -m "$work/q8_0.gguf" -f "$work/texts.txt" --embd-output-format json -t 1 \
  -c 512 -b 512 -ub 512 >"$work/llama_q8_0.json" 2>/dev/null
"$bin/einfer-run" "$work/q8_0.ein" --embed -f "$work/texts.txt" --json -t 1 \
  >"$work/einfer_q8_0.json" 2>/dev/null

"$py" - "$work" "$root/tests/gen" <<'EOF'
import json, struct, sys
import numpy as np
work, gen = sys.argv[1], sys.argv[2]
sys.path.insert(0, gen)
import gen_bert as g

def vectors(name):
    return np.array([d["embedding"] for d in json.load(open(f"{work}/{name}"))["data"]])

def compare(a, b, what):
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    rel = np.abs(a - b).max(1) / np.abs(b).max(1)
    print(f"{what}: cosine >= {cos.min():.8f}, largest difference {rel.max():.2e} of the largest "
          "value")

llama, eg, eh = vectors("llama.json"), vectors("einfer_gguf.json"), vectors("einfer_hf.json")
compare(eg, llama, "einfer (GGUF) vs llama-embedding")
compare(eg, eh, "einfer (GGUF) vs einfer (HF folder)")
q8e, q8l = vectors("einfer_q8_0.json"), vectors("llama_q8_0.json")
compare(q8e, q8l, "Q8_0: einfer vs llama-embedding")
compare(q8e, eg, "Q8_0: einfer vs einfer f32")
compare(q8l, eg, "Q8_0: llama-embedding vs einfer f32")

# The float64 reference on the folder's weights and einfer's ids.
raw = open(f"{work}/hf/model.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
w = {k: np.frombuffer(raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]], "<f4")
     .reshape(v["shape"]).astype(np.float64) for k, v in header.items() if k != "__metadata__"}
cfg = json.load(open(f"{work}/hf/config.json"))
ids = [[int(t) for t in line.split()] for line in open(f"{work}/ids.txt")]
ref = np.stack([g.forward(w, cfg, "mean", True, np.array(s))[1] for s in ids])
compare(eg, ref, "einfer vs float64 reference (GELU erf)")
compare(llama, ref, "llama-embedding vs float64 reference (GELU erf)")

def ggml_gelu(x):  # ggml-cpu GGML_GELU_FP16: tanh form, looked up by the input's f16 value
    h = x.astype(np.float16).astype(np.float64)
    y = (0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * h * (1 + 0.044715 * h * h))))
    y = y.astype(np.float16).astype(np.float64)
    return np.where(x <= -10, 0.0, np.where(x >= 10, x, y))
g.activation = lambda name: ggml_gelu
ref_ggml = np.stack([g.forward(w, cfg, "mean", True, np.array(s))[1] for s in ids])
compare(llama, ref_ggml, "llama-embedding vs float64 reference (ggml's f16-table GELU)")
EOF
