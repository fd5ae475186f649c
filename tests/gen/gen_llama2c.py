#!/usr/bin/python3
"""Writes tiny llama2.c checkpoints (v0 legacy, v1 and v2 as llama2.c's export.py lays them out)
from one set of random weights, plus reference tensors as raw little-endian float32 files.

Output: tests/data/format/llama2c_{v0,v1,v2}.bin and llama2c_ref_*.f32. Run with /usr/bin/python3.
Forward references llama2c_ref_fwd_{v1,v2,v1_linear}.{f32,i32}: float64 logits of every position of
llama_reference.TOKENS as llama2.c's run.c computes them (interleaved RoPE, eps 1e-5, theta 10000),
on the float weights (v0 and v1 hold the same ones) and on v2's dequantized int8 groups;
v1_linear: v1's weights with causal linear-elu attention (llama_reference.forward).
hidden_dim 36 with group 8 makes v2 groups straddle rows of w2 ([16, 36]: 36 % 8 != 0).
"""
import os
import struct

import numpy as np

import llama_reference as ref

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "format")
dim, hidden, layers, heads, kv_heads, vocab, seq = 16, 36, 2, 4, 2, 32, 16
head = dim // heads
group = 8
rnd = ref.normal_source(1234, 0.5)

tok = rnd(vocab, dim)
att_norm = [1 + rnd(dim) for _ in range(layers)]
ffn_norm = [1 + rnd(dim) for _ in range(layers)]
final_norm = 1 + rnd(dim)
wq = [rnd(heads * head, dim) for _ in range(layers)]
wk = [rnd(kv_heads * head, dim) for _ in range(layers)]
wv = [rnd(kv_heads * head, dim) for _ in range(layers)]
wo = [rnd(dim, heads * head) for _ in range(layers)]
w1 = [rnd(hidden, dim) for _ in range(layers)]
w2 = [rnd(dim, hidden) for _ in range(layers)]
w3 = [rnd(hidden, dim) for _ in range(layers)]
wcls = rnd(vocab, dim)


def f32(*arrays):
    return b"".join(np.ascontiguousarray(a, dtype="<f4").tobytes() for a in arrays)


