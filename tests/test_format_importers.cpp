// Importers against their references: llama2.c v0/v1/v2, Hugging Face Llama (sharded and tied),
// PyTorch TransformerEncoder state dicts and GGUF. Inputs and reference tensors are written by
// tests/gen/gen_*.py (numpy/torch); the real llama2.c checkpoints come from
// EINFER_SHARED_MODELS_DIR and are checked against values read at their documented file offsets.
#if EINFER_HAS_PACK_LIB
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "format_fixtures.h"
#include "kernels/quant/quant.h"
#include "tests/test_util.h"
#include "tools/einfer-pack/importers.h"

using namespace einfer;
using namespace einfer::pack;

namespace {

const std::string kData = std::string(EINFER_TEST_DATA_DIR) + "/format/";

std::vector<float> read_f32(const std::string& path) {
  const std::vector<uint8_t> b = read_file(path);
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}

bool exists(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f) std::fclose(f);
  return f != nullptr;
}

// A packed, loaded model that owns its bytes.
struct Packed {
  std::vector<uint8_t> bytes;
  std::unique_ptr<AlignedBuffer> buf;
  Model model;
  explicit Packed(const SourceModel& src, DType dtype, int32_t group) {
    bytes = write_ein(pack_source(src, dtype, group, nullptr));
    buf = std::make_unique<AlignedBuffer>(bytes);
    const Status s = load_model(buf->data, buf->size, LoadOptions{}, &model);
    REQUIRE_MESSAGE(s.ok(), status_text(s));
  }
  std::vector<float> values(TensorRole role, int32_t layer) const {
    TensorView v;
    const Status s = model_tensor(model, role, layer, &v);
    REQUIRE_MESSAGE(s.ok(), tensor_role_name(role));
    const int64_t cols = v.shape[v.rank - 1], rows = v.numel() / cols;
    std::vector<float> out(static_cast<size_t>(v.numel()));
    for (int64_t r = 0; r < rows; ++r) {
      float* y = out.data() + r * cols;
      const int64_t groups = quant_groups(cols, v.group_size);
      switch (v.dtype) {
        case DType::f32:
          std::memcpy(y, v.f32() + r * cols, cols * 4);
          break;
        case DType::f16:
          for (int64_t c = 0; c < cols; ++c) {
            uint16_t h;
            std::memcpy(&h, static_cast<const uint8_t*>(v.data) + (r * cols + c) * 2, 2);
            y[c] = f16_to_f32(h);
          }
          break;
        case DType::q8:
          dequantize_row_q8(static_cast<const int8_t*>(v.data) + r * cols, v.scales + r * groups,
                            cols, v.group_size, y);
          break;
        case DType::q4:
          dequantize_row_q4(
              static_cast<const uint8_t*>(v.data) + r * quant_row_bytes(DType::q4, cols),
              v.scales + r * groups, cols, v.group_size, y);
          break;
        default:
          FAIL("unexpected dtype");
      }
    }
    return out;
  }
};

using einfer_test::max_abs;
using einfer_test::max_diff;

}  // namespace

