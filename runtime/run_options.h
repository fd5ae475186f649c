// Run options: everything besides the model file that decides how much arena a session needs.
#pragma once

#include <cstdint>

#include "runtime/dtype.h"
#include "runtime/threads.h"

namespace einfer {

// Upper bounds session creation enforces (tools name them in their option messages): context and
// window at the loader's limit on any dimension, the prefill batch far beyond any real use. Sizes
// derived from them are also checked arithmetic (runtime/checked.h), so on 32-bit targets a value
// within these bounds can still be refused as too large for the address space.
inline constexpr int32_t kMaxRunPositions = int32_t{1} << 24;
inline constexpr int32_t kMaxRunBatch = 65536;

struct RunOptions {
  int32_t context = 0;  // positions kept in the KV cache (0: the model's context length)
  int32_t window = 0;   // sliding-window size W (0: no window, cache holds `context` positions)
  int32_t sinks = 0;    // attention sinks pinned in the cache (window mode only)
  DType kv_dtype = DType::f32;  // f32 or i8 (one float scale per slot and kv head)
  int32_t max_batch = 0;        // most prompt tokens evaluated in one prefill call (0: 128)
  bool cache_plans = true;      // keep the projections' einsum plans in the arena (about 1 KB each,
                                // 8 of them) instead of planning every call: off where RAM is tight
  // The caller's workers (runtime/threads.h). threads.n sizes one kernel-scratch slot per worker
  // (also with run == null, to size an arena for a pool attached later); run == null or n <= 1
  // runs every kernel on the calling thread. Results are the same bits for any n.
  Threads threads = {nullptr, 1, nullptr};
};

}  // namespace einfer
