// Expected ids from Hugging Face tokenizers (the npm package `tokenizers`, the official binding of
// the Rust library) for every string of tests/data/tokenizer/corpus.txt, for each shared
// tokenizer.json, without special tokens added. Invalid UTF-8 lines (marked '!') cannot be given
// to the library and get "-". Output tests/data/tokenizer/<name>.hf.ids: "R|ids" per line, R = 1
// when the library decodes the ids back to the exact input.
//   mkdir -p /work/scratch-tok && (cd /work/scratch-tok && npm install tokenizers)
//   NODE_PATH=/work/scratch-tok/node_modules node tests/gen/gen_tokenizer_hf.js
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');

const data = path.join(__dirname, '..', 'data', 'tokenizer');
const shared = path.join(__dirname, '..', '..', '..', 'shared', 'tokenizers');
const lines = fs.readFileSync(path.join(data, 'corpus.txt'), 'utf8').split('\n').filter((l) => l.length > 0 || true);
lines.pop();  // the trailing newline

(async () => {
  for (const name of ['llama2', 'gpt2', 'smollm-135m', 'llama3']) {
    const tok = Tokenizer.fromFile(path.join(shared, name, 'tokenizer.json'));
    tok.disablePadding();
    tok.disableTruncation();
    const out = [];
    for (const line of lines) {
      if (line.startsWith('!')) { out.push('-'); continue; }
      const text = Buffer.from(line, 'hex').toString('utf8');
      const enc = await tok.encode(text, null, { addSpecialTokens: false });
      const ids = Array.from(enc.getIds());
      const back = await tok.decode(ids, false);
      out.push((back === text ? '1' : '0') + '|' + ids.join(' '));
    }
    fs.writeFileSync(path.join(data, name + '.hf.ids'), out.join('\n') + '\n');
    console.log(name, out.length);
  }
})();
