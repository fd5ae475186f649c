// Issue 19's attention variants: sparse patterns computed from indices, linear attention
// (elu + 1) and sinusoidal positions. Kernels against the definitions written out here; the
// encoder packed from PyTorch state dicts against PyTorch (tests/gen/gen_variants.py): the
// encoder with an additive -inf mask built from the pattern, and a float64 numpy linear-attention
// encoder that reproduces torch's softmax encoder on the same weights.
// einfer-test: no-bare-metal
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/attention_variants/attention_variants.h"

using namespace einfer;

namespace {

// The definition, term by term.
bool attends_by_definition(const AttentionPattern& p, int64_t i, int64_t j) {
  if (p.causal && j > i) return false;
  if (p.window == 0 && p.global == 0 && p.stride == 0 && p.block == 0) return true;
  bool ok = false;
  if (p.window > 0) ok = ok || std::llabs(i - j) < p.window;
  if (p.global > 0) ok = ok || i < p.global || j < p.global;
  if (p.stride > 0) ok = ok || (i - j) % p.stride == 0;
  if (p.block > 0) {
    ok = ok || i / p.block == j / p.block;
    if (p.block_summary > 0) ok = ok || j % p.block >= p.block - p.block_summary;
  }
  return ok;
}

std::vector<AttentionPattern> some_patterns() {
  std::vector<AttentionPattern> out;
  for (int causal = 0; causal < 2; ++causal) {
    const AttentionPattern ps[] = {
        {0, 0, 0, 0, 0, false}, {1, 0, 0, 0, 0, false},  {3, 0, 0, 0, 0, false},
        {0, 2, 0, 0, 0, false}, {0, 0, 4, 0, 0, false},  {0, 0, 0, 8, 2, false},
        {0, 0, 0, 5, 0, false}, {2, 2, 0, 0, 0, false},  {3, 1, 5, 6, 1, false},
        {0, 0, 0, 4, 4, false}, {40, 0, 0, 0, 0, false}, {0, 0, 1, 0, 0, false}};
    for (AttentionPattern p : ps) {
      p.causal = causal != 0;
      out.push_back(p);
    }
  }
  return out;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / 16777216.f * 2.f - 1.f;
  }
  return v;
}

}  // namespace

TEST_CASE("attention pattern: the keys walked by index are exactly the definition's") {
  for (const AttentionPattern& p : some_patterns()) {
    for (int64_t n : {1, 7, 23, 37}) {
      int64_t pairs = 0;
      for (int64_t i = 0; i < n; ++i) {
        std::vector<int64_t> walked, defined;
        for (int64_t j = attention_pattern_next(p, n, i, 0); j < n;
             j = attention_pattern_next(p, n, i, j + 1))
          walked.push_back(j);
        for (int64_t j = 0; j < n; ++j)
          if (attends_by_definition(p, i, j)) defined.push_back(j);
        CHECK_MESSAGE(walked == defined, "pattern w" << p.window << " g" << p.global << " s"
                                                     << p.stride << " f" << p.block << ","
                                                     << p.block_summary << " causal " << p.causal
                                                     << " n " << n << " query " << i);
        pairs += static_cast<int64_t>(defined.size());
      }
      CHECK(attention_pattern_pairs(p, n) == pairs);
    }
  }
}

TEST_CASE("attention pattern: a window's work grows linearly with the sequence") {
  AttentionPattern p;
  p.window = 16;
  p.global = 2;
  const int64_t a = attention_pattern_pairs(p, 4096), b = attention_pattern_pairs(p, 8192);
  CHECK(b - 2 * a < a / 100);                      // doubling N doubles the work (edges aside)
  CHECK(a <= 4096 * (2 * 16 - 1 + 2) + 2 * 4096);  // O(N * attended), far below N^2
}

