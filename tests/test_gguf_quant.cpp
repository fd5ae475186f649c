// GGUF block-quantized weights run natively (kernels/gguf/gguf.h, issue 13).
//
// References (tests/gen/gen_gguf_kquant.py): random block bytes of every type decoded by the
// generator's numpy decoder (itself checked against llama.cpp's gguf-py dequantize), and tiny
// llama models written in F32 by gguf-py and quantized by llama.cpp's llama-quantize to Q4_K_M,
// Q5_K_M, Q6_K, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K and Q3_K_M, with float64 numpy logits over
// their dequantized weights.
// einfer-test: no-bare-metal
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/gguf/gguf.h"
#include "kernels/gguf/gguf_quant_internal.h"
#include "tests/gguf_test_util.h"
#include "tests/isa_levels.h"

#if EINFER_HAS_PACK_LIB
#include "models/session.h"
#include "tests/session_fixtures.h"
#include "tools/einfer-pack/importers.h"
#endif

using namespace einfer;

namespace {

const std::string kQuantData = std::string(EINFER_TEST_DATA_DIR) + "/gguf_quant/";

std::vector<uint8_t> slurp(const std::string& path) {
  std::vector<uint8_t> out;
  FILE* f = std::fopen(path.c_str(), "rb");
  REQUIRE_MESSAGE(f != nullptr, "cannot open " << path);
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  std::fclose(f);
  return out;
}

template <typename T>
std::vector<T> slurp_as(const std::string& path) {
  const std::vector<uint8_t> b = slurp(path);
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

struct TypeCase {
  DType dtype;
  const char* name;
};
constexpr TypeCase kTypes[] = {{DType::q8_0, "q8_0"}, {DType::q4_0, "q4_0"}, {DType::q4_1, "q4_1"},
                               {DType::q5_0, "q5_0"}, {DType::q5_1, "q5_1"}, {DType::q2_k, "q2_k"},
                               {DType::q3_k, "q3_k"}, {DType::q4_k, "q4_k"}, {DType::q5_k, "q5_k"},
                               {DType::q6_k, "q6_k"}};
constexpr int64_t kRows = 4, kCols = 512;  // the generator's block vectors

// m random activation rows against w (n x k): the selected level's product equals the scalar
// twin's bit for bit, and so does any thread count.
void check_equals_twin(const TensorView& w, int64_t n, int64_t k, int64_t m, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> a(m * k);
  for (float& x : a) x = normal(rng);
  std::vector<unsigned char> scratch(matmul_gguf_scratch_bytes(m, k));
  std::vector<float> best(m * n), twin(m * n);
  REQUIRE(matmul_f32_gguf(a.data(), k, m, w, best.data(), n, scratch.data(), scratch.size()).ok());
  REQUIRE(scalar::matmul_f32_gguf(a.data(), k, m, w, twin.data(), n, scratch.data(), scratch.size())
              .ok());
  CHECK(std::memcmp(best.data(), twin.data(), best.size() * sizeof(float)) == 0);
  einfer_test::check_gguf_same_bits_threaded(a.data(), k, m, w, n, best, scratch);
}

}  // namespace

TEST_CASE("gguf blocks: block sizes match the GGUF format") {
  CHECK(gguf_block_bytes(DType::q4_k) == 144);
  CHECK(gguf_block_bytes(DType::q5_k) == 176);
  CHECK(gguf_block_bytes(DType::q6_k) == 210);
  CHECK(gguf_block_bytes(DType::q2_k) == 84);
  CHECK(gguf_block_bytes(DType::q3_k) == 110);
  CHECK(quant_row_bytes(DType::q4_k, 512) == 288);
  CHECK(quant_row_bytes(DType::q8_0, 64) == 68);
  CHECK(sizeof(gguf_detail::BlockQ8K) == 292);
}

TEST_CASE("gguf blocks: dequantize_row_gguf equals the numpy decoder for every type") {
  for (const TypeCase& t : kTypes) {
    CAPTURE(t.name);
    const std::vector<uint8_t> raw = slurp(kQuantData + "blocks_" + t.name + ".bin");
    const std::vector<float> want = slurp_as<float>(kQuantData + "blocks_" + t.name + ".f32");
    REQUIRE(raw.size() == kRows * quant_row_bytes(t.dtype, kCols));
    REQUIRE(want.size() == static_cast<size_t>(kRows * kCols));
    std::vector<float> got(want.size());
    for (int64_t r = 0; r < kRows; ++r)
      dequantize_row_gguf(t.dtype, raw.data() + r * quant_row_bytes(t.dtype, kCols), kCols,
                          got.data() + r * kCols);
    double worst = 0, scale = 0;
    // Plain comparisons, not std::fmax: GCC 12 for aarch64 crashes vectorising an fmax
    // reduction of doubles (see test_import_forward.cpp).
    for (size_t i = 0; i < want.size(); ++i) {
      const double e = std::fabs(static_cast<double>(got[i]) - want[i]);
      const double a = std::fabs(want[i]);
      if (e > worst) worst = e;
      if (a > scale) scale = a;
    }
    REQUIRE(scale > 0);
    CHECK(worst <= 1e-6 * scale);  // float32 rounding of (scale * int) vs the float64 decode
  }
}

TEST_CASE(
    "gguf blocks: SIMD dots (every ISA level) equal their scalar twins; the product matches the "
    "dequantized float product; any thread count gives the same bits") {
  std::mt19937 rng(13);
  std::normal_distribution<float> normal(0.f, 1.f);
  constexpr int64_t m = 3;
  std::vector<float> a(m * kCols);
  for (float& x : a) x = normal(rng);
  einfer_test::for_each_isa([&](const std::string&) {
    for (const TypeCase& t : kTypes) {
      CAPTURE(t.name);
      const std::vector<uint8_t> raw = slurp(kQuantData + "blocks_" + t.name + ".bin");
      const std::vector<float> deq = slurp_as<float>(kQuantData + "blocks_" + t.name + ".f32");
      TensorView w = make_view(t.dtype, const_cast<uint8_t*>(raw.data()), {kRows, kCols});
      std::vector<unsigned char> scratch(matmul_gguf_scratch_bytes(m, kCols));
      std::vector<float> best(m * kRows), twin(m * kRows), threaded(m * kRows);
      REQUIRE(
          matmul_f32_gguf(a.data(), kCols, m, w, best.data(), kRows, scratch.data(), scratch.size())
              .ok());
      REQUIRE(scalar::matmul_f32_gguf(a.data(), kCols, m, w, twin.data(), kRows, scratch.data(),
                                      scratch.size())
                  .ok());
      // K-quants: the same bits; 32-element types on AVX2 sum float lanes: float rounding only.
      for (size_t e = 0; e < best.size(); ++e) {
        if (gguf_block_elems(t.dtype) == 256) {
          CHECK(best[e] == twin[e]);
        } else {
          CHECK(std::fabs(best[e] - twin[e]) <= 1e-5f * (1.f + std::fabs(twin[e])));
        }
      }
      einfer_test::TestPool pool(2);
      const Threads th = pool.threads();
      REQUIRE(matmul_f32_gguf(a.data(), kCols, m, w, threaded.data(), kRows, scratch.data(),
                              scratch.size(), &th)
                  .ok());
      CHECK(std::memcmp(best.data(), threaded.data(), best.size() * sizeof(float)) == 0);
      // Against float: only the int8 activation rounding differs (<= 0.5/127 of each block's max).
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < kRows; ++j) {
          double exact = 0, mag = 0;
          for (int64_t e = 0; e < kCols; ++e) {
            exact += static_cast<double>(a[i * kCols + e]) * deq[j * kCols + e];
            mag += std::fabs(static_cast<double>(a[i * kCols + e]) * deq[j * kCols + e]);
          }
          CAPTURE(i);
          CAPTURE(j);
          CHECK(std::fabs(best[i * kRows + j] - exact) <= 0.01 * mag);
        }
      }
    }
  });
}

