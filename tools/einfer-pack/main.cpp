// einfer-pack: packs llama2.c, Hugging Face Llama, PyTorch encoder and GGUF checkpoints into the
// flat .ein format (docs/format.md), inspects .ein files and emits them as C headers.
//
//   einfer-pack INPUT -o OUT.ein [--dtype f32|f16|q8|q4] [--group 32|64] [-z TOKENIZER]
//               [--emit-c OUT.h] [--arch torch-encoder --heads H [--activation relu|gelu]
//               [--norm-first] [--causal] [--eps E]] [run options]
//   einfer-pack --inspect MODEL.ein [--json] [run options]
//   einfer-pack --synthetic SPEC -o OUT.ein ...   (deterministic model + tokenizer, no input file)
//   run options: --context N --window W --sinks S --kv f32|q8 --batch B
//                [--with-tokenizer | --with-decode-tokenizer] [--max-prompt-bytes N]
//                                                           (C API sizing for --emit-c)
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "runtime/format.h"
#include "tools/common/cli_number.h"
#include "tools/einfer-pack/attention_options.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/json.h"

using namespace einfer;
using namespace einfer::pack;

namespace {

constexpr uint64_t kProgressMinBytes = 4u << 20;
bool g_progress = false;

void progress_bar(uint64_t done, uint64_t total) {
  if (!g_progress || total < kProgressMinBytes) return;
  const int width = 40;
  const int filled = static_cast<int>(done * width / total);
  std::fprintf(stderr, "\r[%.*s%*s] %3d%%", filled, "########################################",
               width - filled, "", static_cast<int>(done * 100 / total));
  if (done >= total) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

void usage() {
  std::fprintf(
      stderr,
      "usage: einfer-pack INPUT -o OUT.ein [--dtype f32|f16|q8|q4] [--group N] [-z TOKENIZER]\n"
      "                   [--emit-c OUT.h] [--symbol NAME]\n"
      "                   [--arch torch-encoder --heads H [--activation relu|gelu] [--norm-first]\n"
      "                    [--causal] [--eps E] [--attention-pattern SPEC]\n"
      "                    [--attention softmax|linear-elu] [--positions none|sinusoidal]]\n"
      "       einfer-pack --synthetic SPEC -o OUT.ein|--emit-c OUT.h [...]\n"
      "       einfer-pack --inspect MODEL.ein [--json]\n"
      "run options (arena sizing): --context N --window W --sinks S --kv f32|q8 --batch B "
      "[--no-plan-cache]\n"
      "  [-t|--threads N] (one kernel-scratch slot per worker; default 1)\n"
      "  --emit-c only: --with-tokenizer --max-prompt-bytes N (C API options the constant "
      "covers),\n"
      "    --with-decode-tokenizer (with_tokenizer = 2: decode only, no tokenizer arena)\n"
      "TOKENIZER: llama2.c tokenizer.bin, SentencePiece tokenizer.model, Hugging Face\n"
      "  tokenizer.json or a GGUF file's vocabulary (detected from content; GGUF inputs and HF\n"
      "  folders pack their own automatically)\n"
      "SPEC: dim=64,hidden=172,layers=4,heads=4,kv_heads=4,vocab=512,seq=128[,seed=1]\n"
      "      (also tied=0|1, dtype=f32|f16|q8|q4 and group=N: the default --dtype/--group)\n"
      "INPUT: llama2.c checkpoint (v0/v1/v2), Hugging Face Llama folder, PyTorch encoder\n"
      "       .safetensors, or GGUF (llama; F32/F16/Q8_0/Q4_0)\n");
}

DType parse_dtype(const std::string& s) {
  if (s == "f32") return DType::f32;
  if (s == "f16") return DType::f16;
  if (s == "q8") return DType::q8;
  if (s == "q4") return DType::q4;
  throw PackError("unknown dtype '" + s + "' (f32, f16, q8 or q4)");
}

int parse_int(const std::string& flag, const char* v, int64_t hi = int64_t{1} << 30) {
  int64_t n = 0;
  std::string err;
  if (!tools::parse_int_option(flag.c_str(), v, 0, hi, &n, &err)) throw PackError(err);
  return static_cast<int>(n);
}

// Writes PATH.tmp then renames it over PATH: a failed or interrupted pack never leaves a partial
// or invalid file under the output name.
void write_file(const std::string& path, const void* data, size_t n) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n)) ||
        !out.flush()) {
      std::remove(tmp.c_str());
      throw PackError("cannot write " + path);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw PackError("cannot write " + path + ": " + std::strerror(e));
  }
}

