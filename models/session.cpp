#include "models/session.h"

namespace einfer {

Status session_layout(const ModelConfig& config, const RunOptions& options, const Model* model,
                      Arena& arena, Session** out) {
  Session* s = nullptr;
  EINFER_TRY(arena.allocate_array(1, &s));
  if (s) {
    *s = Session{};
    s->model = *model;
    EINFER_TRY(llama_bind_weights(s->model, arena, &s->weights));
    EINFER_TRY(llama_state_init(config, options, arena, &s->state));
  } else {
    LlamaState state;
    EINFER_TRY(llama_state_init(config, options, arena, &state));
  }
  if (out) *out = s;
  return ok_status();
}

Status session_arena_bytes(const ModelConfig& config, const RunOptions& options, size_t* bytes) {
  *bytes = 0;
  if (config.arch != ArchKind::llama) {
    return make_status(StatusCode::unsupported, "sessions support llama decoders only");
  }
  Arena measure = Arena::measuring();
  EINFER_TRY(session_layout(config, options, nullptr, measure, nullptr));
  *bytes = measure.high_water();
  return ok_status();
}

Status session_create(const void* image, size_t image_bytes, const LoadOptions& load,
                      const RunOptions& options, Arena& arena, Session** out) {
  *out = nullptr;
  Model model;
  EINFER_TRY(load_model(image, image_bytes, load, &model));
  if (model.config.arch != ArchKind::llama) {
    return make_status(StatusCode::unsupported, "sessions support llama decoders only");
  }
  size_t need = 0;
  EINFER_TRY(session_arena_bytes(model.config, options, &need));
  if (arena.remaining() < need) {
    return make_status(StatusCode::out_of_memory, "arena too small for this model and run options",
                       static_cast<int64_t>(need), static_cast<int64_t>(arena.remaining()));
  }
  return session_layout(model.config, options, &model, arena, out);
}

Status session_eval(Session* s, const int32_t* tokens, int32_t n, float* all_logits) {
  return llama_forward(s->weights, &s->state, tokens, n, all_logits);
}

}  // namespace einfer
