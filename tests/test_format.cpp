// .ein round trips: writer -> load_model -> model_tensor gives back every tensor, in every dtype.
#if EINFER_HAS_PACK_LIB
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "format_fixtures.h"
#include "kernels/quant/quant.h"
#include "runtime/format.h"

using namespace einfer;
using namespace einfer::test;

namespace {

// Dequantized/widened element i of a (contiguous, rank <= 2) view.
float element(const TensorView& v, int64_t i) {
  const int64_t cols = v.shape[v.rank - 1];
  const int64_t r = i / cols, c = i % cols;
  switch (v.dtype) {
    case DType::f32:
      return static_cast<const float*>(v.data)[i];
    case DType::f16: {
      uint16_t h;
      std::memcpy(&h, static_cast<const unsigned char*>(v.data) + i * 2, 2);
      return f16_to_f32(h);
    }
    case DType::bf16: {
      uint16_t h;
      std::memcpy(&h, static_cast<const unsigned char*>(v.data) + i * 2, 2);
      return bf16_to_f32(h);
    }
    case DType::q8: {
      const int8_t* q = static_cast<const int8_t*>(v.data) + r * cols;
      return q[c] * v.scales[r * quant_groups(cols, v.group_size) + c / v.group_size];
    }
    case DType::q4: {
      const uint8_t* q = static_cast<const uint8_t*>(v.data) + r * quant_row_bytes(DType::q4, cols);
      const int u = (c & 1) ? (q[c / 2] >> 4) : (q[c / 2] & 0x0F);
      return static_cast<float>(u - 8) *
             v.scales[r * quant_groups(cols, v.group_size) + c / v.group_size];
    }
    default:
      return NAN;
  }
}

void check_round_trip(const ModelConfig& c) {
  const std::vector<uint8_t> bytes = synthetic_bytes(c, true);
  pack::AlignedBuffer buf(bytes);
  Model m;
  const Status s = load_model(buf.data, buf.size, LoadOptions{}, &m);
  REQUIRE_MESSAGE(s.ok(), pack::status_text(s));
  CHECK(m.tensor_count == ein_expected_tensor_count(c));
  CHECK(m.config.dim == c.dim);
  CHECK(m.config.weight_dtype == c.weight_dtype);
  CHECK(m.config.norm_eps == c.norm_eps);
  REQUIRE(m.tokenizer_bytes == 5);
  CHECK(m.tokenizer[4] == 5);
  // Quantization error bound: half a step of the group's scale (absmax / 127 or / 7).
  const float max_abs = 1000.f / 997.f;
  const float tol = c.weight_dtype == DType::q8     ? max_abs / 127.f * 0.5f + 1e-6f
                    : c.weight_dtype == DType::q4   ? max_abs / 7.f * 0.5f + 1e-6f
                    : c.weight_dtype == DType::f16  ? 1e-3f
                    : c.weight_dtype == DType::bf16 ? 4e-3f  // half an ulp of 8 bits at ~1
                                                    : 0.f;
  int checked = 0;
  for (uint32_t r = 0; r < kTensorRoleCount; ++r) {
    const TensorRole role = static_cast<TensorRole>(r);
    const int layers = ein_role_per_layer(role) ? c.n_layers : 1;
    for (int32_t l = 0; l < layers; ++l) {
      const int32_t layer = ein_role_per_layer(role) ? l : -1;
      TensorView v;
      const Status ts = model_tensor(m, role, layer, &v);
      if (!ein_role_present(c, role)) {
        CHECK(ts.code == StatusCode::out_of_range);
        continue;
      }
      REQUIRE_MESSAGE(ts.ok(), tensor_role_name(role));
      CHECK(reinterpret_cast<uintptr_t>(v.data) % 64 == 0);
      CHECK(static_cast<const unsigned char*>(v.data) >= buf.data);
      CHECK(static_cast<const unsigned char*>(v.data) < buf.data + buf.size);
      int64_t shape[kEinMaxRank];
      const int rank = ein_expected_shape(c, role, shape);
      REQUIRE(v.rank == rank);
      for (int d = 0; d < rank; ++d) CHECK(v.shape[d] == shape[d]);
      CHECK(v.dtype == (ein_role_is_matrix(role) ? c.weight_dtype : DType::f32));
      float worst = 0.f;
      for (int64_t i = 0; i < v.numel(); ++i)
        worst = std::fmax(worst, std::fabs(element(v, i) - synthetic_value(role, layer, i)));
      CHECK_MESSAGE(worst <= (ein_role_is_matrix(role) ? tol : 0.f), tensor_role_name(role));
      ++checked;
    }
  }
  CHECK(checked == static_cast<int>(m.tensor_count));
  // Out-of-range lookups are errors, not crashes.
  TensorView v;
  CHECK(model_tensor(m, TensorRole::wq, c.n_layers, &v).code == StatusCode::out_of_range);
  CHECK(model_tensor(m, TensorRole::wq, -1, &v).code == StatusCode::out_of_range);
  CHECK(model_tensor(m, static_cast<TensorRole>(99), 0, &v).code == StatusCode::out_of_range);
}

}  // namespace

