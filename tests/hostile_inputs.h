// Writers of small inputs for the hostile-input tests (issue 16): a tiny GGUF v3 llama where every
// knob an attacker would turn (alignment, value types, block_count, names, tensor types, offsets,
// weight values) is a field of GgufSpec (the defaults give a valid F32 model, dim 8, 1 layer),
// a .npy with any shape text, and a safetensors file with any header.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace einfer::test {

struct GgufSpec {
  uint64_t alignment = 32;
  uint32_t alignment_type = 4;       // uint32; 6 = float32 and 5 = int32 are hostile variants
  int64_t alignment_value_int = -1;  // when >= INT64_MIN+1 and type 5: written instead
  uint32_t dim_type = 4;             // type of llama.embedding_length (6: float32)
  float dim_float = 8.f;             // its value when float-typed
  uint32_t block_count = 1;
  bool duplicate_tensor = false;  // a second "output_norm.weight"
  int relabel_tensor = -1;        // index of a tensor whose type is changed to F16
  int overlap_tensor = -1;        // index of a tensor whose offset is set to the previous one's
  bool extra_block = false;       // tensors of a block past block_count
  float poison = 0.f;             // when non-zero: the first weight of attn_q is this value
};

namespace gguf_detail {
inline void put(std::vector<uint8_t>& b, const void* p, size_t n) {
  const size_t at = b.size();
  b.resize(at + n);
  if (n > 0) std::memcpy(b.data() + at, p, n);
}
template <typename T>
void put(std::vector<uint8_t>& b, T v) {
  put(b, &v, sizeof v);
}
inline void put_str(std::vector<uint8_t>& b, const std::string& s) {
  put<uint64_t>(b, s.size());
  put(b, s.data(), s.size());
}
}  // namespace gguf_detail