TEST_CASE("attention pattern kernel: equals masked softmax attention computed in double") {
  const int32_t H = 2, k = 8, n = 37;
  const size_t row = static_cast<size_t>(H * k);
  const std::vector<float> q = random_floats(n * row, 1), kk = random_floats(n * row, 2),
                           v = random_floats(n * row, 3);
  std::vector<unsigned char> scratch(attention_pattern_scratch_bytes(H) + 64);
  for (const AttentionPattern& p : some_patterns()) {
    std::vector<float> out(n * row);
    const float scale = 1.f / std::sqrt(static_cast<float>(k));
    REQUIRE(attention_pattern_f32(p, H, k, scale, q.data(), kk.data(), v.data(), n, out.data(),
                                  scratch.data(), scratch.size())
                .ok());
    double worst = 0;
    for (int32_t i = 0; i < n; ++i) {
      for (int32_t h = 0; h < H; ++h) {
        std::vector<double> w(n, 0.0);
        double mx = -INFINITY, sum = 0;
        for (int32_t j = 0; j < n; ++j) {
          if (!attends_by_definition(p, i, j)) continue;
          double s = 0;
          for (int32_t a = 0; a < k; ++a)
            s += double(q[i * row + h * k + a]) * kk[j * row + h * k + a];
          w[j] = s * scale;
          mx = std::fmax(mx, w[j]);
        }
        for (int32_t j = 0; j < n; ++j) {
          w[j] = attends_by_definition(p, i, j) ? std::exp(w[j] - mx) : 0.0;
          sum += w[j];
        }
        for (int32_t a = 0; a < k; ++a) {
          double o = 0;
          for (int32_t j = 0; j < n; ++j) o += w[j] / sum * v[j * row + h * k + a];
          worst = std::fmax(worst, std::fabs(o - out[i * row + h * k + a]));
        }
      }
    }
    CHECK(worst < 1e-5);
  }
  std::vector<float> out(n * row);
  CHECK(attention_pattern_f32({}, H, k, 1.f, q.data(), kk.data(), v.data(), n, out.data(),
                              scratch.data(), 8)
            .code == StatusCode::out_of_memory);
}

TEST_CASE("linear attention kernel: bidirectional einsums and causal recurrence match the sums") {
  const int32_t H = 3, k = 4, n = 29;
  const size_t row = static_cast<size_t>(H * k);
  for (bool causal : {false, true}) {
    LinearAttentionShape s;
    s.n_heads = H;
    s.head_dim = k;
    s.causal = causal;
    std::vector<float> q = random_floats(n * row, 7), kk = random_floats(n * row, 8);
    const std::vector<float> v = random_floats(n * row, 9), q0 = q, k0 = kk;
    size_t bytes = 0;
    REQUIRE(attention_linear_scratch_bytes(s, n, &bytes).ok());
    std::vector<float> scratch(bytes / 4 + 16);
    void* base =
        reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) / 64 * 64);
    std::vector<float> out(n * row);
    const Status st =
        attention_linear_elu_f32(s, q.data(), kk.data(), v.data(), n, out.data(), base, bytes);
    REQUIRE_MESSAGE(st.ok(), st.message);
    auto phi = [](double x) { return x > 0 ? x + 1 : std::exp(x); };
    double worst = 0;
    for (int32_t i = 0; i < n; ++i) {
      for (int32_t h = 0; h < H; ++h) {
        const int32_t last = causal ? i : n - 1;
        double den = 0;
        std::vector<double> num(k, 0.0);
        for (int32_t j = 0; j <= last; ++j) {
          double qk = 0;
          for (int32_t a = 0; a < k; ++a)
            qk += phi(q0[i * row + h * k + a]) * phi(k0[j * row + h * k + a]);
          den += qk;
          for (int32_t a = 0; a < k; ++a) num[a] += qk * v[j * row + h * k + a];
        }
        for (int32_t a = 0; a < k; ++a)
          worst = std::fmax(worst, std::fabs(num[a] / den - out[i * row + h * k + a]));
      }
    }
    MESSAGE("causal " << causal << ": max error " << worst);
    CHECK(worst < 1e-5);
  }
}

#if EINFER_HAS_PACK_LIB  // the encoder tests pack PyTorch state dicts

#include "models/encoder.h"
#include "tests/npy_reader.h"
#include "tests/session_fixtures.h"
#include "tests/test_util.h"
#include "tools/einfer-pack/attention_options.h"
#include "tools/einfer-pack/importers.h"

namespace {

std::string variants(const std::string& name) {
  return std::string(EINFER_TEST_DATA_DIR) + "/variants/" + name;
}

std::vector<float> npy(const std::string& name) {
  const einfer_test::NpyArray a = einfer_test::load_npy(variants(name));
  REQUIRE_MESSAGE(a.ok, "cannot read " << variants(name));
  return a.to_f32();
}

// A PyTorch state dict packed with the given variant options, loaded, and bound with its state for
// seq positions in an arena of exactly encoder_arena_bytes.
struct PackedEncoder {
  pack::AlignedBuffer image;
  Model model;
  einfer_test::EncoderRun run;

