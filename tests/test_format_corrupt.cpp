// Corrupt-input table for the loader: truncations, extreme header/arch/record values, overlapping,
// outside and misaligned regions, CRC mismatches, shapes disagreeing with the architecture. Each
// must give a bad_format/unsupported error naming the problem, never a crash (run under
// ASan/UBSan in the sanitizer build).
#if EINFER_HAS_PACK_LIB
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "format_fixtures.h"
#include "runtime/format.h"

using namespace einfer;
using namespace einfer::test;

namespace {

std::string message_of(const std::vector<uint8_t>& b, bool verify_crc = true) {
  Model m;
  const Status s = load_bytes(b, &m, verify_crc);
  if (s.ok()) return "ok";
  CHECK(s.message != nullptr);
  CHECK(std::strlen(s.message) > 0);
  CHECK((s.code == StatusCode::bad_format || s.code == StatusCode::unsupported));
  return s.message;
}

constexpr size_t kArch = 128;
constexpr size_t kRec = kArch + sizeof(ArchBlock);  // first tensor record (320 in version 4)

struct Corruption {
  const char* what;
  size_t offset;  // byte offset of the field
  int width;      // 4 or 8
  uint64_t value;
  const char* expect;  // substring of the error message
};

template <typename T>
uint64_t bits(T v) {
  uint64_t out = 0;
  std::memcpy(&out, &v, sizeof(T));
  return out;
}

}  // namespace

TEST_CASE("format corrupt: truncation at every length is reported, never read past") {
  const std::vector<uint8_t> full = synthetic_bytes(tiny_llama_config(DType::q8, 8), true);
  for (size_t n = 0; n < full.size(); ++n) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    const std::string msg = message_of(cut);
    if (msg.find("truncated") == std::string::npos) {
      FAIL_CHECK("length " << n << ": " << msg);
      break;
    }
  }
  CHECK(message_of(full) == "ok");
}

