#!/usr/bin/python3
"""Reference vectors for the attention, RoPE and positional-encoding tests.

Writes tests/data/attention/*.npy. Everything is computed in float64 with numpy from float32
inputs, written independently of the C++ code (its own mask, softmax and rotation formulas).
Run with /usr/bin/python3 (numpy); deterministic (fixed seed).

Attention case `c` (files c_q, c_k, c_v, c_out, c_meta):
  q [P][H][k], k/v [P][G][k]: a sequence of P tokens at positions 0..P-1 (keys already "rotated")
  meta int64: H, G, k, P, window, sinks, causal, capacity (ring slots the test should use)
  out [P][H][k]: softmax(q.k * scale) v over the attended keys, scale = float32(1/sqrt(k)).
  Query t attends key p when causal: p <= t and (window == 0 or p < sinks or t - p < window - sinks)
  (a window of W positions counts the current one, as HF / Mistral / llama.cpp do);
  non-causal (encoder): all P keys.
"""
import os
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "attention")
rng = np.random.default_rng(20261121)


def save(name, a):
    np.save(os.path.join(OUT, name + ".npy"), a)


def attention_case(name, H, G, k, P, window, sinks, causal, capacity, q_gain=2.0):
    q = (rng.standard_normal((P, H, k)) * q_gain).astype(np.float32)
    kk = rng.standard_normal((P, G, k)).astype(np.float32)
    v = rng.standard_normal((P, G, k)).astype(np.float32)
    scale = float(np.float32(1.0) / np.sqrt(np.float32(k)))
    r = H // G
    out = np.zeros((P, H, k), dtype=np.float64)
    for t in range(P):
        keys = []
        for p in range(P):
            if causal:
                ok = p <= t and (window == 0 or p < sinks or t - p < window - sinks)
            else:
                ok = True
            if ok:
                keys.append(p)
        keys = np.array(keys)
        for h in range(H):
            g = h // r
            s = kk[keys, g, :].astype(np.float64) @ q[t, h, :].astype(np.float64) * scale
            w = np.exp(s - s.max())
            w /= w.sum()
            out[t, h, :] = w @ v[keys, g, :].astype(np.float64)
    save(name + "_q", q)
    save(name + "_k", kk)
    save(name + "_v", v)
    save(name + "_out", out.astype(np.float32))
    save(name + "_meta", np.array([H, G, k, P, window, sinks, int(causal), capacity], dtype=np.int64))


def rope(x, pos, theta, layout):
    k = x.shape[-1]
    half = k // 2
    i = np.arange(half, dtype=np.float64)
    inv_freq = 1.0 / theta ** (2.0 * i / k)
    ang = pos * inv_freq
    c, s = np.cos(ang), np.sin(ang)
    y = x.astype(np.float64).copy()
    if layout == "interleaved":
        a, b = y[..., 0::2].copy(), y[..., 1::2].copy()
        y[..., 0::2] = a * c - b * s
        y[..., 1::2] = a * s + b * c
    else:
        a, b = y[..., :half].copy(), y[..., half:].copy()
        y[..., :half] = a * c - b * s
        y[..., half:] = a * s + b * c
    return y


def main():
    os.makedirs(OUT, exist_ok=True)
    # name, H, G, k, P, window, sinks, causal, capacity
    attention_case("mha", 4, 4, 12, 20, 0, 0, True, 32)
    attention_case("gqa", 8, 2, 32, 70, 0, 0, True, 80)
    attention_case("mqa", 10, 1, 16, 20, 0, 0, True, 20)
    attention_case("gqa_window_sinks", 6, 2, 16, 95, 10, 2, True, 10)   # wraps 11 times
    attention_case("window_nosinks", 4, 2, 24, 70, 6, 0, True, 6)       # wraps 11 times
    attention_case("long_window_sinks", 4, 1, 8, 300, 100, 4, True, 100)  # windows span tiles
    attention_case("encoder", 4, 2, 16, 9, 0, 0, False, 0)

    P, H, k = 6, 3, 16
    x = rng.standard_normal((P, H, k)).astype(np.float32)
    pos = np.array([0, 1, 7, 100, 2047, 5000], dtype=np.int64)
    save("rope_x", x)
    save("rope_pos", pos)
    for theta in (10000, 500000):
        for layout in ("interleaved", "half_split"):
            y = np.stack([rope(x[j], float(pos[j]), float(theta), layout) for j in range(P)])
            save("rope_%s_theta%d" % (layout, theta), y.astype(np.float32))

    n, d, pos0 = 5, 12, 3
    xs = rng.standard_normal((n, d)).astype(np.float32)
    pe = np.zeros((n, d))
    for t in range(n):
        for i in range(d // 2):
            ang = (pos0 + t) / 10000.0 ** (2.0 * i / d)
            pe[t, 2 * i] = np.sin(ang)
            pe[t, 2 * i + 1] = np.cos(ang)
    save("sinusoidal_x", xs)
    save("sinusoidal_out", (xs.astype(np.float64) + pe).astype(np.float32))


if __name__ == "__main__":
    main()
