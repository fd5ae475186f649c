/* einfer C API: load a packed model (.ein) from a buffer, run it in a caller-provided arena.
 *
 * One API for every architecture: decoders (llama) take token ids and give logits and tokens,
 * encoders (the PyTorch TransformerEncoder) take sequences of vectors (einfer_encode), sentence
 * encoders (BERT) take token ids or text and give one vector (einfer_embed).
 * Callable from C and C++ firmware. No function allocates: every byte a session uses lies in the
 * arena the caller passes, whose exact size einfer_arena_bytes reports (or einfer-pack --emit-c
 * prints as a constant). The model image is used in place (mmap or flash) and must stay valid and
 * 64-byte aligned for the session's lifetime.
 *
 * Typical use:
 *   einfer_options o; einfer_options_default(&o);
 *   size_t need; einfer_arena_bytes(model, model_len, &o, &need, err, sizeof err);
 *   einfer_session* s; einfer_session_create(model, model_len, &o, arena, need, &s, err, sizeof
 * err); einfer_prefill(s, prompt_ids, n); for (;;) { int32_t t = einfer_next_token(s); if
 * (einfer_token_is_eog(s, t)) break; print(einfer_token_text(...)); einfer_decode(s, t); } Every
 * int-returning function returns
 * 0 on success, else a status code (EINFER_E_*) with the message in einfer_error(session) or in the
 * caller's err buffer.
 *
 * Every entry point checks its pointers and the session's state; nothing crashes on NULL:
 *   - a NULL session gives EINFER_E_INVALID_ARGUMENT (or 0 / NULL / -1 / "" from the accessors,
 *     a negative status from einfer_next_token); einfer_error(NULL) says so;
 *   - all options are validated at einfer_arena_bytes / einfer_session_create, whether used or
 *     not: temperature finite and >= 0, top_p in (0, 1], top_k >= 0, kv_int8 0 or 1,
 *     with_tokenizer 0..2, context/window/max_batch/max_prompt_bytes within their limits
 *     (runtime/run_options.h), and sizes checked so a 32-bit target refuses what it cannot address.
 *
 * State machine of a session:
 *   create --> [no logits] --prefill/decode--> [logits] --next_token/logits/prefill/decode--> ...
 *   reset --> [no logits]
 * einfer_next_token and einfer_logits need logits: before the first successful prefill or decode
 * (and after a reset) einfer_next_token fails with -EINFER_E_INVALID_ARGUMENT and einfer_logits
 * returns NULL. A failed prefill/decode leaves the state as it was.
 */
#ifndef EINFER_H
#define EINFER_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/threads.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  EINFER_OK = 0,
  EINFER_E_INVALID_ARGUMENT = 1,
  EINFER_E_SHAPE_MISMATCH = 2,
  EINFER_E_OUT_OF_MEMORY = 3,
  EINFER_E_BAD_FORMAT = 4,
  EINFER_E_UNSUPPORTED = 5,
  EINFER_E_OUT_OF_RANGE = 6,
  EINFER_E_IO = 7
};

/* llama2.c's BOS and EOS: what einfer_token_bos/_eos report for a session without a tokenizer.
 * With a tokenizer, use those functions: the model's own ids (Llama 3: 128000, 128001 ...). */
enum { EINFER_TOKEN_BOS = 1, EINFER_TOKEN_EOS = 2 };

/* What einfer_architecture reports (the .ein architecture kind). */
enum {
  EINFER_ARCH_LLAMA = 1,
  EINFER_ARCH_ENCODER = 2,
  EINFER_ARCH_TRANSFORMER = 3,
  EINFER_ARCH_BERT = 4 /* sentence-embedding encoders: einfer_embed */
};

