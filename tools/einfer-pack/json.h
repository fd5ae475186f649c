// A small JSON reader for config.json and safetensors headers (host only; throws PackError).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace einfer::pack {

struct Json {
  enum class Type { null, boolean, number, string, array, object } type = Type::null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Json> items;              // array
  std::map<std::string, Json> members;  // object

  const Json* find(const std::string& key) const {
    auto it = members.find(key);
    return it == members.end() ? nullptr : &it->second;
  }
  bool is_number() const { return type == Type::number; }
};

// Strict RFC 8259 (no nan, inf, hex, duplicate keys); throws PackError naming `what`.
Json parse_json(const std::string& text, const std::string& what);

// Untrusted numbers to integers, checked before any cast (casting an out-of-range double is
// undefined behaviour). Each throws PackError naming `what` and the accepted range.
//   json_to_int: a JSON number with no fraction, in [lo, hi].
//   parse_decimal: a whole string of decimal digits (optional '-'), in [lo, hi].
//   parse_finite_float: a whole string that strtof reads as a finite float.
int64_t json_to_int(const Json& v, const std::string& what, int64_t lo, int64_t hi);
int64_t parse_decimal(const std::string& text, const std::string& what, int64_t lo, int64_t hi);
float parse_finite_float(const std::string& text, const std::string& what);

}  // namespace einfer::pack
