#!/usr/bin/env python3
"""Writes tests/data/tokenizer/corpus.txt: the strings every tokenizer test encodes, one per line
as hex of their UTF-8 bytes (so newlines, NULs and invalid UTF-8 survive). Hand-picked cases
first, then seeded random mixtures of fragments; invalid UTF-8 lines are marked with a leading
'!' (only references that accept bytes -- sentencepiece -- see them).
    python3 tests/gen/gen_tokenizer_corpus.py
Then run gen_tokenizer_sentencepiece.py and gen_tokenizer_hf.js for the expected ids."""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "tokenizer", "corpus.txt")

picked = [
    "", " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\n ", "  \n\n  x", "a", "A", "hello",
    "Hello world", " Hello world", "Hello  world", "Hello\tworld", "Hello\nworld", "hello world\n",
    "Once upon a time, there was a little girl named Lily.",
    "I'm don't you'll we've they're she'd it's", "I'M DON'T YOU'LL WE'VE", "'s 't 're 've 'm 'll 'd",
    "rock'n'roll", "''''", "' s", "'sup", "1", "12", "123", "1234", "12345678901234567890",
    "3.14159", "1,000,000", "$100.00", "-42", "1e-5", "0x1F", "v1.2.3", "2024-01-31",
    "Hello, world! How are you?", "...", "!!!", "?!?!", "(a+b)*c", "a->b", "x == y", "i++;",
    "def f(x):\n    return x * 2\n", "int main() { return 0; }\n", "for (int i = 0; i < n; ++i) {",
    "    indented\n\tTabbed\n", "<html><body>Hi</body></html>", "{\"key\": [1, 2, 3]}",
    "https://example.com/path?q=1&r=2", "user@example.com", "C:\\Users\\me", "#include <stdio.h>",
    "日本語のテキスト", "中文字符串测试", "한국어 텍스트", "こんにちは、世界！", "Привет, мир!",
    "Γειά σου Κόσμε", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก",
    "😀", "😀😃😄", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷🇩🇪", "a😀b", " 😀 ", "🦙 llama", "𝕳𝖊𝖑𝖑𝖔", "𠀀𠀁",
    "e\u0301", "ne\u0301e\u0301", "a\u0308o\u0308u\u0308", "\u0915\u094d\u0937", "Z\u0351\u036b\u0343",
    "café", "naïve", "Straße", "ﬁ ligature", "Ⅻ ① ½ ²", "٣٤٥ ๑๒", "１２３ ＡＢＣ",
    "\u00a0nbsp\u00a0", "\u3000ideographic space", "line\u2028sep", "zero\u200bwidth", "\u2581x",
    "x\u2581\u2581y", "\u2581", "tab\t\ttab", "\r", "\r\r\n\n", "a\n\n\nb", "  leading", "trailing  ",
    "multiple     spaces     here", " \t \n ", "\x00", "a\x00b", "\x7f\x01\x1f",
    "<s>", "</s>", "<unk>", "<s>Hello</s>", "a <s> b", "<|endoftext|>", "x<|endoftext|>y",
    "<|endoftext|><|endoftext|>", "<|im_start|>user\nHi<|im_end|>\n", "<|begin_of_text|>Hi",
    "<|eot_id|>", "<|start_header_id|>system<|end_header_id|>\n\n", "<|endoftext", "<|", "<",
    "<0x41>", "<0xZZ>", "▁▁▁", "ÿþ", "\u0100\u0120", "Ġhello", "Ċ",
    "The quick brown fox jumps over the lazy dog.", "THE QUICK BROWN FOX",
    "supercalifragilisticexpialidocious", "antidisestablishmentarianism",
    "a" * 100, " " * 33 + "x", "ab" * 40, "1" * 50, "\n" * 10, "😀" * 12,
    "Mixed: English, 日本語, 123, émoji 🎉, and code `x += 1`.",
]

frags = [
    "the", " the", "The", " cat", "dog", " running", "ran", "'s", "'t", "'ll", "n't", " I", "'M",
    " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "0", "7", "42", "123", "2024", "3.5",
    ",", ".", "!", "?", ";", ":", "-", "--", "...", "(", ")", "[", "]", "{", "}", "\"", "'", "`",
    "+", "=", "==", "->", "/", "\\", "#", "@", "$", "%", "&", "*", "_", "__init__", "<", ">",
    "é", "ü", "ß", "ø", "日本", "語", "中文", "한", "Ж", "λ", "ع", "א", "न", "ก", "😀", "🚀",
    "👍🏽", "e\u0301", "\u0308", "\u00a0", "\u3000", "\u2581", "①", "½", "١٢", "ｘ", "𝕏",
    "foo", "Bar", "BAZ", "camelCase", "snake_case", "x1", "y2z", "http", "://", "www", ".com",
    "<s>", "</s>", "<|endoftext|>", "<|im_start|>", "<|eot_id|>", "<|im_end|>", "<0x0A>",
]

rng = random.Random(12)
lines = [s.encode("utf-8").hex() for s in picked]
for _ in range(260):
    n = rng.randint(1, 14)
    s = "".join(rng.choice(frags) for _ in range(n))
    lines.append(s.encode("utf-8").hex())
invalid = [b"\xff", b"ab\xffc", b"\xc3", b"x\xc3", b"\xc3(", b"\xe2\x82", b"\xe2\x82x",
           b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xc0\xaf", b"\x80\x80", b"hi \xfe\xfe there",
           b"\xf5\x80\x80\x80", b"caf\xe9", b"\xef\xbb\xbfBOM"]
for _ in range(25):
    s = "".join(rng.choice(frags) for _ in range(rng.randint(1, 6))).encode("utf-8")
    cut = rng.randint(0, len(s))
    invalid.append(s[:cut] + bytes([rng.choice([0x80, 0xbf, 0xc2, 0xe0, 0xf0, 0xff])]) + s[cut:])
lines += ["!" + b.hex() for b in invalid]
with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")
print(len(lines), "strings ->", OUT)
