// GGUF (versions 2 and 3), llama architecture, tensors F32, F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K; IQ4_NL converted to Q8_0 (lossless); anything else refused by name.
//
// Layout: "GGUF", uint32 version, uint64 tensor_count, uint64 kv_count, kv pairs (string key,
// uint32 type, value), tensor infos (string name, uint32 n_dims, uint64 ne[n_dims], uint32 type,
// uint64 offset), padding to general.alignment (default 32), data. ne[0] is the contiguous axis,
// so a llama matrix [out, in] has ne = {in, out}. llama.cpp's converter already permuted q/k to
// the interleaved RoPE layout, so rope=interleaved. Q8_0 blocks: f16 scale + 32 int8. Q4_0 blocks:
// f16 scale + 16 bytes, element j in the low nibble of byte j, element j+16 in its high nibble,
// value (nibble - 8) * scale. Both convert losslessly to einfer q8/q4 with group 32, which is what
// a file holding only those (and F32/F16) becomes. A file with any other block type keeps every
// matrix in its own GGUF block encoding (runtime/dtype.h q8_0 .. q6_k, run natively by
// kernels/gguf_quant.h); F32/F16 matrices of such a file become f32. IQ4_NL blocks (f16 d + 16
// bytes of nibbles indexing a fixed 16-entry int8 table) are exactly Q8_0 blocks with the same d
// and the table's values, so they are converted to q8_0 (1.9x their bytes; no accuracy lost).
#include <cstring>
#include <map>

#include "kernels/gguf_quant.h"
#include "kernels/quant.h"
#include "tools/einfer-pack/arch_names.h"
#include "tools/einfer-pack/gguf_meta.h"
#include "tools/einfer-pack/importers.h"

namespace einfer::pack {

namespace {

constexpr uint32_t kGgufMagic = 0x46554747u;  // "GGUF"
enum GgmlType : uint32_t { kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ8_0 = 8, kIQ4_NL = 20 };

// ggml type numbers (gguf-py GGMLQuantizationType) and names, for messages.
const char* ggml_type_name(uint32_t t) {
  static const char* const names[] = {
      "F32",      "F16",      "Q4_0",    "Q4_1",  "Q4_2",   "Q4_3",  "Q5_0",  "Q5_1",
      "Q8_0",     "Q8_1",     "Q2_K",    "Q3_K",  "Q4_K",   "Q5_K",  "Q6_K",  "Q8_K",
      "IQ2_XXS",  "IQ2_XS",   "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
      "I8",       "I16",      "I32",     "I64",   "F64",    "IQ1_M", "BF16",  "Q4_0_4_4",
      "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",   "TQ2_0"};
  return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

// The einfer dtype that holds a ggml block type as is (f32 for none).
DType ggml_block_dtype(uint32_t t) {
  switch (t) {
    case 2:
      return DType::q4_0;
    case 3:
      return DType::q4_1;
    case 6:
      return DType::q5_0;
    case 7:
      return DType::q5_1;
    case 8:
      return DType::q8_0;
    case 10:
      return DType::q2_k;
    case 11:
      return DType::q3_k;
    case 12:
      return DType::q4_k;
    case 13:
      return DType::q5_k;
    case 14:
      return DType::q6_k;
    default:
      return DType::f32;
  }
}

// IQ4_NL's 16 levels (llama.cpp ggml-quants.c kvalues_iq4nl), a format constant.
constexpr int8_t kIq4nlLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                     1,    13,   25,  38,  53,  69,  89,  113};

// IQ4_NL blocks (f16 d, 16 bytes: element j low nibble of byte j, j + 16 high) as Q8_0 blocks.
std::vector<uint8_t> iq4nl_to_q8_0(const uint8_t* p, int64_t blocks) {
  std::vector<uint8_t> out(static_cast<size_t>(blocks) * 34);
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* in = p + b * 18;
    uint8_t* o = out.data() + b * 34;
    o[0] = in[0];
    o[1] = in[1];
    for (int j = 0; j < 16; ++j) {
      o[2 + j] = static_cast<uint8_t>(kIq4nlLevels[in[2 + j] & 0x0F]);
      o[2 + j + 16] = static_cast<uint8_t>(kIq4nlLevels[in[2 + j] >> 4]);
    }
  }
  return out;
}

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

