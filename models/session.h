// Session: one model of any architecture, one stream, everything in one caller-provided arena.
//
// A session is what a program runs: the loaded model, its weights and state (a llama decoder's KV
// cache and activations, or an encoder's sequence buffers) and, for decoders, the tokenizer and
// the sampler. The C API (models/einfer.h) and einfer-run are thin clients of it.
//
// session_layout lays out, in this order: the Session struct, the per-layer weight views, the
// state (KV cache, RoPE table, activations and kernel scratch), the sampler's candidates (when
// sampling), the tokenizer's tables and its encode scratch (when asked). session_arena_bytes runs
// the same sequence on a measuring arena, so the figure is exact; firmware can use it (or the
// constant einfer-pack --emit-c printed) to size a static arena.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/bert.h"
#include "models/encoder.h"
#include "models/llama.h"
#include "models/sampler.h"
#include "models/tokenizer_text.h"
#include "models/transformer.h"
#include "runtime/arena.h"
#include "runtime/model.h"
#include "runtime/run_options.h"
#include "runtime/status.h"

namespace einfer {

// Everything a session is built for besides the model.
struct SessionOptions {
  // Decoders: context, window, KV dtype, batch. Encoders: context is the longest sequence
  // (0: the model's maximum); the other fields do not apply.
  RunOptions run;
  // Decoders: temperature 0 is greedy (no sampler, no scratch); otherwise the sampler is checked
  // and set up with these settings.
  SamplerConfig sampler{0.0f, 0, 1.0f, 0};
  // 0: no tokenizer; 1: encode and decode; 2: decode only (no tables, no encode scratch).
  int32_t tokenizer = 0;
  size_t max_prompt_bytes = 512;  // longest text session_tokenize accepts (tokenizer 1)
  // A tokenizer image used instead of the model's own (einfer-run -z); it must outlive the session.
  const void* tokenizer_image = nullptr;
  size_t tokenizer_image_bytes = 0;
};

struct Session {
  Model model;
  SessionOptions options;
  // llama decoders
  LlamaWeights weights;
  LlamaState state;
  // encoders (bert models run their layers in encoder_state too)
  EncoderWeights encoder_weights;
  EncoderState encoder_state;
  BertWeights bert_weights;
  int32_t* embed_ids = nullptr;  // bert with a tokenizer: the ids of one text (session_embed_text)
  int32_t embed_ids_max = 0;
  // encoder-decoders (run.context sizes both the source and the target)
  TransformerWeights transformer_weights;
  TransformerState transformer_state;
  // text and sampling (decoders)
  Sampler sampler;
  bool sampling = false;
  TextTokenizer tokenizer;
  bool has_tokenizer = false;
  void* encode_scratch = nullptr;
  size_t encode_scratch_bytes = 0;
};

// The allocation sequence behind sizing and creation: with build false it only measures (use a
// measuring arena; nothing is stored); otherwise it builds the session for `model` in *out.
Status session_layout(const Model& model, const SessionOptions& options, bool build, Arena& arena,
                      Session** out);

// Exact arena bytes session_create needs for this model and options (arena buffer 64-byte
// aligned).
Status session_arena_bytes(const Model& model, const SessionOptions& options, size_t* bytes);

// Loads (validates) the model image in place and builds a session in the arena.
Status session_create(const void* image, size_t image_bytes, const LoadOptions& load,
                      const SessionOptions& options, Arena& arena, Session** out);

// The same for a decoder or encoder session without tokenizer or sampler, sized from the config
// alone (kept for tools and tests that only run ids).
Status session_layout(const ModelConfig& config, const RunOptions& options, const Model* model,
                      Arena& arena, Session** out);
Status session_arena_bytes(const ModelConfig& config, const RunOptions& options, size_t* bytes);
Status session_create(const void* image, size_t image_bytes, const LoadOptions& load,
                      const RunOptions& options, Arena& arena, Session** out);

// Decoders: evaluates tokens (prompt or one generated token); logits of the last one in
// session_logits. all_logits, when non-null, receives [n][vocab] logits of every token.
Status session_eval(Session* session, const int32_t* tokens, int32_t n,
                    float* all_logits = nullptr);

// Encoders: out[n][dim] = encoder(in[n][dim]) for one sequence of n positions (out may alias in).
Status session_encode(Session* session, const float* in, int32_t n, float* out);

// bert (sentence embeddings, models/bert.h): the model's pooled (and normalized) vector out[dim]
// of one sequence of n token ids, or the token states out[n][dim] it pools. n is at most the
// session's context (run.context, 0: the model's); token types are 0.
Status session_embed(Session* session, const int32_t* ids, int32_t n, float* out);
Status session_embed_tokens(Session* session, const int32_t* ids, int32_t n, float* out);
// The same for a text (options.tokenizer 1), tokenized with the model's special tokens ([CLS] ...
// [SEP]); a text of more tokens than the context keeps the first context - 1 and its last one
// (the [SEP]), as sentence-transformers truncates. *n_tokens receives the text's token count
// before truncation.
Status session_embed_text(Session* session, const char* text, size_t len, float* out,
                          int32_t* n_tokens);
// The ids session_embed_text embeds (in the session's buffer, valid until the next call): *n of
// them, truncated from the text's *n_tokens.
Status session_embed_ids(Session* session, const char* text, size_t len, const int32_t** ids,
                         int32_t* n, int32_t* n_tokens);

// Encoder-decoders (models/transformer.h has the state machine): encode a source src[m][dim]
// once, then decode target rows all at once (out[n][dim]) or one at a time (out[dim]).
Status session_encode_memory(Session* session, const float* src, int32_t m);
Status session_decode_target(Session* session, const float* tgt, int32_t n, float* out);
Status session_decode_step(Session* session, const float* tgt, float* out);

// Decoders: the next token from the current logits per the options' sampler (greedy at
// temperature 0); sampling may overwrite the logits.
int32_t session_next_token(Session* session);

// Decoders with a tokenizer (options.tokenizer 1): text to ids (add_special: BOS/EOS as the
// model's tokenizer adds them to a prompt). Texts longer than options.max_prompt_bytes are refused.
Status session_tokenize(Session* session, const char* text, size_t len, bool add_special,
                        int32_t* ids, int32_t max_ids, int32_t* n_ids);
// Printable bytes of `token` following `prev` (-1: none); empty (never null) without a
// tokenizer or for pieces a terminal should not get.
TextPiece session_token_text(const Session& session, int32_t prev, int32_t token);
// BOS/EOS ids (-1: none) and whether `token` ends generation. Without a tokenizer, llama2.c's
// ids: BOS 1, EOS 2, and only EOS ends generation.
int32_t session_token_bos(const Session& session);
int32_t session_token_eos(const Session& session);
bool session_token_is_eog(const Session& session, int32_t token);

inline const float* session_logits(const Session& s) {
  return s.state.logits;
}
inline int64_t session_position(const Session& s) {
  return s.state.pos;
}
// Starts a new stream at position 0, the sampler reseeded.
void session_reset(Session* s);

}  // namespace einfer
