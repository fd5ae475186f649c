// matmul_f32_quant (SIMD microkernels where the build has them) against the scalar int path and the
// float dequantizing reference, over odd shapes, tails, strided A/C and both weight encodings.
#include <doctest/doctest.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/gemm_quant/gemm_quant.h"
#include "kernels/gemm_quant/gemm_quant_internal.h"
#include "kernels/isa/isa.h"
#include "kernels/quant/quant.h"
#include "tests/isa_levels.h"
#include "tests/quant_weights.h"
#include "tests/test_util.h"

using namespace einfer;

namespace {

using einfer_test::make_weights;
using einfer_test::QWeights;
using einfer_test::Rng;

float weight_value(const TensorView& w, int64_t j, int64_t e) {
  const int64_t k = w.shape[1];
  const auto* q = static_cast<const uint8_t*>(w.data) + j * quant_row_bytes(w.dtype, k);
  const float s = w.scales[j * quant_groups(k, w.group_size) + e / w.group_size];
  if (w.dtype == DType::q8) return static_cast<float>(static_cast<int8_t>(q[e])) * s;
  const int u = (e & 1) ? (q[e / 2] >> 4) : (q[e / 2] & 0x0F);
  return static_cast<float>(u - 8) * s;
}

void check_case(DType dt, int64_t m, int64_t n, int64_t k, int32_t group, bool raw, Rng& rng) {
  CAPTURE(dtype_name(dt));
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  CAPTURE(group);
  CAPTURE(raw);
  const QWeights w = make_weights(dt, n, k, group, raw, rng);
  const int64_t lda = k + 3, ldc = n + 2;  // A rows start misaligned; C has a gap per row
  std::vector<float> a(static_cast<size_t>(m * lda + 1));
  for (auto& x : a) x = rng.uniform() * 3.f;
  const size_t sb = matmul_quant_scratch_bytes(m, k, group);
  std::vector<uint8_t> scratch(sb + 1);
  void* scratch_ptr = scratch.data() + 1;  // the kernels align the scratch themselves
  const float sentinel = -12345.f;
  std::vector<float> c_simd(static_cast<size_t>(m * ldc), sentinel), c_int(c_simd), c_ref(c_simd);
  REQUIRE(matmul_f32_quant(a.data(), lda, m, w.view, c_simd.data(), ldc, scratch_ptr, sb).ok());
  REQUIRE(
      scalar::matmul_f32_quant_int8(a.data(), lda, m, w.view, c_int.data(), ldc, scratch_ptr, sb)
          .ok());
  scalar::matmul_f32_quant_reference(a.data(), lda, m, w.view, c_ref.data(), ldc);

  const int64_t groups = quant_groups(k, group);
  for (int64_t i = 0; i < m; ++i) {
    // Activation scale of each group, computed here independently of the kernels.
    std::vector<float> sa(static_cast<size_t>(groups));
    for (int64_t g = 0; g < groups; ++g) {
      float amax = 0.f;
      for (int64_t e = g * group; e < k && e < (g + 1) * group; ++e) {
        amax = std::fmax(amax, std::fabs(a[i * lda + e]));
      }
      sa[g] = amax / 127.f;
    }
    for (int64_t j = 0; j < n; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      double t = 0.0, qerr = 0.0;
      for (int64_t e = 0; e < k; ++e) {
        const double wv = std::fabs(weight_value(w.view, j, e));
        t += (std::fabs(a[i * lda + e]) + sa[e / group] / 2) * wv;
        qerr += sa[e / group] * wv;
      }
      const float simd = c_simd[i * ldc + j], sint = c_int[i * ldc + j], ref = c_ref[i * ldc + j];
      // SIMD vs scalar int: identical int32 group sums and scale products; only the float
      // summation order differs (8 lanes + horizontal add vs sequential), each at most
      // (groups + 4) roundings of terms bounded by T = sum_k (|a_k| + s_a(g)/2) |w_k|.
      const double tol_int = 2.0 * static_cast<double>(groups + 4) * FLT_EPSILON * t + 1e-30;
      CHECK(std::fabs(static_cast<double>(simd) - sint) <= tol_int);
      // Both vs float reference: weights are exact in both, activations are rounded to the
      // nearest multiple of s_a(g): |q_a * s_a - a| <= s_a / 2 (+ 1e-4 s_a for inv = 1 / s_a in
      // float and the clamp at 127), so |err| <= sum_k |w_k| s_a(g_k) (1/2 + 1e-4) plus float
      // rounding of the reference's k-term sum and of the group sums: (k + 2 (groups + 4)) eps T.
      const double tol_ref =
          qerr * (0.5 + 1e-4) + static_cast<double>(k + 2 * (groups + 4)) * FLT_EPSILON * t + 1e-30;
      CHECK(std::fabs(static_cast<double>(sint) - ref) <= tol_ref);
      CHECK(std::fabs(static_cast<double>(simd) - ref) <= tol_ref);
    }
    for (int64_t j = n; j < ldc; ++j) CHECK(c_simd[i * ldc + j] == sentinel);  // gap untouched
  }
}

}  // namespace

