// Hostile inputs to the host importers (issue 16): every finding reproduced, each must be refused
// with a PackError naming the problem (never a crash, UB, a foreign exception or a huge
// allocation).
#if EINFER_HAS_PACK_LIB
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "hostile_inputs.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/json.h"
#if EINFER_HAVE_TOOL_COMMON
#include "runtime/run_options.h"
#include "tools/common/cli.h"
#include "tools/common/npy.h"
#endif

using namespace einfer;
using namespace einfer::pack;
using einfer::test::GgufSpec;
using einfer::test::make_gguf;
using einfer::test::make_npy;
using einfer::test::make_safetensors;

namespace {

const std::string kData = std::string(EINFER_TEST_DATA_DIR) + "/format/";

// Runs f and returns the PackError text ("" if it did not throw; other exceptions fail the test).
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const PackError& e) {
    return e.what();
  }
  return "";
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(std::fwrite(b.data(), 1, b.size(), f) == b.size());
  std::fclose(f);
}

std::vector<uint8_t> tokenizer_bin(int32_t max_len, const std::vector<std::string>& pieces) {
  std::vector<uint8_t> b(4);
  std::memcpy(b.data(), &max_len, 4);
  for (const std::string& p : pieces) {
    const float score = 0.f;
    const int32_t len = static_cast<int32_t>(p.size());
    const size_t at = b.size();
    b.resize(at + 8 + p.size());
    std::memcpy(b.data() + at, &score, 4);
    std::memcpy(b.data() + at + 4, &len, 4);
    std::memcpy(b.data() + at + 8, p.data(), p.size());
  }
  return b;
}

}  // namespace

TEST_CASE("hostile JSON: nan, inf, hex, bad escapes, duplicate keys and overflow are refused") {
  CHECK(parse_json("{\"a\": [1, -2.5e3, 0]}", "t").members.at("a").items.size() == 3);
  for (const char* bad : {"nan",         "NaN",         "inf",          "-Infinity",
                          "0x40",        "[0x40]",      "{\"a\": nan}", "1e999",
                          "-1e400",      "01",          "1.",           ".5",
                          "+1",          "-",           "\"\\u00zz\"",  "{\"a\": 1, \"a\": 2}",
                          " 1 2",        "\"\\ud83d\"", "\"\\ude00\"",  "\"\\ud83d\\u0041\"",
                          "\"\\ud83dx\""}) {
    CAPTURE(bad);
    CHECK(refusal([&] { parse_json(bad, "t"); }).find("invalid JSON") != std::string::npos);
  }
}

