// safetensors files: uint64 little-endian header length N, N bytes of JSON {name: {dtype, shape,
// data_offsets: [begin, end]}, "__metadata__": {str: str}}, then the data (offsets relative to it).
// Host only; throws PackError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/einfer-pack/ein_writer.h"
#include "tools/einfer-pack/json.h"

namespace einfer::pack {

struct SafeTensors {
  std::string what;  // the file's name in messages
  std::vector<uint8_t> bytes;
  Json header;
  size_t data_start = 0;

  // Parses the header and checks every entry (check_layout).
  SafeTensors(std::vector<uint8_t> b, std::string name);
  // Every entry well-formed, inside the data section, and no two overlapping.
  void check_layout() const;
  bool has(const std::string& name) const { return header.find(name) != nullptr; }
  // The string entries of "__metadata__".
  std::map<std::string, std::string> metadata() const;
  // Float values and shape of a tensor (and its stored dtype name, "F32", "F16" or "BF16").
  std::vector<float> get(const std::string& name, std::vector<int64_t>* shape,
                         std::string* stored = nullptr) const;
};

// Throws PackError "tensor NAME has shape [ ... ], expected [ ... ]" unless got == want.
void expect_shape(const std::vector<int64_t>& got, std::vector<int64_t> want,
                  const std::string& name);

}  // namespace einfer::pack