TEST_CASE("matmul_quant: q8 and q4 SIMD == scalar int path ~= float reference, odd shapes") {
  Rng rng{0x9E3779B97F4A7C15ull};
  const int64_t ms[] = {1, 2, 3, 5, 8, 17};
  const int64_t ns[] = {1, 3, 8, 13};
  const int64_t ks[] = {1, 31, 32, 33, 64, 100, 172, 257};
  struct Cfg {
    DType dt;
    int32_t group;
  };
  // group 48 and 16 are not multiples of the SIMD chunk: they take the scalar int path.
  const Cfg cfgs[] = {{DType::q8, 32}, {DType::q8, 64}, {DType::q4, 32},
                      {DType::q4, 64}, {DType::q8, 48}, {DType::q4, 16}};
  for (const Cfg& cfg : cfgs) {
    for (int64_t m : ms) {
      for (int64_t n : ns) {
        for (int64_t k : ks) check_case(cfg.dt, m, n, k, cfg.group, (m + n + k) % 2 == 0, rng);
      }
    }
  }
}

TEST_CASE("matmul_quant: larger GEMV and GEMM shapes with the q4 group limit") {
  Rng rng{42};
  check_case(DType::q8, 1, 67, 1000, 32, false, rng);
  check_case(DType::q4, 1, 67, 1000, 32, true, rng);
  check_case(DType::q8, 33, 21, 515, 64, true, rng);
  check_case(DType::q4, 33, 21, 515, 256, false, rng);  // 8 chunks per group: int16 headroom edge
  check_case(DType::q4, 6, 5, 700, 288, true, rng);     // 9 chunks: NEON takes the scalar int path
}

TEST_CASE("matmul_quant: AVX2 tiles, steps and group boundaries") {
  Rng rng{7};
  // GEMV runs 1 x 8 tiles (4-row blocks, tail rows repeat the last row but are not stored) or the
  // 4-row q8 kernel (groups of 32, K not whole blocks of 8 groups), GEMM 4 x 2 (AVX2) or 4 x 4
  // (AVX-512 VNNI) tiles; q4 steps cover 64 elements, so groups of 96 change inside a step and k =
  // 172 ends in a short group and a half-empty step.
  const int64_t ns[] = {4, 7, 8, 9, 16, 21};
  const int64_t ks[] = {32, 64, 96, 160, 172, 300};
  for (DType dt : {DType::q8, DType::q4}) {
    for (int32_t group : {32, 96, 128}) {
      for (int64_t m : {1, 4, 6}) {
        for (int64_t n : ns) {
          for (int64_t k : ks) check_case(dt, m, n, k, group, (n + k) % 3 == 0, rng);
        }
      }
    }
  }
  // Rows longer than the GEMV prefetch distance, and a GEMM block with m up to 128 (prefill).
  check_case(DType::q8, 1, 19, 4160, 32, true, rng);
  check_case(DType::q4, 1, 19, 4160, 32, false, rng);
  check_case(DType::q8, 128, 9, 200, 32, false, rng);
  check_case(DType::q4, 128, 9, 200, 32, true, rng);
  // More than one K chunk of the prefill kernels (256 steps: 8192 q8 or 16384 q4 elements).
  check_case(DType::q8, 5, 6, 9000, 32, false, rng);
  check_case(DType::q4, 5, 6, 17000, 64, true, rng);
}