// Loads and validates a .ein image; the AlignedBuffer owns the bytes the Model points into.
Model load_checked(const AlignedBuffer& buf, const std::string& path) {
  Model model;
  const Status s = load_model(buf.data, buf.size, LoadOptions{}, &model);
  if (!s.ok()) throw PackError(path + ": " + status_text(s));
  return model;
}

int run(int argc, char** argv) {
  std::string input, output, tokenizer, emit_c, arch, synthetic, symbol = "einfer_model";
  bool synthetic_given = false;
  CApiSizing capi;
  bool inspect = false, json = false, dtype_given = false, group_given = false;
  DType dtype = DType::f32;
  int32_t group = 32;
  TorchEncoderOptions enc;
  AttentionOptions variants;
  RunOptions run;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) throw PackError(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else if (a == "-o")
      output = value();
    else if (a == "--dtype") {
      dtype = parse_dtype(value());
      dtype_given = true;
    } else if (a == "--group") {
      group = parse_int(a, value(), 65536);
      group_given = true;
    } else if (a == "-z")
      tokenizer = value();
    else if (a == "--emit-c")
      emit_c = value();
    else if (a == "--symbol")
      symbol = value();
    else if (a == "--inspect") {
      inspect = true;
      input = value();
    } else if (a == "--synthetic") {
      synthetic = value();
      synthetic_given = true;
    } else if (a == "--with-tokenizer")
      capi.with_tokenizer = 1;
    else if (a == "--with-decode-tokenizer")
      capi.with_tokenizer = 2;
    else if (a == "--max-prompt-bytes")
      capi.max_prompt_bytes = parse_int(a, value(), kMaxRunPositions);
    else if (a == "--json")
      json = true;
    else if (a == "--arch")
      arch = value();
    else if (a == "--heads")
      enc.heads = parse_int(a, value(), 4096);
    else if (a == "--activation")
      enc.activation = value();
    else if (a == "--norm-first")
      enc.norm_first = 1;
    else if (a == "--causal")
      enc.causal = 1;
    else if (a == "--attention-pattern")
      variants.pattern = value();
    else if (a == "--attention")
      variants.attention = value();
    else if (a == "--positions")
      variants.positions = value();
    else if (a == "--eps") {
      enc.eps = parse_finite_float(value(), "--eps");
      if (!(enc.eps > 0.f && enc.eps < 1.f)) throw PackError("--eps must be in (0, 1)");
    } else if (a == "--context")
      run.context = parse_int(a, value(), kMaxRunPositions);
    else if (a == "--window")
      run.window = parse_int(a, value(), kMaxRunPositions);
    else if (a == "--sinks")
      run.sinks = parse_int(a, value(), kMaxRunPositions);
    else if (a == "--batch")
      run.max_batch = parse_int(a, value(), kMaxRunBatch);
    else if (a == "--no-plan-cache")
      run.cache_plans = false;
    else if (a == "--threads" || a == "-t") {
      run.threads.n = parse_int(a, value(), 256);
      if (run.threads.n < 1 || run.threads.n > 256) throw PackError(a + ": 1..256 threads");
    } else if (a == "--kv") {
      const std::string k = value();
      if (k == "f32")
        run.kv_dtype = DType::f32;
      else if (k == "q8" || k == "i8")
        run.kv_dtype = DType::i8;
      else
        throw PackError("--kv: f32 or q8");
    } else if (!a.empty() && a[0] == '-') {
      usage();
      throw PackError("unknown option " + a);
    } else if (input.empty()) {
      input = a;
    } else {
      throw PackError("more than one input given");
    }
  }
  if (synthetic_given && !input.empty()) throw PackError("--synthetic takes no INPUT");
  if (input.empty() && !synthetic_given) {
    usage();
    return 2;
  }
  if (group_given && (group <= 0 || group > 65536)) throw PackError("--group must be 1..65536");

  if (inspect) {
    AlignedBuffer buf(read_file(input));
    const Model model = load_checked(buf, input);
    std::fputs(describe_model(model, run, json).c_str(), stdout);
    return 0;
  }
  if (output.empty() && emit_c.empty())
    throw PackError("no output: give -o OUT.ein and/or --emit-c OUT.h");

  SourceModel source;
  std::vector<uint8_t> synthetic_tokenizer;
  std::vector<uint8_t> input_bytes;  // a file input, kept for its GGUF vocabulary
  struct stat st {};
  if (synthetic_given) {
    source = make_synthetic(parse_synthetic_spec(synthetic));
    synthetic_tokenizer = make_synthetic_tokenizer(source.config.vocab_size);
    input = "synthetic:" + synthetic;
  } else if (stat(input.c_str(), &st) != 0) {
    throw PackError("cannot open " + input + ": " + std::strerror(errno));
  } else if (S_ISDIR(st.st_mode)) {
    g_progress = isatty(2);
    source = import_hf_llama(input);
  } else {
    input_bytes = read_file(input);
    const std::vector<uint8_t>& bytes = input_bytes;
    g_progress = isatty(2);
    uint32_t magic = 0;
    if (bytes.size() >= 4) std::memcpy(&magic, bytes.data(), 4);
    uint64_t st_len = 0;
    if (bytes.size() >= 9) std::memcpy(&st_len, bytes.data(), 8);
    const bool safetensors = bytes.size() >= 9 && st_len < bytes.size() && bytes[8] == '{';
    if (magic == kEinMagic) throw PackError(input + " is already an einfer model (use --inspect)");
    if (arch == "torch-encoder" || (arch.empty() && safetensors)) {
      if (!safetensors)
        throw PackError(input + ": --arch torch-encoder expects a .safetensors file");
      source = import_torch_encoder(bytes, enc);
    } else if (!arch.empty()) {
      throw PackError("unknown --arch '" + arch + "' (torch-encoder)");
    } else if (looks_like_gguf(bytes)) {
      source = import_gguf(bytes);
    } else if (looks_like_llama2c(bytes)) {
      source = import_llama2c(bytes);
    } else if (bytes.size() < 28) {
      throw PackError(input + ": file too short to be a model (" + std::to_string(bytes.size()) +
                      " bytes)");
    } else {
      throw PackError(
          input +
          ": unrecognized input format (expected llama2.c, GGUF, safetensors or an HF folder)");
    }
  }
  apply_attention_options(variants, &source.config);
  if (!dtype_given) dtype = source.config.weight_dtype;
  if (!group_given && dtype_is_quantized(dtype) && dtype == source.config.weight_dtype &&
      source.config.group_size > 0)
    group = source.config.group_size;

  EinImage image = pack_source(source, dtype, group, progress_bar);
  // The tokenizer: -z FILE (detected from its content), else the one the input carries (GGUF
  // vocabulary, HF folder's tokenizer.json/.model, --synthetic's letters), else none.
  TokenizerSpec tok;
  bool have_tok = false;
  if (!tokenizer.empty()) {
    tok = read_tokenizer_file(tokenizer);
    have_tok = true;
  } else if (synthetic_given) {
    tok = read_tokenizer_bytes(synthetic_tokenizer, "synthetic tokenizer");
    have_tok = true;
  } else if (!input_bytes.empty() && looks_like_gguf(input_bytes)) {
    have_tok = gguf_tokenizer_if_any(input_bytes, input, &tok);
  } else if (S_ISDIR(st.st_mode) && source.config.vocab_size > 0) {
    have_tok = read_folder_tokenizer(input, &tok);
  }
  if (have_tok) {
    image.tokenizer = tokenizer_image_for_model(tok, source.config.vocab_size);
    std::fprintf(stderr, "einfer-pack: tokenizer: %s, %zu tokens\n", tok.source.c_str(),
                 tok.pieces.size());
  }
  image.metadata = "source=" + source.kind + "\ninput=" + input +
                   "\ntool=einfer-pack 0.1.0 (format " + std::to_string(kEinVersion) + ")\n";
  if (!source.notes.empty()) image.metadata += "notes=" + source.notes + "\n";
  const std::vector<uint8_t> out = write_ein(image);
  AlignedBuffer buf(out);  // validated before anything is written
  const Model model = load_checked(buf, output.empty() ? "packed image" : output);
  if (!output.empty()) write_file(output, out.data(), out.size());
  if (!emit_c.empty()) {
    const std::string h = emit_c_header(out, model, run, capi, symbol);
    write_file(emit_c, h.data(), h.size());
  }
  std::fprintf(stderr, "einfer-pack: %s -> %s: %s %s, %u tensors, %zu bytes\n", source.kind.c_str(),
               output.empty() ? emit_c.c_str() : output.c_str(),
               model.config.arch == ArchKind::llama ? "llama" : "encoder",
               dtype_name(model.config.weight_dtype), model.tensor_count, out.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "einfer-pack: error: %s\n", e.what());
    return 1;
  }
}
