// einfer-pack: packs llama2.c, Hugging Face Llama, PyTorch encoder and GGUF checkpoints into the
// flat .ein format (docs/format.md), inspects .ein files and emits them as C (model.c + model.h).
//
//   einfer-pack INPUT -o OUT.ein [--dtype f32|f16|bf16|q8|q4] [--group 32|64] [-z TOKENIZER]
//               [--target CPU | --layout rows|4x4|4x8|8x4]
//               [--emit-c OUT.c] [--arch torch-encoder|torch-transformer --heads H [--activation
//               relu|gelu]
//               [--norm-first] [--causal] [--eps E]] [run options]
//   einfer-pack --inspect MODEL.ein [--json] [run options]
//   einfer-pack --synthetic SPEC -o OUT.ein ...   (deterministic model + tokenizer, no input file)
//   run options: -c/--ctx-size N --window W --sinks S --kv f32|q8 --batch B
//                [--with-tokenizer | --with-decode-tokenizer] [--max-prompt-bytes N]
//                                                           (C API sizing for --emit-c)
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "einfer/version.h"
#include "runtime/format.h"
#include "tools/common/chat.h"
#include "tools/common/cli.h"
#include "tools/common/layout_report.h"
#include "tools/common/run_flags.h"
#include "tools/einfer-pack/attention_options.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/layouts.h"

using namespace einfer;
using namespace einfer::pack;
namespace cli = einfer::tools::cli;
namespace chat = einfer::tools::chat;

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

DType parse_dtype(const std::string& s) {
  if (s == "f32") return DType::f32;
  if (s == "f16") return DType::f16;
  if (s == "bf16") return DType::bf16;
  if (s == "q8") return DType::q8;
  if (s == "q4") return DType::q4;
  throw PackError("unknown dtype '" + s + "' (f32, f16, bf16, q8 or q4)");
}