TEST_CASE("format: CRC32 matches the IEEE check value") {
  CHECK(crc32_ieee("123456789", 9) == 0xCBF43926u);
  CHECK(crc32_ieee("6789", 4, crc32_ieee("12345", 5)) == 0xCBF43926u);
  CHECK(crc32_ieee("", 0) == 0u);
}

TEST_CASE("format: llama round trip f32/f16/bf16/q8/q4") {
  check_round_trip(tiny_llama_config());
  check_round_trip(tiny_llama_config(DType::f16));
  check_round_trip(tiny_llama_config(DType::bf16));
  check_round_trip(tiny_llama_config(DType::q8, 8));
  check_round_trip(tiny_llama_config(DType::q4, 8));
  ModelConfig odd = tiny_llama_config(DType::q4, 6);  // groups that do not divide the row
  odd.hidden_dim = 37;
  odd.tied_classifier = 1;
  check_round_trip(odd);
}

TEST_CASE("format: encoder round trip (layernorm biases, final norm)") {
  check_round_trip(tiny_encoder_config());
  ModelConfig c = tiny_encoder_config();
  c.has_bias = 0;
  c.final_norm = 0;
  c.weight_dtype = DType::q8;
  c.group_size = 4;
  check_round_trip(c);
}

TEST_CASE("format: one config check, with a message, for the loader, packer and models alike") {
  CHECK(ein_validate_config(test::tiny_llama_config()).ok());
  CHECK(ein_validate_config(test::tiny_encoder_config()).ok());
  struct Case {
    ModelConfig c;
    const char* message;
  };
  ModelConfig gqa_encoder = test::tiny_encoder_config();
  gqa_encoder.n_kv_heads = 1;
  ModelConfig narrow_heads = test::tiny_encoder_config();
  narrow_heads.head_dim = 2;
  ModelConfig odd_rope = test::tiny_llama_config();
  odd_rope.head_dim = 3;
  ModelConfig encoder_rope = test::tiny_encoder_config();
  encoder_rope.rope = RopeMode::interleaved;
  for (const Case& k :
       {Case{gqa_encoder, "key/value heads must equal query heads"},
        Case{narrow_heads, "head_dim * n_heads must equal dim"}, Case{odd_rope, "even head_dim"},
        Case{encoder_rope, "encoder models take no RoPE"}}) {
    const Status s = ein_validate_config(k.c);
    CAPTURE(k.message);
    CHECK(s.code == StatusCode::bad_format);
    CHECK(std::strstr(s.message, k.message) != nullptr);
  }
}

TEST_CASE("format: header fields and layout are as specified") {
  // What einfer-pack writes (version 0: the oldest version that holds the model): version 3 for
  // a plain llama (version 4 adds the families' and bert's fields).
  const std::vector<uint8_t> b = pack::write_ein(synthetic_image(tiny_llama_config(), true));
  CHECK(std::memcmp(b.data(), "EINF", 4) == 0);
  CHECK(get_field<uint32_t>(b, 4) == kEinVersion3);
  CHECK(get_field<uint32_t>(b, 36) == kArchBlockBytesV3);
  const uint32_t header_size = get_field<uint32_t>(b, 8);
  CHECK(header_size % 64 == 0);
  CHECK(get_field<uint64_t>(b, 16) == b.size());
  CHECK(get_field<uint32_t>(b, 28) == crc32_ieee(b.data() + header_size, b.size() - header_size));
  CHECK(get_field<uint32_t>(b, 24) == ein_header_crc(b.data(), header_size));
  const uint32_t count = get_field<uint32_t>(b, 44);
  CHECK(count == ein_expected_tensor_count(tiny_llama_config()));
  uint64_t prev_end = header_size;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t rec = get_field<uint32_t>(b, 40) + i * 80;
    const uint64_t off = get_field<uint64_t>(b, rec + 40), n = get_field<uint64_t>(b, rec + 48);
    CHECK(off % 64 == 0);
    CHECK(off >= prev_end);
    prev_end = off + n;
  }
}

TEST_CASE("format: the writer rejects missing, duplicate and foreign tensors") {
  pack::EinImage img = synthetic_image(tiny_llama_config());
  pack::EinImage dup = img;
  dup.tensors.push_back(dup.tensors.front());
  CHECK_THROWS_WITH_AS(pack::write_ein(dup), doctest::Contains("duplicate tensor"),
                       pack::PackError);
  pack::EinImage missing = img;
  missing.tensors.pop_back();
  CHECK_THROWS_WITH_AS(pack::write_ein(missing), doctest::Contains("missing tensor"),
                       pack::PackError);
  pack::EinImage foreign = img;
  const float zero[16] = {};
  foreign.tensors.push_back(pack::encode_tensor(TensorRole::bq, 0, {16}, zero, DType::f32, 0));
  CHECK_THROWS_WITH_AS(pack::write_ein(foreign), doctest::Contains("not used"), pack::PackError);
  pack::EinImage wrong_shape = img;
  wrong_shape.tensors.back().shape[0] += 1;
  CHECK_THROWS_AS(pack::write_ein(wrong_shape), pack::PackError);
}