  const ArchDescription& llama = arch_llama();
  auto arch = kv.find("general.architecture");
  if (arch == kv.end() || arch->second.str != llama.name)
    throw PackError("gguf: architecture '" +
                    (arch == kv.end() ? std::string("?") : arch->second.str) +
                    "' is not supported (llama only)");
  SourceModel m;
  m.kind = "gguf";
  if (auto it = kv.find("tokenizer.chat_template"); it != kv.end() && it->second.type == 8)
    m.chat_template = it->second.str;
  ModelConfig& cfg = m.config;
  cfg.arch = llama.kind;
  cfg.norm = llama.norm;
  cfg.rope = llama.rope;
  cfg.activation = llama.activation;
  auto emb = infos.find(arch_tensor_name(llama.tensors[0].gguf, -1));
  if (emb == infos.end() || emb->second.ne.size() != 2)
    throw PackError("gguf: missing token_embd.weight");
  // Hyperparameters by the table's keys; the vocabulary defaults to the embedding's rows.
  auto lookup = [&](const char* key, double* value) {
    auto it = kv.find(key);
    if (it == kv.end() || it->second.type == 8 || it->second.type == 9) return false;
    *value = it->second.num;
    return true;
  };
  read_arch_config(llama, SourceFormat::gguf, lookup, "gguf: ", &cfg);
  double vocab = static_cast<double>(emb->second.ne[1]);
  lookup("llama.vocab_size", &vocab);
  cfg.vocab_size = static_cast<int32_t>(vocab);
  cfg.tied_classifier = infos.count("output.weight") ? 0 : 1;
  require_valid_config(cfg, "gguf: ");

  // Legacy mode (einfer q8/q4 of group 32) when every tensor is F32/F16/Q8_0/Q4_0; else native.
  bool native = false;
  for (const auto& [name, info] : infos)
    if (info.type != kF32 && info.type != kF16 && info.type != kQ8_0 && info.type != kQ4_0)
      native = true;
  int iq4nl_converted = 0;
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
      default: {
        const DType bt = info.type == kIQ4_NL ? DType::q4_0 : ggml_block_dtype(info.type);
        if (bt == DType::f32)
          throw PackError("gguf: tensor " + name + ": GGUF type " + ggml_type_name(info.type) +
                          " not supported (F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, "
                          "Q4_K, Q5_K, Q6_K, IQ4_NL)");
        const int64_t block = gguf_block_elems(bt);
        if (cols % block != 0)
          throw PackError("gguf: " + std::string(ggml_type_name(info.type)) + " tensor " + name +
                          " row is not a multiple of " + std::to_string(block));
        bytes = static_cast<uint64_t>(n / block) * gguf_block_bytes(bt);  // IQ4_NL: 18 too
      }
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
    if (native && info.type != kF32 && info.type != kF16) {
      if (want.size() != 2) throw PackError("gguf: norm weight " + name + " must be F32 or F16");
      std::vector<uint8_t> raw(p, p + bytes);
      DType dt = ggml_block_dtype(info.type);
      if (info.type == kIQ4_NL) {
        raw = iq4nl_to_q8_0(p, n / 32);
        dt = DType::q8_0;
        ++iq4nl_converted;
      }
      type_votes[static_cast<uint32_t>(dt)]++;
      t.native = dt;
      t.native_data = std::move(raw);
      for (int64_t r = 0; r < rows; ++r)
        dequantize_row_gguf(dt, t.native_data.data() + r * quant_row_bytes(dt, cols), cols,
                            t.values.data() + r * cols);
      m.tensors.push_back(std::move(t));
      return;
    }
    if (want.size() == 2) type_votes[native ? 0u : info.type]++;
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
  if (native) {
    // Natural dtype: the most common block type (every matrix keeps its own in the packed file).
    uint32_t best = 0;
    int votes = -1;
    for (auto [t, n] : type_votes)
      if (t != 0 && n > votes) best = t, votes = n;
    cfg.weight_dtype = votes < 0 ? DType::f32 : static_cast<DType>(best);
    cfg.group_size = 0;
    if (iq4nl_converted > 0)
      m.notes = "gguf: " + std::to_string(iq4nl_converted) +
                " IQ4_NL tensor(s) converted to q8_0 (lossless, 1.9x their bytes)";
    return m;
  }
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
