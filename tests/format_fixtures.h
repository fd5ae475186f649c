// Shared fixtures for the format suites: small synthetic llama/encoder models built with the host
// writer, and helpers to patch fields of an image and re-seal its CRCs.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/format.h"
#include "tools/einfer-pack/ein_writer.h"

namespace einfer::test {

inline ModelConfig tiny_llama_config(DType dtype = DType::f32, int32_t group = 0) {
  ModelConfig c;
  c.arch = ArchKind::llama;
  c.dim = 16;
  c.hidden_dim = 40;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 4;
  c.vocab_size = 24;
  c.context_length = 32;
  c.tied_classifier = 0;
  c.weight_dtype = dtype;
  c.group_size = group;
  return c;
}

inline ModelConfig tiny_encoder_config() {
  ModelConfig c;
  c.arch = ArchKind::encoder;
  c.n_heads = c.n_kv_heads = 2;  // an encoder's attention is plain MHA
  c.head_dim = 4;
  c.dim = c.n_heads * c.head_dim;
  c.hidden_dim = 12;
  c.n_layers = 2;
  c.vocab_size = 0;
  c.context_length = 16;
  c.norm = NormKind::layernorm;
  c.activation = Activation::gelu_erf;
  c.rope = RopeMode::none;
  c.has_bias = 1;
  c.norm_first = 1;
  c.final_norm = 1;
  return c;
}

// Deterministic values for tensor (role, layer): element i of a tensor is value(role, layer, i).
inline float synthetic_value(TensorRole role, int32_t layer, int64_t i) {
  const uint32_t h = static_cast<uint32_t>(role) * 2654435761u ^
                     static_cast<uint32_t>(layer + 7) * 40503u ^
                     static_cast<uint32_t>(i) * 2246822519u;
  return static_cast<float>(static_cast<int32_t>(h % 2001u) - 1000) / 997.f;
}

inline pack::EinImage synthetic_image(const ModelConfig& c, bool with_tokenizer = false) {
  pack::EinImage img;
  img.config = c;
  auto add = [&](TensorRole role, int32_t layer) {
    int64_t shape[kEinMaxRank];
    const int rank = ein_expected_shape(c, role, shape);
    if (rank == 0) return;
    std::vector<int64_t> sh(shape, shape + rank);
    int64_t n = 1;
    for (int64_t d : sh) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = synthetic_value(role, layer, i);
    const bool matrix = ein_role_is_matrix(role);
    img.tensors.push_back(pack::encode_tensor(role, layer, sh, v.data(),
                                              matrix ? c.weight_dtype : DType::f32,
                                              matrix ? c.group_size : 0));
  };
  for (uint32_t r = 0; r < kTensorRoleCount; ++r) {
    const TensorRole role = static_cast<TensorRole>(r);
    if (ein_role_per_layer(role)) {
      for (int32_t l = c.n_layers - 1; l >= 0; --l) add(role, l);  // any order: the writer sorts
    } else {
      add(role, -1);
    }
  }
  if (with_tokenizer) img.tokenizer = {1, 2, 3, 4, 5};
  img.metadata = "source=test\n";
  return img;
}

// `version` 3: the older layout (a 128-byte ArchBlock; the model must not use version 4 features).
inline std::vector<uint8_t> synthetic_bytes(const ModelConfig& c, bool with_tokenizer = false,
                                            uint32_t version = kEinVersion) {
  return pack::write_ein(synthetic_image(c, with_tokenizer), version);
}

template <typename T>
inline T get_field(const std::vector<uint8_t>& b, size_t offset) {
  T v;
  std::memcpy(&v, b.data() + offset, sizeof(T));
  return v;
}
template <typename T>
inline void set_field(std::vector<uint8_t>& b, size_t offset, T v) {
  std::memcpy(b.data() + offset, &v, sizeof(T));
}

// Recomputes both CRCs so a corruption reaches the structural checks behind them.
inline void reseal(std::vector<uint8_t>& b) {
  FileHeader h;
  std::memcpy(&h, b.data(), sizeof h);
  if (h.header_size < sizeof(FileHeader) || h.header_size > b.size()) return;
  const uint64_t end = h.file_size < b.size() ? h.file_size : b.size();
  if (end >= h.header_size)
    set_field<uint32_t>(b, offsetof(FileHeader, payload_crc),
                        crc32_ieee(b.data() + h.header_size, end - h.header_size));
  set_field<uint32_t>(b, offsetof(FileHeader, header_crc), ein_header_crc(b.data(), h.header_size));
}

inline Status load_bytes(const std::vector<uint8_t>& b, Model* model, bool verify_crc = true) {
  pack::AlignedBuffer buf(b);
  LoadOptions o;
  o.verify_crc = verify_crc;
  Status s = load_model(buf.data, buf.size, o, model);
  model->image = nullptr;  // buf dies here: callers only look at the status and config
  model->tensor_table = nullptr;
  model->tokenizer = nullptr;
  return s;
}

}  // namespace einfer::test
