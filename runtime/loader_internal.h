// Private to the loader (runtime/loader*.cpp), which is split by what it checks:
//   loader.cpp          the image and its header, the regions' placement, the Model it fills
//   loader_arch.cpp     the architecture block: the ArchBlock <-> ModelConfig translation and the
//                       one config check
//   loader_tensors.cpp  the tensor records: the canonical order, expected shapes, each record
// Every read copies bytes out with memcpy after a bounds check, so the loader never reads outside
// [data, data + size) and never depends on field alignment. Offsets and sizes are 64-bit and
// every sum is checked for overflow before use.
#pragma once

#include <cstdint>

#include "runtime/format.h"
#include "runtime/layout.h"
#include "runtime/model.h"

namespace einfer::loader_detail {

// A bad_format status (loader.cpp; one out-of-line body keeps every check's call small).
Status bad(const char* message, int64_t need = -1, int64_t have = -1, int32_t index = -1);

// a + b <= limit without overflow.
inline bool fits(uint64_t offset, uint64_t bytes, uint64_t limit) {
  return offset <= limit && bytes <= limit - offset;
}

// Regions are packed: each starts at the first multiple of 64 at or after the previous region's end
// (the header for the first), so overlaps and gaps are both impossible. Advances *cursor
// (loader.cpp).
enum Region { kData = 0, kScales = 1, kTokenizer = 2, kMetadata = 3 };
Status place_region(uint64_t offset, uint64_t bytes, uint64_t file_size, uint64_t* cursor,
                    Region kind, int32_t index);

// The header's architecture block as a validated config (loader_arch.cpp).
Status read_arch_block(const FileHeader& h, const unsigned char* image, ModelConfig* config);

// Every tensor record of the header's table against the config, placing each tensor's data and
// scales after *cursor (loader_tensors.cpp).
Status check_tensor_records(const FileHeader& h, const unsigned char* image, const ModelConfig& c,
                            uint64_t* cursor);

}  // namespace einfer::loader_detail
