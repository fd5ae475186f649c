#!/usr/bin/env python3
"""Seed inputs for tests/fuzz/fuzz_tokenizer.cpp: u32 image length, a small EITK tokenizer image
(docs/format.md "Tokenizer image"), then text. One SentencePiece-BPE image (llama2.c layout:
<unk> <s> </s>, 256 byte pieces, a few scored pieces, a user-defined token) and one byte-level
BPE image with merges, a GPT-2 / Llama 3 pre-tokenizer and a control token matched in text.
    python3 tests/gen/gen_fuzz_tokenizer_seeds.py
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus_tokenizer")


def image(algorithm, flags, pre, pieces, types, scores=None, merges=(), bos=-1, eos=-1, unk=-1):
    blob = b"".join(pieces)
    offsets = [0]
    for p in pieces:
        offsets.append(offsets[-1] + len(p))
    n = len(pieces)
    eog = [eos] if eos >= 0 else []
    h = struct.pack("<9I4iI8i10I", 0x4B544945, 1, algorithm, flags, pre, n, len(merges), len(blob),
                    max(len(p) for p in pieces), bos, eos, unk, -1, len(eog),
                    *(eog + [0] * (8 - len(eog))), *([0] * 10))
    assert len(h) == 128
    out = h + struct.pack(f"<{n + 1}I", *offsets)
    if algorithm == 1:
        out += struct.pack(f"<{n}f", *scores)
    t = bytes(types)
    out += t + b"\0" * ((-len(t)) % 4)
    for m in merges:
        out += struct.pack("<3I", *m)
    return out + blob


spm_pieces = [b"<unk>", b"<s>", b"</s>"] + [b"<0x%02X>" % i for i in range(256)]
spm_pieces += [b" ", b"a", b"b", b"ab", b" a", b" ab", b"\xc3\xa9", b"<user>"]
spm_types = [2, 3, 3] + [6] * 256 + [1] * 7 + [4]
spm_scores = [0.0] * 259 + [-10, -10, -10, -1, -2, -0.5, -3, 0]
spm = image(1, 1 | 4 | 8 | 512, 0, spm_pieces, spm_types, spm_scores, bos=1, eos=2, unk=0)

bl_pieces = [bytes([i]) for i in range(256)] + [b"ab", b"abc", b" ab", b"<|x|>"]
bl_types = [1] * 259 + [3]
bl_merges = [(ord("a"), ord("b"), 256), (ord(" "), 256, 258), (256, ord("c"), 257)]

bpe = lambda flags, pre: image(2, flags, pre, bl_pieces, bl_types, merges=bl_merges, eos=259)
seeds = {
    "spm_hello": (spm, "ab ab\u00e9 <user> a".encode() + b"\xff"),
    "spm_invalid": (spm, b"\xff\xfe a b\xc3"),
    "bpe_gpt2": (bpe(256 | 64, 1), b"ab abc's  \n\n 123 <|x|>x"),
    "bpe_llama3": (bpe(256 | 64 | 32, 2), "I'M ab\r\n\t12345 \u65e5\u672c \U0001F600".encode()),
    "bpe_digits": (bpe(256, 4), b"ab 12 c\xff"),
}
os.makedirs(OUT, exist_ok=True)
for name, (img, text) in seeds.items():
    with open(os.path.join(OUT, name + ".bin"), "wb") as f:
        f.write(struct.pack("<I", len(img)) + img + text)
print(len(seeds), "seeds ->", OUT)
