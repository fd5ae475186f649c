#include "tools/common/npy.h"

#include <cstdio>
#include <cstring>
#include <memory>

namespace einfer::tools {

namespace {

struct FileCloser {
  void operator()(FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<FILE, FileCloser>;

// Value of `key` in the header dict, as raw text up to the next top-level ',' or '}'.
bool dict_value(const std::string& h, const std::string& key, std::string* value) {
  const size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) return false;
  size_t p = h.find(':', k);
  if (p == std::string::npos) return false;
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  int depth = 0;
  size_t e = p;
  for (; e < h.size(); ++e) {
    const char c = h[e];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  *value = h.substr(p, e - p);
  while (!value->empty() && value->back() == ' ') value->pop_back();
  return true;
}

}  // namespace

bool read_npy(const std::string& path, NpyArray* out, std::string* error) {
  auto fail = [&](const std::string& msg) {
    *error = path + ": " + msg;
    return false;
  };
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return fail("cannot open file");
  unsigned char magic[8];
  if (std::fread(magic, 1, 8, f.get()) != 8 || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return fail("not a .npy file (bad magic)");
  }
  const int major = magic[6];
  size_t header_len = 0;
  if (major == 1) {
    unsigned char b[2];
    if (std::fread(b, 1, 2, f.get()) != 2) return fail("truncated header");
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (std::fread(b, 1, 4, f.get()) != 4) return fail("truncated header");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<size_t>(b[3]) << 24);
  } else {
    return fail("unsupported .npy format version " + std::to_string(major));
  }
  if (header_len > (1u << 20)) return fail("header too large");
  std::string h(header_len, '\0');
  if (std::fread(h.data(), 1, header_len, f.get()) != header_len) return fail("truncated header");
  std::string descr, fortran, shape;
  if (!dict_value(h, "descr", &descr) || !dict_value(h, "fortran_order", &fortran) ||
      !dict_value(h, "shape", &shape)) {
    return fail("header lacks descr, fortran_order or shape");
  }
  if (descr.size() >= 2) descr = descr.substr(1, descr.size() - 2);  // strip quotes
  if (descr != "<f4" && descr != "<f8") {
    return fail("unsupported dtype '" + descr + "' (only float32 '<f4' and float64 '<f8')");
  }
  if (fortran != "False") return fail("Fortran-order arrays are not supported (need C order)");
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    return fail("malformed shape");
  out->shape.clear();
  uint64_t count = 1;
  for (size_t p = 1; p + 1 < shape.size();) {
    while (p + 1 < shape.size() && (shape[p] == ' ' || shape[p] == ',')) ++p;
    if (p + 1 >= shape.size()) break;
    int64_t v = 0;
    size_t q = p;
    while (q + 1 < shape.size() && shape[q] >= '0' && shape[q] <= '9') {
      v = v * 10 + (shape[q] - '0');
      if (v > (int64_t{1} << 40)) return fail("dimension too large");
      ++q;
    }
    if (q == p) return fail("malformed shape");
    out->shape.push_back(v);
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(v), &count))
      return fail("shape product overflows");
    p = q;
  }
  // The data must be in the file before anything is allocated for it (a hostile shape would
  // otherwise ask for tens of GiB).
  const uint64_t elem = descr == "<f4" ? 4 : 8;
  const long data_pos = std::ftell(f.get());
  if (data_pos < 0 || std::fseek(f.get(), 0, SEEK_END) != 0) return fail("cannot seek");
  const long file_end = std::ftell(f.get());
  if (file_end < data_pos || std::fseek(f.get(), data_pos, SEEK_SET) != 0)
    return fail("cannot seek");
  const uint64_t avail = static_cast<uint64_t>(file_end - data_pos);
  if (count > avail / elem)
    return fail("truncated data: shape needs " + std::to_string(count) + " values, file holds " +
                std::to_string(avail / elem));
  if (count * elem != avail)
    return fail("file holds " + std::to_string(avail - count * elem) +
                " bytes more than its shape");
  out->source_descr = descr;
  out->data.resize(static_cast<size_t>(count));
  if (descr == "<f4") {
    if (std::fread(out->data.data(), 4, out->data.size(), f.get()) != out->data.size()) {
      return fail("truncated data (file shorter than its shape)");
    }
  } else {
    std::vector<double> d(static_cast<size_t>(count));
    if (std::fread(d.data(), 8, d.size(), f.get()) != d.size()) {
      return fail("truncated data (file shorter than its shape)");
    }
    for (size_t i = 0; i < d.size(); ++i) out->data[i] = static_cast<float>(d[i]);
  }
  return true;
}

bool write_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape,
               std::string* error) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) dict += ",";
    if (i + 1 < shape.size()) dict += " ";
    count *= shape[i];
  }
  dict += "), }";
  // Pad with spaces so the data starts on a 64-byte boundary; the header ends with '\n'.
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  File f(std::fopen(path.c_str(), "wb"));
  if (!f) {
    *error = path + ": cannot open for writing";
    return false;
  }
  const unsigned char pre[10] = {0x93,
                                 'N',
                                 'U',
                                 'M',
                                 'P',
                                 'Y',
                                 1,
                                 0,
                                 static_cast<unsigned char>(dict.size() & 0xFF),
                                 static_cast<unsigned char>(dict.size() >> 8)};
  bool ok = std::fwrite(pre, 1, 10, f.get()) == 10 &&
            std::fwrite(dict.data(), 1, dict.size(), f.get()) == dict.size() &&
            std::fwrite(data, 4, static_cast<size_t>(count), f.get()) == static_cast<size_t>(count);
  if (!ok) *error = path + ": write failed";
  return ok;
}

}  // namespace einfer::tools
