#include "tools/common/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "runtime/format.h"

namespace einfer::tools {

bool read_file(const char* path, std::vector<uint8_t>* out) {
  out->clear();
  FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  uint8_t buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) out->insert(out->end(), buf, buf + got);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

MappedFile::~MappedFile() {
  if (data && copy.data() == nullptr) munmap(data, size);
}

bool map_file(const char* path, MappedFile* out, bool in_memory) {
  if (in_memory) {
    if (!read_file_large(path, &out->copy)) return false;
    out->data = out->copy.data();
    out->size = out->copy.size();
    return true;
  }
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0) {
    close(fd);
    return false;
  }
  out->size = static_cast<size_t>(st.st_size);
  out->data = mmap(nullptr, out->size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (out->data == MAP_FAILED) {
    out->data = nullptr;
    out->size = 0;
    return false;
  }
  return true;
}

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
size_t round_up(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}
}  // namespace

bool LargeBuffer::allocate(size_t size) {
  release();
  const size_t body = round_up(size ? size : 1, kHugePage);
  map_size_ = body + kHugePage;  // room to align the start to 2 MiB
  map_ = mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    map_size_ = 0;
    return false;
  }
  data_ = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uintptr_t>(map_), kHugePage));
  size_ = size;
#if defined(MADV_HUGEPAGE)
  madvise(data_, body, MADV_HUGEPAGE);  // a hint: without THP the pages are 4 KiB, nothing else
#endif
  return true;
}

void LargeBuffer::release() {
  if (map_) munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
  data_ = nullptr;
  size_ = 0;
}

bool read_file_large(const char* path, LargeBuffer* out) {
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return false;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  bool ok = out->allocate(size);
  for (size_t done = 0; ok && done < size;) {
    const ssize_t got = read(fd, out->data() + done, size - done);
    if (got <= 0) ok = false;
    done += got > 0 ? static_cast<size_t>(got) : 0;
  }
  close(fd);
  return ok;
}

std::string ein_metadata_value(const void* image, size_t size, const std::string& key) {
  FileHeader h;
  if (size < sizeof h) return "";
  std::memcpy(&h, image, sizeof h);
  if (!(h.flags & kEinFlagMetadata) || h.metadata_offset + h.metadata_bytes > size) return "";
  const std::string text(static_cast<const char*>(image) + h.metadata_offset, h.metadata_bytes);
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, key.size() + 1, key + "=") == 0)
      return text.substr(at + key.size() + 1, end - at - key.size() - 1);
    at = end + 1;
  }
  return "";
}

}  // namespace einfer::tools