TEST_CASE("importer llama2.c: v0, v1 and v2 from the generator match numpy's weights") {
  const SourceModel v0 = import_llama2c(read_file(kData + "llama2c_v0.bin"));
  const SourceModel v1 = import_llama2c(read_file(kData + "llama2c_v1.bin"));
  const SourceModel v2 = import_llama2c(read_file(kData + "llama2c_v2.bin"));
  CHECK(v0.kind == "llama2c-v0");
  CHECK(v1.kind == "llama2c-v1");
  CHECK(v2.kind == "llama2c-v2");
  for (const SourceModel* src : {&v0, &v1}) {
    Packed p(*src, DType::f32, 0);
    const ModelConfig& c = p.model.config;
    CHECK(c.dim == 16);
    CHECK(c.hidden_dim == 36);
    CHECK(c.n_layers == 2);
    CHECK(c.n_heads == 4);
    CHECK(c.n_kv_heads == 2);
    CHECK(c.vocab_size == 32);
    CHECK(c.context_length == 16);
    CHECK(c.tied_classifier == 0);
    CHECK(c.rope == RopeMode::interleaved);
    CHECK(max_diff(p.values(TensorRole::token_embedding, -1),
                   read_f32(kData + "llama2c_ref_tok.f32")) == 0.f);
    CHECK(max_diff(p.values(TensorRole::wq, 1), read_f32(kData + "llama2c_ref_wq1.f32")) == 0.f);
    CHECK(max_diff(p.values(TensorRole::wk, 0), read_f32(kData + "llama2c_ref_wk0.f32")) == 0.f);
    CHECK(max_diff(p.values(TensorRole::wo, 1), read_f32(kData + "llama2c_ref_wo1.f32")) == 0.f);
    CHECK(max_diff(p.values(TensorRole::w2, 0), read_f32(kData + "llama2c_ref_w2_0.f32")) == 0.f);
    CHECK(max_diff(p.values(TensorRole::w3, 1), read_f32(kData + "llama2c_ref_w3_1.f32")) == 0.f);
    CHECK(max_diff(p.values(TensorRole::attn_norm, 1),
                   read_f32(kData + "llama2c_ref_att_norm1.f32")) == 0.f);
    CHECK(max_diff(p.values(TensorRole::final_norm, -1),
                   read_f32(kData + "llama2c_ref_final_norm.f32")) == 0.f);
    CHECK(max_diff(p.values(TensorRole::classifier, -1), read_f32(kData + "llama2c_ref_cls.f32")) ==
          0.f);
  }
  // v2: the natural dtype is q8 with the file's group; groups that align with rows are kept
  // byte for byte, the ones that straddle rows of w2 ([16, 36], group 8) are re-grouped.
  CHECK(v2.config.weight_dtype == DType::q8);
  CHECK(v2.config.group_size == 8);
  Packed q(v2, DType::q8, 8);
  CHECK(max_diff(q.values(TensorRole::wq, 1), read_f32(kData + "llama2c_ref_v2_wq1.f32")) == 0.f);
  CHECK(max_diff(q.values(TensorRole::token_embedding, -1),
                 read_f32(kData + "llama2c_ref_v2_tok.f32")) == 0.f);
  const std::vector<float> w2_ref = read_f32(kData + "llama2c_ref_v2_w2_0.f32");
  CHECK(max_diff(q.values(TensorRole::w2, 0), w2_ref) <= max_abs(w2_ref) / 127.f * 0.5f + 1e-6f);
  Packed f(v2, DType::f32, 0);
  CHECK(max_diff(f.values(TensorRole::w2, 0), w2_ref) == 0.f);
  // Re-quantizing to q4 stays within half a q4 step of numpy's dequantized values.
  Packed q4(v2, DType::q4, 8);
  const std::vector<float> wq_ref = read_f32(kData + "llama2c_ref_v2_wq1.f32");
  CHECK(max_diff(q4.values(TensorRole::wq, 1), wq_ref) <= max_abs(wq_ref) / 7.f * 0.5f + 1e-6f);
}

TEST_CASE("importer llama2.c: truncated and unsupported checkpoints give clear errors") {
  const std::vector<uint8_t> v0 = read_file(kData + "llama2c_v0.bin");
  for (size_t cut : {size_t{30}, v0.size() / 2, v0.size() - 4}) {
    std::vector<uint8_t> t(v0.begin(), v0.begin() + static_cast<std::ptrdiff_t>(cut));
    CHECK_THROWS_WITH_AS(import_llama2c(t), doctest::Contains("truncated"), PackError);
  }
  std::vector<uint8_t> v2 = read_file(kData + "llama2c_v2.bin");
  std::vector<uint8_t> t(v2.begin(), v2.begin() + 200);
  CHECK_THROWS_WITH_AS(import_llama2c(t), doctest::Contains("truncated"), PackError);
  v2[4] = 7;  // version 7
  CHECK_THROWS_WITH_AS(import_llama2c(v2), doctest::Contains("version"), PackError);
}