TEST_CASE("matmul_quant: every ISA level and extension against the reference") {
  // The tests above ran the build's best selection (e.g. the AVX-512 VNNI kernels where the CPU
  // has them); these shapes run every other one too (on a VNNI CPU the AVX2 4 x 2 tiles, q4 steps
  // over group boundaries, K chunks of 256 steps; the q4 decode GEMV with half a step at the end
  // of a row, k = 270 and 288, row tails of 1-3 bytes past whole int32s; the q8 decode GEMVs,
  // 8-group rows at k = 256; and the baseline SSE2 / NEON kernels).
  einfer_test::for_each_isa([&](const std::string&) {
    Rng rng{11};
    for (DType dt : {DType::q8, DType::q4}) {
      for (int32_t group : {32, 64, 96}) {
        for (int64_t m : {1, 2, 5, 8}) {
          for (int64_t n : {1, 3, 4, 7}) {
            for (int64_t k : {32, 96, 172, 256, 270, 288, 300})
              check_case(dt, m, n, k, group, (n + k) % 2 == 0, rng);
          }
        }
      }
      // Whole 16 x 16 AMX tiles and partial ones, several activation tiles, and at k = 4096
      // more activation rows than the AMX kernel's buffer holds at once (several passes).
      for (int32_t group : {32, 64})
        for (int64_t k : {256, 288, 4096}) check_case(dt, 37, 35, k, group, k == 288, rng);
      check_case(dt, 6, 5, 9000, 32, true, rng);              // more than one K chunk
      check_case(dt, 1, 19, 4160, 32, dt == DType::q8, rng);  // GEMV past the prefetch distance
      check_case(dt, 1, 9, 4160, 32, false, rng);  // GEMV rows past the prefetch distance
    }
  });
}

namespace {

// Each activation group holds +-127 so s_a = 1 and q_a = a exactly; weight scales are powers of
// two, so every path must return sum_k a_k w_k exactly (all partial sums are small integers).
void check_exact_case(int64_t m, int64_t n, int64_t k) {
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  const int32_t group = 32;
  std::vector<float> a(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t e = 0; e < k; ++e) {
      a[i * k + e] = (e % group == 0) ? 127.f : static_cast<float>(((i * 31 + e * 7) % 41) - 20);
    }
  }
  for (DType dt : {DType::q8, DType::q4}) {
    CAPTURE(dtype_name(dt));
    const size_t rb = quant_row_bytes(dt, k);
    std::vector<uint8_t> wq(rb * n);
    std::vector<float> ws(static_cast<size_t>(n * quant_groups(k, group)));
    std::vector<int> wint(static_cast<size_t>(n * k));
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t e = 0; e < k; ++e) {
        int v = static_cast<int>((j * 13 + e * 5) % 15) - 7;
        if (dt == DType::q8) v *= 9;
        wint[j * k + e] = v;
        if (dt == DType::q8) {
          wq[j * rb + e] = static_cast<uint8_t>(static_cast<int8_t>(v));
        } else {
          const uint8_t u = static_cast<uint8_t>(v + 8);
          uint8_t& b = wq[j * rb + e / 2];
          b = (e & 1) ? static_cast<uint8_t>((b & 0x0F) | (u << 4))
                      : static_cast<uint8_t>((b & 0xF0) | u);
        }
      }
    }
    for (size_t g = 0; g < ws.size(); ++g) ws[g] = (g % 2) ? 0.5f : 2.f;
    TensorView w = make_view(dt, wq.data(), {n, k});
    w.scales = ws.data();
    w.group_size = group;
    std::vector<float> c(static_cast<size_t>(m * n)), ci(c);
    std::vector<uint8_t> scratch(matmul_quant_scratch_bytes(m, k, group));
    REQUIRE(matmul_f32_quant(a.data(), k, m, w, c.data(), n, scratch.data(), scratch.size()).ok());
    REQUIRE(scalar::matmul_f32_quant_int8(a.data(), k, m, w, ci.data(), n, scratch.data(),
                                          scratch.size())
                .ok());
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double expect = 0;
        for (int64_t e = 0; e < k; ++e) {
          expect += a[i * k + e] * wint[j * k + e] * ws[j * quant_groups(k, group) + e / group];
        }
        CHECK(c[i * n + j] == expect);
        CHECK(ci[i * n + j] == expect);
      }
    }
  }
}

}  // namespace

