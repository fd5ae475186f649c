#!/usr/bin/python3
"""Issue 32 families: tiny random-weight Qwen3, Gemma 2, Gemma 3 and Phi-3 models as Hugging Face
folders and GGUFs, with float64 references of every position's logits.

Writes tests/data/families/. Run with /usr/bin/python3 (numpy); GGUFs are written with llama.cpp's
gguf-py from the scratch checkout (gguf_case_writer.py, never vendored). Deterministic (fixed seed).

Each case <name>/ (config.json + model.safetensors) or <name>.gguf comes with <name>_fwd.i32 (token
ids, BOS first) and <name>_fwd.f32 (the float64 logits of every position, stored float32
[n, vocab]) from forward() below, which is written from the transformers source of each model:
  - modeling_qwen3.py: Qwen3RMSNorm (x * rsqrt(mean(x^2) + eps) * w); Qwen3Attention projects q, k,
    v (no bias), applies q_norm / k_norm (the same RMSNorm over head_dim, per head) to q and k
    before apply_rotary_pos_emb (rotate_half: pairs (i, i + head_dim/2)); scaling head_dim^-0.5;
    head_dim from config.json; sliding_window only on "sliding_attention" layers, which
    Qwen3Config.__post_init__ derives as Qwen2's (use_sliding_window, max_window_layers).
  - modeling_gemma2.py: Gemma2RMSNorm x * rsqrt(mean(x^2) + eps) * (1 + w); embeddings times
    Gemma2's normalizer sqrt(hidden_size) cast to the weights' dtype (here float32 or bfloat16);
    decoder layer: h = input_layernorm(x), attention, post_attention_layernorm, residual; then
    pre_feedforward_layernorm, MLP down(gelu_tanh(gate(h)) * up(h)) (gelu_pytorch_tanh),
    post_feedforward_layernorm, residual; scaling query_pre_attn_scalar^-0.5; attention scores
    soft-capped (scores / c, tanh, * c) before the mask and softmax; sliding window on layers with
    (i + 1) % 2 != 0 (layer_types default); final logits soft-capped the same way; lm_head tied.
  - modeling_gemma3.py: Gemma 2's block, plus q_norm / k_norm (Gemma3RMSNorm, 1 + w) on q and k
    before RoPE; layer_types given or "sliding_attention" when (i + 1) % sliding_window_pattern
    != 0; the sliding layers' RoPE uses rope_local_base_freq without scaling, the full layers
    rope_theta with rope_scaling (linear here: inv_freq / factor); soft-capping only if configured.
  - modeling_phi3.py: qkv_proj rows [q; k; v] (H*k, G*k, G*k), gate_up_proj chunk(2) = [gate; up],
    down(up * silu(gate)); sliding_window on every layer; longrope (_compute_longrope_parameters):
    inv_freq = 1 / (ext_factors * base^(2i/d)) with the long factors when the sequence exceeds
    original_max_position_embeddings (the short ones otherwise), cos and sin times the attention
    factor sqrt(1 + ln(s) / ln(original)), s = max_position_embeddings / original.
  - masking_utils: sliding_window_overlay keeps key j for query i when j > i - sliding_window.
GGUF cases use llama.cpp's semantics on the tensors as its converter writes them (llama-model.cpp,
llama.cpp build_* of the architecture): NeoX RoPE (half-split, rows as Hugging Face stores them);
qwen3 as Hugging Face; gemma2 / gemma3 norm weights stored as 1 + w and applied as plain RMSNorm,
embeddings times sqrtf(n_embd) in float32, the query scaled by 1/sqrt(head_dim) (n_layer 46 / 62:
1/sqrt(n_embd / n_head)), gemma2 soft-capping from its keys (defaults 50 / 30) and layers il % 2 ==
0 sliding, gemma3 layers il % 6 < 5 sliding with a local base of 10000; phi3's attn_qkv and fused
ffn_up, its rope_factors_long / _short chosen by n_ctx > original context, cos/sin times
rope.scaling.attn_factor.

Negative controls: `--off FEATURE[,FEATURE]` writes every reference with those features removed
from the reference (not from the model files) under the usual names, so that the C++ tests run
against them and must fail; FEATURES lists them. Without --off the real references are written and
each feature's effect on its cases is printed (the largest change of a logit relative to the
position's scale), which must exceed the test tolerance many times over for the control to mean
anything.
"""
import json
import math
import os
import sys

import numpy as np

import gguf_case_writer as gw
import reference_cli
import safetensors_writer as st

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "families")
N_TOKENS = 72
VOCAB = 48

FEATURES = ["qk_norm", "norm_plus_one", "embed_scale", "embed_scale_dtype", "geglu", "post_norms",
            "query_scale", "attn_softcap", "final_softcap", "window", "local_rope",
            "global_rope_scaling", "longrope_factors", "longrope_attn_factor", "long_factors"]
OFF = set()