TEST_CASE("importer llama2.c: real checkpoints from shared/models") {
  const std::string dir = std::string(EINFER_SHARED_MODELS_DIR) + "/";
  if (!exists(dir + "stories260K.bin")) {
    MESSAGE("skipped: " << dir << " not present (EINFER_SHARED_MODELS_DIR)");
    return;
  }
  for (const char* name : {"stories260K.bin", "aidreams260K.bin"}) {
    const std::vector<uint8_t> raw = read_file(dir + name);
    int32_t h[7];
    std::memcpy(h, raw.data(), 28);
    const int64_t d = h[0], f = h[1], L = h[2], H = h[3], G = h[4], V = h[5] < 0 ? -h[5] : h[5];
    const int64_t k = d / H;
    // Independent offsets (floats after the 28-byte header), llama2.c run.c order.
    const int64_t tok = 0, att = tok + V * d, wq = att + L * d, wk = wq + L * d * H * k;
    const int64_t wv = wk + L * G * k * d, wo = wv + L * G * k * d, ffn = wo + L * d * H * k;
    const int64_t w1 = ffn + L * d, w2 = w1 + L * f * d, w3 = w2 + L * d * f, fin = w3 + L * f * d;
    auto at = [&](int64_t idx) {
      float x;
      std::memcpy(&x, raw.data() + 28 + idx * 4, 4);
      return x;
    };
    const SourceModel src = import_llama2c(raw);
    Packed p(src, DType::f32, 0);
    CHECK(p.model.config.vocab_size == V);
    CHECK(p.model.config.tied_classifier == (h[5] > 0 ? 1u : 0u));
    const int64_t l = L - 1;
    struct Probe {
      TensorRole role;
      int32_t layer;
      int64_t base, n;
    } probes[] = {{TensorRole::token_embedding, -1, tok, V * d},
                  {TensorRole::attn_norm, 1, att + d, d},
                  {TensorRole::wq, static_cast<int32_t>(l), wq + l * d * H * k, d * H * k},
                  {TensorRole::wk, 0, wk, G * k * d},
                  {TensorRole::wv, static_cast<int32_t>(l), wv + l * G * k * d, G * k * d},
                  {TensorRole::wo, 1, wo + d * H * k, d * H * k},
                  {TensorRole::ffn_norm, 0, ffn, d},
                  {TensorRole::w1, 1, w1 + f * d, f * d},
                  {TensorRole::w2, static_cast<int32_t>(l), w2 + l * d * f, d * f},
                  {TensorRole::w3, 0, w3, f * d},
                  {TensorRole::final_norm, -1, fin, d}};
    for (const Probe& pr : probes) {
      const std::vector<float> got = p.values(pr.role, pr.layer);
      REQUIRE(static_cast<int64_t>(got.size()) == pr.n);
      float worst = 0.f;
      for (int64_t i = 0; i < pr.n; ++i)
        worst = std::fmax(worst, std::fabs(got[i] - at(pr.base + i)));
      CHECK_MESSAGE(worst == 0.f, name << " " << tensor_role_name(pr.role));
    }
    // q8 packing of a real model stays within half a step per group.
    Packed q(src, DType::q8, 32);
    const std::vector<float> ref = p.values(TensorRole::w2, 0);
    CHECK(max_diff(q.values(TensorRole::w2, 0), ref) <= max_abs(ref) / 127.f * 0.5f + 1e-6f);
  }
}

