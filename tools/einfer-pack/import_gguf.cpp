// GGUF (versions 2 and 3), architectures llama and qwen2 (models/arch/arch_llama.cpp: metadata
// keys and tensor names, q/k/v biases as blk.N.attn_q.bias ...) and bert (arch_bert.cpp: the
// sentence encoders llama-embedding runs), tensors F32, F16, BF16, Q8_0,
// Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K; IQ4_NL converted to Q8_0 (lossless);
// anything else refused by name.
//
// Layout: "GGUF", uint32 version, uint64 tensor_count, uint64 kv_count, kv pairs (string key,
// uint32 type, value), tensor infos (string name, uint32 n_dims, uint64 ne[n_dims], uint32 type,
// uint64 offset), padding to general.alignment (default 32), data. ne[0] is the contiguous axis,
// so a llama matrix [out, in] has ne = {in, out}. llama.cpp's converter already permuted llama's
// q/k to the interleaved RoPE layout (rope=interleaved); qwen2's stay half-split (NeoX RoPE). Q8_0
// blocks: f16 scale + 32 int8. Q4_0 blocks: f16 scale + 16 bytes, element j in the low nibble of
// byte j, element j+16 in its high nibble, value (nibble - 8) * scale. Both convert losslessly to
// einfer q8/q4 with group 32, which is what a file holding only those (and F32/F16) becomes. A file
// with any other block type keeps every matrix in its own GGUF block encoding (runtime/dtype.h q8_0
// .. q6_k, run natively by kernels/gguf/gguf.h); F32/F16 matrices of such a file become f32.
// IQ4_NL blocks (f16 d + 16 bytes of nibbles indexing a fixed 16-entry int8 table) are exactly Q8_0
// blocks with the same d and the table's values, so they are converted to q8_0 (1.9x their bytes;
// no accuracy lost).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>

#include "kernels/gguf/gguf.h"
#include "kernels/quant/quant.h"
#include "runtime/checked.h"
#include "tools/einfer-pack/arch_names.h"
#include "tools/einfer-pack/gguf_meta.h"
#include "tools/einfer-pack/import_families.h"
#include "tools/einfer-pack/importers.h"

