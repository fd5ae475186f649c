// GGUF metadata reading shared by the model importer (import_gguf.cpp) and the vocabulary
// importer (import_tokenizer_gguf.cpp): a bounds-checked cursor and typed key/value pairs.
// Host only; errors throw PackError.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tools/einfer-pack/ein_writer.h"

namespace einfer::pack {

struct GgufCursor {
  const std::vector<uint8_t>& b;
  size_t pos = 0;
  void need(uint64_t n) {
    if (n > b.size() || pos > b.size() - n)
      throw PackError("gguf: file truncated at byte " + std::to_string(pos));
  }
  template <typename T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, b.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  std::string str() {
    const uint64_t n = get<uint64_t>();
    need(n);
    std::string s(reinterpret_cast<const char*>(b.data() + pos), n);
    pos += n;
    return s;
  }
};

// One metadata value: type 8 string in `str`, 9 array (elements in `strs` or `nums` when kept),
// any scalar in `num`.
struct GgufValue {
  uint32_t type = 0;
  double num = 0;
  std::string str;
  std::vector<std::string> strs;
  std::vector<double> nums;
};

// Reads a value of GGUF type t; arrays are skipped unless keep_arrays.
GgufValue gguf_read_value(GgufCursor& c, uint32_t t, bool keep_arrays, int depth = 0);

// After the 24-byte header: n_kv pairs; arrays are kept for keys starting with keep_prefix.
std::map<std::string, GgufValue> gguf_read_metadata(GgufCursor& c, uint64_t n_kv,
                                                    const std::string& keep_prefix);

}  // namespace einfer::pack
