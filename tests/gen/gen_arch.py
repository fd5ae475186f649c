#!/usr/bin/python3
"""Issue 13 architectures: tiny random-weight Hugging Face folders and GGUFs plus float64 references.

Writes tests/data/arch/. Run with /usr/bin/python3 (numpy); GGUFs are written with llama.cpp's own
gguf-py from the scratch checkout (gguf_case_writer.py, never vendored). Deterministic (fixed seed).

Each model case <name>/ (HF: config.json + model.safetensors) or <name>.gguf comes with
<name>_fwd.i32 (72 token ids, BOS first) and <name>_fwd.f32 (float64 logits of every position,
stored float32 [72, vocab]) computed by forward() below, written from the transformers source:
  - RMSNorm: LlamaRMSNorm.forward, x * rsqrt(mean(x^2) + eps) * w (Qwen2RMSNorm, MistralRMSNorm same).
  - RoPE inverse frequencies: modeling_rope_utils.py _compute_default_rope_parameters
    (base ** -(arange(0, head_dim, 2) / head_dim), head_dim = config.head_dim or hidden/heads),
    _compute_linear_scaling_rope_parameters (inv_freq / factor) and _compute_llama3_parameters
    (wavelen = 2 pi / inv_freq; > L/low_freq_factor: / factor; < L/high_freq_factor: kept; else
    (1 - s) inv_freq / factor + s inv_freq, s = (L / wavelen - low) / (high - low)); rope_type read
    from rope_scaling["rope_type"], else the older rope_scaling["type"].
  - apply_rotary_pos_emb with rotate_half (half-split pairs (i, i + head_dim/2)) on the weights as
    stored in the HF folder; GGUF: llama.cpp's semantics, LLAMA_ROPE_TYPE_NORM (pairs (2i, 2i+1),
    the converter permuted llama's q/k rows) for "llama", NEOX (half-split) for "qwen2".
  - Attention: eager_attention_forward with repeat_kv (query head h reads kv head h // (H / G)),
    scaling head_dim ** -0.5, causal mask; Mistral's sliding window as masking_utils
    sliding_window_overlay: key j visible to query i when j > i - sliding_window (W positions,
    the current one included). Qwen2Attention: q/k/v Linear with bias=True, o_proj without.
  - Qwen2's per-layer window as configuration_qwen2.py Qwen2Config.__post_init__ and
    modeling_qwen2.py Qwen2Attention set it: sliding_window = sliding_window if use_sliding_window
    else None; layer_types given, or "sliding_attention" for i >= max_window_layers when
    sliding_window is not None; only "sliding_attention" layers mask with the window (same overlay).
  - MLP: down(silu(gate(x)) * up(x)); lm_head, tied to embed_tokens when tie_word_embeddings.
  - GGUF rope_freqs.weight (gguf_llama3_freqs): written as llama.cpp's convert_hf_to_gguf.py
    LlamaModel.generate_extra_tensors does (float32 frequencies, one divisor per rotary pair:
    1 / factor / the smooth blend), used as ggml's rope freq_factors (theta_i = pos *
    base^(-2i/d) / freq_factors[i]); the reference is transformers' _compute_llama3_parameters on
    the HF rope_scaling the factors came from.
Refusal cases (bad_*): config.json / GGUFs einfer must refuse, naming the offending key or tensor.
"""
import json
import math
import os

import numpy as np

import gguf_case_writer as gw
import safetensors_writer as st

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "arch")
rng = np.random.default_rng(20261123)
N_TOKENS = 72  # teacher-forced positions (> 64; beyond the sliding-window case's window of 16)

# The tiny shape: GQA 3:1, head 8 (4 RoPE frequencies: high, medium and low for llama3 below).
DIM, HIDDEN, LAYERS, HEADS, KV_HEADS, VOCAB = 24, 32, 2, 3, 1, 48


