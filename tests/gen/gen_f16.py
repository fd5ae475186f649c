#!/usr/bin/python3
"""Generates tests/data/quant/f16_cases.bin: float32 inputs, numpy's float16 encoding of each and
numpy's float32 decoding of that float16 (the reference for einfer::f32_to_f16 / f16_to_f32).

Format (little endian): b"EF16", uint32 count, count x uint32 float32 bits (input),
count x uint16 float16 bits, count x uint32 float32 bits (float16 decoded back).
Run with /usr/bin/python3 (numpy).
"""
import os
import struct

import numpy as np

rng = np.random.default_rng(20260101)
vals = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 65504.0, 65519.99, 65520.0, 1e6, -1e6,
        2.0**-14, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-26, 2.0**-25 * 1.0001, 2.0**-15, 2.0**-20,
        1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 1.0 + 2.0**-11 + 2.0**-20, 2048.0 + 1.0, 2048.0 + 3.0,
        0.1, 1.0 / 3.0, 6.1e-5, 6.0e-8, 5.9e-8, 2.98e-8, 3.0e-8, 1e-10, 65505.0, 4096.0 + 2.0]
bits = [np.float32(v).view(np.uint32) for v in vals]
bits += [0x7F800001, 0xFFC00000, 0x7FFFFFFF]  # NaNs with payloads
# Exact ties between neighbouring halves (normal and subnormal) and random values over the range.
halves = rng.integers(0, 0x7C00, 200, dtype=np.uint32)
for h in halves:
    lo = np.uint16(h).view(np.float16).astype(np.float64)
    hi = np.uint16(h + 1).view(np.float16).astype(np.float64)
    bits.append(np.float32((lo + hi) / 2).view(np.uint32))
exps = rng.uniform(-28, 17, 300)
rand = (rng.choice([-1, 1], 300) * 2.0**exps).astype(np.float32)
bits += [x.view(np.uint32) for x in rand]
f32 = np.array(bits, dtype=np.uint32).view(np.float32)
with np.errstate(over="ignore"):
    f16 = f32.astype(np.float16)
back = f16.astype(np.float32)
out = os.path.join(os.path.dirname(__file__), "..", "data", "quant", "f16_cases.bin")
with open(out, "wb") as f:
    f.write(b"EF16" + struct.pack("<I", len(f32)))
    f.write(f32.view(np.uint32).astype("<u4").tobytes())
    f.write(f16.view(np.uint16).astype("<u2").tobytes())
    f.write(back.view(np.uint32).astype("<u4").tobytes())
print(out, len(f32))
