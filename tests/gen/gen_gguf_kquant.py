#!/usr/bin/python3
"""GGUF block-quantized models for tests/test_gguf_quant.cpp (issue 13).

1. Writes a tiny random llama GGUF in F32 with llama.cpp's own gguf-py writer (used from the scratch
   checkout LLAMA_CPP, default /work/scratch/llama.cpp; nothing of it is vendored).
2. Quantizes it with llama.cpp's llama-quantize to each of TYPES (Q4_K_M, Q5_K_M, Q6_K, Q8_0, Q4_0,
   Q4_1, Q5_0, Q5_1, Q2_K, Q3_K_M) into tests/data/gguf_quant/tiny_<type>.gguf.
3. Decodes every tensor with `dequantize` below, written from the block layouts (docs/gguf-quant.md),
   checks it equals gguf-py's own gguf.quants.dequantize, and runs llama_reference.forward
   (float64) over the decoded weights: tiny_<type>_ref.{i32,f32} = teacher-forced logits of TOKENS.
"""
import os
import subprocess
import sys

import numpy as np

LLAMA_CPP = os.environ.get("LLAMA_CPP", "/work/scratch/llama.cpp")
sys.path.insert(0, os.path.join(LLAMA_CPP, "gguf-py"))
import gguf  # noqa: E402
from gguf import quants as gq  # noqa: E402

import llama_reference as ref  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "gguf_quant")
WORK = os.environ.get("KQUANT_WORK", "/work/scratch/kquant-gen")
dim, hidden, layers, heads, kv_heads, vocab, ctx = 256, 256, 2, 4, 2, 256, 128
head = dim // heads
EPS, THETA = 1e-5, 10000.0
TYPES = ["Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K_M"]
rng = np.random.default_rng(1313)
# 72 teacher-forced positions: BOS then random ids.
TOKENS = [1] + [int(t) for t in rng.integers(3, vocab, 71)]


def write_f32_model(path):
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("einfer-kquant-test")
    w.add_context_length(ctx)
    w.add_embedding_length(dim)
    w.add_block_count(layers)
    w.add_feed_forward_length(hidden)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_dimension_count(head)
    w.add_layer_norm_rms_eps(EPS)
    w.add_rope_freq_base(THETA)
    w.add_tokenizer_model("llama")
    w.add_token_list([f"t{i}" for i in range(vocab)])
    w.add_token_scores([0.0] * vocab)
    w.add_token_types([1] * vocab)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)

    def rnd(*shape, scale=None):
        s = scale if scale is not None else 1.0 / np.sqrt(shape[-1])
        return (rng.standard_normal(shape) * s).astype(np.float32)

    w.add_tensor("token_embd.weight", rnd(vocab, dim, scale=1.0))
    for l in range(layers):
        p = f"blk.{l}."
        w.add_tensor(p + "attn_norm.weight", (1 + 0.1 * rng.standard_normal(dim)).astype(np.float32))
        w.add_tensor(p + "attn_q.weight", rnd(heads * head, dim))
        w.add_tensor(p + "attn_k.weight", rnd(kv_heads * head, dim))
        w.add_tensor(p + "attn_v.weight", rnd(kv_heads * head, dim))
        w.add_tensor(p + "attn_output.weight", rnd(dim, heads * head))
        w.add_tensor(p + "ffn_norm.weight", (1 + 0.1 * rng.standard_normal(dim)).astype(np.float32))
        w.add_tensor(p + "ffn_gate.weight", rnd(hidden, dim))
        w.add_tensor(p + "ffn_down.weight", rnd(dim, hidden))
        w.add_tensor(p + "ffn_up.weight", rnd(hidden, dim))
    w.add_tensor("output_norm.weight", (1 + 0.1 * rng.standard_normal(dim)).astype(np.float32))
    w.add_tensor("output.weight", rnd(vocab, dim, scale=3.0 / np.sqrt(dim)))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def f16(a):
    return a.view("<f2").astype(np.float64)


def kscale_min(s):
    """Q4_K/Q5_K: 12 packed bytes [n, 12] -> 6-bit scales, mins [n, 8]."""
    sc = np.zeros((len(s), 8), np.int64)
    mn = np.zeros((len(s), 8), np.int64)
    sc[:, :4] = s[:, 0:4] & 63
    mn[:, :4] = s[:, 4:8] & 63
    sc[:, 4:] = (s[:, 8:12] & 0x0F) | ((s[:, 0:4] >> 6) << 4)
    mn[:, 4:] = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return sc, mn


