// Runtime ISA dispatch (kernels/isa/isa.h): every level this CPU runs is forced in turn and the
// dispatched kernels' results compared with the scalar level's (the EINFER_SIMD=OFF code path).
// End-to-end greedy ids per level and under emulated older CPUs are ctest tests
// (tests/e2e/CMakeLists.txt).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/attention/attention.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/gemm_quant/gemm_quant.h"
#include "kernels/half/half.h"
#include "kernels/isa/isa.h"
#include "kernels/quant/quant.h"
#include "kernels/rope/rope.h"
#include "kernels/simd/simd.h"
#include "kernels/vec/vec.h"
#include "tests/isa_levels.h"
#include "tests/test_util.h"

using namespace einfer;

namespace {

using einfer_test::Rng;

// Everything one level computes on fixed inputs, flattened.
struct Outputs {
  std::vector<float> values;
  void add(const std::vector<float>& v) { values.insert(values.end(), v.begin(), v.end()); }
  void add(float x) { values.push_back(x); }
};

Outputs run_kernels() {
  Rng rng;
  Outputs o;
  const size_t n = 1003;  // not a multiple of any lane count
  const auto a = rng.vec(n), b = rng.vec(n), w = rng.vec(n);
  o.add(dot_f32(a.data(), b.data(), n));
  o.add(sum_f32(a.data(), n));
  o.add(max_f32(a.data(), n));
  std::vector<float> y(n);
  rmsnorm_f32(a.data(), w.data(), 1e-5f, y.data(), n);
  o.add(y);
  layernorm_f32(a.data(), w.data(), b.data(), 1e-5f, y.data(), n);
  o.add(y);
  silu_f32(a.data(), y.data(), n);
  o.add(y);
  gelu_tanh_f32(a.data(), y.data(), n);
  o.add(y);
  y = a;
  geglu_tanh_f32(y.data(), b.data(), n);
  o.add(y);
  y = a;
  softcap_f32(y.data(), 0.7f, n);
  o.add(y);
  y = a;
  softmax_f32(y.data(), n);
  o.add(y);

  // GEMM through the packed microkernel and GEMV on both weight layouts.
  const int64_t m = 13, nn = 37, k = 71;
  const auto A = rng.vec(m * k), B = rng.vec(k * nn);
  std::vector<float> C(m * nn);
  GemmF32Args g;
  g.m = m, g.n = nn, g.k = k;
  g.a = A.data(), g.a_m = k, g.a_k = 1;
  g.b = B.data(), g.b_k = nn, g.b_n = 1;
  g.c = C.data(), g.c_m = nn, g.c_n = 1;
  std::vector<unsigned char> scratch(gemm_f32_scratch_bytes(m, nn, k) + 64);
  void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  gemm_f32(g, aligned);
  o.add(C);
  std::vector<float> gv(nn);
  gemv_f32(nn, k, B.data(), 1, nn, A.data(), gv.data(), 1, false);  // columns contiguous
  o.add(gv);
  const auto Wr = rng.vec(nn * k);
  gemv_f32(nn, k, Wr.data(), k, 1, A.data(), gv.data(), 1, false);  // rows contiguous
  o.add(gv);

  // Quantized matmul, q8 and q4, GEMV and GEMM rows.
  for (DType dt : {DType::q8, DType::q4}) {
    const int64_t qn = 24, qk = 256;
    const int32_t group = 32;
    std::vector<uint8_t> qw(quant_row_bytes(dt, qk) * qn);
    std::vector<float> qs(qn * quant_groups(qk, group));
    for (int64_t j = 0; j < qn; ++j) {
      const auto row = rng.vec(qk);
      uint8_t* q = qw.data() + j * quant_row_bytes(dt, qk);
      float* s = qs.data() + j * quant_groups(qk, group);
      if (dt == DType::q8)
        quantize_row_q8(row.data(), qk, group, reinterpret_cast<int8_t*>(q), s);
      else
        quantize_row_q4(row.data(), qk, group, q, s);
    }
    TensorView view = make_view(dt, qw.data(), {qn, qk});
    view.scales = qs.data();
    view.group_size = group;
    for (int64_t rows : {int64_t{1}, int64_t{7}}) {
      const auto act = rng.vec(rows * qk);
      std::vector<float> out(rows * qn);
      std::vector<unsigned char> qscratch(matmul_quant_scratch_bytes(rows, qk, group) + 64);
      void* qa = qscratch.data() + (64 - reinterpret_cast<uintptr_t>(qscratch.data()) % 64) % 64;
      REQUIRE(matmul_f32_quant(act.data(), qk, rows, view, out.data(), qn, qa,
                               matmul_quant_scratch_bytes(rows, qk, group))
                  .ok());
      o.add(out);
    }
  }

  // f16 and bf16 weights: the GEMV (1 row) and widen + GEMM (9 rows) paths.
  for (DType dt : {DType::f16, DType::bf16}) {
    const int64_t hn = 21, hk = 83;
    std::vector<uint16_t> hw(hn * hk);
    for (auto& h : hw)
      h = dt == DType::f16 ? f32_to_f16(rng.uniform()) : f32_to_bf16(rng.uniform());
    const TensorView view = make_view(dt, hw.data(), {hn, hk});
    for (int64_t rows : {int64_t{1}, int64_t{9}}) {
      const auto act = rng.vec(rows * hk);
      std::vector<float> out(rows * hn);
      const size_t bytes = matmul_half_scratch_bytes(rows, hn, hk);
      std::vector<unsigned char> hs(bytes + 64);
      void* ha = hs.data() + (64 - reinterpret_cast<uintptr_t>(hs.data()) % 64) % 64;
      REQUIRE(matmul_f32_half(act.data(), hk, rows, view, out.data(), hn, ha, bytes).ok());
      o.add(out);
    }
  }

  // RoPE from the table.
  std::vector<double> rope_mem(rope_table_bytes(64, 16) / sizeof(double) + 1);
  RopeTable table;
  REQUIRE(rope_table_init(&table, rope_mem.data(), rope_table_bytes(64, 16), 64, 16, 10000.f).ok());
  auto x = rng.vec(4 * 64);
  rope_apply(table, RopeLayout::half_split, x.data(), 4, 9);
  o.add(x);

  // Bidirectional attention, a small and a wide head, plain and soft-capped (Gemma 2).
  for (int32_t hd : {16, 64, -16, -64}) {
    AttentionShape sh;
    if (hd < 0) sh.softcap = 0.8f;
    hd = hd < 0 ? -hd : hd;
    sh.n_heads = 4, sh.n_kv_heads = 2, sh.head_dim = hd, sh.causal = false;
    sh.scale = attention_default_scale(hd);
    const int32_t P = 11;
    const auto q = rng.vec(P * 4 * hd), kk = rng.vec(P * 2 * hd), v = rng.vec(P * 2 * hd);
    std::vector<float> out(q.size());
    std::vector<unsigned char> as(attention_scratch_bytes(sh, P, DType::f32) + 64);
    void* aa = as.data() + (64 - reinterpret_cast<uintptr_t>(as.data()) % 64) % 64;
    REQUIRE(attention_f32(sh, q.data(), kk.data(), v.data(), P, 0, nullptr, out.data(), aa,
                          attention_scratch_bytes(sh, P, DType::f32))
                .ok());
    o.add(out);
  }
  return o;
}

int level_index(const char* name) {
  for (int i = 0; i < isa_level_count(); ++i)
    if (std::strcmp(isa_level_name(i), name) == 0) return i;
  return -1;
}

}  // namespace