def rnd(rng, *shape, scale=0.5):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def rmsnorm(x, w, eps, plus_one=False):
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return y * ((1.0 + w) if plus_one and "norm_plus_one" not in OFF else w)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x / (1.0 + np.exp(-x))


def softcap(x, c):
    return np.tanh(x / c) * c


def rotate(x, pos, inv, mscale=1.0):
    """apply_rotary_pos_emb with rotate_half on x [heads, head_dim] at position pos."""
    ang = pos * inv
    c, s = np.cos(ang) * mscale, np.sin(ang) * mscale
    h = x.shape[-1] // 2
    a, b = x[:, :h], x[:, h:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=1)


def default_inv_freq(base, head):
    return 1.0 / base ** (np.arange(0, head, 2, dtype=np.float64) / head)


def forward(spec, w, tokens):
    """spec: the model as the source's code sees it (see the spec builders below); w: float64
    weights by canonical name; returns logits [len(tokens), vocab]."""
    H, G, hd, L = spec["heads"], spec["kv_heads"], spec["head_dim"], spec["layers"]
    eps, plus = spec["eps"], spec["norm_plus_one"]
    K = [[] for _ in range(L)]
    V = [[] for _ in range(L)]
    out = []
    for i, t in enumerate(tokens):
        x = w["emb"][t].copy()
        if spec["embed_scale"] and "embed_scale" not in OFF:
            x = x * spec["embed_scale"]
        for l in range(L):
            p = f"{l}."
            h = rmsnorm(x, w[p + "in_norm"], eps, plus)
            if spec["fused_qkv"]:  # Phi3Attention: one projection, sliced
                qkv = w[p + "qkv"] @ h
                q, k, v = qkv[:H * hd], qkv[H * hd:(H + G) * hd], qkv[(H + G) * hd:]
            else:
                q, k, v = w[p + "q"] @ h, w[p + "k"] @ h, w[p + "v"] @ h
            q, k, v = q.reshape(H, hd), k.reshape(G, hd), v.reshape(G, hd)
            if spec["qk_norm"] and "qk_norm" not in OFF:
                q = rmsnorm(q, w[p + "q_norm"], eps, plus)
                k = rmsnorm(k, w[p + "k_norm"], eps, plus)
            inv, mscale = spec["rope"](l)
            q, k = rotate(q, i, inv, mscale), rotate(k, i, inv, mscale)
            K[l].append(k)
            V[l].append(v)
            keys, vals = np.stack(K[l]), np.stack(V[l])
            window = spec["windows"][l] if "window" not in OFF else None
            visible = np.arange(i + 1) > (i - window if window else -1)
            att = np.zeros((H, hd))
            for hh in range(H):
                s = keys[:, hh // (H // G)] @ q[hh] * spec["scale"]
                if spec["attn_softcap"] and "attn_softcap" not in OFF:
                    s = softcap(s, spec["attn_softcap"])
                s = np.where(visible, s, -np.inf)
                pr = np.exp(s - s.max())
                att[hh] = (pr / pr.sum()) @ vals[:, hh // (H // G)]
            o = w[p + "o"] @ att.reshape(-1)
            if spec["post_norms"] and "post_norms" not in OFF:
                o = rmsnorm(o, w[p + "post_attn_norm"], eps, plus)
            x = x + o
            h = rmsnorm(x, w[p + "ffn_norm"], eps, plus)
            if spec["fused_gate_up"]:  # Phi3MLP: gate, up = gate_up_proj(x).chunk(2)
                gu = w[p + "gate_up"] @ h
                f = gu.shape[0] // 2
                m = w[p + "down"] @ (gu[f:] * silu(gu[:f]))
            else:
                act = gelu_tanh if spec["geglu"] and "geglu" not in OFF else silu
                m = w[p + "down"] @ (act(w[p + "gate"] @ h) * (w[p + "up"] @ h))
            if spec["post_norms"] and "post_norms" not in OFF:
                m = rmsnorm(m, w[p + "post_ffn_norm"], eps, plus)
            x = x + m
        logits = w["cls"] @ rmsnorm(x, w["final_norm"], eps, plus)
        if spec["final_softcap"] and "final_softcap" not in OFF:
            logits = softcap(logits, spec["final_softcap"])
        out.append(logits)
    return np.stack(out)


# ---- the models as transformers reads their config.json ------------------------------------------

def layer_types(cfg):
    """Each layer's type: config.json layer_types, else the family's default rule."""
    L, mt = cfg["num_hidden_layers"], cfg["model_type"]
    if cfg.get("layer_types"):
        return cfg["layer_types"]
    if mt == "qwen3":  # Qwen3Config.__post_init__
        sw = cfg.get("sliding_window", 4096) if cfg.get("use_sliding_window", False) else None
        return ["sliding_attention" if sw is not None and i >= cfg.get("max_window_layers", 28)
                else "full_attention" for i in range(L)]
    if mt == "gemma2":  # Gemma2Config: every other layer, the first sliding
        return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(L)]
    if mt == "gemma3_text":  # Gemma3TextConfig: sliding_window_pattern, default 6
        pattern = cfg.get("sliding_window_pattern", 6)
        return ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(L)]
    return ["sliding_attention" if cfg.get("sliding_window") else "full_attention"] * L  # phi3