typedef struct einfer_options {
  int32_t context;          /* positions the KV cache holds (0: the model's context length);
                               encoders: the longest sequence einfer_encode takes (0: the model's) */
  int32_t window;           /* sliding window W (0: none; then decoding stops at `context`) */
  int32_t sinks;            /* attention sinks kept with a window */
  int32_t kv_int8;          /* 1: int8 KV cache with per-(slot, head) scales; 0: float32 */
  int32_t max_batch;        /* prompt tokens evaluated per prefill step (0: 128) */
  int32_t skip_crc;         /* 1: skip the CRC pass when loading (large flash images) */
  int32_t no_plan_cache;    /* 1: plan each projection's einsum per call instead of keeping 8 plans
                               (~1 KB each) in the arena: for tight RAM, costs a little speed */
  int32_t with_tokenizer;   /* 1: set up the model's embedded tokenizer for text in and out;
                               2: decode only (einfer_token_text; einfer_tokenize fails): no arena
                               for tables or encode scratch, each decode scans the packed
                               vocabulary (firmware that starts from BOS) */
  int32_t max_prompt_bytes; /* longest text einfer_tokenize accepts (with_tokenizer; 0: 512) */
  float temperature;        /* sampling for einfer_next_token: 0 is greedy */
  float top_p;              /* nucleus sampling (1: off) */
  int32_t top_k;            /* top-k sampling (0: off) */
  uint64_t seed;            /* sampler seed */
  einfer_threads threads;   /* the caller's workers (runtime/threads.h; the library starts none):
                               threads.n sizes one scratch slot per worker in the arena, run spreads
                               every projection, attention and the classifier over them. n 0 or 1,
                               or run NULL: the calling thread only. ctx must outlive the session.
                               Logits are bit-identical for every n. */
} einfer_options;

typedef struct einfer_session einfer_session;

/* Defaults: model context, no window, float32 KV, greedy, no tokenizer. */
void einfer_options_default(einfer_options* options);

/* Exact arena bytes a session for this model and these options needs. */
int einfer_arena_bytes(const void* model, size_t model_bytes, const einfer_options* options,
                       size_t* bytes, char* err, size_t err_size);

/* Validates the model and builds a session in `arena` (64-byte aligned). */
int einfer_session_create(const void* model, size_t model_bytes, const einfer_options* options,
                          void* arena, size_t arena_bytes, einfer_session** out, char* err,
                          size_t err_size);

/* Evaluates prompt tokens (any number; batched internally). */
int einfer_prefill(einfer_session* session, const int32_t* tokens, int32_t n);
/* Like einfer_prefill, and all_logits receives [n][vocab] floats: the logits of every token. */
int einfer_prefill_logits(einfer_session* session, const int32_t* tokens, int32_t n,
                          float* all_logits);
/* Evaluates one token. */
int einfer_decode(einfer_session* session, int32_t token);
/* Encoders: output[n][dim] = the encoder applied to one sequence input[n][dim] of n positions
 * (1 <= n <= einfer_max_sequence; output may alias input). Decoders refuse it, and encoders refuse
 * the token functions. */
int einfer_encode(einfer_session* session, const float* input, int32_t n, float* output);
/* Sentence-embedding encoders (EINFER_ARCH_BERT: BERT-style models such as all-MiniLM-L6-v2,
 * bge-small, e5-small). einfer_embed writes out[einfer_model_dim] = the sentence embedding of one
 * sequence of n token ids (1 <= n <= einfer_max_sequence, [CLS] first and [SEP] last as the
 * model's tokenizer adds them): the token states pooled as the model says (mean over the tokens,
 * or the first token) and L2-normalized when the model normalizes (sentence-transformers'
 * Pooling and Normalize). einfer_embed_tokens writes the n token states out[n][dim] before
 * pooling. einfer_embed_text tokenizes a NUL-terminated text with the model's tokenizer
 * (options.with_tokenizer = 1) and embeds it; a text of more tokens than einfer_max_sequence keeps
 * the first einfer_max_sequence - 1 and its [SEP], as sentence-transformers truncates (set
 * options.context to the model's max_seq_length, e.g. 256 for all-MiniLM-L6-v2, to match it);
 * *n_tokens (may be NULL) receives the text's token count before truncation. Other architectures
 * refuse these, and bert sessions refuse the decoder and encoder calls. */
int einfer_embed(einfer_session* session, const int32_t* ids, int32_t n, float* out);
int einfer_embed_tokens(einfer_session* session, const int32_t* ids, int32_t n, float* out);
int einfer_embed_text(einfer_session* session, const char* text, float* out, int32_t* n_tokens);
/* Encoder-decoders (EINFER_ARCH_TRANSFORMER, PyTorch nn.Transformer; options.context bounds both
 * the source and the target rows). A session moves through these states:
 *   created       -- einfer_encode_memory -->  memory ready, 0 target rows
 *   memory ready  -- einfer_decode_step   -->  one more target row (up to einfer_max_sequence)
 *   memory ready  -- einfer_decode_target -->  target rows 0..n-1 at once (earlier rows replaced)
 *   any state     -- einfer_encode_memory -->  new memory, 0 target rows (a failed encode leaves
 *                                              no memory: decoding then fails until one succeeds)
 * einfer_encode_memory runs the encoder on source[m][dim] (1 <= m <= einfer_max_sequence) and
 * projects every decoder layer's cross-attention keys and values once into the arena.
 * einfer_decode_step writes output[dim] for target_row[dim] at position einfer_target_rows,
 * attending the earlier rows through the KV cache; the outputs equal einfer_decode_target's rows.
 * Decoding without a memory fails with EINFER_E_INVALID_ARGUMENT, past the bound with
 * EINFER_E_OUT_OF_RANGE; null pointers are refused; other architectures refuse all four. */
