// A loaded model: its architecture (hyperparameters) and views of its tensors, used in place.
//
// The loader (runtime/loader*.cpp) validates a flat .ein image (docs/format.md) and fills a Model
// without copying any weight: every TensorView points into the caller's buffer (an mmap on Linux,
// flash on an MCU). Model is a plain struct; it owns nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"
#include "runtime/tensor.h"

namespace einfer {

// The numeric values of these enums are part of the file format: never renumber.
// transformer: PyTorch nn.Transformer (encoder stack, then decoder layers with cross-attention).
// bert: BERT-style sentence-embedding encoders (token ids in, one pooled vector out): word +
// learned position + token-type embeddings and their LayerNorm, then the encoder's post-norm
// layers, then pooling and optional L2 normalization (models/bert.h).
enum class ArchKind : uint32_t { llama = 1, encoder = 2, transformer = 3, bert = 4 };
enum class NormKind : uint32_t { rmsnorm = 0, layernorm = 1 };
// swiglu: silu(gate) * up (llama); geglu_tanh: gelu_tanh(gate) * up (Gemma's GeGLU); the others are
// encoder activations of one input.
enum class Activation : uint32_t {
  swiglu = 0,
  relu = 1,
  gelu_erf = 2,
  gelu_tanh = 3,
  geglu_tanh = 4
};
enum class RopeMode : uint32_t { none = 0, interleaved = 1, half_split = 2 };
// RoPE frequency scaling as Hugging Face transformers computes it (modeling_rope_utils.py):
// linear divides every inverse frequency by `factor`; llama3 (_compute_llama3_parameters) divides
// the low frequencies by `factor`, keeps the high ones and interpolates in between. longrope
// (_compute_longrope_parameters, Phi-3): per-pair divisors, short ones (rope_freq_factors) or long
// ones (rope_freq_factors_long) by the run's context, and cos/sin times rope_attn_factor.
enum class RopeScaling : uint32_t { none = 0, linear = 1, llama3 = 2, longrope = 3 };
// Which model family a llama-style decoder came from: descriptive (einfer-pack --inspect); the
// forward pass reads the feature fields of ModelConfig, never this. unspecified: files written
// before families were recorded.
enum class ArchFamily : uint32_t {
  unspecified = 0,
  llama = 1,
  mistral = 2,
  qwen2 = 3,
  qwen3 = 4,
  gemma2 = 5,
  gemma3 = 6,
  phi3 = 7
};
inline constexpr uint32_t kArchFamilyCount = 8;
// Encoder attention variants (issue 19): softmax (dense or sparse pattern) or linear attention
// phi(q)(sum phi(k) v^T) / phi(q)(sum phi(k)) with phi = elu + 1; absolute positions added to
// the input before the first layer.
enum class AttentionKind : uint32_t { softmax = 0, linear_elu = 1 };
enum class PositionsKind : uint32_t { none = 0, sinusoidal = 1 };
// bert: how the token states become one sentence vector (sentence-transformers' Pooling; the
// numbers are llama.cpp's GGUF pooling_type). none: the model gives token states only.
enum class PoolingKind : uint32_t { none = 0, mean = 1, cls = 2 };

// Hyperparameters. Linear weights are stored [out, in] (PyTorch and llama2.c order), quantized
// along `in`, so a projection is the einsum "nd,ed->ne".
struct ModelConfig {
  ArchKind arch = ArchKind::llama;
  int32_t dim = 0;               // model width d
  int32_t hidden_dim = 0;        // feed-forward width
  int32_t n_layers = 0;          // llama, encoder: the stack; transformer: encoder layers
  int32_t n_decoder_layers = 0;  // transformer: decoder layers (file layers n_layers ..), else 0
  int32_t n_heads = 0;           // query heads
  int32_t n_kv_heads = 0;        // key/value heads (== n_heads: MHA, 1: MQA, else GQA)
  int32_t head_dim = 0;          // encoders: dim / n_heads; llama family: any even size
  int32_t vocab_size = 0;        // 0 for encoders
  int32_t context_length = 0;    // trained context (llama); maximum sequence (encoder)
  NormKind norm = NormKind::rmsnorm;
  float norm_eps = 1e-5f;
  Activation activation = Activation::swiglu;
  RopeMode rope = RopeMode::interleaved;
  float rope_theta = 10000.f;
  uint32_t tied_classifier = 0;  // classifier shares the token embedding
  uint32_t has_bias = 0;         // projections and feed-forward have biases (encoder)
  uint32_t norm_first = 0;       // encoder: pre-norm (norm_first=True) instead of post-norm
  uint32_t causal = 0;           // encoder: causal mask
  uint32_t final_norm = 0;       // encoder: a final LayerNorm after the stack
  uint32_t qkv_bias = 0;         // llama family: q, k, v projections have biases (Qwen2)
  // Llama family: RoPE scaling (RopeScaling) and its parameters (0 when unused).
  RopeScaling rope_scaling = RopeScaling::none;
  float rope_factor = 0.f;            // linear, llama3
  float rope_low_freq_factor = 0.f;   // llama3
  float rope_high_freq_factor = 0.f;  // llama3
  int32_t rope_original_context = 0;  // llama3: original_max_position_embeddings
  // Llama family: the trained sliding window W (Mistral): query i attends keys i-W < j <= i, the
  // current one included. 0: full causal attention. The run's default window (llama.h).
  int32_t sliding_window = 0;
  // Llama family: the first layer the window applies to (Qwen2 max_window_layers: layers
  // >= it slide, earlier ones attend every position). 0: every layer (Mistral). Must be 0
  // without a window and below n_layers with one.
  int32_t sliding_window_first_layer = 0;
  // Llama family: RoPE frequency divisors per rotary pair (llama.cpp's rope_freqs.weight, how
  // Llama 3.x GGUFs carry llama3 scaling): a global tensor rope_freq_factors [head_dim/2], each
  // pair's frequency divided by its factor (after rope_scaling, which must then be none or linear).
  uint32_t rope_freq_factors = 0;
  // Llama-family features of Qwen3, Gemma 2/3 and Phi-3 (0 / false: absent, the Llama behaviour).
  ArchFamily family = ArchFamily::unspecified;
  // Per-head RMSNorm of q and k over head_dim after the projections, before RoPE (Qwen3, Gemma 3):
  // per-layer q_norm, k_norm [head_dim].
  uint32_t qk_norm = 0;
  // Gemma's sandwich norms: the attention and feed-forward outputs are RMS-normed (per-layer
  // attn_post_norm, ffn_post_norm [d]) before their residual adds.
  uint32_t post_norms = 0;
  float embed_scale = 0.f;  // token embeddings times this (Gemma: sqrt(d)); 0: none
  float attn_scale =
      0.f;  // attention score scale (Gemma: query_pre_attn_scalar^-0.5); 0: 1/sqrt(k)
  float attn_softcap = 0.f;   // scores -> c * tanh(scores / c) before the softmax; 0: none
  float final_softcap = 0.f;  // logits -> c * tanh(logits / c); 0: none
  // With a sliding window: layer i slides when (i + 1) % period != 0 (Gemma 2: 2, Gemma 3: 6; the
  // others attend every position). 0: the sliding_window_first_layer rule.
  int32_t sliding_window_period = 0;
  // The sliding layers' RoPE base (Gemma 3 rope_local_base_freq), a second table without scaling;
  // 0: every layer uses rope_theta and the scaling.
  float rope_local_theta = 0.f;
  float rope_attn_factor = 0.f;     // longrope: cos and sin times this (> 0); else 0
  DType weight_dtype = DType::f32;  // dtype of the matrices (norms stay f32)
  int32_t group_size = 0;           // quantization group (q8/q4), else 0
  // Encoder attention variants (docs/attention-variants.md). A sparse pattern is the union of its
  // non-zero terms (all zero: dense): window W (|i-j| < W), global G (i < G or j < G), strided S
  // ((i-j) mod S == 0), fixed L,C (same block of L, or one of the last C of a block); `causal`
  // intersects it with j <= i.
  AttentionKind attention = AttentionKind::softmax;
  PositionsKind positions = PositionsKind::none;
  int32_t pattern_window = 0, pattern_global = 0, pattern_stride = 0;
  int32_t pattern_block = 0, pattern_block_summary = 0;
  // bert: the pooling, L2 normalization of the pooled vector (sentence-transformers' Normalize)
  // and the rows of the token-type embedding (type_vocab_size; 0: none).
  PoolingKind pooling = PoolingKind::none;
  uint32_t normalize = 0;
  int32_t type_vocab_size = 0;
};

// What a tensor is. Per-layer roles come with a layer index; global ones use layer -1.
// Shapes (d = dim, f = hidden_dim, H = n_heads, G = n_kv_heads, k = head_dim, V = vocab):
enum class TensorRole : uint32_t {
  token_embedding = 0,   // [V, d]
  attn_norm = 1,         // [d]        (rmsnorm weight, or layernorm weight)
  attn_norm_bias = 2,    // [d]        layernorm only
  wq = 3,                // [H*k, d]
  wk = 4,                // [G*k, d]
  wv = 5,                // [G*k, d]
  wo = 6,                // [d, H*k]
  bq = 7,                // [H*k]
  bk = 8,                // [G*k]
  bv = 9,                // [G*k]
  bo = 10,               // [d]
  ffn_norm = 11,         // [d]
  ffn_norm_bias = 12,    // [d]
  w1 = 13,               // [f, d]    llama: gate;  encoder: linear1
  w2 = 14,               // [d, f]    llama: down;  encoder: linear2
  w3 = 15,               // [f, d]    llama: up;    encoder: unused
  b1 = 16,               // [f]
  b2 = 17,               // [d]
  final_norm = 18,       // [d]
  final_norm_bias = 19,  // [d]
  classifier = 20,       // [V, d]    absent when tied_classifier
  // transformer decoder layers only: cross-attention (queries from the decoder, keys and values
  // from the encoder memory) and its norm (nn.TransformerDecoderLayer norm2; norm3 is ffn_norm).
  cross_wq = 21,           // [d, d]
  cross_wk = 22,           // [d, d]
  cross_wv = 23,           // [d, d]
  cross_wo = 24,           // [d, d]
  cross_bq = 25,           // [d]
  cross_bk = 26,           // [d]
  cross_bv = 27,           // [d]
  cross_bo = 28,           // [d]
  cross_norm = 29,         // [d]
  cross_norm_bias = 30,    // [d]
  decoder_norm = 31,       // [d]  transformer: the decoder stack's final LayerNorm (global)
  decoder_norm_bias = 32,  // [d]
  // llama family with rope_freq_factors: per rotary pair frequency divisors (global, f32, last).
  rope_freq_factors = 33,  // [head_dim/2]
  // llama family with qk_norm: per-head RMSNorm weights of q and k (per layer, f32).
  q_norm = 34,  // [k]
  k_norm = 35,  // [k]
  // llama family with post_norms: the attention and feed-forward outputs' norms (per layer, f32).
  attn_post_norm = 36,  // [d]
  ffn_post_norm = 37,   // [d]
  // longrope: the long-context divisors (global, f32, after rope_freq_factors: the short ones).
  rope_freq_factors_long = 38,  // [head_dim/2]
  // bert (global, f32): learned absolute positions (context_length rows), token types, and the
  // LayerNorm applied to their sum with the token embedding.
  position_embedding = 39,    // [context_length, d]
  token_type_embedding = 40,  // [type_vocab_size, d]
  embed_norm = 41,            // [d]
  embed_norm_bias = 42,       // [d]
};
inline constexpr uint32_t kTensorRoleCount = 43;

const char* tensor_role_name(TensorRole role);
// "llama", "gemma3", ...; "unspecified" for files that did not record one.
const char* arch_family_name(ArchFamily family);

struct LoadOptions {
  bool verify_crc = true;  // skip for large flash images where the CRC pass costs too much
};

struct Model {
  ModelConfig config;
  const unsigned char* image = nullptr;  // the whole validated file
  size_t image_bytes = 0;
  const void* tensor_table = nullptr;  // format-internal; use model_tensor()
  uint32_t tensor_count = 0;
  const unsigned char* tokenizer = nullptr;  // embedded llama2.c tokenizer.bin bytes, or null
  size_t tokenizer_bytes = 0;
};

// Validates `size` bytes at `data` as a .ein image and fills *model (docs/format.md lists every
// check). Never reads outside [data, data + size). `data` must be 64-byte aligned.
Status load_model(const void* data, size_t size, const LoadOptions& options, Model* model);

// The view of one tensor; out_of_range with a message if the model has no such tensor.
Status model_tensor(const Model& model, TensorRole role, int32_t layer, TensorView* out);
// model_tensor, then its shape: [d0] when d1 < 0, else [d0, d1]; shape_mismatch with `message`
// and the role as index otherwise.
Status model_tensor_shaped(const Model& model, TensorRole role, int32_t layer, int64_t d0,
                           int64_t d1, const char* message, TensorView* out);

// Bytes of every tensor the image holds (values and scales), from its tensor table.
size_t model_weight_bytes(const Model& model);

}  // namespace einfer
