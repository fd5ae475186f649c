#!/usr/bin/python3
"""Issue 19 references: PyTorch's encoder-decoder nn.Transformer (Debian python3-torch).

Writes tests/data/encdec/<case>.safetensors (the state dict, with nhead/activation/norm_first/eps/
context in __metadata__) and <case>_src.npy [S, d], <case>_tgt.npy [T, d], <case>_out.npy [T, d]:
nn.Transformer(batch_first=True, dropout=0) on src/tgt with a causal tgt_mask
(nn.Transformer.generate_square_subsequent_mask), eval mode, float32.
Cases: relu post-norm 2+2 layers, gelu pre-norm 2+3 layers (different stack depths),
relu pre-norm with one head, gelu post-norm 1+1. Non-trivial norms and biases.
"""
import os

import numpy as np
import torch

import safetensors_writer as st

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "encdec")
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(1919)

CASES = [
    # name, d, nhead, ff, enc layers, dec layers, activation, norm_first, S, T
    ("relu_post", 16, 2, 32, 2, 2, "relu", False, 7, 9),
    ("gelu_pre", 16, 4, 24, 2, 3, "gelu", True, 11, 6),
    ("relu_pre_1head", 8, 1, 16, 1, 2, "relu", True, 5, 13),
    ("gelu_post", 24, 3, 40, 1, 1, "gelu", False, 9, 70),  # > one 64-key tile of target
]

for name, d, nhead, ff, ne, nd, act, norm_first, S, T in CASES:
    model = torch.nn.Transformer(d_model=d, nhead=nhead, num_encoder_layers=ne,
                                 num_decoder_layers=nd, dim_feedforward=ff, dropout=0.0,
                                 activation=act, batch_first=True, norm_first=norm_first)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "norm" in pname or "bias" in pname:
                p.add_(torch.randn_like(p) * 0.2)
    model.eval()
    tensors = [(k, v.detach().numpy().astype(np.float32), "F32")
               for k, v in model.state_dict().items()]
    st.write(os.path.join(OUT, name + ".safetensors"), tensors,
             {"nhead": str(nhead), "activation": act, "norm_first": str(norm_first).lower(),
              "eps": "1e-05", "context": "128"})
    src = torch.randn(1, S, d)
    tgt = torch.randn(1, T, d)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(T)
    with torch.no_grad():
        y = model(src, tgt, tgt_mask=mask)
        # The mask matters: without it row 0 would change.
        y_nomask = model(src, tgt)
    assert (y - y_nomask).abs().max() > 1e-3
    for suffix, a in (("src", src[0]), ("tgt", tgt[0]), ("out", y[0])):
        np.save(os.path.join(OUT, f"{name}_{suffix}.npy"), a.numpy().astype(np.float32))
    print(name, "keys", len(tensors), "out", tuple(y.shape))