TEST_CASE(
    "gguf blocks: multi-row kernels equal their scalar twins for any row count, activation row "
    "count and thread count") {
  // Random blocks (finite positive f16 scales, every other byte random) of 13 rows, so the 4-row
  // kernels meet a short last group, and 1, 2 and 5 activation rows (pairs and a single row).
  std::mt19937 rng(1313);
  std::normal_distribution<float> normal(0.f, 1.f);
  constexpr int64_t n = 13, k = 768;
  for (const TypeCase& t : kTypes) {
    CAPTURE(t.name);
    const int64_t block = gguf_block_elems(t.dtype);
    const size_t bytes = gguf_block_bytes(t.dtype);
    std::vector<uint8_t> raw(quant_row_bytes(t.dtype, k) * n);
    for (uint8_t& b : raw) b = static_cast<uint8_t>(rng());
    // Byte offsets of the block's f16 fields (docs/gguf-quant.md).
    std::vector<size_t> f16_at;
    switch (t.dtype) {
      case DType::q2_k:
        f16_at = {80, 82};
        break;
      case DType::q3_k:
        f16_at = {108};
        break;
      case DType::q6_k:
        f16_at = {208};
        break;
      case DType::q4_k:
      case DType::q5_k:
      case DType::q4_1:
      case DType::q5_1:
        f16_at = {0, 2};
        break;
      default:
        f16_at = {0};
    }
    for (size_t at = 0; at < raw.size(); at += bytes)
      for (size_t f : f16_at) {
        const uint16_t h = static_cast<uint16_t>(0x1800 + rng() % 0x2000);  // 2^-9 .. 2
        std::memcpy(&raw[at + f], &h, 2);
      }
    REQUIRE(raw.size() == static_cast<size_t>(n * (k / block)) * bytes);
    TensorView w = make_view(t.dtype, raw.data(), {n, k});
    einfer_test::for_each_isa([&](const std::string&) {  // AVX2, AVX-VNNI, AVX-512 VNNI kernels
      for (int64_t m : {1, 2, 5, 8, 19}) {               // from 8: the 32-element types' lane tiles
        CAPTURE(m);
        check_equals_twin(w, n, k, m, rng);
      }
    });
  }
}

