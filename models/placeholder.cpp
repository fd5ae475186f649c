// Placeholder until the llama session lands: session sizing reports "unsupported".
#include "models/session.h"

namespace einfer {
Status session_arena_bytes(const ModelConfig&, const RunOptions&, size_t* bytes) {
  *bytes = 0;
  return make_status(StatusCode::unsupported, "session sizing not implemented yet");
}
}  // namespace einfer
