// libFuzzer targets for the no-heap parsers: the tokenizer.bin reader (init, encode, decode) and
// the einsum spec parser + planner. Any byte string must give a Status, never a crash or UB.
// Selected by EINFER_FUZZ_PARSER at compile time (tests/fuzz/CMakeLists.txt).
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/einsum.h"
#include "models/tokenizer.h"
#include "runtime/arena.h"

using namespace einfer;

namespace {
volatile unsigned char g_sink;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
#if EINFER_FUZZ_PARSER == 1
  // First two bytes: vocab_size - 259 and a text length; then the tokenizer.bin, then `text`
  // bytes that are encoded (so lookups and merges run against the hostile vocabulary).
  if (size < 2) return 0;
  const int32_t vocab = 259 + data[0];
  const size_t text = data[1] % 32 <= size - 2 ? data[1] % 32 : 0;
  const uint8_t* file = data + 2;
  const size_t bytes = size - 2 - text;
  Tokenizer t;
  const size_t need = tokenizer_arena_bytes(vocab);
  void* mem = std::aligned_alloc(64, (need + 63) / 64 * 64);
  Arena arena(mem, need);
  if (tokenizer_init(&t, file, bytes, vocab, arena).ok()) {
    const char* s = reinterpret_cast<const char*>(file + bytes);
    const size_t scratch_bytes = tokenizer_encode_scratch_bytes(t, text);
    void* scratch = std::malloc(scratch_bytes ? scratch_bytes : 1);
    int32_t ids[64];
    int32_t n = 0;
    if (tokenizer_encode(t, s, text, true, true, ids, 64, &n, scratch, scratch_bytes).ok())
      for (int32_t i = 1; i < n; ++i) {
        const TokenPiece p = tokenizer_decode(t, ids[i - 1], ids[i]);
        if (p.size) g_sink = static_cast<unsigned char>(p.data[0] ^ p.data[p.size - 1]);
      }
    std::free(scratch);
  }
  Tokenizer d;
  if (tokenizer_init_decode_only(&d, file, bytes, vocab).ok())
    for (int32_t id = -1; id <= vocab; id += 7) {
      const TokenPiece p = tokenizer_decode(d, 1, id);
      if (p.size) g_sink = static_cast<unsigned char>(p.data[0] ^ p.data[p.size - 1]);
    }
  std::free(mem);
#elif EINFER_FUZZ_PARSER == 2
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
