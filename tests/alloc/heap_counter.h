// Heap watch for einfer_alloc_tests: heap_counter.c replaces glibc's malloc family (operator
// new/delete reach it through libstdc++), counting calls while a HeapWatch is alive.
//
//   HeapWatch watch;            // start counting
//   ...library work...
//   CHECK(watch.allocations() == 0);
//
// Set up inputs (std::vector etc.) before the watch starts; doctest's own CHECKs allocate, so
// read the count into a local before asserting when more work follows.
#pragma once

#include <cstddef>

extern "C" {
void einfer_heap_count_start(void);
void einfer_heap_count_stop(void);
size_t einfer_heap_allocations(void);  // malloc/calloc/realloc/memalign calls while counting
size_t einfer_heap_frees(void);
}

struct HeapWatch {
  HeapWatch() { einfer_heap_count_start(); }
  ~HeapWatch() { einfer_heap_count_stop(); }
  HeapWatch(const HeapWatch&) = delete;
  HeapWatch& operator=(const HeapWatch&) = delete;
  // Stops counting and returns what was counted.
  size_t allocations() {
    einfer_heap_count_stop();
    return einfer_heap_allocations();
  }
  size_t frees() {
    einfer_heap_count_stop();
    return einfer_heap_frees();
  }
};
