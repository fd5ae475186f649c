// The interleaved layout of GGUF block matrices (runtime/layout.h: q4_k, q6_k and the Q4_K_M
// fallbacks q8_0, q5_0 in 4x4, issue 31): the tile kernels of every ISA level (NEON dotprod, plain
// NEON, the generic scalar one) equal the rows layout's scalar twin bit for bit for any row,
// activation row and thread count; llama-quantize Q4_K_M and Q5_0 models packed in 4x4 give the
// rows images' logits bit for bit; malformed or misplaced interleaved tensors are refused.
// einfer-test: no-bare-metal
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/gguf/gguf.h"
#include "tests/gguf_test_util.h"
#include "tests/isa_levels.h"

#if EINFER_HAS_PACK_LIB
#include "format_fixtures.h"
#include "models/session.h"
#include "runtime/format.h"
#include "tests/session_fixtures.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/layouts.h"
#endif

using namespace einfer;

namespace {

// Random block rows: every byte random but the f16 scales (finite, 2^-9 .. 2); q8_0 quants
// include -128, which no quantizer writes but a file may hold.
std::vector<uint8_t> random_rows(DType dt, int64_t n, int64_t k, std::mt19937* rng) {
  std::vector<uint8_t> raw(quant_row_bytes(dt, k) * n);
  for (uint8_t& b : raw) b = static_cast<uint8_t>((*rng)());
  const size_t bytes = gguf_block_bytes(dt);
  const std::vector<size_t> f16_at = dt == DType::q6_k ? std::vector<size_t>{208}
                                     : dt == DType::q8_0 || dt == DType::q5_0
                                         ? std::vector<size_t>{0}
                                         : std::vector<size_t>{0, 2};
  for (size_t at = 0; at < raw.size(); at += bytes)
    for (size_t f : f16_at) {
      const uint16_t h = static_cast<uint16_t>(0x1800 + (*rng)() % 0x2000);
      std::memcpy(&raw[at + f], &h, 2);
    }
  return raw;
}

std::vector<uint8_t> to_layout(DType dt, const std::vector<uint8_t>& rows, int64_t n, int64_t k) {
  std::vector<uint8_t> out(layout_data_bytes(dt, WeightLayout::i4x4, n, k, 0));
  REQUIRE(gguf_to_layout(dt, rows.data(), n, k, WeightLayout::i4x4, out.data(), out.size()).ok());
  return out;
}

}  // namespace

TEST_CASE("gguf layout: every byte of a GGUF block has one place in its tile block") {
  for (DType dt : {DType::q4_k, DType::q6_k, DType::q8_0, DType::q5_0}) {
    const std::string dt_name = dtype_name(dt);
    CAPTURE(dt_name);
    const int32_t bytes = static_cast<int32_t>(gguf_block_bytes(dt));
    std::vector<int> hits(4 * bytes, 0);
    for (int32_t r = 0; r < 4; ++r)
      for (int32_t at = 0; at < bytes; ++at) {
        const int64_t p = kquant_layout_place(dt, r, at);
        REQUIRE(p >= 0);
        REQUIRE(p < 4 * bytes);
        ++hits[static_cast<size_t>(p)];
      }
    for (int h : hits) CHECK(h == 1);
    // The placing, the copy back out and the row decoder agree.
    std::mt19937 rng(31);
    constexpr int64_t n = 6, k = 512;
    const std::vector<uint8_t> rows = random_rows(dt, n, k, &rng);
    const std::vector<uint8_t> tiled = to_layout(dt, rows, n, k);
    TensorView w = make_view(dt, const_cast<uint8_t*>(tiled.data()), {n, k});
    w.layout = WeightLayout::i4x4;
    for (int64_t j = 0; j < n; ++j) {
      std::vector<float> want(k), got(k);
      dequantize_row_gguf(dt, rows.data() + j * quant_row_bytes(dt, k), k, want.data());
      dequantize_row_gguf_view(w, j, got.data());
      CHECK(std::memcmp(want.data(), got.data(), k * 4) == 0);
      uint8_t block[256];
      const int64_t nb = k / gguf_block_elems(dt);  // row j's block 1, from its tile
      gguf_block_from_layout(dt, tiled.data() + (j / 4) * nb * 4 * bytes + 4 * bytes, j % 4, block);
      CHECK(std::memcmp(block, rows.data() + j * quant_row_bytes(dt, k) + bytes, bytes) == 0);
    }
    // Padding rows (6 rows: the second tile's rows 2 and 3) are all zero in each of its blocks.
    const int64_t nb = k / gguf_block_elems(dt);
    for (int32_t at = 0; at < bytes; ++at)
      for (int64_t i = 0; i < nb; ++i)
        for (int32_t r = 2; r < 4; ++r)
          CHECK(tiled[static_cast<size_t>(4 * bytes * (nb + i) + kquant_layout_place(dt, r, at))] ==
                0);
  }
}

