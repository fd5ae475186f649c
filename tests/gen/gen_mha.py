#!/usr/bin/python3
"""Reference vectors for the multi-head attention layer (models/mha.h) from PyTorch.

nn.MultiheadAttention(embed_dim=24, num_heads=4, bias=True, batch_first=True) on a [2, 7, 24] input,
bidirectional and with a causal mask. Writes float32 .npy files to tests/data/mha/:
  wq wk wv [24,24], bq bk bv [24] (split from in_proj_weight / in_proj_bias), wo [24,24], bo [24],
  x [2,7,24], y_bidir [2,7,24], y_causal [2,7,24].
Run: /usr/bin/python3 tests/gen/gen_mha.py
"""
import os

import numpy as np
import torch

out = os.path.join(os.path.dirname(__file__), "..", "data", "mha")
os.makedirs(out, exist_ok=True)
torch.manual_seed(1234)
d, h, b, s = 24, 4, 2, 7
mha = torch.nn.MultiheadAttention(d, h, bias=True, batch_first=True)
with torch.no_grad():  # non-zero biases so that every bias is exercised
    mha.in_proj_bias.uniform_(-0.5, 0.5)
    mha.out_proj.bias.uniform_(-0.5, 0.5)
x = torch.randn(b, s, d)
with torch.no_grad():
    y_bidir, _ = mha(x, x, x, need_weights=False)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(s)
    y_causal, _ = mha(x, x, x, attn_mask=mask, need_weights=False)

W = mha.in_proj_weight.detach().numpy()
B = mha.in_proj_bias.detach().numpy()
arrays = {
    "wq": W[:d], "wk": W[d:2 * d], "wv": W[2 * d:], "bq": B[:d], "bk": B[d:2 * d], "bv": B[2 * d:],
    "wo": mha.out_proj.weight.detach().numpy(), "bo": mha.out_proj.bias.detach().numpy(),
    "x": x.numpy(), "y_bidir": y_bidir.numpy(), "y_causal": y_causal.numpy(),
}
for name, a in arrays.items():
    np.save(os.path.join(out, name + ".npy"), np.ascontiguousarray(a, dtype=np.float32))
print("wrote", len(arrays), "arrays to", os.path.normpath(out))
