// What Hugging Face tokenizers' normalizers (the npm package `tokenizers`, the official binding
// of the Rust library) make of every Unicode scalar value, and of every code point from U+0300 to
// U+1FFFF between a letter and a combining mark (canonical ordering and composition), as one
// FNV-1a 64 hash per normalizer and set (each output's UTF-8 then a 0xFF byte, in order).
// tests/test_tokenizer_normalize.cpp runs einfer's normalizer over the same sets and compares.
// Output tests/data/tokenizer/normalize.hf.txt: "name count hash" per line.
//   mkdir -p /work/scratch/tok && (cd /work/scratch/tok && npm install tokenizers)
//   NODE_PATH=/work/scratch/tok/node_modules node tests/gen/gen_tokenizer_normalize.js
const fs = require('fs');
const path = require('path');
const t = require('tokenizers');

const bert = (o) => t.bertNormalizer(o);
const single = {
  nfc: t.nfcNormalizer(),
  nfd: t.nfdNormalizer(),
  nfkc: t.nfkcNormalizer(),
  nfkd: t.nfkdNormalizer(),
  lowercase: t.lowercase(),
  strip_accents: t.stripAccentsNormalizer(),
  bert_uncased: bert({ cleanText: true, handleChineseChars: true, stripAccents: true, lowercase: true }),
  bert_cased: bert({ cleanText: true, handleChineseChars: true, stripAccents: false, lowercase: false }),
};

class Fnv {
  constructor() {
    this.h = 0xcbf29ce484222325n;
    this.n = 0;
  }
  add(s) {
    for (const b of Buffer.from(s, 'utf8')) this.byte(b);
    this.byte(0xff);
    ++this.n;
  }
  byte(b) {
    this.h = ((this.h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
}

// Letters added in Unicode 15.0-16.0 that the reference (Rust's char::to_lowercase, Unicode 16)
// lowercases and einfer's tables (Python's Unicode 14.0) do not: left out of the sets that
// lowercase (tests/test_tokenizer_normalize.cpp checks einfer leaves them as they are).
const newerLowercase = [[0x1c89, 0x1c89], [0xa7cb, 0xa7cc], [0xa7ce, 0xa7ce], [0xa7d2, 0xa7d2],
  [0xa7d4, 0xa7d4], [0xa7da, 0xa7da], [0xa7dc, 0xa7dc], [0x10d50, 0x10d65], [0x16ea0, 0x16eb8]];
const lowercases = new Set(['lowercase', 'bert_uncased']);
const newer = (cp) => newerLowercase.some(([a, b]) => cp >= a && cp <= b);

const hashes = {};
const hash = (name) => (hashes[name] = hashes[name] || new Fnv());
for (let cp = 0; cp < 0x110000; ++cp) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const s = String.fromCodePoint(cp);
  for (const name in single)
    if (!(lowercases.has(name) && newer(cp))) hash(name).add(single[name].normalizeString(s));
  hash('nfc_of_nfd').add(single.nfc.normalizeString(single.nfd.normalizeString(s)));
  hash('nfkc_of_nfkd').add(single.nfkc.normalizeString(single.nfkd.normalizeString(s)));
}
for (let cp = 0x300; cp < 0x20000; ++cp) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const c = String.fromCodePoint(cp);
  for (const s of ['a' + c + '\u0301', 'a\u0301' + c, 'a' + c + '\u0316', 'a\u0316' + c])
    for (const name of ['nfc', 'nfd', 'nfkc', 'nfkd']) hash('marks_' + name).add(single[name].normalizeString(s));
}
const lines = Object.keys(hashes).map((k) => `${k} ${hashes[k].n} ${hashes[k].h.toString(16).padStart(16, '0')}`);
const out = path.join(__dirname, '..', 'data', 'tokenizer', 'normalize.hf.txt');
fs.writeFileSync(out, lines.join('\n') + '\n');
console.log(lines.join('\n'));