def hf_spec(cfg, stored_dtype="F32", seq_len=N_TOKENS):
    mt = cfg["model_type"]
    H = cfg["num_attention_heads"]
    G = cfg.get("num_key_value_heads", H)
    hd = cfg.get("head_dim") or cfg["hidden_size"] // H
    types = layer_types(cfg)
    window = cfg.get("sliding_window")
    if mt == "qwen3" and not cfg.get("use_sliding_window", False):
        window = None
    gemma = mt in ("gemma2", "gemma3_text")
    spec = {"heads": H, "kv_heads": G, "head_dim": hd, "layers": cfg["num_hidden_layers"],
            "eps": cfg["rms_norm_eps"], "norm_plus_one": gemma, "qk_norm": mt in ("qwen3", "gemma3_text"),
            "post_norms": gemma, "geglu": gemma, "fused_qkv": mt == "phi3",
            "fused_gate_up": mt == "phi3", "embed_scale": None,
            "windows": [window if t == "sliding_attention" else None for t in types],
            "scale": hd ** -0.5, "attn_softcap": None, "final_softcap": None}
    if gemma:
        # Gemma2Model: normalizer = torch.tensor(hidden_size ** 0.5, dtype=hidden_states.dtype)
        scale = np.float32(cfg["hidden_size"] ** 0.5)
        if stored_dtype == "BF16" and "embed_scale_dtype" not in OFF:
            scale = st.stored(np.array([scale], np.float32), "BF16")[0]
        spec["embed_scale"] = float(scale)
        if "query_scale" not in OFF:
            spec["scale"] = cfg["query_pre_attn_scalar"] ** -0.5
        spec["attn_softcap"] = cfg.get("attn_logit_softcapping")
        spec["final_softcap"] = cfg.get("final_logit_softcapping")
    base = cfg.get("rope_theta", 10000.0)
    inv = default_inv_freq(base, hd)
    rs = cfg.get("rope_scaling") or {}
    kind = rs.get("rope_type", rs.get("type"))
    if kind == "linear" and "global_rope_scaling" not in OFF:
        inv_global = inv / rs["factor"]
    else:
        inv_global = inv
    mscale = 1.0
    if kind in ("longrope", "su"):
        orig = cfg["original_max_position_embeddings"]
        s = cfg["max_position_embeddings"] / orig
        if "longrope_attn_factor" not in OFF:
            mscale = 1.0 if s <= 1.0 else math.sqrt(1 + math.log(s) / math.log(orig))
        # _longrope_frequency_update: the long factors once the sequence exceeds the original.
        use_long = seq_len > orig and "long_factors" not in OFF
        ext = np.array(rs["long_factor"] if use_long else rs["short_factor"], np.float64)
        if "longrope_factors" not in OFF:
            inv_global = 1.0 / (ext * base ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    local = None
    if mt == "gemma3_text" and "local_rope" not in OFF:
        local = default_inv_freq(cfg.get("rope_local_base_freq", 10000.0), hd)
    if mt == "gemma3_text" and "local_rope" in OFF:
        local = inv_global
    def rope(l):
        if local is not None and types[l] == "sliding_attention":
            return local, 1.0
        return inv_global, mscale
    spec["rope"] = rope
    return spec


def canonical_hf(w, cfg):
    """HF tensor names -> the forward's names."""
    mt = cfg["model_type"]
    gemma = mt in ("gemma2", "gemma3_text")
    c = {"emb": w["model.embed_tokens.weight"], "final_norm": w["model.norm.weight"]}
    c["cls"] = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    for l in range(cfg["num_hidden_layers"]):
        p, q = f"model.layers.{l}.", f"{l}."
        c[q + "in_norm"] = w[p + "input_layernorm.weight"]
        if mt == "phi3":
            c[q + "qkv"] = w[p + "self_attn.qkv_proj.weight"]
            c[q + "gate_up"] = w[p + "mlp.gate_up_proj.weight"]
        else:
            for n in "qkv":
                c[q + n] = w[p + f"self_attn.{n}_proj.weight"]
            c[q + "gate"] = w[p + "mlp.gate_proj.weight"]
            c[q + "up"] = w[p + "mlp.up_proj.weight"]
        c[q + "o"] = w[p + "self_attn.o_proj.weight"]
        c[q + "down"] = w[p + "mlp.down_proj.weight"]
        if gemma:
            c[q + "post_attn_norm"] = w[p + "post_attention_layernorm.weight"]
            c[q + "ffn_norm"] = w[p + "pre_feedforward_layernorm.weight"]
            c[q + "post_ffn_norm"] = w[p + "post_feedforward_layernorm.weight"]
        else:
            c[q + "ffn_norm"] = w[p + "post_attention_layernorm.weight"]
        if mt in ("qwen3", "gemma3_text"):
            c[q + "q_norm"] = w[p + "self_attn.q_norm.weight"]
            c[q + "k_norm"] = w[p + "self_attn.k_norm.weight"]
    return c


def make_hf_weights(rng, cfg, emb_scale=None):
    mt = cfg["model_type"]
    H = cfg["num_attention_heads"]
    G = cfg.get("num_key_value_heads", H)
    hd = cfg.get("head_dim") or cfg["hidden_size"] // H
    d, f, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    gemma = mt in ("gemma2", "gemma3_text")
    # Norm weights: around 1 as used (Gemma stores w of 1 + w, around 0).
    def norm(n):
        return rnd(rng, n, scale=0.1) + (0.0 if gemma else 1.0)
    if emb_scale is None:
        emb_scale = 1.0 if not gemma else 0.3
    w = {"model.embed_tokens.weight": rnd(rng, v, d, scale=emb_scale)}
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = norm(d)
        q = rnd(rng, H * hd, d, scale=d ** -0.5 * 2)
        k = rnd(rng, G * hd, d, scale=d ** -0.5 * 2)
        vv = rnd(rng, G * hd, d, scale=d ** -0.5)
        if mt == "phi3":
            w[p + "self_attn.qkv_proj.weight"] = np.concatenate([q, k, vv])
        else:
            w[p + "self_attn.q_proj.weight"] = q
            w[p + "self_attn.k_proj.weight"] = k
            w[p + "self_attn.v_proj.weight"] = vv
        w[p + "self_attn.o_proj.weight"] = rnd(rng, d, H * hd, scale=(H * hd) ** -0.5)
        if mt in ("qwen3", "gemma3_text"):
            w[p + "self_attn.q_norm.weight"] = norm(hd) if gemma else rnd(rng, hd, scale=0.3) + 1.0
            w[p + "self_attn.k_norm.weight"] = norm(hd) if gemma else rnd(rng, hd, scale=0.3) + 1.0
        if gemma:
            w[p + "post_attention_layernorm.weight"] = norm(d)
            w[p + "pre_feedforward_layernorm.weight"] = norm(d)
            w[p + "post_feedforward_layernorm.weight"] = norm(d)
        else:
            w[p + "post_attention_layernorm.weight"] = norm(d)
        gate = rnd(rng, f, d, scale=d ** -0.5 * (2.0 if gemma else 1.0))
        up = rnd(rng, f, d, scale=d ** -0.5)
        if mt == "phi3":
            w[p + "mlp.gate_up_proj.weight"] = np.concatenate([gate, up])
        else:
            w[p + "mlp.gate_proj.weight"] = gate
            w[p + "mlp.up_proj.weight"] = up
        w[p + "mlp.down_proj.weight"] = rnd(rng, d, f, scale=f ** -0.5)
    w["model.norm.weight"] = norm(d)
    if not cfg.get("tie_word_embeddings", gemma):
        w["lm_head.weight"] = rnd(rng, v, d, scale=d ** -0.5 * 3)
    return w


def tokens(rng, n=N_TOKENS):
    return np.concatenate([[1], rng.integers(0, VOCAB, n - 1)]).astype(np.int32)


def q8_rows(a, group=8):
    """A matrix as einfer stores it as q8 (kernels/quant/quant.cpp quantize_row_q8): per row, groups of
    `group` along the input axis, scale absmax / 127, round to nearest (even), dequantized."""
    a = np.asarray(a, np.float32)
    out = np.empty_like(a)
    for g0 in range(0, a.shape[1], group):
        blk = a[:, g0:g0 + group]
        scale = np.abs(blk).max(axis=1, keepdims=True) / np.float32(127.0)
        inv = np.where(scale > 0, np.float32(1.0) / np.where(scale > 0, scale, 1), 0).astype(np.float32)
        out[:, g0:g0 + group] = np.clip(np.rint(blk * inv), -127, 127) * scale
    return out


def q8_weights(cw):
    """Every matrix q8-rounded (the weights of a --dtype q8 --group 8 pack); vectors as they are."""
    return {k: (q8_rows(v).astype(np.float64) if np.ndim(v) == 2 else v) for k, v in cw.items()}


def save_ref(name, logits, toks):
    np.ascontiguousarray(toks, dtype="<i4").tofile(os.path.join(OUT, name + "_fwd.i32"))
    np.ascontiguousarray(logits, dtype="<f4").tofile(os.path.join(OUT, name + "_fwd.f32"))


EFFECTS = {}  # feature -> largest change it makes, per case


def record_effects(name, spec_fn, w, toks, features, base):
    """How far each feature moves this case's reference (relative to each position's scale)."""
    global OFF
    saved = OFF
    for f in features:
        OFF = saved | {f}
        other = forward(spec_fn(), w, toks)
        scale = np.maximum(1.0, np.abs(base).max(axis=1, keepdims=True))
        EFFECTS.setdefault(f, []).append((name, float((np.abs(other - base) / scale).max())))
    OFF = saved


def hf_case(rng, name, cfg, dtype="F32", features=(), extra_refs=()):
    w = make_hf_weights(rng, cfg)
    stored = {k: a.astype(np.float64)
              for k, a in st.write_hf_folder(os.path.join(OUT, name), cfg, w, dtype).items()}
    cw = canonical_hf(stored, cfg)
    toks = tokens(rng)
    spec_fn = lambda: hf_spec(cfg, dtype)
    logits = forward(spec_fn(), cw, toks)
    save_ref(name, logits, toks)
    # The same semantics on q8-rounded weights: a q8 pack's reference (its int8 activations aside).
    save_ref(name + "_q8w", forward(spec_fn(), q8_weights(cw), toks), toks)
    if not OFF:
        record_effects(name, spec_fn, cw, toks, features, logits)
    for suffix, n in extra_refs:  # the first n positions alone (e.g. within longrope's original)
        spec_n = lambda: hf_spec(cfg, dtype, seq_len=n)
        sub = forward(spec_n(), cw, toks[:n])
        save_ref(name + suffix, sub, toks[:n])
        if not OFF:
            record_effects(name + suffix, spec_n, cw, toks[:n], ["longrope_factors"], sub)
    return w


def base_config(model_type, **extra):
    cfg = {"model_type": model_type, "hidden_size": 24, "intermediate_size": 40,
           "num_hidden_layers": 2, "num_attention_heads": 3, "num_key_value_heads": 1,
           "vocab_size": VOCAB, "max_position_embeddings": 128, "rms_norm_eps": 1e-6,
           "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": "float32",
           "bos_token_id": 1, "eos_token_id": 2}
    cfg.update(extra)
    return cfg


# ---- GGUF (llama.cpp semantics on what its converters write) ------------------------------------

def gguf_spec(arch, cfg, n_ctx):
    """The forward as llama.cpp runs `arch` with context n_ctx (its defaults when keys are absent)."""
    spec = hf_spec(dict(cfg, model_type={"qwen3": "qwen3", "gemma2": "gemma2",
                                         "gemma3": "gemma3_text", "phi3": "phi3"}[arch]))
    L = cfg["num_hidden_layers"]
    hd = spec["head_dim"]
    if arch in ("gemma2", "gemma3"):
        spec["norm_plus_one"] = False  # the converter stored 1 + w
        spec["embed_scale"] = float(np.sqrt(np.float32(cfg["hidden_size"])))
        if "query_scale" not in OFF:
            by = cfg["hidden_size"] // cfg["num_attention_heads"] if L == {"gemma2": 46, "gemma3": 62}[arch] else hd
            spec["scale"] = float(np.float32(1.0) / np.sqrt(np.float32(by)))
        else:
            spec["scale"] = hd ** -0.5
    if arch == "gemma2":
        spec["windows"] = [cfg["sliding_window"] if l % 2 == 0 else None for l in range(L)]
    if arch == "gemma3":
        spec["windows"] = [cfg["sliding_window"] if l % 6 < 5 else None for l in range(L)]
        spec["attn_softcap"] = spec["final_softcap"] = None
        # llama.cpp: the sliding layers at base 10000 unscaled, the others rope.freq_base with the
        # scaling keys.
        base = cfg.get("rope_theta", 10000.0)
        rs = cfg.get("rope_scaling") or {}
        glob = default_inv_freq(base, hd)
        if rs.get("rope_type") == "linear" and "global_rope_scaling" not in OFF:
            glob = glob / rs["factor"]
        local = default_inv_freq(10000.0 if "local_rope" not in OFF else base, hd)
        spec["rope"] = lambda l: (local if l % 6 < 5 else glob, 1.0)
    if arch == "phi3":
        rs = cfg.get("rope_scaling") or {}
        if rs:
            orig = cfg["original_max_position_embeddings"]
            s = cfg["max_position_embeddings"] / orig
            a = math.sqrt(1 + math.log(s) / math.log(orig)) if s > 1.0 else 1.0
            if "longrope_attn_factor" in OFF:
                a = 1.0
            use_long = n_ctx > orig and "long_factors" not in OFF
            ext = np.array(rs["long_factor"] if use_long else rs["short_factor"], np.float64)
            base = cfg.get("rope_theta", 10000.0)
            inv = 1.0 / (ext * base ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
            if "longrope_factors" in OFF:
                inv = default_inv_freq(base, hd)
            spec["rope"] = lambda l: (inv, a)
    return spec


def gguf_case(rng, name, arch, cfg, n_ctx=None, features=(), tokenizer_from=None, emb_scale=None):
    mt = {"qwen3": "qwen3", "gemma2": "gemma2", "gemma3": "gemma3_text", "phi3": "phi3"}[arch]
    hcfg = dict(cfg, model_type=mt)
    w = make_hf_weights(rng, hcfg, emb_scale)
    H, G = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    hd = cfg.get("head_dim") or cfg["hidden_size"] // H
    gemma = arch in ("gemma2", "gemma3")
    names = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q",
             "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
             "self_attn.o_proj": "attn_output", "self_attn.qkv_proj": "attn_qkv",
             "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
             "mlp.gate_up_proj": "ffn_up",
             "post_attention_layernorm": "post_attention_norm" if gemma else "ffn_norm",
             "pre_feedforward_layernorm": "ffn_norm",
             "post_feedforward_layernorm": "post_ffw_norm"}
    tensors = {}
    for k, a in w.items():
        if k == "model.embed_tokens.weight":
            g = "token_embd.weight"
        elif k == "model.norm.weight":
            g = "output_norm.weight"
        elif k == "lm_head.weight":
            g = "output.weight"
        else:
            _, _, l, rest = k.split(".", 3)
            g = f"blk.{l}.{names[rest.rsplit('.', 1)[0]]}.weight"
        if gemma and k.endswith("norm.weight"):
            a = a + np.float32(1.0)  # convert_hf_to_gguf Gemma2Model / Gemma3Model
        tensors[g] = a
    writer = gw.open_writer(os.path.join(OUT, name + ".gguf"), arch, cfg, H, G)
    writer.add_float32(f"{arch}.attention.layer_norm_rms_epsilon", cfg["rms_norm_eps"])
    if arch != "phi3":
        writer.add_uint32(f"{arch}.attention.key_length", hd)
        writer.add_uint32(f"{arch}.attention.value_length", hd)
    writer.add_uint32(f"{arch}.rope.dimension_count", hd)
    if arch != "gemma2":
        writer.add_float32(f"{arch}.rope.freq_base", cfg["rope_theta"])
    if arch == "gemma2":
        writer.add_float32(f"{arch}.attn_logit_softcapping", cfg["attn_logit_softcapping"])
        writer.add_float32(f"{arch}.final_logit_softcapping", cfg["final_logit_softcapping"])
    if arch in ("gemma2", "gemma3", "phi3"):
        writer.add_uint32(f"{arch}.attention.sliding_window", cfg.get("sliding_window") or 0)
    rs = cfg.get("rope_scaling") or {}
    if arch == "gemma3" and rs.get("rope_type") == "linear":
        writer.add_string(f"{arch}.rope.scaling.type", "linear")
        writer.add_float32(f"{arch}.rope.scaling.factor", rs["factor"])
    if arch == "phi3" and rs:
        orig = cfg["original_max_position_embeddings"]
        s = cfg["max_position_embeddings"] / orig
        writer.add_uint32(f"{arch}.rope.scaling.original_context_length", orig)
        writer.add_float32(f"{arch}.rope.scaling.attn_factor",
                           math.sqrt(1 + math.log(s) / math.log(orig)) if s > 1.0 else 1.0)
        tensors["rope_factors_long.weight"] = np.array(rs["long_factor"], np.float32)
        tensors["rope_factors_short.weight"] = np.array(rs["short_factor"], np.float32)
    if tokenizer_from:
        copy_tokenizer(writer, tokenizer_from)
    gw.finish(writer, tensors.items())
    # The reference on the stored tensors.
    stored = {k: a.astype(np.float64) for k, a in w.items()}
    if gemma:
        for k in stored:
            if k.endswith("norm.weight"):
                stored[k] = (w[k] + np.float32(1.0)).astype(np.float64)
    cw = canonical_hf(stored, hcfg)
    toks = tokens(rng)
    spec_fn = lambda: gguf_spec(arch, cfg, n_ctx or cfg["max_position_embeddings"])
    logits = forward(spec_fn(), cw, toks)
    save_ref(name, logits, toks)
    # The same semantics on q8-rounded weights: a q8 pack's reference (its int8 activations aside).
    save_ref(name + "_q8w", forward(spec_fn(), q8_weights(cw), toks), toks)
    if not OFF:
        record_effects(name, spec_fn, cw, toks, features, logits)
    return w


def copy_tokenizer(writer, path):
    """The tokenizer.ggml.* keys of another GGUF (llama.cpp needs a vocabulary to run a file)."""
    gguf = gw.gguf_module()
    reader = gguf.GGUFReader(path)
    for field in reader.fields.values():
        if not field.name.startswith("tokenizer."):
            continue
        t = field.types
        if t[0] == gguf.GGUFValueType.ARRAY:
            vals = [field.parts[i] for i in field.data]
            if t[-1] == gguf.GGUFValueType.STRING:
                writer.add_array(field.name, [bytes(v).decode("utf-8", "replace") for v in vals])
            else:
                writer.add_array(field.name, [v[0].item() for v in vals])
        elif t[0] == gguf.GGUFValueType.STRING:
            writer.add_string(field.name, bytes(field.parts[field.data[0]]).decode())
        else:
            writer.add_key_value(field.name, field.parts[field.data[0]][0].item(), t[0])


def phi3_rope_scaling(rng, hd):
    pairs = hd // 2
    return {"type": "longrope",
            "short_factor": [float(x) for x in 1.0 + rng.random(pairs) * 0.5],
            "long_factor": [float(x) for x in 1.0 + rng.random(pairs) * 8.0]}


def write_config_only(name, cfg):
    st.write_hf_folder(os.path.join(OUT, name), cfg)


def main():
    global OFF
    args, OFF = reference_cli.parse(
        FEATURES, "instead: write one-layer models of each family as fuzz seeds into DIR/gguf/ and "
        "DIR/hf_folder/ (config.json, a NUL, model.safetensors)",
        "instead: write the GGUFs of the llama.cpp comparison (a real vocabulary, llama.cpp's layer "
        "counts) into DIR", fuzz_takes_dir=True)
    if args.llamacpp:
        return llamacpp_models(args.llamacpp)
    if args.fuzz_seeds:
        return fuzz_seeds(args.fuzz_seeds)
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261201)

    # Qwen3: head_dim 16 (heads x head_dim = 48 != hidden 24), q/k norm, theta 1e6, untied.
    hf_case(rng, "hf_qwen3", base_config("qwen3", head_dim=16, rope_theta=1e6,
                                         architectures=["Qwen3ForCausalLM"]),
            features=["qk_norm"])
    # Qwen3 with use_sliding_window: 3 layers, window 8 from layer 1 (max_window_layers).
    hf_case(rng, "hf_qwen3_window", base_config(
        "qwen3", head_dim=16, num_hidden_layers=3, use_sliding_window=True, sliding_window=8,
        max_window_layers=1, tie_word_embeddings=True), features=["qk_norm", "window"])
    # Gemma 2: 3 layers (0 and 2 slide, window 16), soft-capping small enough to bite (scores and
    # logits of this tiny model are a few units), query_pre_attn_scalar 32 != head_dim 8.
    gemma2 = base_config("gemma2", num_hidden_layers=3, head_dim=8, sliding_window=16,
                         query_pre_attn_scalar=32, attn_logit_softcapping=2.0,
                         final_logit_softcapping=3.0, hidden_activation="gelu_pytorch_tanh",
                         tie_word_embeddings=True)
    g2_features = ["norm_plus_one", "embed_scale", "geglu", "post_norms", "query_scale",
                   "attn_softcap", "final_softcap", "window"]
    hf_case(rng, "hf_gemma2", gemma2, features=g2_features)
    # The same in bfloat16: the embedding scale sqrt(24) is rounded to bf16 (4.90625).
    hf_case(rng, "hf_gemma2_bf16", dict(gemma2, torch_dtype="bfloat16"), dtype="BF16",
            features=["embed_scale_dtype"])
    # Gemma 3: 6 layers (the default pattern: layer 5 full), window 8, q/k norm, theta 1e6 with
    # linear scaling on the full layer only, the sliding layers at base 10000.
    gemma3 = base_config("gemma3_text", num_hidden_layers=6, head_dim=8, sliding_window=8,
                         rope_theta=1e6, rope_local_base_freq=10000.0, query_pre_attn_scalar=24,
                         rope_scaling={"rope_type": "linear", "factor": 4.0},
                         hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True)
    hf_case(rng, "hf_gemma3", gemma3, features=["qk_norm", "local_rope", "global_rope_scaling",
                                                "window", "norm_plus_one", "embed_scale"])
    # Gemma 3 with an explicit layer_types list of period 3.
    hf_case(rng, "hf_gemma3_types", dict(gemma3, num_hidden_layers=4, rope_scaling=None,
                                         layer_types=["sliding_attention", "sliding_attention",
                                                      "full_attention", "sliding_attention"]),
            features=["local_rope", "window"])
    # Phi-3: fused qkv (GQA 4:2, blocks of unequal rows) and gate_up, window 48 on every layer,
    # longrope over an original context of 32 (positions past it take the long factors; einfer
    # chooses them by the run's context, 48 here, as llama.cpp does by n_ctx).
    phi3 = base_config("phi3", hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                       sliding_window=48, original_max_position_embeddings=32,
                       rope_scaling=phi3_rope_scaling(rng, 8), hidden_act="silu")
    hf_case(rng, "hf_phi3", phi3, features=["longrope_factors", "longrope_attn_factor",
                                            "long_factors", "window"],
            extra_refs=[("_short", 32)])

    # GGUF forms.
    gguf_case(rng, "gguf_qwen3", "qwen3", base_config("qwen3", head_dim=16, rope_theta=1e6),
              features=["qk_norm"])
    gguf_case(rng, "gguf_gemma2", "gemma2", dict(gemma2, query_pre_attn_scalar=8),
              features=["embed_scale", "geglu", "post_norms", "attn_softcap", "final_softcap",
                        "window"])
    gguf_case(rng, "gguf_gemma3", "gemma3", dict(gemma3, query_pre_attn_scalar=8),
              features=["qk_norm", "local_rope", "global_rope_scaling", "window"])
    gguf_case(rng, "gguf_phi3", "phi3", phi3, features=["longrope_factors", "longrope_attn_factor",
                                                        "window"])

    # Refusals.
    write_config_only("bad_gemma3_bidirectional", dict(gemma3, use_bidirectional_attention=True))
    write_config_only("bad_gemma2_activation", dict(gemma2, hidden_activation="gelu"))
    write_config_only("bad_phi3_partial_rotary", dict(phi3, partial_rotary_factor=0.75))
    write_config_only("bad_phi3_yarn", dict(phi3, rope_scaling={"type": "yarn", "factor": 4.0}))
    write_config_only("bad_phi3_factors", dict(phi3, rope_scaling=dict(
        phi3["rope_scaling"], long_factor=phi3["rope_scaling"]["long_factor"][:3])))
    write_config_only("bad_gemma3_layer_types", dict(gemma3, num_hidden_layers=3, layer_types=[
        "full_attention", "sliding_attention", "full_attention"]))
    write_config_only("bad_qwen3_rope_yarn", base_config("qwen3", head_dim=16, rope_scaling={
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}))

    if not OFF:
        print("feature: largest change of a logit / position scale when the reference drops it")
        for f in FEATURES:
            for case, effect in EFFECTS.get(f, []):
                print(f"  {f:22s} {case:22s} {effect:.3g}")


