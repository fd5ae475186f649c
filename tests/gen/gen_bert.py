#!/usr/bin/python3
"""Issue 32 BERT sentence encoders: tiny random-weight Hugging Face folders and a GGUF, with float64
references of the token states and sentence embeddings.

Writes tests/data/bert/. Run with /usr/bin/python3 (numpy); the GGUF is written with llama.cpp's
gguf-py from the scratch checkout (never vendored). Deterministic (fixed seed).

forward() below is written from the transformers source (models/bert/modeling_bert.py) and
sentence-transformers' modules (models/Pooling.py, models/Normalize.py):
  - BertEmbeddings: word_embeddings[ids] + token_type_embeddings[0] (token_type_ids default to
    zeros), + position_embeddings[0 .. n-1] (position_embedding_type "absolute"), LayerNorm (eps
    layer_norm_eps; nn.LayerNorm: biased variance, eps inside the square root).
  - BertLayer: BertSelfAttention (query/key/value Linear with bias, heads of hidden / heads,
    scores q.k / sqrt(head), the extended attention mask of one unpadded sequence adds 0, softmax
    over the keys, context), BertSelfOutput LayerNorm(dense(context) + input), BertIntermediate
    ACT2FN[hidden_act] (gelu: erf form; gelu_new / gelu_pytorch_tanh: the tanh approximation),
    BertOutput LayerNorm(dense(intermediate) + attention output): post-LN.
  - The token states are the last hidden state (sentence-transformers' token_embeddings; the
    pooler is not used).
  - Pooling: mean of token_embeddings * attention_mask over the mask's sum (all ones for one
    sequence), or token_embeddings[:, 0] for pooling_mode_cls_token.
  - Normalize: F.normalize(p=2): x / max(|x|_2, 1e-12).

Cases (each folder: config.json, model.safetensors, modules.json, 1_Pooling/config.json):
  hf_bert        mean pooling + Normalize, gelu, type_vocab_size 2, eps 1e-12
  hf_bert_cls    CLS pooling, no Normalize, "bert."-prefixed names with LayerNorm gamma/beta,
                 gelu_new (tanh), eps 1e-5, type_vocab_size 3
  hf_bert_plain  no modules.json nor 1_Pooling (mean, not normalized), float16 weights
  hf_bert_text   the real vocabulary's size (30522 rows, float16 word embeddings), 40 positions,
                 the committed bert-mini tokenizer and sentence_bert_config.json: the texts of
                 tests/data/tokenizer/corpus.txt with the ids Hugging Face tokenizers gives for the
                 fixture (fixtures/bert-mini.hf.ids) and for the real all-MiniLM-L6-v2 tokenizer
                 (minilm.hf.ids), [CLS] first and [SEP] last, truncated to 40 as
                 sentence-transformers truncates (first 39 tokens, the last one [SEP])
  gguf_bert.gguf llama.cpp's "bert" as convert_hf_to_gguf.py BertModel writes it (token_embd,
                 token_types, position_embd, token_embd_norm, blk.N.attn_q/k/v/output(+_norm),
                 ffn_up/down, layer_output_norm; pooling_type mean; the fixture vocabulary in the
                 converter's phantom-space form: "▁word", continuations without "##", [X] kept),
                 with the references einfer's GGUF import means: transformers' semantics (erf GELU)
                 and L2 normalization (llama-embedding's default; GGUF does not record Normalize).
  bad_gguf_*.gguf one-layer GGUFs einfer refuses: pooling_type 4 (rank), attention.causal true.
Reference files per case: <name>.ids.i32 ([count, len_0 .. len_count-1, ids ...]),
<name>.tokens.f32 (the token states of every sequence, [sum len, hidden]), <name>.embed.f32 (the
sentence embeddings, [count, hidden]); <name>_q8w.* and _q4w.* the same on weights rounded as a
--dtype q8 / q4 --group 8 pack rounds them (groups of 8 along the input, scale max|w| / 127 or 7,
values rounded to integers); hf_bert_text
writes <name>.fixture.* and <name>.minilm.* for the two tokenizers (sentence embeddings only).

Negative controls: `--off FEATURE[,FEATURE]` writes every reference with those features removed from
the reference (not from the model files) under the usual names; the C++ tests then run against
them and must fail. FEATURES: token_types (no token-type row), embed_norm (no embedding
LayerNorm), post_ln (pre-LN order instead), gelu_kind (erf and tanh swapped), pooling (mean and
CLS swapped), normalize (no L2 normalization). Without --off the real references are written and
each feature's effect is printed (the largest change relative to each vector's scale), which must
exceed the test tolerance (1e-4) many times over for the control to mean anything.

  /usr/bin/python3 tests/gen/gen_bert.py [--off FEATURE,...] [--fuzz-seeds] [--llamacpp DIR]
"""
import json
import math
import os
import re
import sys