TEST_CASE("matmul_quant: exactly representable case gives the exact integer result") {
  check_exact_case(3, 4, 72);
}

TEST_CASE("matmul_quant: the q4 decode GEMV's blocks and tails on every ISA selection") {
  // The x86 q4 GEMV folds each row's int32 lanes over blocks of 4 steps (256 elements), runs the
  // steps past the last block one at a time, and ends a row of half a step (k % 64 == 32, the
  // 15M shape's k = 288) with the 16-byte step of 4 rows at once; rows past the last 4-row pass
  // take the 1-row path. k: whole blocks (256, 768, 2048), a block and half a step (288), a
  // block and steps (320, 448), and half a step after them (352, 480), 1-3 bytes past whole
  // int32s (300); n: 8-row passes where K < 512 (9, 13, 14), 4-row ones and 1-3 rows more.
  einfer_test::for_each_isa([&](const std::string&) {
    Rng rng{31};
    for (int64_t n : {1, 4, 5, 7, 9, 14}) {
      for (int64_t k : {256, 288, 300, 320, 352, 448, 480, 768, 2048})
        check_case(DType::q4, 1, n, k, 32, (n + k) % 2 == 0, rng);
    }
    for (int64_t n : {5, 13})
      for (int64_t k : {288, 352, 768}) check_exact_case(1, n, k);
  });
}

