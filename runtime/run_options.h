// Run options: everything besides the model file that decides how much arena a session needs.
#pragma once

#include <cstdint>

#include "runtime/dtype.h"
#include "runtime/threads.h"

namespace einfer {

struct RunOptions {
  int32_t context = 0;  // positions kept in the KV cache (0: the model's context length)
  int32_t window = 0;   // sliding-window size W (0: no window, cache holds `context` positions)
  int32_t sinks = 0;    // attention sinks pinned in the cache (window mode only)
  DType kv_dtype = DType::f32;  // f32 or i8 (one float scale per slot and kv head)
  int32_t max_batch = 0;        // most prompt tokens evaluated in one prefill call (0: 64)
  bool cache_plans = true;      // keep the projections' einsum plans in the arena (about 1 KB each,
                                // 8 of them) instead of planning every call: off where RAM is tight
  // The caller's workers (runtime/threads.h). threads.n sizes one kernel-scratch slot per worker
  // (also with run == null, to size an arena for a pool attached later); run == null or n <= 1
  // runs every kernel on the calling thread. Results are the same bits for any n.
  Threads threads = {nullptr, 1, nullptr};
};

}  // namespace einfer
