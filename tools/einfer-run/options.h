// einfer-run's command line (tools/common/cli.h), llama.cpp's names where the concept is the same.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/run_options.h"
#include "tools/common/thread_pool.h"

namespace einfer::run_tool {

struct Args {
  std::string model;
  std::string tokenizer;
  std::string prompt;      // -p, or the contents of -f FILE
  std::string prompt_ids;  // --prompt-ids "1 2 3"
  bool prompt_given = false;
  int64_t steps = -1;  // -n: tokens to generate (-1: until EOS or the context is full)
  double temperature = 0.0;
  double top_p = 1.0;
  int64_t top_k = 0;
  double repeat_penalty = 1.0;  // llama.cpp semantics: 1 is off
  int64_t repeat_last_n = 64;   // tokens the penalty looks back over
  uint64_t seed = 0;
  bool seed_set = false;
  int threads = 1;  // -t: the worker pool apply_threads() creates
  bool verbose = false;
  RunOptions run;
  bool ids = false;
  bool tokenize = false;  // print the prompt's ids and exit
  bool ignore_eos = false;
  bool verify_crc = true;
  bool no_mmap = false;  // read the model into (huge-page) memory instead of mapping it
  std::string logits;
  std::string input, output;
  std::string target;        // encoder-decoder: --target TGT.npy
  bool incremental = false;  // encoder-decoder: decode one target row at a time
  bool interactive = false;
  std::string chat_template;  // "" : from the model's metadata
  std::string system_prompt;
  // Sentence embeddings (bert models): -p TEXT gives one vector, -f FILE one per line.
  bool embed = false;
  bool prompt_from_file = false;
  bool json = false;    // the vectors as JSON (llama-embedding's --embd-output-format json)
  std::string pooling;  // "" : the model's; none | mean | cls
};

// Parses argv into *a. Returns true to run; false to exit with *exit_code (after --help,
// --version or an error already reported).
bool parse_args(int argc, char** argv, Args* a, int* exit_code);

// "1 2 3" or "1,2,3" (--prompt-ids) into *ids; false with *why naming the bad token.
bool parse_id_list(const std::string& list, std::vector<int32_t>* ids, std::string* why);

// The -z tokenizer converted to the packed image for a model of `vocab` rows into *image (left
// empty without -z); false after printing why it cannot be read.
bool read_run_tokenizer(const Args& a, int32_t vocab, std::vector<uint8_t>* image);

// Creates the worker pool for a.threads (-t) and hands its interface to run->threads; the pool
// must outlive every session using *run.
std::unique_ptr<tools::ThreadPool> apply_threads(const Args& a, RunOptions* run);

}  // namespace einfer::run_tool
