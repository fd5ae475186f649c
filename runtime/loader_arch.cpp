// The .ein loader, the architecture block (docs/format.md): the one translation between
// ModelConfig and its on-disk ArchBlock, and the one config check (ranges, consistency and each
// architecture's rules) that the loader, the packer and every model's binding call. Split from
// loader.cpp: loader_internal.h.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "runtime/loader_internal.h"

namespace einfer {

using loader_detail::bad;

namespace {

constexpr int64_t kMaxDim = int64_t{1} << 24;  // any single hyperparameter
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxHeads = 4096;
constexpr int64_t kMaxGroup = 65536;

bool in_range(int64_t v, int64_t lo, int64_t hi) {
  return v >= lo && v <= hi;
}

[[gnu::noinline]] Status inval(const char* message, int64_t have = -1) {
  return make_status(StatusCode::bad_format, message, -1, have);
}

// Every field ModelConfig and ArchBlock share, once: f(config field, block field) in block order.
// Both directions of the translation read this list (the flag bits are kArchFlagFields).
template <typename Config, typename Block, typename F>
void for_each_arch_field(Config& c, Block& a, F f) {
  f(c.arch, a.kind);
  f(c.dim, a.dim);
  f(c.hidden_dim, a.hidden_dim);
  f(c.n_layers, a.n_layers);
  f(c.n_heads, a.n_heads);
  f(c.n_kv_heads, a.n_kv_heads);
  f(c.head_dim, a.head_dim);
  f(c.vocab_size, a.vocab_size);
  f(c.context_length, a.context_length);
  f(c.norm, a.norm);
  f(c.norm_eps, a.norm_eps);
  f(c.activation, a.activation);
  f(c.rope, a.rope);
  f(c.rope_theta, a.rope_theta);
  f(c.weight_dtype, a.weight_dtype);
  f(c.group_size, a.group_size);
  f(c.attention, a.attention);
  f(c.positions, a.positions);
  f(c.pattern_window, a.pattern[0]);
  f(c.pattern_global, a.pattern[1]);
  f(c.pattern_stride, a.pattern[2]);
  f(c.pattern_block, a.pattern[3]);
  f(c.pattern_block_summary, a.pattern[4]);
  f(c.rope_scaling, a.rope_scaling);
  f(c.rope_factor, a.rope_factor);
  f(c.rope_low_freq_factor, a.rope_low_freq);
  f(c.rope_high_freq_factor, a.rope_high_freq);
  f(c.rope_original_context, a.rope_original);
  f(c.sliding_window, a.sliding_window);
  f(c.n_decoder_layers, a.n_decoder_layers);
  f(c.sliding_window_first_layer, a.window_first);
  f(c.family, a.family);  // version 4 from here on
  f(c.embed_scale, a.embed_scale);
  f(c.attn_scale, a.attn_scale);
  f(c.attn_softcap, a.attn_softcap);
  f(c.final_softcap, a.final_softcap);
  f(c.sliding_window_period, a.window_period);
  f(c.rope_local_theta, a.rope_local_theta);
  f(c.rope_attn_factor, a.rope_attn_factor);
  f(c.pooling, a.pooling);
  f(c.type_vocab_size, a.type_vocab);
}

// The ModelConfig switches stored as ArchBlock::flags bits.
struct ArchFlagField {
  uint32_t ModelConfig::*field;
  uint32_t bit;
};
constexpr ArchFlagField kArchFlagFields[] = {
    {&ModelConfig::tied_classifier, kArchTiedClassifier},
    {&ModelConfig::has_bias, kArchHasBias},
    {&ModelConfig::norm_first, kArchNormFirst},
    {&ModelConfig::causal, kArchCausal},
    {&ModelConfig::final_norm, kArchFinalNorm},
    {&ModelConfig::qkv_bias, kArchQkvBias},
    {&ModelConfig::rope_freq_factors, kArchRopeFreqFactors},
    {&ModelConfig::qk_norm, kArchQkNorm},
    {&ModelConfig::post_norms, kArchPostNorms},
    {&ModelConfig::normalize, kArchNormalize}};

// `to = from` across the enum <-> uint32_t and equal-type pairs of the two structs.
struct AssignField {
  template <typename To, typename From>
  void operator()(To& to, const From& from) const {
    to = static_cast<To>(from);
  }
};

}  // namespace

ModelConfig config_from_arch_block(const ArchBlock& a) {
  ModelConfig c;
  for_each_arch_field(c, a, AssignField{});
  for (const ArchFlagField& f : kArchFlagFields) c.*f.field = (a.flags & f.bit) ? 1 : 0;
  return c;
}

ArchBlock arch_block_from_config(const ModelConfig& c) {
  ArchBlock a;
  std::memset(&a, 0, sizeof a);
  for_each_arch_field(c, a, [](const auto& from, auto& to) { AssignField{}(to, from); });
  for (const ArchFlagField& f : kArchFlagFields) a.flags |= c.*f.field ? f.bit : 0;
  return a;
}

Status loader_detail::read_arch_block(const FileHeader& h, const unsigned char* img,
                                      ModelConfig* config) {
  // load_model checked h.arch_size against the version: sizeof(ArchBlock) for version 4,
  // kArchBlockBytesV3 before.
  ArchBlock a;
  std::memset(&a, 0, sizeof a);
  std::memcpy(&a, img + h.arch_offset, h.arch_size);  // versions 2, 3: the v4 fields stay zero
  if (h.version == kEinVersion) {
    for (uint8_t b : a.reserved_v4)
      if (b != 0) return bad("reserved arch bytes are not zero");
  } else if (a.flags & ~kArchKnownFlagsV3) {
    return bad("unknown architecture flags", -1, a.flags);
  }
  if (h.version == kEinVersionPrevious) {  // v2: bytes 96..127 and flag bits 5, 6 were reserved
    const unsigned char* v3 = img + h.arch_offset + offsetof(ArchBlock, rope_scaling);
    for (size_t i = 0; i < kArchBlockBytesV3 - offsetof(ArchBlock, rope_scaling); ++i)
      if (v3[i] != 0) return bad("reserved arch bytes are not zero");
    if (a.flags & (kArchQkvBias | kArchRopeFreqFactors))
      return bad("unknown architecture flags", -1, a.flags);
  }
  if (a.flags & ~kArchKnownFlags) return bad("unknown architecture flags", -1, a.flags);
  // Versions 2 and 3 know no bert (its fields are zero there, so the rules below refuse it).
  if (h.version != kEinVersion && a.kind == static_cast<uint32_t>(ArchKind::bert))
    return bad("bert models need format version 4", kEinVersion, h.version);
  const ModelConfig c = config_from_arch_block(a);
  EINFER_TRY(ein_validate_config(c));
  *config = c;
  return ok_status();
}

namespace {

// Issue 19's encoder variants: known kinds, pattern terms in range, one variant at a time.
Status validate_attention_variant(const ModelConfig& c) {
  if (static_cast<uint32_t>(c.attention) > 1) return inval("unknown attention kind");
  if (static_cast<uint32_t>(c.positions) > 1) return inval("unknown positions kind");
  const int32_t terms[5] = {c.pattern_window, c.pattern_global, c.pattern_stride, c.pattern_block,
                            c.pattern_block_summary};
  bool sparse = false;
  for (int32_t t : terms) {
    if (!in_range(t, 0, kMaxDim)) return inval("attention pattern term out of range", t);
    sparse = sparse || t != 0;
  }
  if (c.pattern_block_summary > c.pattern_block)
    return inval("fixed pattern: summary longer than the block", c.pattern_block_summary);
  const bool variant =
      sparse || c.attention != AttentionKind::softmax || c.positions != PositionsKind::none;
  // llama decoders take linear attention (a recurrent state per layer instead of the KV cache) or
  // a causal sparse pattern over the KV cache; positions are an encoder option.
  const bool llama_variant = c.arch == ArchKind::llama && c.positions == PositionsKind::none;
  if (variant && c.arch != ArchKind::encoder && !llama_variant)
    return inval(
        "sinusoidal positions are an encoder option; the encoder-decoder takes no attention "
        "variant");
  if (sparse && c.attention != AttentionKind::softmax)
    return inval("a sparse pattern needs softmax attention");
  if (c.positions == PositionsKind::sinusoidal && c.dim % 2 != 0)
    return inval("sinusoidal positions need an even dim", c.dim);
  return ok_status();
}

// Issue 32's llama-family features (Qwen3, Gemma 2/3, Phi-3); all zero for other models.
Status validate_family_features(const ModelConfig& c) {
  // Unset is +0 exactly; set is finite and > 0 (and far below what a float holds).
  auto off_or_positive = [](float v) {
    return (v == 0.f && !std::signbit(v)) || (std::isfinite(v) && v > 0.f && v < 1e9f);
  };
  if (static_cast<uint32_t>(c.family) >= kArchFamilyCount)
    return inval("unknown model family", static_cast<int64_t>(c.family));
  if (c.qk_norm > 1 || c.post_norms > 1) return inval("boolean flag out of range");
  if (!off_or_positive(c.embed_scale)) return inval("embedding scale must be 0 or > 0");
  if (!off_or_positive(c.attn_scale)) return inval("attention scale must be 0 or > 0");
  if (!off_or_positive(c.attn_softcap) || !off_or_positive(c.final_softcap))
    return inval("soft-capping must be 0 or > 0");
  if (!off_or_positive(c.rope_local_theta)) return inval("local RoPE theta must be 0 or > 0");
  if (c.sliding_window_period != 0 && (!in_range(c.sliding_window_period, 2, kMaxLayers) ||
                                       c.sliding_window == 0 || c.sliding_window_first_layer != 0))
    return inval(
        "sliding window period: 2 or more, with a window, and not with a first windowed layer",
        c.sliding_window_period);
  if (c.rope_local_theta != 0.f && c.sliding_window == 0)
    return inval("a local RoPE theta needs sliding layers (a sliding_window)");
  return ok_status();
}

// Issue 13's llama-family options: RoPE scaling parameters and the trained sliding window.
Status validate_llama_extras(const ModelConfig& c) {
  auto positive = [](float v) { return std::isfinite(v) && v > 0.f && v < 1e9f; };
  auto unset = [](float v) { return v == 0.f && !std::signbit(v); };  // +0.0 exactly
  switch (c.rope_scaling) {
    case RopeScaling::none:
      if (!unset(c.rope_factor) || !unset(c.rope_low_freq_factor) ||
          !unset(c.rope_high_freq_factor) || c.rope_original_context != 0)
        return inval("RoPE scaling parameters set without a scaling type");
      break;
    case RopeScaling::linear:
      if (!positive(c.rope_factor)) return inval("linear RoPE scaling: factor must be > 0");
      break;
    case RopeScaling::llama3:
      if (!positive(c.rope_factor) || !positive(c.rope_low_freq_factor) ||
          !positive(c.rope_high_freq_factor) || !in_range(c.rope_original_context, 1, kMaxDim))
        return inval("llama3 RoPE scaling: factor, low/high_freq_factor, original context > 0");
      if (!(c.rope_high_freq_factor > c.rope_low_freq_factor))
        return inval("llama3 RoPE scaling: high_freq_factor must exceed low_freq_factor");
      break;
    case RopeScaling::longrope:
      // The divisors are the rope_freq_factors (short) and rope_freq_factors_long tensors.
      if (!unset(c.rope_factor) || !unset(c.rope_low_freq_factor) ||
          !unset(c.rope_high_freq_factor))
        return inval("longrope RoPE scaling: no factor or low/high_freq_factor");
      if (c.rope_freq_factors != 1 || !in_range(c.rope_original_context, 1, kMaxDim) ||
          !positive(c.rope_attn_factor))
        return inval(
            "longrope RoPE scaling: frequency factors, original context > 0 and attention factor "
            "> 0");
      break;
    default:
      return inval("unknown RoPE scaling", static_cast<int64_t>(c.rope_scaling));
  }
  if (!in_range(c.sliding_window, 0, kMaxDim)) return inval("sliding_window out of range");
  if (c.sliding_window == 0 ? c.sliding_window_first_layer != 0
                            : !in_range(c.sliding_window_first_layer, 0, c.n_layers - 1))
    return inval("sliding window first layer: 0 without a window, below n_layers with one",
                 c.sliding_window_first_layer);
  if (c.rope_freq_factors > 1) return inval("boolean flag out of range");
  if (c.rope_freq_factors && c.rope_scaling == RopeScaling::llama3)
    return inval("RoPE frequency factors and llama3 scaling both rescale the frequencies");
  if (c.rope_scaling != RopeScaling::longrope && !unset(c.rope_attn_factor))
    return inval("RoPE attention factor set without longrope scaling");
  return validate_family_features(c);
}

// Issue 32's sentence-embedding encoders: the embedding front end and pooling (bert only).
Status validate_bert_options(const ModelConfig& c) {
  if (c.arch != ArchKind::bert) {
    if (c.pooling != PoolingKind::none || c.normalize != 0 || c.type_vocab_size != 0)
      return inval("pooling, normalization and token types are bert options");
    return ok_status();
  }
  if (c.vocab_size == 0 || c.tied_classifier) return inval("bert model without a vocabulary");
  if (c.context_length == 0)
    return inval("bert model without a context length (its position embeddings)");
  if (c.norm != NormKind::layernorm) return inval("bert models use LayerNorm");
  if (c.norm_first || c.causal || c.final_norm)
    return inval("bert models are post-norm and bidirectional, without a final norm");
  if (static_cast<uint32_t>(c.pooling) > 2)
    return inval("unknown pooling kind", static_cast<int64_t>(c.pooling));
  if (c.normalize > 1) return inval("boolean flag out of range");
  if (c.normalize && c.pooling == PoolingKind::none)
    return inval("bert: normalization applies to a pooled vector (no pooling set)");
  if (!in_range(c.type_vocab_size, 0, kMaxDim))
    return inval("token type count out of range", c.type_vocab_size);
  return ok_status();
}

}  // namespace

Status ein_validate_config_for(const ModelConfig& c, bool kind_ok, const char* refusal) {
  if (!kind_ok) return make_status(StatusCode::invalid_argument, refusal);
  return ein_validate_config(c);
}

Status ein_validate_config(const ModelConfig& c) {
  if (c.arch != ArchKind::llama && c.arch != ArchKind::encoder && c.arch != ArchKind::transformer &&
      c.arch != ArchKind::bert)
    return inval("unknown architecture kind", static_cast<int64_t>(c.arch));
  if (c.arch == ArchKind::transformer) {
    if (!in_range(c.n_decoder_layers, 1, kMaxLayers))
      return inval("transformer n_decoder_layers out of range", c.n_decoder_layers);
    if (c.norm != NormKind::layernorm || !c.final_norm)
      return inval("transformer models have LayerNorms and both final norms");
    if (c.causal) return inval("transformer: the encoder is bidirectional, the decoder causal");
  } else if (c.n_decoder_layers != 0) {
    return inval("only transformer models have decoder layers", c.n_decoder_layers);
  }
  if (!in_range(c.dim, 1, kMaxDim)) return inval("dim out of range", c.dim);
  if (!in_range(c.hidden_dim, 1, kMaxDim)) return inval("hidden_dim out of range", c.hidden_dim);
  if (!in_range(c.n_layers, 1, kMaxLayers)) return inval("n_layers out of range", c.n_layers);
  if (!in_range(c.n_heads, 1, kMaxHeads)) return inval("n_heads out of range", c.n_heads);
  if (!in_range(c.n_kv_heads, 1, c.n_heads)) return inval("n_kv_heads out of range", c.n_kv_heads);
  if (c.n_heads % c.n_kv_heads != 0) return inval("n_heads is not a multiple of n_kv_heads");
  if (!in_range(c.head_dim, 1, kMaxDim) || int64_t{c.head_dim} * c.n_heads > kMaxDim)
    return inval("head_dim out of range", c.head_dim);
  if (!in_range(c.vocab_size, 0, kMaxDim)) return inval("vocab_size out of range", c.vocab_size);
  if (!in_range(c.context_length, 0, kMaxDim))
    return inval("context_length out of range", c.context_length);
  if (c.arch == ArchKind::llama) {
    if (c.vocab_size == 0) return inval("llama model without a vocabulary");
    if (c.context_length == 0) return inval("llama model without a context length");
    if (c.activation != Activation::swiglu && c.activation != Activation::geglu_tanh)
      return inval("llama models use the swiglu or geglu_tanh activation");
    if (c.rope == RopeMode::none) return inval("llama models need a RoPE mode");
    if (c.has_bias || c.norm_first || c.causal || c.final_norm)
      return inval("llama models take no encoder flags (bias, norm_first, causal, final_norm)");
    EINFER_TRY(validate_llama_extras(c));
  } else {  // encoder, transformer and bert: PyTorch's layers (bert: token ids in)
    if (c.arch != ArchKind::bert && (c.vocab_size != 0 || c.tied_classifier))
      return inval("encoder models have no vocabulary");
    if (c.activation == Activation::swiglu || c.activation == Activation::geglu_tanh)
      return inval("encoder activation must not be gated (swiglu, geglu_tanh)");
    if (c.rope != RopeMode::none) return inval("encoder models take no RoPE");
    if (c.n_kv_heads != c.n_heads) return inval("encoder key/value heads must equal query heads");
    if (int64_t{c.head_dim} * c.n_heads != c.dim)
      return inval("encoder head_dim * n_heads must equal dim", c.head_dim);
    if (c.qkv_bias || c.rope_scaling != RopeScaling::none || c.sliding_window != 0 ||
        c.rope_freq_factors || c.family != ArchFamily::unspecified || c.qk_norm || c.post_norms ||
        c.embed_scale != 0.f || c.attn_scale != 0.f || c.attn_softcap != 0.f ||
        c.final_softcap != 0.f || c.sliding_window_period != 0 || c.rope_local_theta != 0.f)
      return inval(
          "encoder models take no llama options (qkv_bias, rope_scaling, rope_freq_factors, "
          "sliding_window, family features)");
    EINFER_TRY(validate_llama_extras(c));  // and no RoPE scaling parameters
  }
  if (c.tied_classifier > 1 || c.has_bias > 1 || c.qkv_bias > 1 || c.norm_first > 1 ||
      c.causal > 1 || c.final_norm > 1)
    return inval("boolean flag out of range");
  EINFER_TRY(validate_attention_variant(c));
  EINFER_TRY(validate_bert_options(c));
  if (static_cast<uint32_t>(c.norm) > 1) return inval("unknown norm kind");
  if (!(std::isfinite(c.norm_eps) && c.norm_eps > 0.f && c.norm_eps < 1.f))
    return inval("norm epsilon out of range");
  if (static_cast<uint32_t>(c.activation) > 4) return inval("unknown activation");
  if (static_cast<uint32_t>(c.rope) > 2) return inval("unknown RoPE mode");
  if (c.rope != RopeMode::none) {
    if (!(std::isfinite(c.rope_theta) && c.rope_theta > 0.f))
      return inval("RoPE theta out of range");
    if (c.head_dim % 2 != 0) return inval("RoPE needs an even head_dim", c.head_dim);
  }
  switch (c.weight_dtype) {
    case DType::f32:
    case DType::f16:
    case DType::bf16:
      if (c.group_size != 0) return inval("group size set for an unquantized weight dtype");
      break;
    case DType::q8:
    case DType::q4:
      if (!in_range(c.group_size, 1, kMaxGroup))
        return inval("group size out of range", c.group_size);
      break;
    default:
      // GGUF block types (whole-model "natural" type of a packed GGUF file): scales live in the
      // blocks, so no group size.
      if (!dtype_is_gguf_block(c.weight_dtype))
        return inval("unsupported weight dtype", static_cast<int64_t>(c.weight_dtype));
      if (c.group_size != 0) return inval("group size set for a GGUF block weight dtype");
      break;
  }
  return ok_status();
}

}  // namespace einfer