TEST_CASE("format corrupt: targeted table, each error names the problem") {
  const std::vector<uint8_t> good = synthetic_bytes(tiny_llama_config(DType::q8, 8), true);
  const uint32_t header_size = get_field<uint32_t>(good, 8);
  const uint64_t rec1_data = get_field<uint64_t>(good, kRec + 80 + 40);
  const Corruption table[] = {
      {"magic", 0, 4, 0x12345678, "magic"},
      {"version 0", 4, 4, 0, "version"},
      {"version 1 (llama2.c tokenizer.bin region)", 4, 4, 1, "version"},
      {"version max", 4, 4, 0xFFFFFFFF, "version"},
      {"header_size 0", 8, 4, 0, "header_size"},
      {"header_size odd", 8, 4, header_size + 1, "header_size"},
      {"header_size max", 8, 4, 0xFFFFFFFF, "header_size"},
      {"flags", 12, 4, 0x80000000, "flags"},
      {"file_size +1", 16, 8, good.size() + 1, "truncated"},
      {"file_size max", 16, 8, ~uint64_t{0}, "truncated"},
      {"file_size 0", 16, 8, 0, "header_size"},
      {"file_size -1", 16, 8, good.size() - 1, "metadata extends outside"},
      {"arch_offset 0", 32, 4, 0, "arch block"},
      {"arch_offset max", 32, 4, 0xFFFFFFFF, "arch block"},
      {"arch_size", 36, 4, 64, "arch block size"},
      {"table_offset 0", 40, 4, 0, "tensor table"},
      {"table_offset max", 40, 4, 0xFFFFFFFF, "tensor table"},
      {"tensor_count 0", 44, 4, 0, "tensor count"},
      {"tensor_count +1", 44, 4, get_field<uint32_t>(good, 44) + 1, "tensor"},
      {"tensor_count max", 44, 4, 0xFFFFFFFF, "tensor table"},
      {"record size", 48, 4, 72, "record size"},
      {"reserved0", 52, 4, 1, "reserved"},
      {"tokenizer_offset 0", 56, 8, 0, "tokenizer overlaps"},
      {"tokenizer_offset max", 56, 8, ~uint64_t{0} << 6, "tokenizer does not start"},
      {"tokenizer_offset odd", 56, 8, 3, "tokenizer offset not 64-byte aligned"},
      {"tokenizer_bytes max", 64, 8, ~uint64_t{0}, "tokenizer extends outside"},
      {"tokenizer_bytes 0", 64, 8, 0, "tokenizer section is empty"},
      {"metadata_bytes 0", 80, 8, 0, "metadata section is empty"},
      {"metadata_bytes 1", 80, 8, 1, "file_size disagrees"},
      {"reserved tail", 120, 8, 1, "reserved"},
      {"arch kind", kArch + 0, 4, 9, "architecture kind"},
      {"dim 0", kArch + 4, 4, 0, "dim"},
      {"dim max", kArch + 4, 4, 0x7FFFFFFF, "dim"},
      {"dim negative", kArch + 4, 4, 0x80000000, "dim"},
      {"dim 17", kArch + 4, 4, 17, "shape disagrees"},
      {"hidden_dim max", kArch + 8, 4, 0xFFFFFFFF, "hidden_dim"},
      {"n_layers 0", kArch + 12, 4, 0, "n_layers"},
      {"n_layers 3", kArch + 12, 4, 3, "tensor count"},
      {"n_layers max", kArch + 12, 4, 0x7FFFFFFF, "n_layers"},
      {"n_heads 0", kArch + 16, 4, 0, "n_heads"},
      {"n_heads max", kArch + 16, 4, 0x7FFFFFFF, "n_heads"},
      {"n_kv_heads 3", kArch + 20, 4, 3, "multiple of n_kv_heads"},
      {"n_kv_heads 0", kArch + 20, 4, 0, "n_kv_heads"},
      {"head_dim max", kArch + 24, 4, 0x7FFFFFFF, "head_dim"},
      {"head_dim odd", kArch + 24, 4, 3, "even head_dim"},
      {"vocab 0", kArch + 28, 4, 0, "vocabulary"},
      {"vocab 25", kArch + 28, 4, 25, "shape disagrees"},
      {"context negative", kArch + 32, 4, 0xFFFFFFFF, "context_length"},
      {"norm kind", kArch + 36, 4, 7, "norm kind"},
      {"eps NaN", kArch + 40, 4, bits(std::numeric_limits<float>::quiet_NaN()), "epsilon"},
      {"eps inf", kArch + 40, 4, bits(INFINITY), "epsilon"},
      {"eps negative", kArch + 40, 4, bits(-1.f), "epsilon"},
      {"eps 0", kArch + 40, 4, 0, "epsilon"},
      {"activation", kArch + 44, 4, 99, "activation"},
      {"rope mode", kArch + 48, 4, 5, "RoPE mode"},
      {"rope theta NaN", kArch + 52, 4, bits(std::numeric_limits<float>::quiet_NaN()), "theta"},
      {"rope theta -inf", kArch + 52, 4, bits(-INFINITY), "theta"},
      {"arch flags", kArch + 56, 4, 0x400, "architecture flags"},
      {"normalize flag on a llama", kArch + 56, 4, kArchNormalize, "bert options"},
      {"q/k norm flag without its tensors", kArch + 56, 4, kArchQkNorm, "tensor count"},
      {"weight dtype unknown", kArch + 60, 4, 77, "weight dtype"},
      {"weight dtype f32", kArch + 60, 4, 0, "group size set"},
      {"group 0", kArch + 64, 4, 0, "group size out of range"},
      {"group max", kArch + 64, 4, 0x7FFFFFFF, "group size out of range"},
      {"group 4", kArch + 64, 4, 4, "group size disagrees"},
      {"window first layer without a window", kArch + 124, 4, 1, "window first layer"},
      {"decoder layers in a llama", kArch + 120, 4, 1,
       "only transformer models have decoder layers"},
      {"version 5", 4, 4, 5, "version"},
      {"family unknown", kArch + 128, 4, 99, "unknown model family"},
      {"embed scale NaN", kArch + 132, 4, bits(std::numeric_limits<float>::quiet_NaN()),
       "embedding scale"},
      {"embed scale negative", kArch + 132, 4, bits(-2.f), "embedding scale"},
      {"embed scale -0", kArch + 132, 4, bits(-0.f), "embedding scale"},
      {"attention scale inf", kArch + 136, 4, bits(INFINITY), "attention scale"},
      {"attention scale negative", kArch + 136, 4, bits(-1.f), "attention scale"},
      {"attention softcap negative", kArch + 140, 4, bits(-50.f), "soft-capping"},
      {"final softcap NaN", kArch + 144, 4, bits(std::numeric_limits<float>::quiet_NaN()),
       "soft-capping"},
      {"window period without a window", kArch + 148, 4, 2, "sliding window period"},
      {"local rope theta without a window", kArch + 152, 4, bits(10000.f), "local RoPE theta"},
      {"rope attention factor without longrope", kArch + 156, 4, bits(1.2f), "without longrope"},
      {"rope scaling longrope without factors", kArch + 96, 4, 3, "longrope RoPE scaling"},
      {"pooling on a llama", kArch + 160, 4, 1, "bert options"},
      {"token types on a llama", kArch + 164, 4, 2, "bert options"},
      {"v4 reserved", kArch + 168, 4, 1, "reserved arch bytes"},
      {"v4 reserved tail", kArch + 188, 4, 1, "reserved arch bytes"},
      {"rope scaling unknown", kArch + 96, 4, 7, "unknown RoPE scaling"},
      {"rope scaling linear without factor", kArch + 96, 4, 1, "factor must be > 0"},
      {"rope scaling llama3 without factors", kArch + 96, 4, 2, "llama3 RoPE scaling"},
      {"rope factor without scaling", kArch + 100, 4, bits(2.f), "without a scaling type"},
      {"rope original context without scaling", kArch + 112, 4, 8, "without a scaling type"},
      {"sliding window negative", kArch + 116, 4, 0x80000000u, "sliding_window"},
      {"record role", kRec + 0, 4, 3, "canonical order"},
      {"record role max", kRec + 0, 4, 0xFFFFFFFF, "canonical order"},
      {"record layer", kRec + 4, 4, 0, "layer"},
      {"record dtype unknown", kRec + 8, 4, 99, "unknown tensor dtype"},
      {"record dtype f32", kRec + 8, 4, 0, "dtype disagrees"},
      {"record rank 0", kRec + 12, 4, 0, "rank"},
      {"record rank max", kRec + 12, 4, 0xFFFFFFFF, "rank"},
      {"record shape", kRec + 16, 4, 25, "shape disagrees"},
      {"record shape max", kRec + 20, 4, 0xFFFFFFFF, "shape disagrees"},
      {"record shape tail", kRec + 28, 4, 1, "shape disagrees"},
      {"record group", kRec + 32, 4, 16, "group size disagrees"},
      {"record layout unknown", kRec + 36, 4, 99, "unknown tensor layout"},
      {"data misaligned", kRec + 40, 8, header_size + 4, "not 64-byte aligned"},
      {"data overlaps header", kRec + 40, 8, 0, "overlaps the header"},
      {"data gap", kRec + 40, 8, header_size + 64, "does not start right after"},
      {"data outside", kRec + 40, 8, ~uint64_t{0} << 6, "does not start right after"},
      {"data bytes +1", kRec + 48, 8, get_field<uint64_t>(good, kRec + 48) + 1, "byte size"},
      {"data bytes max", kRec + 48, 8, ~uint64_t{0}, "byte size"},
      {"scales overlap data", kRec + 56, 8, header_size, "scales overlap"},
      {"scales misaligned", kRec + 56, 8, get_field<uint64_t>(good, kRec + 56) + 8,
       "scales offset not 64-byte aligned"},
      {"scales bytes", kRec + 64, 8, 4, "scale bytes"},
      {"record reserved1", kRec + 72, 8, 1, "reserved tensor"},
      {"second tensor overlaps first", kRec + 80 + 40, 8, header_size, "overlaps"},
      {"second tensor misaligned", kRec + 80 + 40, 8, rec1_data + 1, "not 64-byte aligned"},
  };
  for (const Corruption& c : table) {
    std::vector<uint8_t> b = good;
    if (c.width == 4)
      set_field<uint32_t>(b, c.offset, static_cast<uint32_t>(c.value));
    else
      set_field<uint64_t>(b, c.offset, c.value);
    reseal(b);
    const std::string msg = message_of(b);
    CHECK_MESSAGE(msg.find(c.expect) != std::string::npos,
                  c.what << ": got '" << msg << "', want '" << c.expect << "'");
  }
}