TEST_CASE("JSON strings: \\u escapes decode to UTF-8, surrogate pairs to one code point") {
  // What Python's json.dumps(ensure_ascii=True) writes for "é€😀".
  CHECK(parse_json("\"\\u00e9\\u20ac\\ud83d\\ude00\"", "t").str ==
        "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
}

TEST_CASE("hostile JSON numbers: integer conversion is checked before the cast") {
  const Json j = parse_json("[1e300, -1, 2.5, 7, 2147483648]", "t");
  CHECK(refusal([&] { json_to_int(j.items[0], "x", 0, INT32_MAX); }).find("x: expected") == 0);
  CHECK(refusal([&] { json_to_int(j.items[1], "x", 0, INT32_MAX); }) != "");
  CHECK(refusal([&] { json_to_int(j.items[2], "x", 0, INT32_MAX); }) != "");
  CHECK(json_to_int(j.items[3], "x", 0, INT32_MAX) == 7);
  CHECK(refusal([&] { json_to_int(j.items[4], "x", 0, INT32_MAX); }) != "");
  CHECK(parse_decimal("123", "n", 0, 1000) == 123);
  for (const char* bad : {"", "-", "12a", "99999999999999999999999", "2147483648", " 1"})
    CHECK(refusal([&] { parse_decimal(bad, "n", 0, INT32_MAX); }).find("n: expected") == 0);
  CHECK(parse_finite_float("1e-5", "e") == doctest::Approx(1e-5f));
  for (const char* bad : {"", "nan", "inf", "1e99", "1x"})
    CHECK(refusal([&] { parse_finite_float(bad, "e"); }).find("e: expected") == 0);
}

TEST_CASE("hostile HF config.json: a wrong-type value is an error, not the default") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "einfer_hostile_hf";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(kData + "hf_llama"))
    fs::copy_file(e.path(), dir / e.path().filename());
  const std::vector<uint8_t> good = read_file((dir / "config.json").string());
  const std::string text(good.begin(), good.end());
  CHECK(import_hf_llama(dir.string()).config.n_layers > 0);
  struct Case {
    const char* key;
    const char* value;
  } cases[] = {{"\"rms_norm_eps\"", "\"1e-6\""},     {"\"rope_theta\"", "true"},
               {"\"num_key_value_heads\"", "\"2\""}, {"\"hidden_size\"", "1e300"},
               {"\"num_hidden_layers\"", "2.5"},     {"\"tie_word_embeddings\"", "0"}};
  for (const Case& c : cases) {
    CAPTURE(c.key);
    // Replace the key's value (or add the key) with the hostile one.
    std::string t = text;
    const size_t k = t.find(c.key);
    if (k == std::string::npos) {
      t.insert(t.find('{') + 1, std::string(c.key) + ": " + c.value + ", ");
    } else {
      const size_t v0 = t.find(':', k) + 1;
      const size_t v1 = t.find_first_of(",}", v0);
      t.replace(v0, v1 - v0, std::string(" ") + c.value);
    }
    write_bytes((dir / "config.json").string(), std::vector<uint8_t>(t.begin(), t.end()));
    CHECK(refusal([&] { import_hf_llama(dir.string()); }).find("config.json") == 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("hostile safetensors: layer indices, shapes and offsets are checked") {
  TorchEncoderOptions o;
  o.heads = 2;
  // stoi(...) + 1 overflowed (and stoi threw std::out_of_range for longer digit runs).
  for (const char* idx : {"2147483647", "99999999999999999999"}) {
    const std::string h = std::string("{\"layers.") + idx +
                          ".self_attn.in_proj_weight\":{\"dtype\":\"F32\",\"shape\":[12,4],"
                          "\"data_offsets\":[0,192]}}";
    CHECK(refusal([&] { import_torch_encoder(make_safetensors(h, 192), o); }).find("layer index") !=
          std::string::npos);
  }
  // A shape whose product wraps 64 bits.
  const std::string wrap =
      "{\"self_attn.in_proj_weight\":{\"dtype\":\"F32\",\"shape\":[2147483648,2147483648,"
      "2147483648,2147483648],\"data_offsets\":[0,0]}}";
  CHECK(refusal([&] { import_torch_encoder(make_safetensors(wrap, 0), o); }).find("overflow") !=
        std::string::npos);
  // Overlapping data ranges.
  const std::string overlap =
      "{\"self_attn.in_proj_weight\":{\"dtype\":\"F32\",\"shape\":[12,4],\"data_offsets\":[0,192]},"
      "\"linear1.weight\":{\"dtype\":\"F32\",\"shape\":[8,4],\"data_offsets\":[64,192]}}";
  CHECK(refusal([&] { import_torch_encoder(make_safetensors(overlap, 192), o); }).find("overlap") !=
        std::string::npos);
  // Fractional and negative offsets, a non-numeric metadata value.
  const std::string frac =
      "{\"self_attn.in_proj_weight\":{\"dtype\":\"F32\",\"shape\":[12,4],\"data_offsets\":[0.5,"
      "192]}}";
  CHECK(refusal([&] { import_torch_encoder(make_safetensors(frac, 192), o); }) != "");
  const std::string meta =
      "{\"__metadata__\":{\"nhead\":\"2x\"},\"self_attn.in_proj_weight\":{\"dtype\":\"F32\","
      "\"shape\":[12,4],\"data_offsets\":[0,192]},\"linear1.weight\":{\"dtype\":\"F32\","
      "\"shape\":[8,4],\"data_offsets\":[192,320]}}";
  CHECK(refusal([&] {
          import_torch_encoder(make_safetensors(meta, 320), TorchEncoderOptions{});
        }).find("heads") != std::string::npos);
}

TEST_CASE("hostile GGUF: the valid tiny file imports; every inconsistency is refused") {
  const SourceModel ok = import_gguf(make_gguf());
  CHECK(ok.config.dim == 8);
  CHECK(ok.config.n_layers == 1);
  CHECK_NOTHROW(pack_source(ok, DType::f32, 0, nullptr));

  struct Case {
    const char* name;
    GgufSpec spec;
    const char* expect;
  };
  std::vector<Case> cases;
  GgufSpec s;
  s.alignment = 7;
  cases.push_back({"alignment 7", s, "power of two"});
  s = {};
  s.alignment = 0;
  cases.push_back({"alignment 0", s, "power of two"});
  s = {};
  s.alignment_type = 5;
  s.alignment_value_int = -64;
  cases.push_back({"negative alignment", s, "power of two"});
  s = {};
  s.alignment_type = 6;
  cases.push_back({"float alignment", s, "integer"});
  s = {};
  s.dim_type = 6;
  cases.push_back({"float-typed dimension", s, "must be an integer"});
  s = {};
  s.dim_type = 6;
  s.dim_float = 1e30f;  // also a float->int cast that was undefined behaviour
  cases.push_back({"huge float dimension", s, "must be an integer"});
  s = {};
  s.block_count = 3;  // only 2 blocks' tensors are written
  cases.push_back({"block_count above the tensors", s, "missing tensor"});
  s = {};
  s.extra_block = true;
  cases.push_back({"tensors beyond block_count", s, "beyond llama.block_count"});
  s = {};
  s.duplicate_tensor = true;
  cases.push_back({"duplicate tensor name", s, "duplicate tensor"});
  s = {};
  s.relabel_tensor = 2;
  cases.push_back({"tensor relabelled to F16", s, "relabelled"});
  s = {};
  s.overlap_tensor = 3;
  cases.push_back({"overlapping offsets", s, "overlaps"});
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string why = refusal([&] { import_gguf(make_gguf(c.spec)); });
    CHECK_MESSAGE(why.find(c.expect) != std::string::npos, why);
  }
}

TEST_CASE("hostile GGUF: counts and array lengths far beyond the file are refused") {
  std::vector<uint8_t> b = make_gguf();
  std::vector<uint8_t> t = b;
  const uint64_t huge = uint64_t{1} << 62;
  std::memcpy(t.data() + 8, &huge, 8);  // tensor count
  CHECK(refusal([&] { import_gguf(t); }).find("implausible") != std::string::npos);
  t = b;
  std::memcpy(t.data() + 16, &huge, 8);  // kv count
  CHECK(refusal([&] { import_gguf(t); }).find("implausible") != std::string::npos);
}

TEST_CASE("hostile weights: NaN and Inf are refused by tensor name") {
  for (float poison :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    GgufSpec s;
    s.poison = poison;
    const SourceModel m = import_gguf(make_gguf(s));
    const std::string why = refusal([&] { pack_source(m, DType::q8, 32, nullptr); });
    CHECK_MESSAGE(why.find("wq of layer 0") != std::string::npos, why);
    CHECK(why.find("non-finite") != std::string::npos);
  }
  std::vector<uint8_t> v1 = read_file(kData + "llama2c_v1.bin");
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(v1.data() + 256, &inf, 4);  // the first attention norm weight
  const SourceModel m = import_llama2c(v1);
  CHECK(refusal([&] { pack_source(m, DType::f32, 0, nullptr); }).find("attn_norm") !=
        std::string::npos);
}

TEST_CASE("hostile tokenizer.bin for -z: truncation, bad lengths and absurd headers") {
  const std::vector<std::string> pieces = {"a", "bc", "def"};
  const std::vector<uint8_t> good = tokenizer_bin(3, pieces);
  CHECK(read_tokenizer_bytes(good, "tok").pieces.size() == 3);
  // Truncated at every length: refused naming the file, never read past the end.
  CHECK(refusal([&] { read_tokenizer_bytes({}, "tok"); }) == "tok: empty tokenizer file");
  for (size_t n = 1; n < good.size(); ++n) {
    std::vector<uint8_t> t(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    CAPTURE(n);
    CHECK(refusal([&] { read_tokenizer_bytes(t, "tok"); }).find("tok: ") == 0);
  }
  // The llama2.c reader's specific reason (issue 12's content detection finds no kind that fits).
  auto reason = [&](const std::vector<uint8_t>& t) {
    const std::string why = refusal([&] { read_tokenizer_bytes(t, "tok"); });
    const std::string lead = "tok: not a tokenizer einfer knows";
    CHECK_MESSAGE(why.find(lead) == 0, why);
    const size_t at = why.find("as a llama2.c tokenizer.bin: ");
    return at == std::string::npos ? why : why.substr(at + 29);
  };
  auto with_i32 = [&](size_t off, int32_t v) {
    std::vector<uint8_t> t = good;
    std::memcpy(t.data() + off, &v, 4);
    return t;
  };
  CHECK(reason(with_i32(0, INT32_MAX)) == "max_token_length 2147483647 outside 1..1048576");
  CHECK(reason(with_i32(0, -1)) == "max_token_length -1 outside 1..1048576");
  CHECK(reason(with_i32(8, -5)) == "record 0: piece length -5 outside 0..3");
  CHECK(reason(with_i32(8, 1000)) == "record 0: piece length 1000 outside 0..3");
  CHECK(reason({good.begin(), good.end() - 1}) == "record 2: piece runs past the end");
  CHECK(reason({good.begin(), good.end() - 5}) == "record 2: file truncated");
  CHECK(reason(with_i32(4, 0x7fc00000)) == "record 0: score is NaN");
  // More pieces than the model has embedding rows: not this model's tokenizer.
  CHECK(refusal([&] {
          tokenizer_image_for_model(read_tokenizer_bytes(good, "tok"), 2);
        }).find("more than the model's 2 embedding rows") != std::string::npos);
}

#if EINFER_HAVE_TOOL_COMMON
// Option numbers go through the shared parser (tools/common/cli.h): whole, finite, within the
// option's bounds, one message naming the option and the exact limits otherwise.
TEST_CASE("hostile options: whole numbers within the option's bounds, one message otherwise") {
  for (const char* bad : {"4294967296", "-1", "16777217", "100000000"}) {
    int64_t context = -1;
    tools::cli::Parser p("einfer-test", "", "");
    p.option({"-c", "--ctx-size", "--context"}, &context, "N", "").range(0, kMaxRunPositions);
    std::string arg = bad;
    char* argv[] = {const_cast<char*>("einfer-test"), const_cast<char*>("--context"), arg.data()};
    int code = 0;
    CAPTURE(bad);
    CHECK_FALSE(p.parse(3, argv, &code));
    CHECK(code == 2);
    CHECK(p.last_error() ==
          std::string("-c/--ctx-size/--context: '") + bad + "' is out of range [0, 16777216]");
    CHECK(context == -1);
  }
  for (const char* bad : {"", " 5", "+5", "5x", "1e3", "0x10", "99999999999999999999"}) {
    int64_t v = 0;
    std::string err;
    CAPTURE(bad);
    CHECK_FALSE(tools::cli::read_integer_in(bad, 0, 1 << 24, &v, &err));
    CHECK(err == std::string("expects a whole number, got '") + bad + "'");
  }
  int64_t v = 0;
  std::string err;
  CHECK(tools::cli::read_integer_in("4096", 0, 1 << 24, &v, &err));
  CHECK(v == 4096);
  for (const char* bad : {"0", "1.5", "nan", "inf", "-0.1", "", "0.5x", "1e99999", "0x1p-1"}) {
    double top_p = 0.5;
    tools::cli::Parser p("einfer-test", "", "");
    p.option({"--top-p"}, &top_p, "P", "").range(0, 1).exclusive_min();
    std::string arg = bad;
    char* argv[] = {const_cast<char*>("einfer-test"), const_cast<char*>("--top-p"), arg.data()};
    int code = 0;
    CAPTURE(bad);
    CHECK_FALSE(p.parse(3, argv, &code));
    const std::string& why = p.last_error();
    CHECK((why == "--top-p: '" + std::string(bad) + "' is out of range (0, 1]" ||
           why == "--top-p: expects a finite number, got '" + std::string(bad) + "'"));
    CHECK(top_p == 0.5);
  }
  double top_p = 0;
  CHECK(tools::cli::read_number("0.9", &top_p));
  CHECK(top_p == doctest::Approx(0.9));
}

TEST_CASE("hostile npy: the shape is checked against the file before any allocation") {
  const std::string path = (std::filesystem::temp_directory_path() / "einfer_hostile.npy").string();
  auto npy = [&](const std::string& shape, size_t data_bytes) {
    write_bytes(path, make_npy(shape, data_bytes));
  };
  tools::NpyArray a;
  std::string err;
  npy("(2, 3)", 24);
  CHECK(tools::read_npy(path, &a, &err));
  // 2^34 floats (64 GiB) claimed by a 16-byte payload: refused, nothing allocated.
  npy("(17179869184,)", 16);
  CHECK_FALSE(tools::read_npy(path, &a, &err));
  CHECK(err.find("truncated") != std::string::npos);
  // A shape product that wraps 64 bits.
  npy("(1099511627776, 1099511627776, 1099511627776)", 16);
  CHECK_FALSE(tools::read_npy(path, &a, &err));
  CHECK(err.find("overflow") != std::string::npos);
  npy("(2, 3)", 28);
  CHECK_FALSE(tools::read_npy(path, &a, &err));
  std::remove(path.c_str());
}
#endif

#endif  // EINFER_HAS_PACK_LIB