def fuzz_seeds(out):
    """Tiny (one layer, width 8) models of every family for tests/fuzz: GGUFs for fuzz_gguf and
    Hugging Face folders as one byte string (config.json, a NUL byte, model.safetensors) for
    fuzz_hf_folder."""
    global VOCAB, OUT
    VOCAB = 16
    rng = np.random.default_rng(3)
    tiny = dict(hidden_size=8, intermediate_size=8, num_hidden_layers=1, num_attention_heads=2,
                num_key_value_heads=1, vocab_size=VOCAB, max_position_embeddings=32)
    cfgs = {
        "qwen3": base_config("qwen3", head_dim=4, **tiny),
        "gemma2": base_config("gemma2", head_dim=4, sliding_window=4, query_pre_attn_scalar=4,
                              attn_logit_softcapping=5.0, final_logit_softcapping=5.0,
                              tie_word_embeddings=True, **tiny),
        "gemma3": base_config("gemma3_text", head_dim=4, sliding_window=4, query_pre_attn_scalar=4,
                              rope_local_base_freq=10000.0, tie_word_embeddings=True, **tiny),
        "phi3": base_config("phi3", sliding_window=8, original_max_position_embeddings=8,
                            rope_scaling=phi3_rope_scaling(rng, 4), **tiny),
    }
    OUT = os.path.join(out, "gguf")
    os.makedirs(OUT, exist_ok=True)
    for arch, cfg in cfgs.items():
        gguf_case(rng, f"{arch}_tiny", arch, dict(cfg, model_type=None))
        for suffix in ("_fwd.f32", "_fwd.i32", "_q8w_fwd.f32", "_q8w_fwd.i32"):
            os.remove(os.path.join(OUT, f"{arch}_tiny{suffix}"))
    folder = os.path.join(out, "hf_folder")
    os.makedirs(folder, exist_ok=True)
    for arch, cfg in cfgs.items():
        path = os.path.join(folder, f"{arch}_tiny.st")
        st.write(path, [(k, a, "F32") for k, a in make_hf_weights(rng, cfg).items()])
        with open(path, "rb") as f:
            tensors = f.read()
        os.remove(path)
        with open(os.path.join(folder, f"{arch}_tiny.bin"), "wb") as f:
            f.write(json.dumps(cfg).encode() + b"\0" + tensors)


