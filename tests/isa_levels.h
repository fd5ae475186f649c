// Test helper: runs a test body once per instruction set selection this CPU runs
// (kernels/isa/isa.h): every level of the build, and each level with each extension it has kernels
// for (x86: "avx2+avx512vnni", "avx2+avxvnni"), so every dispatched path is exercised in one
// process. The selection in force before is restored afterwards.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kernels/isa/isa.h"

namespace einfer_test {

// The selections (names valid for isa_select / EINFER_ISA) this CPU supports, lowest first.
inline std::vector<std::string> isa_selections() {
  std::vector<std::string> names;
  for (int level = 0; level < einfer::isa_level_count(); ++level) {
    if (!einfer::isa_level_supported(level)) continue;
    names.emplace_back(einfer::isa_level_name(level));
    for (int ext = 0; ext < einfer::isa_extension_count(); ++ext)
      if (einfer::isa_extension_supported(level, ext))
        names.push_back(std::string(einfer::isa_level_name(level)) + "+" +
                        einfer::isa_extension_name(ext));
  }
  return names;
}

// Calls body(name) with each selection of isa_selections() in force.
template <class Body>
void for_each_isa(Body&& body) {
  const std::string before = einfer::isa_name();
  for (const std::string& name : isa_selections()) {
    REQUIRE(einfer::isa_select(name.c_str()).ok());
    INFO("ISA " << name);
    body(name);
  }
  REQUIRE(einfer::isa_select(before.c_str()).ok());
}

}  // namespace einfer_test
