#!/usr/bin/python3
"""Writes a tiny GGUF v3 llama file by hand with F32, F16, Q8_0 and Q4_0 tensors, plus the
dequantized reference values (computed here with numpy) as raw float32, and gguf_ref_fwd.{f32,i32}:
float64 logits of every position of llama_reference.TOKENS from llama_reference.py (llama.cpp's
llama: interleaved RoPE on the tensors as stored) over tensors dequantized from the written block
bytes by `dequantize` below (a separate decoder from the quantizers), with the metadata's eps/theta.

Q8_0 block: float16 d, 32 x int8 (value q * d). Q4_0 block: float16 d, 16 bytes; element j (< 16)
in the low nibble of byte j, element j + 16 in its high nibble; value (nibble - 8) * d.
"""
import os
import struct

import numpy as np

import llama_reference as ref

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "format")
dim, hidden, layers, heads, kv_heads, vocab, ctx = 32, 64, 2, 4, 2, 48, 128
head = dim // heads
rng = np.random.default_rng(99)
F32, F16, Q4_0, Q8_0 = 0, 1, 2, 8
EPS, THETA = 1e-5, 10000.0


def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv_u32(k, v):
    return gstr(k) + struct.pack("<II", 4, v)


def kv_f32(k, v):
    return gstr(k) + struct.pack("<If", 6, v)


def kv_str(k, v):
    return gstr(k) + struct.pack("<I", 8) + gstr(v)


def kv_str_array(k, items):
    return gstr(k) + struct.pack("<IIQ", 9, 8, len(items)) + b"".join(gstr(s) for s in items)


def q8_0(x):
    blocks = x.reshape(-1, 32)
    d = (np.abs(blocks).max(axis=1) / 127.0).astype(np.float16)
    df = d.astype(np.float32)
    inv = np.where(df > 0, 1.0 / np.where(df > 0, df, 1), 0)
    q = np.clip(np.round(blocks * inv[:, None]), -127, 127).astype(np.int8)
    raw = b"".join(d[i].tobytes() + q[i].tobytes() for i in range(len(d)))
    return raw, (q.astype(np.float32) * df[:, None]).reshape(x.shape)


def q4_0(x):
    blocks = x.reshape(-1, 32)
    idx = np.abs(blocks).argmax(axis=1)
    mx = blocks[np.arange(len(blocks)), idx]
    d = (mx / -8.0).astype(np.float16)
    df = d.astype(np.float32)
    inv = np.where(df != 0, 1.0 / np.where(df != 0, df, 1), 0)
    u = np.clip((blocks * inv[:, None] + 8.5).astype(np.int32), 0, 15).astype(np.uint8)
    packed = u[:, :16] | (u[:, 16:] << 4)
    raw = b"".join(d[i].tobytes() + packed[i].tobytes() for i in range(len(d)))
    return raw, ((u.astype(np.float32) - 8) * df[:, None]).reshape(x.shape)


def encode(x, t):
    if t == F32:
        return x.astype("<f4").tobytes(), x.astype(np.float32)
    if t == F16:
        h = x.astype(np.float16)
        return h.tobytes(), h.astype(np.float32)
    return q8_0(x) if t == Q8_0 else q4_0(x)


def rnd(*shape):
    return rng.standard_normal(shape).astype(np.float32) * 0.3


plan = [("token_embd.weight", rnd(vocab, dim), F16)]
for l in range(layers):
    p = f"blk.{l}."
    plan += [(p + "attn_norm.weight", 1 + rnd(dim), F32),
             (p + "attn_q.weight", rnd(heads * head, dim), Q8_0),
             (p + "attn_k.weight", rnd(kv_heads * head, dim), Q4_0),
             (p + "attn_v.weight", rnd(kv_heads * head, dim), F16),
             (p + "attn_output.weight", rnd(dim, heads * head), Q8_0),
             (p + "ffn_norm.weight", 1 + rnd(dim), F32),
             (p + "ffn_gate.weight", rnd(hidden, dim), Q4_0),
             (p + "ffn_down.weight", rnd(dim, hidden), Q8_0),
             (p + "ffn_up.weight", rnd(hidden, dim), F32)]
plan += [("output_norm.weight", 1 + rnd(dim), F32), ("output.weight", rnd(vocab, dim), Q8_0)]

