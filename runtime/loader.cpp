// The .ein loader, the image and its header (docs/format.md): validates an image in time
// proportional to its tensor count (plus one CRC pass unless skipped) and fills a Model whose views
// point into the caller's buffer. The architecture block and the tensor records are checked by
// loader_arch.cpp and loader_tensors.cpp (the split: loader_internal.h).
#include <cstring>

#include "runtime/loader_internal.h"

namespace einfer {

using loader_detail::bad;
using loader_detail::fits;

namespace {

constexpr const char* kMisaligned[4] = {
    "tensor data offset not 64-byte aligned", "tensor scales offset not 64-byte aligned",
    "tokenizer offset not 64-byte aligned", "metadata offset not 64-byte aligned"};
constexpr const char* kOverlap[4] = {"tensor data overlaps the header or the previous region",
                                     "tensor scales overlap the tensor's data",
                                     "tokenizer overlaps the tensor data",
                                     "metadata overlaps the previous region"};
constexpr const char* kGap[4] = {"tensor data does not start right after the previous region",
                                 "tensor scales do not start right after the tensor's data",
                                 "tokenizer does not start right after the tensor data",
                                 "metadata does not start right after the previous region"};
constexpr const char* kOutside[4] = {
    "tensor data extends outside the file", "tensor scales extend outside the file",
    "tokenizer extends outside the file", "metadata extends outside the file"};

// An optional section (tokenizer, metadata): present exactly when its flag is set, then non-empty
// and placed after the previous region.
Status place_section(bool flagged, uint64_t offset, uint64_t bytes, uint64_t file_size,
                     uint64_t* cursor, loader_detail::Region kind, const char* empty,
                     const char* unflagged) {
  if (!flagged) return offset != 0 || bytes != 0 ? bad(unflagged) : ok_status();
  if (bytes == 0) return bad(empty);
  return loader_detail::place_region(offset, bytes, file_size, cursor, kind, -1);
}

}  // namespace

Status loader_detail::bad(const char* message, int64_t need, int64_t have, int32_t index) {
  return make_status(StatusCode::bad_format, message, need, have, index);
}

Status loader_detail::place_region(uint64_t offset, uint64_t bytes, uint64_t file_size,
                                   uint64_t* cursor, Region kind, int32_t index) {
  const uint64_t expected = (*cursor + kEinAlignment - 1) / kEinAlignment * kEinAlignment;
  const int64_t have = static_cast<int64_t>(offset > INT64_MAX ? INT64_MAX : offset);
  if (offset % kEinAlignment != 0) return bad(kMisaligned[kind], -1, -1, index);
  if (offset < expected) return bad(kOverlap[kind], static_cast<int64_t>(expected), have, index);
  if (offset > expected) return bad(kGap[kind], static_cast<int64_t>(expected), have, index);
  if (!fits(offset, bytes, file_size))
    return bad(kOutside[kind], static_cast<int64_t>(file_size), -1, index);
  *cursor = offset + bytes;
  return ok_status();
}

uint32_t ein_header_crc(const unsigned char* image, uint32_t header_size) {
  const size_t field = offsetof(FileHeader, header_crc);
  const unsigned char zero[4] = {0, 0, 0, 0};
  uint32_t crc = crc32_ieee(image, field);
  crc = crc32_ieee(zero, 4, crc);
  return crc32_ieee(image + field + 4, header_size - field - 4, crc);
}

Status load_model(const void* data, size_t size, const LoadOptions& options, Model* model) {
  if (model == nullptr) return make_status(StatusCode::invalid_argument, "model is null");
  *model = Model{};
  if (data == nullptr) return make_status(StatusCode::invalid_argument, "model buffer is null");
  if (reinterpret_cast<uintptr_t>(data) % kEinAlignment != 0)
    return make_status(StatusCode::invalid_argument, "model buffer must be 64-byte aligned");
  const unsigned char* img = static_cast<const unsigned char*>(data);
  const uint64_t size64 = size;  // size_t is 32-bit on Cortex-M
  const int64_t have = static_cast<int64_t>(size64 > INT64_MAX ? INT64_MAX : size64);

  if (size < sizeof(FileHeader)) return bad("file truncated: shorter than the header", 128, have);
  FileHeader h;
  std::memcpy(&h, img, sizeof h);
  if (h.magic != kEinMagic) return bad("not an einfer model (bad magic)");
  if (h.version != kEinVersion && h.version != kEinVersion3 && h.version != kEinVersionPrevious)
    return make_status(StatusCode::unsupported, "unsupported format version", kEinVersion,
                       h.version);
  if (h.file_size > size)
    return bad("file truncated (file_size in header exceeds the buffer)",
               static_cast<int64_t>(h.file_size > INT64_MAX ? INT64_MAX : h.file_size), have);
  const uint64_t file_size = h.file_size;
  if (h.header_size < sizeof(FileHeader) || h.header_size % kEinAlignment != 0 ||
      h.header_size > file_size)
    return bad("header_size out of range or not a multiple of 64", -1, h.header_size);
  if (h.reserved0 != 0) return bad("reserved header field is not zero");
  for (uint8_t b : h.reserved)
    if (b != 0) return bad("reserved header bytes are not zero");
  if (h.flags & ~kEinKnownFlags) return bad("unknown header flags", -1, h.flags);
  const uint32_t arch_bytes = h.version == kEinVersion ? sizeof(ArchBlock) : kArchBlockBytesV3;
  if (h.arch_size != arch_bytes) return bad("arch block size mismatch", arch_bytes, h.arch_size);
  if (h.tensor_record_size != sizeof(TensorRecord))
    return bad("tensor record size mismatch", 80, h.tensor_record_size);
  if (h.arch_offset < sizeof(FileHeader) || !fits(h.arch_offset, h.arch_size, h.header_size))
    return bad("arch block outside the header", -1, h.arch_offset);
  const uint64_t table_bytes = uint64_t{h.tensor_count} * sizeof(TensorRecord);
  if (h.table_offset < uint64_t{h.arch_offset} + h.arch_size ||
      !fits(h.table_offset, table_bytes, h.header_size))
    return bad("tensor table outside the header or overlapping the arch block", -1, h.table_offset);

  if (options.verify_crc) {
    if (ein_header_crc(img, h.header_size) != h.header_crc) return bad("header CRC mismatch");
    if (crc32_ieee(img + h.header_size, file_size - h.header_size) != h.payload_crc)
      return bad("payload CRC mismatch");
  }

  ModelConfig c;
  EINFER_TRY(loader_detail::read_arch_block(h, img, &c));

  const int64_t expected = ein_expected_tensor_count(c);
  if (expected != h.tensor_count)
    return bad("tensor count disagrees with the architecture", expected, h.tensor_count);

  uint64_t cursor = h.header_size;  // regions must come in increasing order: no overlaps
  EINFER_TRY(loader_detail::check_tensor_records(h, img, c, &cursor));

  const bool has_tok = (h.flags & kEinFlagTokenizer) != 0;
  const bool has_meta = (h.flags & kEinFlagMetadata) != 0;
  EINFER_TRY(place_section(has_tok, h.tokenizer_offset, h.tokenizer_bytes, file_size, &cursor,
                           loader_detail::kTokenizer, "tokenizer section is empty",
                           "tokenizer section set without its flag"));
  EINFER_TRY(place_section(has_meta, h.metadata_offset, h.metadata_bytes, file_size, &cursor,
                           loader_detail::kMetadata, "metadata section is empty",
                           "metadata section set without its flag"));
  if (cursor != file_size)
    return bad("file_size disagrees with the end of the last region", static_cast<int64_t>(cursor),
               static_cast<int64_t>(file_size));

  model->config = c;
  model->image = img;
  model->image_bytes = static_cast<size_t>(file_size);
  model->tensor_table = img + h.table_offset;
  model->tensor_count = h.tensor_count;
  if (has_tok) {
    model->tokenizer = img + h.tokenizer_offset;
    model->tokenizer_bytes = static_cast<size_t>(h.tokenizer_bytes);
  }
  return ok_status();
}

}  // namespace einfer
