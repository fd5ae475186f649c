#include "tools/common/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

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
  if (data) munmap(data, size);
}

bool map_file(const char* path, MappedFile* out) {
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

}  // namespace einfer::tools