int einfer_encode_memory(einfer_session* session, const float* source, int32_t m);
int einfer_decode_target(einfer_session* session, const float* target, int32_t n, float* output);
int einfer_decode_step(einfer_session* session, const float* target_row, float* output);
int32_t einfer_target_rows(const einfer_session* session); /* rows decoded since the encode */
/* Logits of the last evaluated token (vocab floats), valid until the next call; NULL before any
 * prefill/decode. */
const float* einfer_logits(const einfer_session* session);
/* The next token from the current logits per the options' sampler (may overwrite the logits);
 * a negative status (-EINFER_E_INVALID_ARGUMENT) before any prefill/decode or for a NULL session.
 */
int32_t einfer_next_token(einfer_session* session);
/* Starts a new stream at position 0 (sampler reseeded). */
void einfer_reset(einfer_session* session);

int32_t einfer_architecture(const einfer_session* session);   /* EINFER_ARCH_* */
int32_t einfer_model_dim(const einfer_session* session);      /* width of the encoder's vectors */
int32_t einfer_max_sequence(const einfer_session* session);   /* KV positions, or encoder length */
int32_t einfer_vocab_size(const einfer_session* session);     /* 0 for vector encoders */
int32_t einfer_context_length(const einfer_session* session); /* the model's trained context */
int64_t einfer_position(const einfer_session* session);       /* next absolute position */
size_t einfer_arena_used(const einfer_session* session);      /* bytes of the arena in use */
const char* einfer_error(const einfer_session* session);      /* message of the last failure */

/* Stage profiling (firmware benchmarks): with a clock, every forward pass charges the clock time
 * between stage boundaries to its stage; NULL (the default) turns it off. `now` is any monotonic
 * counter (the firmware example passes SysTick ticks). einfer_profile_times adds nothing itself:
 * it copies the totals since the clock was set into times[EINFER_STAGE_COUNT]. */
enum {
  EINFER_STAGE_PROJECTIONS = 0, /* attention projections Q, K, V, O (+ KV cache writes) */
  EINFER_STAGE_ATTENTION = 1,   /* fused attention over the cache */
  EINFER_STAGE_FEED_FORWARD = 2,
  EINFER_STAGE_NORMS_ROPE = 3, /* embedding, RMSNorms, RoPE, residual adds */
  EINFER_STAGE_CLASSIFIER = 4,
  EINFER_STAGE_COUNT = 5
};
void einfer_profile_clock(einfer_session* session, uint64_t (*now)(void));
void einfer_profile_times(const einfer_session* session, uint64_t* times);

/* Text, with options.with_tokenizer and a tokenizer packed into the model. bos != 0: add the
 * special tokens the model's prompts start (and end) with, as its tokenizer says (BOS for Llama,
 * nothing for GPT-2); special tokens written in the text (<|eot_id|> ...) are matched where the
 * model's reference tokenizer matches them. */
int einfer_tokenize(einfer_session* session, const char* text, int32_t bos, int32_t* ids,
                    int32_t max_ids, int32_t* n_ids);
/* Bytes of `token` following `prev` (not NUL-terminated; *len receives the length). Pieces a
 * terminal should not get (stray bytes, control codes) come back empty. */
const char* einfer_token_text(const einfer_session* session, int32_t prev, int32_t token,
                              size_t* len);
/* The model's BOS and EOS ids (-1: none), and whether `token` ends generation (EOS or another
 * end-of-turn id such as Llama 3's <|eot_id|>: generation stops at any of them). Without a
 * tokenizer: EINFER_TOKEN_BOS, EINFER_TOKEN_EOS, and only EINFER_TOKEN_EOS ends generation. */
int32_t einfer_token_bos(const einfer_session* session);
int32_t einfer_token_eos(const einfer_session* session);
int einfer_token_is_eog(const einfer_session* session, int32_t token);

#ifdef __cplusplus
}
#endif

#endif /* EINFER_H */
