// The .ein loader, the tensor records (docs/format.md): the canonical order every architecture's
// table follows, each role's expected shape and dtype, and the check of every record against
// them; model_tensor() finds a tensor by that order in O(1). Split from loader.cpp:
// loader_internal.h.
#include <cstring>

#include "runtime/loader_internal.h"

namespace einfer {

using loader_detail::bad;

namespace {

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

constexpr TensorRole kTrailing[11] = {TensorRole::final_norm,
                                      TensorRole::final_norm_bias,
                                      TensorRole::decoder_norm,
                                      TensorRole::decoder_norm_bias,
                                      TensorRole::classifier,
                                      TensorRole::rope_freq_factors,
                                      TensorRole::rope_freq_factors_long,
                                      TensorRole::position_embedding,
                                      TensorRole::token_type_embedding,
                                      TensorRole::embed_norm,
                                      TensorRole::embed_norm_bias};

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

// The roles stored in weight_dtype (matrices), as a bit mask (kTensorRoleCount <= 64).
static_assert(kTensorRoleCount <= 64);
constexpr uint64_t role_bit(TensorRole role) {
  return uint64_t{1} << static_cast<uint32_t>(role);
}
constexpr uint64_t kMatrixRoles =
    role_bit(TensorRole::token_embedding) | role_bit(TensorRole::wq) | role_bit(TensorRole::wk) |
    role_bit(TensorRole::wv) | role_bit(TensorRole::wo) | role_bit(TensorRole::w1) |
    role_bit(TensorRole::w2) | role_bit(TensorRole::w3) | role_bit(TensorRole::classifier) |
    role_bit(TensorRole::cross_wq) | role_bit(TensorRole::cross_wk) |
    role_bit(TensorRole::cross_wv) | role_bit(TensorRole::cross_wo);
constexpr bool in_role_set(uint64_t set, TensorRole role) {
  const uint32_t r = static_cast<uint32_t>(role);
  return r < 64 && ((set >> r) & 1) != 0;
}

bool valid_enum_dtype(uint32_t d) {
  return d <= static_cast<uint32_t>(DType::bf16) || dtype_is_gguf_block(static_cast<DType>(d));
}

}  // namespace

bool ein_role_per_layer(TensorRole role) {
  switch (role) {
    case TensorRole::token_embedding:
    case TensorRole::final_norm:
    case TensorRole::final_norm_bias:
    case TensorRole::classifier:
    case TensorRole::decoder_norm:
    case TensorRole::decoder_norm_bias:
    case TensorRole::rope_freq_factors:
    case TensorRole::rope_freq_factors_long:
    case TensorRole::position_embedding:
    case TensorRole::token_type_embedding:
    case TensorRole::embed_norm:
    case TensorRole::embed_norm_bias:
      return false;
    default:
      return true;
  }
}

bool ein_role_is_matrix(TensorRole role) {
  return in_role_set(kMatrixRoles, role);
}

bool ein_role_present(const ModelConfig& c, TensorRole role) {
  const bool layernorm = c.norm == NormKind::layernorm;
  const bool final_norm = c.arch == ArchKind::llama || c.final_norm != 0;
  const bool transformer = c.arch == ArchKind::transformer;
  const bool llama = c.arch == ArchKind::llama;
  const bool bert = c.arch == ArchKind::bert;
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
      return c.activation == Activation::swiglu || c.activation == Activation::geglu_tanh;
    case TensorRole::final_norm:
      return final_norm;
    case TensorRole::final_norm_bias:
      return final_norm && layernorm;
    case TensorRole::classifier:
      return c.vocab_size > 0 && c.tied_classifier == 0 && !bert;
    case TensorRole::rope_freq_factors:
      return llama && c.rope_freq_factors != 0;
    case TensorRole::rope_freq_factors_long:
      return llama && c.rope_scaling == RopeScaling::longrope;
    case TensorRole::q_norm:
    case TensorRole::k_norm:
      return llama && c.qk_norm != 0;
    case TensorRole::attn_post_norm:
    case TensorRole::ffn_post_norm:
      return llama && c.post_norms != 0;
    case TensorRole::position_embedding:
    case TensorRole::embed_norm:
    case TensorRole::embed_norm_bias:
      return bert;
    case TensorRole::token_type_embedding:
      return bert && c.type_vocab_size > 0;
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
    case TensorRole::rope_freq_factors_long:
      return set(c.head_dim / 2, -1);
    case TensorRole::q_norm:
    case TensorRole::k_norm:
      return set(c.head_dim, -1);
    case TensorRole::position_embedding:
      return set(c.context_length, d);
    case TensorRole::token_type_embedding:
      return set(c.type_vocab_size, d);
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

Status loader_detail::check_tensor_records(const FileHeader& h, const unsigned char* img,
                                           const ModelConfig& c, uint64_t* cursor) {
  const uint64_t file_size = h.file_size;
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
    // A rows-only build (EINFER_LAYOUTS off, firmware) knows the rows layout alone.
    if (r.layout >= (kLayoutsBuilt ? kWeightLayoutCount : 1u))
      return bad("unknown tensor layout", -1, r.layout, idx);
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
    // Shapes are bounded by the config check (2^24, loader_arch.cpp), so rows * cols fits easily in
    // 64 bits.
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
    EINFER_TRY(loader_detail::place_region(r.data_offset, r.data_bytes, file_size, cursor,
                                           loader_detail::kData, idx));
    if (separate_scales) {
      if (r.scales_bytes != want_scales)
        return bad("tensor scale bytes disagree with its shape", static_cast<int64_t>(want_scales),
                   static_cast<int64_t>(r.scales_bytes > INT64_MAX ? INT64_MAX : r.scales_bytes),
                   idx);
      EINFER_TRY(loader_detail::place_region(r.scales_offset, r.scales_bytes, file_size, cursor,
                                             loader_detail::kScales, idx));
    } else if (r.scales_offset != 0 || r.scales_bytes != 0) {
      return bad((quant || layout_interleaved(layout)) && kLayoutsBuilt
                     ? "interleaved tensor has a separate scale region"
                     : "unquantized tensor has scales",
                 -1, -1, idx);
    }
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

Status model_tensor_shaped(const Model& model, TensorRole role, int32_t layer, int64_t d0,
                           int64_t d1, const char* message, TensorView* out) {
  EINFER_TRY(model_tensor(model, role, layer, out));
  const bool shape_ok = d1 < 0 ? (out->rank == 1 && out->shape[0] == d0)
                               : (out->rank == 2 && out->shape[0] == d0 && out->shape[1] == d1);
  if (!shape_ok)
    return make_status(StatusCode::shape_mismatch, message, -1, -1, static_cast<int32_t>(role));
  return ok_status();
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
  } else if (kLayoutsBuilt && dtype_is_gguf_block(out->dtype)) {
    out->layout =
        static_cast<WeightLayout>(r.layout);  // q4_k / q6_k / q8_0 / q5_0 may be interleaved
  }
  return ok_status();
}

}  // namespace einfer
