// Whole-file reading and read-only memory mapping for the host tools and tests (they may
// allocate; the libraries never read files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace einfer::tools {

// Reads the whole file into *out. False when it cannot be opened or a read fails (a directory,
// an I/O error); *out then holds what was read so far.
bool read_file(const char* path, std::vector<uint8_t>* out);

// Anonymous memory for a model image or an arena, 2 MiB aligned, with transparent huge pages asked
// for (madvise MADV_HUGEPAGE; Debian's default THP mode only backs regions that ask). Streaming the
// weights through 4 KiB pages costs a page walk every 4 KiB: 110M-shape Q4_K decode ran 239-251
// tokens/s on 4 KiB pages and 316-329 on 2 MiB pages (Xeon, one thread). Zero-filled; data() is
// null when the mapping fails.
class LargeBuffer {
 public:
  LargeBuffer() = default;
  explicit LargeBuffer(size_t size) { allocate(size); }
  ~LargeBuffer() { release(); }
  // Replaces the contents with `size` zero bytes; false when the mapping fails (then empty).
  bool allocate(size_t size);
  void release();
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* map_ = nullptr;
  size_t map_size_ = 0;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// A model file's bytes: memory-mapped read-only (map_file), or read into a LargeBuffer
// (map_file with in_memory: no page cache sharing, but huge pages). Page-aligned either way, so
// 64-byte aligned as the model loader needs.
struct MappedFile {
  void* data = nullptr;
  size_t size = 0;
  LargeBuffer copy;  // the bytes when read into memory
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();
};

// Maps `path` into *out (which must be empty), or with in_memory reads it into out->copy. False
// when it cannot be opened, is empty or the mapping (the read) fails.
bool map_file(const char* path, MappedFile* out, bool in_memory = false);

// Reads the whole file into *out (a new LargeBuffer of its size). False as read_file, or when the
// file is empty or the buffer cannot be mapped.
bool read_file_large(const char* path, LargeBuffer* out);

// The value of `key` in a loaded .ein image's metadata ("key=value" lines, docs/format.md), "" when
// absent. The image must have passed load_model (its metadata region lies inside it).
std::string ein_metadata_value(const void* image, size_t size, const std::string& key);

}  // namespace einfer::tools
