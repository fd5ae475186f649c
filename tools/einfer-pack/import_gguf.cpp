// GGUF (versions 2 and 3), architectures llama and qwen2 (models/arch/arch_llama.cpp: metadata
// keys and tensor names, q/k/v biases as blk.N.attn_q.bias ...), tensors F32, F16, Q8_0, Q4_0.
//
// Layout: "GGUF", uint32 version, uint64 tensor_count, uint64 kv_count, kv pairs (string key,
// uint32 type, value), tensor infos (string name, uint32 n_dims, uint64 ne[n_dims], uint32 type,
// uint64 offset), padding to general.alignment (default 32), data. ne[0] is the contiguous axis,
// so a llama matrix [out, in] has ne = {in, out}. llama.cpp's converter already permuted llama's
// q/k to the interleaved RoPE layout (rope=interleaved); qwen2's stay half-split (NeoX RoPE). Q8_0
// blocks: f16 scale + 32 int8. Q4_0 blocks: f16 scale + 16 bytes, element j in the low nibble of
// byte j, element j+16 in its high nibble, value (nibble - 8) * scale. Both convert losslessly to
// einfer q8/q4 with group 32.
#include <cstring>
#include <map>

#include "kernels/quant.h"
#include "tools/einfer-pack/arch_names.h"
#include "tools/einfer-pack/gguf_meta.h"
#include "tools/einfer-pack/importers.h"

namespace einfer::pack {

namespace {

constexpr uint32_t kGgufMagic = 0x46554747u;  // "GGUF"
enum GgmlType : uint32_t { kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ8_0 = 8 };

using Cursor = GgufCursor;
using Value = GgufValue;

struct Info {
  std::vector<int64_t> ne;
  uint32_t type = 0;
  uint64_t offset = 0;
};

}  // namespace

bool looks_like_gguf(const std::vector<uint8_t>& b) {
  uint32_t m = 0;
  if (b.size() >= 4) std::memcpy(&m, b.data(), 4);
  return m == kGgufMagic;
}

SourceModel import_gguf(const std::vector<uint8_t>& b) {
  Cursor c{b};
  if (c.get<uint32_t>() != kGgufMagic) throw PackError("gguf: bad magic");
  const uint32_t version = c.get<uint32_t>();
  if (version != 2 && version != 3)
    throw PackError("gguf: unsupported version " + std::to_string(version));
  const uint64_t n_tensors = c.get<uint64_t>();
  const uint64_t n_kv = c.get<uint64_t>();
  if (n_tensors > b.size() || n_kv > b.size()) throw PackError("gguf: implausible counts");
  const std::map<std::string, Value> kv = gguf_read_metadata(c, n_kv, "");
  std::map<std::string, Info> infos;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    std::string name = c.str();
    Info info;
    const uint32_t nd = c.get<uint32_t>();
    if (nd == 0 || nd > 4)
      throw PackError("gguf: tensor " + name + " has rank " + std::to_string(nd));
    for (uint32_t d = 0; d < nd; ++d) {
      const uint64_t e = c.get<uint64_t>();
      if (e == 0 || e > (uint64_t{1} << 31))
        throw PackError("gguf: tensor " + name + " has a bad dimension");
      info.ne.push_back(static_cast<int64_t>(e));
    }
    info.type = c.get<uint32_t>();
    info.offset = c.get<uint64_t>();
    infos[name] = info;
  }
  uint64_t alignment = 32;
  if (auto it = kv.find("general.alignment"); it != kv.end())
    alignment = static_cast<uint64_t>(it->second.num);
  if (alignment == 0 || alignment > 4096) throw PackError("gguf: bad general.alignment");
  const uint64_t data_start = (c.pos + alignment - 1) / alignment * alignment;
  if (data_start > b.size()) throw PackError("gguf: file truncated before the tensor data");

  auto arch_kv = kv.find("general.architecture");
  const std::string arch_name = arch_kv == kv.end() ? std::string("?") : arch_kv->second.str;
  const ArchDescription* arch = arch_by_gguf_arch(arch_name.c_str());
  if (!arch)
    throw PackError("gguf: architecture '" + arch_name + "' is not supported (llama or qwen2)");
  const ArchDescription& llama = *arch;
  SourceModel m;
  m.kind = "gguf-" + arch_name;
  if (auto it = kv.find("tokenizer.chat_template"); it != kv.end() && it->second.type == 8)
    m.chat_template = it->second.str;
  ModelConfig& cfg = m.config;
  cfg.arch = llama.kind;
  cfg.norm = llama.norm;
  cfg.rope = llama.gguf_rope;  // llama.cpp permuted llama's q/k rows, not qwen2's
  cfg.activation = llama.activation;
  cfg.qkv_bias = llama.qkv_bias;
  auto emb = infos.find(arch_tensor_name(llama.tensors[0].gguf, -1));
  if (emb == infos.end() || emb->second.ne.size() != 2)
    throw PackError("gguf: missing tensor token_embd.weight");
  // Hyperparameters by the table's keys; the vocabulary defaults to the embedding's rows.
  auto lookup = [&](const char* key, double* value) {
    auto it = kv.find(key);
    if (it == kv.end() || it->second.type == 8 || it->second.type == 9) return false;
    *value = it->second.num;
    return true;
  };
  read_arch_config(llama, SourceFormat::gguf, lookup, "gguf: ", &cfg);
  auto key = [&](const char* pattern) { return arch_tensor_name(pattern, -1, llama.gguf_arch); };
  std::string rope_type;
  if (auto it = kv.find(key(kGgufRopeTypeKey)); it != kv.end() && it->second.type == 8)
    rope_type = it->second.str;
  apply_rope_scaling(rope_type, "gguf: ", &cfg);
  if (infos.count(kGgufRopeFreqsTensor))
    throw PackError(std::string("gguf: tensor ") + kGgufRopeFreqsTensor +
                    " (llama3 RoPE frequency factors) is not supported: pack the Hugging Face "
                    "folder, whose rope_scaling einfer implements");
  double rope_dims = cfg.head_dim;
  if (lookup(key("{}.rope.dimension_count").c_str(), &rope_dims) && rope_dims != cfg.head_dim)
    throw PackError("gguf: " + key("{}.rope.dimension_count") +
                    " differs from the head size (partial RoPE is not supported)");
  double vocab = static_cast<double>(emb->second.ne[1]);
  lookup(key("{}.vocab_size").c_str(), &vocab);
  cfg.vocab_size = static_cast<int32_t>(vocab);
  cfg.tied_classifier = infos.count("output.weight") ? 0 : 1;
  require_valid_config(cfg, "gguf: ");