import numpy as np

import reference_cli
import safetensors_writer as st

GGUF_PY = "/work/scratch/llama.cpp/gguf-py"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "bert")
TOKDATA = os.path.join(HERE, "..", "data", "tokenizer")
SCRATCH_MINILM = os.path.join(HERE, "..", "..", "..", "scratch", "tok", "minilm")
FEATURES = ["token_types", "embed_norm", "post_ln", "gelu_kind", "pooling", "normalize"]
OFF = set()
QUANT_GROUP = 8
SPM = "\u2581"


# ---- the reference -------------------------------------------------------------------------------

def layernorm(x, w, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


_erf = np.vectorize(math.erf)


def gelu_erf(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def activation(name):
    tanh = name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast")
    if "gelu_kind" in OFF:
        tanh = not tanh
    return gelu_tanh if tanh else gelu_erf


def forward(w, cfg, pooling, normalize, ids):
    """w: float64 arrays by the canonical HF names (no "bert." prefix, LayerNorm weight/bias).
    Returns (token states [n, hidden], sentence embedding [hidden])."""
    H, L = cfg["num_attention_heads"], cfg["num_hidden_layers"]
    d = cfg["hidden_size"]
    hd = d // H
    eps = cfg.get("layer_norm_eps", 1e-12)
    act = activation(cfg.get("hidden_act", "gelu"))
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids]
    if "token_types" not in OFF:
        x = x + w["embeddings.token_type_embeddings.weight"][0]
    x = x + w["embeddings.position_embeddings.weight"][:n]
    if "embed_norm" not in OFF:
        x = layernorm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    pre = "post_ln" in OFF
    for l in range(L):
        p = f"encoder.layer.{l}."
        ln1 = (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        ln2 = (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        h = layernorm(x, *ln1, eps) if pre else x
        proj = {}
        for k in ("query", "key", "value"):
            proj[k] = (h @ w[p + f"attention.self.{k}.weight"].T +
                       w[p + f"attention.self.{k}.bias"]).reshape(n, H, hd).transpose(1, 0, 2)
        scores = proj["query"] @ proj["key"].transpose(0, 2, 1) / math.sqrt(hd)  # [H, n, n]
        scores = scores - scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        ctx = (probs @ proj["value"]).transpose(1, 0, 2).reshape(n, d)
        a = ctx @ w[p + "attention.output.dense.weight"].T + w[p + "attention.output.dense.bias"]
        x = x + a if pre else layernorm(x + a, *ln1, eps)
        h = layernorm(x, *ln2, eps) if pre else x
        inter = act(h @ w[p + "intermediate.dense.weight"].T + w[p + "intermediate.dense.bias"])
        f = inter @ w[p + "output.dense.weight"].T + w[p + "output.dense.bias"]
        x = x + f if pre else layernorm(x + f, *ln2, eps)
    if "pooling" in OFF:
        pooling = "cls" if pooling == "mean" else "mean"
    pooled = x.mean(axis=0) if pooling == "mean" else x[0].copy()
    if normalize and "normalize" not in OFF:
        pooled = pooled / max(np.sqrt((pooled ** 2).sum()), 1e-12)
    return x, pooled


# ---- model files ---------------------------------------------------------------------------------

def make_weights(rng, cfg, word_scale=1.0):
    d, f, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]

    def rnd(*shape, scale=0.5):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    w = {"embeddings.word_embeddings.weight": rnd(cfg["vocab_size"], d, scale=word_scale),
         "embeddings.position_embeddings.weight": rnd(cfg["max_position_embeddings"], d),
         "embeddings.token_type_embeddings.weight": rnd(cfg["type_vocab_size"], d),
         "embeddings.LayerNorm.weight": 1 + rnd(d, scale=0.2),
         "embeddings.LayerNorm.bias": rnd(d, scale=0.2)}
    for l in range(L):
        p = f"encoder.layer.{l}."
        for k in ("query", "key", "value"):
            w[p + f"attention.self.{k}.weight"] = rnd(d, d, scale=d ** -0.5 * (2 if k != "value" else 1))
            w[p + f"attention.self.{k}.bias"] = rnd(d, scale=0.3)
        w[p + "attention.output.dense.weight"] = rnd(d, d, scale=d ** -0.5)
        w[p + "attention.output.dense.bias"] = rnd(d, scale=0.3)
        w[p + "attention.output.LayerNorm.weight"] = 1 + rnd(d, scale=0.2)
        w[p + "attention.output.LayerNorm.bias"] = rnd(d, scale=0.2)
        w[p + "intermediate.dense.weight"] = rnd(f, d, scale=d ** -0.5 * 2)
        w[p + "intermediate.dense.bias"] = rnd(f, scale=0.3)
        w[p + "output.dense.weight"] = rnd(d, f, scale=f ** -0.5)
        w[p + "output.dense.bias"] = rnd(d, scale=0.3)
        w[p + "output.LayerNorm.weight"] = 1 + rnd(d, scale=0.2)
        w[p + "output.LayerNorm.bias"] = rnd(d, scale=0.2)
    # The pooler sentence-transformers does not use (BertModel has it; einfer ignores it).
    w["pooler.dense.weight"] = rnd(d, d, scale=d ** -0.5)
    w["pooler.dense.bias"] = rnd(d, scale=0.3)
    return w


def base_config(**extra):
    cfg = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 32,
           "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "vocab_size": 96, "max_position_embeddings": 48, "type_vocab_size": 2,
           "layer_norm_eps": 1e-12, "hidden_act": "gelu", "position_embedding_type": "absolute",
           "pad_token_id": 0, "torch_dtype": "float32", "attention_probs_dropout_prob": 0.1,
           "hidden_dropout_prob": 0.1, "initializer_range": 0.02}
    cfg.update(extra)
    return cfg


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def pooling_config(d, pooling):
    return {"word_embedding_dimension": d, "pooling_mode_cls_token": pooling == "cls",
            "pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False}


def modules_json(normalize):
    m = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
         {"idx": 1, "name": "1", "path": "1_Pooling",
          "type": "sentence_transformers.models.Pooling"}]
    if normalize:  # sentence-transformers saves Normalize with no files: git keeps no folder
        m.append({"idx": 2, "name": "2", "path": "2_Normalize",
                  "type": "sentence_transformers.models.Normalize"})
    return m


def write_folder(name, cfg, w, dtypes, pooling, normalize, modules=True, rename=None):
    """dtypes: safetensors dtype per name (default F32). rename: stored name for each canonical
    one. Returns the float64 weights a reader gets back (after F16 rounding)."""
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    write_json(os.path.join(folder, "config.json"), cfg)
    rename = rename or (lambda k: k)
    st.write(os.path.join(folder, "model.safetensors"),
             [(rename(k), a, dtypes.get(k, "F32")) for k, a in w.items()], {"format": "pt"})
    if modules:
        write_json(os.path.join(folder, "modules.json"), modules_json(normalize))
        write_json(os.path.join(folder, "1_Pooling", "config.json"),
                   pooling_config(cfg["hidden_size"], pooling))
    return {k: st.stored(a, dtypes.get(k, "F32")).astype(np.float64) for k, a in w.items()}


def quant_rows(a, levels):
    """A matrix as einfer's q8 (levels 127) or q4 (levels 7) with group QUANT_GROUP stores it: per
    group scale max|w| / levels, values round(w / scale) (kernels/quant.cpp quantize_row_q8/_q4)."""
    rows, cols = a.shape
    g = a.reshape(rows, cols // QUANT_GROUP, QUANT_GROUP).astype(np.float32)
    scale = (np.abs(g).max(axis=-1, keepdims=True) / np.float32(levels)).astype(np.float32)
    q = np.where(scale > 0, np.round(g / np.where(scale > 0, scale, 1)), 0)
    return (q * scale).reshape(rows, cols)


MATRICES = ("word_embeddings", "query.weight", "key.weight", "value.weight", "dense.weight")


def quant_weights(w, levels):
    return {k: (quant_rows(v, levels).astype(np.float64)
                if v.ndim == 2 and any(m in k for m in MATRICES) and "pooler" not in k else v)
            for k, v in w.items()}


# ---- references ----------------------------------------------------------------------------------

EFFECTS = {}


def references(w, cfg, pooling, normalize, seqs):
    tokens, embeds = [], []
    for ids in seqs:
        x, e = forward(w, cfg, pooling, normalize, np.asarray(ids))
        tokens.append(x)
        embeds.append(e)
    return np.concatenate(tokens), np.stack(embeds)


def save_refs(stem, seqs, tokens, embeds):
    head = [len(seqs)] + [len(s) for s in seqs]
    ids = np.concatenate([np.asarray(head)] + [np.asarray(s) for s in seqs])
    np.ascontiguousarray(ids, dtype="<i4").tofile(os.path.join(OUT, stem + ".ids.i32"))
    if tokens is not None:
        np.ascontiguousarray(tokens, dtype="<f4").tofile(os.path.join(OUT, stem + ".tokens.f32"))
    np.ascontiguousarray(embeds, dtype="<f4").tofile(os.path.join(OUT, stem + ".embed.f32"))


def record_effects(stem, w, cfg, pooling, normalize, seqs, base_embeds):
    global OFF
    for f in FEATURES:
        OFF = {f}
        _, e = references(w, cfg, pooling, normalize, seqs)
        scale = np.maximum(np.abs(base_embeds).max(axis=1, keepdims=True), 1e-30)
        EFFECTS.setdefault(f, []).append((stem, float((np.abs(e - base_embeds) / scale).max())))
    OFF = set()


def case(stem, w, cfg, pooling, normalize, seqs, quantized=False, token_states=True):
    tokens, embeds = references(w, cfg, pooling, normalize, seqs)
    save_refs(stem, seqs, tokens if token_states else None, embeds)
    if quantized:  # the references of --dtype q8 / q4 --group 8 packs' weights
        for suffix, levels in (("_q8w", 127), ("_q4w", 7)):
            save_refs(stem + suffix, seqs,
                      *references(quant_weights(w, levels), cfg, pooling, normalize, seqs))
    if not OFF:
        record_effects(stem, w, cfg, pooling, normalize, seqs, embeds)


def random_seqs(rng, vocab, lengths):
    return [rng.integers(0, vocab, n).tolist() for n in lengths]


def corpus_seqs(ids_file, cls, sep, max_len):
    """[CLS] ids [SEP] of every valid corpus line, truncated to max_len as HF truncation does."""
    seqs = []
    for line in open(os.path.join(TOKDATA, ids_file)).read().split("\n"):
        if "|" not in line:
            continue  # "-": invalid UTF-8, not a text
        ids = [int(t) for t in line.split("|")[1].split()]
        seqs.append([cls] + ids[:max_len - 2] + [sep])
    return seqs


# ---- GGUF (llama.cpp's converter) ----------------------------------------------------------------

GGUF_NAMES = {"embeddings.word_embeddings.weight": "token_embd.weight",
              "embeddings.position_embeddings.weight": "position_embd.weight",
              "embeddings.token_type_embeddings.weight": "token_types.weight",
              "embeddings.LayerNorm.weight": "token_embd_norm.weight",
              "embeddings.LayerNorm.bias": "token_embd_norm.bias"}
GGUF_LAYER = {"attention.self.query": "attn_q", "attention.self.key": "attn_k",
              "attention.self.value": "attn_v", "attention.output.dense": "attn_output",
              "attention.output.LayerNorm": "attn_output_norm", "intermediate.dense": "ffn_up",
              "output.dense": "ffn_down", "output.LayerNorm": "layer_output_norm"}


def gguf_name(k):
    """llama.cpp's name of a BertModel tensor: the embeddings' own, else blk.N.<module>.<kind>."""
    m = re.fullmatch(r"encoder\.layer\.(\d+)\.(.+)\.(weight|bias)", k)
    return GGUF_NAMES[k] if m is None else f"blk.{m[1]}.{GGUF_LAYER[m[2]]}.{m[3]}"


def phantom(tok):
    """convert_hf_to_gguf.py BertModel.set_vocab: the WPM vocabulary's spelling."""
    if tok.startswith("[") and tok.endswith("]"):
        return tok
    if tok.startswith("##"):
        return tok[2:]
    return SPM + tok


def write_gguf(path, cfg, w, vocab, special, pooling_type, f16=(), causal=False):
    """vocab: the pieces by id (vocab.txt spelling); special: {"unk": id, ...} as SpecialVocab
    finds them (no cls handler: the converter writes none); f16: names stored as F16."""
    sys.path.insert(0, GGUF_PY)
    import gguf  # llama.cpp's writer, from the scratch checkout only
    wr = gguf.GGUFWriter(path, "bert")
    wr.add_block_count(cfg["num_hidden_layers"])
    wr.add_context_length(cfg["max_position_embeddings"])
    wr.add_embedding_length(cfg["hidden_size"])
    wr.add_feed_forward_length(cfg["intermediate_size"])
    wr.add_head_count(cfg["num_attention_heads"])
    wr.add_layer_norm_eps(cfg["layer_norm_eps"])
    wr.add_file_type(1 if f16 else 0)
    wr.add_causal_attention(causal)
    # add_pooling_type knows NONE, MEAN, CLS only; llama.cpp also has 3 (last) and 4 (rank).
    wr.add_uint32(gguf.Keys.LLM.POOLING_TYPE.format(arch="bert"), pooling_type)
    wr.add_token_type_count(cfg["type_vocab_size"])
    wr.add_tokenizer_model("bert")
    wr.add_tokenizer_pre("bert-bge")
    wr.add_token_list([phantom(t) for t in vocab])
    types = [gguf.TokenType.CONTROL if t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
             else gguf.TokenType.NORMAL for t in vocab]
    wr.add_token_types(types)
    for kind, tid in special.items():
        getattr(wr, f"add_{kind}_token_id")(tid)
    for k, a in w.items():
        if k.startswith("pooler."):
            continue  # the converter drops the pooler
        dt = np.float16 if k in f16 else np.float32
        wr.add_tensor(gguf_name(k), np.ascontiguousarray(a, dtype=dt))
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()


def bert_mini_vocab():
    tok = json.load(open(os.path.join(TOKDATA, "fixtures", "bert-mini.json")))
    vocab = tok["model"]["vocab"]
    return [p for p, _ in sorted(vocab.items(), key=lambda x: x[1])]


# ---- main ----------------------------------------------------------------------------------------

def main():
    global OFF
    args, OFF = reference_cli.parse(
        FEATURES, "instead: write the fuzz seeds (tests/fuzz/corpus: hf_bert, gguf, tokenizer_file, "
        "loader, capi)", "instead: write the llama.cpp comparison's GGUF and HF folder into DIR",
        fuzz_takes_dir=False)
    if args.llamacpp:
        return write_llamacpp(args.llamacpp)
    if args.fuzz_seeds:
        return write_fuzz_seeds()
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261128)

    # Mean pooling + Normalize; sequences of 1, 9 and 48 (the whole position table) tokens.
    cfg = base_config()
    w = make_weights(rng, cfg)
    seqs = random_seqs(rng, cfg["vocab_size"], [1, 9, 48])
    sw = write_folder("hf_bert", cfg, w, {}, "mean", True)
    case("hf_bert", sw, cfg, "mean", True, seqs, quantized=True)

    # CLS pooling, no Normalize; names as BertForMaskedLM stores them ("bert." prefix, TF-era
    # LayerNorm gamma/beta), the tanh GELU, eps 1e-5, three token types.
    cfg = base_config(hidden_act="gelu_new", layer_norm_eps=1e-5, type_vocab_size=3,
                      architectures=["BertForMaskedLM"])
    w = make_weights(rng, cfg)

    def masked_lm_name(k):
        k = k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias",
                                                                     "LayerNorm.beta")
        return "bert." + k
    seqs = random_seqs(rng, cfg["vocab_size"], [2, 17, 33])
    sw = write_folder("hf_bert_cls", cfg, w, {}, "cls", False, rename=masked_lm_name)
    case("hf_bert_cls", sw, cfg, "cls", False, seqs, quantized=True)

    # A plain BertModel folder in float16: sentence-transformers' default mean pooling.
    cfg = base_config(torch_dtype="float16")
    w = make_weights(rng, cfg)
    seqs = random_seqs(rng, cfg["vocab_size"], [5, 30])
    sw = write_folder("hf_bert_plain", cfg, w, {k: "F16" for k in w}, "mean", False,
                      modules=False)
    case("hf_bert_plain", sw, cfg, "mean", False, seqs)

    # The real vocabulary's size, the committed fixture tokenizer, texts end to end.
    cfg = base_config(hidden_size=8, intermediate_size=16, num_attention_heads=2,
                      vocab_size=30522, max_position_embeddings=40)
    w = make_weights(rng, cfg)
    sw = write_folder("hf_bert_text", cfg, w, {"embeddings.word_embeddings.weight": "F16"}, "mean",
                      True)
    # The tokenizer files (model files come out the same with --off; only references change).
    folder = os.path.join(OUT, "hf_bert_text")
    tok = json.load(open(os.path.join(TOKDATA, "fixtures", "bert-mini.json")))
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    write_json(os.path.join(folder, "tokenizer_config.json"),
               {"do_lower_case": True, "unk_token": "[UNK]", "sep_token": "[SEP]",
                "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]",
                "tokenize_chinese_chars": True, "strip_accents": None,
                "model_max_length": 512, "tokenizer_class": "BertTokenizer"})
    write_json(os.path.join(folder, "sentence_bert_config.json"),
               {"max_seq_length": 40, "do_lower_case": False})
    case("hf_bert_text.fixture", sw, cfg, "mean", True, corpus_seqs("fixtures/bert-mini.hf.ids", 2, 3, 40),
         token_states=False)
    case("hf_bert_text.minilm", sw, cfg, "mean", True, corpus_seqs("minilm.hf.ids", 101, 102, 40),
         token_states=False)

    # GGUF: the fixture vocabulary, F16 token embeddings (as --outtype f16 would store them).
    vocab = bert_mini_vocab()
    cfg = base_config(hidden_size=16, intermediate_size=32, num_attention_heads=2,
                      vocab_size=len(vocab), max_position_embeddings=40)
    w = make_weights(rng, cfg)
    f16 = {"embeddings.word_embeddings.weight"}
    write_gguf(os.path.join(OUT, "gguf_bert.gguf"), cfg, w, vocab,
               {"unk": vocab.index("[UNK]"), "sep": vocab.index("[SEP]"),
                "pad": vocab.index("[PAD]"), "mask": vocab.index("[MASK]")}, 1, f16)
    sw = {k: st.stored(a, "F16" if k in f16 else "F32").astype(np.float64) for k, a in w.items()}
    seqs = corpus_seqs("fixtures/bert-mini.hf.ids", vocab.index("[CLS]"), vocab.index("[SEP]"), 40)
    case("gguf_bert", sw, cfg, "mean", True, seqs)

    # Refusals: llama.cpp pooling types einfer does not run, a causal bert.
    small = base_config(hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                        num_attention_heads=2, vocab_size=len(TINY_VOCAB),
                        max_position_embeddings=12)
    sw_small = make_weights(rng, small)
    tok_ids = {"unk": 1, "sep": 3}
    write_gguf(os.path.join(OUT, "bad_gguf_rank.gguf"), small, sw_small, TINY_VOCAB, tok_ids, 4)
    write_gguf(os.path.join(OUT, "bad_gguf_causal.gguf"), small, sw_small, TINY_VOCAB, tok_ids, 1,
               causal=True)

    if not OFF:
        for f, cases in EFFECTS.items():
            print(f"{f:12s} " + "  ".join(f"{c} {e:.3g}" for c, e in cases))