TEST_CASE("matmul_quant: activation quantization and the even/odd chunk order") {
  float a[70];
  for (int e = 0; e < 70; ++e) a[e] = static_cast<float>(e - 35) * 0.25f;
  a[3] = 0.f;
  int8_t qa[96] = {};
  float sa[3];
  quant_detail::quantize_activations_q8(a, 70, 32, qa, sa);
  for (int g = 0; g < 3; ++g) {
    float amax = 0.f;
    for (int e = g * 32; e < 70 && e < g * 32 + 32; ++e) amax = std::fmax(amax, std::fabs(a[e]));
    CHECK(sa[g] == amax / 127.f);
  }
  CHECK(qa[0] == -127);  // the group absmax maps to -+127
  CHECK(qa[3] == 0);
  for (int e = 0; e < 70; ++e) CHECK(std::fabs(qa[e] * sa[e / 32] - a[e]) <= sa[e / 32] * 0.5001f);
#if EINFER_HAS_SIMD && (defined(__AVX2__) || defined(__aarch64__))
  // The SIMD twins (AVX2, NEON): the same bytes and scales as the scalar function, bit for bit,
  // over groups with and without a scalar tail, ties (x.5 after scaling), zero groups and groups
  // below 127 FLT_MIN; AVX2 rows of whole groups (k = 288, 768, 96) take its batched path, and
  // more than 512 groups (4160 / 8) not. NEON also one group at a time into the blocked orders'
  // chunks (16 bytes stride 64, 8 bytes stride 16) with its sum.
  {
    Rng rng{99};
    constexpr int kMax = 4160;
    static float x[kMax];
    for (int e = 0; e < kMax; ++e) x[e] = rng.uniform() * (e % 7 == 0 ? 40.f : 1.f);
    for (int e = 0; e < 20; ++e) x[e] = static_cast<float>(e - 10) * 12.7f / 2.f;  // ties
    for (int e = 100; e < 140; ++e) x[e] = 0.f;
    for (int e = 3000; e < 3100; ++e) x[e] = 1e-40f * static_cast<float>(e - 3050);  // denormals
    for (int32_t group : {32, 8, 12, 64, 96}) {
      for (int64_t k : {300, 257, 31, 1, 288, 768, 96, kMax}) {
        CAPTURE(group);
        CAPTURE(k);
        static int8_t q_s[kMax], q_v[kMax];
        static float s_s[kMax], s_v[kMax];
        quant_detail::quantize_activations_q8(x, k, group, q_s, s_s);
#if defined(__AVX2__)
        quant_detail::quantize_activations_q8_avx2(x, k, group, q_v, s_v);
#else
        quant_detail::quantize_activations_q8_neon(x, k, group, q_v, s_v);
#endif
        CHECK(std::memcmp(q_s, q_v, static_cast<size_t>(k)) == 0);
        CHECK(std::memcmp(s_s, s_v, sizeof(float) * static_cast<size_t>(quant_groups(k, group))) ==
              0);
#if defined(__aarch64__)
        if (group % 16 != 0) continue;
        for (int chunk : {16, 8}) {
          const int64_t stride = chunk == 16 ? 64 : 16;
          for (int64_t g0 = 0; g0 < k; g0 += group) {
            const int32_t n = static_cast<int32_t>(k - g0 < group ? k - g0 : group);
            static int8_t blk[kMax * 4];
            int32_t sum = 0;
            const float sc = quant_detail::quantize_group_chunked_neon(x + g0, n, group, chunk,
                                                                       stride, blk, &sum);
            CHECK(std::memcmp(&sc, &s_s[g0 / group], 4) == 0);
            int32_t want = 0;
            for (int32_t e = 0; e < group; ++e) {
              const int8_t v = e < n ? q_s[g0 + e] : 0;
              want += v;
              CHECK(blk[e / chunk * stride + e % chunk] == v);
            }
            CHECK(sum == want);
          }
        }
#endif
      }
    }
  }
#endif
  int8_t seq[128];
  for (int e = 0; e < 64; ++e) seq[e] = static_cast<int8_t>(e);
  quant_detail::permute_chunks_even_odd(seq, 64);
  for (int c = 0; c < 2; ++c) {
    for (int e = 0; e < 16; ++e) {
      CHECK(seq[c * 32 + e] == c * 32 + 2 * e);
      CHECK(seq[c * 32 + 16 + e] == c * 32 + 2 * e + 1);
    }
  }
  for (int e = 0; e < 128; ++e) seq[e] = static_cast<int8_t>(e - 64);
  int32_t csum[4];
  quant_detail::chunk_sums_times8(seq, 128, csum);
  for (int c = 0; c < 4; ++c) {
    int32_t s = 0;
    for (int e = 0; e < 32; ++e) s += c * 32 + e - 64;
    CHECK(csum[c] == 8 * s);
  }
  quant_detail::permute_blocks_even_odd64(seq, 128);
  for (int b = 0; b < 2; ++b) {
    for (int e = 0; e < 32; ++e) {
      CHECK(seq[b * 64 + e] == b * 64 + 2 * e - 64);
      CHECK(seq[b * 64 + 32 + e] == b * 64 + 2 * e + 1 - 64);
    }
  }
}