TEST_CASE(
    "gguf layout: the 4x4 tile kernels (every ISA level) equal the rows layout's scalar twin for "
    "any row, activation row and thread count") {
  // 13 rows: a last tile of 1 row and 3 zero rows; 1 .. 9 activation rows: the 4-row passes, a
  // pair and a single row.
  std::mt19937 rng(3131);
  std::normal_distribution<float> normal(0.f, 1.f);
  constexpr int64_t n = 13, k = 768;
  for (DType dt : {DType::q4_k, DType::q6_k, DType::q8_0, DType::q5_0}) {
    const std::string dt_name = dtype_name(dt);
    CAPTURE(dt_name);
    const std::vector<uint8_t> raw = random_rows(dt, n, k, &rng);
    const std::vector<uint8_t> tiled = to_layout(dt, raw, n, k);
    const TensorView rows = make_view(dt, const_cast<uint8_t*>(raw.data()), {n, k});
    TensorView w = make_view(dt, const_cast<uint8_t*>(tiled.data()), {n, k});
    w.layout = WeightLayout::i4x4;
    einfer_test::for_each_isa([&](const std::string& isa) {
      bool fast = false;
      const char* name = matmul_gguf_kernel_name(dt, WeightLayout::i4x4, 1, &fast);
      MESSAGE(isa << ": " << dt_name << " 4x4 kernel " << std::string(name)
                  << std::string(fast ? "" : " (generic)"));
      for (int64_t m : {1, 2, 3, 4, 5, 9}) {
        CAPTURE(m);
        std::vector<float> a(m * k);
        for (float& x : a) x = normal(rng);
        std::vector<unsigned char> scratch(matmul_gguf_scratch_bytes(m, k));
        std::vector<float> got(m * n), twin(m * n), generic(m * n);
        REQUIRE(
            matmul_f32_gguf(a.data(), k, m, w, got.data(), n, scratch.data(), scratch.size()).ok());
        REQUIRE(scalar::matmul_f32_gguf(a.data(), k, m, rows, twin.data(), n, scratch.data(),
                                        scratch.size())
                    .ok());
        REQUIRE(scalar::matmul_f32_gguf(a.data(), k, m, w, generic.data(), n, scratch.data(),
                                        scratch.size())
                    .ok());
        CHECK(std::memcmp(got.data(), twin.data(), got.size() * sizeof(float)) == 0);
        CHECK(std::memcmp(generic.data(), twin.data(), got.size() * sizeof(float)) == 0);
        einfer_test::check_gguf_same_bits_threaded(a.data(), k, m, w, n, got, scratch);
      }
    });
  }
}

TEST_CASE("gguf layout: a layout that does not fit the block type is refused") {
  std::vector<uint8_t> raw(quant_row_bytes(DType::q5_1, 256) * 4, 0);
  std::vector<uint8_t> out(1 << 16);
  CHECK(!gguf_to_layout(DType::q5_1, raw.data(), 4, 256, WeightLayout::i4x4, out.data(), out.size())
             .ok());
  CHECK(!gguf_to_layout(DType::q8_0, raw.data(), 4, 256, WeightLayout::i4x8, out.data(), out.size())
             .ok());
  CHECK(!gguf_to_layout(DType::q4_k, raw.data(), 4, 256, WeightLayout::i4x8, out.data(), out.size())
             .ok());
  CHECK(!gguf_to_layout(DType::q4_k, raw.data(), 4, 256, WeightLayout::i4x4, out.data(), 100).ok());
  TensorView w = make_view(DType::q5_1, raw.data(), {4, 256});
  w.layout = WeightLayout::i4x4;
  float a[256] = {}, c[4];
  std::vector<unsigned char> scratch(matmul_gguf_scratch_bytes(1, 256));
  const Status s = matmul_f32_gguf(a, 256, 1, w, c, 4, scratch.data(), scratch.size());
  CHECK(!s.ok());
  CHECK(std::string(s.message).find("layout") != std::string::npos);
}

