// Measuring helpers shared by the benchmark tools: the thread CPU clock and the plain streaming
// read every bandwidth figure is compared against.
#pragma once

#include <cstddef>
#include <cstdint>

namespace einfer::tools {

// Thread CPU time in ns: the board may be shared, and time spent descheduled is not ours.
uint64_t thread_ns();

// Sums `bytes` bytes (multiple of 4; any alignment) with wide integer loads into independent
// accumulators: the fastest plain read of the buffer. Returns a checksum so it is not elided.
uint32_t stream_read(const void* p, size_t bytes);

}  // namespace einfer::tools