TEST_CASE("format corrupt: CRC mismatches and the skip flag") {
  const std::vector<uint8_t> good = synthetic_bytes(tiny_llama_config(), true);
  const uint32_t header_size = get_field<uint32_t>(good, 8);
  std::vector<uint8_t> payload = good;
  payload[header_size + 5] ^= 0x40;
  CHECK(message_of(payload).find("payload CRC") != std::string::npos);
  CHECK(message_of(payload, false) == "ok");  // flash images may skip the pass
  std::vector<uint8_t> head = good;
  head[kArch + 4] ^= 0x01;  // dim 16 -> 17, CRCs untouched
  CHECK(message_of(head).find("header CRC") != std::string::npos);
  CHECK(message_of(head, false).find("shape disagrees") != std::string::npos);
  std::vector<uint8_t> crc = good;
  crc[24] ^= 1;
  CHECK(message_of(crc).find("header CRC") != std::string::npos);
  crc = good;
  crc[28] ^= 1;
  CHECK(message_of(crc) != "ok");
}

TEST_CASE("format corrupt: every header, arch and record field at extreme values") {
  for (const ModelConfig& cfg : {tiny_llama_config(DType::q4, 8), tiny_encoder_config()}) {
    const std::vector<uint8_t> good = synthetic_bytes(cfg, true);
    const uint32_t count = get_field<uint32_t>(good, 44);
    std::vector<size_t> fields;
    // Floats (epsilon, theta, the version 4 scales and soft-caps): the table above.
    for (size_t off = 0; off < kRec; off += 4)
      if (off != kArch + 40 && off != kArch + 52 && !(off >= kArch + 132 && off <= kArch + 144))
        fields.push_back(off);
    for (uint32_t r : {0u, 1u, count / 2, count - 1})
      for (size_t off = 0; off < 80; off += 4) fields.push_back(kRec + r * 80 + off);
    const uint32_t extremes[] = {0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0xFFFFFFC0u, 64u};
    int tried = 0;
    for (size_t off : fields) {
      if (off == 24 || off == 28) continue;  // the CRCs themselves: covered above
      for (uint32_t v : extremes) {
        std::vector<uint8_t> b = good;
        if (get_field<uint32_t>(b, off) == v) continue;
        // Fields where small values are legitimately valid: tokenizer length (its bytes are opaque
        // to the loader), context length, activation (several valid kinds).
        if ((off == 64 || off == kArch + 32 || off == kArch + 44) && v < 0x10000u) continue;
        // A llama's trained sliding window (0: none) takes any small value, its family any
        // known one.
        if (cfg.arch == ArchKind::llama && off == kArch + 116 && v < 0x10000u) continue;
        if (cfg.arch == ArchKind::llama && off == kArch + 128 && v < kArchFamilyCount) continue;
        // Encoder attention variants (attention, positions, window/global/stride/block): small
        // values are valid choices; the block summary (kArch + 92) alone must stay refused.
        if (cfg.arch == ArchKind::encoder && off >= kArch + 68 && off <= kArch + 88 && v < 0x10000u)
          continue;
        // llama decoders take linear-elu attention (1); every other value stays refused. They
        // also take a causal sparse pattern (window/global/stride/block: small values are valid).
        if (cfg.arch == ArchKind::llama && off == kArch + 68 && v == 1) continue;
        if (cfg.arch == ArchKind::llama && off >= kArch + 76 && off <= kArch + 88 && v < 0x10000u)
          continue;
        set_field<uint32_t>(b, off, v);
        reseal(b);
        const std::string msg = message_of(b);
        ++tried;
        if (msg == "ok") FAIL_CHECK("field at byte " << off << " = " << v << " accepted");
      }
    }
    CHECK(tried > 800);
  }
}