  PackedEncoder(const std::string& file, const pack::AttentionOptions& opt, bool causal,
                DType dtype, int32_t seq)
      : image(pack::write_ein(pack::pack_source(source(file, opt, causal), dtype, 16, nullptr))),
        model(einfer_test::loaded_model(image.data, image.size)),
        run(model, seq) {
    CHECK(run.arena.high_water() == run.memory.bytes);  // encoder_arena_bytes is exact
  }

  static pack::SourceModel source(const std::string& file, const pack::AttentionOptions& opt,
                                  bool causal) {
    pack::TorchEncoderOptions o;  // heads, activation, norm_first from the metadata
    pack::SourceModel src = pack::import_torch_encoder(pack::read_file(variants(file)), o);
    src.config.causal = causal ? 1 : 0;
    pack::apply_attention_options(opt, &src.config);
    return src;
  }
};

struct Run {
  std::vector<float> out;
  size_t arena_bytes = 0;
};

Run run_encoder(const std::string& model, const pack::AttentionOptions& opt, bool causal,
                DType dtype) {
  const std::vector<float> x = npy("x.npy");
  const int32_t seq = static_cast<int32_t>(x.size()) / 16;
  PackedEncoder e(model, opt, causal, dtype, seq);
  REQUIRE(e.model.config.dim == 16);
  Run r;
  r.arena_bytes = e.run.memory.bytes;
  r.out.resize(x.size());
  const Status st = encoder_forward(e.run.w, &e.run.s, x.data(), seq, r.out.data());
  REQUIRE_MESSAGE(st.ok(), st.message);
  return r;
}

using einfer_test::max_diff;

struct PatternCase {
  const char* name;
  const char* model;
  const char* spec;
  bool causal;
};
const PatternCase kPatternCases[] = {
    {"window3", "encoder_post.safetensors", "window:3", false},
    {"window2_global2", "encoder_post.safetensors", "window:2+global:2", false},
    {"strided4_causal", "encoder_post.safetensors", "strided:4", true},
    {"fixed8_2_causal", "encoder_pre.safetensors", "fixed:8,2", true},
    {"all_terms", "encoder_pre.safetensors", "window:3+global:1+strided:5+fixed:6,1", false},
};

}  // namespace

TEST_CASE("encoder with a sparse pattern matches PyTorch's encoder with the -inf mask, 1e-4") {
  for (const PatternCase& c : kPatternCases) {
    pack::AttentionOptions opt;
    opt.pattern = c.spec;
    const Run r = run_encoder(c.model, opt, c.causal, DType::f32);
    const float err = max_diff(r.out, npy(std::string("pattern_") + c.name + ".npy"));
    MESSAGE(std::string(c.name) << ": max |einfer - torch| = " << err << ", arena "
                                << r.arena_bytes);
    CHECK(err <= 1e-4f);
  }
}

TEST_CASE("encoder variants with f16/q8/q4 weights stay near their f32 references") {
  // Rounded weights are not the reference's weights: the bound is the rounding error's.
  struct Variant {
    const char* attention;
    const char* pattern;
    const char* positions;
    bool causal;
    const char* reference;
  };
  const Variant variants_run[] = {
      {"", "window:3+global:1+strided:5+fixed:6,1", "", false, "pattern_all_terms.npy"},
      {"linear-elu", "", "", true, "linear_pre_causal.npy"},
      {"", "", "sinusoidal", false, "positions_sinusoidal.npy"}};
  for (const Variant& v : variants_run) {
    for (DType dt : {DType::f16, DType::bf16, DType::q8, DType::q4}) {
      pack::AttentionOptions opt;
      opt.attention = v.attention;
      opt.pattern = v.pattern;
      opt.positions = v.positions;
      const Run r = run_encoder("encoder_pre.safetensors", opt, v.causal, dt);
      const float err = max_diff(r.out, npy(v.reference));
      const std::string label = std::string(v.reference) + " " + dtype_name(dt);
      MESSAGE(label << ": max |einfer - f32 ref| = " << err);
      // bf16 keeps 8 mantissa bits to f16's 11: ~8x f16's rounding error (measured 3e-3).
      CHECK(err <= (dt == DType::f16    ? 5e-3f
                    : dt == DType::bf16 ? 1e-2f
                    : dt == DType::q8   ? 3e-2f
                                        : 3e-1f));
    }
  }
}

