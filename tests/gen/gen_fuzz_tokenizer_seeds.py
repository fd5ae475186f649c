#!/usr/bin/env python3
"""Seed inputs for tests/fuzz/fuzz_tokenizer.cpp: u32 image length, a small EITK tokenizer image
(docs/format.md "Tokenizer image"), then text. One SentencePiece-BPE image (llama2.c layout:
<unk> <s> </s>, 256 byte pieces, a few scored pieces, a user-defined token) and one byte-level
BPE image with merges, a GPT-2 / Llama 3 pre-tokenizer and a control token matched in text; then
version 2 images: NFC/NFKC byte-level BPE, a ▁-escaped character BPE with ▁-spelled added tokens,
the space split with NFD + StripAccents + Lowercase and fused unknowns, WordPiece with the BERT
normalizer and pre-tokenizer, and SentencePiece with user-defined ▁ runs.
Also seeds for the tokenizer_file target (tests/fuzz/corpus/tokenizer_file): tiny tokenizer.json
files of those kinds and a BERT vocab.txt.
    python3 tests/gen/gen_fuzz_tokenizer_seeds.py
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus_tokenizer")


def image(algorithm, flags, pre, pieces, types, scores=None, merges=(), bos=-1, eos=-1, unk=-1,
          normalizer=0, max_word_chars=0, version=1):
    blob = b"".join(pieces)
    offsets = [0]
    for p in pieces:
        offsets.append(offsets[-1] + len(p))
    n = len(pieces)
    eog = [eos] if eos >= 0 else []
    h = struct.pack("<9I4iI8i10I", 0x4B544945, version, algorithm, flags, pre, n, len(merges),
                    len(blob), max(len(p) for p in pieces), bos, eos, unk, -1, len(eog),
                    *(eog + [0] * (8 - len(eog))), normalizer, max_word_chars, *([0] * 8))
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
# Version 2. Normalizer bits: form 1 NFC 2 NFD 3 NFKC 4 NFKD, 8 BERT clean, 16 Chinese spacing,
# 32 strip Mn, 64 strip marks, 128 lowercase. Flags 1024 escaped-space matching, 2048 either,
# 4096 fuse unk.
mixed = "Caf\u00e9 e\u0301 \ufb01 \uff21 \u65e5\u672c \u0130 I'M a\u2581\u2581b  \t\n".encode() + b"\xff"
seeds["bpe_nfc"] = (image(2, 256 | 64, 3, bl_pieces, bl_types, merges=bl_merges, eos=259,
                          normalizer=1, version=2), mixed)
seeds["bpe_nfkc_bert"] = (image(2, 256 | 64, 2, bl_pieces, bl_types, merges=bl_merges, eos=259,
                                normalizer=3 | 8 | 16 | 128, version=2), mixed)
ch_pieces = [b"<unk>", b"<bos>", b" ", b"a", b"b", b"ab", b" a", b"  ", b"\n", b"\xc3\xa9"]
ch_pieces += [b"<0x%02X>" % i for i in range(256)]
ch_types = [2, 3, 1, 1, 1, 1, 1, 4, 4, 1] + [6] * 256
ch_merges = [(3, 4, 5), (2, 3, 6), (2, 2, 7)]
seeds["char_escaped"] = (image(2, 1 | 8 | 64 | 512 | 1024, 0, ch_pieces, ch_types, merges=ch_merges,
                               bos=1, unk=0, version=2), mixed)
sp_pieces = [p for p in ch_pieces if not p.startswith(b"<0x")]
sp_types = [2, 3, 1, 1, 1, 1, 1, 1, 4, 1]
seeds["char_split_fuse"] = (image(2, 64 | 4096, 6, sp_pieces, sp_types, merges=ch_merges, unk=0,
                                  normalizer=2 | 64 | 128, version=2), mixed)
wp_pieces = [b"[PAD]", b"[UNK]", b"[CLS]", b"[SEP]", b" hello", b" world", b"lo", b" hel",
             b" ,", b" !", b" caf", b"e", b" \xe6\x97\xa5", b"s"]
wp_types = [3, 2, 3, 3] + [1] * 10
seeds["wordpiece_bert"] = (image(3, 1 | 2 | 64, 5, wp_pieces, wp_types, bos=2, eos=3, unk=1,
                                 normalizer=2 | 8 | 16 | 32 | 128, max_word_chars=8, version=2),
                           "Hello, world! helloworlds [CLS] Caf\u00e9 \u65e5x\u00a0y".encode())
spm_any = image(1, 8 | 512 | 2048, 0, spm_pieces + [b"  "], spm_types + [4],
                spm_scores + [0.0], bos=1, eos=2, unk=0, version=2)
seeds["spm_any_space"] = (spm_any, "a  b a\u2581\u2581b \u2581 ab".encode())
os.makedirs(OUT, exist_ok=True)
for name, (img, text) in seeds.items():
    with open(os.path.join(OUT, name + ".bin"), "wb") as f:
        f.write(struct.pack("<I", len(img)) + img + text)
print(len(seeds), "seeds ->", OUT)

# tokenizer_file seeds: tiny tokenizer.json files of each new kind, and a vocab.txt.
FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus",
                     "tokenizer_file")
bert_vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s", ",", "!", "a"]
specials = [{"id": i, "content": t, "special": True, "normalized": False} for i, t in
            enumerate(bert_vocab[:5])]
files = {
    "wordpiece.json": {
        "added_tokens": specials,
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": {t: i for i, t in enumerate(bert_vocab)}}},
    "nfc_bytelevel.json": {
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}]},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "\u0120": 3},
                  "merges": ["a b"]}},
    "gemma_style.json": {
        "added_tokens": [{"id": 0, "content": "<unk>", "special": True},
                         {"id": 5, "content": "\u2581\u2581", "special": False}],
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        "pre_tokenizer": {"type": "Split", "pattern": {"String": " "},
                          "behavior": "MergedWithPrevious", "invert": False},
        "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": False,
                  "vocab": {"<unk>": 0, "a": 1, "b": 2, "ab": 3, "\u2581": 4, "\u2581\u2581": 5},
                  "merges": [["a", "b"], ["\u2581", "\u2581"]]}},
    "split_lower.json": {
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"},
                                                          {"type": "Lowercase"}]},
        "pre_tokenizer": {"type": "Split", "pattern": {"String": " "},
                          "behavior": "MergedWithPrevious", "invert": False},
        "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True,
                  "vocab": {"<unk>": 0, "a": 1, "b": 2, "ab": 3, " ": 4}, "merges": ["a b"]}},
}
os.makedirs(FILES, exist_ok=True)
for name, obj in files.items():
    with open(os.path.join(FILES, name), "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False)
with open(os.path.join(FILES, "vocab.txt"), "w") as f:
    f.write("\n".join(bert_vocab) + "\n")
print(len(files) + 1, "seeds ->", FILES)
