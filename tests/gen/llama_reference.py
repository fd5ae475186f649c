"""Float64 numpy forward pass of a Llama decoder, the reference for the importer forward tests.

Written from the published model definitions, independently of einfer: RMSNorm
(x / sqrt(mean(x^2) + eps) * w), rotary embeddings, causal grouped-query attention (query head h
reads kv head h // (heads / kv_heads)), SwiGLU MLP down(silu(gate(x)) * up(x)), final RMSNorm,
classifier. Two RoPE conventions:
  "interleaved": llama2.c / llama.cpp GGUF, pairs (2i, 2i+1) of each head rotate by pos * f_i;
  "half_split":  Hugging Face rotate_half, pairs (i, i + head/2) rotate by pos * f_i;
with f_i = theta^(-2i / head). Weights are [out, in] matrices (y = W x), as every source stores them.
"""
import numpy as np


def normal_source(seed, scale):
    """rnd(*shape): float32 normal values times `scale`, in call order from one seeded generator."""
    rng = np.random.default_rng(seed)

    def rnd(*shape):
        return rng.standard_normal(shape).astype(np.float32) * scale

    return rnd


def rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x) + eps) * w


def rope(x, pos, theta, mode):
    """x: [n_heads, head] for one position."""
    head = x.shape[1]
    half = head // 2
    ang = pos * theta ** (-np.arange(half, dtype=np.float64) * 2.0 / head)
    cos, sin = np.cos(ang), np.sin(ang)
    if mode == "interleaved":
        a, b = x[:, 0::2], x[:, 1::2]
        out = np.empty_like(x)
        out[:, 0::2] = a * cos - b * sin
        out[:, 1::2] = a * sin + b * cos
        return out
    assert mode == "half_split"
    # HF: q * cos + rotate_half(q) * sin with cos/sin repeated over both halves.
    rot = np.concatenate([-x[:, half:], x[:, :half]], axis=1)
    return x * np.concatenate([cos, cos]) + rot * np.concatenate([sin, sin])


def elu1(x):
    return np.where(x > 0, x + 1.0, np.exp(x))


def forward(w, tokens, heads, kv_heads, eps, theta, mode, attention="softmax", attends=None):
    """w: dict with tok [V, D], final_norm [D], cls [V, D] and per-layer lists att_norm, wq, wk,
    wv, wo, ffn_norm, gate, down, up. Returns float64 logits [len(tokens), V].
    attention="linear-elu" (Katharopoulos et al. 2020, causal): head h of position i mixes
    phi(q_i) . sum_{j<=i} phi(k_j) v_j^T / phi(q_i) . sum_{j<=i} phi(k_j), phi = elu + 1, on the
    rotated q and k, no 1/sqrt(head) scaling; written as the explicit sums, not a recurrence.
    attends(i, j) -> bool (softmax only): a sparse pattern; keys it rejects get an additive -inf
    before the softmax (the mask form of issue 19), on top of the causal j <= i."""
    w = {k: ([np.asarray(m, np.float64) for m in v] if isinstance(v, list)
             else np.asarray(v, np.float64)) for k, v in w.items()}
    dim = w["tok"].shape[1]
    head = dim // heads
    group = heads // kv_heads
    layers = len(w["wq"])
    keys = [[] for _ in range(layers)]
    values = [[] for _ in range(layers)]
    out = []
    for pos, t in enumerate(tokens):
        x = w["tok"][t].copy()
        for l in range(layers):
            xn = rmsnorm(x, w["att_norm"][l], eps)
            q = rope((w["wq"][l] @ xn).reshape(heads, head), pos, theta, mode)
            k = rope((w["wk"][l] @ xn).reshape(kv_heads, head), pos, theta, mode)
            keys[l].append(k)
            values[l].append((w["wv"][l] @ xn).reshape(kv_heads, head))
            K = np.stack(keys[l])    # [pos + 1, kv_heads, head]
            V = np.stack(values[l])
            att = np.empty((heads, head))
            for h in range(heads):
                if attention == "linear-elu":
                    fk = elu1(K[:, h // group, :])          # [pos + 1, head]
                    fq = elu1(q[h])
                    att[h] = (fq @ (fk.T @ V[:, h // group, :])) / (fq @ fk.sum(axis=0))
                    continue
                s = K[:, h // group, :] @ q[h] / np.sqrt(head)
                if attends is not None:
                    s = s + np.array([0.0 if attends(pos, j) else -np.inf
                                      for j in range(pos + 1)])
                p = np.exp(s - s.max())
                p /= p.sum()
                att[h] = p @ V[:, h // group, :]
            x = x + w["wo"][l] @ att.reshape(-1)
            xn = rmsnorm(x, w["ffn_norm"][l], eps)
            g = w["gate"][l] @ xn
            x = x + w["down"][l] @ (g / (1 + np.exp(-g)) * (w["up"][l] @ xn))
        out.append(w["cls"] @ rmsnorm(x, w["final_norm"], eps))
    return np.stack(out)


# The token sequence every forward reference is computed for: BOS, then ids valid in every test
# model's vocabulary (the smallest has 32).
TOKENS = [1, 7, 19, 3, 28, 11, 0, 25, 19]


def write_raw(path, logits, tokens=TOKENS):
    """<path>.f32: float32 logits [n, vocab]; <path>.i32: the int32 token ids they are for."""
    with open(path + ".f32", "wb") as f:
        f.write(np.ascontiguousarray(logits, dtype="<f4").tobytes())
    with open(path + ".i32", "wb") as f:
        f.write(np.asarray(tokens, dtype="<i4").tobytes())


def pattern_attends(window=0, glob=0, stride=0, block=0, summary=0):
    """Issue 19's pattern terms as a predicate (a key is attended when any non-zero term allows it):
    window W |i-j| < W; global G i < G or j < G; strided S (i-j) mod S == 0; fixed L,C same block
    of L or j mod L >= L - C."""
    def attends(i, j):
        return ((window and abs(i - j) < window) or (glob and (i < glob or j < glob)) or
                (stride and (i - j) % stride == 0) or
                (block and (i // block == j // block or j % block >= block - summary)))
    return attends
