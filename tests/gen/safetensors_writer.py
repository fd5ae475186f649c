"""Minimal safetensors writer (the `safetensors` package is not installed): uint64 header length,
JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then raw bytes."""
import json
import os
import struct

import numpy as np


def to_bf16_bits(a):
    """float32 -> bfloat16 bit patterns, round to nearest even."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_bits_to_f32(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def write(path, tensors, metadata=None):
    """tensors: list of (name, float32 array, dtype in F32|F16|BF16)."""
    header, blobs, offset = {}, [], 0
    for name, array, dtype in tensors:
        if dtype == "F32":
            raw = np.ascontiguousarray(array, dtype="<f4").tobytes()
        elif dtype == "F16":
            raw = np.ascontiguousarray(array, dtype="<f2").tobytes()
        elif dtype == "BF16":
            raw = to_bf16_bits(array).astype("<u2").tobytes()
        else:
            raise ValueError(dtype)
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def stored(array, dtype):
    """The float32 values a reader gets back after storing `array` as `dtype`."""
    if dtype == "F32":
        return np.asarray(array, np.float32)
    if dtype == "F16":
        return np.asarray(array, np.float16).astype(np.float32)
    return bf16_bits_to_f32(to_bf16_bits(array)).reshape(np.shape(array))


def write_hf_folder(folder, cfg, weights=None, dtype="F32"):
    """A Hugging Face folder: config.json (cfg), and model.safetensors of the float32 `weights`
    ({name: array}) stored as `dtype` unless None. Returns the float32 values a reader gets back."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    if weights is None:
        return None
    write(os.path.join(folder, "model.safetensors"), [(k, a, dtype) for k, a in weights.items()],
          {"format": "pt"})
    return {k: stored(a, dtype) for k, a in weights.items()}