TEST_CASE("format: load_model argument checks") {
  const std::vector<uint8_t> b = synthetic_bytes(tiny_llama_config());
  pack::AlignedBuffer buf(b);
  Model m;
  CHECK(load_model(nullptr, 100, LoadOptions{}, &m).code == StatusCode::invalid_argument);
  CHECK(load_model(buf.data, buf.size, LoadOptions{}, nullptr).code ==
        StatusCode::invalid_argument);
  // A misaligned buffer is refused up front (views into it would be misaligned).
  std::vector<uint8_t> shifted(b.size() + 64);
  pack::AlignedBuffer buf2(shifted);
  std::memcpy(buf2.data + 8, b.data(), b.size());
  const Status s = load_model(buf2.data + 8, b.size(), LoadOptions{}, &m);
  CHECK(s.code == StatusCode::invalid_argument);
  CHECK(std::string(s.message).find("aligned") != std::string::npos);
  // A buffer larger than the image is fine (a flash partition): file_size bounds the image.
  std::vector<uint8_t> bigger = b;
  bigger.resize(b.size() + 100, 0xAB);
  CHECK(load_bytes(bigger, &m).ok());
}
#endif  // EINFER_HAS_PACK_LIB

#if EINFER_HAS_PACK_LIB
#include "models/session.h"
#include "tools/einfer-pack/importers.h"

TEST_CASE("format: inspect lists every tensor and reports arena bytes or why not") {
  const ModelConfig c = einfer::test::tiny_llama_config(DType::q4, 8);
  const std::vector<uint8_t> b = einfer::test::synthetic_bytes(c);
  pack::AlignedBuffer buf(b);
  Model m;
  REQUIRE(load_model(buf.data, buf.size, LoadOptions{}, &m).ok());
  RunOptions run;
  run.context = 16;
  run.kv_dtype = DType::i8;
  const std::string text = pack::describe_model(m, run, false);
  CHECK(text.find("architecture: llama  dim 16") != std::string::npos);
  CHECK(text.find("weights q4, group 8") != std::string::npos);
  CHECK(text.find("kv q8") != std::string::npos);
  size_t rows = 0;
  for (size_t p = text.find("\nwq "); p != std::string::npos; p = text.find("\nwq ", p + 1)) ++rows;
  CHECK(rows == 2);  // one per layer
  size_t arena = 0;
  const Status as = session_arena_bytes(c, run, &arena);
  if (as.ok())
    CHECK(text.find("): " + std::to_string(arena)) != std::string::npos);
  else
    CHECK(text.find(std::string("n/a (") + as.message) != std::string::npos);
  const std::string json = pack::describe_model(m, run, true);
  CHECK(json.find("\"tensor_count\": 21") != std::string::npos);
  CHECK(json.find("\"weight_dtype\": \"q4\"") != std::string::npos);
  CHECK(json.find(as.ok() ? "\"arena_bytes\": " + std::to_string(arena)
                          : "\"arena_bytes\": null") != std::string::npos);
  pack::EmitCNames names;
  names.symbol = "tiny_model";
  names.header_name = "tiny.h";
  names.source_name = "tiny.c";
  names.section = ".flash_models";
  const pack::EmittedC emitted = pack::emit_c(b, m, run, pack::CApiSizing{}, names);
  const std::string& header = emitted.header;
  CHECK(header.find("#define TINY_MODEL_BYTES " + std::to_string(b.size()) + "u") !=
        std::string::npos);
  CHECK(header.find(as.ok() ? "#define TINY_MODEL_ARENA_BYTES" : "TINY_MODEL_ARENA_BYTES: n/a") !=
        std::string::npos);
  // The header declares, the source defines: one copy of the image however many files include it.
  CHECK(header.find("extern const uint8_t tiny_model_data[TINY_MODEL_BYTES];") !=
        std::string::npos);
  CHECK(header.find("0x") == std::string::npos);
  CHECK(header.find("#define TINY_MODEL_SECTION \".flash_models\"") != std::string::npos);
  CHECK(emitted.source.find("#include \"tiny.h\"") != std::string::npos);
  CHECK(emitted.source.find("static") == std::string::npos);
  CHECK(emitted.source.find("section(TINY_MODEL_SECTION), used") != std::string::npos);
  CHECK(emitted.source.find("EINFER_EMIT_ALIGNAS(TINY_MODEL_ALIGNMENT) const uint8_t "
                            "tiny_model_data[TINY_MODEL_BYTES] = {") != std::string::npos);
}
#endif
