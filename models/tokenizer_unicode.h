// Sorted code point ranges, the shape of the generated Unicode tables
// (tools/scripts/gen_unicode_tables.py), and their lookup.
#pragma once

#include <cstddef>
#include <cstdint>

namespace einfer {

struct UnicodeRange {
  uint32_t first, last;
};

// Whether cp lies in one of the sorted, disjoint ranges r[0..n).
inline bool in_ranges(const UnicodeRange* r, size_t n, uint32_t cp) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (r[mid].last < cp)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && r[lo].first <= cp;
}

template <size_t N>
bool in_ranges(const UnicodeRange (&r)[N], uint32_t cp) {
  return in_ranges(r, N, cp);
}

}  // namespace einfer
