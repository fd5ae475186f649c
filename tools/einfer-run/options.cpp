#include "tools/einfer-run/options.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "kernels/isa/isa.h"
#include "kernels/simd/simd.h"
#include "tools/common/cli.h"
#include "tools/common/run_flags.h"
#include "tools/einfer-pack/import_tokenizer.h"

namespace einfer::run_tool {

bool parse_args(int argc, char** argv, Args* a, int* exit_code) {
  namespace cli = tools::cli;
  std::string prompt_file;
  tools::RunFlags run_flags;
  int64_t threads = cli::default_threads();
  int64_t seed = -1;
  bool no_crc = false;
  cli::Parser p("einfer-run", "-m MODEL.ein [-p PROMPT | -f FILE] [options]",
                "Generates text with a packed llama model (text streams to stdout; speed and "
                "memory go to stderr),\nembeds text with a sentence encoder (bert), or "
                "transforms sequences with an encoder model.");
  p.option({"-m", "--model"}, &a->model, "FILE", "the packed model (.ein)");
  p.positional("MODEL", &a->model, "the model, as the first argument instead of -m");
  p.section("prompt and output");
  p.option({"-p", "--prompt"}, &a->prompt, "TEXT", "prompt text (with -i: the system prompt)");
  p.option({"-f", "--file"}, &prompt_file, "FILE", "read the prompt from a file");
  p.option({"--prompt-ids"}, &a->prompt_ids, "\"1 2 3\"", "prompt as token ids");
  p.option({"-z", "--tokenizer"}, &a->tokenizer, "FILE",
           "tokenizer file, any kind einfer-pack takes (default: the one packed in the model)");
  p.option({"-n", "--n-predict"}, &a->steps, "N",
           "tokens to generate (default -1: until EOS or the context is full)")
      .range(-1, 1LL << 40);
  p.flag({"--ids"}, &a->ids, "print token ids instead of text");
  p.flag({"--tokenize"}, &a->tokenize,
         "print the prompt's ids (as the model is fed them) and exit");
  p.flag({"--ignore-eos"}, &a->ignore_eos, "keep generating through sequence delimiters");
  p.option({"--logits"}, &a->logits, "FILE", "every evaluated position's logits as .npy");
  p.flag({"-v", "--verbose"}, &a->verbose, "report options, threads and per-turn positions");
  p.section("sampling");
  p.option({"--temp"}, &a->temperature, "T", "temperature (default 0: greedy)").range(0, 100);
  p.option({"--temperature"}, &a->temperature, "T", "same as --temp").range(0, 100).hidden();
  p.option({"--top-k"}, &a->top_k, "K", "top-k sampling (default 0: off)").range(0, 1 << 30);
  p.option({"--top-p"}, &a->top_p, "P", "nucleus sampling (default 1: off)")
      .range(0, 1)
      .exclusive_min();
  p.option({"--repeat-penalty"}, &a->repeat_penalty, "X",
           "divide the logits of recently generated tokens by X (default 1: off)")
      .range(0.01, 100);
  p.option({"--repeat-last-n"}, &a->repeat_last_n, "N",
           "tokens --repeat-penalty looks back over (default 64)")
      .range(0, 1 << 30);
  p.option({"-s", "--seed"}, &seed, "N", "sampler seed (default: from the clock)").range(0, 9.2e18);
  p.section("context and memory");
  run_flags.declare(p);
  p.option({"-t", "--threads"}, &threads, "N", "threads (default: the online cores)")
      .range(1, 4096)
      .hint("the sampling temperature is --temp");
  p.flag({"--no-crc"}, &no_crc, "skip the model's CRC check");
  p.flag({"--no-mmap"}, &a->no_mmap,
         "read the model into memory backed by huge pages instead of mapping the file (uses RAM "
         "for a copy; decode is faster where weights stream through the TLB: +25% for a 110M "
         "Q4_K model on a Xeon)");
  p.section("interactive");
  p.flag({"-i", "--interactive", "-cnv", "--conversation"}, &a->interactive,
         "chat: read turns from stdin, keep the KV cache between them");
  p.option({"--chat-template"}, &a->chat_template, "NAME",
           "chatml|llama2|llama3|zephyr|qwen3|gemma|phi3|none (default: from the model's "
           "metadata)")
      .choices({"chatml", "llama2", "llama3", "zephyr", "qwen3", "gemma", "phi3", "none"});
  p.option({"-sys", "--system-prompt"}, &a->system_prompt, "TEXT", "system prompt for -i");
  p.section("sentence embeddings (bert models)");
  p.flag({"--embed"}, &a->embed,
         "print the embedding of -p TEXT, or of each line of -f FILE (one vector per line: "
         "space-separated floats); a bert model embeds without it");
  p.flag({"--json"}, &a->json,
         "--embed: {\"object\": \"list\", \"data\": [{\"index\", \"embedding\"}...]}");
  p.option({"--pooling"}, &a->pooling, "KIND",
           "--embed: none (every token's vector, one per line) | mean | cls (default: the "
           "model's)")
      .choices({"none", "mean", "cls"});
  p.section("encoders");
  p.option({"--input"}, &a->input, "X.npy", "encoder input [seq, dim] or [batch, seq, dim]");
  p.option({"--output"}, &a->output, "Y.npy", "encoder (or encoder-decoder) output");
  p.option(
      {"--target"}, &a->target, "TGT.npy",
      "encoder-decoder: decoder input [tgt, dim] or [batch, tgt, dim] (--input is the source); "
      "the output has the target's shape");
  p.flag({"--incremental"}, &a->incremental,
         "encoder-decoder: feed the target rows one at a time through the KV cache");
  p.epilog(
      "examples:\n"
      "  einfer-run -m model.ein -p \"Once upon a time\" -n 128 --temp 0.8 -s 1\n"
      "  einfer-run model.ein -f prompt.txt -c 256 --kv q8\n"
      "  einfer-run -m chat.ein -i -sys \"You are terse.\"\n"
      "  einfer-run -m minilm.ein --embed -f sentences.txt --json");
  if (!p.parse(argc, argv, exit_code)) return false;

  if (a->model.empty()) {
    *exit_code = p.fail("no model given (-m MODEL.ein)");
    return false;
  }
  if (!prompt_file.empty()) {
    if (p.given("-p")) {
      *exit_code = p.fail("-p and -f exclude each other");
      return false;
    }
    std::ifstream in(prompt_file, std::ios::binary);
    if (!in) {
      *exit_code = p.fail("cannot read prompt file " + prompt_file);
      return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    a->prompt = ss.str();
    // As llama.cpp: one trailing newline (how editors end files) is not part of the prompt.
    if (!a->prompt.empty() && a->prompt.back() == '\n') a->prompt.pop_back();
  }
  a->prompt_given = p.given("-p") || !prompt_file.empty();
  a->prompt_from_file = !prompt_file.empty();
  if (a->prompt_given && !a->prompt_ids.empty()) {
    *exit_code = p.fail("-p/-f and --prompt-ids exclude each other");
    return false;
  }
  run_flags.apply(&a->run);
  if (seed >= 0) {
    a->seed = static_cast<uint64_t>(seed);
    a->seed_set = true;
  }
  a->threads = static_cast<int>(threads);
  a->verify_crc = !no_crc;
  if (a->tokenize && !a->prompt_given) {
    *exit_code = p.fail("--tokenize needs -p PROMPT or -f FILE");
    return false;
  }
  if (a->interactive && a->ids) {
    *exit_code = p.fail("-i is for text: it does not combine with --ids");
    return false;
  }
  return true;
}

bool parse_id_list(const std::string& list, std::vector<int32_t>* ids, std::string* why) {
  size_t at = 0;
  while (at < list.size()) {
    at = list.find_first_not_of(" ,\t\n", at);
    if (at == std::string::npos) break;
    const size_t end = std::min(list.find_first_of(" ,\t\n", at), list.size());
    int64_t id = 0;
    std::string reason;
    if (!tools::cli::read_integer_in(list.substr(at, end - at), 0, INT32_MAX, &id, &reason)) {
      *why = "--prompt-ids: token " + std::to_string(ids->size()) + ": " + reason;
      return false;
    }
    ids->push_back(static_cast<int32_t>(id));
    at = end;
  }
  return true;
}

bool read_run_tokenizer(const Args& a, int32_t vocab, std::vector<uint8_t>* image) {
  image->clear();
  if (a.tokenizer.empty()) return true;
  try {
    *image = pack::tokenizer_image_for_model(pack::read_tokenizer_file(a.tokenizer), vocab);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "einfer-run: %s\n", e.what());
    return false;
  }
  return true;
}

std::unique_ptr<tools::ThreadPool> apply_threads(const Args& a, RunOptions* run) {
  auto pool =
      std::make_unique<tools::ThreadPool>(a.threads > 0 ? a.threads : tools::online_cores());
  run->threads = pool->threads();
  if (a.verbose) {
    std::fprintf(stderr, "einfer-run: %d thread%s\n", pool->size(), pool->size() > 1 ? "s" : "");
    // The session picks the level; picking it here first only makes the report name it.
    const Status isa = isa_init();
    std::fprintf(stderr, "einfer-run: isa %s (%s, simd %s)%s%s\n", isa_name(),
                 isa_dispatches() ? "runtime dispatch" : "pinned at build time", simd_arch_name(),
                 isa.ok() ? "" : ": ", isa.ok() ? "" : isa.message);
  }
  return pool;
}

}  // namespace einfer::run_tool
