// The x86 decode GEMVs of the 8x4 weight layout (kernels/gemm_quant/x86/gemv_q8_q4_8x4_*.cpp):
// matmul_f32_quant with one activation row on 8x4 weights gives the bits of the generic kernel
// gemm_q8/q4_interleaved_scalar (scalar::matmul_f32_quant_int8 on the same view) on every ISA
// selection: whole and partial groups, a last tile of 1-7 real rows, raw random bytes (q8 -128, q4
// nibbles 0 and 15) and quantized floats, groups of 32 to 256, and threads splitting the columns.
// On the avx2 selections the kernel name proves the GEMV ran, not the generic kernel.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/gemm_quant/gemm_quant.h"
#include "kernels/quant/quant.h"
#include "runtime/layout.h"
#include "tests/isa_levels.h"
#include "tests/quant_weights.h"

using namespace einfer;

#if EINFER_LAYOUTS
namespace {

using einfer_test::Rng;

struct Laid8x4 {
  std::vector<uint8_t> bytes;
  TensorView view;
};

Laid8x4 lay_out_8x4(const einfer_test::QWeights& rows) {
  Laid8x4 out;
  const TensorView& v = rows.view;
  const WeightLayout l = WeightLayout::i8x4;
  out.bytes.resize(layout_data_bytes(v.dtype, l, v.shape[0], v.shape[1], v.group_size) + 3);
  REQUIRE(quant_to_layout(v, l, out.bytes.data() + 3, out.bytes.size() - 3).ok());
  out.view = v;
  out.view.data = out.bytes.data() + 3;  // unaligned on purpose
  out.view.scales = nullptr;
  out.view.layout = l;
  return out;
}

// Activations with a spread of magnitudes (some groups tiny, one exactly zero).
std::vector<float> activations(int64_t k, Rng& rng) {
  std::vector<float> a(static_cast<size_t>(k));
  for (int64_t e = 0; e < k; ++e) {
    const float scale = (e / 32) % 3 == 0 ? 4.f : (e / 32) % 3 == 1 ? 0.05f : 1.f;
    a[static_cast<size_t>(e)] = rng.uniform() * scale;
  }
  if (k >= 96)
    for (int64_t e = 64; e < 96; ++e) a[static_cast<size_t>(e)] = 0.f;
  return a;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

// The generic kernel's C for the one activation row (slack past n stays -7: nothing writes it).
std::vector<float> generic(const std::vector<float>& a, const TensorView& w) {
  const int64_t n = w.shape[0], k = w.shape[1];
  const size_t sb = matmul_quant_scratch_bytes(1, k, w.group_size);
  std::vector<uint8_t> scratch(sb);
  std::vector<float> c(static_cast<size_t>(n + 8), -7.f);
  REQUIRE(scalar::matmul_f32_quant_int8(a.data(), k, 1, w, c.data(), n, scratch.data(), sb).ok());
  return c;
}

void run_tasks_reversed(void*, einfer_task_fn fn, void* arg, int count) {
  for (int i = count; i-- > 0;) fn(arg, i);
}

}  // namespace

TEST_CASE("gemv 8x4: bit for bit the generic kernel, every ISA selection, K, n and group") {
  Rng rng{0x8a4d};
  einfer_test::for_each_isa([&](const std::string& isa) {
    for (DType dt : {DType::q8, DType::q4})
      for (int32_t group : {32, 64, 128, 256})
        for (int64_t k : {32, 64, 96, 200, 288, 768, 2048}) {
          if (group > 32 && k != 200 && k != 768) continue;  // larger groups: a few K suffice
          for (int64_t n : {1, 7, 8, 9, 16, 17, 33})
            for (bool raw : {false, true}) {
              CAPTURE(std::string(dtype_name(dt)));
              CAPTURE(group);
              CAPTURE(k);
              CAPTURE(n);
              CAPTURE(raw);
              const einfer_test::QWeights rows =
                  einfer_test::make_weights(dt, n, k, group, raw, rng);
              const Laid8x4 laid = lay_out_8x4(rows);
              const std::vector<float> a = activations(k, rng);
              const std::vector<float> want = generic(a, laid.view);
              const size_t sb = matmul_quant_scratch_bytes(1, k, group);
              std::vector<uint8_t> scratch(sb + 5);
              std::vector<float> c(static_cast<size_t>(n + 8), -7.f);
              REQUIRE(
                  matmul_f32_quant(a.data(), k, 1, laid.view, c.data(), n, scratch.data() + 5, sb)
                      .ok());
              CHECK(same_bits(c, want));
            }
        }
    // Which kernel ran: the avx2 selections take the 8x4 GEMVs (GCC builds: VNNI with it).
    bool fast = false;
    const std::string name =
        matmul_quant_kernel_name(DType::q4, WeightLayout::i8x4, 288, 32, 1, &fast);
    CAPTURE(name);
#if defined(__x86_64__)
    if (isa.rfind("avx2", 0) == 0) {
      CHECK(fast);
      const bool vnni = isa.find("avx512vnni") != std::string::npos;
#if defined(__GNUC__) && !defined(__clang__)
      CHECK(name == (vnni ? "gemv_q4_8x4_avx512vnni" : "gemv_q4_8x4_avx2"));
#else
      (void)vnni;
      CHECK(name == "gemv_q4_8x4_avx2");
#endif
    }
#else
    (void)isa;
#endif
  });
}

TEST_CASE("gemv 8x4: column ranges of threads give the one-thread bits") {
  Rng rng{0x7e4d};
  einfer_test::for_each_isa([&](const std::string&) {
    for (DType dt : {DType::q8, DType::q4}) {
      const int64_t n = 75, k = 288;
      const einfer_test::QWeights rows = einfer_test::make_weights(dt, n, k, 32, false, rng);
      const Laid8x4 laid = lay_out_8x4(rows);
      const std::vector<float> a = activations(k, rng);
      const std::vector<float> want = generic(a, laid.view);
      const size_t sb = matmul_quant_scratch_bytes(1, k, 32);
      std::vector<uint8_t> scratch(sb);
      for (int t : {1, 2, 3, 5}) {
        CAPTURE(t);
        const Threads threads{nullptr, t, run_tasks_reversed};
        std::vector<float> c(static_cast<size_t>(n + 8), -7.f);
        REQUIRE(
            matmul_f32_quant(a.data(), k, 1, laid.view, c.data(), n, scratch.data(), sb, &threads)
                .ok());
        CHECK(same_bits(c, want));
      }
      // The two-step form: quantize, then columns [16, 48) and [48, n) separately.
      REQUIRE(matmul_quant_rows(a.data(), k, 1, laid.view, 0, 1, scratch.data(), sb).ok());
      std::vector<float> c(static_cast<size_t>(n + 8), -7.f);
      REQUIRE(matmul_quant_columns(1, laid.view, c.data(), n, 48, n, scratch.data(), sb).ok());
      REQUIRE(matmul_quant_columns(1, laid.view, c.data(), n, 0, 48, scratch.data(), sb).ok());
      CHECK(same_bits(c, want));
    }
  });
}

TEST_CASE("gemv 8x4: extreme bytes against full-scale activations stay exact") {
  // The int16 and int32 bounds of the kernels' sums: every q4 nibble 15 (or 0), every q8 byte -128
  // (or 127), against activations that all quantize to +127 or -127, and alternating signs.
  einfer_test::for_each_isa([&](const std::string&) {
    Rng rng{0xe8};
    for (DType dt : {DType::q8, DType::q4})
      for (int32_t group : {32, 256})
        for (uint8_t byte : {uint8_t{0xFF}, uint8_t{0x00}, uint8_t{0x80}, uint8_t{0x7F}})
          for (int sign : {1, -1, 0}) {
            const int64_t n = 9, k = 512;
            einfer_test::QWeights rows = einfer_test::make_weights(dt, n, k, group, true, rng);
            std::memset(rows.data.data(), byte, rows.data.size());
            const Laid8x4 laid = lay_out_8x4(rows);
            std::vector<float> a(static_cast<size_t>(k));
            for (int64_t e = 0; e < k; ++e)
              a[static_cast<size_t>(e)] =
                  sign != 0 ? 2.f * static_cast<float>(sign) : (e % 2 == 0 ? 2.f : -2.f);
            CAPTURE(std::string(dtype_name(dt)));
            CAPTURE(group);
            CAPTURE(static_cast<int>(byte));
            CAPTURE(sign);
            const std::vector<float> want = generic(a, laid.view);
            const size_t sb = matmul_quant_scratch_bytes(1, k, group);
            std::vector<uint8_t> scratch(sb);
            std::vector<float> c(static_cast<size_t>(n + 8), -7.f);
            REQUIRE(
                matmul_f32_quant(a.data(), k, 1, laid.view, c.data(), n, scratch.data(), sb).ok());
            CHECK(same_bits(c, want));
          }
  });
}

#endif  // EINFER_LAYOUTS