# v0: 7 int32 (negative vocab: untied classifier), weights stacked per kind, freq_cis, wcls.
freq = np.zeros((seq, head // 2), np.float32)
v0 = struct.pack("<7i", dim, hidden, layers, heads, kv_heads, -vocab, seq)
v0 += f32(tok, *att_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w1, *w2, *w3, final_norm, freq, freq, wcls)

# v1/v2 header: magic, version, 7 ints, shared_classifier byte, [group size], zero pad to 256.
def header(version, extra=b""):
    h = struct.pack("<I", 0x616B3432) + struct.pack("<i", version)
    h += struct.pack("<7i", dim, hidden, layers, heads, kv_heads, vocab, seq)
    h += struct.pack("<B", 0) + extra
    return h + b"\0" * (256 - len(h))


v1 = header(1) + f32(*att_norm, *ffn_norm, final_norm, tok, *wq, *wk, *wv, *wo, *w1, *w2, *w3, wcls)


def quantize_q80(w):
    """export.py's quantize_q80: flat groups of `group`, scale = absmax / 127, round to int8."""
    flat = w.reshape(-1, group)
    wmax = np.abs(flat).max(axis=1)
    scale = wmax / 127.0
    q = np.round(flat / scale[:, None]).astype(np.int8)
    return q.reshape(-1), scale.astype(np.float32)


v2 = header(2, struct.pack("<i", group)) + f32(*att_norm, *ffn_norm, final_norm)
deq = {}
for name, mats in [("tok", [tok]), ("wq", wq), ("wk", wk), ("wv", wv), ("wo", wo), ("w1", w1),
                   ("w2", w2), ("w3", w3), ("cls", [wcls])]:
    for i, m in enumerate(mats):
        q, s = quantize_q80(m)
        v2 += q.tobytes() + s.astype("<f4").tobytes()
        deq[(name, i)] = (q.reshape(-1, group).astype(np.float32) * s[:, None]).reshape(m.shape)


def llama2c_forward(get, attention="softmax", attends=None, tokens=ref.TOKENS):
    """run.c's forward over every position of ref.TOKENS; get(name, i) gives matrix i of a kind.
    attention="linear-elu": the same decoder with causal linear attention (issue 19)."""
    w = {"tok": get("tok", 0), "final_norm": final_norm, "cls": get("cls", 0),
         "att_norm": att_norm, "ffn_norm": ffn_norm}
    for kind, key in [("wq", "wq"), ("wk", "wk"), ("wv", "wv"), ("wo", "wo"), ("w1", "gate"),
                      ("w2", "down"), ("w3", "up")]:
        w[key] = [get(kind, l) for l in range(layers)]
    return ref.forward(w, tokens, heads, kv_heads, eps=1e-5, theta=10000.0,
                       mode="interleaved", attention=attention, attends=attends)


floats = {"tok": [tok], "cls": [wcls], "wq": wq, "wk": wk, "wv": wv, "wo": wo, "w1": w1, "w2": w2,
          "w3": w3}
fwd = {"v1": llama2c_forward(lambda k, i: floats[k][i]),
       "v2": llama2c_forward(lambda k, i: deq[(k, i)]),
       "v1_linear": llama2c_forward(lambda k, i: floats[k][i], attention="linear-elu")}

# Issue 19: the v1 weights with causal sparse patterns over 40 positions (longer than every term),
# the mask form of each pattern in the reference; einfer walks the same keys from indices.
PATTERN_TOKENS = [1] + [(7 * i + 3) % 32 for i in range(1, 40)]
patterns = {"v1_pattern_wgs": ref.pattern_attends(window=3, glob=2, stride=5),
            "v1_pattern_fixed": ref.pattern_attends(block=8, summary=2)}

os.makedirs(OUT, exist_ok=True)
for version, attends in patterns.items():
    logits = llama2c_forward(lambda k, i: floats[k][i], attends=attends, tokens=PATTERN_TOKENS)
    ref.write_raw(os.path.join(OUT, f"llama2c_ref_fwd_{version}"), logits, PATTERN_TOKENS)
    print(f"llama2c_ref_fwd_{version} max |logit|", np.abs(logits).max())
for version, logits in fwd.items():
    ref.write_raw(os.path.join(OUT, f"llama2c_ref_fwd_{version}"), logits)
    print(f"llama2c_ref_fwd_{version} max |logit|", np.abs(logits).max())
for name, blob in [("llama2c_v0.bin", v0), ("llama2c_v1.bin", v1), ("llama2c_v2.bin", v2)]:
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(blob)
refs = {"tok": tok, "wq1": wq[1], "wk0": wk[0], "wo1": wo[1], "w2_0": w2[0], "w3_1": w3[1],
        "att_norm1": att_norm[1], "final_norm": final_norm, "cls": wcls,
        "v2_wq1": deq[("wq", 1)], "v2_w2_0": deq[("w2", 0)], "v2_tok": deq[("tok", 0)]}
for name, a in refs.items():
    with open(os.path.join(OUT, f"llama2c_ref_{name}.f32"), "wb") as f:
        f.write(f32(a))
print("wrote", len(v0), len(v1), len(v2), "bytes")

# A tiny llama2.c tokenizer.bin (int32 max_token_length; per token: float32 score, int32 length,
# bytes) for the -z option and the fuzz corpus.
tokens = [b"<unk>", b"<s>", b"</s>"] + [bytes([ord("a") + i]) for i in range(vocab - 3)]
tok_bin = struct.pack("<i", max(len(t) for t in tokens))
for i, t in enumerate(tokens):
    tok_bin += struct.pack("<fi", -float(i), len(t)) + t
with open(os.path.join(OUT, "tiny_tokenizer.bin"), "wb") as f:
    f.write(tok_bin)
