"""The GGUF side of the decoder generators (gen_arch.py, gen_families.py): llama.cpp's gguf-py writer
from the scratch checkout (never vendored), the hyperparameter keys every llama-style file carries,
and the tensors written as float32."""
import os
import sys

import numpy as np

GGUF_PY = "/work/scratch/llama.cpp/gguf-py"


def gguf_module():
    sys.path.insert(0, GGUF_PY)
    import gguf  # llama.cpp's writer, from the scratch checkout only
    return gguf


def open_writer(path, arch, cfg, heads, kv_heads):
    """A GGUFWriter with {arch}.context_length .. attention.head_count_kv from a config.json dict."""
    writer = gguf_module().GGUFWriter(path, arch)
    writer.add_uint32(f"{arch}.context_length", cfg["max_position_embeddings"])
    writer.add_uint32(f"{arch}.embedding_length", cfg["hidden_size"])
    writer.add_uint32(f"{arch}.feed_forward_length", cfg["intermediate_size"])
    writer.add_uint32(f"{arch}.block_count", cfg["num_hidden_layers"])
    writer.add_uint32(f"{arch}.attention.head_count", heads)
    writer.add_uint32(f"{arch}.attention.head_count_kv", kv_heads)
    return writer


def finish(writer, tensors):
    """Adds tensors ((name, array) pairs) as float32 and writes the file."""
    for k, a in tensors:
        writer.add_tensor(k, np.ascontiguousarray(a, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
