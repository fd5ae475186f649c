// tools/common/npy: round trip, float64 narrowing, and clear rejection of what it does not read.
#include <doctest/doctest.h>

#if defined(EINFER_HAVE_TOOL_COMMON)  // .npy reading lives in tools/common

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tools/common/npy.h"

using namespace einfer::tools;

namespace {

void write_raw(const std::string& path, const std::string& dict, const void* data, size_t bytes) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f);
  const unsigned char pre[10] = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<unsigned char>(h.size()), 0};
  std::fwrite(pre, 1, 10, f);
  std::fwrite(h.data(), 1, h.size(), f);
  std::fwrite(data, 1, bytes, f);
  std::fclose(f);
}
}  // namespace

TEST_CASE("npy: float32 round trip, rank 0 and float64 input") {
  const std::string p =
      std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/einfer_npy_test.npy";
  const float v[6] = {1, 2, 3, 4, 5, 6.5f};
  std::string err;
  REQUIRE(write_npy(p, v, {2, 3}, &err));
  NpyArray a;
  REQUIRE(read_npy(p, &a, &err));
  CHECK(a.shape == std::vector<int64_t>{2, 3});
  CHECK(a.data[5] == 6.5f);
  REQUIRE(write_npy(p, v, {}, &err));
  REQUIRE(read_npy(p, &a, &err));
  CHECK(a.shape.empty());
  CHECK(a.data.size() == 1);
  const double d[2] = {0.25, -3.0};
  write_raw(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", d, sizeof d);
  REQUIRE(read_npy(p, &a, &err));
  CHECK(a.data[1] == -3.0f);

  const int64_t i[2] = {1, 2};
  write_raw(p, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", i, sizeof i);
  CHECK(!read_npy(p, &a, &err));
  CHECK(err.find("unsupported dtype '<i8'") != std::string::npos);
  write_raw(p, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }", v, 8);
  CHECK(!read_npy(p, &a, &err));
  CHECK(err.find("Fortran-order") != std::string::npos);
  write_raw(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", v, sizeof v);
  CHECK(!read_npy(p, &a, &err));
  CHECK(err.find("truncated data") != std::string::npos);
  CHECK(!read_npy(p + ".missing", &a, &err));
  std::remove(p.c_str());
}

#endif  // EINFER_HAVE_TOOL_COMMON