inline std::vector<uint8_t> make_gguf(const GgufSpec& spec = {}) {
  using namespace gguf_detail;
  const uint32_t d = 8, f = 16, v = 8;
  struct T {
    std::string name;
    std::vector<uint64_t> ne;
    uint32_t type = 0;
  };
  std::vector<T> ts;
  ts.push_back({"token_embd.weight", {d, v}});
  auto block = [&](uint32_t l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    ts.push_back({p + "attn_norm.weight", {d}});
    ts.push_back({p + "attn_q.weight", {d, d}});
    ts.push_back({p + "attn_k.weight", {d, d}});
    ts.push_back({p + "attn_v.weight", {d, d}});
    ts.push_back({p + "attn_output.weight", {d, d}});
    ts.push_back({p + "ffn_norm.weight", {d}});
    ts.push_back({p + "ffn_gate.weight", {d, f}});
    ts.push_back({p + "ffn_down.weight", {f, d}});
    ts.push_back({p + "ffn_up.weight", {d, f}});
  };
  for (uint32_t l = 0; l < spec.block_count && l < 2; ++l) block(l);
  if (spec.extra_block) block(spec.block_count);
  ts.push_back({"output_norm.weight", {d}});
  ts.push_back({"output.weight", {d, v}});
  if (spec.duplicate_tensor) ts.push_back({"output_norm.weight", {d}});
  if (spec.relabel_tensor >= 0) ts[static_cast<size_t>(spec.relabel_tensor)].type = 1;

  std::vector<uint8_t> b;
  put<uint32_t>(b, 0x46554747u);
  put<uint32_t>(b, 3);
  put<uint64_t>(b, ts.size());
  put<uint64_t>(b, 11);
  auto kv_u32 = [&](const char* k, uint32_t x) {
    put_str(b, k);
    put<uint32_t>(b, 4);
    put<uint32_t>(b, x);
  };
  auto kv_f32 = [&](const char* k, float x) {
    put_str(b, k);
    put<uint32_t>(b, 6);
    put<float>(b, x);
  };
  put_str(b, "general.architecture");
  put<uint32_t>(b, 8);
  put_str(b, "llama");
  put_str(b, "general.alignment");
  put<uint32_t>(b, spec.alignment_type);
  if (spec.alignment_type == 6)
    put<float>(b, static_cast<float>(spec.alignment));
  else if (spec.alignment_type == 5)
    put<int32_t>(b, static_cast<int32_t>(spec.alignment_value_int));
  else
    put<uint32_t>(b, static_cast<uint32_t>(spec.alignment));
  if (spec.dim_type == 6)
    kv_f32("llama.embedding_length", spec.dim_float);
  else
    kv_u32("llama.embedding_length", d);
  kv_u32("llama.feed_forward_length", f);
  kv_u32("llama.block_count", spec.block_count);
  kv_u32("llama.attention.head_count", 2);
  kv_u32("llama.attention.head_count_kv", 2);
  kv_u32("llama.context_length", 16);
  kv_u32("llama.vocab_size", v);
  kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  kv_f32("llama.rope.freq_base", 10000.f);

  // Offsets as a GGUF writer lays them out: each tensor at the aligned end of the previous one.
  const uint64_t align = spec.alignment >= 1 ? spec.alignment : 32;
  std::vector<uint64_t> offsets, sizes;
  uint64_t at = 0;
  for (const T& t : ts) {
    uint64_t n = 1;
    for (uint64_t e : t.ne) n *= e;
    offsets.push_back(at);
    sizes.push_back(n * 4);  // the data is always F32 (a relabelled tensor lies about it)
    at = (at + n * 4 + align - 1) / align * align;
  }
  if (spec.overlap_tensor > 0)
    offsets[static_cast<size_t>(spec.overlap_tensor)] =
        offsets[static_cast<size_t>(spec.overlap_tensor) - 1];
  for (size_t i = 0; i < ts.size(); ++i) {
    put_str(b, ts[i].name);
    put<uint32_t>(b, static_cast<uint32_t>(ts[i].ne.size()));
    for (uint64_t e : ts[i].ne) put<uint64_t>(b, e);
    put<uint32_t>(b, ts[i].type);
    put<uint64_t>(b, offsets[i]);
  }
  b.resize((b.size() + align - 1) / align * align, 0);
  const size_t data = b.size();
  b.resize(data + at, 0);
  uint32_t seed = 12345;
  for (size_t i = 0; i < ts.size(); ++i) {
    const bool norm = ts[i].ne.size() == 1;
    for (uint64_t k = 0; k < sizes[i] / 4; ++k) {
      seed = seed * 1664525u + 1013904223u;
      float x = norm ? 1.f : (static_cast<float>(seed >> 8) / 16777216.f - 0.5f) * 0.5f;
      if (spec.poison != 0.f && k == 0 && ts[i].name == "blk.0.attn_q.weight") x = spec.poison;
      std::memcpy(b.data() + data + offsets[i] + k * 4, &x, 4);
    }
  }
  return b;
}

// A float32 .npy whose header claims `shape` (Python tuple text) followed by data_bytes zero bytes.
inline std::vector<uint8_t> make_npy(const std::string& shape, size_t data_bytes) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  const uint8_t pre[10] = {0x93,
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           static_cast<uint8_t>(dict.size() & 0xFF),
                           static_cast<uint8_t>(dict.size() >> 8)};
  std::vector<uint8_t> b(10 + dict.size() + data_bytes, 0);
  std::memcpy(b.data(), pre, 10);
  std::memcpy(b.data() + 10, dict.data(), dict.size());
  return b;
}

// A safetensors file: 8-byte header length, the header text, data_bytes zero bytes.
inline std::vector<uint8_t> make_safetensors(const std::string& header, size_t data_bytes) {
  std::vector<uint8_t> b(8 + header.size() + data_bytes, 0);
  const uint64_t n = header.size();
  std::memcpy(b.data(), &n, 8);
  std::memcpy(b.data() + 8, header.data(), header.size());
  return b;
}

}  // namespace einfer::test