TEST_CASE("format corrupt: random byte flips in the header region never crash") {
  const std::vector<uint8_t> good = synthetic_bytes(tiny_encoder_config(), true);
  const uint32_t header_size = get_field<uint32_t>(good, 8);
  uint32_t state = 12345;
  int rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> b = good;
    for (int k = 0; k < 3; ++k) {
      state = state * 1664525u + 1013904223u;
      b[(state >> 8) % header_size] ^= static_cast<uint8_t>(1u << (state % 8));
    }
    reseal(b);
    if (message_of(b) != "ok") ++rejected;
  }
  CHECK(rejected > 2500);  // flips landing in float fields or padding may still be valid
}

TEST_CASE("format: version 3 images (a 128-byte ArchBlock, before the family features) load") {
  const ModelConfig c = tiny_llama_config(DType::q8, 8);
  const std::vector<uint8_t> v3 = synthetic_bytes(c, true, kEinVersion3);
  const std::vector<uint8_t> v4 = synthetic_bytes(c, true);
  CHECK(get_field<uint32_t>(v3, 4) == 3);
  CHECK(get_field<uint32_t>(v3, 36) == 128);
  CHECK(get_field<uint32_t>(v4, 36) == sizeof(ArchBlock));
  CHECK(message_of(v3) == "ok");
  Model m3, m4;
  REQUIRE(load_bytes(v3, &m3).ok());
  REQUIRE(load_bytes(v4, &m4).ok());
  CHECK(m3.config.family == ArchFamily::unspecified);
  CHECK(m3.config.dim == m4.config.dim);
  CHECK(m3.config.weight_dtype == m4.config.weight_dtype);
  // The version 4 flag bits are unknown to version 3.
  std::vector<uint8_t> v3_qk = v3;
  set_field<uint32_t>(v3_qk, kArch + 56, get_field<uint32_t>(v3, kArch + 56) | kArchQkNorm);
  reseal(v3_qk);
  CHECK(message_of(v3_qk).find("architecture flags") != std::string::npos);
  // A version 3 header over a version 4 block (or the reverse) is refused by its size.
  std::vector<uint8_t> mixed = v4;
  set_field<uint32_t>(mixed, 4, kEinVersion3);
  reseal(mixed);
  CHECK(message_of(mixed).find("arch block size") != std::string::npos);
  // The writer cannot put version 4 features into version 3.
  ModelConfig gemma = c;
  gemma.attn_softcap = 50.f;
  CHECK_THROWS_AS(synthetic_bytes(gemma, false, kEinVersion3), pack::PackError);
}