TEST_CASE(
    "gguf blocks: the 32-element types' lane tiles (8+ activation rows) equal the scalar twin "
    "across "
    "weight tiles, K slices and threads") {
  // 37 weight rows (two whole tiles of 16 and a short one), K = 70 blocks (past one 64-block
  // slice: the second continues from C), 8 to 21 activation rows (whole tiles and a remainder).
  std::mt19937 rng(3737);
  std::normal_distribution<float> normal(0.f, 1.f);
  constexpr int64_t n = 37, k = 70 * 32;
  for (const TypeCase& t : kTypes) {
    if (gguf_block_elems(t.dtype) != 32) continue;
    CAPTURE(t.name);
    const size_t bytes = gguf_block_bytes(t.dtype);
    std::vector<uint8_t> raw(quant_row_bytes(t.dtype, k) * n);
    for (uint8_t& b : raw) b = static_cast<uint8_t>(rng());
    const bool min = t.dtype == DType::q4_1 || t.dtype == DType::q5_1;
    for (size_t at = 0; at < raw.size(); at += bytes)
      for (size_t f = 0; f <= (min ? 2u : 0u); f += 2) {
        const uint16_t h = static_cast<uint16_t>(0x1800 + rng() % 0x2000);  // 2^-9 .. 2
        std::memcpy(&raw[at + f], &h, 2);
      }
    TensorView w = make_view(t.dtype, raw.data(), {n, k});
    einfer_test::for_each_isa([&](const std::string&) {
      for (int64_t m : {8, 21}) {
        CAPTURE(m);
        check_equals_twin(w, n, k, m, rng);
      }
    });
  }
}

