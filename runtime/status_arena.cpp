// Status formatting and the arena: the vocabulary every layer above the kernels uses.
#include <cstdio>

#include "runtime/arena.h"
#include "runtime/status.h"

namespace einfer {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::ok:
      return "ok";
    case StatusCode::invalid_argument:
      return "invalid_argument";
    case StatusCode::shape_mismatch:
      return "shape_mismatch";
    case StatusCode::out_of_memory:
      return "out_of_memory";
    case StatusCode::bad_format:
      return "bad_format";
    case StatusCode::unsupported:
      return "unsupported";
    case StatusCode::out_of_range:
      return "out_of_range";
    case StatusCode::io_error:
      return "io_error";
  }
  return "unknown";
}

size_t format_status(const Status& s, char* buf, size_t n) {
  if (n == 0) return 0;
  int w = 0;
  if (s.need >= 0 && s.have >= 0) {
    w = std::snprintf(buf, n, "%s (need %lld, have %lld)", s.message,
                      static_cast<long long>(s.need), static_cast<long long>(s.have));
  } else if (s.need >= 0) {
    w = std::snprintf(buf, n, "%s (%lld)", s.message, static_cast<long long>(s.need));
  } else {
    w = std::snprintf(buf, n, "%s", s.message);
  }
  if (w >= 0 && static_cast<size_t>(w) < n && s.index >= 0) {
    w += std::snprintf(buf + w, n - static_cast<size_t>(w), " at index %d",
                       static_cast<int>(s.index));
  }
  if (w < 0) return 0;
  return static_cast<size_t>(w) < n ? static_cast<size_t>(w) : n - 1;
}

Arena::Arena(void* buffer, size_t capacity)
    : base_(static_cast<unsigned char*>(buffer)), capacity_(buffer ? capacity : 0) {}

Status Arena::allocate(CheckedSize checked_bytes, size_t alignment, void** out) {
  *out = nullptr;
  if (!checked_bytes.valid()) {
    return make_status(StatusCode::out_of_memory,
                       "arena allocation size overflows this target's size_t (input too large)");
  }
  const size_t bytes = checked_bytes.value();
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return make_status(StatusCode::invalid_argument, "arena alignment must be a power of two",
                       static_cast<int64_t>(alignment));
  }
  // Align the absolute address for a real arena, the offset for a measuring one (callers size
  // real arenas with kDefaultAlignment-aligned buffers, so both agree).
  const uintptr_t origin = reinterpret_cast<uintptr_t>(base_);
  const uintptr_t start = ((origin + used_ + alignment - 1) & ~(uintptr_t(alignment) - 1)) - origin;
  if (start < used_ || start + bytes < start) {
    return make_status(StatusCode::out_of_memory, "arena allocation overflows");
  }
  const size_t end = static_cast<size_t>(start) + bytes;
  if (!is_measuring() && end > capacity_) {
    return make_status(StatusCode::out_of_memory, "arena too small: bytes",
                       static_cast<int64_t>(end), static_cast<int64_t>(capacity_));
  }
  used_ = end;
  if (used_ > high_water_) high_water_ = used_;
  if (!is_measuring()) *out = base_ + start;
  return ok_status();
}

}  // namespace einfer
