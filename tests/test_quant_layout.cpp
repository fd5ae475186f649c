// Interleaved weight layouts (runtime/layout.h, kernels/quant/quant.h): conversion from rows and
// back, and matmul_f32_quant on every layout bit for bit equal to the scalar int path on the rows
// layout (a layout changes speed, never bits), on every ISA selection, thread count and step form.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
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

constexpr WeightLayout kInterleaved[] = {WeightLayout::i4x4, WeightLayout::i4x8,
                                         WeightLayout::i8x4};

// A rows-layout matrix: quantized floats, or raw random bytes (q8 -128, q4 padding nibbles that
// are not 8) with random scales.
using Rows = einfer_test::QWeights;

Rows make_rows(DType dt, int64_t n, int64_t k, int32_t group, bool raw, Rng& rng) {
  return einfer_test::make_weights(dt, n, k, group, raw, rng);
}

struct Laid {
  std::vector<uint8_t> bytes;
  TensorView view;
};

Laid lay_out(const Rows& rows, WeightLayout l) {
  Laid out;
  const TensorView& v = rows.view;
  out.bytes.resize(layout_data_bytes(v.dtype, l, v.shape[0], v.shape[1], v.group_size) + 1);
  REQUIRE(quant_to_layout(v, l, out.bytes.data() + 1, out.bytes.size() - 1).ok());
  out.view = v;
  out.view.data = out.bytes.data() + 1;  // any alignment
  out.view.scales = nullptr;
  out.view.layout = l;
  return out;
}

std::vector<float> random_a(int64_t m, int64_t lda, Rng& rng) {
  std::vector<float> a(static_cast<size_t>(m * lda + 1));
  for (auto& x : a) x = rng.uniform() * 3.f;
  return a;
}

// C = A Wᵀ by the scalar int path on the rows layout: the bits every layout must give.
std::vector<float> rows_scalar(const std::vector<float>& a, int64_t lda, int64_t m,
                               const TensorView& w, int64_t ldc) {
  const size_t sb = matmul_quant_scratch_bytes(m, w.shape[1], w.group_size);
  std::vector<uint8_t> scratch(sb);
  std::vector<float> c(static_cast<size_t>(m * ldc), -7.f);
  REQUIRE(
      scalar::matmul_f32_quant_int8(a.data(), lda, m, w, c.data(), ldc, scratch.data(), sb).ok());
  return c;
}

// One product's operands: n x k weights of `dt` in groups of 32, the same in layout `l`, m
// activation rows, the rows-scalar bits every form must give, and scratch for the m rows.
struct Product {
  Rows rows;
  Laid laid;
  std::vector<float> a;
  std::vector<float> want;
  size_t sb = 0;
  std::vector<uint8_t> scratch;
};