TEST_CASE("importer HF Llama: sharded folder, q/k permuted to interleaved RoPE") {
  const SourceModel src = import_hf_llama(kData + "hf_llama");
  Packed p(src, DType::f32, 0);
  const ModelConfig& c = p.model.config;
  CHECK(c.dim == 16);
  CHECK(c.n_kv_heads == 2);
  CHECK(c.vocab_size == 40);
  CHECK(c.norm_eps == doctest::Approx(1e-6));
  CHECK(c.rope == RopeMode::interleaved);
  CHECK(c.tied_classifier == 0);
  const std::vector<float> wq = p.values(TensorRole::wq, 1), wk = p.values(TensorRole::wk, 1);
  CHECK(max_diff(wq, read_f32(kData + "hf_ref_wq1_interleaved.f32")) == 0.f);
  CHECK(max_diff(wk, read_f32(kData + "hf_ref_wk1_interleaved.f32")) == 0.f);
  CHECK(max_diff(p.values(TensorRole::w3, 0), read_f32(kData + "hf_ref_w3_0.f32")) == 0.f);
  CHECK(max_diff(p.values(TensorRole::classifier, -1), read_f32(kData + "hf_ref_lm_head.f32")) ==
        0.f);

  // Same function: attention scores with interleaved RoPE on the packed rows equal HF's
  // rotate_half scores computed by the generator in float64.
  const std::vector<float> x1 = read_f32(kData + "hf_ref_x1.f32"),
                           x2 = read_f32(kData + "hf_ref_x2.f32");
  const std::vector<float> want = read_f32(kData + "hf_ref_scores_l1.f32");
  const int H = c.n_heads, G = c.n_kv_heads, k = c.head_dim, d = c.dim;
  auto project = [&](const std::vector<float>& w, const std::vector<float>& x, int rows, int pos) {
    std::vector<double> y(rows);
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < d; ++j) y[r] += double{w[r * d + j]} * x[j];
    for (int h = 0; h < rows / k; ++h)
      for (int i = 0; i < k / 2; ++i) {
        const double freq = std::pow(double{c.rope_theta}, -2.0 * i / k), a = pos * freq;
        double& e = y[h * k + 2 * i];
        double& o = y[h * k + 2 * i + 1];
        const double e0 = e, o0 = o;
        e = e0 * std::cos(a) - o0 * std::sin(a);
        o = o0 * std::cos(a) + e0 * std::sin(a);
      }
    return y;
  };
  const std::vector<double> q = project(wq, x1, H * k, 3), kk = project(wk, x2, G * k, 5);
  for (int h = 0; h < H; ++h) {
    double s = 0;
    for (int i = 0; i < k; ++i) s += q[h * k + i] * kk[(h / (H / G)) * k + i];
    CHECK(s == doctest::Approx(want[h]).epsilon(1e-5));
  }

  const SourceModel tied = import_hf_llama(kData + "hf_llama_tied");
  Packed t(tied, DType::q4, 32);
  CHECK(t.model.config.tied_classifier == 1);
  TensorView v;
  CHECK(model_tensor(t.model, TensorRole::classifier, -1, &v).code == StatusCode::out_of_range);
  CHECK_THROWS_WITH_AS(import_hf_llama(kData + "no_such_folder"), doctest::Contains("cannot open"),
                       PackError);
}

TEST_CASE("importer torch encoder: stack with metadata and a single layer") {
  const SourceModel src = import_torch_encoder(read_file(kData + "torch_encoder.safetensors"), {});
  Packed p(src, DType::f32, 0);
  const ModelConfig& c = p.model.config;
  CHECK(c.arch == ArchKind::encoder);
  CHECK(c.n_layers == 2);
  CHECK(c.n_heads == 2);
  CHECK(c.hidden_dim == 32);
  CHECK(c.activation == Activation::gelu_erf);
  CHECK(c.norm == NormKind::layernorm);
  CHECK(c.norm_first == 1);
  CHECK(c.causal == 0);
  CHECK(c.has_bias == 1);
  CHECK(c.final_norm == 1);
  CHECK(c.rope == RopeMode::none);
  CHECK(max_diff(p.values(TensorRole::wk, 1), read_f32(kData + "torch_ref_wk1.f32")) == 0.f);
  CHECK(max_diff(p.values(TensorRole::bv, 0), read_f32(kData + "torch_ref_bv0.f32")) == 0.f);
  CHECK(max_diff(p.values(TensorRole::final_norm_bias, -1),
                 read_f32(kData + "torch_ref_final_norm_bias.f32")) == 0.f);

  const std::vector<uint8_t> single = read_file(kData + "torch_encoder_layer.safetensors");
  CHECK_THROWS_WITH_AS(import_torch_encoder(single, {}), doctest::Contains("--heads"), PackError);
  TorchEncoderOptions o;
  o.heads = 4;
  o.causal = 1;
  const SourceModel one = import_torch_encoder(single, o);
  Packed q(one, DType::q8, 8);
  CHECK(q.model.config.n_layers == 1);
  CHECK(q.model.config.activation == Activation::relu);
  CHECK(q.model.config.norm_first == 0);
  CHECK(q.model.config.causal == 1);
  CHECK(q.model.config.final_norm == 0);
  CHECK(max_diff(q.values(TensorRole::b2, 0), read_f32(kData + "torch_ref_layer_b2.f32")) == 0.f);
  const std::vector<float> wq = read_f32(kData + "torch_ref_layer_wq.f32");
  CHECK(max_diff(q.values(TensorRole::wq, 0), wq) <= max_abs(wq) / 127.f * 0.5f + 1e-6f);
}

