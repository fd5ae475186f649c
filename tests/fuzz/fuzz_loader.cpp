// libFuzzer target for the .ein loader: any byte string must give a Status, never a crash, an
// out-of-bounds read (ASan) or undefined behaviour (UBSan). Accepted images are walked tensor by
// tensor, touching the first and last byte of every region, so a bad bounds check shows up as an
// ASan report. Built with clang only (EINFER_FUZZ=ON): tools/scripts/fuzz-loader.sh.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "runtime/format.h"
#include "runtime/model.h"

namespace {

volatile unsigned char g_sink;

void touch(const void* p, size_t n) {
  if (n == 0) return;
  const unsigned char* b = static_cast<const unsigned char*>(p);
  g_sink = static_cast<unsigned char>(b[0] ^ b[n - 1]);
}

void walk(const einfer::Model& m) {
  using namespace einfer;
  for (uint32_t r = 0; r < kTensorRoleCount; ++r) {
    const TensorRole role = static_cast<TensorRole>(r);
    const int layers = ein_role_per_layer(role) ? m.config.n_layers : 1;
    for (int l = 0; l < layers; ++l) {
      TensorView v;
      if (!model_tensor(m, role, ein_role_per_layer(role) ? l : -1, &v).ok()) continue;
      const int64_t cols = v.shape[v.rank - 1], rows = v.numel() / cols;
      touch(v.data, static_cast<size_t>(rows) * quant_row_bytes(v.dtype, cols));
      if (v.scales)
        touch(v.scales, static_cast<size_t>(rows * quant_groups(cols, v.group_size)) * 4);
    }
  }
  touch(m.tokenizer, m.tokenizer_bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The loader requires a 64-byte aligned buffer; give it one of exactly `size` bytes so any read
  // past the end hits ASan's redzone.
  void* buf = std::aligned_alloc(64, (size + 63) / 64 * 64 + 64);
  if (buf == nullptr) return 0;
  unsigned char* p = static_cast<unsigned char*>(buf);
  if (size) std::memcpy(p, data, size);
  einfer::Model m;
  for (bool crc : {false, true}) {
    einfer::LoadOptions o;
    o.verify_crc = crc;
    const einfer::Status s = einfer::load_model(p, size, o, &m);
    if (s.ok())
      walk(m);
    else
      touch(s.message, std::strlen(s.message));
  }
  std::free(buf);
  return 0;
}
