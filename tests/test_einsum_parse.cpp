// Einsum spec parser: syntax, implicit output, compile-time parsing, each malformed spec's message.
#include <doctest/doctest.h>

#include <cstring>

#include "kernels/einsum/einsum.h"

using namespace einfer;

static_assert(einsum_spec<"bnd,dhk->bhnk">.n_inputs == 2);
static_assert(einsum_spec<"bnd,dhk->bhnk">.out.n == 4);
static_assert(einsum_spec<"ij,jk">.out.labels[0] == 'i' &&
              einsum_spec<"ij,jk">.out.labels[1] == 'k');
static_assert(einsum_spec<"...ij, ...jk -> ...ik">.out.ellipsis == 0);
static_assert(einsum_spec<"ii">.out.n == 0);

namespace {
Status parse(const char* s, EinsumSpec* spec) {
  return parse_einsum(s, spec);
}
}  // namespace

TEST_CASE("einsum parse: terms, spaces, implicit output in ASCII order") {
  EinsumSpec s;
  REQUIRE(parse(" b n d , d h k -> b h n k ", &s).ok());
  CHECK(s.n_inputs == 2);
  CHECK(s.explicit_output);
  CHECK(std::strncmp(s.in[0].labels, "bnd", 3) == 0);
  CHECK(std::strncmp(s.out.labels, "bhnk", 4) == 0);
  REQUIRE(parse("bA", &s).ok());
  CHECK(s.n_inputs == 1);
  REQUIRE(s.out.n == 2);
  CHECK(s.out.labels[0] == 'A');  // numpy: uppercase sorts first
  CHECK(s.out.labels[1] == 'b');
  REQUIRE(parse("a...b,b...->...", &s).ok());
  CHECK(s.in[0].ellipsis == 1);
  CHECK(s.in[1].ellipsis == 1);
  CHECK(s.out.n == 0);
  CHECK(s.out.ellipsis == 0);
  REQUIRE(parse("ij,jk", &s).ok());
  CHECK(!s.explicit_output);
  CHECK(s.out.n == 2);
  REQUIRE(parse("i->", &s).ok());
  CHECK(s.out.n == 0);
}

TEST_CASE("einsum parse: malformed specs give their message and position") {
  struct Case {
    const char* spec;
    const char* message_part;
  };
  const Case cases[] = {
      {"ij,jk,kl->il", "more than two operands"},
      {"i1->i", "unknown character"},
      {"ij->ik", "output label does not appear"},
      {"ij->ii", "output label repeated"},
      {"i.j", "'.' must be part of '...'"},
      {"...i...->i", "more than one '...'"},
      {"ij-k", "'-' must be part of '->'"},
      {"ij->i->j", "more than one '->'"},
      {"ij->i,j", "',' after '->'"},
      {"abcdefghi->a", "too many dimensions"},
      {"i->...", "'...' in the output but in no input"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.spec);
    EinsumSpec s;
    const Status st = parse(c.spec, &s);
    CHECK(st.code == StatusCode::invalid_argument);
    CHECK(std::strstr(st.message, c.message_part) != nullptr);
    CHECK(s.status.code == st.code);
  }
  EinsumSpec s;
  CHECK(parse("ij#", &s).index == 2);
}