  std::map<uint32_t, int> type_votes;
  auto load = [&](const std::string& name, TensorRole role, int32_t layer,
                  std::vector<int64_t> want) {
    auto it = infos.find(name);
    if (it == infos.end()) throw PackError("gguf: missing tensor " + name);
    const Info& info = it->second;
    std::vector<int64_t> shape(info.ne.rbegin(), info.ne.rend());
    if (shape != want)
      throw PackError("gguf: tensor " + name + " has a shape that disagrees with the metadata");
    const int64_t cols = info.ne[0];
    int64_t n = 1;
    for (int64_t e : info.ne) n *= e;
    const int64_t rows = n / cols;
    uint64_t bytes = 0;
    switch (info.type) {
      case kF32:
        bytes = n * 4;
        break;
      case kF16:
        bytes = n * 2;
        break;
      case kQ8_0:
      case kQ4_0:
        if (cols % 32 != 0)
          throw PackError("gguf: quantized tensor " + name + " row not a multiple of 32");
        bytes = static_cast<uint64_t>(n / 32) * (info.type == kQ8_0 ? 34 : 18);
        break;
      default:
        throw PackError("gguf: tensor " + name + " has unsupported type " +
                        std::to_string(info.type) + " (F32, F16, Q8_0, Q4_0 only)");
    }
    const uint64_t avail = b.size() - data_start;
    if (info.offset > avail || bytes > avail - info.offset)
      throw PackError("gguf: tensor " + name + " data lies outside the file (truncated?)");
    const uint8_t* p = b.data() + data_start + info.offset;
    SourceTensor t;
    t.role = role;
    t.layer = layer;
    t.shape = want;
    t.values.resize(n);
    if (want.size() == 2) type_votes[info.type]++;
    if (info.type == kF32) {
      std::memcpy(t.values.data(), p, n * 4);
    } else if (info.type == kF16) {
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + i * 2, 2);
        t.values[i] = f16_to_f32(h);
      }
    } else {
      const bool q8 = info.type == kQ8_0;
      t.native = q8 ? DType::q8 : DType::q4;
      t.native_group = 32;
      t.native_data.assign(static_cast<size_t>(rows) * quant_row_bytes(t.native, cols), 0);
      t.native_scales.resize(n / 32);
      for (int64_t blk = 0; blk < n / 32; ++blk) {
        const uint8_t* bp = p + blk * (q8 ? 34 : 18);
        uint16_t h;
        std::memcpy(&h, bp, 2);
        const float d = f16_to_f32(h);
        t.native_scales[blk] = d;
        for (int j = 0; j < 32; ++j) {
          const int64_t e = blk * 32 + j;
          if (q8) {
            const int8_t qv = static_cast<int8_t>(bp[2 + j]);
            t.values[e] = qv * d;
            t.native_data[e] = static_cast<uint8_t>(qv);
          } else {
            const int u = j < 16 ? (bp[2 + j] & 0x0F) : (bp[2 + j - 16] >> 4);
            t.values[e] = static_cast<float>(u - 8) * d;
            uint8_t& byte = t.native_data[e / 2];  // rows have even length: e/2 stays in the row
            byte = (e & 1) ? static_cast<uint8_t>(byte | (u << 4)) : static_cast<uint8_t>(byte | u);
          }
        }
      }
    }
    m.tensors.push_back(std::move(t));
  };
  for_each_arch_tensor(llama, cfg, [&](const ArchTensorNames& t, int32_t layer) {
    load(arch_tensor_name(t.gguf, layer), t.role, layer, arch_tensor_shape(cfg, t.role));
  });
  for (const SourceTensor& t : m.tensors)
    if (t.shape.size() == 1 && t.native != DType::f32)
      throw PackError("gguf: norm weights must be F32 or F16");
  // Natural dtype: the most common matrix type.
  uint32_t best = kF32;
  int votes = -1;
  for (auto [t, n] : type_votes)
    if (n > votes) best = t, votes = n;
  cfg.weight_dtype = best == kF16    ? DType::f16
                     : best == kQ8_0 ? DType::q8
                     : best == kQ4_0 ? DType::q4
                                     : DType::f32;
  cfg.group_size = dtype_is_quantized(cfg.weight_dtype) ? 32 : 0;
  return m;
}

}  // namespace einfer::pack
