// Command-line numbers for the host tools: the whole argument must be a number within the option's
// bounds, or the caller gets one message naming the option and the accepted range (never a
// std::stoi/stof exception text, never a silently wrapped or truncated value).
#pragma once

#include <cstdint>
#include <string>

namespace einfer::tools {

// Decimal integer in [lo, hi]. On failure returns false and sets *error to e.g.
// "--context: expected an integer in 0..16777216, got '4294967296'".
bool parse_int_option(const char* option, const char* text, int64_t lo, int64_t hi, int64_t* out,
                      std::string* error);

// Finite float in [lo, hi] (and, when lo_open, strictly above lo). On failure returns false with
// e.g. "--top-p: expected a number in (0, 1], got 'nan'".
bool parse_float_option(const char* option, const char* text, double lo, double hi, bool lo_open,
                        float* out, std::string* error);

}  // namespace einfer::tools
