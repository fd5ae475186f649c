// safetensors files (see tools/einfer-pack/safetensors.h).
#include "tools/einfer-pack/safetensors.h"

#include <algorithm>
#include <cstring>

#include "kernels/quant/quant.h"
#include "runtime/checked.h"

namespace einfer::pack {

SafeTensors::SafeTensors(std::vector<uint8_t> b, std::string name)
    : what(std::move(name)), bytes(std::move(b)) {
  if (bytes.size() < 8) throw PackError(what + ": file truncated (no safetensors header)");
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  if (n > bytes.size() - 8) throw PackError(what + ": safetensors header length exceeds the file");
  header = parse_json(std::string(reinterpret_cast<const char*>(bytes.data()) + 8, n), what);
  if (header.type != Json::Type::object)
    throw PackError(what + ": safetensors header is not an object");
  data_start = 8 + n;
  check_layout();
}
void SafeTensors::check_layout() const {
  const uint64_t avail = bytes.size() - data_start;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, t] : header.members) {
    if (name == "__metadata__") continue;
    const Json* off = t.find("data_offsets");
    if (t.type != Json::Type::object || !off || off->items.size() != 2)
      throw PackError(what + ": malformed entry for " + name);
    const int64_t b0 = json_to_int(off->items[0], what + ": data_offsets of " + name, 0,
                                   static_cast<int64_t>(avail));
    const int64_t b1 = json_to_int(off->items[1], what + ": data_offsets of " + name, b0,
                                   static_cast<int64_t>(avail));
    if (b1 > b0) ranges.emplace_back(b0, b1);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      throw PackError(what + ": tensor data ranges overlap (at byte " +
                      std::to_string(ranges[i].first) + " of the data)");
}
std::map<std::string, std::string> SafeTensors::metadata() const {
  std::map<std::string, std::string> m;
  if (const Json* md = header.find("__metadata__"))
    for (const auto& [k, v] : md->members)
      if (v.type == Json::Type::string) m[k] = v.str;
  return m;
}
std::vector<float> SafeTensors::get(const std::string& name, std::vector<int64_t>* shape,
                                    std::string* stored) const {
  const Json* t = header.find(name);
  if (!t) throw PackError(what + ": missing tensor " + name);
  const Json* dt = t->find("dtype");
  const Json* sh = t->find("shape");
  const Json* off = t->find("data_offsets");
  if (!dt || !sh || !off || off->items.size() != 2)
    throw PackError(what + ": malformed entry for " + name);
  shape->clear();
  uint64_t n = 1;
  if (dt->type != Json::Type::string || sh->type != Json::Type::array || sh->items.size() > 8)
    throw PackError(what + ": malformed entry for " + name);
  for (const Json& d : sh->items) {
    const int64_t e = json_to_int(d, what + ": shape of " + name, 0, int64_t{1} << 31);
    shape->push_back(e);
    if (!checked_mul(n, static_cast<uint64_t>(e), &n))
      throw PackError(what + ": shape of " + name + " overflows");
  }
  size_t esize = 0;
  if (dt->str == "F32")
    esize = 4;
  else if (dt->str == "F16" || dt->str == "BF16")
    esize = 2;
  else
    throw PackError(what + ": unsupported dtype " + dt->str + " for " + name);
  if (stored) *stored = dt->str;
  // check_layout() bounded both offsets by the data section.
  const uint64_t b0 = static_cast<uint64_t>(off->items[0].num);
  const uint64_t b1 = static_cast<uint64_t>(off->items[1].num);
  uint64_t want = 0;
  if (!checked_mul(n, uint64_t{esize}, &want) || b1 - b0 != want)
    throw PackError(what + ": data offsets of " + name + " disagree with its shape");
  const uint8_t* p = bytes.data() + data_start + b0;
  std::vector<float> v(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (esize == 4) {
      std::memcpy(&v[i], p + i * 4, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, p + i * 2, 2);
      v[i] = dt->str == "F16" ? f16_to_f32(h) : bf16_to_f32(h);
    }
  }
  return v;
}

void expect_shape(const std::vector<int64_t>& got, std::vector<int64_t> want,
                  const std::string& name) {
  if (got != want) {
    std::string g, w;
    for (int64_t d : got) g += std::to_string(d) + " ";
    for (int64_t d : want) w += std::to_string(d) + " ";
    throw PackError("tensor " + name + " has shape [ " + g + "], expected [ " + w + "]");
  }
}

}  // namespace einfer::pack