FUZZ = os.path.join(HERE, "..", "fuzz", "corpus")
TINY_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", ",",
              ".", "##s", "##ing", "run", "a", "b", "c", "##a", "##b", "hello", "world", "!", "?"]


def write_fuzz_seeds():
    """One-layer models of a few hundred bytes: hf_bert inputs (config.json NUL modules.json NUL
    1_Pooling/config.json NUL model.safetensors, as fuzz_importers.cpp splits them), a bert GGUF
    with a 24-token vocabulary (for fuzz_gguf and fuzz_tokenizer_file), and a capi stream that
    selects the bert model ('B') and embeds ids, token states and texts."""
    import tempfile
    rng = np.random.default_rng(5)
    vocab = TINY_VOCAB
    cfg = base_config(hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                      num_attention_heads=2, vocab_size=len(vocab), max_position_embeddings=12)
    w = make_weights(rng, cfg)
    for name, pooling, normalize, rename in (("bert_mean", "mean", True, None),
                                             ("bert_cls_prefixed", "cls", False,
                                              lambda k: "bert." + k)):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.safetensors")
            st.write(path, [((rename or (lambda k: k))(k), a, "F32") for k, a in w.items()])
            tensors = open(path, "rb").read()
        parts = [json.dumps(cfg).encode(), json.dumps(modules_json(normalize)).encode(),
                 json.dumps(pooling_config(8, pooling)).encode(), tensors]
        os.makedirs(os.path.join(FUZZ, "hf_bert"), exist_ok=True)
        with open(os.path.join(FUZZ, "hf_bert", name + ".bin"), "wb") as f:
            f.write(b"\0".join(parts))
    for sub in ("gguf", "tokenizer_file"):
        os.makedirs(os.path.join(FUZZ, sub), exist_ok=True)
        write_gguf(os.path.join(FUZZ, sub, "bert_tiny.gguf"), cfg, w, vocab,
                   {"unk": 1, "sep": 3, "pad": 0, "mask": 4}, 2)
    # capi: 'B', the options' bytes (context 0, no window, no sinks, f32 KV, batch 0, tokenizer 1,
    # max_prompt_bytes 40, greedy, a 4-byte seed), then fuzz_capi's case 9 three ways (ids
    # embedded, token states, a text), each: the case byte, n, 40 ids (a byte < 240, then the id),
    # which; then a text's length and bytes.
    opts = bytes([0, 0, 0, 0, 0, 1, 40, 0, 1, 2, 3, 4])

    def ids40(ids):
        return b"".join(bytes([0, i]) for i in (ids + [0] * 40)[:40])
    embed_ids = bytes([9, 0, 5]) + ids40([2, 5, 6, 7, 3]) + bytes([0])
    embed_tokens = bytes([9, 0, 4]) + ids40([2, 20, 21, 3]) + bytes([1])
    embed_text = bytes([9, 0, 1]) + ids40([]) + bytes([10, 9]) + b"hello cat"
    with open(os.path.join(FUZZ, "capi", "bert_embed.bin"), "wb") as f:
        f.write(b"B" + opts + embed_ids + embed_tokens + embed_text + bytes([10]))
    # The loader's seed is this GGUF packed (not written here: einfer-pack makes it):
    #   einfer-pack tests/fuzz/corpus/gguf/bert_tiny.gguf --dtype q8 --group 8 \
    #     -o tests/fuzz/corpus/loader/bert_q8_tok.bin
    print("fuzz seeds written")