TEST_CASE("gguf blocks: bad shapes and scratch are refused") {
  std::vector<uint8_t> raw(quant_row_bytes(DType::q4_k, 256) * 2);
  float a[300] = {}, c[4] = {};
  std::vector<unsigned char> scratch(matmul_gguf_scratch_bytes(1, 300));
  TensorView w = make_view(DType::q4_k, raw.data(), {2, 300});  // not whole blocks
  CHECK(matmul_f32_gguf(a, 300, 1, w, c, 2, scratch.data(), scratch.size()).code ==
        StatusCode::shape_mismatch);
  w = make_view(DType::q4_k, raw.data(), {2, 256});
  CHECK(matmul_f32_gguf(a, 256, 1, w, c, 2, scratch.data(), 3).code == StatusCode::out_of_memory);
}

#if EINFER_HAS_PACK_LIB  // the end-to-end part needs the host-side packer library

namespace {

struct Acceptance {
  double top1 = 0;       // fraction of positions whose argmax agrees
  double worst_rel = 0;  // max over positions of max |logit error| / max |reference logit|
};

// Teacher-forced logits of `name` (batched prefill, then token by token) against the reference.
Acceptance run_reference(Session* s, int32_t vocab, const std::string& name) {
  const std::vector<int32_t> tokens = slurp_as<int32_t>(kQuantData + name + ".i32");
  const std::vector<float> want = slurp_as<float>(kQuantData + name + ".f32");
  const int32_t n = static_cast<int32_t>(tokens.size());
  REQUIRE(n >= 64);
  REQUIRE(want.size() == static_cast<size_t>(n) * vocab);
  std::vector<float> batched(want.size()), single(want.size());
  session_reset(s);
  REQUIRE(session_eval(s, tokens.data(), n, batched.data()).ok());
  session_reset(s);
  for (int32_t i = 0; i < n; ++i) {
    REQUIRE(session_eval(s, &tokens[i], 1).ok());
    std::memcpy(&single[i * vocab], session_logits(*s), vocab * sizeof(float));
  }
  Acceptance acc;
  acc.top1 = 1;
  for (const std::vector<float>* got : {&batched, &single}) {
    int agree = 0;
    for (int32_t i = 0; i < n; ++i) {
      const float* ref = &want[i * vocab];
      const float* out = &(*got)[i * vocab];
      double scale = 0, worst = 0;
      int32_t a = 0, b = 0;
      for (int32_t j = 0; j < vocab; ++j) {
        if (std::fabs(ref[j]) > scale) scale = std::fabs(ref[j]);
        const double e = std::fabs(static_cast<double>(out[j]) - ref[j]);
        if (e > worst) worst = e;
        if (ref[j] > ref[a]) a = j;
        if (out[j] > out[b]) b = j;
      }
      agree += a == b;
      if (worst / scale > acc.worst_rel) acc.worst_rel = worst / scale;
    }
    acc.top1 = std::fmin(acc.top1, static_cast<double>(agree) / n);
  }
  return acc;
}

}  // namespace

TEST_CASE("gguf quant: llama-quantize files run natively within the acceptance bounds") {
  struct FileCase {
    const char* file;
    bool kquant;  // memory bound applies (weights <= 1.1x the GGUF file)
  };
  const FileCase files[] = {{"q4_k_m", true}, {"q5_k_m", true}, {"q6_k", true},  {"q8_0", false},
                            {"q4_0", false},  {"q4_1", false},  {"q5_0", false}, {"q5_1", false},
                            {"q2_k", true},   {"q3_k_m", true}};
  for (const FileCase& f : files) {
    CAPTURE(f.file);
    const std::string path = kQuantData + "tiny_" + f.file + ".gguf";
    const std::vector<uint8_t> gguf = pack::read_file(path);
    const pack::SourceModel src = pack::import_gguf(gguf);
    const pack::AlignedBuffer image(pack::write_ein(
        pack::pack_source(src, src.config.weight_dtype, src.config.group_size, nullptr)));
    RunOptions options;
    options.context = 128;
    einfer_test::AlignedMemory mem = einfer_test::session_memory(image.data, image.size, options);
    Arena arena(mem.base, mem.bytes);
    Session* s = nullptr;
    const Status st = session_create(image.data, image.size, LoadOptions{}, options, arena, &s);
    REQUIRE_MESSAGE(st.ok(), pack::status_text(st));
    const size_t weights = model_weight_bytes(s->model);
    const Acceptance acc =
        run_reference(s, src.config.vocab_size, std::string("tiny_") + f.file + "_ref");
    MESSAGE(std::string(f.file) << ": weight dtype "
                                << std::string(dtype_name(src.config.weight_dtype)) << ", top-1 "
                                << acc.top1 << ", max error / max |logit| " << acc.worst_rel
                                << ", weights / GGUF bytes "
                                << static_cast<double>(weights) / gguf.size());
    CHECK(acc.top1 >= 0.9);
    CHECK(acc.worst_rel <= 0.05);
    if (f.kquant) CHECK(static_cast<double>(weights) <= 1.1 * static_cast<double>(gguf.size()));
  }
}