kvs = [kv_str("general.architecture", "llama"), kv_str("general.name", "einfer-test"),
       kv_u32("general.alignment", 32), kv_u32("llama.context_length", ctx),
       kv_u32("llama.embedding_length", dim), kv_u32("llama.block_count", layers),
       kv_u32("llama.feed_forward_length", hidden), kv_u32("llama.attention.head_count", heads),
       kv_u32("llama.attention.head_count_kv", kv_heads),
       kv_u32("llama.rope.dimension_count", head),
       kv_f32("llama.attention.layer_norm_rms_epsilon", EPS),
       kv_f32("llama.rope.freq_base", THETA),
       kv_str_array("tokenizer.ggml.tokens", [f"t{i}" for i in range(vocab)])]

infos, data, refs, raws = b"", b"", {}, {}
for name, x, t in plan:
    raw, deq = encode(x, t)
    data += b"\0" * (-len(data) % 32)
    ne = list(reversed(x.shape))  # ne[0] is the contiguous axis
    infos += gstr(name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}Q", *ne)
    infos += struct.pack("<IQ", t, len(data))
    data += raw
    refs[name] = deq
    raws[name] = (raw, t, x.shape)
head_bytes = b"GGUF" + struct.pack("<IQQ", 3, len(plan), len(kvs)) + b"".join(kvs) + infos
head_bytes += b"\0" * (-len(head_bytes) % 32)
os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "tiny_llama.gguf"), "wb") as f:
    f.write(head_bytes + data)
for key, name in [("token_embd.weight", "tok"), ("blk.0.attn_q.weight", "q0"),
                  ("blk.1.attn_k.weight", "k1"), ("blk.1.ffn_gate.weight", "gate1"),
                  ("blk.0.ffn_down.weight", "down0"), ("blk.1.ffn_up.weight", "up1"),
                  ("output.weight", "output"), ("blk.0.attn_v.weight", "v0")]:
    with open(os.path.join(OUT, f"gguf_ref_{name}.f32"), "wb") as f:
        f.write(refs[key].astype("<f4").tobytes())
print("wrote", len(head_bytes) + len(data), "bytes")


def dequantize(raw, t, shape):
    """Decodes GGUF tensor bytes: F32, F16, Q8_0 {f16 d; int8 q[32]}, Q4_0 {f16 d; u8 qs[16]}
    with element j in the low nibble of qs[j] and j + 16 in its high nibble, value (n - 8) * d."""
    if t == F32:
        return np.frombuffer(raw, "<f4").reshape(shape)
    if t == F16:
        return np.frombuffer(raw, "<f2").astype(np.float32).reshape(shape)
    if t == Q8_0:
        b = np.frombuffer(raw, np.dtype([("d", "<f2"), ("q", "i1", 32)]))
        return (b["q"].astype(np.float32) * b["d"].astype(np.float32)[:, None]).reshape(shape)
    b = np.frombuffer(raw, np.dtype([("d", "<f2"), ("qs", "u1", 16)]))
    nib = np.concatenate([b["qs"] & 0xF, b["qs"] >> 4], axis=1).astype(np.float32)
    return ((nib - 8) * b["d"].astype(np.float32)[:, None]).reshape(shape)


deq = {name: dequantize(*raws[name]) for name in raws}
for name in deq:
    assert np.array_equal(deq[name], refs[name]), name
layer = lambda n: [deq[f"blk.{l}.{n}.weight"] for l in range(layers)]
weights = {"tok": deq["token_embd.weight"], "final_norm": deq["output_norm.weight"],
           "cls": deq["output.weight"], "att_norm": layer("attn_norm"), "wq": layer("attn_q"),
           "wk": layer("attn_k"), "wv": layer("attn_v"), "wo": layer("attn_output"),
           "ffn_norm": layer("ffn_norm"), "gate": layer("ffn_gate"), "down": layer("ffn_down"),
           "up": layer("ffn_up")}
# eps and theta as the file stores them (float32).
logits = ref.forward(weights, ref.TOKENS, heads, kv_heads, eps=float(np.float32(EPS)),
                     theta=float(np.float32(THETA)), mode="interleaved")
ref.write_raw(os.path.join(OUT, "gguf_ref_fwd"), logits)
print("gguf_ref_fwd max |logit|", np.abs(logits).max())
