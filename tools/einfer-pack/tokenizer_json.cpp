// Typed access to a parsed tokenizer.json (tools/einfer-pack/tokenizer_json.h).
#include <cstdio>

#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/tokenizer_json.h"

namespace einfer::pack::tokjson {

static const char* type_name(Json::Type t) {
  switch (t) {
    case Json::Type::null:
      return "null";
    case Json::Type::boolean:
      return "a boolean";
    case Json::Type::number:
      return "a number";
    case Json::Type::string:
      return "a string";
    case Json::Type::array:
      return "an array";
    case Json::Type::object:
      return "an object";
  }
  return "?";
}

void expect_type(const Json& v, Json::Type t, const std::string& what) {
  if (v.type != t)
    throw ShapeError{what + " must be " + type_name(t) + ", is " + type_name(v.type)};
}

// obj[key] or null when absent; obj must be an object.
const Json* find_in(const Json& obj, const std::string& key) {
  expect_type(obj, Json::Type::object, "the holder of \"" + key + "\"");
  return obj.find(key);
}
// obj[key], a null value when absent.
const Json& member(const Json& obj, const std::string& key) {
  const Json* v = find_in(obj, key);
  return v ? *v : kNull;
}
// obj[key], which must be present.
const Json& at(const Json& obj, const std::string& key) {
  const Json* v = find_in(obj, key);
  if (!v) throw ShapeError{"key \"" + key + "\" is missing"};
  return *v;
}
bool contains(const Json& obj, const std::string& key) {
  return obj.type == Json::Type::object && obj.find(key) != nullptr;
}
// nlohmann-style value(): the default when absent, the value when of the right type, else an error.
std::string str_or(const Json& obj, const std::string& key, const std::string& def) {
  const Json* v = find_in(obj, key);
  if (!v) return def;
  expect_type(*v, Json::Type::string, "\"" + key + "\"");
  return v->str;
}
bool bool_or(const Json& obj, const std::string& key, bool def) {
  const Json* v = find_in(obj, key);
  if (!v) return def;
  expect_type(*v, Json::Type::boolean, "\"" + key + "\"");
  return v->b;
}
const std::string& str(const Json& v, const std::string& what) {
  expect_type(v, Json::Type::string, what);
  return v.str;
}
const std::vector<Json>& items(const Json& v, const std::string& what) {
  expect_type(v, Json::Type::array, what);
  return v.items;
}

// A JSON string literal (quotes, backslashes and control characters escaped).
static void dump_string(const std::string& text, std::string* out) {
  *out += '"';
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      *out += buf;
    } else {
      *out += c;
    }
  }
  *out += '"';
}

// Compact JSON text of a value, for messages.
static void dump_to(const Json& v, std::string* out) {
  switch (v.type) {
    case Json::Type::null:
      *out += "null";
      break;
    case Json::Type::boolean:
      *out += v.b ? "true" : "false";
      break;
    case Json::Type::number: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v.num);
      *out += buf;
      break;
    }
    case Json::Type::string:
      dump_string(v.str, out);
      break;
    case Json::Type::array: {
      *out += '[';
      const char* sep = "";
      for (const Json& e : v.items) *out += sep, dump_to(e, out), sep = ",";
      *out += ']';
      break;
    }
    case Json::Type::object: {
      *out += '{';
      const char* sep = "";
      for (const auto& [k, e] : v.members) {
        *out += sep;
        dump_string(k, out);
        *out += ':';
        dump_to(e, out);
        sep = ",";
      }
      *out += '}';
      break;
    }
  }
}
std::string dump(const Json& v) {
  std::string out;
  dump_to(v, &out);
  return out;
}

[[noreturn]] void unsupported(const std::string& what, const Json& j) {
  std::string text = dump(j);
  if (text.size() > 200) text = text.substr(0, 200) + "...";
  throw PackError("tokenizer.json: unsupported " + what + ": " + text);
}

const Json kNull;
const Json kEmptyArray = [] {
  Json a;
  a.type = Json::Type::array;
  return a;
}();

}  // namespace einfer::pack::tokjson
