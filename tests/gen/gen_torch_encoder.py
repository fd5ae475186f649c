#!/usr/bin/python3
"""Writes PyTorch encoder state dicts as safetensors (by hand) plus torch reference outputs.

torch_encoder.safetensors: nn.TransformerEncoder(2 x layer(d=16, nhead=2, ff=32, gelu,
  norm_first=True), final LayerNorm); config in __metadata__ (nhead, activation, norm_first, eps).
torch_encoder_layer.safetensors: a single nn.TransformerEncoderLayer (relu, post-norm, keys
  without a layers.N. prefix), no metadata: pack with --heads 4.
References: raw float32 of split projections, and input/output of each module (float32, eval
mode) for forward comparisons once the encoder model lands.
"""
import os

import numpy as np
import torch

import safetensors_writer as st

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "format")
torch.manual_seed(5)
d, ff, seq = 16, 32, 5


def f32(name, a):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(np.ascontiguousarray(a, dtype="<f4").tobytes())


def save(path, module, metadata=None):
    tensors = [(k, v.detach().numpy().astype(np.float32), "F32")
               for k, v in module.state_dict().items()]
    st.write(os.path.join(OUT, path), tensors, metadata)
    return module.state_dict()


layer = torch.nn.TransformerEncoderLayer(d, 2, ff, dropout=0.0, activation="gelu",
                                         norm_first=True, batch_first=True, layer_norm_eps=1e-5)
enc = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(d), enable_nested_tensor=False)
with torch.no_grad():  # non-trivial norms and biases
    for name, p in enc.named_parameters():
        if "norm" in name or "bias" in name:
            p.add_(torch.randn_like(p) * 0.2)
enc.eval()
sd = save("torch_encoder.safetensors", enc,
          {"nhead": "2", "activation": "gelu", "norm_first": "true", "eps": "1e-05"})
x = torch.randn(1, seq, d)
with torch.no_grad():
    y = enc(x)
f32("torch_encoder_in.f32", x.numpy())
f32("torch_encoder_out.f32", y.numpy())
w = sd["layers.1.self_attn.in_proj_weight"].numpy()
f32("torch_ref_wk1.f32", w[d:2 * d])
f32("torch_ref_bv0.f32", sd["layers.0.self_attn.in_proj_bias"].numpy()[2 * d:])
f32("torch_ref_final_norm_bias.f32", sd["norm.bias"].numpy())

single = torch.nn.TransformerEncoderLayer(d, 4, ff, dropout=0.0, activation="relu",
                                          batch_first=True)
single.eval()
sd1 = save("torch_encoder_layer.safetensors", single)
with torch.no_grad():
    y1 = single(x)
f32("torch_encoder_layer_out.f32", y1.numpy())
f32("torch_ref_layer_wq.f32", sd1["self_attn.in_proj_weight"].numpy()[:d])
f32("torch_ref_layer_b2.f32", sd1["linear2.bias"].numpy())
print("keys", list(sd.keys())[:6])
