// Counting malloc interposer for einfer_alloc_tests (glibc only). Defining the malloc family in
// the executable overrides glibc's for the whole process, including libstdc++'s operator new;
// each call forwards to glibc's exported __libc_* implementation and, while counting is on,
// increments a counter. Not combinable with sanitizers, which interpose the same functions.
#include <errno.h>
#include <stddef.h>
#include <string.h>

extern void* __libc_malloc(size_t n);
extern void* __libc_calloc(size_t count, size_t n);
extern void* __libc_realloc(void* p, size_t n);
extern void* __libc_memalign(size_t alignment, size_t n);
extern void __libc_free(void* p);

static volatile int counting;
static volatile size_t allocations;
static volatile size_t frees;

void einfer_heap_count_start(void) {
  allocations = 0;
  frees = 0;
  counting = 1;
}
void einfer_heap_count_stop(void) {
  counting = 0;
}
size_t einfer_heap_allocations(void) {
  return allocations;
}
size_t einfer_heap_frees(void) {
  return frees;
}

static void count_allocation(void) {
  if (counting) allocations = allocations + 1;
}

void* malloc(size_t n) {
  count_allocation();
  return __libc_malloc(n);
}
void* calloc(size_t count, size_t n) {
  count_allocation();
  return __libc_calloc(count, n);
}
void* realloc(void* p, size_t n) {
  count_allocation();
  return __libc_realloc(p, n);
}
void free(void* p) {
  if (counting && p) frees = frees + 1;
  __libc_free(p);
}
void* memalign(size_t alignment, size_t n) {
  count_allocation();
  return __libc_memalign(alignment, n);
}
void* aligned_alloc(size_t alignment, size_t n) {
  count_allocation();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) {
  count_allocation();
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
