// Whole-file reading and read-only memory mapping for the host tools and tests (they may
// allocate; the libraries never read files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace einfer::tools {

// Reads the whole file into *out. False when it cannot be opened or a read fails (a directory,
// an I/O error); *out then holds what was read so far.
bool read_file(const char* path, std::vector<uint8_t>* out);

// A file memory-mapped read-only; page-aligned, so 64-byte aligned as the model loader needs.
struct MappedFile {
  void* data = nullptr;
  size_t size = 0;
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();
};

// Maps `path` into *out (which must be empty). False when it cannot be opened, is empty or the
// mapping fails.
bool map_file(const char* path, MappedFile* out);

}  // namespace einfer::tools
