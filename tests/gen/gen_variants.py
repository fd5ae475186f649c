#!/usr/bin/python3
"""Issue 19 references: encoder attention variants against PyTorch (Debian python3-torch).

Writes tests/data/variants/:
  encoder_post.safetensors  nn.TransformerEncoder(2 x layer(d=16, nhead=2, ff=32, relu, post-norm))
  encoder_pre.safetensors   nn.TransformerEncoder(2 x layer(d=16, nhead=4, ff=32, gelu, norm_first),
                            final LayerNorm)
  x.npy                     input [N=37, 16]
  pattern_<case>.npy        torch's encoder with an additive -inf mask built from the pattern
  positions_sinusoidal.npy  torch's encoder on x + the Vaswani encoding (float64, then float32)
  linear_<model>[_causal].npy  a float64 numpy encoder with linear-elu attention; the same numpy
                            code with softmax attention is first checked against torch (1e-5)
The mask is built here from the definition in the issue, independently of einfer's kernel.
"""
import os

import numpy as np
import torch

import safetensors_writer as st

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "variants")
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(19)
d, ff, N = 16, 32, 37


def make(nhead, activation, norm_first, final_norm):
    layer = torch.nn.TransformerEncoderLayer(d, nhead, ff, dropout=0.0, activation=activation,
                                             norm_first=norm_first, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(d) if final_norm else None,
                                      enable_nested_tensor=False)
    with torch.no_grad():
        for name, p in enc.named_parameters():
            if "norm" in name or "bias" in name:
                p.add_(torch.randn_like(p) * 0.2)
    enc.eval()
    return enc


def save(path, enc, meta):
    tensors = [(k, v.detach().numpy().astype(np.float32), "F32")
               for k, v in enc.state_dict().items()]
    st.write(os.path.join(OUT, path), tensors, meta)


def npy(name, a):
    np.save(os.path.join(OUT, name), np.ascontiguousarray(a, dtype=np.float32))


def attends(spec, causal, i, j):
    if causal and j > i:
        return False
    if not spec:
        return True
    ok = False
    for term in spec.split("+"):
        name, arg = term.split(":")
        if name == "window":
            ok |= abs(i - j) < int(arg)
        elif name == "global":
            ok |= i < int(arg) or j < int(arg)
        elif name == "strided":
            ok |= (i - j) % int(arg) == 0
        elif name == "fixed":
            L, C = (int(t) for t in arg.split(","))
            ok |= i // L == j // L or j % L >= L - C
    return ok


def mask(spec, causal):
    m = np.full((N, N), -np.inf, dtype=np.float32)
    for i in range(N):
        for j in range(N):
            if attends(spec, causal, i, j):
                m[i, j] = 0.0
    return torch.from_numpy(m)


post = make(2, "relu", False, False)
pre = make(4, "gelu", True, True)
save("encoder_post.safetensors", post, {"nhead": "2", "activation": "relu", "norm_first": "false"})
save("encoder_pre.safetensors", pre, {"nhead": "4", "activation": "gelu", "norm_first": "true"})
x = torch.randn(1, N, d)
npy("x.npy", x[0].numpy())

