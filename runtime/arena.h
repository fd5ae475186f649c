// Arena: all memory einfer uses at run time comes from one caller-provided buffer.
//
// Bump allocation with alignment, mark/rewind for scratch that lives for one call, and a
// high-water mark so the caller can see what a run really needed. A failed allocation returns
// out_of_memory with the bytes needed and available; nothing is ever taken from the heap.
//
// A *measuring* arena (constructed with a null buffer) hands out null pointers but counts bytes
// exactly as a real one would: running the same allocation sequence on it gives the exact arena
// size a configuration needs, before any memory exists.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/checked.h"
#include "runtime/status.h"

namespace einfer {

inline constexpr size_t kDefaultAlignment = 64;  // a cache line; enough for AVX-512 and NEON

class Arena {
 public:
  Arena() = default;
  // `buffer` may be null: then the arena only measures (capacity is ignored and unlimited).
  Arena(void* buffer, size_t capacity);

  static Arena measuring() { return Arena(nullptr, 0); }

  // Reserves `bytes` aligned to `alignment` (a power of two). On failure *out is null and the
  // status says how many bytes the arena would have needed in total. A size that overflowed while
  // it was computed (CheckedSize invalid) is refused with out_of_memory, also when measuring.
  Status allocate(CheckedSize bytes, size_t alignment, void** out);

  template <typename T>
  Status allocate_array(CheckedSize count, T** out, size_t alignment = kDefaultAlignment) {
    void* p = nullptr;
    Status s = allocate(count * sizeof(T), alignment < alignof(T) ? alignof(T) : alignment, &p);
    *out = static_cast<T*>(p);
    return s;
  }

  // mark()/rewind(): scratch taken after a mark is released by rewinding to it.
  size_t mark() const { return used_; }
  void rewind(size_t mark) {
    if (mark <= used_) used_ = mark;
  }
  void reset() { used_ = 0; }

  bool is_measuring() const { return base_ == nullptr; }
  size_t used() const { return used_; }
  size_t capacity() const { return capacity_; }
  size_t high_water() const { return high_water_; }
  size_t remaining() const { return is_measuring() ? SIZE_MAX : capacity_ - used_; }

 private:
  unsigned char* base_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
  size_t high_water_ = 0;
};

}  // namespace einfer
