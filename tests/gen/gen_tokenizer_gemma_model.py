#!/usr/bin/env python3
"""Gemma's tokenizer.model cannot be had here (it is not redistributable through npm and the
public mirrors keep it out of git), so this trains a small SentencePiece model with Gemma's
trainer and normalizer settings -- BPE, byte fallback, no dummy prefix, no removal of extra
whitespace, identity normalization, split digits, whitespace-only pieces allowed, Gemma's special
ids (pad 0, eos 1, bos 2, unk 3) and user-defined symbols like Gemma's (turn markers, runs of
newlines, tabs and ▁) -- on the repository's own documentation, with Debian's
python3-sentencepiece. Writes tests/data/tokenizer/fixtures/gemma-like.model and, for every string
of tests/data/tokenizer/corpus.txt, the ids sentencepiece encodes it to without BOS/EOS
(gemma-like.spm.ids, "R|ids", R = 1 when sentencepiece decodes them back exactly); with a real
Gemma tokenizer.model at ../scratch/tok/gemma/tokenizer.model also gemma.spm.ids.
    /usr/bin/python3 tests/gen/gen_tokenizer_gemma_model.py
"""
import glob
import io
import os

import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
DATA = os.path.join(ROOT, "tests", "data", "tokenizer")
OUT = os.path.join(DATA, "fixtures", "gemma-like.model")
REAL = os.path.join(ROOT, "..", "scratch", "tok", "gemma", "tokenizer.model")

text = []
for path in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")) + [os.path.join(ROOT, "README.md")]):
    with open(path, encoding="utf-8") as f:
        text += [line.rstrip("\n") for line in f if line.strip()]

symbols = ["<start_of_turn>", "<end_of_turn>", "<start_of_image>", "<mask>", "[multimodal]"]
symbols += ["\n" * k for k in range(1, 8)] + ["\t" * k for k in range(1, 5)]
symbols += ["\u2581" * k for k in range(2, 9)]
symbols += ["<table>", "<tr>", "<td>", "<h1>", "</h1>"]
model = io.BytesIO()
spm.SentencePieceTrainer.train(
    sentence_iterator=iter(text), model_writer=model, model_type="bpe", vocab_size=1200,
    character_coverage=0.9995, byte_fallback=True, add_dummy_prefix=False,
    remove_extra_whitespaces=False, normalization_rule_name="identity", split_digits=True,
    allow_whitespace_only_pieces=True, split_by_whitespace=True, max_sentencepiece_length=16,
    user_defined_symbols=symbols, pad_id=0, eos_id=1, bos_id=2, unk_id=3, pad_piece="<pad>",
    eos_piece="<eos>", bos_piece="<bos>", unk_piece="<unk>", num_threads=1, seed_sentencepiece_size=100000,
    minloglevel=2)
with open(OUT, "wb") as f:
    f.write(model.getvalue())
print(OUT, len(model.getvalue()), "bytes")

lines = open(os.path.join(DATA, "corpus.txt")).read().splitlines()
for model_path, name in ((OUT, os.path.join("fixtures", "gemma-like")), (REAL, "gemma")):
    if not os.path.exists(model_path):
        print(model_path, "not found: skipped")
        continue
    sp = spm.SentencePieceProcessor(model_file=model_path)
    out = []
    for line in lines:
        raw = bytes.fromhex(line.lstrip("!"))
        ids = sp.encode(raw)  # bytes in: invalid UTF-8 reaches the normalizer as it is
        back = sp.decode(ids).encode("utf-8")
        out.append(("1" if back == raw else "0") + "|" + " ".join(map(str, ids)))
    with open(os.path.join(DATA, name + ".spm.ids"), "w") as f:
        f.write("\n".join(out) + "\n")
    print(name, len(out), "lines")
