#!/usr/bin/env python3
"""Expected token ids for tests/test_tokenizer.cpp, from an independent Python encoder.

A plain transcription of llama2.c's encode (run.c) over bytes, written for this project: dummy
prefix " " before non-empty text, one lookup per UTF-8 code point (at most 4 bytes) with byte
fallback (id = byte + 3), then repeated merging of the best-scoring adjacent pair (leftmost on
ties, scores above -1e10 only). A repeated piece maps to its lowest id.

Usage: /usr/bin/python3 tests/gen/gen_tokenizer_vectors.py [tok512-aidreams.bin] [out.txt]
Output: one case per line: "<prompt as hex, '-' if empty>\t<bos 0/1>\t<eos 0/1>\t<ids...>".
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS_DIR = os.environ.get("EINFER_SHARED_MODELS_DIR", os.path.join(ROOT, "..", "shared", "models"))
DEFAULT_TOKENIZER = os.path.join(MODELS_DIR, "tok512-aidreams.bin")
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "tokenizer", "aidreams_expected.txt")


def load(path, vocab_size=512):
    data = open(path, "rb").read()
    (max_len,) = struct.unpack_from("<i", data, 0)
    off = 4
    pieces, scores = [], []
    for _ in range(vocab_size):
        score, n = struct.unpack_from("<fi", data, off)
        off += 8
        pieces.append(data[off:off + n])
        scores.append(score)
        off += n
    assert off == len(data), "unexpected trailing bytes"
    lookup = {}
    for i, p in enumerate(pieces):
        lookup.setdefault(p, i)
    return pieces, scores, lookup, max_len


def encode(tok, text, bos, eos):
    pieces, scores, lookup, _ = tok
    tokens = []
    if bos:
        tokens.append(1)
    if text:
        tokens.append(lookup.get(b" ", 3 + 32))
    i = 0
    while i < len(text):
        j = i + 1
        while j < len(text) and j - i < 4 and (text[j] & 0xC0) == 0x80:
            j += 1
        chunk = text[i:j]
        if chunk in lookup:
            tokens.append(lookup[chunk])
        else:
            tokens.extend(b + 3 for b in chunk)
        i = j
    while True:
        best_score, best_id, best_idx = -1e10, -1, -1
        for k in range(len(tokens) - 1):
            merged = pieces[tokens[k]] + pieces[tokens[k + 1]]
            cand = lookup.get(merged, -1)
            if cand != -1 and scores[cand] > best_score:
                best_score, best_id, best_idx = scores[cand], cand, k
        if best_idx == -1:
            break
        tokens[best_idx:best_idx + 2] = [best_id]
    if eos:
        tokens.append(2)
    return tokens


def decode(tok, prev, token):
    piece = tok[0][token]
    if prev == 1 and piece.startswith(b" "):
        piece = piece[1:]
    if len(piece) == 6 and piece.startswith(b"<0x") and piece.endswith(b">"):
        try:
            return bytes([int(piece[3:5], 16)])
        except ValueError:
            pass
    return piece


PROMPTS = [
    ("", True, False),
    ("", False, False),
    ("a", True, False),
    ("Hello world", True, False),
    ("Echoes of vectors unfold, a gentle hum of precision", True, False),
    ("Hello, world! How's it going? (fine; thanks.)", True, True),
    ("two  spaces and   three", True, False),
    ("   leading and trailing   ", False, False),
    ("café ☕", True, False),
    ("naïve façade — 日本語 🙂", True, True),
    ("line one\nline two\n\ttabbed\r\n", True, False),
    ("1234567890 +-*/= <0x41> <s>", True, False),
    ("The dreamer drifts through circuits of light, sensing the quiet pulse of data as it "
     "flows between the nodes, a gentle hum of precision in the dark.", True, True),
    ("λμε° ö", False, True),
    ("\x01\x7f bytes", True, False),
]


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_TOKENIZER
    out = sys.argv[2] if len(sys.argv) > 2 else DEFAULT_OUT
    tok = load(path)
    lines = []
    for text, bos, eos in PROMPTS:
        raw = text.encode("utf-8")
        ids = encode(tok, raw, bos, eos)
        # Self-check of the reference: decoding gives the text back (the BOS rule drops the
        # dummy-prefix space; without BOS it stays as a leading space).
        body = [i for i in ids if i not in (1, 2)]
        dec = b"".join(decode(tok, 1 if bos and k == 0 else (body[k - 1] if k else 0), t)
                       for k, t in enumerate(body))
        assert dec == (raw if bos or not raw else b" " + raw), (text, dec)
        lines.append("%s\t%d\t%d\t%s" % (raw.hex() or "-", bos, eos, " ".join(map(str, ids))))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %d cases to %s" % (len(lines), out))


if __name__ == "__main__":
    main()
