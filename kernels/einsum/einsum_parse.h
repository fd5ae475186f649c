// Einsum spec parsing (constexpr): the first of the three einsum stages (parse -> plan ->
// execute, see einsum.h). Parsing needs no shapes, so einsum<"...">() checks a spec at compile
// time.
#pragma once

#include <cstdint>
#include <type_traits>  // std::is_constant_evaluated

#include "runtime/status.h"
#include "runtime/tensor.h"

namespace einfer {

// Spec parsing (constexpr).

inline constexpr int kEinsumMaxInputs = 2;

// One operand or the output: its labels in order; the ellipsis (if any) sits before
// labels[ellipsis].
struct EinsumTerm {
  int32_t n = 0;               // named labels
  char labels[kMaxRank] = {};  // 'a'..'z', 'A'..'Z'
  int32_t ellipsis = -1;       // insertion position of "...", -1: none
};

struct EinsumSpec {
  int32_t n_inputs = 0;
  EinsumTerm in[kEinsumMaxInputs] = {};
  EinsumTerm out = {};
  bool explicit_output = false;
  Status status = {};  // ok, or why the spec is invalid (index: character position)
};

namespace einsum_detail {
constexpr bool is_label(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
constexpr Status spec_error(const char* msg, int pos) {
  return make_status(StatusCode::invalid_argument, msg, -1, -1, pos);
}
}  // namespace einsum_detail

// Parses and validates `spec` (syntax, labels, output rules; shapes are checked by the planner).
constexpr Status parse_einsum(const char* spec, EinsumSpec* out) {
  using namespace einsum_detail;
  EinsumSpec s{};
  // (No null test during constant evaluation: GCC's sanitizers reject it there, and a literal is
  // never null.)
  if (!std::is_constant_evaluated() && spec == nullptr) {
    s.status = spec_error("einsum: spec is null", -1);
    *out = s;
    return s.status;
  }
  int term = 0;  // 0, 1: inputs; 2: output
  bool any_ellipsis = false;
  int i = 0;
  auto fail = [&](const char* msg, int pos) {
    s.status = spec_error(msg, pos);
    *out = s;
    return s.status;
  };
  for (; spec[i] != '\0'; ++i) {
    const char c = spec[i];
    EinsumTerm& t = term == 2 ? s.out : s.in[term];
    if (c == ' ') continue;
    if (is_label(c)) {
      if (t.n == kMaxRank) return fail("einsum: too many dimensions in one operand (max 8)", i);
      if (term == 2) {
        for (int j = 0; j < t.n; ++j)
          if (t.labels[j] == c) return fail("einsum: output label repeated", i);
      }
      t.labels[t.n++] = c;
    } else if (c == '.') {
      if (spec[i + 1] != '.' || spec[i + 2] != '.')
        return fail("einsum: '.' must be part of '...'", i);
      if (t.ellipsis >= 0) return fail("einsum: more than one '...' in an operand", i);
      t.ellipsis = t.n;
      if (term < 2) any_ellipsis = true;
      i += 2;
    } else if (c == ',') {
      if (term != 0) {
        return fail(term == 2 ? "einsum: ',' after '->'" : "einsum: more than two operands", i);
      }
      term = 1;
    } else if (c == '-') {
      if (spec[i + 1] != '>') return fail("einsum: '-' must be part of '->'", i);
      if (term == 2) return fail("einsum: more than one '->'", i);
      s.n_inputs = term + 1;
      s.explicit_output = true;
      term = 2;
      ++i;
    } else {
      return fail("einsum: unknown character in spec (allowed: a-z A-Z , -> ... space)", i);
    }
  }
  if (!s.explicit_output) s.n_inputs = term + 1;

  // Label occurrence counts over the inputs (repeats within an operand count).
  int count[128] = {};
  for (int t = 0; t < s.n_inputs; ++t)
    for (int j = 0; j < s.in[t].n; ++j) ++count[static_cast<unsigned char>(s.in[t].labels[j])];

  if (s.explicit_output) {
    for (int j = 0; j < s.out.n; ++j) {
      if (count[static_cast<unsigned char>(s.out.labels[j])] == 0) {
        return fail("einsum: output label does not appear in any input", -1);
      }
    }
    if (s.out.ellipsis >= 0 && !any_ellipsis) {
      return fail("einsum: '...' in the output but in no input", -1);
    }
  } else {
    // Implicit output: "..." first (when an input has one), then single-use labels in ASCII order.
    s.out.ellipsis = any_ellipsis ? 0 : -1;
    for (int c = 0; c < 128; ++c) {
      if (count[c] != 1) continue;
      if (s.out.n == kMaxRank) return fail("einsum: too many dimensions in the output (max 8)", -1);
      s.out.labels[s.out.n++] = static_cast<char>(c);
    }
  }
  s.status = ok_status();
  *out = s;
  return s.status;
}

}  // namespace einfer