namespace einfer::pack {

namespace {

constexpr uint32_t kGgufMagic = 0x46554747u;  // "GGUF"
enum GgmlType : uint32_t { kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ8_0 = 8, kIQ4_NL = 20, kBF16 = 30 };

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
  uint64_t bytes = 0;  // data bytes its type and shape take
  bool used = false;
};

bool is_integer_type(uint32_t t) {
  return t <= 5 || t == 10 || t == 11;
}
bool is_float_type(uint32_t t) {
  return t == 6 || t == 12;
}
const char* value_type_name(uint32_t t) {
  static const char* const names[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                      "int32",  "float32", "bool",   "string", "array",
                                      "uint64", "int64",   "float64"};
  return t < 13 ? names[t] : "unknown";
}

// Data bytes of a tensor of GGML type `type` and `n` elements in rows of `cols`.
uint64_t tensor_bytes(const std::string& name, uint32_t type, uint64_t n, int64_t cols) {
  switch (type) {
    case kF32:
      return n * 4;
    case kF16:
    case kBF16:
      return n * 2;
    default: {
      const DType bt = type == kIQ4_NL ? DType::q4_0 : ggml_block_dtype(type);
      if (bt == DType::f32)
        throw PackError("gguf: tensor " + name + ": GGUF type " + ggml_type_name(type) +
                        " not supported (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, "
                        "Q4_K, Q5_K, Q6_K, IQ4_NL)");
      const int64_t block = gguf_block_elems(bt);
      if (cols % block != 0)
        throw PackError("gguf: " + std::string(ggml_type_name(type)) + " tensor " + name +
                        " row is not a multiple of " + std::to_string(block));
      return n / static_cast<uint64_t>(block) * gguf_block_bytes(bt);  // IQ4_NL: 18 too
    }
  }
}

// Tensor data, in offset order, must tile the data section the way GGUF writers lay it out: each
// tensor at the aligned end of the previous one, the first at 0, the last ending the file (up to
// alignment padding). This refuses offsets outside the file, overlaps, misalignment, and a tensor
// relabelled to another type (its byte size changes, so the tiling breaks).
void check_tensor_layout(const std::map<std::string, Info>& infos, uint64_t alignment,
                         uint64_t avail) {
  std::vector<std::pair<uint64_t, const std::string*>> order;
  for (const auto& [name, info] : infos) {
    if (info.offset > avail || info.bytes > avail - info.offset)
      throw PackError("gguf: tensor " + name + " data lies outside the file (truncated?)");
    if (info.offset % alignment != 0)
      throw PackError("gguf: tensor " + name + " data offset is not aligned to general.alignment");
    order.emplace_back(info.offset, &name);
  }
  std::sort(order.begin(), order.end());
  uint64_t expected = 0;
  for (const auto& [offset, name] : order) {
    if (offset < expected)
      throw PackError("gguf: tensor " + *name + " overlaps the previous tensor's data");
    if (offset > expected)
      throw PackError("gguf: gap before tensor " + *name +
                      " (sizes disagree with the types: relabelled tensor?)");
    const uint64_t end = offset + infos.at(*name).bytes;
    expected = (end + alignment - 1) / alignment * alignment;
  }
  if (!order.empty() && avail > expected)
    throw PackError("gguf: " + std::to_string(avail - expected) +
                    " unexpected bytes after the last tensor (sizes disagree with the types?)");
}

// llama.cpp's bert (llama-model.cpp LLM_ARCH_BERT): multi-head attention with biases, post-norm,
// bidirectional unless attention.causal says otherwise (refused), pooling_type (0 none, 1 mean,
// 2 cls; rank and last are refused). GGUF does not record sentence-transformers' Normalize:
// pooled vectors are L2-normalized, as llama-embedding does by default (--embd-normalize 2).
void gguf_bert_config(const std::map<std::string, GgufValue>& kv,
                      const std::function<std::string(const char*)>& key, ModelConfig* c,
                      std::string* notes) {
  c->has_bias = 1;
  if (c->n_heads <= 0 || c->dim % c->n_heads != 0)
    throw PackError("gguf: " + key("{}.embedding_length") + " is not a multiple of " +
                    key("{}.attention.head_count"));
  c->n_kv_heads = c->n_heads;
  c->head_dim = c->dim / c->n_heads;
  if (auto it = kv.find(key("{}.attention.causal")); it != kv.end() && it->second.num != 0)
    throw PackError("gguf: " + key("{}.attention.causal") +
                    " true is not supported (bert encoders attend both ways)");
  double pooling = 0;
  if (auto it = kv.find(key("{}.pooling_type")); it != kv.end()) {
    if (!is_integer_type(it->second.type))
      throw PackError("gguf: " + key("{}.pooling_type") + " must be an integer");
    pooling = it->second.num;
  }
  if (pooling == 1 || pooling == 2) {
    c->pooling = pooling == 1 ? PoolingKind::mean : PoolingKind::cls;
    c->normalize = 1;
    *notes = "gguf bert: pooled vectors L2-normalized (llama-embedding's default)";
  } else if (pooling == 0) {
    c->pooling = PoolingKind::none;
    *notes = "gguf bert: no pooling_type: token states only";
  } else {
    char value[32];
    std::snprintf(value, sizeof value, "%.0f", pooling);
    throw PackError("gguf: " + key("{}.pooling_type") + " " + value +
                    " is not supported (0 none, 1 mean or 2 cls)");
  }
}

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
  // Each kv pair takes at least 13 bytes, each tensor info at least 32: counts beyond what the file
  // can hold are refused before anything is read.
  if (n_tensors > b.size() / 32 || n_kv > b.size() / 13)
    throw PackError("gguf: implausible counts (" + std::to_string(n_tensors) + " tensors, " +
                    std::to_string(n_kv) + " metadata keys): file truncated or corrupt");
  const std::map<std::string, Value> kv = gguf_read_metadata(c, n_kv, "");
  std::map<std::string, Info> infos;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    std::string name = c.str();
    Info info;
    const uint32_t nd = c.get<uint32_t>();
    if (nd == 0 || nd > 4)
      throw PackError("gguf: tensor " + name + " has rank " + std::to_string(nd));
    uint64_t n = 1;
    for (uint32_t d = 0; d < nd; ++d) {
      const uint64_t e = c.get<uint64_t>();
      if (e == 0 || e > (uint64_t{1} << 31) || !checked_mul(n, e, &n) || n > b.size())
        throw PackError("gguf: tensor " + name + " has a bad dimension");
      info.ne.push_back(static_cast<int64_t>(e));
    }
    info.type = c.get<uint32_t>();
    info.offset = c.get<uint64_t>();
    info.bytes = tensor_bytes(name, info.type, n, info.ne[0]);
    if (!infos.emplace(name, std::move(info)).second)
      throw PackError("gguf: duplicate tensor name " + name);
  }
  uint64_t alignment = 32;
  if (auto it = kv.find("general.alignment"); it != kv.end()) {
    if (!is_integer_type(it->second.type))
      throw PackError("gguf: general.alignment must be an integer");
    const double a = it->second.num;  // range first: casting a negative double is undefined
    alignment = a >= 1 && a <= 65536 ? static_cast<uint64_t>(a) : 0;
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      throw PackError("gguf: general.alignment must be a power of two up to 65536, got " +
                      std::to_string(it->second.num));
  }
  const uint64_t data_start = (c.pos + alignment - 1) / alignment * alignment;
  if (data_start > b.size()) throw PackError("gguf: file truncated before the tensor data");
  check_tensor_layout(infos, alignment, b.size() - data_start);

  auto arch_kv = kv.find("general.architecture");
  const std::string arch_name = arch_kv == kv.end() ? std::string("?") : arch_kv->second.str;
  const ArchDescription* arch = arch_any_by_gguf_arch(arch_name.c_str());
  if (!arch)
    throw PackError("gguf: architecture '" + arch_name +
                    "' is not supported (llama, qwen2, qwen3, gemma2, gemma3, phi3 or bert)");
  const bool bert = arch->kind == ArchKind::bert;
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
  cfg.family = llama.family;
  cfg.qk_norm = llama.qk_norm;
  cfg.post_norms = llama.post_norms;
  auto emb = infos.find(arch_tensor_name(llama.tensors[0].gguf, -1));
  if (emb == infos.end() || emb->second.ne.size() != 2)
    throw PackError("gguf: missing tensor token_embd.weight");
  // Hyperparameters by the table's keys: integer-typed for dimensions and counts (range-checked
  // by read_arch_config before any cast), float-typed for epsilon and theta. A present key of the
  // wrong type is an error, never replaced by the default.
  auto lookup = [&](const char* key, double* value) {
    auto it = kv.find(key);
    if (it == kv.end()) return false;
    const uint32_t type = it->second.type;
    const bool integer = arch_key_is_integer(llama, SourceFormat::gguf, key) ||
                         key == arch_tensor_name("{}.vocab_size", -1, llama.gguf_arch) ||
                         key == arch_tensor_name("{}.rope.dimension_count", -1, llama.gguf_arch);
    if (integer && !is_integer_type(type))
      throw PackError(std::string("gguf: metadata key ") + key + " must be an integer, has type " +
                      value_type_name(type));
    if (!integer && !is_float_type(type))
      throw PackError(std::string("gguf: metadata key ") + key + " must be a float, has type " +
                      value_type_name(type));
    if (integer && !(it->second.num >= 0 && it->second.num <= (1 << 24)))
      throw PackError(std::string("gguf: metadata key ") + key + " out of range (0..16777216)");
    *value = it->second.num;
    return true;
  };
  read_arch_config(llama, SourceFormat::gguf, lookup, "gguf: ", &cfg);
  auto key = [&](const char* pattern) { return arch_tensor_name(pattern, -1, llama.gguf_arch); };
  std::string rope_type;
  if (auto it = kv.find(key(kGgufRopeTypeKey)); it != kv.end() && it->second.type == 8)
    rope_type = it->second.str;
  apply_rope_scaling(rope_type, "gguf: ", &cfg);
  for (const char* const* r = llama.gguf_refused_keys; r && r[0]; r += 2)
    if (kv.count(key(r[0]))) throw PackError("gguf: " + key(r[0]) + " is not supported: " + r[1]);
  // The families' llama.cpp rules (Gemma's scales and periods, Phi-3's window and longrope).
  gguf_family_config(
      llama, [&](const std::string& k) { return kv.count(k) > 0; },
      [&](const std::string& n) { return infos.count(n) > 0; }, lookup, &cfg);
  // llama3 RoPE scaling as llama.cpp's converter writes it: per-pair frequency divisors (the
  // tensor's name is in the architecture's table; loaded below with the others).
  for (size_t i = 0; i < llama.tensor_count; ++i)
    if (llama.tensors[i].role == TensorRole::rope_freq_factors && llama.tensors[i].gguf &&
        infos.count(llama.tensors[i].gguf))
      cfg.rope_freq_factors = 1;
  double rope_dims = cfg.head_dim;
  if (lookup(key("{}.rope.dimension_count").c_str(), &rope_dims) && rope_dims != cfg.head_dim)
    throw PackError("gguf: " + key("{}.rope.dimension_count") +
                    " differs from the head size (partial RoPE is not supported)");
  double vocab = static_cast<double>(emb->second.ne[1]);
  lookup(key("{}.vocab_size").c_str(), &vocab);
  if (!(vocab >= 0 && vocab <= (1 << 24)))
    throw PackError("gguf: vocabulary size out of range (0..16777216): " + std::to_string(vocab));
  cfg.vocab_size = static_cast<int32_t>(vocab);
  cfg.tied_classifier = bert || infos.count("output.weight") ? 0 : 1;
  if (bert) gguf_bert_config(kv, key, &cfg, &m.notes);
  require_valid_config(cfg, "gguf: ");

  // Legacy mode (einfer q8/q4 of group 32) when every tensor is F32/F16/BF16/Q8_0/Q4_0; else
  // native.
  bool native = false;
  for (const auto& [name, info] : infos)
    if (info.type != kF32 && info.type != kF16 && info.type != kBF16 && info.type != kQ8_0 &&
        info.type != kQ4_0)
      native = true;
  int iq4nl_converted = 0;
  std::map<uint32_t, int> type_votes;
  // `want` rows of the tensor starting at row `row0` of `total_rows` (fused tensors: Phi-3's
  // attn_qkv and ffn_up hold several roles' rows).
  auto load = [&](const std::string& name, TensorRole role, int32_t layer,
                  std::vector<int64_t> want, int64_t row0, int64_t total_rows) {
    auto it = infos.find(name);
    if (it == infos.end()) throw PackError("gguf: missing tensor " + name);
    Info& info = it->second;
    info.used = true;
    std::vector<int64_t> shape(info.ne.rbegin(), info.ne.rend());
    std::vector<int64_t> whole = want;
    whole[0] = total_rows;
    if (shape != whole)
      throw PackError("gguf: tensor " + name + " has a shape that disagrees with the metadata");
    const int64_t cols = info.ne[0];
    int64_t n = 1;
    for (int64_t e : want) n *= e;
    const int64_t rows = n / cols;
    // Rows are whole blocks in every type: row0 starts a row of the block data too.
    const uint64_t row_bytes = total_rows > 0 ? info.bytes / static_cast<uint64_t>(total_rows) : 0;
    const uint8_t* p =
        b.data() + data_start + info.offset + static_cast<uint64_t>(row0) * row_bytes;
    SourceTensor t;
    t.role = role;
    t.layer = layer;
    t.shape = want;
    t.values.resize(n);
    if (native && info.type != kF32 && info.type != kF16 && info.type != kBF16) {
      if (want.size() != 2) throw PackError("gguf: norm weight " + name + " must be F32 or F16");
      std::vector<uint8_t> raw(p, p + row_bytes * static_cast<uint64_t>(rows));
      DType dt = ggml_block_dtype(info.type);
      if (info.type == kIQ4_NL) {
        raw = iq4nl_to_q8_0(p, n / 32);
        dt = DType::q8_0;
        ++iq4nl_converted;
      }
      if (ein_role_is_matrix(role)) type_votes[static_cast<uint32_t>(dt)]++;
      t.native = dt;
      t.native_data = std::move(raw);
      for (int64_t r = 0; r < rows; ++r)
        dequantize_row_gguf(dt, t.native_data.data() + r * quant_row_bytes(dt, cols), cols,
                            t.values.data() + r * cols);
      m.tensors.push_back(std::move(t));
      return;
    }
    if (want.size() == 2 && ein_role_is_matrix(role)) type_votes[native ? 0u : info.type]++;
    if (info.type == kF32) {
      std::memcpy(t.values.data(), p, n * 4);
    } else if (info.type == kF16 || info.type == kBF16) {
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + i * 2, 2);
        t.values[i] = info.type == kF16 ? f16_to_f32(h) : bf16_to_f32(h);
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
    int64_t total = 0;
    const int64_t row0 = arch_fused_rows(llama, cfg, t, SourceFormat::gguf, &total);
    load(arch_tensor_name(t.gguf, layer), t.role, layer, arch_tensor_shape(cfg, t.role), row0,
         total);
  });
  // Tensors of blocks past block_count mean the metadata disagrees with the tensors.
  for (const auto& [name, info] : infos)
    if (!info.used && name.rfind("blk.", 0) == 0)
      throw PackError("gguf: tensor " + name + " lies beyond " + arch_name + ".block_count (" +
                      std::to_string(cfg.n_layers) + ")");
  for (const SourceTensor& t : m.tensors) {
    if (t.shape.size() == 1 && t.native != DType::f32)
      throw PackError("gguf: norm weights must be F32 or F16");
    if (t.role == TensorRole::rope_freq_factors || t.role == TensorRole::rope_freq_factors_long)
      for (float f : t.values)
        if (!(std::isfinite(f) && f > 0.f))
          throw PackError(
              "gguf: a RoPE frequency factor tensor holds a factor that is not finite "
              "and > 0");
  }
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
                     : best == kBF16 ? DType::bf16
                     : best == kQ8_0 ? DType::q8
                     : best == kQ4_0 ? DType::q4
                                     : DType::f32;
  cfg.group_size = dtype_is_quantized(cfg.weight_dtype) ? 32 : 0;
  return m;
}

}  // namespace einfer::pack