def rnd(*shape, scale=0.5):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def inv_freq_of(cfg, head):
    base = cfg.get("rope_theta", 10000.0)
    inv = 1.0 / base ** (np.arange(0, head, 2, dtype=np.float64) / head)
    rs = cfg.get("rope_scaling")
    if not rs:
        return inv
    kind = rs.get("rope_type", rs.get("type"))
    if kind == "linear":
        return inv / rs["factor"]
    assert kind == "llama3"
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv
    out = np.where(wavelen > old / low, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * out / factor + smooth * out
    medium = ~(wavelen < old / high) & ~(wavelen > old / low)
    return np.where(medium, smoothed, out)


def rope(x, pos, inv, layout):
    """x [n_heads, head] at position pos."""
    ang = pos * inv
    c, s = np.cos(ang), np.sin(ang)
    y = x.copy()
    if layout == "half_split":  # rotate_half
        h = x.shape[1] // 2
        a, b = x[:, :h], x[:, h:]
        y[:, :h], y[:, h:] = a * c - b * s, b * c + a * s
    else:
        a, b = x[:, 0::2], x[:, 1::2]
        y[:, 0::2], y[:, 1::2] = a * c - b * s, b * c + a * s
    return y


def rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x) + eps) * w


def layer_windows(cfg):
    """The sliding window of each layer (None: full causal attention)."""
    L = cfg["num_hidden_layers"]
    if cfg["model_type"] == "mistral":
        return [cfg.get("sliding_window")] * L
    if cfg["model_type"] != "qwen2":
        return [None] * L
    # Qwen2Config.__post_init__ (defaults: use_sliding_window False, sliding_window 4096,
    # max_window_layers 28), then Qwen2Attention.sliding_window per layer_types[layer_idx].
    sw = cfg.get("sliding_window", 4096) if cfg.get("use_sliding_window", False) else None
    types = cfg.get("layer_types") or [
        "sliding_attention" if sw is not None and i >= cfg.get("max_window_layers", 28)
        else "full_attention" for i in range(L)]
    return [sw if t == "sliding_attention" else None for t in types]


