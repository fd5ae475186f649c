// Format version 4: per-tensor weight layouts (runtime/layout.h). einfer-pack writes version 3
// while every matrix is in rows; interleaved images load, their views carry the layout, every
// malformed layout record is refused with a message; and a model's logits do not depend on the
// layout (bit for bit: the layouts' kernels and the rows layout's scalar path share one chain).
#if EINFER_HAS_PACK_LIB
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "format_fixtures.h"
#include "models/session.h"
#include "runtime/format.h"
#include "tests/isa_levels.h"
#include "tests/session_fixtures.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/layouts.h"

using namespace einfer;
using namespace einfer::test;

namespace {

// First tensor record (the token embedding): after the 192-byte ArchBlock of version 4, the
// 128-byte one of version 3.
constexpr size_t kRec = 128 + sizeof(ArchBlock);
constexpr size_t kRecV3 = 128 + kArchBlockBytesV3;

std::vector<uint8_t> with_layout(const ModelConfig& c, WeightLayout l) {
  pack::EinImage img = synthetic_image(c, true);
  pack::apply_layout(&img, l, true, nullptr);
  return pack::write_ein(img);
}

std::string message_of(const std::vector<uint8_t>& b) {
  Model m;
  const Status s = load_bytes(b, &m);
  return s.ok() ? "ok" : s.message;
}

// Logits of a short prompt and three greedy steps.
std::vector<float> logits(const std::vector<uint8_t>& bytes) {
  pack::AlignedBuffer image(bytes);
  return einfer_test::prompt_greedy_logits(image.data, image.size, 3);
}

}  // namespace

TEST_CASE("format layouts: rows images stay version 3; interleaved ones are version 4") {
  const ModelConfig c = tiny_llama_config(DType::q8, 8);
  const std::vector<uint8_t> rows = pack::write_ein(synthetic_image(c, true));
  CHECK(get_field<uint32_t>(rows, 4) == 3u);
  const std::vector<uint8_t> v4 = with_layout(c, WeightLayout::i4x4);
  CHECK(get_field<uint32_t>(v4, 4) == kEinVersion);
  pack::AlignedBuffer buf(v4);
  Model m;
  REQUIRE(load_model(buf.data, buf.size, LoadOptions{}, &m).ok());
  TensorView wq, norm;
  REQUIRE(model_tensor(m, TensorRole::wq, 0, &wq).ok());
  CHECK(wq.layout == WeightLayout::i4x4);
  CHECK(wq.scales == nullptr);
  REQUIRE(model_tensor(m, TensorRole::attn_norm, 0, &norm).ok());
  CHECK(norm.layout == WeightLayout::rows);
  // The tiny config ties the classifier: the embedding is multiplied, so it takes the layout.
  TensorView emb;
  REQUIRE(model_tensor(m, TensorRole::token_embedding, -1, &emb).ok());
  CHECK(emb.layout == (c.tied_classifier ? WeightLayout::i4x4 : WeightLayout::rows));
  // A q4 image in 4x8 (group 16: whole chunk pairs).
  const std::vector<uint8_t> q4 = with_layout(tiny_llama_config(DType::q4, 16), WeightLayout::i4x8);
  CHECK(message_of(q4) == "ok");
}

