// BERT-style sentence-embedding encoders: Hugging Face BertModel folders as sentence-transformers
// ships them (transformers modeling_bert.py; a "bert." prefix, as BertForMaskedLM and friends
// store it, is stripped by the importer) and llama.cpp's GGUF "bert" (llama-model.cpp
// LLM_ARCH_BERT, convert_hf_to_gguf.py BertModel). Word + learned absolute position + token-type
// embeddings, their LayerNorm, then post-norm encoder layers with biases everywhere (the encoder's
// layer: models/encoder.h) and the pooling the model asks for. Defaults are BertConfig's. Neither
// format names key/value heads or a head size: multi-head attention, head size dim / heads (set
// by the importers).
#include "models/arch/arch.h"

namespace einfer {

namespace {

// A row of the table: a tensor the PyTorch state-dict importer never reads.
constexpr ArchTensorNames row(TensorRole role, const char* hf, const char* gguf) {
  return {role, hf, gguf, nullptr, 0, 1, 0};
}
// A layer's linear map or LayerNorm, Hugging Face module `hf` and llama.cpp tensor `gguf`: the
// weight's row, then the bias's.
#define EINFER_BERT_PAIR(weight, bias, hf, gguf)                                       \
  row(TensorRole::weight, "encoder.layer.{}." hf ".weight", "blk.{}." gguf ".weight"), \
      row(TensorRole::bias, "encoder.layer.{}." hf ".bias", "blk.{}." gguf ".bias")

constexpr ArchTensorNames kTensors[] = {
    row(TensorRole::token_embedding, "embeddings.word_embeddings.weight", "token_embd.weight"),
    row(TensorRole::position_embedding, "embeddings.position_embeddings.weight",
        "position_embd.weight"),
    row(TensorRole::token_type_embedding, "embeddings.token_type_embeddings.weight",
        "token_types.weight"),
    row(TensorRole::embed_norm, "embeddings.LayerNorm.weight", "token_embd_norm.weight"),
    row(TensorRole::embed_norm_bias, "embeddings.LayerNorm.bias", "token_embd_norm.bias"),
    EINFER_BERT_PAIR(wq, bq, "attention.self.query", "attn_q"),
    EINFER_BERT_PAIR(wk, bk, "attention.self.key", "attn_k"),
    EINFER_BERT_PAIR(wv, bv, "attention.self.value", "attn_v"),
    EINFER_BERT_PAIR(wo, bo, "attention.output.dense", "attn_output"),
    // Post-norm: the norm after the attention's residual add, then the one after the FFN's.
    EINFER_BERT_PAIR(attn_norm, attn_norm_bias, "attention.output.LayerNorm", "attn_output_norm"),
    EINFER_BERT_PAIR(w1, b1, "intermediate.dense", "ffn_up"),
    EINFER_BERT_PAIR(w2, b2, "output.dense", "ffn_down"),
    EINFER_BERT_PAIR(ffn_norm, ffn_norm_bias, "output.LayerNorm", "layer_output_norm"),
};

constexpr ArchConfigKey kConfigKeys[] = {
    EINFER_ARCH_SIZE_KEYS,
    {ArchField::norm_eps, "layer_norm_eps", "{}.attention.layer_norm_epsilon", kConst, 1e-12, kReq,
     0},
    // The position embedding's rows.
    {ArchField::context_length, "max_position_embeddings", "{}.context_length", kConst, 512, kReq,
     0},
    // GGUF: the rows of token_embd.weight (read by the importer from the tensor table).
    {ArchField::vocab_size, "vocab_size", nullptr, kConst, 30522, kReq, 0},
    // llama.cpp sizes token_types.weight by this key (absent: 0 rows, which it cannot load).
    {ArchField::type_vocab_size, "type_vocab_size", "tokenizer.ggml.token_type_count", kConst, 2,
     kReq, 0},
};

// Decoder and cross-attention BERTs are not sentence encoders.
constexpr const char* kBertRefused[] = {"is_decoder", "add_cross_attention", nullptr};

constexpr ArchDescription kBert = {
    ArchKind::bert,
    "bert",
    NormKind::layernorm,
    Activation::gelu_erf,  // hidden_act "gelu"; the importer maps the others it runs
    RopeMode::none,
    kTensors,
    sizeof kTensors / sizeof kTensors[0],
    kConfigKeys,
    sizeof kConfigKeys / sizeof kConfigKeys[0],
    nullptr,
    0,
    nullptr,
    0,
    "bert",
    "bert",
    RopeMode::none,
    0,
    kBertRefused,
    nullptr,
    nullptr,
    nullptr,
    0,
    nullptr,
};

}  // namespace

const ArchDescription& arch_bert() {
  return kBert;
}

}  // namespace einfer