#if EINFER_HAS_PACK_LIB
namespace {

const std::string kQ4km = std::string(EINFER_TEST_DATA_DIR) + "/gguf_quant/tiny_q4_k_m.gguf";
// llama-quantize Q5_0: q5_0 matrices and a q6_k classifier (a GGUF-native image, like the q5_0
// and q8_0 fallbacks of a Q4_K_M file whose rows are not whole superblocks); Q5_1 has no layout.
const std::string kQ50 = std::string(EINFER_TEST_DATA_DIR) + "/gguf_quant/tiny_q5_0.gguf";
const std::string kQ51 = std::string(EINFER_TEST_DATA_DIR) + "/gguf_quant/tiny_q5_1.gguf";

std::vector<uint8_t> pack_q4km(bool interleaved, WeightLayout layout = WeightLayout::i4x4,
                               const std::string& path = kQ4km) {
  const pack::SourceModel src = pack::import_gguf(pack::read_file(path));
  pack::EinImage img =
      pack::pack_source(src, src.config.weight_dtype, src.config.group_size, nullptr);
  if (interleaved) pack::apply_gguf_layout(&img, layout, nullptr);
  return pack::write_ein(img);
}

std::vector<float> logits_of(const std::vector<uint8_t>& bytes, std::vector<int32_t>* ids) {
  pack::AlignedBuffer image(bytes);
  const std::vector<float> all = einfer_test::prompt_greedy_logits(image.data, image.size, 6);
  const size_t V = all.size() / 7;
  for (size_t at = 0; at + V <= all.size(); at += V) {  // the greedy ids: each step's argmax
    size_t best = 0;
    for (size_t v = 1; v < V; ++v) best = all[at + v] > all[at + best] ? v : best;
    ids->push_back(static_cast<int32_t>(best));
  }
  return all;
}

// Records of the image's matrices of `dt` in `layout`.
std::vector<size_t> records_of(const std::vector<uint8_t>& b, DType dt, uint32_t layout) {
  std::vector<size_t> out;
  const uint32_t count = test::get_field<uint32_t>(b, 44), table = test::get_field<uint32_t>(b, 40);
  for (uint32_t i = 0; i < count; ++i) {
    const size_t rec = table + i * 80u;
    if (test::get_field<uint32_t>(b, rec + 8) == static_cast<uint32_t>(dt) &&
        test::get_field<uint32_t>(b, rec + 36) == layout)
      out.push_back(rec);
  }
  return out;
}

std::string message_of(const std::vector<uint8_t>& b) {
  Model m;
  const Status s = test::load_bytes(b, &m);
  return s.ok() ? "ok" : s.message;
}

// On every ISA level: the tiled image's logits and greedy ids are the rows image's, bit for bit
// (the kernels of `dt` in 4x4 named per level).
void check_same_logits(const std::vector<uint8_t>& rows, const std::vector<uint8_t>& tiled,
                       DType dt) {
  einfer_test::for_each_isa([&](const std::string& isa) {
    bool fast = false;
    MESSAGE(isa << ": " << std::string(matmul_gguf_kernel_name(dt, WeightLayout::i4x4, 1, &fast)));
    std::vector<int32_t> want_ids, got_ids;
    const std::vector<float> want = logits_of(rows, &want_ids);
    const std::vector<float> got = logits_of(tiled, &got_ids);
    REQUIRE(got.size() == want.size());
    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
    CHECK(got_ids == want_ids);
  });
}

}  // namespace

TEST_CASE("gguf layout: a Q4_K_M model packed in 4x4 gives the rows logits, on every ISA level") {
  const std::vector<uint8_t> rows = pack_q4km(false), tiled = pack_q4km(true);
  REQUIRE(!records_of(tiled, DType::q4_k, 1).empty());
  REQUIRE(!records_of(tiled, DType::q6_k, 1).empty());
  CHECK(records_of(rows, DType::q4_k, 1).empty());
  CHECK(rows.size() == tiled.size());  // the same bytes, moved
  CHECK(pack_q4km(true) == tiled);     // byte-reproducible
  check_same_logits(rows, tiled, DType::q4_k);
}

