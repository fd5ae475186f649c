// Cortex-M check for einfer-pack --emit-c: the emitted model.h/model.c compile with arm-none-eabi
// (C11; C++20 -fno-exceptions -fno-rtti), its size is a compile-time constant, and the array in
// flash loads in place with the CRC pass. Run by tools/scripts/emit-c-cortex-m.sh on qemu
// mps2-an386.
#include <cstdio>

#include "emitted_model.h"
#include "runtime/model.h"

static_assert(EINFER_MODEL_BYTES > 0, "model size is a compile-time constant");
static_assert(sizeof einfer_model_data == EINFER_MODEL_BYTES);

int main() {
  einfer::Model m;
  const einfer::Status s =
      einfer::load_model(einfer_model_data, EINFER_MODEL_BYTES, einfer::LoadOptions{}, &m);
  std::printf("cortex-m: load_model: %s, tensors %u, dim %d, flash at %p\n", s.message,
              static_cast<unsigned>(m.tensor_count), static_cast<int>(m.config.dim),
              static_cast<const void*>(einfer_model_data));
  einfer::TensorView v;
  const bool ok = s.ok() && m.tensor_count == EINFER_MODEL_TENSORS &&
                  einfer::model_tensor(m, einfer::TensorRole::w2, 1, &v).ok() &&
                  static_cast<const unsigned char*>(v.data) > einfer_model_data;
  std::printf("cortex-m: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
