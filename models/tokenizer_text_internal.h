// Private to the text tokenizer (models/tokenizer_text.cpp: tables, set-up, decoding;
// models/tokenizer_encode.cpp: encoding): the hashes its tables are built and searched with.
#pragma once

#include <cstdint>
#include <cstring>

#include "models/tokenizer_text.h"

namespace einfer::text_tokenizer_detail {

constexpr uint32_t kFnvBasis = 2166136261u;
inline uint32_t fnv_step(uint32_t h, unsigned char c) {
  return (h ^ c) * 16777619u;  // FNV-1a
}
inline uint32_t fnv_final(uint32_t h) {
  return h ^ (h >> 15);
}

// Hash of the bytes a[0..na) followed by b[0..nb).
inline uint32_t hash_bytes(const char* a, size_t na, const char* b = nullptr, size_t nb = 0) {
  uint32_t h = kFnvBasis;
  for (size_t i = 0; i < na; ++i) h = fnv_step(h, static_cast<unsigned char>(a[i]));
  for (size_t i = 0; i < nb; ++i) h = fnv_step(h, static_cast<unsigned char>(b[i]));
  return fnv_final(h);
}

// Id of the piece spelled a[0..na) b[0..nb) whose hash_bytes is `hash`, or -1.
inline int32_t find_piece_hashed(const TextTokenizer& t, uint32_t hash, const char* a, size_t na,
                                 const char* b, size_t nb) {
  if (t.piece_slots == nullptr) return -1;
  for (uint32_t slot = hash & t.piece_mask;; slot = (slot + 1) & t.piece_mask) {
    const int32_t id = t.piece_slots[slot];
    if (id < 0) return -1;
    uint32_t l;
    const char* s = packed_piece(t.packed, id, &l);
    if (l == na + nb && std::memcmp(s, a, na) == 0 && (nb == 0 || std::memcmp(s + na, b, nb) == 0))
      return id;
  }
}

inline uint32_t hash_pair(int32_t a, int32_t b) {
  uint64_t x = (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

inline int32_t merge_rank(const TextTokenizer& t, int32_t a, int32_t b, int32_t* result) {
  for (uint32_t slot = hash_pair(a, b) & t.merge_mask;; slot = (slot + 1) & t.merge_mask) {
    const int32_t rank = t.merge_slots[slot];
    if (rank < 0) return -1;
    int32_t l, r;
    packed_merge(t.packed, static_cast<uint32_t>(rank), &l, &r, result);
    if (l == a && r == b) return rank;
  }
}

}  // namespace einfer::text_tokenizer_detail