TEST_CASE("importer GGUF: F32/F16/Q8_0/Q4_0 against numpy dequantization") {
  const std::vector<uint8_t> bytes = read_file(kData + "tiny_llama.gguf");
  const SourceModel src = import_gguf(bytes);
  CHECK(src.config.weight_dtype == DType::q8);  // the most common matrix type
  Packed f(src, DType::f32, 0);
  const ModelConfig& c = f.model.config;
  // The shape gen_gguf.py wrote.
  const struct {
    const char* field;
    int64_t got, want;
  } shape[] = {{"dim", c.dim, 32},
               {"hidden_dim", c.hidden_dim, 64},
               {"n_layers", c.n_layers, 2},
               {"n_heads", c.n_heads, 4},
               {"n_kv_heads", c.n_kv_heads, 2},
               {"vocab_size", c.vocab_size, 48},
               {"context_length", c.context_length, 128},
               {"tied_classifier", c.tied_classifier, 0}};
  for (const auto& f : shape) CHECK_MESSAGE(f.got == f.want, f.field);
  struct Ref {
    TensorRole role;
    int32_t layer;
    const char* file;
  } refs[] = {{TensorRole::token_embedding, -1, "gguf_ref_tok.f32"},
              {TensorRole::wq, 0, "gguf_ref_q0.f32"},
              {TensorRole::wk, 1, "gguf_ref_k1.f32"},
              {TensorRole::w1, 1, "gguf_ref_gate1.f32"},
              {TensorRole::w2, 0, "gguf_ref_down0.f32"},
              {TensorRole::w3, 1, "gguf_ref_up1.f32"},
              {TensorRole::classifier, -1, "gguf_ref_output.f32"},
              {TensorRole::wv, 0, "gguf_ref_v0.f32"}};
  for (const Ref& r : refs)
    CHECK_MESSAGE(max_diff(f.values(r.role, r.layer), read_f32(kData + r.file)) == 0.f, r.file);
  // Q8_0 -> q8/32 and Q4_0 -> q4/32 are lossless.
  Packed q8(src, DType::q8, 32);
  CHECK(max_diff(q8.values(TensorRole::wq, 0), read_f32(kData + "gguf_ref_q0.f32")) == 0.f);
  CHECK(max_diff(q8.values(TensorRole::w2, 0), read_f32(kData + "gguf_ref_down0.f32")) == 0.f);
  Packed q4(src, DType::q4, 32);
  CHECK(max_diff(q4.values(TensorRole::wk, 1), read_f32(kData + "gguf_ref_k1.f32")) == 0.f);
  CHECK(max_diff(q4.values(TensorRole::w1, 1), read_f32(kData + "gguf_ref_gate1.f32")) == 0.f);
  Packed h(src, DType::f16, 0);
  CHECK(max_diff(h.values(TensorRole::token_embedding, -1), read_f32(kData + "gguf_ref_tok.f32")) ==
        0.f);

  for (size_t cut : {size_t{10}, size_t{300}, bytes.size() - 10}) {
    std::vector<uint8_t> t(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    CHECK_THROWS_WITH_AS(import_gguf(t), doctest::Contains("truncated"), PackError);
  }
  std::vector<uint8_t> v9 = bytes;
  v9[4] = 9;
  CHECK_THROWS_WITH_AS(import_gguf(v9), doctest::Contains("version"), PackError);
}
#endif  // EINFER_HAS_PACK_LIB