Product make_product(DType dt, WeightLayout l, int64_t m, int64_t n, int64_t k, Rng& rng) {
  Product p{make_rows(dt, n, k, 32, false, rng), {}, {}, {}, 0, {}};
  p.laid = lay_out(p.rows, l);
  p.a = random_a(m, k, rng);
  p.want = rows_scalar(p.a, k, m, p.rows.view, n);
  p.sb = matmul_quant_scratch_bytes(m, k, 32);
  p.scratch.resize(p.sb);
  return p;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("quant_layout: to a layout and back is lossless; rows dequantize alike") {
  Rng rng{0x5eed1234};
  for (DType dt : {DType::q8, DType::q4})
    for (WeightLayout l : kInterleaved)
      for (int32_t group : {16, 32, 64})
        for (int64_t n : {1, 3, 4, 7, 13})
          for (int64_t k : {16, 31, 64, 100, 161}) {
            if (layout_fit_error(dt, l, group) != nullptr) continue;
            CAPTURE(dtype_name(dt));
            CAPTURE(layout_name(l));
            CAPTURE(group);
            CAPTURE(n);
            CAPTURE(k);
            const Rows rows = make_rows(dt, n, k, group, true, rng);
            const Laid laid = lay_out(rows, l);
            const size_t rb = quant_row_bytes(dt, k);
            const int64_t groups = quant_groups(k, group);
            std::vector<uint8_t> v(rb);
            std::vector<float> s(static_cast<size_t>(groups)), x(static_cast<size_t>(k)),
                y(static_cast<size_t>(k));
            for (int64_t j = 0; j < n; ++j) {
              quant_row_from_layout(laid.view, j, v.data(), s.data());
              const uint8_t* want = rows.data.data() + j * rb;
              if (dt == DType::q4 && k % 2 == 1) {  // the padding nibble reads back as 8
                CHECK(std::memcmp(v.data(), want, rb - 1) == 0);
                CHECK((v[rb - 1] & 0x0F) == (want[rb - 1] & 0x0F));
                CHECK((v[rb - 1] >> 4) == 8);
              } else {
                CHECK(std::memcmp(v.data(), want, rb) == 0);
              }
              CHECK(std::memcmp(s.data(), rows.scales.data() + j * groups, s.size() * 4) == 0);
              dequantize_weight_row(laid.view, j, x.data());
              dequantize_weight_row(rows.view, j, y.data());
              CHECK(std::memcmp(x.data(), y.data(), x.size() * 4) == 0);
            }
          }
}

TEST_CASE("quant_layout: block format by hand (4x4 q8, 4x8 q4)") {
  // q8, 5 rows x 8, group 8, 4x4: element (j, e) = 10 j + e, scale j + 1. Tile 0 holds rows 0-3,
  // tile 1 row 4 and three zero rows.
  std::vector<int8_t> q(40);
  std::vector<float> sc(5);
  for (int j = 0; j < 5; ++j) {
    sc[j] = static_cast<float>(j + 1);
    for (int e = 0; e < 8; ++e) q[j * 8 + e] = static_cast<int8_t>(10 * j + e);
  }
  TensorView v = make_view(DType::q8, q.data(), {5, 8});
  v.scales = sc.data();
  v.group_size = 8;
  std::vector<uint8_t> out(layout_data_bytes(DType::q8, WeightLayout::i4x4, 5, 8, 8));
  REQUIRE(out.size() == 2 * (16 + 32));
  REQUIRE(quant_to_layout(v, WeightLayout::i4x4, out.data(), out.size()).ok());
  float s0[4];
  std::memcpy(s0, out.data(), 16);
  CHECK(s0[0] == 1.f);
  CHECK(s0[3] == 4.f);
  // Chunk 0: rows 0..3, elements 0..3 each; chunk 1: elements 4..7.
  const uint8_t want0[] = {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33,
                           4, 5, 6, 7, 14, 15, 16, 17, 24, 25, 26, 27, 34, 35, 36, 37};
  CHECK(std::memcmp(out.data() + 16, want0, 32) == 0);
  float s1[4];
  std::memcpy(s1, out.data() + 48, 16);
  CHECK(s1[0] == 5.f);
  CHECK(s1[1] == 0.f);
  CHECK(out[64] == 40);
  CHECK(out[68] == 0);

  // q4, 4 rows x 32, group 32, 4x8: row j element e has u = (j + e) % 16. A block is 16 bytes of
  // scales and 2 chunk pairs of 4 x 8 bytes; byte (c, r, b) = element c*8 + b (low nibble) and
  // 16 + c*8 + b (high nibble) of row r.
  std::vector<uint8_t> q4(4 * 16);
  std::vector<float> s4(4, 0.5f);
  for (int j = 0; j < 4; ++j)
    for (int e = 0; e < 32; ++e) {
      const unsigned u = static_cast<unsigned>(j + e) % 16;
      uint8_t& b = q4[j * 16 + e / 2];
      b = (e & 1) ? static_cast<uint8_t>((b & 0x0F) | (u << 4)) : static_cast<uint8_t>(u);
    }
  TensorView v4 = make_view(DType::q4, q4.data(), {4, 32});
  v4.scales = s4.data();
  v4.group_size = 32;
  std::vector<uint8_t> out4(layout_data_bytes(DType::q4, WeightLayout::i4x8, 4, 32, 32));
  REQUIRE(out4.size() == 16 + 64);
  REQUIRE(quant_to_layout(v4, WeightLayout::i4x8, out4.data(), out4.size()).ok());
  for (int c = 0; c < 2; ++c)
    for (int r = 0; r < 4; ++r)
      for (int b = 0; b < 8; ++b) {
        const uint8_t byte = out4[16 + (c * 4 + r) * 8 + b];
        CHECK((byte & 0x0F) == static_cast<unsigned>(r + c * 8 + b) % 16);
        CHECK((byte >> 4) == static_cast<unsigned>(r + 16 + c * 8 + b) % 16);
      }
}

TEST_CASE("quant_layout: layouts that do not fit and bad slices are refused") {
  CHECK(layout_fit_error(DType::q8, WeightLayout::i4x4, 32) == nullptr);
  CHECK(layout_fit_error(DType::q8, WeightLayout::i4x8, 12) != nullptr);
  CHECK(layout_fit_error(DType::q4, WeightLayout::i4x4, 4) != nullptr);  // needs 2 chunks
  CHECK(layout_fit_error(DType::q4, WeightLayout::i4x8, 16) == nullptr);
  CHECK(layout_fit_error(DType::f32, WeightLayout::i4x4, 32) != nullptr);
  CHECK(layout_fit_error(DType::f32, WeightLayout::rows, 0) == nullptr);
  Rng rng{7};
  const Rows rows = make_rows(DType::q8, 8, 32, 32, false, rng);
  std::vector<uint8_t> out(64);
  CHECK(quant_to_layout(rows.view, WeightLayout::i4x4, out.data(), out.size()).code ==
        StatusCode::invalid_argument);  // too small
  TensorView bad = rows.view;
  bad.group_size = 6;
  CHECK(!quant_to_layout(bad, WeightLayout::i4x4, out.data(), out.size()).ok());
  const Laid laid = lay_out(rows, WeightLayout::i4x4);
  TensorView part;
  CHECK(quant_weight_rows(laid.view, 4, 8, &part).ok());
  CHECK(part.shape[0] == 4);
  CHECK(!quant_weight_rows(laid.view, 2, 8, &part).ok());  // not on a tile boundary
  CHECK(!quant_weight_rows(laid.view, 4, 9, &part).ok());
  // matmul refuses a layout the group does not fit.
  TensorView w = laid.view;
  w.group_size = 6;
  std::vector<float> a(32), c(8);
  std::vector<uint8_t> scratch(matmul_quant_scratch_bytes(1, 32, 6));
  CHECK(matmul_f32_quant(a.data(), 32, 1, w, c.data(), 8, scratch.data(), scratch.size()).code ==
        StatusCode::invalid_argument);
}

TEST_CASE("quant_layout: every layout gives the rows scalar path's bits, every ISA selection") {
  Rng rng{0xC0FFEE};
  struct Shape {
    int64_t m, n, k;
    int32_t group;
  };
  const Shape shapes[] = {{1, 5, 64, 32},   {1, 36, 288, 32},  {2, 7, 96, 32},   {3, 9, 100, 32},
                          {4, 16, 128, 64}, {5, 13, 288, 32},  {8, 20, 256, 32}, {17, 12, 160, 32},
                          {6, 8, 48, 16},   {1, 11, 768, 128}, {1, 48, 256, 32}, {1, 16, 32, 32}};
  einfer_test::for_each_isa([&](const std::string&) {
    for (DType dt : {DType::q8, DType::q4})
      for (const Shape& s : shapes)
        for (bool raw : {false, true}) {
          const Rows rows = make_rows(dt, s.n, s.k, s.group, raw, rng);
          const int64_t lda = s.k + 3, ldc = s.n + 2;
          const std::vector<float> a = random_a(s.m, lda, rng);
          const std::vector<float> want = rows_scalar(a, lda, s.m, rows.view, ldc);
          for (WeightLayout l : kInterleaved) {
            if (layout_fit_error(dt, l, s.group) != nullptr) continue;
            CAPTURE(dtype_name(dt));
            CAPTURE(layout_name(l));
            CAPTURE(s.m);
            CAPTURE(s.n);
            CAPTURE(s.k);
            CAPTURE(raw);
            const Laid laid = lay_out(rows, l);
            const size_t sb = matmul_quant_scratch_bytes(s.m, s.k, s.group);
            std::vector<uint8_t> scratch(sb + 1);
            std::vector<float> c(static_cast<size_t>(s.m * ldc), -7.f);
            REQUIRE(matmul_f32_quant(a.data(), lda, s.m, laid.view, c.data(), ldc,
                                     scratch.data() + 1, sb)
                        .ok());
            CHECK(same_bits(c, want));
            std::vector<float> c2(c.size(), -7.f);
            REQUIRE(scalar::matmul_f32_quant_int8(a.data(), lda, s.m, laid.view, c2.data(), ldc,
                                                  scratch.data() + 1, sb)
                        .ok());
            CHECK(same_bits(c2, want));
          }
        }
  });
}

TEST_CASE("quant_layout: the two-step and row-block forms give the one-shot bits") {
  Rng rng{99};
  einfer_test::for_each_isa([&](const std::string&) {
    for (DType dt : {DType::q8, DType::q4})
      for (WeightLayout l : kInterleaved) {
        const int64_t m = 11, n = 40, k = 288;
        Product p = make_product(dt, l, m, n, k, rng);
        auto& [rows, laid, a, want, sb, scratch] = p;
        REQUIRE(matmul_quant_rows(a.data(), k, m, laid.view, 0, 5, scratch.data(), sb).ok());
        REQUIRE(matmul_quant_rows(a.data(), k, m, laid.view, 5, m, scratch.data(), sb).ok());
        std::vector<float> c(static_cast<size_t>(m * n), -7.f);
        REQUIRE(matmul_quant_columns(m, laid.view, c.data(), n, 0, 16, scratch.data(), sb).ok());
        REQUIRE(matmul_quant_columns(m, laid.view, c.data(), n, 16, n, scratch.data(), sb).ok());
        CHECK(same_bits(c, want));
        std::vector<float> c2(c.size(), -7.f);
        REQUIRE(matmul_quant_row_block(m, laid.view, c2.data(), n, 0, 4, scratch.data(), sb).ok());
        REQUIRE(matmul_quant_row_block(m, laid.view, c2.data(), n, 4, m, scratch.data(), sb).ok());
        CHECK(same_bits(c2, want));
        // A slice of whole tiles (a part's rows) computes those columns alike.
        TensorView part;
        REQUIRE(quant_weight_rows(laid.view, 16, 30, &part).ok());
        std::vector<float> c3(static_cast<size_t>(m * 14), -7.f);
        REQUIRE(matmul_quant_columns(m, part, c3.data(), 14, 0, 14, scratch.data(), sb).ok());
        for (int64_t i = 0; i < m; ++i)
          CHECK(std::memcmp(c3.data() + i * 14, want.data() + i * n + 16, 14 * 4) == 0);
      }
  });
}

TEST_CASE("quant_layout: the 8x4 prefill GEMMs equal the interleaved scalar twin bit for bit") {
  // x86 AVX2 and AVX-512 VNNI pick lane-per-row tiles packed from the 8x4 blocks for m > 1
  // (gemm_q8_q4_3x16_avx2.cpp, gemm_q8_q4_8x16_avx512vnni.cpp); every element of the product
  // must be gemm_q8/q4_interleaved_scalar's. Shapes: row tails of the 3-, 4- and 8-row tiles,
  // column tails of 8-row layout tiles and 16-lane kernel tiles (n = 8, 9: a lone layout tile;
  // 1003: a last tile of 3 rows), K with a partial group (200) and several K slices (> 1024
  // elements).
  const int64_t ms[] = {2, 3, 8, 9, 17, 64, 130};
  const int64_t ks[] = {32, 64, 200, 288, 768};
  const int64_t ns[] = {8, 9, 16, 17, 48, 1003};
  struct Shape {
    int64_t m, n, k;
    int32_t group;
  };
  std::vector<Shape> shapes;
  for (size_t im = 0; im < std::size(ms); ++im)
    for (size_t ik = 0; ik < std::size(ks); ++ik)
      for (size_t d :
           {size_t{0}, size_t{3}})  // two of the n values per (m, k), all of them in turn
        shapes.push_back({ms[im], ns[(im + ik + d) % std::size(ns)], ks[ik], 32});
  for (const Shape& s : {Shape{9, 40, 2500, 64}, Shape{13, 20, 3000, 1024}, Shape{8, 16, 270, 96},
                         Shape{17, 33, 300, 64}, Shape{5, 24, 64, 16}})
    shapes.push_back(s);
  Rng rng{0x8a4};
  for (DType dt : {DType::q8, DType::q4})
    for (const Shape& s : shapes)
      for (bool raw : {false, true}) {
        if (layout_fit_error(dt, WeightLayout::i8x4, s.group) != nullptr) continue;
        CAPTURE(dtype_name(dt));
        CAPTURE(s.m);
        CAPTURE(s.n);
        CAPTURE(s.k);
        CAPTURE(s.group);
        CAPTURE(raw);
        const Laid laid = lay_out(make_rows(dt, s.n, s.k, s.group, raw, rng), WeightLayout::i8x4);
        const int64_t lda = s.k + 1, ldc = s.n + 3;
        const std::vector<float> a = random_a(s.m, lda, rng);
        const size_t sb = matmul_quant_scratch_bytes(s.m, s.k, s.group);
        std::vector<uint8_t> scratch(sb + 1);
        std::vector<float> want(static_cast<size_t>(s.m * ldc), -7.f);
        REQUIRE(scalar::matmul_f32_quant_int8(a.data(), lda, s.m, laid.view, want.data(), ldc,
                                              scratch.data() + 1, sb)
                    .ok());
        einfer_test::for_each_isa([&](const std::string& isa) {
          const char* kernel =
              matmul_quant_kernel_name(dt, WeightLayout::i8x4, s.k, s.group, s.m, nullptr);
          CAPTURE(std::string(kernel));
#if defined(__x86_64__)
          // The shapes above are all the 8x4 kernels' on an AVX2 selection (not vacuous).
          if (isa.rfind("avx2", 0) == 0 && s.group % 32 == 0)
            CHECK(std::strstr(kernel, "_8x4l_") != nullptr);
#else
          (void)isa;
#endif
          std::vector<float> c(want.size(), -7.f);
          REQUIRE(
              matmul_f32_quant(a.data(), lda, s.m, laid.view, c.data(), ldc, scratch.data() + 1, sb)
                  .ok());
          CHECK(same_bits(c, want));
        });
      }
}

namespace {
// Tasks run one after the other, last first: a thread count without threads (also on MCUs).
void run_reversed(void*, einfer_task_fn fn, void* arg, int count) {
  for (int i = count; i-- > 0;) fn(arg, i);
}
}  // namespace

TEST_CASE("quant_layout: bit-identical for any thread count") {
  Rng rng{4242};
  for (DType dt : {DType::q8, DType::q4})
    for (WeightLayout l : kInterleaved) {
      const int64_t m = 9, n = 100, k = 96;
      Product p = make_product(dt, l, m, n, k, rng);
      auto& [rows, laid, a, want, sb, scratch] = p;
      const std::vector<float> want1 = rows_scalar(a, k, 1, rows.view, n);
      for (int t : {2, 3, 5}) {
        const Threads threads{nullptr, t, run_reversed};
        for (int64_t mm : {int64_t{1}, m}) {
          std::vector<float> c(static_cast<size_t>(mm * n), -7.f);
          REQUIRE(matmul_f32_quant(a.data(), k, mm, laid.view, c.data(), n, scratch.data(), sb,
                                   &threads)
                      .ok());
          CHECK(same_bits(c, mm == 1 ? want1 : want));
        }
      }
    }
}

TEST_CASE("quant_layout: the kernel name says whether the layout runs fast here") {
  bool fast = false;
  const char* rows = matmul_quant_kernel_name(DType::q8, WeightLayout::rows, 288, 32, 1, &fast);
  CHECK(fast);
  CHECK(std::strlen(rows) > 0);
  for (WeightLayout l : kInterleaved) {
    const char* name = matmul_quant_kernel_name(DType::q4, l, 288, 32, 16, &fast);
    CAPTURE(name);
    // The generic kernel is the slow path; any other is a SIMD kernel of the layout.
    CHECK(fast == (std::strstr(name, "interleaved_scalar") == nullptr));
  }
}

#else  // EINFER_LAYOUTS off (firmware): rows only, interleaved views refused with a status

TEST_CASE("quant_layout: a rows-only build refuses interleaved layouts") {
  CHECK(layout_fit_error(DType::q8, WeightLayout::i4x4, 32) != nullptr);
  CHECK(layout_fit_error(DType::q8, WeightLayout::rows, 32) == nullptr);
  int8_t q[4 * 32] = {};
  float sc[4] = {1.f, 1.f, 1.f, 1.f};
  TensorView w = make_view(DType::q8, q, {4, 32});
  w.scales = sc;
  w.group_size = 32;
  w.layout = WeightLayout::i4x4;
  float a[32] = {}, c[4] = {};
  alignas(64) uint8_t scratch[512];
  CHECK(matmul_f32_quant(a, 32, 1, w, c, 4, scratch, sizeof scratch).code ==
        StatusCode::invalid_argument);
  w.layout = WeightLayout::rows;
  CHECK(matmul_f32_quant(a, 32, 1, w, c, 4, scratch, sizeof scratch).ok());
}

#endif  // EINFER_LAYOUTS