def write_llamacpp(out):
    """A MiniLM-shaped random model (6 layers, 12 heads of 32, 1536 hidden, 512 positions) with
    all-MiniLM-L6-v2's real vocabulary, as a GGUF for llama-embedding and as the HF folder it came
    from (same weights): tools/scripts/compare-llamacpp-bert.sh runs both."""
    rng = np.random.default_rng(7)
    vocab = [l.rstrip("\n") for l in open(os.path.join(SCRATCH_MINILM, "vocab.txt"), encoding="utf-8")]
    cfg = base_config(hidden_size=384, intermediate_size=1536, num_hidden_layers=6,
                      num_attention_heads=12, vocab_size=len(vocab), max_position_embeddings=512)
    w = make_weights(rng, cfg, word_scale=0.5)
    os.makedirs(out, exist_ok=True)
    write_gguf(os.path.join(out, "bert-minilm-random.gguf"), cfg, w, vocab,
               {"unk": 100, "sep": 102, "pad": 0, "mask": 103}, 1)
    global OUT
    OUT = out
    write_folder("hf", cfg, w, {}, "mean", True)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json",
                 "sentence_bert_config.json"):
        with open(os.path.join(SCRATCH_MINILM, name), "rb") as f:
            data = f.read()
        with open(os.path.join(out, "hf", name), "wb") as f:
            f.write(data)
    print("wrote", out)


if __name__ == "__main__":
    main()