bool is_c_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') return false;
  return true;
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
  std::string input, output, tokenizer, emit_c_path, arch, synthetic;
  EmitCNames emit_names;
  bool synthetic_given = false;
  CApiSizing capi;
  bool inspect = false, json = false, dtype_given = false, group_given = false;
  DType dtype = DType::f32;
  int32_t group = 32;
  TorchEncoderOptions enc;
  AttentionOptions variants;
  RunOptions run;
  int64_t group_arg = 0, heads = 0, max_prompt_bytes = 0, threads = 1;
  tools::RunFlags run_flags;
  double eps = 0;
  std::string dtype_arg, inspect_path, chat_template_arg, target_arg, layout_arg;
  bool with_tokenizer = false, with_decode_tokenizer = false, no_plan_cache = false;
  bool norm_first = false, causal = false;
  cli::Parser p("einfer-pack",
                "INPUT -o OUT.ein [options] | --inspect MODEL.ein | --synthetic SPEC",
                "Packs llama2.c, Hugging Face Llama, PyTorch encoder and GGUF checkpoints into one "
                ".ein file\n(docs/format.md), inspects .ein files, emits them as C for flash. "
                "Packs are byte-reproducible.");
  p.positional("INPUT", &input,
               "llama2.c checkpoint (v0/v1/v2), Hugging Face Llama folder, PyTorch encoder "
               ".safetensors, or GGUF (llama; F32/F16/BF16/Q8_0/Q4_0)");
  p.section("packing");
  p.option({"-o", "--output"}, &output, "OUT.ein", "the packed model");
  p.option({"--dtype"}, &dtype_arg, "TYPE", "weight type f32|f16|bf16|q8|q4 (default: the input's)")
      .choices({"f32", "f16", "bf16", "q8", "q4"});
  p.option({"--group"}, &group_arg, "N", "quantization group size (default 32)").range(1, 65536);
  {
    std::string targets;
    for (const LayoutTarget& t : layout_targets()) {
      targets += targets.empty() ? "" : ", ";
      targets += std::string(t.name) + " (" + t.layout + ")";
    }
    p.option({"--target"}, &target_arg, "CPU",
             "the CPU the image is for; picks the q8/q4 weight layout its kernels read fastest "
             "(docs/format.md): " +
                 targets + "; default generic");
  }
  p.option({"--layout"}, &layout_arg, "NAME",
           "q8/q4 weight layout, overriding --target's: rows, 4x4 (4 rows interleaved 4 bytes "
           "at a time: Arm NEON/sdot), 4x8 (8 bytes: Arm i8mm), 8x4 (8 rows, 4 bytes: x86 "
           "AVX2/AVX-512 VNNI)")
      .choices({"rows", "4x4", "4x8", "8x4"});
  p.option(
      {"-z", "--tokenizer"}, &tokenizer, "FILE",
      "tokenizer to embed: llama2.c tokenizer.bin, SentencePiece tokenizer.model, Hugging Face "
      "tokenizer.json or a GGUF file's vocabulary (detected from content; GGUF inputs and HF "
      "folders pack their own)");
  p.option({"--synthetic"}, &synthetic, "SPEC",
           "deterministic model + tokenizer, no input: "
           "dim=64,hidden=172,layers=4,heads=4,kv_heads=4,vocab=512,seq=128[,seed=1]"
           "[,tied=0|1,dtype=...,group=N]");
  p.option({"--chat-template"}, &chat_template_arg, "NAME",
           "chat format recorded for einfer-run -i: "
           "chatml|llama2|llama3|zephyr|qwen3|gemma|phi3|none (default: recognised from the "
           "checkpoint's tokenizer_config.json or GGUF template)")
      .choices({"chatml", "llama2", "llama3", "zephyr", "qwen3", "gemma", "phi3", "none"});
  p.section("PyTorch encoders (safetensors)");
  p.option({"--arch"}, &arch, "NAME",
           "torch-encoder or torch-transformer (nn.Transformer encoder-decoder); a .safetensors "
           "input is detected as one or the other otherwise")
      .choices({"torch-encoder", "torch-transformer"});
  p.option({"--heads"}, &heads, "H", "attention heads").range(1, 4096);
  p.option({"--activation"}, &enc.activation, "relu|gelu", "feed-forward activation")
      .choices({"relu", "gelu"});
  p.flag({"--norm-first"}, &norm_first, "pre-norm layers");
  p.flag({"--causal"}, &causal, "causal attention mask");
  p.option({"--eps"}, &eps, "E", "layer-norm epsilon").range(0, 1).exclusive_min().exclusive_max();
  p.option({"--attention-pattern"}, &variants.pattern, "SPEC",
           "sparse attention: terms joined by '+': window:W global:G strided:S fixed:L,C "
           "(docs/attention-variants.md)");
  p.option({"--attention"}, &variants.attention, "KIND", "softmax (default) or linear-elu")
      .choices({"softmax", "linear-elu"});
  p.option({"--positions"}, &variants.positions, "KIND",
           "none (default) or sinusoidal position encodings added to the input")
      .choices({"none", "sinusoidal"});
  p.section("inspecting and emitting C");
  p.option({"--inspect"}, &inspect_path, "MODEL.ein", "print every tensor and the arena bytes");
  p.flag({"--json"}, &json, "--inspect as JSON");
  p.option({"--emit-c"}, &emit_c_path, "OUT.c",
           "write OUT.c (the image: const, aligned, in a named section) and OUT.h (its extern "
           "declaration, size and arena-bytes constants)");
  p.option({"--symbol"}, &emit_names.symbol, "NAME", "C name prefix (default einfer_model)");
  p.option({"--section"}, &emit_names.section, "NAME",
           "linker section of the array (default .einfer_model)");
  p.section("run options (arena sizing for --inspect and --emit-c)");
  run_flags.declare(p);
  p.option({"-t", "--threads"}, &threads, "N", "one kernel-scratch slot per worker (default 1)")
      .range(1, 256)
      .hint("threads are a whole number");
  p.flag({"--no-plan-cache"}, &no_plan_cache, "plan each projection per call (tight RAM)");
  p.flag({"--with-tokenizer"}, &with_tokenizer, "--emit-c: size the arena for the tokenizer");
  p.flag({"--with-decode-tokenizer"}, &with_decode_tokenizer,
         "--emit-c: decode-only tokenizer (with_tokenizer = 2: no tokenizer arena)");
  p.option({"--max-prompt-bytes"}, &max_prompt_bytes, "N", "--emit-c: longest prompt text")
      .range(0, kMaxRunPositions);
  if (int code; !p.parse(argc, argv, &code)) return code;
  if (!dtype_arg.empty()) {
    dtype = parse_dtype(dtype_arg);
    dtype_given = true;
  }
  if (p.given("--group")) {
    group = static_cast<int32_t>(group_arg);
    group_given = true;
  }
  if (!inspect_path.empty()) {
    if (!input.empty() && input != inspect_path) return p.fail("--inspect takes no INPUT");
    inspect = true;
    input = inspect_path;
  }
  synthetic_given = p.given("--synthetic");
  if (heads) enc.heads = static_cast<int>(heads);
  if (p.given("--eps")) enc.eps = static_cast<float>(eps);
  if (norm_first) enc.norm_first = 1;
  if (causal) enc.causal = 1;
  run_flags.apply(&run);
  run.threads.n = static_cast<int>(threads);
  if (no_plan_cache) run.cache_plans = false;
  if (with_tokenizer && with_decode_tokenizer)
    return p.fail("--with-tokenizer and --with-decode-tokenizer exclude each other");
  if (with_tokenizer) capi.with_tokenizer = 1;
  if (with_decode_tokenizer) capi.with_tokenizer = 2;
  if (p.given("--max-prompt-bytes")) capi.max_prompt_bytes = static_cast<int32_t>(max_prompt_bytes);
  if (synthetic_given && !input.empty()) throw PackError("--synthetic takes no INPUT");
  if (input.empty() && !synthetic_given) return p.fail("no INPUT given (or --synthetic SPEC)");

  if (inspect) {
    AlignedBuffer buf(read_file(input));
    const Model model = load_checked(buf, input);
    std::fputs(describe_model(model, run, json).c_str(), stdout);
    return 0;
  }
  if (output.empty() && emit_c_path.empty())
    throw PackError("no output: give -o OUT.ein and/or --emit-c OUT.c");
  if (!emit_c_path.empty() && !is_c_identifier(emit_names.symbol))
    throw PackError("--symbol '" + emit_names.symbol + "' is not a C identifier");

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
    source = hf_folder_is_bert(input) ? import_hf_bert(input) : import_hf_llama(input);
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
    // nn.Transformer state dicts are the ones with decoder layers.
    const bool transformer = arch == "torch-transformer" ||
                             (arch.empty() && safetensors &&
                              std::string(reinterpret_cast<const char*>(bytes.data()) + 8,
                                          std::min(static_cast<size_t>(st_len), bytes.size() - 8))
                                      .find("\"decoder.layers.0.") != std::string::npos);
    if (transformer || arch == "torch-encoder" || (arch.empty() && safetensors)) {
      if (!safetensors)
        throw PackError(input + ": --arch " +
                        (transformer ? "torch-transformer" : "torch-encoder") +
                        " expects a .safetensors file");
      source =
          transformer ? import_torch_transformer(bytes, enc) : import_torch_encoder(bytes, enc);
    } else if (!arch.empty()) {
      throw PackError("unknown --arch '" + arch + "' (torch-encoder, torch-transformer)");
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
  // The weight layout: --layout, else the --target's default (docs/format.md, "Weight layouts").
  const WeightLayout layout = !layout_arg.empty()
                                  ? parse_layout(layout_arg)
                                  : target_layout(target_arg.empty() ? "generic" : target_arg);
  if (layout_interleaved(layout) && dtype_is_gguf_block(dtype)) {
    std::string note;
    apply_gguf_layout(&image, layout, &note);
    if (!note.empty()) std::fprintf(stderr, "einfer-pack: %s\n", note.c_str());
  } else if (layout_interleaved(layout) && !dtype_is_quantized(dtype)) {
    if (!layout_arg.empty())
      throw PackError("--layout " + layout_arg + " holds q8/q4 weights; these are " +
                      dtype_name(dtype) + " (--dtype q8 or q4)");
  } else {
    std::string note;
    apply_layout(&image, layout, !layout_arg.empty(), &note);
    if (!note.empty()) std::fprintf(stderr, "einfer-pack: %s\n", note.c_str());
  }
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
    if (have_tok) add_model_special_ids(tok, source.bos, source.eos);
  }
  if (have_tok) {
    image.tokenizer = tokenizer_image_for_model(tok, source.config.vocab_size);
    std::fprintf(stderr, "einfer-pack: tokenizer: %s, %zu tokens\n", tok.source.c_str(),
                 tok.pieces.size());
  }
  // Reproducible: nothing about where the input lay, what it was called or when it was packed.
  image.metadata = "source=" + source.kind +
                   "\ntool=einfer-pack " EINFER_VERSION_STRING " (format " +
                   std::to_string(ein_version_for(image)) + ")\n";
  if (!target_arg.empty()) image.metadata += "target=" + target_arg + "\n";
  if (!source.notes.empty()) image.metadata += "notes=" + source.notes + "\n";
  image.metadata += source.metadata;
  // The chat format, recognised here so the device never runs Jinja (tools/common/chat.h).
  chat::Format chat_format = chat::recognise(source.chat_template);
  if (!chat_template_arg.empty() && !chat::parse_format(chat_template_arg, &chat_format))
    throw PackError("--chat-template: '" + chat_template_arg +
                    "' is not chatml, llama2, llama3, zephyr, qwen3, gemma, phi3 or none");
  if (!source.chat_template.empty() && chat_format == chat::Format::none &&
      chat_template_arg.empty())
    std::fprintf(stderr,
                 "einfer-pack: the chat template is none of chatml, llama2, llama3, zephyr, "
                 "qwen3, gemma, phi3: "
                 "not recorded (--chat-template NAME sets one)\n");
  if (chat_format != chat::Format::none)
    image.metadata += std::string("chat_template=") + chat::format_name(chat_format) + "\n";
  const std::vector<uint8_t> out = write_ein(image);
  AlignedBuffer buf(out);  // validated before anything is written
  const Model model = load_checked(buf, output.empty() ? "packed image" : output);
  if (!output.empty()) write_file(output, out.data(), out.size());
  if (!emit_c_path.empty()) {
    // OUT.c (or OUT.h, or OUT): writes OUT.c and OUT.h side by side.
    std::string stem = emit_c_path;
    if (stem.size() > 2 && (stem.ends_with(".c") || stem.ends_with(".h")))
      stem.resize(stem.size() - 2);
    const size_t slash = stem.find_last_of('/');
    const std::string base = slash == std::string::npos ? stem : stem.substr(slash + 1);
    emit_names.header_name = base + ".h";
    emit_names.source_name = base + ".c";
    const EmittedC c = emit_c(out, model, run, capi, emit_names);
    write_file(stem + ".h", c.header.data(), c.header.size());
    write_file(stem + ".c", c.source.data(), c.source.size());
  }
  const WeightLayout packed = tools::image_layout(model);
  std::fprintf(stderr, "einfer-pack: %s -> %s: %s %s%s%s, %u tensors, %zu bytes\n",
               source.kind.c_str(), output.empty() ? emit_c_path.c_str() : output.c_str(),
               model.config.arch == ArchKind::llama     ? "llama"
               : model.config.arch == ArchKind::encoder ? "encoder"
               : model.config.arch == ArchKind::bert    ? "bert"
                                                        : "transformer",
               dtype_name(model.config.weight_dtype), layout_interleaved(packed) ? " layout " : "",
               layout_interleaved(packed) ? layout_name(packed) : "", model.tensor_count,
               out.size());
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
