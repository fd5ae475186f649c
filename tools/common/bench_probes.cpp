#include "tools/common/bench_probes.h"

#include <ctime>

#include "kernels/simd/simd.h"

namespace einfer::tools {

uint64_t thread_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint32_t stream_read(const void* p, size_t bytes) {
  const int32_t* x = static_cast<const int32_t*>(p);
  const size_t n = bytes / 4;
  size_t i = 0;
  uint32_t total = 0;
#if EINFER_HAS_SIMD
  using B = xsimd::batch<int32_t>;
  constexpr size_t N = B::size;
  B a0(0), a1(0), a2(0), a3(0);
  for (; i + 4 * N <= n; i += 4 * N) {
    a0 += B::load_unaligned(x + i);
    a1 += B::load_unaligned(x + i + N);
    a2 += B::load_unaligned(x + i + 2 * N);
    a3 += B::load_unaligned(x + i + 3 * N);
  }
  alignas(64) int32_t lanes[N];
  ((a0 + a1) + (a2 + a3)).store_aligned(lanes);
  for (size_t j = 0; j < N; ++j) total += static_cast<uint32_t>(lanes[j]);
#endif
  for (; i < n; ++i) total += static_cast<uint32_t>(x[i]);
  return total;
}

}  // namespace einfer::tools
