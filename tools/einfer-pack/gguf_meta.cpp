// GGUF metadata values (types 0..12: u8 i8 u16 i16 u32 i32 f32 bool string array u64 i64 f64).
#include "tools/einfer-pack/gguf_meta.h"

namespace einfer::pack {
namespace {

size_t scalar_size(uint32_t t) {
  static const size_t kSize[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  return t < 13 ? kSize[t] : 0;
}

double read_scalar(GgufCursor& c, uint32_t t) {
  switch (t) {
    case 0:
      return c.get<uint8_t>();
    case 1:
      return c.get<int8_t>();
    case 2:
      return c.get<uint16_t>();
    case 3:
      return c.get<int16_t>();
    case 4:
      return c.get<uint32_t>();
    case 5:
      return c.get<int32_t>();
    case 6:
      return c.get<float>();
    case 7:
      return c.get<uint8_t>();
    case 10:
      return static_cast<double>(c.get<uint64_t>());
    case 11:
      return static_cast<double>(c.get<int64_t>());
    case 12:
      return c.get<double>();
  }
  throw PackError("gguf: unknown metadata value type " + std::to_string(t));
}

}  // namespace

GgufValue gguf_read_value(GgufCursor& c, uint32_t t, bool keep_arrays, int depth) {
  GgufValue v;
  v.type = t;
  if (t == 8) {
    v.str = c.str();
  } else if (t == 9) {
    if (depth > 2) throw PackError("gguf: nested arrays too deep");
    const uint32_t et = c.get<uint32_t>();
    const uint64_t n = c.get<uint64_t>();
    // Every element takes at least a byte: a longer array cannot be in the file.
    if (n > c.b.size()) throw PackError("gguf: array longer than the file");
    if (et == 8 || et == 9) {
      for (uint64_t i = 0; i < n; ++i) {
        GgufValue e = gguf_read_value(c, et, false, depth + 1);
        if (keep_arrays && et == 8) v.strs.push_back(std::move(e.str));
      }
    } else {
      const size_t es = scalar_size(et);
      if (es == 0) throw PackError("gguf: unknown array element type");
      c.need(n * es);  // n <= file size: no overflow
      if (keep_arrays) {
        v.nums.reserve(n);
        for (uint64_t i = 0; i < n; ++i) v.nums.push_back(read_scalar(c, et));
      } else {
        c.pos += n * es;
      }
    }
  } else {
    v.num = read_scalar(c, t);
  }
  return v;
}

std::map<std::string, GgufValue> gguf_read_metadata(GgufCursor& c, uint64_t n_kv,
                                                    const std::string& keep_prefix) {
  if (n_kv > c.b.size()) throw PackError("gguf: implausible metadata count");
  std::map<std::string, GgufValue> kv;
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.str();
    const uint32_t t = c.get<uint32_t>();
    const bool keep = !keep_prefix.empty() && key.rfind(keep_prefix, 0) == 0;
    if (!kv.emplace(key, gguf_read_value(c, t, keep)).second)
      throw PackError("gguf: duplicate metadata key " + key);
  }
  return kv;
}

}  // namespace einfer::pack
