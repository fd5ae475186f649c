// Issue 19's encoder-decoder: PyTorch nn.Transformer state dicts packed with the torch-transformer
// importer, run with models/transformer.h and the C API, against torch's own outputs
// (tests/gen/gen_encdec.py: batch_first, dropout 0, causal tgt_mask). Full decodes within 1e-4 of
// torch; one-row-at-a-time decoding through the KV cache equal to the full decode; arena sizes
// exact; the state machine refuses decoding without a memory and past its bound.
// einfer-test: no-bare-metal
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/format.h"

#if EINFER_HAS_PACK_LIB

#include "models/einfer.h"
#include "models/transformer.h"
#include "tests/npy_reader.h"
#include "tests/session_fixtures.h"
#include "tests/test_util.h"
#include "tools/einfer-pack/importers.h"

using namespace einfer;

namespace {

std::string encdec(const std::string& name) {
  return std::string(EINFER_TEST_DATA_DIR) + "/encdec/" + name;
}

struct Rows {
  std::vector<float> values;
  int32_t rows = 0;
};

Rows npy(const std::string& name, int32_t dim) {
  const einfer_test::NpyArray a = einfer_test::load_npy(encdec(name));
  REQUIRE_MESSAGE(a.ok, "cannot read " << encdec(name));
  Rows r;
  r.values = a.to_f32();
  r.rows = static_cast<int32_t>(r.values.size()) / dim;
  REQUIRE(static_cast<size_t>(r.rows) * static_cast<size_t>(dim) == r.values.size());
  return r;
}

using einfer_test::max_diff;

pack::SourceModel import_case(const std::string& name) {
  pack::TorchEncoderOptions o;  // heads, activation, norm_first, eps, context from the metadata
  return pack::import_torch_transformer(pack::read_file(encdec(name + ".safetensors")), o);
}

// A packed case bound with its state in an arena of exactly transformer_arena_bytes.
struct Packed {
  pack::AlignedBuffer image;
  Model model;
  einfer_test::AlignedMemory memory;
  TransformerWeights weights;
  TransformerState state;

  Packed(const std::string& name, DType dtype, int32_t max_source, int32_t max_target)
      : image(pack::write_ein(pack::pack_source(import_case(name), dtype, 8, nullptr))),
        model(einfer_test::loaded_model(image.data, image.size)),
        memory(arena_bytes(model, max_source, max_target)) {
    Arena arena(memory.base, memory.bytes);
    REQUIRE(transformer_bind_weights(model, arena, &weights).ok());
    REQUIRE(transformer_state_init(model.config, max_source, max_target, arena, &state).ok());
    CHECK(arena.high_water() == memory.bytes);  // transformer_arena_bytes is exact
  }

  static size_t arena_bytes(const Model& m, int32_t max_source, int32_t max_target) {
    size_t bytes = 0;
    REQUIRE(transformer_arena_bytes(m.config, max_source, max_target, &bytes).ok());
    return bytes;
  }
};

struct Case {
  const char* name;
  int32_t dim, encoder_layers, decoder_layers;
};
constexpr Case kCases[] = {
    {"relu_post", 16, 2, 2},
    {"gelu_pre", 16, 2, 3},
    {"relu_pre_1head", 8, 1, 2},
    {"gelu_post", 24, 1, 1},
};

struct Decoded {
  std::vector<float> full, incremental;
};

Decoded decode_both(Packed& p, const Rows& src, const Rows& tgt, int32_t dim) {
  Decoded r;
  r.full.resize(tgt.values.size());
  r.incremental.resize(tgt.values.size());
  Status s = transformer_encode_memory(p.weights, &p.state, src.values.data(), src.rows);
  REQUIRE_MESSAGE(s.ok(), s.message);
  s = transformer_decode(p.weights, &p.state, tgt.values.data(), tgt.rows, r.full.data());
  REQUIRE_MESSAGE(s.ok(), s.message);
  CHECK(p.state.target_rows == tgt.rows);
  // A new memory restarts the target; rows then come one at a time through the cache.
  REQUIRE(transformer_encode_memory(p.weights, &p.state, src.values.data(), src.rows).ok());
  CHECK(p.state.target_rows == 0);
  for (int32_t i = 0; i < tgt.rows; ++i) {
    s = transformer_decode_step(p.weights, &p.state, tgt.values.data() + i * dim,
                                r.incremental.data() + i * dim);
    REQUIRE_MESSAGE(s.ok(), s.message);
  }
  return r;
}

}  // namespace

