// The multi-head attention layer (models/mha.h) against PyTorch nn.MultiheadAttention
// (batch_first, with biases), bidirectional and causal; vectors from tests/gen/gen_mha.py.
// einfer-test: no-bare-metal
#include <doctest/doctest.h>

#if EINFER_HAVE_TOOL_COMMON  // needs the host-side .npy reader

#include <cmath>
#include <string>
#include <vector>

#include "models/mha.h"
#include "tools/common/npy.h"

using namespace einfer;

namespace {

tools::NpyArray load(const std::string& name) {
  tools::NpyArray a;
  std::string err;
  const bool ok =
      tools::read_npy(std::string(EINFER_TEST_DATA_DIR) + "/mha/" + name + ".npy", &a, &err);
  REQUIRE_MESSAGE(ok, err);
  return a;
}

TensorView view(tools::NpyArray& a) {
  return make_view(DType::f32, a.data.data(), a.shape.data(), static_cast<int>(a.shape.size()));
}

}  // namespace

TEST_CASE(
    "mha: matches torch.nn.MultiheadAttention (batch_first, biases), bidirectional and causal") {
  tools::NpyArray wq = load("wq"), wk = load("wk"), wv = load("wv"), wo = load("wo");
  tools::NpyArray bq = load("bq"), bk = load("bk"), bv = load("bv"), bo = load("bo");
  tools::NpyArray x = load("x");
  const int64_t batch = x.shape[0], seq = x.shape[1], d = x.shape[2];
  const int32_t heads = 4;

  MhaWeights w;
  w.wq = view(wq);
  w.wk = view(wk);
  w.wv = view(wv);
  w.wo = view(wo);
  w.bq = view(bq);
  w.bk = view(bk);
  w.bv = view(bv);
  w.bo = view(bo);

  for (const bool causal : {false, true}) {
    tools::NpyArray want = load(causal ? "y_causal" : "y_bidir");
    MhaConfig c;
    c.dim = static_cast<int32_t>(d);
    c.n_heads = c.n_kv_heads = heads;
    c.head_dim = static_cast<int32_t>(d) / heads;
    c.causal = causal;
    size_t scratch_bytes = 0;
    REQUIRE(mha_scratch_bytes(c, w, static_cast<int32_t>(seq), &scratch_bytes).ok());
    std::vector<float> q(seq * d), k(seq * d), v(seq * d), att(seq * d), out(seq * d);
    std::vector<unsigned char> scratch(scratch_bytes + 64);
    void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
    const MhaBuffers b{q.data(), k.data(), v.data(), att.data(), aligned, scratch_bytes};
    for (int64_t bi = 0; bi < batch; ++bi) {
      const float* xi = x.data.data() + bi * seq * d;
      REQUIRE(mha_forward(w, c, xi, static_cast<int32_t>(seq), 0, nullptr, 0, b, out.data()).ok());
      for (int64_t i = 0; i < seq * d; ++i) {
        const float ref = want.data[bi * seq * d + i];
        CAPTURE(causal);
        CAPTURE(i);
        // 1e-5 relative to the output's scale (float32 sums of 24 terms in a different order).
        CHECK(std::fabs(out[i] - ref) <= 1e-5f * std::fmax(1.f, std::fabs(ref)));
      }
    }
  }
}

#endif  // EINFER_HAVE_TOOL_COMMON
