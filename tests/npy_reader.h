// Minimal .npy reader for the tests (version 1/2 headers, little-endian <f4 and <i8, C order).
// Tests may allocate; the libraries never see this.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace einfer_test {

struct NpyArray {
  std::string descr;  // "<f4" or "<i8"
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  bool ok = false;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  const float* f32() const { return reinterpret_cast<const float*>(bytes.data()); }
  const int64_t* i64() const { return reinterpret_cast<const int64_t*>(bytes.data()); }
  std::vector<float> to_f32() const { return std::vector<float>(f32(), f32() + numel()); }
};

inline NpyArray load_npy(const std::string& path) {
  NpyArray a;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return a;
  unsigned char magic[8];
  uint32_t header_len = 0;
  if (std::fread(magic, 1, 8, f) != 8 || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    std::fclose(f);
    return a;
  }
  if (magic[6] == 1) {
    unsigned char l[2];
    if (std::fread(l, 1, 2, f) != 2) {
      std::fclose(f);
      return a;
    }
    header_len = l[0] | (l[1] << 8);
  } else {
    unsigned char l[4];
    if (std::fread(l, 1, 4, f) != 4) {
      std::fclose(f);
      return a;
    }
    header_len = l[0] | (l[1] << 8) | (l[2] << 16) | (uint32_t(l[3]) << 24);
  }
  std::string header(header_len, '\0');
  if (std::fread(header.data(), 1, header_len, f) != header_len) {
    std::fclose(f);
    return a;
  }
  const size_t d = header.find("'descr': '");
  const size_t fo = header.find("'fortran_order': False");
  const size_t s = header.find("'shape': (");
  if (d == std::string::npos || fo == std::string::npos || s == std::string::npos) {
    std::fclose(f);
    return a;
  }
  a.descr = header.substr(d + 10, 3);
  size_t i = s + 10;
  while (i < header.size() && header[i] != ')') {
    if (header[i] >= '0' && header[i] <= '9') {
      int64_t v = 0;
      while (header[i] >= '0' && header[i] <= '9') v = v * 10 + (header[i++] - '0');
      a.shape.push_back(v);
    } else {
      ++i;
    }
  }
  const size_t esz = a.descr == "<f4" ? 4 : (a.descr == "<i8" ? 8 : 0);
  if (esz == 0) {
    std::fclose(f);
    return a;
  }
  a.bytes.resize(static_cast<size_t>(a.numel()) * esz);
  a.ok = std::fread(a.bytes.data(), 1, a.bytes.size(), f) == a.bytes.size();
  std::fclose(f);
  return a;
}

inline std::string attention_data(const std::string& name) {
  return std::string(EINFER_TEST_DATA_DIR) + "/attention/" + name + ".npy";
}

}  // namespace einfer_test