def llamacpp_models(out):
    """GGUFs llama.cpp c392e509 runs (it has gemma2 and phi3): a 26-layer gemma2 (its model type
    2B: llama.cpp aborts on other layer counts) and a phi3 with longrope, both with the 512-token
    vocabulary of ../shared/models/tinystories260K/stories260K.gguf."""
    global VOCAB, OUT
    vocab_gguf = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                              "shared", "models", "tinystories260K", "stories260K.gguf")
    OUT = out
    os.makedirs(out, exist_ok=True)
    VOCAB = 512
    rng = np.random.default_rng(7)
    g2 = base_config("gemma2", hidden_size=64, intermediate_size=128, num_hidden_layers=26,
                     num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=512,
                     sliding_window=8, query_pre_attn_scalar=16, attn_logit_softcapping=50.0,
                     final_logit_softcapping=30.0, max_position_embeddings=256,
                     tie_word_embeddings=True)
    # Small embeddings: with the tied classifier and sqrt(d) scaling, larger ones make a random
    # model predict the token it was fed, again and again.
    gguf_case(rng, "llamacpp_gemma2", "gemma2", g2, tokenizer_from=vocab_gguf, emb_scale=0.02)
    p3 = base_config("phi3", hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                     num_attention_heads=4, num_key_value_heads=4, vocab_size=512,
                     sliding_window=12, max_position_embeddings=256,
                     original_max_position_embeddings=64, rope_scaling=phi3_rope_scaling(rng, 16))
    gguf_case(rng, "llamacpp_phi3", "phi3", p3, tokenizer_from=vocab_gguf)


if __name__ == "__main__":
    main()