TEST_CASE("format layouts: malformed layout records are refused, naming the problem") {
  const ModelConfig c = tiny_llama_config(DType::q8, 8);
  const std::vector<uint8_t> v4 = with_layout(c, WeightLayout::i4x4);
  const std::vector<uint8_t> v3 = synthetic_bytes(c, true, kEinVersion3);
  const uint32_t count = get_field<uint32_t>(v4, 44);
  // The second record is layer 0's attn_norm (f32 vector), the third wq (a q8 matrix).
  const size_t norm = kRec + 80, wq = kRec + 2 * 80;
  REQUIRE(get_field<uint32_t>(v4, norm) == static_cast<uint32_t>(TensorRole::attn_norm));
  REQUIRE(get_field<uint32_t>(v4, wq) == static_cast<uint32_t>(TensorRole::wq));
  REQUIRE(get_field<uint32_t>(v4, wq + 36) == 1u);
  struct Case {
    const char* what;
    const std::vector<uint8_t>* base;
    size_t offset;
    uint32_t value;
    const char* expect;
  };
  const Case cases[] = {
      {"unknown layout", &v4, wq + 36, 77, "unknown tensor layout"},
      {"layout on a vector", &v4, norm + 36, 1, "matrices only"},
      {"4x8 on q8 group 8 is fine, bytes equal", &v4, wq + 36, 2, "ok"},
      {"rows with the blocks' byte count", &v4, wq + 36, 0, "byte size"},
      {"layout in a version 3 image", &v3, kRecV3 + 2 * 80 + 36, 1, "reserved tensor field"},
      {"version 5", &v4, 4, 5, "version"},
  };
  for (const Case& k : cases) {
    std::vector<uint8_t> b = *k.base;
    set_field<uint32_t>(b, k.offset, k.value);
    reseal(b);
    const std::string msg = message_of(b);
    CHECK_MESSAGE(msg.find(k.expect) != std::string::npos,
                  k.what << ": got '" << msg << "', want '" << k.expect << "'");
  }
  // An interleaved tensor with a scale region of its own.
  {
    std::vector<uint8_t> b = v4;
    set_field<uint64_t>(b, wq + 56, get_field<uint64_t>(b, wq + 40) + 64);
    set_field<uint64_t>(b, wq + 64, 4);
    reseal(b);
    CHECK(message_of(b).find("separate scale region") != std::string::npos);
  }
  // Data bytes of the rows layout under an interleaved layout.
  {
    std::vector<uint8_t> b = v4;
    set_field<uint64_t>(b, wq + 48, get_field<uint64_t>(b, wq + 48) - 16);
    reseal(b);
    CHECK(message_of(b).find("byte size") != std::string::npos);
  }
  // q4 with groups of 8 fits 4x4 (2 chunks of 4) but not 4x8.
  const std::vector<uint8_t> q4 = with_layout(tiny_llama_config(DType::q4, 8), WeightLayout::i4x4);
  std::vector<uint8_t> b = q4;
  set_field<uint32_t>(b, wq + 36, 2);
  reseal(b);
  CHECK(message_of(b).find("twice the layout's chunk") != std::string::npos);
  // Every record's layout field at extreme values is refused (or a valid layout of a fitting size).
  int refused = 0;
  for (uint32_t r = 0; r < count; ++r)
    for (uint32_t v : {kWeightLayoutCount, 0x7FFFFFFFu, 0xFFFFFFFFu}) {
      std::vector<uint8_t> x = v4;
      set_field<uint32_t>(x, kRec + r * 80 + 36, v);
      reseal(x);
      refused += message_of(x) != "ok";
    }
  CHECK(refused == static_cast<int>(3 * count));
}

TEST_CASE("format layouts: the packer refuses a layout that does not fit, or notes it") {
  pack::EinImage img = synthetic_image(tiny_llama_config(DType::q4, 8), false);
  CHECK_THROWS_AS(pack::apply_layout(&img, WeightLayout::i4x8, true, nullptr), pack::PackError);
  std::string note;
  pack::apply_layout(&img, WeightLayout::i4x8, false, &note);
  CHECK(note.find("stay in rows") != std::string::npos);
  CHECK(pack::write_ein(img).size() > 0);
  CHECK(pack::target_layout("cortex-a76") == WeightLayout::i4x4);
  CHECK(pack::target_layout("arm64-i8mm") == WeightLayout::i4x8);
  CHECK(pack::target_layout("x86-64") == WeightLayout::i8x4);
  CHECK(pack::target_layout("generic") == WeightLayout::rows);
  CHECK_THROWS_AS(pack::target_layout("pentium"), pack::PackError);
  CHECK_THROWS_AS(pack::parse_layout("5x5"), pack::PackError);
}

TEST_CASE("format layouts: logits do not depend on the layout, on every ISA selection") {
  // 4x4, 4x8 and 8x4 agree bit for bit on every level, and with rows on the scalar level.
  // Hidden 200 with groups of 32: a last group of 8, zero-padded in the blocks; vocab 1003: a
  // last tile of 3 rows.
  pack::SyntheticSpec spec = pack::parse_synthetic_spec(
      "dim=64,hidden=200,layers=2,heads=4,kv_heads=2,vocab=1003,seq=64,tied=0,seed=3");
  for (DType dt : {DType::q8, DType::q4}) {
    spec.dtype = dt;
    const pack::EinImage rows = pack::make_synthetic_image(spec);
    std::vector<uint8_t> bytes[kWeightLayoutCount];
    bytes[0] = pack::write_ein(rows);
    for (uint32_t l = 1; l < kWeightLayoutCount; ++l) {
      pack::EinImage img = rows;
      pack::apply_layout(&img, static_cast<WeightLayout>(l), true, nullptr);
      bytes[l] = pack::write_ein(img);
    }
    einfer_test::for_each_isa([&](const std::string& isa) {
      // Every other kernel (norms, attention) is the level's own, so compare within the level.
      const std::vector<float> want = logits(bytes[1]);
      // On the scalar level (dispatching and scalar-only builds) the rows layout takes the int
      // path, the layouts' chain: all three equal.
      if (isa == "scalar") {
        const std::vector<float> rows_scalar = logits(bytes[0]);
        CHECK(std::memcmp(want.data(), rows_scalar.data(), want.size() * 4) == 0);
      }
      CAPTURE(dtype_name(dt));
      for (uint32_t l = 2; l < kWeightLayoutCount; ++l) {
        CAPTURE(layout_name(static_cast<WeightLayout>(l)));
        const std::vector<float> got = logits(bytes[l]);
        REQUIRE(got.size() == want.size());
        CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
      }
    });
  }
}
#endif  // EINFER_HAS_PACK_LIB
