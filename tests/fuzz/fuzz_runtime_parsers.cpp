// libFuzzer target for the einsum spec parser + planner (the tokenizer image has its own,
// fuzz_tokenizer.cpp). Any byte string must give a Status, never a crash or UB.
// Selected by EINFER_FUZZ_PARSER at compile time (tests/fuzz/CMakeLists.txt).
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/einsum/einsum.h"

using namespace einfer;

namespace {
volatile unsigned char g_sink;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
#if EINFER_FUZZ_PARSER == 2
  // The spec as a NUL-terminated string; then planned against small operands whose shapes come
  // from the labels (each label's extent 1 + its letter % 3), so planning sees every spec parsed.
  char spec[128];
  const size_t n = size < sizeof spec - 1 ? size : sizeof spec - 1;
  std::memcpy(spec, data, n);
  spec[n] = '\0';
  EinsumSpec parsed;
  if (!parse_einsum(spec, &parsed).ok() || parsed.n_inputs > 2) return 0;
  static float values[4096];
  TensorView views[2];
  for (int t = 0; t < parsed.n_inputs && t < 2; ++t) {
    int64_t shape[kMaxRank];
    const int rank = parsed.in[t].n < kMaxRank ? parsed.in[t].n : kMaxRank;
    for (int i = 0; i < rank; ++i) shape[i] = 1 + parsed.in[t].labels[i] % 3;
    views[t] = make_view(DType::f32, values, shape, rank);
  }
  EinsumPlan plan;
  if (plan_einsum(parsed, views, parsed.n_inputs, &plan).ok()) {
    g_sink = static_cast<unsigned char>(plan.scratch_bytes);
  }
#else
#error "EINFER_FUZZ_PARSER must select a parser"
#endif
  return 0;
}
