// Minimal .npy reader/writer for the host tools and tests (they may allocate; the libraries never
// read files).
//
// Reads format versions 1.x and 2.x/3.x headers, little-endian float32 ('<f4') or float64 ('<f8')
// in C order (fortran_order False) and returns float32 data; anything else is rejected with a
// message naming what was found. Writes float32 C-order version 1.0 files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace einfer::tools {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;   // float32 values in C order (float64 input is narrowed)
  std::string source_descr;  // '<f4' or '<f8'
};

// Returns false and sets *error ("file.npy: ...") on any problem.
bool read_npy(const std::string& path, NpyArray* out, std::string* error);
bool write_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape,
               std::string* error);

}  // namespace einfer::tools
