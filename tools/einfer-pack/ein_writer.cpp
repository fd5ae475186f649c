#include "tools/einfer-pack/ein_writer.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>

#include "kernels/quant/quant.h"
#include "runtime/format.h"

namespace einfer::pack {

namespace {
uint64_t align_up(uint64_t v) {
  return (v + kEinAlignment - 1) / kEinAlignment * kEinAlignment;
}

template <typename T>
void append(std::vector<uint8_t>& out, const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}
}  // namespace

std::string status_text(const Status& s) {
  char buf[256];
  format_status(s, buf, sizeof buf);
  return buf;
}

void require_valid_config(const ModelConfig& config, const std::string& context) {
  const Status s = ein_validate_config(config);
  if (!s.ok()) throw PackError(context + status_text(s));
}

PackedTensor encode_tensor(TensorRole role, int32_t layer, const std::vector<int64_t>& shape,
                           const float* values, DType dtype, int32_t group) {
  PackedTensor t;
  t.role = role;
  t.layer = layer;
  t.dtype = dtype;
  if (shape.empty() || shape.size() > 4) throw PackError("tensor rank must be 1..4");
  t.rank = static_cast<int>(shape.size());
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    t.shape[i] = shape[i];
    n *= shape[i];
  }
  const int64_t cols = shape.back();
  const int64_t rows = cols > 0 ? n / cols : 0;
  switch (dtype) {
    case DType::f32:
      t.data.resize(static_cast<size_t>(n) * 4);
      std::memcpy(t.data.data(), values, t.data.size());
      break;
    case DType::f16:
    case DType::bf16:
      t.data.resize(static_cast<size_t>(n) * 2);
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = dtype == DType::f16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
        std::memcpy(t.data.data() + i * 2, &h, 2);
      }
      break;
    case DType::q8:
    case DType::q4: {
      if (group <= 0) throw PackError("quantized tensor needs a positive group size");
      t.group_size = group;
      const size_t row_bytes = quant_row_bytes(dtype, cols);
      const int64_t groups = quant_groups(cols, group);
      t.data.resize(static_cast<size_t>(rows) * row_bytes);
      std::vector<float> scales(static_cast<size_t>(rows * groups));
      for (int64_t r = 0; r < rows; ++r) {
        if (dtype == DType::q8)
          quantize_row_q8(values + r * cols, cols, group,
                          reinterpret_cast<int8_t*>(t.data.data() + r * row_bytes),
                          scales.data() + r * groups);
        else
          quantize_row_q4(values + r * cols, cols, group, t.data.data() + r * row_bytes,
                          scales.data() + r * groups);
      }
      t.scales.resize(scales.size() * 4);
      std::memcpy(t.scales.data(), scales.data(), t.scales.size());
      break;
    }
    default:
      throw PackError("unsupported tensor dtype");
  }
  return t;
}

uint32_t ein_version_for(const EinImage& image) {
  // Version 4 features: the families' and bert's ArchBlock fields and flags, interleaved layouts.
  const ArchBlock a = arch_block_from_config(image.config);
  bool needs_v4 = a.kind == static_cast<uint32_t>(ArchKind::bert) || (a.flags & ~kArchKnownFlagsV3);
  const unsigned char* tail = reinterpret_cast<const unsigned char*>(&a) + kArchBlockBytesV3;
  for (size_t i = 0; i < sizeof a - kArchBlockBytesV3; ++i) needs_v4 = needs_v4 || tail[i] != 0;
  for (const PackedTensor& t : image.tensors) needs_v4 = needs_v4 || t.layout != WeightLayout::rows;
  return needs_v4 ? kEinVersion : kEinVersion3;
}