TEST_CASE("isa: levels, names and errors") {
  REQUIRE(isa_level_count() >= 1);
  CHECK(isa_select("no-such-level").code == StatusCode::invalid_argument);
  CHECK(isa_select(nullptr).code == StatusCode::invalid_argument);
  CHECK(isa_level_supported(0));  // the lowest level runs everywhere
  CHECK(std::strcmp(isa_level_name(isa_level_count()), "") == 0);
  const std::string before = isa_name();
  REQUIRE(isa_select("best").ok());
  int best = -1;
  for (int i = 0; i < isa_level_count(); ++i)
    if (isa_level_supported(i)) best = i;
  CHECK(std::string(isa_name()).rfind(isa_level_name(best), 0) == 0);  // plus its extensions
  for (int ext = 0; ext < isa_extension_count(); ++ext) {
    const bool has = std::string(isa_name()).find(std::string("+") + isa_extension_name(ext)) !=
                     std::string::npos;
    CHECK(has == isa_extension_supported(best, ext));
  }
  CHECK(isa_select("best+avx512vnni").code == StatusCode::invalid_argument);
  CHECK(isa_select((std::string(isa_level_name(0)) + "+no-such-extension").c_str()).code ==
        StatusCode::invalid_argument);
  if (isa_extension_count() > 0) {
    // Extensions belong to the AVX2 code: the lowest level has no kernels for them.
    CHECK(!isa_extension_supported(0, 0));
    CHECK(isa_select((std::string(isa_level_name(0)) + "+" + isa_extension_name(0)).c_str()).code ==
          StatusCode::invalid_argument);
  }
  if (isa_dispatches()) {
    // x86-64: scalar, sse2, avx2; aarch64: scalar, neon, dotprod, i8mm.
#if defined(__aarch64__)
    CHECK(isa_level_count() == 4);
    CHECK(std::strcmp(isa_level_name(3), "i8mm") == 0);
#else
    CHECK(isa_level_count() == 3);
#endif
    CHECK(std::strcmp(isa_level_name(0), "scalar") == 0);
    REQUIRE(isa_select("scalar").ok());
    CHECK(std::strcmp(simd_arch_name(), "scalar") == 0);
    CHECK(simd_float_lanes() == 1);
    REQUIRE(isa_select(isa_level_name(1)).ok());  // the baseline level: SIMD on every CPU
    CHECK(std::strcmp(simd_arch_name(), "scalar") != 0);
    CHECK(simd_float_lanes() == 4);
    if (level_index("avx2") >= 0 && isa_level_supported(level_index("avx2"))) {
      REQUIRE(isa_select("avx2").ok());
      CHECK(std::strcmp(isa_name(), "avx2") == 0);
      CHECK(!isa_extension_enabled(IsaExtension::avx512vnni));
      CHECK(std::strcmp(simd_arch_name(), "fma3+avx2") == 0);
      CHECK(std::strcmp(gemm_f32_kernel_name(), "gemm_f32_6x16_avx2") == 0);
      if (isa_extension_supported(level_index("avx2"), 0)) {
        REQUIRE(isa_select("avx2+avx512vnni").ok());
        CHECK(std::strcmp(isa_name(), "avx2+avx512vnni") == 0);
        CHECK(isa_extension_enabled(IsaExtension::avx512vnni));
        CHECK(std::strcmp(gemm_f32_kernel_name(), "gemm_f32_8x32_avx512") == 0);
      } else {
        CHECK(isa_select("avx2+avx512vnni").code == StatusCode::unsupported);
      }
      // amx: only with AVX-512 VNNI under it; named after the others when combined.
      if (isa_extension_supported(level_index("avx2"), 2)) {
        CHECK(std::strcmp(isa_extension_name(2), "amx") == 0);
        CHECK(isa_extension_supported(level_index("avx2"), 0));
        REQUIRE(isa_select("avx2+avx512vnni+amx").ok());
        CHECK(std::strcmp(isa_name(), "avx2+avx512vnni+amx") == 0);
        CHECK(isa_extension_enabled(IsaExtension::amx));
      } else {
        CHECK_FALSE(isa_select("avx2+amx").ok());  // unsupported (CPU) or no kernels (clang)
      }
    }
  }
  REQUIRE(isa_select(before.c_str()).ok());
}

