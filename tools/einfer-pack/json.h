// A small JSON reader for config.json and safetensors headers (host only; throws PackError).
#pragma once

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

Json parse_json(const std::string& text, const std::string& what);

}  // namespace einfer::pack
