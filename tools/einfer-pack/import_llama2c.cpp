// llama2.c checkpoints.
//   v0 (run.c legacy): 7 int32 header (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
//      seq_len; negative vocab_size: an untied classifier follows), then fp32 token_embedding,
//      rms_att [L,d], wq, wk, wv, wo, rms_ffn, w1, w2, w3 (each stacked over layers), rms_final,
//      freq_cis_real/imag [seq_len, k/2] (ignored), [wcls].
//   v1 (export.py version 1): 256-byte header: uint32 magic 0x616b3432, int32 version=1, the 7
//   ints,
//      uint8 shared_classifier; then fp32 attention norms, ffn norms, final norm, token embedding,
//      wq.., wk.., wv.., wo.., w1.., w2.., w3.. (per layer), [wcls].
//   v2 (export.py version 2): same header plus int32 group_size at byte 37; fp32 norms as in v1,
//      then for token embedding, wq.., wk.., wv.., wo.., w1.., w2.., w3.., [wcls]: the int8 values
//      of the flattened matrix followed by one fp32 scale per `group_size` consecutive values.
#include <cstring>

#include "tools/einfer-pack/arch_names.h"
#include "tools/einfer-pack/importers.h"

namespace einfer::pack {

namespace {

constexpr uint32_t kAk42 = 0x616b3432u;

struct Reader {
  const std::vector<uint8_t>& bytes;
  size_t pos = 0;
  const char* what;
  void need(uint64_t n) const {
    if (n > bytes.size() || pos > bytes.size() - n)
      throw PackError(std::string(what) + ": file truncated at byte " + std::to_string(pos) +
                      " (need " + std::to_string(n) + " more bytes, file has " +
                      std::to_string(bytes.size()) + ")");
  }
  std::vector<float> floats(uint64_t n) {
    need(n * 4);
    std::vector<float> v(n);
    std::memcpy(v.data(), bytes.data() + pos, n * 4);
    pos += n * 4;
    return v;
  }
  std::vector<int8_t> int8s(uint64_t n) {
    need(n);
    std::vector<int8_t> v(n);
    std::memcpy(v.data(), bytes.data() + pos, n);
    pos += n;
    return v;
  }
};

int32_t i32_at(const std::vector<uint8_t>& b, size_t off) {
  int32_t v;
  std::memcpy(&v, b.data() + off, 4);
  return v;
}

ModelConfig config_from_header(const int32_t h[7], bool tied) {
  ModelConfig c;
  c.arch = ArchKind::llama;
  c.dim = h[0];
  c.hidden_dim = h[1];
  c.n_layers = h[2];
  c.n_heads = h[3];
  c.n_kv_heads = h[4];
  c.vocab_size = h[5] < 0 ? -h[5] : h[5];
  c.context_length = h[6];
  if (c.n_heads <= 0 || c.dim <= 0 || c.dim % c.n_heads != 0)
    throw PackError("llama2.c: dim is not a multiple of n_heads");
  c.head_dim = c.dim / c.n_heads;
  c.norm = NormKind::rmsnorm;
  c.norm_eps = 1e-5f;
  c.activation = Activation::swiglu;
  c.rope = RopeMode::interleaved;  // llama2.c rotates pairs (2i, 2i+1)
  c.rope_theta = 10000.f;
  c.tied_classifier = tied ? 1 : 0;
  require_valid_config(c, "llama2.c: unsupported header: ");
  return c;
}

bool plausible_header(const int32_t h[7]) {
  for (int i = 0; i < 7; ++i)
    if (i != 5 && (h[i] <= 0 || h[i] > (1 << 24))) return false;
  return h[5] != 0 && h[5] > -(1 << 24) && h[5] < (1 << 24) && h[0] % h[3] == 0 && h[4] <= h[3];
}

// Reads L stacked matrices [rows, cols] of fp32.
void stacked(SourceModel& m, Reader& r, TensorRole role, int64_t rows, int64_t cols) {
  for (int32_t l = 0; l < m.config.n_layers; ++l)
    add_float_tensor(m, role, l, {rows, cols}, r.floats(rows * cols));
}
void stacked_vec(SourceModel& m, Reader& r, TensorRole role, int64_t n) {
  for (int32_t l = 0; l < m.config.n_layers; ++l) add_float_tensor(m, role, l, {n}, r.floats(n));
}

// One v2 matrix: int8 values then flat-group scales.
void q8_matrix(SourceModel& m, Reader& r, TensorRole role, int32_t layer, int64_t rows,
               int64_t cols, int32_t gs) {
  const int64_t n = rows * cols;
  if (n % gs != 0) throw PackError("llama2.c v2: matrix size is not a multiple of group_size");
  std::vector<int8_t> q = r.int8s(n);
  std::vector<float> s = r.floats(n / gs);
  SourceTensor t;
  t.role = role;
  t.layer = layer;
  t.shape = {rows, cols};
  t.values.resize(n);
  for (int64_t i = 0; i < n; ++i) t.values[i] = static_cast<float>(q[i]) * s[i / gs];
  if (cols % gs == 0) {  // groups never straddle rows: the einfer q8 layout is the same bytes
    t.native = DType::q8;
    t.native_group = gs;
    t.native_data.assign(reinterpret_cast<uint8_t*>(q.data()),
                         reinterpret_cast<uint8_t*>(q.data()) + n);
    t.native_scales = std::move(s);
  }
  m.tensors.push_back(std::move(t));
}

}  // namespace

bool looks_like_llama2c(const std::vector<uint8_t>& b) {
  if (b.size() >= 8 && static_cast<uint32_t>(i32_at(b, 0)) == kAk42) return true;
  if (b.size() < 28) return false;
  int32_t h[7];
  std::memcpy(h, b.data(), 28);
  return plausible_header(h);
}

SourceModel import_llama2c(const std::vector<uint8_t>& b) {
  SourceModel m;
  const bool magic = b.size() >= 8 && static_cast<uint32_t>(i32_at(b, 0)) == kAk42;
  if (!magic) {
    if (b.size() < 28) throw PackError("llama2.c: file truncated inside the 28-byte header");
    int32_t h[7];
    std::memcpy(h, b.data(), 28);
    if (!plausible_header(h)) throw PackError("llama2.c: implausible v0 header");
    m.kind = "llama2c-v0";
    m.config = config_from_header(h, h[5] > 0);
    const ModelConfig& c = m.config;
    const int64_t d = c.dim, f = c.hidden_dim, v = c.vocab_size, k = c.head_dim;
    const int64_t q = int64_t{c.n_heads} * k, kv = int64_t{c.n_kv_heads} * k;
    Reader r{b, 28, "llama2.c v0"};
    add_float_tensor(m, TensorRole::token_embedding, -1, {v, d}, r.floats(v * d));
    stacked_vec(m, r, TensorRole::attn_norm, d);
    stacked(m, r, TensorRole::wq, q, d);
    stacked(m, r, TensorRole::wk, kv, d);
    stacked(m, r, TensorRole::wv, kv, d);
    stacked(m, r, TensorRole::wo, d, q);
    stacked_vec(m, r, TensorRole::ffn_norm, d);
    stacked(m, r, TensorRole::w1, f, d);
    stacked(m, r, TensorRole::w2, d, f);
    stacked(m, r, TensorRole::w3, f, d);
    add_float_tensor(m, TensorRole::final_norm, -1, {d}, r.floats(d));
    r.floats(int64_t{c.context_length} *
             k);  // freq_cis_real, freq_cis_imag: recomputed at run time
    if (!c.tied_classifier)
      add_float_tensor(m, TensorRole::classifier, -1, {v, d}, r.floats(v * d));
    if (r.pos != b.size())
      throw PackError("llama2.c v0: " + std::to_string(b.size() - r.pos) +
                      " unexpected bytes after the weights (header disagrees with file size)");
    return m;
  }
  if (b.size() < 256) throw PackError("llama2.c: file truncated inside the 256-byte header");
  const int32_t version = i32_at(b, 4);
  if (version != 1 && version != 2)
    throw PackError("llama2.c: unsupported checkpoint version " + std::to_string(version));
  int32_t h[7];
  std::memcpy(h, b.data() + 8, 28);
  if (!plausible_header(h) || h[5] < 0) throw PackError("llama2.c: implausible header");
  const bool shared = b[36] != 0;
  m.kind = version == 1 ? "llama2c-v1" : "llama2c-v2";
  m.config = config_from_header(h, shared);
  const ModelConfig& c = m.config;
  const int64_t d = c.dim, v = c.vocab_size;
  Reader r{b, 256, version == 1 ? "llama2.c v1" : "llama2.c v2"};
  stacked_vec(m, r, TensorRole::attn_norm, d);
  stacked_vec(m, r, TensorRole::ffn_norm, d);
  add_float_tensor(m, TensorRole::final_norm, -1, {d}, r.floats(d));
  // The matrices after the embedding, in the order the architecture table gives for llama2.c.
  struct Mat {
    TensorRole role;
    int64_t rows, cols;
  };
  const ArchDescription& llama = arch_llama();
  std::vector<Mat> mats;
  for (size_t i = 0; i < llama.llama2c_matrix_count; ++i) {
    const TensorRole role = llama.llama2c_matrices[i];
    const std::vector<int64_t> shape = arch_tensor_shape(c, role);
    if (shape.size() != 2) throw PackError("llama2.c: header describes no such matrix");
    mats.push_back({role, shape[0], shape[1]});
  }
  if (version == 1) {
    add_float_tensor(m, TensorRole::token_embedding, -1, {v, d}, r.floats(v * d));
    for (const Mat& mat : mats) stacked(m, r, mat.role, mat.rows, mat.cols);
    if (!shared) add_float_tensor(m, TensorRole::classifier, -1, {v, d}, r.floats(v * d));
  } else {
    const int32_t gs = i32_at(b, 37);
    if (gs <= 0 || gs > 65536) throw PackError("llama2.c v2: group_size out of range");
    m.config.weight_dtype = DType::q8;
    m.config.group_size = gs;
    q8_matrix(m, r, TensorRole::token_embedding, -1, v, d, gs);
    for (const Mat& mat : mats)
      for (int32_t l = 0; l < c.n_layers; ++l) q8_matrix(m, r, mat.role, l, mat.rows, mat.cols, gs);
    if (!shared) q8_matrix(m, r, TensorRole::classifier, -1, v, d, gs);
  }
  if (r.pos != b.size())
    throw PackError(std::string(r.what) + ": " + std::to_string(b.size() - r.pos) +
                    " unexpected bytes after the weights");
  return m;
}

}  // namespace einfer::pack