def forward(w, cfg, tokens, layout):
    """w: float64 arrays by HF name; cfg: config.json dict. Logits [len(tokens), vocab]."""
    H, G = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    head = cfg.get("head_dim") or cfg["hidden_size"] // H
    eps = cfg["rms_norm_eps"]
    inv = inv_freq_of(cfg, head)
    windows = layer_windows(cfg)
    K = [[] for _ in range(cfg["num_hidden_layers"])]
    V = [[] for _ in range(cfg["num_hidden_layers"])]
    out = []
    for i, t in enumerate(tokens):
        x = w["model.embed_tokens.weight"][t].copy()
        for l in range(cfg["num_hidden_layers"]):
            p = f"model.layers.{l}."
            xn = rmsnorm(x, w[p + "input_layernorm.weight"], eps)
            proj = {}
            for n in "qkv":
                y = w[p + f"self_attn.{n}_proj.weight"] @ xn
                if p + f"self_attn.{n}_proj.bias" in w:
                    y = y + w[p + f"self_attn.{n}_proj.bias"]
                proj[n] = y
            q = rope(proj["q"].reshape(H, head), i, inv, layout)
            K[l].append(rope(proj["k"].reshape(G, head), i, inv, layout))
            V[l].append(proj["v"].reshape(G, head))
            keys, vals = np.stack(K[l]), np.stack(V[l])
            window = windows[l]
            visible = np.arange(i + 1) > (i - window if window else -1)
            att = np.zeros((H, head))
            for h in range(H):
                s = keys[:, h // (H // G)] @ q[h] * head ** -0.5
                s = np.where(visible, s, -np.inf)
                pr = np.exp(s - s.max())
                att[h] = (pr / pr.sum()) @ vals[:, h // (H // G)]
            x = x + w[p + "self_attn.o_proj.weight"] @ att.reshape(-1)
            xn = rmsnorm(x, w[p + "post_attention_layernorm.weight"], eps)
            g = w[p + "mlp.gate_proj.weight"] @ xn
            x = x + w[p + "mlp.down_proj.weight"] @ (g / (1 + np.exp(-g)) * (w[p + "mlp.up_proj.weight"] @ xn))
        cls = w["model.embed_tokens.weight" if cfg.get("tie_word_embeddings") else "lm_head.weight"]
        out.append(cls @ rmsnorm(x, w["model.norm.weight"], eps))
    return np.stack(out)


def make_weights(cfg, bias):
    H, G = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    head = cfg.get("head_dim") or cfg["hidden_size"] // H
    d, f, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    w = {"model.embed_tokens.weight": rnd(v, d, scale=1.0)}
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = 1 + rnd(d, scale=0.1)
        w[p + "self_attn.q_proj.weight"] = rnd(H * head, d, scale=d ** -0.5 * 2)
        w[p + "self_attn.k_proj.weight"] = rnd(G * head, d, scale=d ** -0.5 * 2)
        w[p + "self_attn.v_proj.weight"] = rnd(G * head, d, scale=d ** -0.5)
        if bias:
            w[p + "self_attn.q_proj.bias"] = rnd(H * head)
            w[p + "self_attn.k_proj.bias"] = rnd(G * head)
            w[p + "self_attn.v_proj.bias"] = rnd(G * head)
        w[p + "self_attn.o_proj.weight"] = rnd(d, H * head, scale=(H * head) ** -0.5)
        w[p + "post_attention_layernorm.weight"] = 1 + rnd(d, scale=0.1)
        w[p + "mlp.gate_proj.weight"] = rnd(f, d, scale=d ** -0.5)
        w[p + "mlp.up_proj.weight"] = rnd(f, d, scale=d ** -0.5)
        w[p + "mlp.down_proj.weight"] = rnd(d, f, scale=f ** -0.5)
    w["model.norm.weight"] = 1 + rnd(d, scale=0.1)
    if not cfg.get("tie_word_embeddings"):
        w["lm_head.weight"] = rnd(v, d, scale=d ** -0.5 * 3)
    return w


def base_config(model_type, **extra):
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": model_type, "hidden_size": DIM,
           "intermediate_size": HIDDEN, "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
           "num_key_value_heads": KV_HEADS, "vocab_size": VOCAB, "max_position_embeddings": 128,
           "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "hidden_act": "silu",
           "tie_word_embeddings": False, "torch_dtype": "float32", "bos_token_id": 1,
           "eos_token_id": 2}
    cfg.update(extra)
    return cfg


def tokens():
    return np.concatenate([[1], rng.integers(0, VOCAB, N_TOKENS - 1)]).astype(np.int32)


def save_ref(name, logits, toks):
    np.ascontiguousarray(toks, dtype="<i4").tofile(os.path.join(OUT, name + "_fwd.i32"))
    np.ascontiguousarray(logits, dtype="<f4").tofile(os.path.join(OUT, name + "_fwd.f32"))


def hf_case(name, cfg, bias=False, dtype="F32"):
    w = make_weights(cfg, bias)
    stored = {k: a.astype(np.float64)  # bf16 rounding
              for k, a in st.write_hf_folder(os.path.join(OUT, name), cfg, w, dtype).items()}
    toks = tokens()
    save_ref(name, forward(stored, cfg, toks, "half_split"), toks)
    return w


def write_config_only(name, cfg):
    st.write_hf_folder(os.path.join(OUT, name), cfg)


GGUF_NAMES = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight":
              "output_norm.weight", "lm_head.weight": "output.weight",
              "input_layernorm.weight": "attn_norm.weight",
              "post_attention_layernorm.weight": "ffn_norm.weight",
              "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
              "self_attn.v_proj.weight": "attn_v.weight",
              "self_attn.o_proj.weight": "attn_output.weight",
              "self_attn.q_proj.bias": "attn_q.bias", "self_attn.k_proj.bias": "attn_k.bias",
              "self_attn.v_proj.bias": "attn_v.bias", "mlp.gate_proj.weight": "ffn_gate.weight",
              "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight"}