TEST_CASE("encoder-decoder: nn.Transformer within 1e-4 of PyTorch, incremental equal to full") {
  for (const Case& c : kCases) {
    CAPTURE(c.name);
    const Rows src = npy(std::string(c.name) + "_src.npy", c.dim);
    const Rows tgt = npy(std::string(c.name) + "_tgt.npy", c.dim);
    const Rows ref = npy(std::string(c.name) + "_out.npy", c.dim);
    Packed p(c.name, DType::f32, src.rows, tgt.rows);
    CHECK(p.model.config.arch == ArchKind::transformer);
    CHECK(p.model.config.n_layers == c.encoder_layers);
    CHECK(p.model.config.n_decoder_layers == c.decoder_layers);
    const Decoded d = decode_both(p, src, tgt, c.dim);
    CHECK(max_diff(d.full, ref.values) <= 1e-4f);
    CHECK(max_diff(d.incremental, ref.values) <= 1e-4f);
    // The projections of one row and of many sum in different orders (GEMV vs GEMM tiles), so
    // the two decodes agree to float rounding rather than bit for bit; attention and the cache are
    // exact.
    CHECK(max_diff(d.incremental, d.full) <= 1e-5f);
  }
}

TEST_CASE("encoder-decoder: q8 and q4 weights on the same arena rules, incremental == full") {
  for (const Case& c : kCases) {
    CAPTURE(c.name);
    const Rows src = npy(std::string(c.name) + "_src.npy", c.dim);
    const Rows tgt = npy(std::string(c.name) + "_tgt.npy", c.dim);
    const Rows ref = npy(std::string(c.name) + "_out.npy", c.dim);
    // Quantized weights (and q8 activations) move the outputs by their rounding: loose bounds,
    // tighter for q8 than q4. Outputs are LayerNorm-scaled (|y| of order 1).
    for (DType dt : {DType::q8, DType::q4}) {
      CAPTURE(dtype_name(dt));
      Packed p(c.name, dt, src.rows, tgt.rows);
      CHECK(p.model.config.weight_dtype == dt);
      const Decoded d = decode_both(p, src, tgt, c.dim);
      CHECK(max_diff(d.full, ref.values) <= (dt == DType::q8 ? 0.1f : 1.0f));
      CHECK(max_diff(d.incremental, d.full) <= 1e-5f);
    }
  }
}

TEST_CASE("encoder-decoder: the state machine refuses decoding without memory and past bounds") {
  const Case& c = kCases[0];
  const Rows src = npy(std::string(c.name) + "_src.npy", c.dim);
  const Rows tgt = npy(std::string(c.name) + "_tgt.npy", c.dim);
  Packed p(c.name, DType::f32, src.rows, 3);
  std::vector<float> out(tgt.values.size());
  const float* t = tgt.values.data();
  // Nothing encoded yet.
  CHECK(transformer_decode_step(p.weights, &p.state, t, out.data()).code ==
        StatusCode::invalid_argument);
  CHECK(transformer_decode(p.weights, &p.state, t, 2, out.data()).code ==
        StatusCode::invalid_argument);
  // Sources outside 1..max_source leave no memory behind.
  CHECK(transformer_encode_memory(p.weights, &p.state, src.values.data(), 0).code ==
        StatusCode::out_of_range);
  CHECK(transformer_encode_memory(p.weights, &p.state, src.values.data(), src.rows + 1).code ==
        StatusCode::out_of_range);
  CHECK(transformer_encode_memory(p.weights, &p.state, nullptr, 1).code ==
        StatusCode::invalid_argument);
  REQUIRE(transformer_encode_memory(p.weights, &p.state, src.values.data(), src.rows).ok());
  CHECK(transformer_decode(p.weights, &p.state, t, 4, out.data()).code == StatusCode::out_of_range);
  CHECK(transformer_decode(p.weights, &p.state, nullptr, 2, out.data()).code ==
        StatusCode::invalid_argument);
  for (int32_t i = 0; i < 3; ++i)
    REQUIRE(transformer_decode_step(p.weights, &p.state, t + i * c.dim, out.data()).ok());
  CHECK(transformer_decode_step(p.weights, &p.state, t, out.data()).code ==
        StatusCode::out_of_range);
  CHECK(transformer_decode_step(p.weights, nullptr, t, out.data()).code ==
        StatusCode::invalid_argument);
  // A failed encode drops the memory: decoding fails until an encode succeeds.
  CHECK_FALSE(transformer_encode_memory(p.weights, &p.state, src.values.data(), 0).ok());
  CHECK(transformer_decode_step(p.weights, &p.state, t, out.data()).code ==
        StatusCode::invalid_argument);
  // max sizes beyond the model's context (128 in the metadata) are refused at init.
  size_t bytes = 0;
  CHECK(transformer_arena_bytes(p.model.config, 129, 4, &bytes).code == StatusCode::out_of_range);
}