TEST_CASE("matmul_quant: bad arguments get a clear status") {
  int8_t wq[64] = {};
  float ws[2] = {1.f, 1.f};
  float a[64] = {}, c[4] = {};
  TensorView w = make_view(DType::q8, wq, {2, 32});
  w.scales = ws;
  w.group_size = 32;
  alignas(64) uint8_t scratch[1024];
  const size_t need = matmul_quant_scratch_bytes(2, 32, 32);
  REQUIRE(need <= sizeof scratch);
  CHECK(matmul_f32_quant(a, 32, 2, w, c, 2, scratch, need).ok());
  Status s = matmul_f32_quant(a, 32, 2, w, c, 2, scratch, need - 1);
  CHECK(s.code == StatusCode::out_of_memory);
  CHECK(s.need == static_cast<int64_t>(need));
  CHECK(matmul_f32_quant(a, 16, 2, w, c, 2, scratch, need).code == StatusCode::shape_mismatch);
  CHECK(matmul_f32_quant(a, 32, 2, w, c, 1, scratch, need).code == StatusCode::shape_mismatch);
  TensorView wf = w;
  wf.dtype = DType::f32;
  CHECK(matmul_f32_quant(a, 32, 2, wf, c, 2, scratch, need).code == StatusCode::invalid_argument);
  TensorView wg = w;
  wg.group_size = 0;
  CHECK(matmul_f32_quant(a, 32, 2, wg, c, 2, scratch, need).code == StatusCode::invalid_argument);
  TensorView wn = w;
  wn.scales = nullptr;
  CHECK(matmul_f32_quant(a, 32, 2, wn, c, 2, scratch, need).code == StatusCode::invalid_argument);
}

TEST_CASE("matmul_quant: the exact prefill GEMMs equal the scalar int twin bit for bit") {
  // On selections whose prefill kernel promises the scalar twin's bits (AVX2:
  // gemm_q8_q4_3x16_avx2.cpp; AVX-512 VNNI without AMX: gemm_q8_q4_8x16_avx512vnni.cpp), every
  // element of a GEMM (m > 1), and of its column and row block forms (the threaded splits), equals
  // the scalar int path's: q8 and q4, groups of 32 to 1024, k tails inside a chunk and inside a
  // group, several K slices (k > 1024), column tails of the 8- and 16-lane tiles and row tails of
  // the 4- and 8-row tiles.
  // AVX2 q8 adds its madd results as integers or as floats (IsaTuning::x86_float_add_accumulate),
  // so the selections run with each, and with MXCSR flushing denormals (the float form must fall
  // back: its sums are denormal floats).
  const bool tuned = isa_tuning_enabled(IsaTuning::x86_float_add_accumulate);
  struct Mode {
    bool fadd;
    unsigned mxcsr_or;
  };
  const Mode modes[] = {{false, 0u}, {true, 0u}, {true, 0x8040u}};
  for (const Mode mode : modes) {
    isa_set_tuning(IsaTuning::x86_float_add_accumulate, mode.fadd);
    CAPTURE(mode.fadd);
    CAPTURE(mode.mxcsr_or);
    einfer_test::for_each_isa([&](const std::string& name) {
      if (std::string(isa_name()).rfind("avx2", 0) != 0 ||
          isa_extension_enabled(IsaExtension::amx)) {
        return;
      }
      CAPTURE(name);
      Rng rng{23};
      struct Shape {
        int64_t m, n, k;
        int32_t group;
      };
      const Shape shapes[] = {{2, 1, 32, 32},       {9, 17, 288, 32},   {17, 33, 300, 64},
                              {8, 16, 270, 96},     {23, 40, 1000, 32}, {5, 31, 2500, 64},
                              {13, 20, 3000, 1024}, {128, 48, 768, 32}, {3, 5, 33, 32}};
      for (DType dt : {DType::q8, DType::q4}) {
        for (const Shape& s : shapes) {
          CAPTURE(dtype_name(dt));
          CAPTURE(s.m);
          CAPTURE(s.n);
          CAPTURE(s.k);
          CAPTURE(s.group);
          QWeights w = make_weights(dt, s.n, s.k, s.group, (s.n + s.k) % 2 == 0, rng);
          if (dt == DType::q8) {  // -128, which GGUF Q8_0 imports may hold (the AVX2 |w| edge)
            for (size_t b = 0; b < w.data.size(); b += 7) w.data[b] = 0x80;
          }
          std::vector<float> a(static_cast<size_t>(s.m * s.k));
          for (auto& x : a) x = rng.uniform() * 2.f;
          const size_t sb = matmul_quant_scratch_bytes(s.m, s.k, s.group);
          std::vector<uint8_t> scratch(sb);
          std::vector<float> c(static_cast<size_t>(s.m * s.n)), ci(c), cc(c), cr(c);
#if defined(__x86_64__)
          const unsigned mxcsr = _mm_getcsr();
          _mm_setcsr(mxcsr | mode.mxcsr_or);
#endif
          REQUIRE(
              matmul_f32_quant(a.data(), s.k, s.m, w.view, c.data(), s.n, scratch.data(), sb).ok());
          // Column blocks of 16 and row blocks of 4, as the threaded forms split them.
          REQUIRE(matmul_quant_rows(a.data(), s.k, s.m, w.view, 0, s.m, scratch.data(), sb).ok());
          for (int64_t j0 = 0; j0 < s.n; j0 += 16) {
            const int64_t j1 = j0 + 16 < s.n ? j0 + 16 : s.n;
            REQUIRE(
                matmul_quant_columns(s.m, w.view, cc.data(), s.n, j0, j1, scratch.data(), sb).ok());
          }
          for (int64_t r0 = 0; r0 < s.m; r0 += 4) {
            int64_t r1 = r0 + 4 < s.m ? r0 + 4 : s.m;
            if (s.m - r1 == 1) r1 = s.m;  // no lone last row (it would take the GEMV)
            REQUIRE(matmul_quant_row_block(s.m, w.view, cr.data(), s.n, r0, r1, scratch.data(), sb)
                        .ok());
            r0 = r1 - 4;
          }
          REQUIRE(scalar::matmul_f32_quant_int8(a.data(), s.k, s.m, w.view, ci.data(), s.n,
                                                scratch.data(), sb)
                      .ok());
#if defined(__x86_64__)
          _mm_setcsr(mxcsr);
#endif
          CHECK(std::memcmp(c.data(), ci.data(), c.size() * sizeof(float)) == 0);
          CHECK(std::memcmp(cc.data(), ci.data(), c.size() * sizeof(float)) == 0);
          CHECK(std::memcmp(cr.data(), ci.data(), c.size() * sizeof(float)) == 0);
        }
      }
    });
  }
  isa_set_tuning(IsaTuning::x86_float_add_accumulate, tuned);
}