def dequantize(raw, t):
    """float64 values [n_blocks * block] of GGUF tensor bytes of ggml type t (layouts in
    docs/gguf-quant.md)."""
    T = gguf.GGMLQuantizationType
    b = np.frombuffer(raw, np.uint8)
    if t == T.F32:
        return b.view("<f4").astype(np.float64)
    if t == T.F16:
        return b.view("<f2").astype(np.float64)
    if t in (T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1):
        size = {T.Q8_0: 34, T.Q4_0: 18, T.Q4_1: 20, T.Q5_0: 22, T.Q5_1: 24}[t]
        x = b.reshape(-1, size)
        d = f16(x[:, 0:2].copy())
        if t == T.Q8_0:
            return (x[:, 2:].view(np.int8).astype(np.float64) * d).reshape(-1)
        has_m = t in (T.Q4_1, T.Q5_1)
        off = 4 if has_m else 2
        five = t in (T.Q5_0, T.Q5_1)
        qs = x[:, off + (4 if five else 0):]
        q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int64)
        if five:
            qh = x[:, off:off + 4].copy().view("<u4").astype(np.int64)
            q |= ((qh >> np.arange(32)) & 1) << 4
        if has_m:
            return (q * d + f16(x[:, 2:4].copy())).reshape(-1)
        return ((q - (16 if five else 8)) * d).reshape(-1)
    if t in (T.Q4_K, T.Q5_K):
        five = t == T.Q5_K
        x = b.reshape(-1, 176 if five else 144)
        d, dmin = f16(x[:, 0:2].copy()), f16(x[:, 2:4].copy())
        sc, mn = kscale_min(x[:, 4:16])
        qs = x[:, 48:] if five else x[:, 16:]
        q = np.zeros((len(x), 256), np.int64)
        for j in range(4):
            q[:, 64 * j:64 * j + 32] = qs[:, 32 * j:32 * j + 32] & 0x0F
            q[:, 64 * j + 32:64 * j + 64] = qs[:, 32 * j:32 * j + 32] >> 4
            if five:
                qh = x[:, 16:48].astype(np.int64)
                q[:, 64 * j:64 * j + 32] |= ((qh >> (2 * j)) & 1) << 4
                q[:, 64 * j + 32:64 * j + 64] |= ((qh >> (2 * j + 1)) & 1) << 4
        sub = np.repeat(np.arange(8), 32)
        return (d * sc[:, sub] * q - dmin * mn[:, sub]).reshape(-1)
    if t == T.Q6_K:
        x = b.reshape(-1, 210)
        ql, qh = x[:, :128].astype(np.int64), x[:, 128:192].astype(np.int64)
        sc = x[:, 192:208].view(np.int8).astype(np.int64)
        d = f16(x[:, 208:210].copy())
        q = np.zeros((len(x), 256), np.int64)
        for h in range(2):
            l0, l1, hh = ql[:, 64 * h:64 * h + 32], ql[:, 64 * h + 32:64 * h + 64], qh[:, 32 * h:32 * h + 32]
            base = 128 * h
            q[:, base:base + 32] = (l0 & 0xF) | ((hh & 3) << 4)
            q[:, base + 32:base + 64] = (l1 & 0xF) | (((hh >> 2) & 3) << 4)
            q[:, base + 64:base + 96] = (l0 >> 4) | (((hh >> 4) & 3) << 4)
            q[:, base + 96:base + 128] = (l1 >> 4) | (((hh >> 6) & 3) << 4)
        return (d * sc[:, np.arange(256) // 16] * (q - 32)).reshape(-1)
    if t == T.Q2_K:
        x = b.reshape(-1, 84)
        s = x[:, :16].astype(np.int64)
        qs = x[:, 16:80].astype(np.int64)
        d, dmin = f16(x[:, 80:82].copy()), f16(x[:, 82:84].copy())
        q = np.zeros((len(x), 256), np.int64)
        for h in range(2):
            for j in range(4):
                q[:, 128 * h + 32 * j:128 * h + 32 * j + 32] = (qs[:, 32 * h:32 * h + 32] >> (2 * j)) & 3
        sub = np.arange(256) // 16
        return (d * (s[:, sub] & 0xF) * q - dmin * (s[:, sub] >> 4)).reshape(-1)
    if t == T.Q3_K:
        x = b.reshape(-1, 110)
        hm, qs = x[:, :32].astype(np.int64), x[:, 32:96].astype(np.int64)
        s = x[:, 96:108].astype(np.int64)
        d = f16(x[:, 108:110].copy())
        sc = np.zeros((len(x), 16), np.int64)
        for i in range(16):
            low = (s[:, i] & 0xF) if i < 8 else (s[:, i - 8] >> 4)
            high = (s[:, 8 + i % 4] >> (2 * (i // 4))) & 3
            sc[:, i] = (low | (high << 4)) - 32
        q = np.zeros((len(x), 256), np.int64)
        for h in range(2):
            for j in range(4):
                low = (qs[:, 32 * h:32 * h + 32] >> (2 * j)) & 3
                high = (hm >> (4 * h + j)) & 1
                q[:, 128 * h + 32 * j:128 * h + 32 * j + 32] = low - 4 * (1 - high)
        return (d * sc[:, np.arange(256) // 16] * q).reshape(-1)
    raise ValueError(f"type {t!r} has no decoder here")


BLOCK_TYPES = {"q8_0": (8, 32, 34), "q4_0": (2, 32, 18), "q4_1": (3, 32, 20), "q5_0": (6, 32, 22),
               "q5_1": (7, 32, 24), "q2_k": (10, 256, 84), "q3_k": (11, 256, 110),
               "q4_k": (12, 256, 144), "q5_k": (13, 256, 176), "q6_k": (14, 256, 210)}
# Byte offsets of each type's f16 scales (random bytes there could be inf/NaN: set finite ones).
F16_FIELDS = {"q8_0": [0], "q4_0": [0], "q4_1": [0, 2], "q5_0": [0], "q5_1": [0, 2],
              "q2_k": [80, 82], "q3_k": [108], "q4_k": [0, 2], "q5_k": [0, 2], "q6_k": [208]}


def write_block_vectors():
    """blocks_<type>.bin: 4 rows x 512 elements of random block bytes (finite f16 scales);
    blocks_<type>.f32: their values decoded by `dequantize` (checked against gguf-py)."""
    for name, (t, block, size) in BLOCK_TYPES.items():
        n_blocks = 4 * 512 // block
        raw = rng.integers(0, 256, (n_blocks, size), dtype=np.uint8)
        for off in F16_FIELDS[name]:
            raw[:, off:off + 2] = (rng.uniform(-0.02, 0.02, n_blocks).astype("<f2")
                                   .view(np.uint8).reshape(n_blocks, 2))
        mine = dequantize(raw.tobytes(), gguf.GGMLQuantizationType(t))
        theirs = gq.dequantize(raw, gguf.GGMLQuantizationType(t)).astype(np.float64).reshape(-1)
        assert np.abs(mine - theirs).max() <= 1e-6 * np.abs(theirs).max(), name
        with open(os.path.join(OUT, f"blocks_{name}.bin"), "wb") as f:
            f.write(raw.tobytes())
        with open(os.path.join(OUT, f"blocks_{name}.f32"), "wb") as f:
            f.write(mine.astype("<f4").tobytes())


def main():
    os.makedirs(WORK, exist_ok=True)
    os.makedirs(OUT, exist_ok=True)
    write_block_vectors()
    f32_path = os.path.join(WORK, "tiny_f32.gguf")
    write_f32_model(f32_path)
    quantize = os.path.join(LLAMA_CPP, "build", "bin", "llama-quantize")
    for typ in TYPES:
        out = os.path.join(OUT, f"tiny_{typ.lower()}.gguf")
        subprocess.run([quantize, f32_path, out, typ], check=True, capture_output=True)
        reader = gguf.GGUFReader(out)
        deq, kinds = {}, {}
        for t in reader.tensors:
            raw = bytes(t.data.tobytes())
            shape = tuple(int(v) for v in reversed(t.shape))  # ne[0] is the contiguous axis
            mine = dequantize(raw, t.tensor_type).reshape(shape)
            theirs = gq.dequantize(t.data, t.tensor_type).astype(np.float64).reshape(shape)
            # gguf-py computes in float32 (f16 scales times small ints): agree to float32 rounding.
            err = np.abs(mine - theirs).max()
            assert err <= 1e-6 * max(1.0, np.abs(theirs).max()), (typ, t.name, err)
            deq[t.name] = mine
            kinds[t.tensor_type.name] = kinds.get(t.tensor_type.name, 0) + 1
        L = lambda n: [deq[f"blk.{l}.{n}.weight"] for l in range(layers)]  # noqa: E731
        weights = {"tok": deq["token_embd.weight"], "final_norm": deq["output_norm.weight"],
                   "cls": deq["output.weight"], "att_norm": L("attn_norm"), "wq": L("attn_q"),
                   "wk": L("attn_k"), "wv": L("attn_v"), "wo": L("attn_output"),
                   "ffn_norm": L("ffn_norm"), "gate": L("ffn_gate"), "down": L("ffn_down"),
                   "up": L("ffn_up")}
        logits = ref.forward(weights, TOKENS, heads, kv_heads, eps=float(np.float32(EPS)),
                             theta=float(np.float32(THETA)), mode="interleaved")
        ref.write_raw(os.path.join(OUT, f"tiny_{typ.lower()}_ref"), logits, TOKENS)
        print(typ, os.path.getsize(out), "bytes", kinds, "max|logit|", np.abs(logits).max())


if __name__ == "__main__":
    main()
