// The C API (models/einfer.h) over Session, Tokenizer and Sampler.
#include "models/einfer.h"

#include <cstdio>
#include <cstring>

#include "models/sampler.h"
#include "models/session.h"
#include "models/tokenizer.h"

using namespace einfer;

struct einfer_session {
  Session* session = nullptr;
  Arena arena;
  einfer_options options{};
  Sampler sampler;
  bool sampling = false;
  Tokenizer tokenizer;
  bool has_tokenizer = false;
  void* encode_scratch = nullptr;
  size_t encode_scratch_bytes = 0;
  bool has_logits = false;  // a prefill or decode succeeded since create/reset
  char error[160] = {};
};

namespace {

RunOptions run_options(const einfer_options& o) {
  RunOptions r;
  r.context = o.context;
  r.window = o.window;
  r.sinks = o.sinks;
  r.kv_dtype = o.kv_int8 ? DType::i8 : DType::f32;
  r.max_batch = o.max_batch;
  r.cache_plans = o.no_plan_cache == 0;
  return r;
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
  if (o.max_prompt_bytes < 0 || o.max_prompt_bytes > kMaxRunPositions)
    return make_status(StatusCode::out_of_range, "options.max_prompt_bytes outside 0..limit",
                       kMaxRunPositions, o.max_prompt_bytes);
  return ok_status();
}

// Tokenizer scratch: the longest prompt einfer_tokenize accepts.
size_t prompt_bytes(const einfer_options& o) {
  return o.max_prompt_bytes > 0 ? static_cast<size_t>(o.max_prompt_bytes) : 512;
}

// Everything after the Session: sampler candidates, tokenizer tables and encode scratch. Shared by
// sizing (measuring arena, e == null) and creation.
Status layout_extras(const Model& model, const einfer_options& o, Arena& arena, einfer_session* e) {
  const int32_t vocab = model.config.vocab_size;
  if (o.temperature > 0.f) {
    void* scratch = nullptr;
    const size_t bytes = sampler_scratch_bytes(vocab);
    EINFER_TRY(arena.allocate(bytes, kDefaultAlignment, &scratch));
    if (e) {
      SamplerConfig sc;
      sc.temperature = o.temperature;
      sc.top_p = o.top_p;
      sc.top_k = o.top_k;
      sc.seed = o.seed;
      EINFER_TRY(sampler_init(&e->sampler, sc, vocab, scratch, bytes));
      e->sampling = true;
    }
  }
  if (o.with_tokenizer < 0 || o.with_tokenizer > 2) {
    return make_status(StatusCode::invalid_argument, "options.with_tokenizer must be 0, 1 or 2", -1,
                       o.with_tokenizer);
  }
  if (o.with_tokenizer) {
    if (!model.tokenizer) {
      return make_status(StatusCode::invalid_argument,
                         "the model has no embedded tokenizer (pack it with -z)");
    }
    // Validated (no memory needed) before anything is sized from it: the encode scratch follows
    // the longest real piece, not a header figure a hostile file may set to 2^31.
    Tokenizer checked;
    EINFER_TRY(tokenizer_init_decode_only(&checked, model.tokenizer, model.tokenizer_bytes, vocab));
    if (o.with_tokenizer == 2) {
      // Decode only: no tables and no encode scratch; decode walks the records in the image.
      if (e) {
        EINFER_TRY(tokenizer_init_decode_only(&e->tokenizer, model.tokenizer, model.tokenizer_bytes,
                                              vocab));
        e->has_tokenizer = true;
      }
      return ok_status();
    }
    if (e) {
      EINFER_TRY(
          tokenizer_init(&e->tokenizer, model.tokenizer, model.tokenizer_bytes, vocab, arena));
      e->has_tokenizer = true;
    } else {
      void* p = nullptr;
      EINFER_TRY(arena.allocate(tokenizer_arena_bytes(vocab), kDefaultAlignment, &p));
    }
    // Encode scratch depends only on the longest piece and the text length.
    const size_t bytes = tokenizer_encode_scratch_bytes(checked, prompt_bytes(o));
    void* p = nullptr;
    EINFER_TRY(arena.allocate(bytes, kDefaultAlignment, &p));
    if (e) {
      e->encode_scratch = p;
      e->encode_scratch_bytes = bytes;
    }
  }
  return ok_status();
}

Status layout_all(const Model& model, const einfer_options& o, Arena& arena, einfer_session** out) {
  einfer_session* e = nullptr;
  EINFER_TRY(arena.allocate_array(1, &e));
  if (e) *e = einfer_session{};
  Session* s = nullptr;
  EINFER_TRY(session_layout(model.config, run_options(o), e ? &model : nullptr, arena, &s));
  if (e) {
    e->session = s;
    e->options = o;
  }
  EINFER_TRY(layout_extras(model, o, arena, e));
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
  s = layout_all(m, o, measure, nullptr);
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
  if (s.ok()) s = layout_all(m, o, a, &e);
  if (!s.ok()) return report(s, err, err_size);
  e->arena = a;
  *out = e;
  return EINFER_OK;
}

int einfer_prefill(einfer_session* e, const int32_t* tokens, int32_t n) {
  if (e == nullptr) return EINFER_E_INVALID_ARGUMENT;
  if (tokens == nullptr || n <= 0)
    return fail(e, invalid("einfer_prefill: tokens must be non-NULL and n > 0"));
  const Status s = session_eval(e->session, tokens, n);
  if (!s.ok()) return fail(e, s);
  e->has_logits = true;
  return EINFER_OK;
}

int einfer_decode(einfer_session* e, int32_t token) {
  return einfer_prefill(e, &token, 1);
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
  float* logits = e->session->state.logits;
  const int32_t vocab = e->session->model.config.vocab_size;
  if (!e->sampling) return sampler_argmax(logits, vocab);
  return sampler_sample(&e->sampler, logits);
}

void einfer_reset(einfer_session* e) {
  if (e == nullptr) return;
  e->has_logits = false;
  session_reset(e->session);
  if (e->sampling) {
    e->sampler.rng_state = 0;
    SamplerConfig c = e->sampler.config;
    (void)sampler_init(&e->sampler, c, e->sampler.vocab_size, e->sampler.candidates,
                       sampler_scratch_bytes(e->sampler.vocab_size));
  }
}

int32_t einfer_vocab_size(const einfer_session* e) {
  return e ? e->session->model.config.vocab_size : 0;
}
int32_t einfer_context_length(const einfer_session* e) {
  return e ? e->session->model.config.context_length : 0;
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

int einfer_tokenize(einfer_session* e, const char* text, int32_t bos, int32_t* ids, int32_t max_ids,
                    int32_t* n_ids) {
  if (e == nullptr) return EINFER_E_INVALID_ARGUMENT;
  if (n_ids == nullptr || text == nullptr || (ids == nullptr && max_ids > 0) || max_ids < 0)
    return fail(e, invalid("einfer_tokenize: NULL text, ids or n_ids, or max_ids < 0"));
  *n_ids = 0;
  if (!e->has_tokenizer) {
    return fail(
        e, make_status(StatusCode::invalid_argument, "session was created without a tokenizer"));
  }
  if (e->tokenizer.entries == nullptr) {
    return fail(e, make_status(StatusCode::invalid_argument,
                               "session has a decode-only tokenizer (options.with_tokenizer = 2)"));
  }
  const size_t len = std::strlen(text);
  if (len > prompt_bytes(e->options)) {
    return fail(
        e, make_status(StatusCode::out_of_range, "prompt longer than options.max_prompt_bytes",
                       static_cast<int64_t>(len), static_cast<int64_t>(prompt_bytes(e->options))));
  }
  const Status s = tokenizer_encode(e->tokenizer, text, len, bos != 0, false, ids, max_ids, n_ids,
                                    e->encode_scratch, e->encode_scratch_bytes);
  return s.ok() ? EINFER_OK : fail(e, s);
}

const char* einfer_token_text(const einfer_session* e, int32_t prev, int32_t token, size_t* len) {
  if (len == nullptr) return "";
  *len = 0;
  if (e == nullptr || !e->has_tokenizer) return "";
  const TokenPiece p = tokenizer_decode(e->tokenizer, prev, token);
  if (!token_piece_is_printable(p)) return "";
  *len = p.size;
  return p.data;
}

}  // extern "C"
