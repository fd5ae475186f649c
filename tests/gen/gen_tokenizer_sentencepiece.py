#!/usr/bin/env python3
"""Expected ids from the sentencepiece library (Debian python3-sentencepiece) for every string of
tests/data/tokenizer/corpus.txt, encoded with ../shared/tokenizers/llama2/tokenizer.model
without BOS/EOS. Output tests/data/tokenizer/llama2.spm.ids, one line per corpus line:
"R|ids" where R is 1 when sentencepiece decodes the ids back to the exact input, else 0.
    /usr/bin/python3 tests/gen/gen_tokenizer_sentencepiece.py
"""
import os
import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "tokenizer")
MODEL = os.path.join(HERE, "..", "..", "..", "shared", "tokenizers", "llama2", "tokenizer.model")

sp = spm.SentencePieceProcessor(model_file=MODEL)
out = []
for line in open(os.path.join(DATA, "corpus.txt")).read().splitlines():
    raw = bytes.fromhex(line.lstrip("!"))
    ids = sp.encode(raw)  # bytes in: invalid UTF-8 reaches the normalizer as it is
    back = sp.decode(ids).encode("utf-8")
    out.append(("1" if back == raw else "0") + "|" + " ".join(map(str, ids)))
with open(os.path.join(DATA, "llama2.spm.ids"), "w") as f:
    f.write("\n".join(out) + "\n")
print(len(out), "lines")