TEST_CASE("matmul_quant: AVX2 q8 float-add sums at their bound (groups of 256, extreme values)") {
  // With w + 128 = 255 and a + 128 = 255 every madd gives 2 * 255 * 255; a group of 256 starts
  // from T - 128 sum(w) = 32768 and adds 128 of them: 16679168, just below 2^24, where the float
  // form is still exact. Its opposite extreme, w = -128 against a = -127, adds zeros to the
  // largest start (8388608). Both forms must give the twin's bits.
  const bool tuned = isa_tuning_enabled(IsaTuning::x86_float_add_accumulate);
  for (const bool fadd : {false, true}) {
    isa_set_tuning(IsaTuning::x86_float_add_accumulate, fadd);
    einfer_test::for_each_isa([&](const std::string& name) {
      CAPTURE(name);
      CAPTURE(fadd);
      for (const int32_t group : {32, 256}) {
        for (const int sign : {1, -1}) {
          const int64_t m = 6, n = 16, k = 512;
          std::vector<uint8_t> wq(static_cast<size_t>(n * k), sign > 0 ? 127 : 0x80);
          std::vector<float> ws(static_cast<size_t>(n * (k / group)), 0.5f);
          TensorView w = make_view(DType::q8, wq.data(), {n, k});
          w.scales = ws.data();
          w.group_size = group;
          std::vector<float> a(static_cast<size_t>(m * k), static_cast<float>(sign) * 3.f);
          const size_t sb = matmul_quant_scratch_bytes(m, k, group);
          std::vector<uint8_t> scratch(sb);
          std::vector<float> c(static_cast<size_t>(m * n)), ci(c);
          REQUIRE(matmul_f32_quant(a.data(), k, m, w, c.data(), n, scratch.data(), sb).ok());
          REQUIRE(scalar::matmul_f32_quant_int8(a.data(), k, m, w, ci.data(), n, scratch.data(), sb)
                      .ok());
          CHECK(std::memcmp(c.data(), ci.data(), c.size() * sizeof(float)) == 0);
          // The exact value: each product is 127 * 127 (or 128 * 127) times the scales.
          CHECK(c[0] == doctest::Approx(static_cast<double>(k) * (sign > 0 ? 127 : 128) * 127 *
                                        0.5 * (3.0 / 127))
                            .epsilon(1e-5));
        }
      }
    });
  }
  isa_set_tuning(IsaTuning::x86_float_add_accumulate, tuned);
}

