// einfer-pack --emit-c: the generated header compiles, its constants are usable at compile time,
// and the const array loads in place (it is what firmware puts in flash).
#if EINFER_HAS_EMITTED_MODEL
#include <doctest/doctest.h>

#include <cstdint>

#include "emitted_model.h"
#include "runtime/model.h"

static_assert(EINFER_MODEL_BYTES > 256, "emitted model size is a compile-time constant");
static_assert(EINFER_MODEL_TENSORS == 21, "llama2c_v2.bin has 2 layers of 9 tensors + 3 globals");

TEST_CASE("emit-c: the emitted array is aligned and loads in place") {
  CHECK(reinterpret_cast<uintptr_t>(einfer_model_data) % 64 == 0);
  CHECK(sizeof einfer_model_data == EINFER_MODEL_BYTES);
  einfer::Model m;
  const einfer::Status s =
      einfer::load_model(einfer_model_data, EINFER_MODEL_BYTES, einfer::LoadOptions{}, &m);
  REQUIRE(s.ok());
  CHECK(m.config.weight_dtype == einfer::DType::q4);
  CHECK(m.config.group_size == 8);
  CHECK(m.tokenizer != nullptr);
  CHECK(m.tensor_count == EINFER_MODEL_TENSORS);
  einfer::TensorView v;
  REQUIRE(einfer::model_tensor(m, einfer::TensorRole::w2, 1, &v).ok());
  CHECK(static_cast<const void*>(v.data) >= static_cast<const void*>(einfer_model_data));
  CHECK(static_cast<const unsigned char*>(v.data) < einfer_model_data + EINFER_MODEL_BYTES);
}
#endif
