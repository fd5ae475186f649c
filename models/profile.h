// Optional per-stage timing of the forward pass, for einfer-bench.
//
// A model state carries a `StageProfile*` that is null by default; then every hook below is one
// predictable branch and nothing else. When it is set, the forward pass adds the time between
// stage boundaries to ns[stage] and counts calls. models/ never calls an OS clock: the caller
// supplies now_ns (einfer-bench passes thread CPU time).
#pragma once

#include <cstdint>

namespace einfer {

enum class Stage : int {
  projections,   // Q, K, V, O (+ the block's RMSNorm, RoPE, residual add, KV cache writes)
  attention,     // fused attention over the cache
  feed_forward,  // RMSNorm, W1, W3, SwiGLU, W2, residual add (fused in the projection groups)
  norms_rope,    // embedding lookup, final RMSNorm (and any norm or RoPE run outside a group)
  classifier,    // final projection to logits
  sampling,      // next-token choice (timed by the caller, outside the model)
  count
};

constexpr int kStageCount = static_cast<int>(Stage::count);

struct StageProfile {
  uint64_t (*now_ns)() = nullptr;
  uint64_t ns[kStageCount] = {};
  uint64_t calls[kStageCount] = {};
};

// Timestamp for a stage that starts now (0 when profiling is off).
inline uint64_t profile_start(StageProfile* p) {
  return p ? p->now_ns() : 0;
}

// Charges the time since `t0` to `stage`; returns the new timestamp so the next stage can start
// from it without a second clock read.
inline uint64_t profile_charge(StageProfile* p, Stage stage, uint64_t t0) {
  if (!p) return 0;
  const uint64_t t1 = p->now_ns();
  p->ns[static_cast<int>(stage)] += t1 - t0;
  p->calls[static_cast<int>(stage)] += 1;
  return t1;
}

}  // namespace einfer