PATTERNS = {  # case name -> (model, spec, causal)
    "window3": ("post", "window:3", False),
    "window2_global2": ("post", "window:2+global:2", False),
    "strided4_causal": ("post", "strided:4", True),
    "fixed8_2_causal": ("pre", "fixed:8,2", True),
    "all_terms": ("pre", "window:3+global:1+strided:5+fixed:6,1", False),
}
with torch.no_grad():
    for name, (model, spec, causal) in PATTERNS.items():
        enc = post if model == "post" else pre
        npy(f"pattern_{name}.npy", enc(x, mask=mask(spec, causal))[0].numpy())
    pe = np.zeros((N, d))
    for p in range(N):
        for i in range(d // 2):
            angle = p / 10000.0 ** (2 * i / d)
            pe[p, 2 * i], pe[p, 2 * i + 1] = np.sin(angle), np.cos(angle)
    xp = x + torch.from_numpy(pe.astype(np.float32))
    npy("positions_sinusoidal.npy", pre(xp)[0].numpy())
    npy("positions_sinusoidal_window3.npy", post(xp, mask=mask("window:3", False))[0].numpy())


# float64 numpy encoder, attention pluggable.
def layernorm(v, w, b, eps=1e-5):
    mu = v.mean(-1, keepdims=True)
    var = ((v - mu) ** 2).mean(-1, keepdims=True)
    return (v - mu) / np.sqrt(var + eps) * w + b


def gelu(v):
    from math import erf
    return 0.5 * v * (1 + np.vectorize(erf)(v / np.sqrt(2)))


def softmax_attention(q, k, v, causal):
    s = np.einsum("hnk,hmk->hnm", q, k) / np.sqrt(q.shape[-1])
    if causal:
        s = s + np.triu(np.full((N, N), -np.inf), 1)
    s = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("hnm,hmv->hnv", s / s.sum(-1, keepdims=True), v)


def linear_attention(q, k, v, causal):
    phi = lambda t: np.where(t > 0, t + 1, np.exp(t))
    q, k = phi(q), phi(k)
    if not causal:
        kv = np.einsum("hnk,hnv->hkv", k, v)
        return np.einsum("hnk,hkv->hnv", q, kv) / np.einsum("hnk,hk->hn", q, k.sum(1))[..., None]
    out = np.zeros_like(v)
    for i in range(N):  # the definition, sums over j <= i (not the recurrence)
        kv = np.einsum("hnk,hnv->hkv", k[:, :i + 1], v[:, :i + 1])
        z = k[:, :i + 1].sum(1)
        out[:, i] = np.einsum("hk,hkv->hv", q[:, i], kv) / np.einsum("hk,hk->h", q[:, i], z)[:, None]
    return out


def numpy_encoder(enc, nhead, act, norm_first, xin, attention, causal):
    sd = {k: v.detach().numpy().astype(np.float64) for k, v in enc.state_dict().items()}
    h = xin.astype(np.float64)
    hd = d // nhead
    for l in range(2):
        P = lambda n: sd[f"layers.{l}.{n}"]
        W, B = P("self_attn.in_proj_weight"), P("self_attn.in_proj_bias")

        def sa(t):
            q, k, v = (t @ W[i * d:(i + 1) * d].T + B[i * d:(i + 1) * d] for i in range(3))
            split = lambda a: a.reshape(N, nhead, hd).transpose(1, 0, 2)
            o = attention(split(q), split(k), split(v), causal).transpose(1, 0, 2).reshape(N, d)
            return o @ P("self_attn.out_proj.weight").T + P("self_attn.out_proj.bias")

        def fwd(t):
            a = t @ P("linear1.weight").T + P("linear1.bias")
            a = np.maximum(a, 0) if act == "relu" else gelu(a)
            return a @ P("linear2.weight").T + P("linear2.bias")

        n1 = lambda t: layernorm(t, P("norm1.weight"), P("norm1.bias"))
        n2 = lambda t: layernorm(t, P("norm2.weight"), P("norm2.bias"))
        if norm_first:
            h = h + sa(n1(h))
            h = h + fwd(n2(h))
        else:
            h = n1(h + sa(h))
            h = n2(h + fwd(h))
    if "norm.weight" in sd:
        h = layernorm(h, sd["norm.weight"], sd["norm.bias"])
    return h


xn = x[0].numpy()
for name, enc, nhead, act, nf in (("post", post, 2, "relu", False), ("pre", pre, 4, "gelu", True)):
    for causal in (False, True):
        with torch.no_grad():
            want = enc(x, mask=mask("", causal))[0].numpy()
        got = numpy_encoder(enc, nhead, act, nf, xn, softmax_attention, causal)
        err = np.abs(got - want).max()
        assert err < 1e-5, f"numpy softmax encoder disagrees with torch: {err}"
        print(f"numpy softmax {name} causal={causal} vs torch: {err:.2e}")
        lin = numpy_encoder(enc, nhead, act, nf, xn, linear_attention, causal)
        npy(f"linear_{name}{'_causal' if causal else ''}.npy", lin)
print("wrote", sorted(os.listdir(OUT)))
