// The C API (models/einfer.h): a thin layer over Session (models/session.h), for every
// architecture.
#include "models/einfer.h"

#include <cstdio>
#include <cstring>

#include "kernels/isa/isa.h"
#include "models/session.h"

using namespace einfer;

struct einfer_session {
  Session* session = nullptr;
  Arena arena;
  bool has_logits = false;  // a prefill or decode succeeded since create/reset (einfer.h)
  char error[160] = {};
  StageProfile profile;  // charged only while einfer_profile_clock set a clock
};

// The C stage numbers are the first stages of models/profile.h.
static_assert(EINFER_STAGE_PROJECTIONS == static_cast<int>(Stage::projections) &&
              EINFER_STAGE_ATTENTION == static_cast<int>(Stage::attention) &&
              EINFER_STAGE_FEED_FORWARD == static_cast<int>(Stage::feed_forward) &&
              EINFER_STAGE_NORMS_ROPE == static_cast<int>(Stage::norms_rope) &&
              EINFER_STAGE_CLASSIFIER == static_cast<int>(Stage::classifier) &&
              EINFER_STAGE_COUNT <= kStageCount);

namespace {

// The session options the C options stand for. A temperature that is not positive means greedy,
// as it always has in this API.
SessionOptions session_options(const einfer_options& o) {
  SessionOptions s;
  s.run.context = o.context;
  s.run.window = o.window;
  s.run.sinks = o.sinks;
  s.run.kv_dtype = o.kv_int8 ? DType::i8 : DType::f32;
  s.run.max_batch = o.max_batch;
  s.run.cache_plans = o.no_plan_cache == 0;
  s.run.threads = o.threads;
  if (s.run.threads.n == 0) s.run.threads.n = 1;
  if (o.temperature > 0.f) {
    s.sampler.temperature = o.temperature;
    s.sampler.top_p = o.top_p;
    s.sampler.top_k = o.top_k;
    s.sampler.seed = o.seed;
  }
  s.tokenizer = o.with_tokenizer;
  s.max_prompt_bytes = o.max_prompt_bytes > 0 ? static_cast<size_t>(o.max_prompt_bytes) : 512;
  return s;
}

int report(const Status& s, char* err, size_t err_size) {
  if (err && err_size) format_status(s, err, err_size);
  return static_cast<int>(s.code);
}

int fail(einfer_session* e, const Status& s) {
  return report(s, e->error, sizeof e->error);
}

Status invalid(const char* message) {
  return make_status(StatusCode::invalid_argument, message);
}

// Every option, checked whether or not it is used (a NaN temperature is not "greedy").
Status check_options(const einfer_options& o) {
  if (!(o.temperature >= 0.f) || o.temperature > 1e30f)
    return invalid("options.temperature must be finite and >= 0 (0: greedy)");
  if (!(o.top_p > 0.f && o.top_p <= 1.f)) return invalid("options.top_p must be in (0, 1]");
  if (o.top_k < 0)
    return make_status(StatusCode::invalid_argument, "options.top_k must be >= 0", -1, o.top_k);
  if (o.kv_int8 < 0 || o.kv_int8 > 1) return invalid("options.kv_int8 must be 0 or 1");
  if (o.with_tokenizer < 0 || o.with_tokenizer > 2) {
    return make_status(StatusCode::invalid_argument, "options.with_tokenizer must be 0, 1 or 2", -1,
                       o.with_tokenizer);
  }
  if (o.max_prompt_bytes < 0 || o.max_prompt_bytes > kMaxRunPositions)
    return make_status(StatusCode::out_of_range, "options.max_prompt_bytes outside 0..limit",
                       kMaxRunPositions, o.max_prompt_bytes);
  return ok_status();
}

// The C API's own state, then the session. Shared by sizing (measuring arena, build false) and
// creation.
Status layout_all(const Model& model, const einfer_options& o, bool build, Arena& arena,
                  einfer_session** out) {
  if (build) EINFER_TRY(isa_init());  // the kernels' ISA level, as session_create picks it
  einfer_session* e = nullptr;
  EINFER_TRY(arena.allocate_array(1, &e));
  if (e && build) *e = einfer_session{};
  Session* s = nullptr;
  EINFER_TRY(session_layout(model, session_options(o), build, arena, &s));
  if (e && build) e->session = s;
  if (out) *out = e;
  return ok_status();
}

LoadOptions load_options(const einfer_options& o) {
  LoadOptions l;
  l.verify_crc = o.skip_crc == 0;
  return l;
}

}  // namespace

