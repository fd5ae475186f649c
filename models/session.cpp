#include "models/session.h"

#include <cmath>
#include <cstring>

#include "kernels/isa/isa.h"

namespace einfer {

namespace {

// The model's weights and state, per architecture. Measuring (s == null) allocates the same bytes.
Status layout_model(const Model& model, const SessionOptions& o, Arena& arena, Session* s) {
  const ModelConfig& c = model.config;
  switch (c.arch) {
    case ArchKind::llama:
      if (s) {
        EINFER_TRY(llama_bind_weights(s->model, arena, &s->weights));
        return llama_state_init(c, o.run, arena, &s->state, s->weights.rope_freq_factors.f32(),
                                s->weights.rope_freq_factors_long);
      } else {
        LlamaState state;
        return llama_state_init(c, o.run, arena, &state);
      }
    case ArchKind::encoder:
      if (s) {
        EINFER_TRY(encoder_bind_weights(s->model, arena, &s->encoder_weights));
        return encoder_state_init(c, o.run.context, arena, &s->encoder_state);
      } else {
        // encoder_bind_weights' one allocation, then the state.
        EncoderLayerWeights* layers = nullptr;
        EINFER_TRY(
            arena.allocate_array(static_cast<size_t>(c.n_layers > 0 ? c.n_layers : 0), &layers));
        EncoderState state;
        return encoder_state_init(c, o.run.context, arena, &state);
      }
    case ArchKind::bert:
      if (s) {
        EINFER_TRY(bert_bind_weights(s->model, arena, &s->bert_weights));
      } else {
        EncoderLayerWeights* layers = nullptr;  // bert_bind_weights' one allocation
        EINFER_TRY(
            arena.allocate_array(static_cast<size_t>(c.n_layers > 0 ? c.n_layers : 0), &layers));
      }
      {
        EncoderState measured;
        return encoder_state_init(c, o.run.context, arena, s ? &s->encoder_state : &measured);
      }
    case ArchKind::transformer:
      if (s) {
        EINFER_TRY(transformer_bind_weights(s->model, arena, &s->transformer_weights));
        return transformer_state_init(c, o.run.context, o.run.context, arena,
                                      &s->transformer_state);
      } else {
        // transformer_bind_weights' two allocations, then the state.
        EncoderLayerWeights* enc = nullptr;
        DecoderLayerWeights* dec = nullptr;
        EINFER_TRY(
            arena.allocate_array(static_cast<size_t>(c.n_layers > 0 ? c.n_layers : 0), &enc));
        EINFER_TRY(arena.allocate_array(
            static_cast<size_t>(c.n_decoder_layers > 0 ? c.n_decoder_layers : 0), &dec));
        TransformerState state;
        return transformer_state_init(c, o.run.context, o.run.context, arena, &state);
      }
  }
  return make_status(StatusCode::unsupported, "session: unknown architecture",
                     static_cast<int64_t>(c.arch));
}

// Sampler candidates, tokenizer tables and encode scratch (decoders; bert: the tokenizer and the
// ids of one text).
Status layout_text(const Model& model, const SessionOptions& o, Arena& arena, Session* s) {
  const int32_t vocab = model.config.vocab_size;
  const bool decoder = model.config.arch == ArchKind::llama;
  const bool bert = model.config.arch == ArchKind::bert;
  if (o.sampler.temperature != 0.0f) {
    if (!decoder) return make_status(StatusCode::invalid_argument, "encoders do not sample");
    void* scratch = nullptr;
    const size_t bytes = sampler_scratch_bytes(vocab);
    EINFER_TRY(arena.allocate(bytes, kDefaultAlignment, &scratch));
    Sampler probe;
    Sampler* sampler = s ? &s->sampler : &probe;
    if (s) {
      EINFER_TRY(sampler_init(sampler, o.sampler, vocab, scratch, bytes));
      s->sampling = true;
    } else if (!(o.sampler.temperature > 0.0f) || std::isinf(o.sampler.temperature) ||
               !(o.sampler.top_p > 0.0f && o.sampler.top_p <= 1.0f) || o.sampler.top_k < 0) {
      // Measuring has no scratch to hand the sampler: the same checks sampler_init makes.
      unsigned char none[1];
      return sampler_init(sampler, o.sampler, vocab, none, 0);
    }
  }
  if (o.tokenizer < 0 || o.tokenizer > 2) {
    return make_status(StatusCode::invalid_argument, "the tokenizer option must be 0, 1 or 2", -1,
                       o.tokenizer);
  }
  if (o.tokenizer == 0) return ok_status();
  if (!decoder && !bert)
    return make_status(StatusCode::invalid_argument, "encoders take no tokenizer");
  const void* image = o.tokenizer_image ? o.tokenizer_image : model.tokenizer;
  const size_t image_bytes = o.tokenizer_image ? o.tokenizer_image_bytes : model.tokenizer_bytes;
  if (!image) {
    return make_status(StatusCode::invalid_argument,
                       "the model has no embedded tokenizer (pack it with -z)");
  }
  // Decode only: no tables and no encode scratch; decoding reads the image.
  const bool decode_only = o.tokenizer == 2;
  PackedTokenizer packed;
  if (s) {
    EINFER_TRY(text_tokenizer_init(&s->tokenizer, image, image_bytes, decode_only, arena));
    s->has_tokenizer = true;
    packed = s->tokenizer.packed;
    if (text_tokenizer_vocab(s->tokenizer) > vocab)
      return make_status(StatusCode::bad_format,
                         "the tokenizer has more tokens than the model's vocabulary",
                         text_tokenizer_vocab(s->tokenizer), vocab);
  } else {
    EINFER_TRY(tokenizer_parse(image, image_bytes, &packed));
    if (!decode_only) {
      void* p = nullptr;
      EINFER_TRY(arena.allocate(text_tokenizer_arena_bytes(packed), kDefaultAlignment, &p));
    }
  }
  if (decode_only) return ok_status();
  // The encode scratch depends on how far the tokenizer's normalizer can grow a prompt.
  const size_t bytes = text_tokenizer_scratch_bytes(packed, o.max_prompt_bytes);
  if (bytes == SIZE_MAX)
    return make_status(StatusCode::invalid_argument, "max_prompt_bytes too large for the tokenizer",
                       -1, static_cast<int64_t>(o.max_prompt_bytes));
  void* p = nullptr;
  EINFER_TRY(arena.allocate(bytes, kDefaultAlignment, &p));
  if (s) {
    s->encode_scratch = p;
    s->encode_scratch_bytes = bytes;
  }
  if (!bert) return ok_status();
  // Every id the longest text can give (truncation to the context happens after tokenizing).
  const size_t max_ids = text_tokenizer_max_ids(packed, o.max_prompt_bytes);
  if (max_ids > static_cast<size_t>(INT32_MAX))
    return make_status(StatusCode::invalid_argument, "max_prompt_bytes too large for the tokenizer",
                       -1, static_cast<int64_t>(o.max_prompt_bytes));
  int32_t* ids = nullptr;
  EINFER_TRY(arena.allocate_array(max_ids, &ids));
  if (s) {
    s->embed_ids = ids;
    s->embed_ids_max = static_cast<int32_t>(max_ids);
  }
  return ok_status();
}

SessionOptions options_for(const RunOptions& run) {
  SessionOptions o;
  o.run = run;
  return o;
}

}  // namespace

Status session_layout(const Model& model, const SessionOptions& options, bool build, Arena& arena,
                      Session** out) {
  Session* s = nullptr;
  EINFER_TRY(arena.allocate_array(1, &s));
  if (!build) s = nullptr;
  if (s) {
    // Member by member: a Session{} temporary would take kilobytes of a microcontroller's stack.
    // The tokenizer stays zero until text_tokenizer_init fills it (has_tokenizer guards it).
    std::memset(static_cast<void*>(s), 0, sizeof *s);
    s->model = model;
    s->options = options;
    s->weights = LlamaWeights{};
    s->state = LlamaState{};
    s->encoder_weights = EncoderWeights{};
    s->encoder_state = EncoderState{};
    s->bert_weights = BertWeights{};
    s->transformer_weights = TransformerWeights{};
    s->transformer_state = TransformerState{};
    s->sampler = Sampler{};
  }
  EINFER_TRY(layout_model(model, options, arena, s));
  EINFER_TRY(layout_text(model, options, arena, s));
  if (out) *out = s;
  return ok_status();
}

Status session_arena_bytes(const Model& model, const SessionOptions& options, size_t* bytes) {
  *bytes = 0;
  Arena measure = Arena::measuring();
  EINFER_TRY(session_layout(model, options, false, measure, nullptr));
  *bytes = measure.high_water();
  return ok_status();
}

Status session_create(const void* image, size_t image_bytes, const LoadOptions& load,
                      const SessionOptions& options, Arena& arena, Session** out) {
  *out = nullptr;
  // The kernels' instruction set level is chosen once, here (EINFER_ISA or the best this CPU
  // runs, kernels/isa/isa.h); an unknown or unsupported EINFER_ISA is an error, not a fallback.
  EINFER_TRY(isa_init());
  Model model;
  EINFER_TRY(load_model(image, image_bytes, load, &model));
  size_t need = 0;
  EINFER_TRY(session_arena_bytes(model, options, &need));
  if (arena.remaining() < need) {
    return make_status(StatusCode::out_of_memory, "arena too small for this model and run options",
                       static_cast<int64_t>(need), static_cast<int64_t>(arena.remaining()));
  }
  return session_layout(model, options, true, arena, out);
}

Status session_layout(const ModelConfig& config, const RunOptions& options, const Model* model,
                      Arena& arena, Session** out) {
  if (model) return session_layout(*model, options_for(options), true, arena, out);
  Model sizing;  // the config is all the model layout reads when measuring without text
  sizing.config = config;
  return session_layout(sizing, options_for(options), false, arena, out);
}

Status session_arena_bytes(const ModelConfig& config, const RunOptions& options, size_t* bytes) {
  Model sizing;  // the config is all the model layout reads when measuring without text
  sizing.config = config;
  return session_arena_bytes(sizing, options_for(options), bytes);
}

Status session_create(const void* image, size_t image_bytes, const LoadOptions& load,
                      const RunOptions& options, Arena& arena, Session** out) {
  return session_create(image, image_bytes, load, options_for(options), arena, out);
}

Status session_eval(Session* s, const int32_t* tokens, int32_t n, float* all_logits) {
  if (s->model.config.arch == ArchKind::bert) {
    return make_status(StatusCode::invalid_argument,
                       "session: this model is a sentence encoder (bert); embed its tokens");
  }
  if (s->model.config.arch != ArchKind::llama) {
    return make_status(StatusCode::invalid_argument,
                       "session: this model is an encoder; it takes vectors, not tokens");
  }
  return llama_forward(s->weights, &s->state, tokens, n, all_logits);
}

Status session_encode(Session* s, const float* in, int32_t n, float* out) {
  if (s->model.config.arch == ArchKind::bert) {
    return make_status(StatusCode::invalid_argument,
                       "session: this model is a sentence encoder (bert); it takes token ids");
  }
  if (s->model.config.arch != ArchKind::encoder) {
    return make_status(StatusCode::invalid_argument,
                       "session: this model is a decoder; it takes tokens, not vectors");
  }
  return encoder_forward(s->encoder_weights, &s->encoder_state, in, n, out);
}

namespace {
Status need_bert(const Session* s) {
  if (s->model.config.arch != ArchKind::bert)
    return make_status(StatusCode::invalid_argument,
                       "session: this model is not a sentence encoder (bert)");
  return ok_status();
}
}  // namespace

Status session_embed(Session* s, const int32_t* ids, int32_t n, float* out) {
  EINFER_TRY(need_bert(s));
  return bert_embed(s->bert_weights, &s->encoder_state, ids, nullptr, n, out);
}

Status session_embed_tokens(Session* s, const int32_t* ids, int32_t n, float* out) {
  EINFER_TRY(need_bert(s));
  EINFER_TRY(bert_forward(s->bert_weights, &s->encoder_state, ids, nullptr, n));
  std::memcpy(out, s->encoder_state.x,
              static_cast<size_t>(n) * static_cast<size_t>(s->model.config.dim) * sizeof(float));
  return ok_status();
}

Status session_embed_ids(Session* s, const char* text, size_t len, const int32_t** ids, int32_t* n,
                         int32_t* n_tokens) {
  *ids = nullptr;
  *n = *n_tokens = 0;
  EINFER_TRY(need_bert(s));
  int32_t count = 0;
  EINFER_TRY(session_tokenize(s, text, len, true, s->embed_ids, s->embed_ids_max, &count));
  *n_tokens = count;
  if (count == 0)
    return make_status(StatusCode::invalid_argument, "session: the text has no tokens");
  const int32_t max_seq = s->encoder_state.max_seq;
  if (count > max_seq) {  // keep the end token ([SEP]) the tokenizer added, as HF truncation does
    const int32_t last = s->embed_ids[count - 1];
    count = max_seq;
    if (last == text_tokenizer_eos(s->tokenizer)) s->embed_ids[count - 1] = last;
  }
  *ids = s->embed_ids;
  *n = count;
  return ok_status();
}

Status session_embed_text(Session* s, const char* text, size_t len, float* out, int32_t* n_tokens) {
  const int32_t* ids = nullptr;
  int32_t n = 0;
  EINFER_TRY(session_embed_ids(s, text, len, &ids, &n, n_tokens));
  return session_embed(s, ids, n, out);
}

namespace {
Status need_transformer(const Session* s) {
  if (s == nullptr) return make_status(StatusCode::invalid_argument, "session is null");
  if (s->model.config.arch != ArchKind::transformer)
    return make_status(StatusCode::invalid_argument,
                       "session: this model is not an encoder-decoder transformer");
  return ok_status();
}
}  // namespace

Status session_encode_memory(Session* s, const float* src, int32_t m) {
  EINFER_TRY(need_transformer(s));
  return transformer_encode_memory(s->transformer_weights, &s->transformer_state, src, m);
}

Status session_decode_target(Session* s, const float* tgt, int32_t n, float* out) {
  EINFER_TRY(need_transformer(s));
  return transformer_decode(s->transformer_weights, &s->transformer_state, tgt, n, out);
}

Status session_decode_step(Session* s, const float* tgt, float* out) {
  EINFER_TRY(need_transformer(s));
  return transformer_decode_step(s->transformer_weights, &s->transformer_state, tgt, out);
}

int32_t session_next_token(Session* s) {
  float* logits = s->state.logits;
  if (!s->sampling) return sampler_argmax(logits, s->model.config.vocab_size);
  return sampler_sample(&s->sampler, logits);
}

Status session_tokenize(Session* s, const char* text, size_t len, bool add_special, int32_t* ids,
                        int32_t max_ids, int32_t* n_ids) {
  *n_ids = 0;
  if (!s->has_tokenizer) {
    return make_status(StatusCode::invalid_argument, "session was created without a tokenizer");
  }
  if (!s->tokenizer.can_encode) {
    return make_status(StatusCode::invalid_argument,
                       "session has a decode-only tokenizer (options.with_tokenizer = 2)");
  }
  if (len > s->options.max_prompt_bytes) {
    return make_status(StatusCode::out_of_range, "prompt longer than options.max_prompt_bytes",
                       static_cast<int64_t>(len),
                       static_cast<int64_t>(s->options.max_prompt_bytes));
  }
  return text_tokenizer_encode(s->tokenizer, text, len, add_special, ids, max_ids, n_ids,
                               s->encode_scratch, s->encode_scratch_bytes);
}

TextPiece session_token_text(const Session& s, int32_t prev, int32_t token) {
  const TextPiece none{"", 0};  // never a null pointer: callers may hand it to fwrite
  if (!s.has_tokenizer) return none;
  const TextPiece p = text_tokenizer_decode(s.tokenizer, prev, token, false);
  return text_piece_is_printable(p) && p.data ? p : none;
}

int32_t session_token_bos(const Session& s) {
  return s.has_tokenizer ? text_tokenizer_bos(s.tokenizer) : 1;
}

int32_t session_token_eos(const Session& s) {
  return s.has_tokenizer ? text_tokenizer_eos(s.tokenizer) : 2;
}

bool session_token_is_eog(const Session& s, int32_t token) {
  if (s.has_tokenizer) return text_tokenizer_is_eog(s.tokenizer, token);
  return token == 2;
}

void session_reset(Session* s) {
  llama_reset(&s->state);
  if (s->sampling) {
    const SamplerConfig c = s->sampler.config;
    (void)sampler_init(&s->sampler, c, s->sampler.vocab_size, s->sampler.candidates,
                       sampler_scratch_bytes(s->sampler.vocab_size));
  }
}

}  // namespace einfer