TEST_CASE("gguf layout: a Q5_0 model packed in 4x4 gives the rows logits, on every ISA level") {
  const std::vector<uint8_t> rows = pack_q4km(false, WeightLayout::i4x4, kQ50),
                             tiled = pack_q4km(true, WeightLayout::i4x4, kQ50);
  REQUIRE(records_of(tiled, DType::q5_0, 1).size() >= 12);  // every q5_0 matrix but the lookup
  CHECK(records_of(tiled, DType::q5_0, 0).size() == 1);     // the untied token embedding
  CHECK(rows.size() == tiled.size());
  CHECK(pack_q4km(true, WeightLayout::i4x4, kQ50) == tiled);  // byte-reproducible
  check_same_logits(rows, tiled, DType::q5_0);
}

TEST_CASE("gguf layout: malformed interleaved K-quant records are refused, naming the problem") {
  const std::vector<uint8_t> tiled = pack_q4km(true);
  CHECK(message_of(tiled) == "ok");
  const size_t q4k = records_of(tiled, DType::q4_k, 1).at(0);
  // A block type without an interleaved layout (q5_1), marked 4x4; q5_0 marked 4x8.
  const std::vector<uint8_t> q51 = pack_q4km(true, WeightLayout::i4x4, kQ51);
  const std::vector<uint8_t> q50 = pack_q4km(true, WeightLayout::i4x4, kQ50);
  const std::vector<size_t> others = records_of(q51, DType::q5_1, 0);
  const std::vector<size_t> q50_tiled = records_of(q50, DType::q5_0, 1);
  REQUIRE(!others.empty());
  REQUIRE(!q50_tiled.empty());
  struct Case {
    const std::vector<uint8_t>* image;
    const char* what;
    size_t offset;
    uint64_t value;
    int width;
    const char* expect;
  };
  std::vector<Case> cases = {
      {&tiled, "q4_k in 4x8", q4k + 36, 2, 4, "q8_0 and q5_0 in 4x4"},
      {&tiled, "q4_k one tile short", q4k + 48, test::get_field<uint64_t>(tiled, q4k + 48) - 576, 8,
       "byte size"},
      {&tiled, "q4_k 16 bytes long", q4k + 48, test::get_field<uint64_t>(tiled, q4k + 48) + 16, 8,
       "byte size"},
      {&tiled, "q4_k with a scale region", q4k + 64, 4, 8, "scale"},
      {&q51, "q5_1 in 4x4", others[0] + 36, 1, 4, "q8_0 and q5_0 in 4x4"},
      {&q50, "q5_0 in 4x8", q50_tiled[0] + 36, 2, 4, "q8_0 and q5_0 in 4x4"},
      {&q50, "q5_0 one block short", q50_tiled[0] + 48,
       test::get_field<uint64_t>(q50, q50_tiled[0] + 48) - 88, 8, "byte size"},
  };
  for (const Case& k : cases) {
    std::vector<uint8_t> b = *k.image;
    if (k.width == 4) {
      test::set_field<uint32_t>(b, k.offset, static_cast<uint32_t>(k.value));
    } else {
      test::set_field<uint64_t>(b, k.offset, k.value);
    }
    test::reseal(b);
    const std::string msg = message_of(b);
    CHECK_MESSAGE(msg.find(k.expect) != std::string::npos,
                  k.what << ": got '" << msg << "', want '" << k.expect << "'");
  }
}
#endif  // EINFER_HAS_PACK_LIB

#if EINFER_HAS_PACK_LIB
TEST_CASE("gguf layout: x86's 8x4 leaves a Q4_K_M model's block weights in rows") {
  // --target x86-64 (8x4) on a K-quant import: x86 reads K-quants in rows, so nothing moves.
  const std::vector<uint8_t> rows = pack_q4km(false), x86 = pack_q4km(true, WeightLayout::i8x4);
  CHECK(!records_of(x86, DType::q4_k, 0).empty());
  CHECK(records_of(x86, DType::q4_k, 1).empty());
  CHECK(records_of(x86, DType::q4_k, 3).empty());
  CHECK(x86 == rows);
}
#endif
