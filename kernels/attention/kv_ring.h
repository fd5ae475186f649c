// Where a position lives in a KV cache ring, the one formula the cache (models/kv_cache.cpp), the
// block writer (models/mha.cpp) and the attention kernel (kernels/attention.cpp) share.
//
// A cache of `capacity` slots with `sinks` pinned ones keeps positions p < sinks in slot p and
// rotates every later position through the remaining capacity - sinks slots. Here in kernels/,
// the lowest layer above runtime/, so the kernels and models/ may both include it.
#pragma once

#include <cstdint>

namespace einfer {

// Slot of position `pos` (>= 0) in a ring of `capacity` slots, the first `sinks` pinned
// (0 <= sinks < capacity).
constexpr int64_t kv_ring_slot(int64_t pos, int64_t capacity, int64_t sinks) {
  return pos < sinks ? pos : sinks + (pos - sinks) % (capacity - sinks);
}

// True when a later position below `end` takes the slot of `pos`, so that writing `pos` would be
// undone within the same block [.., end).
constexpr bool kv_ring_overwritten_before(int64_t pos, int64_t end, int64_t capacity,
                                          int64_t sinks) {
  return pos >= sinks && pos + (capacity - sinks) < end;
}

}  // namespace einfer