std::vector<uint8_t> write_ein(const EinImage& image, uint32_t version) {
  const ModelConfig& c = image.config;
  require_valid_config(c, "invalid model configuration: ");
  const int64_t count = ein_expected_tensor_count(c);

  // Canonical order: index every tensor by (role, layer) and walk the expected sequence.
  std::map<std::pair<int32_t, uint32_t>, const PackedTensor*> by_key;
  for (const PackedTensor& t : image.tensors) {
    if (!by_key.emplace(std::make_pair(t.layer, static_cast<uint32_t>(t.role)), &t).second)
      throw PackError(std::string("duplicate tensor ") + tensor_role_name(t.role) + " layer " +
                      std::to_string(t.layer));
  }
  std::vector<const PackedTensor*> order;
  auto take = [&](TensorRole role, int32_t layer) {
    auto it = by_key.find({layer, static_cast<uint32_t>(role)});
    if (it == by_key.end())
      throw PackError(std::string("missing tensor ") + tensor_role_name(role) +
                      (layer >= 0 ? " layer " + std::to_string(layer) : std::string()));
    order.push_back(it->second);
    by_key.erase(it);
  };
  for (int64_t i = 0; i < count; ++i) {
    TensorRole role;
    int32_t layer;
    ein_canonical_entry(c, i, &role, &layer);
    take(role, layer);
  }
  if (!by_key.empty()) {
    const PackedTensor* t = by_key.begin()->second;
    throw PackError(std::string("tensor not used by this architecture: ") +
                    tensor_role_name(t->role) + " layer " + std::to_string(t->layer));
  }
  if (static_cast<int64_t>(order.size()) != count) throw PackError("internal: tensor count");

  // Version 0 asks for the oldest version that holds the model (3: a 128-byte ArchBlock, every
  // matrix in rows), so images without version 4 features still load on earlier runtimes; tests
  // ask for 3 or 4.
  const bool needs_v4 = ein_version_for(image) == kEinVersion;
  const ArchBlock a = arch_block_from_config(c);
  if (version == 0) version = needs_v4 ? kEinVersion : kEinVersion3;
  if (version != kEinVersion && version != kEinVersion3)
    throw PackError("write_ein: version " + std::to_string(version) + " is not written");
  if (version == kEinVersion3 && needs_v4)
    throw PackError("write_ein: version 3 cannot hold this model's features");
  const uint32_t arch_bytes = version == kEinVersion ? sizeof(ArchBlock) : kArchBlockBytesV3;
  const uint64_t table_offset = 128 + arch_bytes;
  const uint64_t header_size = align_up(table_offset + order.size() * sizeof(TensorRecord));
  std::vector<TensorRecord> records(order.size());
  uint64_t cursor = header_size;  // next free aligned offset
  uint64_t end = header_size;     // exact end of the last region = file_size
  for (size_t i = 0; i < order.size(); ++i) {
    const PackedTensor& t = *order[i];
    TensorRecord& r = records[i];
    std::memset(&r, 0, sizeof r);
    r.role = static_cast<uint32_t>(t.role);
    r.layer = t.layer;
    r.dtype = static_cast<uint32_t>(t.dtype);
    r.rank = static_cast<uint32_t>(t.rank);
    for (int d = 0; d < t.rank; ++d) r.shape[d] = static_cast<uint32_t>(t.shape[d]);
    r.group_size = static_cast<uint32_t>(t.group_size);
    r.layout = static_cast<uint32_t>(t.layout);
    r.data_offset = cursor;
    r.data_bytes = t.data.size();
    end = cursor + t.data.size();
    cursor = align_up(end);
    if (!t.scales.empty() || (dtype_is_quantized(t.dtype) && !layout_interleaved(t.layout))) {
      r.scales_offset = cursor;
      r.scales_bytes = t.scales.size();
      end = cursor + t.scales.size();
      cursor = align_up(end);
    }
  }
  FileHeader h;
  std::memset(&h, 0, sizeof h);
  h.magic = kEinMagic;
  h.version = version;
  h.header_size = static_cast<uint32_t>(header_size);
  h.arch_offset = 128;
  h.arch_size = arch_bytes;
  h.table_offset = static_cast<uint32_t>(table_offset);
  h.tensor_count = static_cast<uint32_t>(order.size());
  h.tensor_record_size = sizeof(TensorRecord);
  if (!image.tokenizer.empty()) {
    h.flags |= kEinFlagTokenizer;
    h.tokenizer_offset = cursor;
    h.tokenizer_bytes = image.tokenizer.size();
    end = cursor + image.tokenizer.size();
    cursor = align_up(end);
  }
  if (!image.metadata.empty()) {
    h.flags |= kEinFlagMetadata;
    h.metadata_offset = cursor;
    h.metadata_bytes = image.metadata.size();
    end = cursor + image.metadata.size();
  }
  h.file_size = end;

  std::vector<uint8_t> out(end, 0);
  std::memcpy(out.data() + 128, &a, arch_bytes);
  std::memcpy(out.data() + table_offset, records.data(), records.size() * sizeof(TensorRecord));
  for (size_t i = 0; i < order.size(); ++i) {
    const PackedTensor& t = *order[i];
    if (!t.data.empty())
      std::memcpy(out.data() + records[i].data_offset, t.data.data(), t.data.size());
    if (!t.scales.empty())
      std::memcpy(out.data() + records[i].scales_offset, t.scales.data(), t.scales.size());
  }
  if (!image.tokenizer.empty())
    std::memcpy(out.data() + h.tokenizer_offset, image.tokenizer.data(), image.tokenizer.size());
  if (!image.metadata.empty())
    std::memcpy(out.data() + h.metadata_offset, image.metadata.data(), image.metadata.size());
  h.payload_crc = crc32_ieee(out.data() + header_size, end - header_size);
  std::memcpy(out.data(), &h, sizeof h);
  h.header_crc = ein_header_crc(out.data(), static_cast<uint32_t>(header_size));
  std::memcpy(out.data(), &h, sizeof h);

  // Self-check: every image leaving the writer loads.
  AlignedBuffer buf(out);
  Model model;
  const Status s = load_model(buf.data, buf.size, LoadOptions{}, &model);
  if (!s.ok()) throw PackError("packed image does not load: " + status_text(s));
  return out;
}

AlignedBuffer::AlignedBuffer(const std::vector<uint8_t>& bytes) : size(bytes.size()) {
  data = static_cast<unsigned char*>(std::aligned_alloc(64, align_up(size ? size : 1)));
  if (data == nullptr) throw PackError("out of memory");
  if (size) std::memcpy(data, bytes.data(), size);
}
AlignedBuffer::~AlignedBuffer() {
  std::free(data);
}

}  // namespace einfer::pack
