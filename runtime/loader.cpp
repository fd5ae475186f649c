// The .ein loader: validates an image in time proportional to its tensor count (plus one CRC pass
// unless skipped) and fills a Model whose views point into the caller's buffer.
//
// Every read goes through read_at(), which copies bytes out with memcpy after a bounds check, so
// the loader never reads outside [data, data + size) and never depends on field alignment. Offsets
// and sizes are 64-bit and every sum is checked for overflow before use.
//
// Over 600 lines on purpose: the canonical tensor order, the ArchBlock translation and the one
// config check (every architecture's rules) live beside the reader that depends on all three.
#include <cmath>
#include <cstring>

#include "runtime/format.h"
#include "runtime/layout.h"
#include "runtime/model.h"

namespace einfer {

namespace {

constexpr int64_t kMaxDim = int64_t{1} << 24;  // any single hyperparameter
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxHeads = 4096;
constexpr int64_t kMaxGroup = 65536;

Status bad(const char* message, int64_t need = -1, int64_t have = -1, int32_t index = -1) {
  return make_status(StatusCode::bad_format, message, need, have, index);
}

// a + b <= limit without overflow.
bool fits(uint64_t offset, uint64_t bytes, uint64_t limit) {
  return offset <= limit && bytes <= limit - offset;
}

template <typename T>
T read_at(const unsigned char* base, size_t offset) {
  T v;
  std::memcpy(&v, base + offset, sizeof(T));
  return v;
}

bool is_cross_role(TensorRole role) {
  const uint32_t r = static_cast<uint32_t>(role);
  return r >= static_cast<uint32_t>(TensorRole::cross_wq) &&
         r <= static_cast<uint32_t>(TensorRole::cross_norm_bias);
}

// Per-layer roles of `layer` in canonical (role number) order.
int per_layer_roles(const ModelConfig& c, int32_t layer, TensorRole* roles) {
  int n = 0;
  for (uint32_t r = 0; r < kTensorRoleCount; ++r) {
    const TensorRole role = static_cast<TensorRole>(r);
    if (ein_role_per_layer(role) && ein_role_in_layer(c, role, layer)) roles[n++] = role;
  }
  return n;
}

constexpr TensorRole kTrailing[6] = {TensorRole::final_norm,   TensorRole::final_norm_bias,
                                     TensorRole::decoder_norm, TensorRole::decoder_norm_bias,
                                     TensorRole::classifier,   TensorRole::rope_freq_factors};

// Global roles that follow the layers, in canonical order.
int trailing_roles(const ModelConfig& c, TensorRole* roles) {
  int n = 0;
  for (TensorRole role : kTrailing) {
    if (ein_role_present(c, role)) roles[n++] = role;
  }
  return n;
}

// Index of layer `layer`'s first tensor (layer == ein_layer_count: the first trailing one), and
// *per its role count. Encoder (or only) layers come first, all with one role set, then the
// decoder layers with theirs: O(1).
int64_t layer_start(const ModelConfig& c, int32_t layer, int64_t* per) {
  TensorRole roles[kTensorRoleCount];
  const int64_t lead = ein_role_present(c, TensorRole::token_embedding) ? 1 : 0;
  const int64_t p0 = per_layer_roles(c, 0, roles);
  if (layer < c.n_layers || c.n_decoder_layers == 0) {
    *per = p0;
    return lead + p0 * layer;
  }
  const int64_t p1 = per_layer_roles(c, c.n_layers, roles);
  *per = p1;
  return lead + p0 * c.n_layers + p1 * (layer - c.n_layers);
}

// Regions are packed: each starts at the first multiple of 64 at or after the previous region's end
// (the header for the first), so overlaps and gaps are both impossible. Advances *cursor.
enum Region { kData = 0, kScales = 1, kTokenizer = 2, kMetadata = 3 };
constexpr const char* kMisaligned[4] = {
    "tensor data offset not 64-byte aligned", "tensor scales offset not 64-byte aligned",
    "tokenizer offset not 64-byte aligned", "metadata offset not 64-byte aligned"};
constexpr const char* kOverlap[4] = {"tensor data overlaps the header or the previous region",
                                     "tensor scales overlap the tensor's data",
                                     "tokenizer overlaps the tensor data",
                                     "metadata overlaps the previous region"};
constexpr const char* kGap[4] = {"tensor data does not start right after the previous region",
                                 "tensor scales do not start right after the tensor's data",
                                 "tokenizer does not start right after the tensor data",
                                 "metadata does not start right after the previous region"};
constexpr const char* kOutside[4] = {
    "tensor data extends outside the file", "tensor scales extend outside the file",
    "tokenizer extends outside the file", "metadata extends outside the file"};

Status place_region(uint64_t offset, uint64_t bytes, uint64_t file_size, uint64_t* cursor,
                    Region kind, int32_t index) {
  const uint64_t expected = (*cursor + kEinAlignment - 1) / kEinAlignment * kEinAlignment;
  const int64_t have = static_cast<int64_t>(offset > INT64_MAX ? INT64_MAX : offset);
  if (offset % kEinAlignment != 0) return bad(kMisaligned[kind], -1, -1, index);
  if (offset < expected) return bad(kOverlap[kind], static_cast<int64_t>(expected), have, index);
  if (offset > expected) return bad(kGap[kind], static_cast<int64_t>(expected), have, index);
  if (!fits(offset, bytes, file_size))
    return bad(kOutside[kind], static_cast<int64_t>(file_size), -1, index);
  *cursor = offset + bytes;
  return ok_status();
}

bool valid_enum_dtype(uint32_t d) {
  return d <= static_cast<uint32_t>(DType::bf16) || dtype_is_gguf_block(static_cast<DType>(d));
}

bool in_range(int64_t v, int64_t lo, int64_t hi) {
  return v >= lo && v <= hi;
}

}  // namespace

uint32_t ein_header_crc(const unsigned char* image, uint32_t header_size) {
  const size_t field = offsetof(FileHeader, header_crc);
  const unsigned char zero[4] = {0, 0, 0, 0};
  uint32_t crc = crc32_ieee(image, field);
  crc = crc32_ieee(zero, 4, crc);
  return crc32_ieee(image + field + 4, header_size - field - 4, crc);
}

bool ein_role_per_layer(TensorRole role) {
  switch (role) {
    case TensorRole::token_embedding:
    case TensorRole::final_norm:
    case TensorRole::final_norm_bias:
    case TensorRole::classifier:
    case TensorRole::decoder_norm:
    case TensorRole::decoder_norm_bias:
    case TensorRole::rope_freq_factors:
      return false;
    default:
      return true;
  }
}

bool ein_role_is_matrix(TensorRole role) {
  switch (role) {
    case TensorRole::token_embedding:
    case TensorRole::wq:
    case TensorRole::wk:
    case TensorRole::wv:
    case TensorRole::wo:
    case TensorRole::w1:
    case TensorRole::w2:
    case TensorRole::w3:
    case TensorRole::classifier:
    case TensorRole::cross_wq:
    case TensorRole::cross_wk:
    case TensorRole::cross_wv:
    case TensorRole::cross_wo:
      return true;
    default:
      return false;
  }
}

bool ein_role_present(const ModelConfig& c, TensorRole role) {
  const bool layernorm = c.norm == NormKind::layernorm;
  const bool final_norm = c.arch == ArchKind::llama || c.final_norm != 0;
  const bool transformer = c.arch == ArchKind::transformer;
  switch (role) {
    case TensorRole::cross_wq:
    case TensorRole::cross_wk:
    case TensorRole::cross_wv:
    case TensorRole::cross_wo:
    case TensorRole::cross_norm:
    case TensorRole::decoder_norm:
      return transformer;
    case TensorRole::cross_bq:
    case TensorRole::cross_bk:
    case TensorRole::cross_bv:
    case TensorRole::cross_bo:
      return transformer && c.has_bias != 0;
    case TensorRole::cross_norm_bias:
    case TensorRole::decoder_norm_bias:
      return transformer && layernorm;
    case TensorRole::token_embedding:
      return c.vocab_size > 0;
    case TensorRole::attn_norm:
    case TensorRole::ffn_norm:
    case TensorRole::wq:
    case TensorRole::wk:
    case TensorRole::wv:
    case TensorRole::wo:
    case TensorRole::w1:
    case TensorRole::w2:
      return true;
    case TensorRole::attn_norm_bias:
    case TensorRole::ffn_norm_bias:
      return layernorm;
    case TensorRole::bq:
    case TensorRole::bk:
    case TensorRole::bv:
      return c.has_bias != 0 || c.qkv_bias != 0;
    case TensorRole::bo:
    case TensorRole::b1:
    case TensorRole::b2:
      return c.has_bias != 0;
    case TensorRole::w3:
      return c.activation == Activation::swiglu;
    case TensorRole::final_norm:
      return final_norm;
    case TensorRole::final_norm_bias:
      return final_norm && layernorm;
    case TensorRole::classifier:
      return c.vocab_size > 0 && c.tied_classifier == 0;
    case TensorRole::rope_freq_factors:
      return c.arch == ArchKind::llama && c.rope_freq_factors != 0;
  }
  return false;
}

int ein_expected_shape(const ModelConfig& c, TensorRole role, int64_t shape[kEinMaxRank]) {
  if (!ein_role_present(c, role)) return 0;
  const int64_t d = c.dim, f = c.hidden_dim, v = c.vocab_size;
  const int64_t q = int64_t{c.n_heads} * c.head_dim, kv = int64_t{c.n_kv_heads} * c.head_dim;
  auto set = [shape](int64_t a, int64_t b) {
    shape[0] = a;
    shape[1] = b;
    return b < 0 ? 1 : 2;
  };
  switch (role) {
    case TensorRole::token_embedding:
    case TensorRole::classifier:
      return set(v, d);
    case TensorRole::wq:
      return set(q, d);
    case TensorRole::wk:
    case TensorRole::wv:
      return set(kv, d);
    case TensorRole::wo:
      return set(d, q);
    case TensorRole::cross_wq:
    case TensorRole::cross_wk:
    case TensorRole::cross_wv:
    case TensorRole::cross_wo:
      return set(d, d);  // transformer: d == H * k, one kv head per query head
    case TensorRole::w1:
    case TensorRole::w3:
      return set(f, d);
    case TensorRole::w2:
      return set(d, f);
    case TensorRole::bq:
      return set(q, -1);
    case TensorRole::bk:
    case TensorRole::bv:
      return set(kv, -1);
    case TensorRole::b1:
      return set(f, -1);
    case TensorRole::rope_freq_factors:
      return set(c.head_dim / 2, -1);
    default:
      return set(d, -1);  // norms, their biases, bo, b2
  }
}

bool ein_role_in_layer(const ModelConfig& c, TensorRole role, int32_t layer) {
  if (!ein_role_present(c, role)) return false;
  return !is_cross_role(role) || layer >= c.n_layers;
}

int32_t ein_layer_count(const ModelConfig& c) {
  return c.n_layers + c.n_decoder_layers;
}

void ein_canonical_entry(const ModelConfig& c, int64_t index, TensorRole* role, int32_t* layer) {
  const int64_t lead = ein_role_present(c, TensorRole::token_embedding) ? 1 : 0;
  int64_t per = 0;
  const int64_t decoder_start = layer_start(c, c.n_layers, &per);
  const int64_t tail_start = layer_start(c, ein_layer_count(c), &per);
  if (index < lead) {
    *role = TensorRole::token_embedding;
    *layer = -1;
    return;
  }
  TensorRole roles[kTensorRoleCount];
  if (index < tail_start) {
    const bool decoder = index >= decoder_start;
    const int32_t first = decoder ? c.n_layers : 0;
    const int64_t start = decoder ? decoder_start : lead;
    const int64_t p = per_layer_roles(c, first, roles);
    *role = roles[(index - start) % p];
    *layer = first + static_cast<int32_t>((index - start) / p);
    return;
  }
  trailing_roles(c, roles);
  *role = roles[index - tail_start];
  *layer = -1;
}

int64_t ein_expected_tensor_count(const ModelConfig& c) {
  if (!ein_validate_config(c).ok()) return -1;
  TensorRole tail[kTensorRoleCount];
  int64_t per = 0;
  return layer_start(c, ein_layer_count(c), &per) + trailing_roles(c, tail);
}

ModelConfig config_from_arch_block(const ArchBlock& a) {
  ModelConfig c;
  c.arch = static_cast<ArchKind>(a.kind);
  c.dim = a.dim;
  c.hidden_dim = a.hidden_dim;
  c.n_layers = a.n_layers;
  c.n_decoder_layers = a.n_decoder_layers;
  c.n_heads = a.n_heads;
  c.n_kv_heads = a.n_kv_heads;
  c.head_dim = a.head_dim;
  c.vocab_size = a.vocab_size;
  c.context_length = a.context_length;
  c.norm = static_cast<NormKind>(a.norm);
  c.norm_eps = a.norm_eps;
  c.activation = static_cast<Activation>(a.activation);
  c.rope = static_cast<RopeMode>(a.rope);
  c.rope_theta = a.rope_theta;
  c.tied_classifier = (a.flags & kArchTiedClassifier) ? 1 : 0;
  c.has_bias = (a.flags & kArchHasBias) ? 1 : 0;
  c.norm_first = (a.flags & kArchNormFirst) ? 1 : 0;
  c.causal = (a.flags & kArchCausal) ? 1 : 0;
  c.final_norm = (a.flags & kArchFinalNorm) ? 1 : 0;
  c.qkv_bias = (a.flags & kArchQkvBias) ? 1 : 0;
  c.rope_freq_factors = (a.flags & kArchRopeFreqFactors) ? 1 : 0;
  c.rope_scaling = static_cast<RopeScaling>(a.rope_scaling);
  c.rope_factor = a.rope_factor;
  c.rope_low_freq_factor = a.rope_low_freq;
  c.rope_high_freq_factor = a.rope_high_freq;
  c.rope_original_context = a.rope_original;
  c.sliding_window = a.sliding_window;
  c.sliding_window_first_layer = a.window_first;
  c.weight_dtype = static_cast<DType>(a.weight_dtype);
  c.group_size = a.group_size;
  c.attention = static_cast<AttentionKind>(a.attention);
  c.positions = static_cast<PositionsKind>(a.positions);
  c.pattern_window = a.pattern[0];
  c.pattern_global = a.pattern[1];
  c.pattern_stride = a.pattern[2];
  c.pattern_block = a.pattern[3];
  c.pattern_block_summary = a.pattern[4];
  return c;
}

ArchBlock arch_block_from_config(const ModelConfig& c) {
  ArchBlock a;
  std::memset(&a, 0, sizeof a);
  a.kind = static_cast<uint32_t>(c.arch);
  a.dim = c.dim;
  a.hidden_dim = c.hidden_dim;
  a.n_layers = c.n_layers;
  a.n_decoder_layers = c.n_decoder_layers;
  a.n_heads = c.n_heads;
  a.n_kv_heads = c.n_kv_heads;
  a.head_dim = c.head_dim;
  a.vocab_size = c.vocab_size;
  a.context_length = c.context_length;
  a.norm = static_cast<uint32_t>(c.norm);
  a.norm_eps = c.norm_eps;
  a.activation = static_cast<uint32_t>(c.activation);
  a.rope = static_cast<uint32_t>(c.rope);
  a.rope_theta = c.rope_theta;
  a.flags = (c.tied_classifier ? kArchTiedClassifier : 0) | (c.has_bias ? kArchHasBias : 0) |
            (c.norm_first ? kArchNormFirst : 0) | (c.causal ? kArchCausal : 0) |
            (c.final_norm ? kArchFinalNorm : 0) | (c.qkv_bias ? kArchQkvBias : 0) |
            (c.rope_freq_factors ? kArchRopeFreqFactors : 0);
  a.rope_scaling = static_cast<uint32_t>(c.rope_scaling);
  a.rope_factor = c.rope_factor;
  a.rope_low_freq = c.rope_low_freq_factor;
  a.rope_high_freq = c.rope_high_freq_factor;
  a.rope_original = c.rope_original_context;
  a.sliding_window = c.sliding_window;
  a.window_first = c.sliding_window_first_layer;
  a.weight_dtype = static_cast<uint32_t>(c.weight_dtype);
  a.group_size = c.group_size;
  a.attention = static_cast<uint32_t>(c.attention);
  a.positions = static_cast<uint32_t>(c.positions);
  a.pattern[0] = c.pattern_window;
  a.pattern[1] = c.pattern_global;
  a.pattern[2] = c.pattern_stride;
  a.pattern[3] = c.pattern_block;
  a.pattern[4] = c.pattern_block_summary;
  return a;
}

namespace {
// Issue 19's encoder variants: known kinds, pattern terms in range, one variant at a time.
Status validate_attention_variant(const ModelConfig& c) {
  auto inval = [](const char* m, int64_t have = -1) {
    return make_status(StatusCode::bad_format, m, -1, have);
  };
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
// Issue 13's llama-family options: RoPE scaling parameters and the trained sliding window.
Status validate_llama_extras(const ModelConfig& c) {
  auto inval = [](const char* m, int64_t have = -1) {
    return make_status(StatusCode::bad_format, m, -1, have);
  };
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
  return ok_status();
}

}  // namespace

Status ein_validate_config(const ModelConfig& c) {
  auto inval = [](const char* m, int64_t have = -1) {
    return make_status(StatusCode::bad_format, m, -1, have);
  };
  if (c.arch != ArchKind::llama && c.arch != ArchKind::encoder && c.arch != ArchKind::transformer)
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
    if (c.activation != Activation::swiglu) return inval("llama models use the swiglu activation");
    if (c.rope == RopeMode::none) return inval("llama models need a RoPE mode");
    if (c.has_bias || c.norm_first || c.causal || c.final_norm)
      return inval("llama models take no encoder flags (bias, norm_first, causal, final_norm)");
    EINFER_TRY(validate_llama_extras(c));
  } else {  // encoder and transformer: PyTorch's layers
    if (c.vocab_size != 0 || c.tied_classifier) return inval("encoder models have no vocabulary");
    if (c.activation == Activation::swiglu) return inval("encoder activation must not be swiglu");
    if (c.rope != RopeMode::none) return inval("encoder models take no RoPE");
    if (c.n_kv_heads != c.n_heads) return inval("encoder key/value heads must equal query heads");
    if (int64_t{c.head_dim} * c.n_heads != c.dim)
      return inval("encoder head_dim * n_heads must equal dim", c.head_dim);
    if (c.qkv_bias || c.rope_scaling != RopeScaling::none || c.sliding_window != 0 ||
        c.rope_freq_factors)
      return inval(
          "encoder models take no llama options (qkv_bias, rope_scaling, rope_freq_factors, "
          "sliding_window)");
    EINFER_TRY(validate_llama_extras(c));  // and no RoPE scaling parameters
  }
  if (c.tied_classifier > 1 || c.has_bias > 1 || c.qkv_bias > 1 || c.norm_first > 1 ||
      c.causal > 1 || c.final_norm > 1)
    return inval("boolean flag out of range");
  EINFER_TRY(validate_attention_variant(c));
  if (static_cast<uint32_t>(c.norm) > 1) return inval("unknown norm kind");
  if (!(std::isfinite(c.norm_eps) && c.norm_eps > 0.f && c.norm_eps < 1.f))
    return inval("norm epsilon out of range");
  if (static_cast<uint32_t>(c.activation) > 3) return inval("unknown activation");
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

Status load_model(const void* data, size_t size, const LoadOptions& options, Model* model) {
  if (model == nullptr) return make_status(StatusCode::invalid_argument, "model is null");
  *model = Model{};
  if (data == nullptr) return make_status(StatusCode::invalid_argument, "model buffer is null");
  if (reinterpret_cast<uintptr_t>(data) % kEinAlignment != 0)
    return make_status(StatusCode::invalid_argument, "model buffer must be 64-byte aligned");
  const unsigned char* img = static_cast<const unsigned char*>(data);
  const uint64_t size64 = size;  // size_t is 32-bit on Cortex-M
  const int64_t have = static_cast<int64_t>(size64 > INT64_MAX ? INT64_MAX : size64);

  if (size < sizeof(FileHeader)) return bad("file truncated: shorter than the header", 128, have);
  FileHeader h;
  std::memcpy(&h, img, sizeof h);
  if (h.magic != kEinMagic) return bad("not an einfer model (bad magic)");
  // A rows-only build (EINFER_LAYOUTS off, firmware) reads the versions before layouts only.
  constexpr uint32_t kNewest = kLayoutsBuilt ? kEinVersion : kEinVersion3;
  if (h.version != kNewest && h.version != kEinVersion3 && h.version != kEinVersionPrevious)
    return make_status(StatusCode::unsupported, "unsupported format version", kNewest, h.version);
  if (h.file_size > size)
    return bad("file truncated (file_size in header exceeds the buffer)",
               static_cast<int64_t>(h.file_size > INT64_MAX ? INT64_MAX : h.file_size), have);
  const uint64_t file_size = h.file_size;
  if (h.header_size < sizeof(FileHeader) || h.header_size % kEinAlignment != 0 ||
      h.header_size > file_size)
    return bad("header_size out of range or not a multiple of 64", -1, h.header_size);
  if (h.reserved0 != 0) return bad("reserved header field is not zero");
  for (uint8_t b : h.reserved)
    if (b != 0) return bad("reserved header bytes are not zero");
  if (h.flags & ~kEinKnownFlags) return bad("unknown header flags", -1, h.flags);
  if (h.arch_size != sizeof(ArchBlock)) return bad("arch block size mismatch", 128, h.arch_size);
  if (h.tensor_record_size != sizeof(TensorRecord))
    return bad("tensor record size mismatch", 80, h.tensor_record_size);
  if (h.arch_offset < sizeof(FileHeader) || !fits(h.arch_offset, h.arch_size, h.header_size))
    return bad("arch block outside the header", -1, h.arch_offset);
  const uint64_t table_bytes = uint64_t{h.tensor_count} * sizeof(TensorRecord);
  if (h.table_offset < uint64_t{h.arch_offset} + h.arch_size ||
      !fits(h.table_offset, table_bytes, h.header_size))
    return bad("tensor table outside the header or overlapping the arch block", -1, h.table_offset);

  if (options.verify_crc) {
    if (ein_header_crc(img, h.header_size) != h.header_crc) return bad("header CRC mismatch");
    if (crc32_ieee(img + h.header_size, file_size - h.header_size) != h.payload_crc)
      return bad("payload CRC mismatch");
  }

  ArchBlock a;
  std::memcpy(&a, img + h.arch_offset, sizeof a);
  if (h.version == kEinVersionPrevious) {  // v2: bytes 96..127 and flag bits 5, 6 were reserved
    const unsigned char* v3 = img + h.arch_offset + offsetof(ArchBlock, rope_scaling);
    for (size_t i = 0; i < sizeof(ArchBlock) - offsetof(ArchBlock, rope_scaling); ++i)
      if (v3[i] != 0) return bad("reserved arch bytes are not zero");
    if (a.flags & (kArchQkvBias | kArchRopeFreqFactors))
      return bad("unknown architecture flags", -1, a.flags);
  }
  if (a.flags & ~kArchKnownFlags) return bad("unknown architecture flags", -1, a.flags);
  const ModelConfig c = config_from_arch_block(a);
  EINFER_TRY(ein_validate_config(c));

  const int64_t expected = ein_expected_tensor_count(c);
  if (expected != h.tensor_count)
    return bad("tensor count disagrees with the architecture", expected, h.tensor_count);

  uint64_t cursor = h.header_size;  // regions must come in increasing order: no overlaps
  for (uint32_t i = 0; i < h.tensor_count; ++i) {
    const int32_t idx = static_cast<int32_t>(i);
    TensorRecord r;
    std::memcpy(&r, img + h.table_offset + uint64_t{i} * sizeof(TensorRecord), sizeof r);
    TensorRole want_role;
    int32_t want_layer;
    ein_canonical_entry(c, i, &want_role, &want_layer);
    if (r.role != static_cast<uint32_t>(want_role))
      return bad("tensor role out of canonical order", static_cast<int64_t>(want_role), r.role,
                 idx);
    if (r.layer != want_layer)
      return bad("tensor layer out of canonical order", want_layer, r.layer, idx);
    if (r.reserved1 != 0 || (h.version < kEinVersion && r.layout != 0))
      return bad("reserved tensor field is not zero", -1, -1, idx);
    if (r.layout >= kWeightLayoutCount) return bad("unknown tensor layout", -1, r.layout, idx);
    if (!valid_enum_dtype(r.dtype)) return bad("unknown tensor dtype", -1, r.dtype, idx);
    const DType dt = static_cast<DType>(r.dtype);
    const DType want_dt = ein_role_is_matrix(want_role) ? c.weight_dtype : DType::f32;
    // A packed GGUF keeps each matrix's own block type (a Q4_K_M file mixes Q4_K, Q6_K and the
    // fallbacks for rows that are not whole K-blocks), or f32.
    const bool mixed_ok =
        dtype_is_gguf_block(want_dt) && (dtype_is_gguf_block(dt) || dt == DType::f32);
    if (dt != want_dt && !mixed_ok)
      return bad("tensor dtype disagrees with the architecture", static_cast<int64_t>(want_dt),
                 r.dtype, idx);
    int64_t want_shape[kEinMaxRank] = {0, 0, 0, 0};
    const int want_rank = ein_expected_shape(c, want_role, want_shape);
    if (r.rank != static_cast<uint32_t>(want_rank))
      return bad("tensor rank disagrees with the architecture", want_rank, r.rank, idx);
    for (int d = 0; d < static_cast<int>(kEinMaxRank); ++d) {
      const int64_t want = d < want_rank ? want_shape[d] : 0;
      if (r.shape[d] != want)
        return bad("tensor shape disagrees with the architecture", want, r.shape[d], idx);
    }
    // Shapes are bounded by kMaxDim (2^24), so rows * cols fits easily in 64 bits.
    const int64_t cols = want_shape[want_rank - 1];
    const int64_t rows = want_rank == 2 ? want_shape[0] : 1;
    const bool quant = dtype_is_quantized(dt);
    if (dtype_is_gguf_block(dt) && cols % gguf_block_elems(dt) != 0)
      return bad("GGUF block tensor row is not a whole number of blocks", gguf_block_elems(dt),
                 cols, idx);
    // Interleaved layouts (runtime/layout.h): q8/q4 matrices only, scales inside the one region.
    const WeightLayout layout = static_cast<WeightLayout>(r.layout);
    if (layout_interleaved(layout)) {
      const char* why = want_rank == 2 ? layout_fit_error(dt, layout, c.group_size)
                                       : "interleaved layouts hold matrices only";
      if (why != nullptr) return bad(why, -1, r.layout, idx);
    }
    const bool separate_scales = quant && !layout_interleaved(layout);
    const uint64_t want_data = layout_interleaved(layout)
                                   ? layout_data_bytes(dt, layout, rows, cols, c.group_size)
                                   : static_cast<uint64_t>(rows) * quant_row_bytes(dt, cols);
    const uint64_t want_scales =
        separate_scales ? static_cast<uint64_t>(rows) * quant_groups(cols, c.group_size) * 4u : 0u;
    if (r.group_size != static_cast<uint32_t>(quant ? c.group_size : 0))
      return bad("tensor group size disagrees with the architecture", quant ? c.group_size : 0,
                 r.group_size, idx);
    if (r.data_bytes != want_data)
      return bad("tensor byte size disagrees with its shape", static_cast<int64_t>(want_data),
                 static_cast<int64_t>(r.data_bytes > INT64_MAX ? INT64_MAX : r.data_bytes), idx);
    EINFER_TRY(place_region(r.data_offset, r.data_bytes, file_size, &cursor, kData, idx));
    if (separate_scales) {
      if (r.scales_bytes != want_scales)
        return bad("tensor scale bytes disagree with its shape", static_cast<int64_t>(want_scales),
                   static_cast<int64_t>(r.scales_bytes > INT64_MAX ? INT64_MAX : r.scales_bytes),
                   idx);
      EINFER_TRY(place_region(r.scales_offset, r.scales_bytes, file_size, &cursor, kScales, idx));
    } else if (r.scales_offset != 0 || r.scales_bytes != 0) {
      return bad(quant && kLayoutsBuilt ? "interleaved tensor has a separate scale region"
                                        : "unquantized tensor has scales",
                 -1, -1, idx);
    }
  }

  const bool has_tok = (h.flags & kEinFlagTokenizer) != 0;
  const bool has_meta = (h.flags & kEinFlagMetadata) != 0;
  if (has_tok) {
    if (h.tokenizer_bytes == 0) return bad("tokenizer section is empty");
    EINFER_TRY(
        place_region(h.tokenizer_offset, h.tokenizer_bytes, file_size, &cursor, kTokenizer, -1));
  } else if (h.tokenizer_offset != 0 || h.tokenizer_bytes != 0) {
    return bad("tokenizer section set without its flag");
  }
  if (has_meta) {
    if (h.metadata_bytes == 0) return bad("metadata section is empty");
    EINFER_TRY(
        place_region(h.metadata_offset, h.metadata_bytes, file_size, &cursor, kMetadata, -1));
  } else if (h.metadata_offset != 0 || h.metadata_bytes != 0) {
    return bad("metadata section set without its flag");
  }
  if (cursor != file_size)
    return bad("file_size disagrees with the end of the last region", static_cast<int64_t>(cursor),
               static_cast<int64_t>(file_size));

  model->config = c;
  model->image = img;
  model->image_bytes = static_cast<size_t>(file_size);
  model->tensor_table = img + h.table_offset;
  model->tensor_count = h.tensor_count;
  if (has_tok) {
    model->tokenizer = img + h.tokenizer_offset;
    model->tokenizer_bytes = static_cast<size_t>(h.tokenizer_bytes);
  }
  return ok_status();
}

size_t model_weight_bytes(const Model& model) {
  size_t total = 0;
  for (uint32_t i = 0; i < model.tensor_count; ++i) {
    TensorRecord r;
    std::memcpy(&r, static_cast<const unsigned char*>(model.tensor_table) + i * sizeof r, sizeof r);
    total += r.data_bytes + r.scales_bytes;
  }
  return total;
}

Status model_tensor(const Model& model, TensorRole role, int32_t layer, TensorView* out) {
  *out = TensorView{};
  const ModelConfig& c = model.config;
  if (model.tensor_table == nullptr)
    return make_status(StatusCode::invalid_argument, "model not loaded");
  if (static_cast<uint32_t>(role) >= kTensorRoleCount || !ein_role_present(c, role))
    return make_status(StatusCode::out_of_range, "model has no tensor with this role", -1,
                       static_cast<int64_t>(role));
  int64_t index = -1;
  if (ein_role_per_layer(role)) {
    if (layer < 0 || layer >= ein_layer_count(c))
      return make_status(StatusCode::out_of_range, "layer index out of range", ein_layer_count(c),
                         layer);
    TensorRole roles[kTensorRoleCount];
    int64_t per = 0;
    const int64_t start = layer_start(c, layer, &per);
    const int p = per_layer_roles(c, layer, roles);
    for (int i = 0; i < p; ++i)
      if (roles[i] == role) index = start + i;
  } else if (role == TensorRole::token_embedding) {
    index = 0;
  } else {
    TensorRole tail[kTensorRoleCount];
    int64_t per = 0;
    const int64_t start = layer_start(c, ein_layer_count(c), &per);
    const int t = trailing_roles(c, tail);
    for (int i = 0; i < t; ++i)
      if (tail[i] == role) index = start + i;
  }
  if (index < 0 || index >= model.tensor_count)
    return make_status(StatusCode::out_of_range, "model has no tensor with this role");
  TensorRecord r;
  std::memcpy(&r,
              static_cast<const unsigned char*>(model.tensor_table) + index * sizeof(TensorRecord),
              sizeof r);
  int64_t shape[kEinMaxRank];
  for (uint32_t d = 0; d < r.rank; ++d) shape[d] = r.shape[d];
  *out = make_view(static_cast<DType>(r.dtype),
                   const_cast<unsigned char*>(model.image + r.data_offset), shape,
                   static_cast<int>(r.rank));
  if (dtype_is_quantized(out->dtype)) {
    out->layout = static_cast<WeightLayout>(r.layout);
    // Interleaved layouts keep their scales in the blocks: no separate scale pointer.
    if (!layout_interleaved(out->layout))
      out->scales = reinterpret_cast<const float*>(model.image + r.scales_offset);
    out->group_size = static_cast<int32_t>(r.group_size);
  }
  return ok_status();
}

}  // namespace einfer
