// Host-side .ein writer (docs/format.md): builds a validated image from tensors in memory.
//
// Used by einfer-pack and by tests/benchmarks that need synthetic models. Host only: allocates and
// throws einfer::pack::PackError on bad input. Tensors may be added in any order; the writer puts
// them in the canonical order the loader requires, aligns every region to 64 bytes and fills in
// both CRCs. Every image it returns has passed load_model().
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/format.h"
#include "runtime/model.h"

namespace einfer::pack {

struct PackError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct PackedTensor {
  TensorRole role = TensorRole::token_embedding;
  int32_t layer = -1;
  DType dtype = DType::f32;
  int rank = 0;
  int64_t shape[4] = {0, 0, 0, 0};
  int32_t group_size = 0;       // q8/q4 only
  std::vector<uint8_t> data;    // values (interleaved layouts: the blocks, scales inside)
  std::vector<uint8_t> scales;  // q8/q4 rows layout: float32 [rows, groups]
  WeightLayout layout = WeightLayout::rows;  // q8/q4 matrices (runtime/layout.h)
};

// Encodes float values of logical shape `shape` (row-major, last axis quantized) as `dtype`
// (f32, f16, q8 or q4 with `group`).
PackedTensor encode_tensor(TensorRole role, int32_t layer, const std::vector<int64_t>& shape,
                           const float* values, DType dtype, int32_t group);

struct EinImage {
  ModelConfig config;
  std::vector<PackedTensor> tensors;
  std::vector<uint8_t> tokenizer;  // llama2.c tokenizer.bin bytes; empty: none
  std::string metadata;            // "key=value\n" lines; empty: none
};

// The oldest format version that holds the image: 3 (a 128-byte ArchBlock, every matrix in the
// rows layout) unless it needs version 4 (the families' and bert's features, an interleaved
// layout), so other images load on runtimes that predate version 4.
uint32_t ein_version_for(const EinImage& image);

// Serializes the image; throws PackError if a tensor is missing, duplicated or inconsistent.
// `version` 0 writes ein_version_for(image). Tests of older images ask for 3 (refused for a model
// with version 4 features) or 4 explicitly.
std::vector<uint8_t> write_ein(const EinImage& image, uint32_t version = 0);

// A 64-byte aligned copy of bytes (load_model needs an aligned buffer).
struct AlignedBuffer {
  explicit AlignedBuffer(const std::vector<uint8_t>& bytes);
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  unsigned char* data = nullptr;
  size_t size = 0;
};

// "message (need N, have M) at index I" for a Status.
std::string status_text(const Status& s);

// The packer's one check of a configuration (runtime ein_validate_config): throws
// PackError(context + status_text) when it is invalid.
void require_valid_config(const ModelConfig& config, const std::string& context);

}  // namespace einfer::pack