def gguf_name(hf):
    if hf in GGUF_NAMES:
        return GGUF_NAMES[hf]
    _, _, l, rest = hf.split(".", 3)
    return f"blk.{l}.{GGUF_NAMES[rest]}"


def permute_rows(w, n):
    """llama.cpp convert_hf_to_gguf LlamaModel.permute: half-split rows -> interleaved pairs."""
    return w.reshape(n, 2, w.shape[0] // n // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def gguf_case(name, arch, cfg, bias, extra_kv=None, extra_tensors=None, drop=None, ref=True):
    w = make_weights(cfg, bias)
    H, G = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    tensors = {}
    for k, a in w.items():
        if arch == "llama" and ("q_proj" in k or "k_proj" in k):
            a = permute_rows(a, H if "q_proj" in k else G)
        tensors[gguf_name(k)] = a
    writer = gw.open_writer(os.path.join(OUT, name + ".gguf"), arch, cfg, H, G)
    writer.add_uint32(f"{arch}.rope.dimension_count", cfg["hidden_size"] // H)
    writer.add_float32(f"{arch}.rope.freq_base", cfg["rope_theta"])
    writer.add_float32(f"{arch}.attention.layer_norm_rms_epsilon", cfg["rms_norm_eps"])
    for k, v in (extra_kv or {}).items():
        (writer.add_string if isinstance(v, str) else
         writer.add_float32 if isinstance(v, float) else writer.add_uint32)(k, v)
    gw.finish(writer, [(k, a) for k, a in list(tensors.items()) + list((extra_tensors or {}).items())
                       if not (drop and k == drop)])
    if ref:  # llama.cpp semantics on the stored tensors: NORM rope for llama, NEOX for qwen2
        stored = {k: a.astype(np.float64) for k, a in w.items()}
        if arch == "llama":
            for k in stored:
                if "q_proj" in k or "k_proj" in k:
                    stored[k] = permute_rows(stored[k], H if "q_proj" in k else G)
        toks = tokens()
        layout = "interleaved" if arch == "llama" else "half_split"
        save_ref(name, forward(stored, cfg, toks, layout), toks)


def converter_rope_freqs(cfg):
    """rope_freqs.weight as convert_hf_to_gguf.py LlamaModel.generate_extra_tensors computes it:
    float32 inverse frequencies, then per pair 1 (high band), factor (low band) or
    1 / ((1 - smooth) / factor + smooth) in between."""
    rs = cfg["rope_scaling"]
    dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    base = np.float32(cfg["rope_theta"])
    freqs = np.float32(1.0) / base ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim))
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    out = []
    for f in freqs:
        wavelen = 2 * math.pi / float(f)
        if wavelen < old / high:
            out.append(1.0)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, np.float32)


