#include "tools/common/cli_number.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace einfer::tools {

bool parse_int_option(const char* option, const char* text, int64_t lo, int64_t hi, int64_t* out,
                      std::string* error) {
  char* end = nullptr;
  errno = 0;
  const long long v = text && *text ? std::strtoll(text, &end, 10) : 0;
  // strtoll skips leading space and takes a sign; only digits with an optional '-' are accepted.
  const bool shape_ok = text && *text && (text[0] == '-' || (text[0] >= '0' && text[0] <= '9'));
  if (!shape_ok || end == nullptr || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    *error = std::string(option) + ": expected an integer in " + std::to_string(lo) + ".." +
             std::to_string(hi) + ", got '" + (text ? text : "") + "'";
    return false;
  }
  *out = v;
  return true;
}

bool parse_float_option(const char* option, const char* text, double lo, double hi, bool lo_open,
                        float* out, std::string* error) {
  char* end = nullptr;
  errno = 0;
  const float v = text && *text ? std::strtof(text, &end) : 0.f;
  const bool shape_ok =
      text && *text && (text[0] == '-' || text[0] == '.' || (text[0] >= '0' && text[0] <= '9'));
  if (!shape_ok || end == nullptr || *end != '\0' || errno == ERANGE || !std::isfinite(v) ||
      v < lo || v > hi || (lo_open && v == lo)) {
    char range[96];
    std::snprintf(range, sizeof range, "%s%g, %g]", lo_open ? "(" : "[", lo, hi);
    *error = std::string(option) + ": expected a number in " + range + ", got '" +
             (text ? text : "") + "'";
    return false;
  }
  *out = v;
  return true;
}

}  // namespace einfer::tools