namespace {
// The GGUF with one tensor's type field rewritten (the field follows the tensor's name, its rank
// and its dims in the tensor info table).
std::vector<uint8_t> with_type(std::vector<uint8_t> b, const std::string& tensor, uint32_t type) {
  const auto it = std::search(b.begin(), b.end(), tensor.begin(), tensor.end());
  REQUIRE(it != b.end());
  const size_t at = static_cast<size_t>(it - b.begin()) + tensor.size();
  uint32_t rank = 0;
  std::memcpy(&rank, &b[at], 4);
  std::memcpy(&b[at + 4 + 8 * rank], &type, 4);
  return b;
}
}  // namespace

TEST_CASE("gguf quant: unsupported types are refused by name; IQ4_NL becomes q8_0 exactly") {
  const std::vector<uint8_t> b = pack::read_file(kQuantData + "tiny_q4_0.gguf");
  try {
    pack::import_gguf(with_type(b, "blk.0.attn_q.weight", 16));
    FAIL("IQ2_XXS accepted");
  } catch (const pack::PackError& e) {
    CHECK(std::string(e.what()) ==
          std::string(
              "gguf: tensor blk.0.attn_q.weight: GGUF type IQ2_XXS not supported (F32, "
              "F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL)"));
  }
  // Q4_0 and IQ4_NL blocks have the same size: the same bytes reread as IQ4_NL.
  auto find = [](const pack::SourceModel& m) -> const pack::SourceTensor& {
    for (const pack::SourceTensor& t : m.tensors)
      if (t.role == TensorRole::w3 && t.layer == 1) return t;
    FAIL("no ffn_up in layer 1");
    return m.tensors[0];
  };
  const pack::SourceModel q40 = pack::import_gguf(b);
  const pack::SourceModel nl = pack::import_gguf(with_type(b, "blk.1.ffn_up.weight", 20));
  CHECK(nl.notes.find("IQ4_NL") != std::string::npos);
  const pack::SourceTensor& raw = find(q40);
  const pack::SourceTensor& conv = find(nl);
  REQUIRE(raw.native == DType::q4_0);
  REQUIRE(conv.native == DType::q8_0);
  REQUIRE(conv.native_data.size() == raw.native_data.size() / 18 * 34);
  static const int kLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                  1,    13,   25,  38,  53,  69,  89,  113};
  for (size_t blk = 0; blk < raw.native_data.size() / 18; blk += 97) {
    const uint8_t* in = &raw.native_data[blk * 18];
    const uint8_t* out = &conv.native_data[blk * 34];
    const float d = gguf_detail::load_f16(in);
    CHECK(std::memcmp(in, out, 2) == 0);
    for (int j = 0; j < 16; ++j) {
      CHECK(static_cast<int8_t>(out[2 + j]) == kLevels[in[2 + j] & 0x0F]);
      CHECK(static_cast<int8_t>(out[18 + j]) == kLevels[in[2 + j] >> 4]);
      CHECK(conv.values[blk * 32 + j] == d * static_cast<float>(kLevels[in[2 + j] & 0x0F]));
    }
  }
}

#endif  // EINFER_HAS_PACK_LIB