TEST_CASE("encoder-decoder: C API encodes once and decodes step by step (PyTorch within 1e-4)") {
  const Case& c = kCases[1];
  const Rows src = npy(std::string(c.name) + "_src.npy", c.dim);
  const Rows tgt = npy(std::string(c.name) + "_tgt.npy", c.dim);
  const Rows ref = npy(std::string(c.name) + "_out.npy", c.dim);
  pack::AlignedBuffer image(
      pack::write_ein(pack::pack_source(import_case(c.name), DType::f32, 32, nullptr)));
  einfer_options opt;
  einfer_options_default(&opt);
  opt.context = src.rows > tgt.rows ? src.rows : tgt.rows;
  // einfer_arena_bytes is exact: the session uses its memory to the byte.
  einfer_test::CapiSession session(image.data, image.size, opt);
  einfer_session* s = session.s;
  CHECK(einfer_architecture(s) == EINFER_ARCH_TRANSFORMER);
  CHECK(einfer_max_sequence(s) == opt.context);
  std::vector<float> y(tgt.values.size());
  CHECK(einfer_decode_step(s, tgt.values.data(), y.data()) == EINFER_E_INVALID_ARGUMENT);
  CHECK(std::string(einfer_error(s)).find("encode") != std::string::npos);
  REQUIRE_MESSAGE(einfer_encode_memory(s, src.values.data(), src.rows) == 0, einfer_error(s));
  for (int32_t i = 0; i < tgt.rows; ++i) {
    CHECK(einfer_target_rows(s) == i);
    REQUIRE_MESSAGE(einfer_decode_step(s, tgt.values.data() + i * c.dim, y.data() + i * c.dim) == 0,
                    einfer_error(s));
  }
  CHECK(max_diff(y, ref.values) <= 1e-4f);
  std::vector<float> full(y.size());
  REQUIRE(einfer_decode_target(s, tgt.values.data(), tgt.rows, full.data()) == 0);
  CHECK(max_diff(full, y) <= 1e-5f);
  CHECK(einfer_decode_step(s, nullptr, y.data()) == EINFER_E_INVALID_ARGUMENT);
  CHECK(einfer_encode_memory(nullptr, src.values.data(), 1) == EINFER_E_INVALID_ARGUMENT);
  CHECK(einfer_decode_step(nullptr, tgt.values.data(), y.data()) == EINFER_E_INVALID_ARGUMENT);
  // Token and encoder entry points are not this architecture's.
  const int32_t ids[1] = {1};
  CHECK(einfer_prefill(s, ids, 1) == EINFER_E_INVALID_ARGUMENT);
  CHECK(einfer_encode(s, src.values.data(), src.rows, y.data()) == EINFER_E_INVALID_ARGUMENT);
}

TEST_CASE("encoder-decoder: .ein schema (decoder layers hold the cross roles) and validation") {
  const pack::SourceModel src = import_case("gelu_pre");
  ModelConfig c = src.config;
  REQUIRE(ein_validate_config(c).ok());
  // Encoder layers: 16 roles (q/k/v/o + biases, 2 norms + biases, FFN + biases); decoder layers
  // add 10 cross roles; then 4 final-norm tensors.
  CHECK(ein_expected_tensor_count(c) == 2 * 16 + 3 * 26 + 4);
  CHECK_FALSE(ein_role_in_layer(c, TensorRole::cross_wq, 1));
  CHECK(ein_role_in_layer(c, TensorRole::cross_wq, 2));
  TensorRole role;
  int32_t layer;
  ein_canonical_entry(c, 2 * 16, &role, &layer);  // the first decoder tensor
  CHECK(role == TensorRole::attn_norm);
  CHECK(layer == 2);
  ein_canonical_entry(c, ein_expected_tensor_count(c) - 1, &role, &layer);
  CHECK(role == TensorRole::decoder_norm_bias);
  CHECK(layer == -1);
  ModelConfig bad = c;
  bad.n_decoder_layers = 0;
  CHECK_FALSE(ein_validate_config(bad).ok());
  bad = c;
  bad.causal = 1;
  CHECK_FALSE(ein_validate_config(bad).ok());
  bad = c;
  bad.arch = ArchKind::encoder;  // decoder layers belong to transformers only
  CHECK_FALSE(ein_validate_config(bad).ok());
  // A packed image round-trips through the loader with every tensor where the schema puts it.
  pack::AlignedBuffer image(pack::write_ein(pack::pack_source(src, DType::f32, 32, nullptr)));
  Model m;
  REQUIRE(load_model(image.data, image.size, LoadOptions{}, &m).ok());
  CHECK(m.config.n_decoder_layers == 3);
  TensorView v;
  CHECK(model_tensor(m, TensorRole::cross_wk, 4, &v).ok());
  CHECK(v.shape[0] == 16);
  CHECK(model_tensor(m, TensorRole::cross_wk, 1, &v).code == StatusCode::out_of_range);
  CHECK(model_tensor(m, TensorRole::wq, 5, &v).code == StatusCode::out_of_range);
}

#endif  // EINFER_HAS_PACK_LIB
