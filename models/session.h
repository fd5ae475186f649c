// Session: one model, one decoding stream, everything in one caller-provided arena.
//
// session_create lays out, in this order: the Session struct, the per-layer weight views, the KV
// cache, the RoPE table, activations and kernel scratch. session_arena_bytes runs the same sequence
// on a measuring arena, so the figure is exact; firmware can use it (or the constant einfer-pack
// --emit-c printed) to size a static arena.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/llama.h"
#include "runtime/arena.h"
#include "runtime/model.h"
#include "runtime/run_options.h"
#include "runtime/status.h"

namespace einfer {

struct Session {
  Model model;
  LlamaWeights weights;
  LlamaState state;
};

// The allocation sequence behind both functions below: with model == null it only measures
// (use a measuring arena); otherwise it builds the session for `model` and stores it in *out.
Status session_layout(const ModelConfig& config, const RunOptions& options, const Model* model,
                      Arena& arena, Session** out);

// Exact arena bytes session_create needs for this config and options (arena buffer 64-byte
// aligned).
Status session_arena_bytes(const ModelConfig& config, const RunOptions& options, size_t* bytes);

// Loads (validates) the model image in place and builds a session in the arena.
Status session_create(const void* image, size_t image_bytes, const LoadOptions& load,
                      const RunOptions& options, Arena& arena, Session** out);

// Evaluates tokens (prompt or one generated token); logits of the last one in session_logits.
// all_logits, when non-null, receives [n][vocab] logits of every token.
Status session_eval(Session* session, const int32_t* tokens, int32_t n,
                    float* all_logits = nullptr);

inline const float* session_logits(const Session& s) {
  return s.state.logits;
}
inline int64_t session_position(const Session& s) {
  return s.state.pos;
}
inline void session_reset(Session* s) {
  llama_reset(&s->state);
}

}  // namespace einfer
