// The PyTorch encoder-decoder (nn.Transformer state dicts): an encoder stack exactly like
// arch_encoder's with its final norm ("encoder.norm"), then decoder layers (nn.TransformerDecoder-
// Layer) with masked self-attention, cross-attention to the encoder memory (multihead_attn) and the
// feed-forward, and the decoder's final norm ("decoder.norm"). Per-layer names hold "{}" for the
// layer index within their own stack: in the .ein file, decoder layer i is layer n_layers + i.
// Configuration comes from the tensor shapes and the safetensors metadata, as for the encoder.
#include "models/arch/arch.h"

namespace einfer {

namespace {

#define EINFER_TORCH_LAYER(stack)                                                                \
  {TensorRole::attn_norm, nullptr, nullptr, stack ".layers.{}.norm1.weight", 0, 1, 0},           \
      {TensorRole::attn_norm_bias, nullptr, nullptr, stack ".layers.{}.norm1.bias", 0, 1, 0},    \
      {TensorRole::wq, nullptr, nullptr, stack ".layers.{}.self_attn.in_proj_weight", 0, 3, 0},  \
      {TensorRole::wk, nullptr, nullptr, stack ".layers.{}.self_attn.in_proj_weight", 1, 3, 0},  \
      {TensorRole::wv, nullptr, nullptr, stack ".layers.{}.self_attn.in_proj_weight", 2, 3, 0},  \
      {TensorRole::wo, nullptr, nullptr, stack ".layers.{}.self_attn.out_proj.weight", 0, 1, 0}, \
      {TensorRole::bq, nullptr, nullptr, stack ".layers.{}.self_attn.in_proj_bias", 0, 3, 0},    \
      {TensorRole::bk, nullptr, nullptr, stack ".layers.{}.self_attn.in_proj_bias", 1, 3, 0},    \
      {TensorRole::bv, nullptr, nullptr, stack ".layers.{}.self_attn.in_proj_bias", 2, 3, 0},    \
      {TensorRole::bo, nullptr, nullptr, stack ".layers.{}.self_attn.out_proj.bias", 0, 1, 0},   \
      {TensorRole::w1, nullptr, nullptr, stack ".layers.{}.linear1.weight", 0, 1, 0},            \
      {TensorRole::w2, nullptr, nullptr, stack ".layers.{}.linear2.weight", 0, 1, 0},            \
      {TensorRole::b1, nullptr, nullptr, stack ".layers.{}.linear1.bias", 0, 1, 0}, {            \
    TensorRole::b2, nullptr, nullptr, stack ".layers.{}.linear2.bias", 0, 1, 0                   \
  }

constexpr ArchTensorNames kTensors[] = {
    // Encoder layers (norm2 is the feed-forward's norm).
    EINFER_TORCH_LAYER("encoder"),
    {TensorRole::ffn_norm, nullptr, nullptr, "encoder.layers.{}.norm2.weight", 0, 1, 0},
    {TensorRole::ffn_norm_bias, nullptr, nullptr, "encoder.layers.{}.norm2.bias", 0, 1, 0},
    // Decoder layers: norm2 goes with the cross-attention, norm3 with the feed-forward.
    EINFER_TORCH_LAYER("decoder"),
    {TensorRole::cross_norm, nullptr, nullptr, "decoder.layers.{}.norm2.weight", 0, 1, 0},
    {TensorRole::cross_norm_bias, nullptr, nullptr, "decoder.layers.{}.norm2.bias", 0, 1, 0},
    {TensorRole::ffn_norm, nullptr, nullptr, "decoder.layers.{}.norm3.weight", 0, 1, 0},
    {TensorRole::ffn_norm_bias, nullptr, nullptr, "decoder.layers.{}.norm3.bias", 0, 1, 0},
    {TensorRole::cross_wq, nullptr, nullptr, "decoder.layers.{}.multihead_attn.in_proj_weight", 0,
     3, 0},
    {TensorRole::cross_wk, nullptr, nullptr, "decoder.layers.{}.multihead_attn.in_proj_weight", 1,
     3, 0},
    {TensorRole::cross_wv, nullptr, nullptr, "decoder.layers.{}.multihead_attn.in_proj_weight", 2,
     3, 0},
    {TensorRole::cross_wo, nullptr, nullptr, "decoder.layers.{}.multihead_attn.out_proj.weight", 0,
     1, 0},
    {TensorRole::cross_bq, nullptr, nullptr, "decoder.layers.{}.multihead_attn.in_proj_bias", 0, 3,
     0},
    {TensorRole::cross_bk, nullptr, nullptr, "decoder.layers.{}.multihead_attn.in_proj_bias", 1, 3,
     0},
    {TensorRole::cross_bv, nullptr, nullptr, "decoder.layers.{}.multihead_attn.in_proj_bias", 2, 3,
     0},
    {TensorRole::cross_bo, nullptr, nullptr, "decoder.layers.{}.multihead_attn.out_proj.bias", 0, 1,
     0},
    // After the stacks.
    {TensorRole::final_norm, nullptr, nullptr, "encoder.norm.weight", 0, 1, 0},
    {TensorRole::final_norm_bias, nullptr, nullptr, "encoder.norm.bias", 0, 1, 0},
    {TensorRole::decoder_norm, nullptr, nullptr, "decoder.norm.weight", 0, 1, 0},
    {TensorRole::decoder_norm_bias, nullptr, nullptr, "decoder.norm.bias", 0, 1, 0},
};
#undef EINFER_TORCH_LAYER

constexpr ArchDescription kTransformer = {
    ArchKind::transformer,
    "transformer",
    NormKind::layernorm,
    Activation::relu,  // the default; gelu from the metadata or --activation
    RopeMode::none,
    kTensors,
    sizeof kTensors / sizeof kTensors[0],
    nullptr,
    0,
    nullptr,
    0,
    nullptr,
    0,
    nullptr,
    nullptr,
    RopeMode::none,
    0,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    0,
    nullptr,
};

}  // namespace

const ArchDescription& arch_transformer() {
  return kTransformer;
}

bool arch_names_decoder_layer(const ArchTensorNames& names) {
  const char* p = names.torch;
  const char* decoder = "decoder.layers.";
  if (p == nullptr) return false;
  for (; *decoder != '\0'; ++p, ++decoder)
    if (*p != *decoder) return false;
  return true;
}

}  // namespace einfer
