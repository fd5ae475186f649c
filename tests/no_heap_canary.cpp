// Deliberately breaks the no-heap rule: ctest builds this into a throwaway library and checks
// that check_no_heap.cmake rejects it (the check must be able to fail). Never linked anywhere.
#include <cstdlib>
#include <new>

int* einfer_no_heap_canary_new() {
  return new int(7);
}
void einfer_no_heap_canary_delete(int* p) {
  delete p;
}
void* einfer_no_heap_canary_malloc(std::size_t n) {
  return std::malloc(n);
}
void einfer_no_heap_canary_free(void* p) {
  std::free(p);
}