extern "C" {

void einfer_options_default(einfer_options* o) {
  if (o == nullptr) return;
  std::memset(o, 0, sizeof *o);
  o->top_p = 1.f;
}

int einfer_arena_bytes(const void* model, size_t model_bytes, const einfer_options* options,
                       size_t* bytes, char* err, size_t err_size) {
  if (bytes == nullptr) return report(invalid("einfer_arena_bytes: bytes is NULL"), err, err_size);
  *bytes = 0;
  einfer_options o;
  einfer_options_default(&o);
  if (options) o = *options;
  Status s = check_options(o);
  if (!s.ok()) return report(s, err, err_size);
  Model m;
  s = load_model(model, model_bytes, load_options(o), &m);
  if (!s.ok()) return report(s, err, err_size);
  Arena measure = Arena::measuring();
  s = layout_all(m, o, false, measure, nullptr);
  if (!s.ok()) return report(s, err, err_size);
  *bytes = measure.high_water();
  return EINFER_OK;
}

int einfer_session_create(const void* model, size_t model_bytes, const einfer_options* options,
                          void* arena, size_t arena_bytes, einfer_session** out, char* err,
                          size_t err_size) {
  if (out == nullptr) return report(invalid("einfer_session_create: out is NULL"), err, err_size);
  *out = nullptr;
  einfer_options o;
  einfer_options_default(&o);
  if (options) o = *options;
  size_t need = 0;
  const int rc = einfer_arena_bytes(model, model_bytes, &o, &need, err, err_size);
  if (rc != EINFER_OK) return rc;
  if (!arena || (reinterpret_cast<uintptr_t>(arena) % kDefaultAlignment) != 0) {
    return report(
        make_status(StatusCode::invalid_argument, "arena must be non-null and 64-byte aligned"),
        err, err_size);
  }
  if (arena_bytes < need) {
    return report(
        make_status(StatusCode::out_of_memory, "arena too small for this model and options",
                    static_cast<int64_t>(need), static_cast<int64_t>(arena_bytes)),
        err, err_size);
  }
  Model m;
  Status s = load_model(model, model_bytes, load_options(o), &m);
  Arena a(arena, arena_bytes);
  einfer_session* e = nullptr;
  if (s.ok()) s = layout_all(m, o, true, a, &e);
  if (!s.ok()) return report(s, err, err_size);
  e->arena = a;
  *out = e;
  return EINFER_OK;
}

int einfer_prefill_logits(einfer_session* e, const int32_t* tokens, int32_t n, float* all_logits) {
  if (e == nullptr) return EINFER_E_INVALID_ARGUMENT;
  if (tokens == nullptr || n <= 0)
    return fail(e, invalid("einfer_prefill: tokens must be non-NULL and n > 0"));
  const Status s = session_eval(e->session, tokens, n, all_logits);
  if (!s.ok()) return fail(e, s);
  e->has_logits = true;
  return EINFER_OK;
}

int einfer_prefill(einfer_session* e, const int32_t* tokens, int32_t n) {
  return einfer_prefill_logits(e, tokens, n, nullptr);
}

int einfer_decode(einfer_session* e, int32_t token) {
  return einfer_prefill(e, &token, 1);
}

int einfer_encode(einfer_session* e, const float* input, int32_t n, float* output) {
  if (e == nullptr) return EINFER_E_INVALID_ARGUMENT;
  if (input == nullptr || output == nullptr)
    return fail(e, invalid("einfer_encode: input and output must be non-NULL"));
  const Status s = session_encode(e->session, input, n, output);
  return s.ok() ? EINFER_OK : fail(e, s);
}

int einfer_embed(einfer_session* e, const int32_t* ids, int32_t n, float* out) {
  if (e == nullptr) return EINFER_E_INVALID_ARGUMENT;
  if (ids == nullptr || out == nullptr)
    return fail(e, invalid("einfer_embed: ids and out must be non-NULL"));
  const Status s = session_embed(e->session, ids, n, out);
  return s.ok() ? EINFER_OK : fail(e, s);
}

int einfer_embed_tokens(einfer_session* e, const int32_t* ids, int32_t n, float* out) {
  if (e == nullptr) return EINFER_E_INVALID_ARGUMENT;
  if (ids == nullptr || out == nullptr)
    return fail(e, invalid("einfer_embed_tokens: ids and out must be non-NULL"));
  const Status s = session_embed_tokens(e->session, ids, n, out);
  return s.ok() ? EINFER_OK : fail(e, s);
}

int einfer_embed_text(einfer_session* e, const char* text, float* out, int32_t* n_tokens) {
  if (e == nullptr) return EINFER_E_INVALID_ARGUMENT;
  if (text == nullptr || out == nullptr)
    return fail(e, invalid("einfer_embed_text: text and out must be non-NULL"));
  int32_t n = 0;
  const Status s = session_embed_text(e->session, text, std::strlen(text), out, &n);
  if (n_tokens) *n_tokens = n;
  return s.ok() ? EINFER_OK : fail(e, s);
}

int einfer_encode_memory(einfer_session* e, const float* source, int32_t m) {
  if (e == nullptr) return EINFER_E_INVALID_ARGUMENT;
  const Status s = session_encode_memory(e->session, source, m);
  return s.ok() ? EINFER_OK : fail(e, s);
}

int einfer_decode_target(einfer_session* e, const float* target, int32_t n, float* output) {
  if (e == nullptr) return EINFER_E_INVALID_ARGUMENT;
  const Status s = session_decode_target(e->session, target, n, output);
  return s.ok() ? EINFER_OK : fail(e, s);
}

int einfer_decode_step(einfer_session* e, const float* target_row, float* output) {
  if (e == nullptr) return EINFER_E_INVALID_ARGUMENT;
  const Status s = session_decode_step(e->session, target_row, output);
  return s.ok() ? EINFER_OK : fail(e, s);
}

int32_t einfer_target_rows(const einfer_session* e) {
  if (e == nullptr || e->session->model.config.arch != ArchKind::transformer) return 0;
  return e->session->transformer_state.target_rows;
}

const float* einfer_logits(const einfer_session* e) {
  if (e == nullptr || !e->has_logits) return nullptr;
  return session_logits(*e->session);
}

int32_t einfer_next_token(einfer_session* e) {
  if (e == nullptr) return -EINFER_E_INVALID_ARGUMENT;
  if (!e->has_logits) {
    fail(e, invalid("einfer_next_token before any prefill or decode (no logits yet)"));
    return -EINFER_E_INVALID_ARGUMENT;
  }
  return session_next_token(e->session);
}

void einfer_reset(einfer_session* e) {
  if (e == nullptr) return;
  e->has_logits = false;
  session_reset(e->session);
}

int32_t einfer_architecture(const einfer_session* e) {
  return e ? static_cast<int32_t>(e->session->model.config.arch) : -1;
}
int32_t einfer_model_dim(const einfer_session* e) {
  return e ? e->session->model.config.dim : 0;
}
int32_t einfer_vocab_size(const einfer_session* e) {
  return e ? e->session->model.config.vocab_size : 0;
}
int32_t einfer_context_length(const einfer_session* e) {
  return e ? e->session->model.config.context_length : 0;
}
int32_t einfer_max_sequence(const einfer_session* e) {
  if (e == nullptr) return 0;
  const Session& s = *e->session;
  switch (s.model.config.arch) {
    case ArchKind::encoder:
    case ArchKind::bert:
      return s.encoder_state.max_seq;
    case ArchKind::transformer:
      return s.transformer_state.max_target;
    default:
      return s.state.options.context;
  }
}
int64_t einfer_position(const einfer_session* e) {
  return e ? session_position(*e->session) : -1;
}
size_t einfer_arena_used(const einfer_session* e) {
  return e ? e->arena.used() : 0;
}
const char* einfer_error(const einfer_session* e) {
  return e ? e->error : "session is NULL";
}

void einfer_profile_clock(einfer_session* e, uint64_t (*now)(void)) {
  if (e == nullptr) return;
  e->profile = StageProfile{};
  e->profile.now_ns = now;
  e->session->state.profile = now ? &e->profile : nullptr;
}

void einfer_profile_times(const einfer_session* e, uint64_t* times) {
  if (times == nullptr) return;
  for (int i = 0; i < EINFER_STAGE_COUNT; ++i) times[i] = e ? e->profile.ns[i] : 0;
}

int einfer_tokenize(einfer_session* e, const char* text, int32_t bos, int32_t* ids, int32_t max_ids,
                    int32_t* n_ids) {
  if (e == nullptr) return EINFER_E_INVALID_ARGUMENT;
  if (n_ids == nullptr || text == nullptr || (ids == nullptr && max_ids > 0) || max_ids < 0)
    return fail(e, invalid("einfer_tokenize: NULL text, ids or n_ids, or max_ids < 0"));
  const Status s =
      session_tokenize(e->session, text, std::strlen(text), bos != 0, ids, max_ids, n_ids);
  return s.ok() ? EINFER_OK : fail(e, s);
}

const char* einfer_token_text(const einfer_session* e, int32_t prev, int32_t token, size_t* len) {
  if (len == nullptr) return "";
  *len = 0;
  if (e == nullptr) return "";
  const TextPiece p = session_token_text(*e->session, prev, token);
  *len = p.size;
  return p.data ? p.data : "";
}

int32_t einfer_token_bos(const einfer_session* e) {
  return e ? session_token_bos(*e->session) : 1;
}

int32_t einfer_token_eos(const einfer_session* e) {
  return e ? session_token_eos(*e->session) : 2;
}

int einfer_token_is_eog(const einfer_session* e, int32_t token) {
  return e && session_token_is_eog(*e->session, token) ? 1 : 0;
}

}  // extern "C"
