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

constexpr ArchTensorNames kTensors[] = {
    {TensorRole::token_embedding, "embeddings.word_embeddings.weight", "token_embd.weight", nullptr,
     0, 1, 0},
    {TensorRole::position_embedding, "embeddings.position_embeddings.weight",
     "position_embd.weight", nullptr, 0, 1, 0},
    {TensorRole::token_type_embedding, "embeddings.token_type_embeddings.weight",
     "token_types.weight", nullptr, 0, 1, 0},
    {TensorRole::embed_norm, "embeddings.LayerNorm.weight", "token_embd_norm.weight", nullptr, 0, 1,
     0},
    {TensorRole::embed_norm_bias, "embeddings.LayerNorm.bias", "token_embd_norm.bias", nullptr, 0,
     1, 0},
    {TensorRole::wq, "encoder.layer.{}.attention.self.query.weight", "blk.{}.attn_q.weight",
     nullptr, 0, 1, 0},
    {TensorRole::bq, "encoder.layer.{}.attention.self.query.bias", "blk.{}.attn_q.bias", nullptr, 0,
     1, 0},
    {TensorRole::wk, "encoder.layer.{}.attention.self.key.weight", "blk.{}.attn_k.weight", nullptr,
     0, 1, 0},
    {TensorRole::bk, "encoder.layer.{}.attention.self.key.bias", "blk.{}.attn_k.bias", nullptr, 0,
     1, 0},
    {TensorRole::wv, "encoder.layer.{}.attention.self.value.weight", "blk.{}.attn_v.weight",
     nullptr, 0, 1, 0},
    {TensorRole::bv, "encoder.layer.{}.attention.self.value.bias", "blk.{}.attn_v.bias", nullptr, 0,
     1, 0},
    {TensorRole::wo, "encoder.layer.{}.attention.output.dense.weight", "blk.{}.attn_output.weight",
     nullptr, 0, 1, 0},
    {TensorRole::bo, "encoder.layer.{}.attention.output.dense.bias", "blk.{}.attn_output.bias",
     nullptr, 0, 1, 0},
    // Post-norm: the norm after the attention's residual add, then the one after the FFN's.
    {TensorRole::attn_norm, "encoder.layer.{}.attention.output.LayerNorm.weight",
     "blk.{}.attn_output_norm.weight", nullptr, 0, 1, 0},
    {TensorRole::attn_norm_bias, "encoder.layer.{}.attention.output.LayerNorm.bias",
     "blk.{}.attn_output_norm.bias", nullptr, 0, 1, 0},
    {TensorRole::w1, "encoder.layer.{}.intermediate.dense.weight", "blk.{}.ffn_up.weight", nullptr,
     0, 1, 0},
    {TensorRole::b1, "encoder.layer.{}.intermediate.dense.bias", "blk.{}.ffn_up.bias", nullptr, 0,
     1, 0},
    {TensorRole::w2, "encoder.layer.{}.output.dense.weight", "blk.{}.ffn_down.weight", nullptr, 0,
     1, 0},
    {TensorRole::b2, "encoder.layer.{}.output.dense.bias", "blk.{}.ffn_down.bias", nullptr, 0, 1,
     0},
    {TensorRole::ffn_norm, "encoder.layer.{}.output.LayerNorm.weight",
     "blk.{}.layer_output_norm.weight", nullptr, 0, 1, 0},
    {TensorRole::ffn_norm_bias, "encoder.layer.{}.output.LayerNorm.bias",
     "blk.{}.layer_output_norm.bias", nullptr, 0, 1, 0},
};

constexpr ArchDefault kReq = ArchDefault::required;
constexpr ArchDefault kConst = ArchDefault::constant;
constexpr ArchConfigKey kConfigKeys[] = {
    {ArchField::dim, "hidden_size", "{}.embedding_length", kReq, 0, kReq, 0},
    {ArchField::hidden_dim, "intermediate_size", "{}.feed_forward_length", kReq, 0, kReq, 0},
    {ArchField::n_layers, "num_hidden_layers", "{}.block_count", kReq, 0, kReq, 0},
    {ArchField::n_heads, "num_attention_heads", "{}.attention.head_count", kReq, 0, kReq, 0},
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