TEST_CASE("encoder with sinusoidal positions matches PyTorch on x + PE, 1e-4") {
  pack::AttentionOptions opt;
  opt.positions = "sinusoidal";
  CHECK(max_diff(run_encoder("encoder_pre.safetensors", opt, false, DType::f32).out,
                 npy("positions_sinusoidal.npy")) <= 1e-4f);
  opt.pattern = "window:3";
  CHECK(max_diff(run_encoder("encoder_post.safetensors", opt, false, DType::f32).out,
                 npy("positions_sinusoidal_window3.npy")) <= 1e-4f);
}

TEST_CASE("encoder with linear-elu attention matches the float64 numpy layer, 1e-4") {
  for (const char* model : {"post", "pre"}) {
    for (bool causal : {false, true}) {
      pack::AttentionOptions opt;
      opt.attention = "linear-elu";
      const Run r =
          run_encoder(std::string("encoder_") + model + ".safetensors", opt, causal, DType::f32);
      const float err =
          max_diff(r.out, npy(std::string("linear_") + model + (causal ? "_causal" : "") + ".npy"));
      MESSAGE(std::string(model) << (causal ? " causal" : "")
                                 << ": max |einfer - numpy f64| = " << err);
      CHECK(err <= 1e-4f);
    }
  }
}

TEST_CASE("causal linear-elu encoder streamed one position at a time equals the full run") {
  const std::vector<float> x = npy("x.npy");
  const int32_t d = 16, seq = static_cast<int32_t>(x.size()) / d;
  for (const char* model : {"post", "pre"}) {
    for (bool positions : {false, true}) {
      pack::AttentionOptions opt;
      opt.attention = "linear-elu";
      if (positions) opt.positions = "sinusoidal";
      const std::string file = std::string("encoder_") + model + ".safetensors";
      // Full causal run (n = seq) as the reference for the stream, which needs one row of state.
      const std::vector<float> full = run_encoder(file, opt, true, DType::f32).out;
      if (!positions) {
        const float err = max_diff(full, npy(std::string("linear_") + model + "_causal.npy"));
        CHECK(err <= 1e-4f);
      }
      PackedEncoder e(file, opt, true, DType::f32, 1);
      std::vector<float> got(x.size());
      for (int pass = 0; pass < 2; ++pass) {  // a reset starts the same sequence again
        REQUIRE(encoder_stream_reset(e.model.config, &e.run.s).ok());
        for (int32_t i = 0; i < seq; ++i)
          REQUIRE(
              encoder_stream_step(e.run.w, &e.run.s, x.data() + i * d, got.data() + i * d).ok());
        const float err = max_diff(got, full);
        const std::string label = std::string(model) + (positions ? " +positions" : "");
        MESSAGE(label << " stream: max |stream - full| = " << err);
        CHECK(err <= 1e-5f);
      }
    }
  }
  // Softmax models have no stream form.
  PackedEncoder e("encoder_post.safetensors", pack::AttentionOptions{}, false, DType::f32, 1);
  float row[16] = {};
  CHECK(encoder_stream_step(e.run.w, &e.run.s, row, row).code == StatusCode::unsupported);
}

TEST_CASE("attention options: malformed specs are refused with a message") {
  ModelConfig c;
  c.arch = ArchKind::encoder;
  for (const char* bad : {"window", "window:0", "window:x", "fixed:4", "fixed:4,5", "dense:1",
                          "window:2+window:3", "window:2+", "global:-1"}) {
    pack::AttentionOptions o;
    o.pattern = bad;
    ModelConfig cc = c;
    CHECK_THROWS_AS(pack::apply_attention_options(o, &cc), pack::PackError);
  }
  pack::AttentionOptions o;
  o.attention = "performer";
  CHECK_THROWS_AS(pack::apply_attention_options(o, &c), pack::PackError);
  o = {};
  o.positions = "learned";
  CHECK_THROWS_AS(pack::apply_attention_options(o, &c), pack::PackError);
  o = {};
  o.pattern = "window:4+fixed:8,2";
  pack::apply_attention_options(o, &c);
  CHECK(pack::describe_attention_variant(c) ==
        "softmax pattern window:4+fixed:8,2, positions none");
  // The loader refuses a sparse pattern with linear attention.
  c.attention = AttentionKind::linear_elu;
  CHECK_FALSE(ein_validate_config(c).ok());
}

#endif  // EINFER_HAS_PACK_LIB
