// einfer_alloc_tests entry point: doctest suites in tests/alloc/alloc_*.cpp, one TEST_CASE per
// library area, each running real work under a HeapWatch (heap_counter.h) and requiring zero heap
// allocations. A self-check first proves the interposer sees allocations at all.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "tests/alloc/heap_counter.h"

TEST_CASE("heap counter: sees malloc, operator new and free (the check can fail)") {
  HeapWatch watch;
  void* volatile p = std::malloc(24);
  std::free(p);
  auto q = std::make_unique<int[]>(16);
  q.reset();
  const size_t allocations = watch.allocations();
  const size_t frees = watch.frees();
  CHECK(allocations == 2);
  CHECK(frees == 2);
}

int main(int argc, char** argv) {
  std::printf("einfer_alloc_tests: library work must not allocate\n");
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
