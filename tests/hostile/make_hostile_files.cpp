// Writes the hostile input files the command-line refusal tests (tests/hostile/CMakeLists.txt) feed
// to einfer-pack, einfer-run and einfer-einsum, into the directory given as argv[1]. Each file
// reproduces one finding of issue 16; the good_* files are the valid baselines they derive from.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "hostile_inputs.h"

using einfer::test::GgufSpec;
using einfer::test::make_gguf;
using einfer::test::make_npy;
using einfer::test::make_safetensors;

namespace {

std::string g_dir;

bool put(const std::string& name, const std::vector<uint8_t>& b) {
  const std::string path = g_dir + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (!b.empty() && std::fwrite(b.data(), 1, b.size(), f) != b.size())) {
    std::fprintf(stderr, "make_hostile_files: cannot write %s\n", path.c_str());
    return false;
  }
  std::fclose(f);
  return true;
}

std::vector<uint8_t> i32(std::vector<uint8_t> b, size_t off, int32_t v) {
  std::memcpy(b.data() + off, &v, 4);
  return b;
}

// llama2.c tokenizer.bin with `n` short pieces (the hostile GGUF model has vocab 8).
std::vector<uint8_t> tokenizer(int n) {
  std::vector<uint8_t> b(4);
  const int32_t max_len = 2;
  std::memcpy(b.data(), &max_len, 4);
  for (int i = 0; i < n; ++i) {
    const float score = static_cast<float>(-i);
    const int32_t len = 2;
    const char piece[2] = {static_cast<char>('a' + i), static_cast<char>('a' + i)};
    const size_t at = b.size();
    b.resize(at + 10);
    std::memcpy(b.data() + at, &score, 4);
    std::memcpy(b.data() + at + 4, &len, 4);
    std::memcpy(b.data() + at + 8, piece, 2);
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_hostile_files DIR\n");
    return 2;
  }
  g_dir = argv[1];
  bool ok = put("good.gguf", make_gguf());
  GgufSpec s;
  s.alignment = 7;
  ok = ok && put("align7.gguf", make_gguf(s));
  s = {};
  s.overlap_tensor = 3;
  ok = ok && put("overlap.gguf", make_gguf(s));
  s = {};
  s.dim_type = 6;
  s.dim_float = 1e30f;
  ok = ok && put("float_dim.gguf", make_gguf(s));
  s = {};
  s.block_count = 3;
  ok = ok && put("block_count.gguf", make_gguf(s));
  s = {};
  s.extra_block = true;
  ok = ok && put("extra_block.gguf", make_gguf(s));
  s = {};
  s.duplicate_tensor = true;
  ok = ok && put("duplicate.gguf", make_gguf(s));
  s = {};
  s.relabel_tensor = 2;
  ok = ok && put("relabel.gguf", make_gguf(s));
  s = {};
  s.poison = std::numeric_limits<float>::quiet_NaN();
  ok = ok && put("nan.gguf", make_gguf(s));
  s = {};
  s.poison = std::numeric_limits<float>::infinity();
  ok = ok && put("inf.gguf", make_gguf(s));

  const std::vector<uint8_t> tok = tokenizer(8);
  ok = ok && put("good_tok.bin", tok);
  ok = ok && put("tok_truncated.bin", std::vector<uint8_t>(tok.begin(), tok.end() - 5));
  ok = ok && put("tok_negative.bin", i32(tok, 8, -7));
  ok = ok && put("tok_past_end.bin", i32(i32(tok, 0, 50), 78, 50));
  ok = ok && put("tok_max_len.bin", i32(tok, 0, std::numeric_limits<int32_t>::max()));
  ok = ok && put("tok_empty.bin", {});

  ok = ok &&
       put("st_layer_index.safetensors",
           make_safetensors("{\"layers.2147483647.self_attn.in_proj_weight\":{\"dtype\":\"F32\","
                            "\"shape\":[12,4],\"data_offsets\":[0,192]}}",
                            192));
  ok = ok &&
       put("st_nan_offset.safetensors",
           make_safetensors("{\"self_attn.in_proj_weight\":{\"dtype\":\"F32\",\"shape\":[12,4],"
                            "\"data_offsets\":[0,0x40]}}",
                            192));

  ok = ok && put("good.npy", make_npy("(2, 3)", 24));
  ok = ok && put("vec32k.npy", make_npy("(32768,)", 32768 * 4));
  ok = ok && put("huge.npy", make_npy("(17179869184,)", 16));
  ok = ok && put("wrap.npy", make_npy("(1099511627776, 1099511627776, 1099511627776)", 16));
  return ok ? 0 : 1;
}
