// On-disk layout of a .ein model image (specification: docs/format.md).
//
// A .ein file is little-endian and used in place: the loader validates it and hands out views into
// the caller's buffer, never copying a weight. Layout:
//
//   [0, 128)                      FileHeader
//   [arch_offset, +arch_size)     ArchBlock (hyperparameters and quantization; 192 bytes, 128 in
//                                 versions 2 and 3)
//   [table_offset, +count*80)     TensorRecord[tensor_count], in canonical order (see below)
//   ... zero padding to header_size (a multiple of 64) ...
//   [header_size, file_size)      payload: tensor values and scales, tokenizer, metadata,
//                                 each starting at a multiple of 64, in increasing offset order
//
// The structs below mirror the bytes exactly (static_asserts check sizes). The loader never casts
// the buffer to them; it copies fields out with memcpy so a misaligned buffer is still safe to
// inspect. Field values are little-endian; einfer only supports little-endian hosts.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "runtime/model.h"

namespace einfer {

static_assert(std::endian::native == std::endian::little, "einfer model images are little-endian");

inline constexpr uint32_t kEinMagic = 0x464E4945u;  // bytes "EINF"
inline constexpr uint32_t kEinVersion = 4;          // any layout change bumps this
// Version 3 images (a 128-byte ArchBlock: the family and bert fields of bytes 128..191 and flag
// bits 7..9 absent; every matrix in the rows layout: TensorRecord.layout was reserved, zero) and
// version 2 images (no RoPE scaling, sliding window or q/k/v biases either: those ArchBlock bytes
// and flag are zero) still load. einfer-pack writes version 3 when the model uses no version 4
// feature, so those images load on older runtimes too.
inline constexpr uint32_t kEinVersion3 = 3;
inline constexpr uint32_t kEinVersionPrevious = 2;
inline constexpr uint32_t kArchBlockBytesV3 = 128;  // ArchBlock size in versions 2 and 3
inline constexpr uint32_t kEinAlignment = 64;       // every payload region starts at a multiple
inline constexpr uint32_t kEinMaxRank = 4;

// FileHeader.flags bits. Unknown bits are rejected.
inline constexpr uint32_t kEinFlagTokenizer = 1u << 0;  // tokenizer section present
inline constexpr uint32_t kEinFlagMetadata = 1u << 1;   // metadata section present
inline constexpr uint32_t kEinKnownFlags = kEinFlagTokenizer | kEinFlagMetadata;

// ArchBlock.flags bits (ModelConfig booleans). Unknown bits are rejected.
inline constexpr uint32_t kArchTiedClassifier = 1u << 0;
inline constexpr uint32_t kArchHasBias = 1u << 1;
inline constexpr uint32_t kArchNormFirst = 1u << 2;
inline constexpr uint32_t kArchCausal = 1u << 3;
inline constexpr uint32_t kArchFinalNorm = 1u << 4;
inline constexpr uint32_t kArchQkvBias = 1u << 5;  // version 3
// Version 3, added later (older version 3 files have it clear): a rope_freq_factors tensor.
inline constexpr uint32_t kArchRopeFreqFactors = 1u << 6;
inline constexpr uint32_t kArchKnownFlagsV3 = 0x7F;
inline constexpr uint32_t kArchQkNorm = 1u << 7;     // version 4: q_norm, k_norm tensors
inline constexpr uint32_t kArchPostNorms = 1u << 8;  // version 4: attn_post_norm, ffn_post_norm
inline constexpr uint32_t kArchNormalize = 1u << 9;  // version 4, bert: L2-normalized output
inline constexpr uint32_t kArchKnownFlags = 0x3FF;

struct FileHeader {             // 128 bytes at offset 0
  uint32_t magic;               //   0  kEinMagic ("EINF")
  uint32_t version;             //   4  kEinVersion
  uint32_t header_size;         //   8  start of the payload; multiple of 64
  uint32_t flags;               //  12  kEinFlag*
  uint64_t file_size;           //  16  total bytes of the image
  uint32_t header_crc;          //  24  CRC32 of [0, header_size) with this field read as 0
  uint32_t payload_crc;         //  28  CRC32 of [header_size, file_size)
  uint32_t arch_offset;         //  32  128
  uint32_t arch_size;           //  36  sizeof(ArchBlock) = 192 (versions 2, 3: 128)
  uint32_t table_offset;        //  40  320 (versions 2, 3: 256)
  uint32_t tensor_count;        //  44
  uint32_t tensor_record_size;  //  48  sizeof(TensorRecord) = 80
  uint32_t reserved0;           //  52  0
  uint64_t tokenizer_offset;    //  56  0 unless kEinFlagTokenizer
  uint64_t tokenizer_bytes;     //  64
  uint64_t metadata_offset;     //  72  0 unless kEinFlagMetadata; UTF-8 "key=value\n" lines
  uint64_t metadata_bytes;      //  80
  uint8_t reserved[40];         //  88  zero
};
static_assert(sizeof(FileHeader) == 128);

struct ArchBlock {           // 192 bytes (versions 2 and 3: the first 128)
  uint32_t kind;             //   0  ArchKind
  int32_t dim;               //   4
  int32_t hidden_dim;        //   8
  int32_t n_layers;          //  12
  int32_t n_heads;           //  16
  int32_t n_kv_heads;        //  20
  int32_t head_dim;          //  24
  int32_t vocab_size;        //  28
  int32_t context_length;    //  32
  uint32_t norm;             //  36  NormKind
  float norm_eps;            //  40
  uint32_t activation;       //  44  Activation
  uint32_t rope;             //  48  RopeMode
  float rope_theta;          //  52
  uint32_t flags;            //  56  kArch*
  uint32_t weight_dtype;     //  60  DType of every matrix (token embedding, projections, FFN,
                             //      classifier); norms and biases are always f32
  int32_t group_size;        //  64  q8/q4 group along the input axis, else 0
  uint32_t attention;        //  68  AttentionKind (encoder)
  uint32_t positions;        //  72  PositionsKind (encoder)
  int32_t pattern[5];        //  76  window, global, stride, block, block_summary (all 0: dense)
  uint32_t rope_scaling;     //  96  RopeScaling (version 3; zero in version 2)
  float rope_factor;         // 100  linear, llama3
  float rope_low_freq;       // 104  llama3 low_freq_factor
  float rope_high_freq;      // 108  llama3 high_freq_factor
  int32_t rope_original;     // 112  llama3 original_max_position_embeddings
  int32_t sliding_window;    // 116  llama family: trained window W (i-W < j <= i), 0: none
  int32_t n_decoder_layers;  // 120  transformer: decoder layers, else 0
  int32_t window_first;      // 124  llama: first layer the sliding window applies to (0: all;
                             //      version 3, added later: older version 3 files hold zero)
  // Version 4: the llama family's Qwen3 / Gemma 2, 3 / Phi-3 features (ModelConfig).
  uint32_t family;         // 128  ArchFamily (descriptive)
  float embed_scale;       // 132  token embeddings times this; 0: none
  float attn_scale;        // 136  attention score scale; 0: 1/sqrt(head_dim)
  float attn_softcap;      // 140  score soft-capping c * tanh(s / c); 0: none
  float final_softcap;     // 144  logit soft-capping; 0: none
  int32_t window_period;   // 148  sliding layers: (i + 1) % period != 0; 0: window_first rule
  float rope_local_theta;  // 152  the sliding layers' RoPE base; 0: rope_theta for every layer
  float rope_attn_factor;  // 156  longrope cos/sin factor; else 0
  // Version 4: sentence encoders (bert).
  uint32_t pooling;         // 160  PoolingKind (bert), else 0
  int32_t type_vocab;       // 164  bert: token-type embedding rows, else 0
  uint8_t reserved_v4[24];  // 168  zero
};
static_assert(sizeof(ArchBlock) == 192);

struct TensorRecord {      // 80 bytes
  uint32_t role;           //   0  TensorRole
  int32_t layer;           //   4  0..n_layers-1 for per-layer roles, -1 for global ones
  uint32_t dtype;          //   8  DType
  uint32_t rank;           //  12  1..4
  uint32_t shape[4];       //  16  logical shape, unused entries 0
  uint32_t group_size;     //  32  q8/q4: ArchBlock.group_size; else 0
  uint32_t layout;         //  36  WeightLayout (runtime/layout.h); version 4, reserved 0 before
  uint64_t data_offset;    //  40  values (multiple of 64)
  uint64_t data_bytes;     //  48  rows * quant_row_bytes(dtype, K), or numel * dtype_size;
                           //      interleaved layouts: layout_data_bytes (scales inside)
  uint64_t scales_offset;  //  56  q8/q4 rows: float32 scales [rows, ceil(K/group)]; else 0
  uint64_t scales_bytes;   //  64  q8/q4 rows: rows * groups * 4; else 0
  uint64_t reserved1;      //  72  0
};
static_assert(sizeof(TensorRecord) == 80);

// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, init and final xor 0xFFFFFFFF), continued
// from `crc` (pass 0 to start): crc32_ieee(b, n2, crc32_ieee(a, n1)) == crc of a then b.
uint32_t crc32_ieee(const void* data, size_t size, uint32_t crc = 0);

// Header CRC: the CRC of [0, header_size) with the 4 header_crc bytes taken as zero.
uint32_t ein_header_crc(const unsigned char* image, uint32_t header_size);

// Whether the architecture has a tensor with this role (and how many per layer in total).
// The canonical table order is: token_embedding (if vocab > 0); for each layer 0..L-1 its
// per-layer roles in increasing role number; then final_norm, final_norm_bias, decoder_norm,
// decoder_norm_bias, classifier, rope_freq_factors, position_embedding, token_type_embedding,
// embed_norm, embed_norm_bias, when present. The loader requires exactly this sequence, so
// model_tensor() finds a tensor in O(1).
bool ein_role_present(const ModelConfig& config, TensorRole role);
bool ein_role_per_layer(TensorRole role);
// Whether `layer` (0 .. ein_layer_count - 1) stores `role`: transformer layers n_layers .. are
// decoder layers and alone hold the cross_* roles.
bool ein_role_in_layer(const ModelConfig& config, TensorRole role, int32_t layer);
// Layers in the file: n_layers + n_decoder_layers.
int32_t ein_layer_count(const ModelConfig& config);
// The (role, layer) the canonical order puts at `index` (< ein_expected_tensor_count): the
// embedding, each layer's roles in role order, then final_norm(_bias), decoder_norm(_bias),
// classifier.
void ein_canonical_entry(const ModelConfig& config, int64_t index, TensorRole* role,
                         int32_t* layer);
// The number of tensors the architecture's table must have; -1 if the config is invalid.
int64_t ein_expected_tensor_count(const ModelConfig& config);
// Expected logical shape of a tensor; returns its rank (0 when the role is absent).
int ein_expected_shape(const ModelConfig& config, TensorRole role, int64_t shape[kEinMaxRank]);
// True for roles stored in weight_dtype (matrices); false for f32 vectors (norms, biases).
bool ein_role_is_matrix(TensorRole role);

// The one translation between ModelConfig and its on-disk ArchBlock (loader and packer share it).
// Neither validates: the loader calls ein_validate_config() on the result. Versions 2 and 3 read
// the first 128 bytes (the rest zero).
ModelConfig config_from_arch_block(const ArchBlock& block);
ArchBlock arch_block_from_config(const ModelConfig& config);

// The one check of a configuration: ranges, consistency and each architecture's rules, with a
// message naming the field. The loader, the packer and every model's weight binding and option
// resolution (models/llama.cpp, models/encoder.cpp) call it; nothing else re-checks a config.
Status ein_validate_config(const ModelConfig& config);
// A model binding's check: invalid_argument with `refusal` when `kind_ok` is false (the config is
// another architecture's), else ein_validate_config.
Status ein_validate_config_for(const ModelConfig& config, bool kind_ok, const char* refusal);

}  // namespace einfer
