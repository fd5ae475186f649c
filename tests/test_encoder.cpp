// PyTorch-style encoders packed from PyTorch state dicts (safetensors written by
// tests/gen/gen_torch_encoder.py) reproduce PyTorch's own outputs.
// einfer-test: no-bare-metal
#include <doctest/doctest.h>

#if EINFER_HAS_PACK_LIB  // needs the host-side packer library

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "models/einfer.h"
#include "models/encoder.h"
#include "tests/session_fixtures.h"
#include "tools/einfer-pack/importers.h"

using namespace einfer;

namespace {

std::string data(const std::string& name) {
  return std::string(EINFER_TEST_DATA_DIR) + "/format/" + name;
}

std::vector<float> read_f32(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f, "cannot read " << path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

// Packs the state dict, runs the encoder on `in` [seq, d] and returns [seq, d].
std::vector<float> run(const std::string& safetensors, const pack::TorchEncoderOptions& o,
                       const std::vector<float>& in, DType dtype) {
  const pack::SourceModel src = pack::import_torch_encoder(pack::read_file(data(safetensors)), o);
  pack::AlignedBuffer image(pack::write_ein(pack::pack_source(src, dtype, 32, nullptr)));
  Model m;
  REQUIRE(load_model(image.data, image.size, LoadOptions{}, &m).ok());
  const int32_t d = m.config.dim;
  const int32_t seq = static_cast<int32_t>(in.size()) / d;
  einfer_test::EncoderRun run(m, seq);
  CHECK(run.arena.high_water() == run.memory.bytes);  // encoder_arena_bytes is exact
  std::vector<float> out(in.size());
  const Status st = encoder_forward(run.w, &run.s, in.data(), seq, out.data());
  REQUIRE_MESSAGE(st.ok(), st.message);
  return out;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  REQUIRE(got.size() == want.size());
  float worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::fmax(worst, std::fabs(got[i] - want[i]));
  MESSAGE("max |einfer - torch| = " << worst);
  CHECK(worst <= tol);
}

}  // namespace

TEST_CASE(
    "encoder: nn.TransformerEncoder (pre-norm, GELU, final norm) matches PyTorch within 1e-4") {
  pack::TorchEncoderOptions o;  // heads, activation, norm_first, eps come from the metadata
  const std::vector<float> x = read_f32(data("torch_encoder_in.f32"));
  check_close(run("torch_encoder.safetensors", o, x, DType::f32),
              read_f32(data("torch_encoder_out.f32")), 1e-4f);
}

TEST_CASE(
    "encoder: a single nn.TransformerEncoderLayer (post-norm, ReLU) matches PyTorch within 1e-4") {
  pack::TorchEncoderOptions o;
  o.heads = 4;
  const std::vector<float> x = read_f32(data("torch_encoder_in.f32"));
  check_close(run("torch_encoder_layer.safetensors", o, x, DType::f32),
              read_f32(data("torch_encoder_layer_out.f32")), 1e-4f);
}

TEST_CASE("encoder: sequences longer than the state or empty are refused") {
  pack::TorchEncoderOptions o;
  o.heads = 4;
  const pack::SourceModel src =
      pack::import_torch_encoder(pack::read_file(data("torch_encoder_layer.safetensors")), o);
  pack::AlignedBuffer image(pack::write_ein(pack::pack_source(src, DType::f32, 32, nullptr)));
  Model m;
  REQUIRE(load_model(image.data, image.size, LoadOptions{}, &m).ok());
  einfer_test::EncoderRun run(m, 4);
  std::vector<float> x(5 * 16), y(5 * 16);
  CHECK(encoder_forward(run.w, &run.s, x.data(), 5, y.data()).code == StatusCode::out_of_range);
  CHECK(encoder_forward(run.w, &run.s, x.data(), 0, y.data()).code == StatusCode::out_of_range);
}

TEST_CASE(
    "encoder: the C API runs it like a decoder session (einfer_encode), PyTorch within 1e-4") {
  pack::TorchEncoderOptions o;
  const pack::SourceModel src =
      pack::import_torch_encoder(pack::read_file(data("torch_encoder.safetensors")), o);
  pack::AlignedBuffer image(pack::write_ein(pack::pack_source(src, DType::f32, 32, nullptr)));
  const std::vector<float> x = read_f32(data("torch_encoder_in.f32"));
  const int32_t d = src.config.dim;
  const int32_t seq = static_cast<int32_t>(x.size()) / d;
  einfer_options opt;
  einfer_options_default(&opt);
  opt.context = seq;
  // einfer_arena_bytes is exact: the session uses its memory to the byte.
  einfer_test::CapiSession session(image.data, image.size, opt);
  einfer_session* s = session.s;
  CHECK(einfer_architecture(s) == EINFER_ARCH_ENCODER);
  CHECK(einfer_model_dim(s) == d);
  CHECK(einfer_max_sequence(s) == seq);
  CHECK(einfer_vocab_size(s) == 0);
  std::vector<float> y(x.size());
  REQUIRE_MESSAGE(einfer_encode(s, x.data(), seq, y.data()) == 0, einfer_error(s));
  check_close(y, read_f32(data("torch_encoder_out.f32")), 1e-4f);
  // A longer sequence than the session holds, and token input, are refused with a message.
  CHECK(einfer_encode(s, x.data(), seq + 1, y.data()) == EINFER_E_OUT_OF_RANGE);
  const int32_t ids[1] = {1};
  CHECK(einfer_prefill(s, ids, 1) == EINFER_E_INVALID_ARGUMENT);
  CHECK(std::string(einfer_error(s)).find("encoder") != std::string::npos);
  // Encoders neither sample nor tokenize.
  opt.temperature = 0.5f;
  char err[160] = {};
  size_t need = 0;
  CHECK(einfer_arena_bytes(image.data, image.size, &opt, &need, err, sizeof err) ==
        EINFER_E_INVALID_ARGUMENT);
}

#endif  // EINFER_HAS_PACK_LIB
