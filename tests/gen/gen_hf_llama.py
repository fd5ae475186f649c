#!/usr/bin/python3
"""Writes tiny Hugging Face Llama folders (config.json + safetensors) and references.

hf_llama/: untied, sharded in two files with model.safetensors.index.json, F32/F16/BF16 tensors.
hf_llama_tied/: tie_word_embeddings, one model.safetensors.
Forward references hf_ref_fwd{,_tied}.{f32,i32}: logits of every position of ref.TOKENS, computed in
float64 by llama_reference.py with HF's half-split rotate_half RoPE on the ORIGINAL (unpermuted)
q/k weights as stored (F16/BF16 rounding included), eps and theta from config.json, lm_head tied to
embed_tokens in the tied folder; einfer's import permutes q/k rows and rotates interleaved pairs, so
agreement checks that permutation independently.
Other references (float32 raw): the q/k projections permuted from HF's half-split RoPE layout to the
interleaved one, and attention scores q(x1 at pos 3) . k(x2 at pos 5) per head computed the HF way
(rotate_half), in float64: a packed model must reproduce them with interleaved RoPE.
"""
import json
import os

import numpy as np

import llama_reference as ref
import safetensors_writer as st

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "format")
dim, hidden, layers, heads, kv_heads, vocab, ctx = 16, 24, 2, 4, 2, 40, 64
head = dim // heads
theta = 10000.0
rng = np.random.default_rng(77)


def rnd(*shape):
    return rng.standard_normal(shape).astype(np.float32) * 0.4


def hf_rope(x, pos):
    """HF Llama rotary embedding on [n_heads, head] (rotate_half convention)."""
    inv = 1.0 / theta ** (np.arange(0, head, 2, dtype=np.float64) / head)
    ang = pos * inv
    cos = np.concatenate([np.cos(ang), np.cos(ang)])
    sin = np.concatenate([np.sin(ang), np.sin(ang)])
    half = head // 2
    rot = np.concatenate([-x[:, half:], x[:, :half]], axis=1)
    return x * cos + rot * sin


def interleaved_rope(x, pos):
    inv = 1.0 / theta ** (np.arange(0, head, 2, dtype=np.float64) / head)
    ang = pos * inv
    out = x.copy()
    out[:, 0::2] = x[:, 0::2] * np.cos(ang) - x[:, 1::2] * np.sin(ang)
    out[:, 1::2] = x[:, 1::2] * np.cos(ang) + x[:, 0::2] * np.sin(ang)
    return out


def permute(w, n):
    """Half-split rows -> interleaved rows within each head."""
    w = w.reshape(n, 2, head // 2, -1)           # [n, half, i, d]
    return w.transpose(0, 2, 1, 3).reshape(n * head, -1)


def make(folder, tied, sharded):
    tensors = [("model.embed_tokens.weight", rnd(vocab, dim), "F32")]
    for l in range(layers):
        p = f"model.layers.{l}."
        tensors += [
            (p + "input_layernorm.weight", 1 + rnd(dim), "F32"),
            (p + "self_attn.q_proj.weight", rnd(heads * head, dim), "F16"),
            (p + "self_attn.k_proj.weight", rnd(kv_heads * head, dim), "BF16"),
            (p + "self_attn.v_proj.weight", rnd(kv_heads * head, dim), "F32"),
            (p + "self_attn.o_proj.weight", rnd(dim, heads * head), "F32"),
            (p + "post_attention_layernorm.weight", 1 + rnd(dim), "F32"),
            (p + "mlp.gate_proj.weight", rnd(hidden, dim), "F32"),
            (p + "mlp.up_proj.weight", rnd(hidden, dim), "F16"),
            (p + "mlp.down_proj.weight", rnd(dim, hidden), "F32"),
        ]
    tensors.append(("model.norm.weight", 1 + rnd(dim), "F32"))
    if not tied:
        tensors.append(("lm_head.weight", rnd(vocab, dim), "F32"))
    path = os.path.join(OUT, folder)
    os.makedirs(path, exist_ok=True)
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": dim,
              "intermediate_size": hidden, "num_hidden_layers": layers,
              "num_attention_heads": heads, "num_key_value_heads": kv_heads, "vocab_size": vocab,
              "max_position_embeddings": ctx, "rms_norm_eps": 1e-6, "rope_theta": theta,
              "hidden_act": "silu", "tie_word_embeddings": tied, "torch_dtype": "float32"}
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    if sharded:
        half = len(tensors) // 2
        shards = [("model-00001-of-00002.safetensors", tensors[:half]),
                  ("model-00002-of-00002.safetensors", tensors[half:])]
        weight_map = {}
        for name, part in shards:
            st.write(os.path.join(path, name), part)
            weight_map.update({t[0]: name for t in part})
        with open(os.path.join(path, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {}, "weight_map": weight_map}, f, indent=2)
    else:
        st.write(os.path.join(path, "model.safetensors"), tensors, {"format": "pt"})
    return {name: st.stored(a, dt) for name, a, dt in tensors}