TEST_CASE("isa: every level this CPU runs agrees with the scalar level") {
  const std::string before = isa_name();
  const int scalar = level_index("scalar");
  if (scalar < 0 || isa_level_count() == 1) {
    MESSAGE("skipped: this build has the single level " << isa_level_name(0));
    return;
  }
  REQUIRE(isa_select("scalar").ok());
  const Outputs ref = run_kernels();
  int compared = 0;
  for (int level = 0; level < isa_level_count(); ++level)
    if (!isa_level_supported(level))
      MESSAGE("level " << isa_level_name(level) << " not supported by this CPU: not compared");
  for (const std::string& name : einfer_test::isa_selections()) {
    if (name == "scalar") continue;
    CAPTURE(name);
    REQUIRE(isa_select(name.c_str()).ok());
    CHECK(name == isa_name());
    const Outputs got = run_kernels();
    REQUIRE(got.values.size() == ref.values.size());
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < ref.values.size(); ++i) {
      const float r = ref.values[i], g = got.values[i];
      if (!(std::fabs(r - g) <= 2e-4f * (1.f + std::fabs(r)))) {
        if (bad++ == 0) first_bad = i;
      }
    }
    CAPTURE(first_bad);
    CHECK(bad == 0);
    ++compared;
  }
  CHECK(compared >= 1);
  REQUIRE(isa_select(before.c_str()).ok());
}