TEST_CASE("format: version 2 images (before RoPE scaling, sliding window, q/k/v biases) load") {
  const std::vector<uint8_t> v3 =
      synthetic_bytes(tiny_llama_config(DType::q8, 8), true, kEinVersion3);
  std::vector<uint8_t> v2 = v3;
  set_field<uint32_t>(v2, 4, kEinVersionPrevious);
  reseal(v2);
  CHECK(message_of(v2) == "ok");
  // In version 2 the new fields were reserved: set, they are refused as such.
  std::vector<uint8_t> v2_window = v2;
  set_field<uint32_t>(v2_window, kArch + 116, 16);
  reseal(v2_window);
  CHECK(message_of(v2_window).find("reserved arch") != std::string::npos);
  std::vector<uint8_t> v3_window = v3;  // the same bytes are a valid window in version 3
  set_field<uint32_t>(v3_window, kArch + 116, 16);
  reseal(v3_window);
  CHECK(message_of(v3_window) == "ok");
  std::vector<uint8_t> v2_bias = v2;
  set_field<uint32_t>(v2_bias, kArch + 56, get_field<uint32_t>(v2, kArch + 56) | kArchQkvBias);
  reseal(v2_bias);
  CHECK(message_of(v2_bias).find("architecture flags") != std::string::npos);
  // Bytes 124..127 (the first windowed layer) and flag bit 6 (RoPE frequency factors) came later
  // in version 3: reserved in version 2, zero in the version 3 files written before them.
  std::vector<uint8_t> v2_first = v2;
  set_field<uint32_t>(v2_first, kArch + 124, 1);
  reseal(v2_first);
  CHECK(message_of(v2_first).find("reserved arch") != std::string::npos);
  std::vector<uint8_t> v2_factors = v2;
  set_field<uint32_t>(v2_factors, kArch + 56,
                      get_field<uint32_t>(v2, kArch + 56) | kArchRopeFreqFactors);
  reseal(v2_factors);
  CHECK(message_of(v2_factors).find("architecture flags") != std::string::npos);
  const int32_t layers = get_field<int32_t>(v3, kArch + 12);
  for (int32_t first : {1, layers - 1, layers}) {
    std::vector<uint8_t> v3_first = v3_window;
    set_field<uint32_t>(v3_first, kArch + 124, static_cast<uint32_t>(first));
    reseal(v3_first);
    CAPTURE(first);
    CHECK((message_of(v3_first) == "ok") == (first < layers));
  }
}
#endif  // EINFER_HAS_PACK_LIB
