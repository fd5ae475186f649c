// libFuzzer targets for the host importers (einfer-pack): any byte string must either import or be
// refused with a PackError; anything else (a crash, an ASan/UBSan report, another exception type,
// an allocation above libFuzzer's -malloc_limit_mb, a timeout) is a finding. One source, one
// target per importer, selected by EINFER_FUZZ_IMPORTER at compile time (tests/fuzz/CMakeLists).
// Folder importers (hf_bert) write the input's parts into a per-process temporary folder.
// An import that succeeds is packed too, so the finite scan and the writer see hostile values.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tools/common/npy.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/json.h"

using namespace einfer;
using namespace einfer::pack;

namespace {

[[maybe_unused]] void pack_once(const SourceModel& m) {
  const EinImage image = pack_source(m, DType::q8, 32, nullptr);
  (void)write_ein(image);
}

void run(const std::vector<uint8_t>& b) {
#if EINFER_FUZZ_IMPORTER == 1  // GGUF
  pack_once(import_gguf(b));
#elif EINFER_FUZZ_IMPORTER == 2  // safetensors (PyTorch encoder state dict)
  TorchEncoderOptions o;
  o.heads = b.empty() ? 1 : 1 + b.back() % 4;
  pack_once(import_torch_encoder(b, o));
#elif EINFER_FUZZ_IMPORTER == 3  // llama2.c checkpoint
  pack_once(import_llama2c(b));
#elif EINFER_FUZZ_IMPORTER == 4  // JSON reader and the checked integer conversions
  const Json j = parse_json(std::string(b.begin(), b.end()), "fuzz");
  const Json* items[2] = {&j, j.items.empty() ? nullptr : &j.items[0]};
  for (const Json* v : items)
    if (v && v->is_number()) (void)json_to_int(*v, "fuzz", -1000000, 1000000);
  (void)parse_decimal(std::string(b.begin(), b.end()), "fuzz", INT32_MIN, INT32_MAX);
#elif EINFER_FUZZ_IMPORTER == 5  // tokenizer files as einfer-pack -z reads them (content-detected:
  // tokenizer.bin, SentencePiece .model, tokenizer.json, EITK), then the image for a model
  const TokenizerSpec spec = read_tokenizer_bytes(b, "fuzz");
  const int32_t rows = static_cast<int32_t>(spec.pieces.size()) + (b.empty() ? 0 : b[0] % 4);
  (void)tokenizer_image_for_model(spec, rows);
#elif EINFER_FUZZ_IMPORTER == 7  // Hugging Face folder: config.json, a NUL byte, model.safetensors
  // (every llama-family model_type: Llama, Mistral, Qwen2/3, Gemma 2/3, Phi-3)
  static const std::string dir = "/tmp/einfer_fuzz_hf_" + std::to_string(getpid());
  static const bool made = mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST;
  if (!made) return;
  const auto nul = std::find(b.begin(), b.end(), uint8_t{0});
  const std::string config(b.begin(), nul);
  const std::vector<uint8_t> tensors(nul == b.end() ? nul : nul + 1, b.end());
  for (const auto& [name, bytes] :
       {std::pair{std::string("/config.json"), std::vector<uint8_t>(config.begin(), config.end())},
        std::pair{std::string("/model.safetensors"), tensors}}) {
    FILE* f = std::fopen((dir + name).c_str(), "wb");
    if (!f) return;
    if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  pack_once(import_hf_llama(dir));
#elif EINFER_FUZZ_IMPORTER == 6  // .npy reader (einfer-einsum, einfer-run --input): reads a path
  static const std::string path = "/tmp/einfer_fuzz_npy_" + std::to_string(getpid()) + ".npy";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return;
  if (!b.empty()) std::fwrite(b.data(), 1, b.size(), f);
  std::fclose(f);
  tools::NpyArray a;
  std::string err;
  if (tools::read_npy(path, &a, &err)) {
    uint64_t n = 1;
    for (int64_t d : a.shape) n *= static_cast<uint64_t>(d);
    if (n != a.data.size()) __builtin_trap();  // the shape must describe exactly the values read
  }
#elif EINFER_FUZZ_IMPORTER == 8  // a bert folder: config.json NUL modules.json NUL
  // 1_Pooling/config.json NUL model.safetensors (the rest), as import_hf_bert reads it
  namespace fs = std::filesystem;
  static const fs::path dir =
      fs::temp_directory_path() / ("einfer_fuzz_bert_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "1_Pooling");
  const char* names[4] = {"config.json", "modules.json", "1_Pooling/config.json",
                          "model.safetensors"};
  size_t at = 0;
  for (int part = 0; part < 4 && at <= b.size(); ++part) {
    size_t end = b.size();
    if (part < 3)
      for (size_t i = at; i < b.size(); ++i)
        if (b[i] == 0) {
          end = i;
          break;
        }
    FILE* f = std::fopen((dir / names[part]).c_str(), "wb");
    if (!f) return;
    if (end > at) std::fwrite(b.data() + at, 1, end - at, f);
    std::fclose(f);
    at = end + 1;
  }
  pack_once(import_hf_bert(dir.string()));
#else
#error "EINFER_FUZZ_IMPORTER must select an importer"
#endif
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    run(std::vector<uint8_t>(data, data + size));
  } catch (const PackError&) {
    // A clean refusal.
  }
  // parse_json also refuses with a PackError; every other exception escapes: a finding.
  return 0;
}