#if defined(__x86_64__)
TEST_CASE("matmul_quant: the x86 decode GEMVs equal their lane-order scalar twin bit for bit") {
  // gemv_q8/q4_1x4_{avx2,avx512vnni} sum each row in 8 float lanes (q4: blocks of 8 groups, steps
  // of 2, a last half step) and add the lanes at the end; gemv_q8/q4_1x4_lanes_scalar does the
  // same operations in plain C++. k: one group, partial groups (40, 300, 1000), whole blocks
  // (256, 768, 2048), a block and half a step (288), a block and steps (320, 448), half a step
  // after them (352, 480); n: 4-row passes and the 1-row path after them.
  int checked = 0;
  bool avx2 = false;  // an AVX2 selection ran: the GEMVs must have been compared
  einfer_test::for_each_isa([&](const std::string& isa) {
    CAPTURE(isa);
    avx2 = avx2 || isa.rfind("avx2", 0) == 0;
    Rng rng{47};
    for (DType dt : {DType::q8, DType::q4}) {
      for (int64_t k : {32, 40, 64, 96, 256, 288, 300, 320, 352, 448, 480, 768, 1000, 2048}) {
        const std::string kernel =
            matmul_quant_kernel_name(dt, WeightLayout::rows, k, 32, 1, nullptr);
        if (kernel.rfind("gemv_q8_1x4_", 0) != 0 && kernel.rfind("gemv_q4_1x4_", 0) != 0) continue;
        for (int64_t n : {1, 3, 4, 5, 7, 9, 14, 33}) {
          CAPTURE(kernel);
          CAPTURE(k);
          CAPTURE(n);
          QWeights w = make_weights(dt, n, k, 32, (n + k) % 2 == 0, rng);
          if (dt == DType::q8) {  // -128 (GGUF Q8_0 imports may hold it)
            for (size_t b = 0; b < w.data.size(); b += 5) w.data[b] = 0x80;
          }
          std::vector<float> a(static_cast<size_t>(k));
          for (auto& x : a) x = rng.uniform() * 2.f;
          const size_t sb = matmul_quant_scratch_bytes(1, k, 32);
          std::vector<uint8_t> scratch(sb);
          std::vector<float> c(static_cast<size_t>(n), -1.f), twin(c);
          REQUIRE(matmul_f32_quant(a.data(), k, 1, w.view, c.data(), n, scratch.data(), sb).ok());
          REQUIRE(
              scalar::matmul_f32_quant_gemv_lanes(a.data(), w.view, twin.data(), scratch.data(), sb)
                  .ok());
          CHECK(std::memcmp(c.data(), twin.data(), c.size() * sizeof(float)) == 0);
          ++checked;
        }
      }
    }
  });
  if (avx2) {
    CHECK(checked > 0);
  } else {
    MESSAGE("no AVX2 selection on this build or CPU: the x86 decode GEMVs do not run here");
  }
}
#endif  // __x86_64__