def main():
    os.makedirs(OUT, exist_ok=True)
    # Llama 3.x RoPE scaling; L = 64 puts the 4 wavelengths (6.3, 63, 628, 6283) in the high,
    # medium and low bands.
    hf_case("hf_llama3_rope", base_config("llama", rope_theta=10000.0, rope_scaling={
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 64}))
    # Linear scaling under the older "type" key; tied embeddings (SmolLM-style).
    hf_case("hf_linear_tied", base_config("llama", rope_scaling={"type": "linear", "factor": 4.0},
                                          tie_word_embeddings=True))
    # Explicit head_dim (16: heads * head_dim = 48 != hidden 24), every tensor BF16.
    hf_case("hf_head_dim_bf16", base_config("llama", head_dim=16, torch_dtype="bfloat16"),
            dtype="BF16")
    # Qwen2: q/k/v biases, tied, theta 1e6, sliding_window present but use_sliding_window false.
    hf_case("hf_qwen2", base_config("qwen2", architectures=["Qwen2ForCausalLM"], rope_theta=1e6,
                                    tie_word_embeddings=True, use_sliding_window=False,
                                    sliding_window=8, max_window_layers=2, eos_token_id=[2, 3]),
            bias=True)
    # Mistral: a trained sliding window of 16 over 72 positions.
    hf_case("hf_mistral_window", base_config("mistral", architectures=["MistralForCausalLM"],
                                             sliding_window=16))
    # GGUF llama (linear scaling through the GGUF keys) and qwen2 (biases, NEOX RoPE).
    llama_cfg = base_config("llama", rope_scaling={"type": "linear", "factor": 2.0})
    gguf_case("gguf_llama", "llama", llama_cfg, False,
              {"llama.rope.scaling.type": "linear", "llama.rope.scaling.factor": 2.0})
    gguf_case("gguf_qwen2", "qwen2", base_config("qwen2", rope_theta=1e6), True)

    # Refusals.
    write_config_only("bad_model_type", base_config("gemma"))
    write_config_only("bad_rope_yarn", base_config("llama", rope_scaling={
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}))
    write_config_only("bad_attention_bias", base_config("llama", attention_bias=True))
    write_config_only("bad_llama3_missing_key", base_config("llama", rope_scaling={
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}))
    # A Qwen2 folder without its k_proj biases.
    cfg = base_config("qwen2")
    w = make_weights(cfg, True)
    folder = os.path.join(OUT, "bad_qwen2_missing_bias")
    write_config_only("bad_qwen2_missing_bias", cfg)
    st.write(os.path.join(folder, "model.safetensors"),
             [(k, a, "F32") for k, a in w.items() if "k_proj.bias" not in k])
    small = base_config("llama", num_hidden_layers=1)
    gguf_case("bad_arch", "gpt2", small, False, ref=False)
    # rope_freqs.weight of the wrong length (3 factors for 4 rotary pairs).
    gguf_case("bad_rope_freqs", "llama", small, False,
              extra_tensors={"rope_freqs.weight": np.ones(3, np.float32)}, ref=False)
    gguf_case("bad_gguf_yarn", "llama", small, False, {"llama.rope.scaling.type": "yarn",
                                                        "llama.rope.scaling.factor": 4.0}, ref=False)
    gguf_case("bad_gguf_missing", "qwen2", base_config("qwen2", num_hidden_layers=1), True,
              drop="blk.0.attn_v.bias", ref=False)

    # Later additions (appended so every file above stays byte for byte what it was).
    # Llama 3.x GGUF: llama3 scaling as the rope_freqs.weight tensor, no scaling metadata.
    rs = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 64}
    l3 = base_config("llama", rope_theta=10000.0, rope_scaling=rs)
    gguf_case("gguf_llama3_freqs", "llama", l3, False,
              extra_tensors={"rope_freqs.weight": converter_rope_freqs(l3)})
    # Qwen2 with use_sliding_window: 3 layers, max_window_layers 1 -> layer 0 full, 1 and 2 slide
    # with W = 8 over 72 positions.
    hf_case("hf_qwen2_layers", base_config("qwen2", architectures=["Qwen2ForCausalLM"],
                                           num_hidden_layers=3, rope_theta=1e6,
                                           use_sliding_window=True, sliding_window=8,
                                           max_window_layers=1), bias=True)
    # Refusals: a layer_types pattern einfer does not run (neither every layer from a first one nor
    # periodic), a qwen2 GGUF with a window (llama.cpp's qwen2 has none, GGUF says not which
    # layers).
    write_config_only("bad_qwen2_layer_types", base_config(
        "qwen2", num_hidden_layers=3, use_sliding_window=True, sliding_window=8,
        layer_types=["full_attention", "sliding_attention", "full_attention"]))
    gguf_case("bad_gguf_qwen2_window", "qwen2", base_config("qwen2", num_hidden_layers=1), True,
              {"qwen2.attention.sliding_window": 8}, ref=False)


if __name__ == "__main__":
    main()