def f32(path, a):
    with open(os.path.join(OUT, path), "wb") as f:
        f.write(np.ascontiguousarray(a, dtype="<f4").tobytes())


w = make("hf_llama", tied=False, sharded=True)
w_tied = make("hf_llama_tied", tied=True, sharded=False)

wq = w["model.layers.1.self_attn.q_proj.weight"].astype(np.float64)
wk = w["model.layers.1.self_attn.k_proj.weight"].astype(np.float64)
x1 = rng.standard_normal(dim)
x2 = rng.standard_normal(dim)
q = hf_rope((wq @ x1).reshape(heads, head), 3)
k = hf_rope((wk @ x2).reshape(kv_heads, head), 5)
group = heads // kv_heads
scores = np.array([q[h] @ k[h // group] for h in range(heads)])
# Self-check: interleaved RoPE on permuted rows gives the same scores.
qi = interleaved_rope((permute(wq, heads) @ x1).reshape(heads, head), 3)
ki = interleaved_rope((permute(wk, kv_heads) @ x2).reshape(kv_heads, head), 5)
assert np.allclose(scores, [qi[h] @ ki[h // group] for h in range(heads)])
f32("hf_ref_x1.f32", x1)
f32("hf_ref_x2.f32", x2)
f32("hf_ref_scores_l1.f32", scores)
f32("hf_ref_wq1_interleaved.f32", permute(wq, heads))
f32("hf_ref_wk1_interleaved.f32", permute(wk, kv_heads))
f32("hf_ref_w3_0.f32", w["model.layers.0.mlp.up_proj.weight"])
f32("hf_ref_lm_head.f32", w["lm_head.weight"])
print("scores", scores)


def hf_forward(w, folder):
    """HF LlamaForCausalLM on the stored tensors (names as in the checkpoint), config from the
    folder's config.json."""
    with open(os.path.join(OUT, folder, "config.json")) as f:
        cfg = json.load(f)
    tied = cfg["tie_word_embeddings"]
    layer = lambda n: [w[f"model.layers.{l}.{n}.weight"] for l in range(layers)]
    weights = {"tok": w["model.embed_tokens.weight"], "final_norm": w["model.norm.weight"],
               "cls": w["model.embed_tokens.weight" if tied else "lm_head.weight"],
               "att_norm": layer("input_layernorm"), "wq": layer("self_attn.q_proj"),
               "wk": layer("self_attn.k_proj"), "wv": layer("self_attn.v_proj"),
               "wo": layer("self_attn.o_proj"), "ffn_norm": layer("post_attention_layernorm"),
               "gate": layer("mlp.gate_proj"), "down": layer("mlp.down_proj"),
               "up": layer("mlp.up_proj")}
    return ref.forward(weights, ref.TOKENS, cfg["num_attention_heads"],
                       cfg["num_key_value_heads"], eps=cfg["rms_norm_eps"],
                       theta=cfg["rope_theta"], mode="half_split")


for name, weights, folder in [("hf_ref_fwd", w, "hf_llama"),
                              ("hf_ref_fwd_tied", w_tied, "hf_llama_tied")]:
    logits = hf_forward(weights, folder)
    ref.write_raw(os.path.join(OUT, name), logits)
    print(name, "max |logit|", np.abs(logits).max())
