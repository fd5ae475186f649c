// einfer-run -i: a chat REPL that keeps the KV cache between turns. Each turn feeds only what is
// new (the previous reply's closing and the new user message, formatted by the model's chat
// template, tools/common/chat.h) and generates until EOS, the template's end-of-turn text or -n.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tools/common/chat.h"

namespace einfer::run_tool {

// What the REPL needs from a session, so it does not depend on how main() built it.
struct ChatSession {
  std::function<bool(const std::vector<int32_t>& ids, std::string* error)> eval;
  std::function<bool(const std::string& text, std::vector<int32_t>* ids)> encode;  // no BOS
  std::function<std::string(int32_t prev, int32_t token)> piece;          // printable bytes only
  std::function<int32_t(const std::vector<int32_t>& recent)> next_token;  // sample from logits
  std::function<void()> reset;
  std::function<int64_t()> position;
  int64_t context = 0;  // positions available (0: unbounded, a sliding window)
  int32_t bos = 1, eos = 2;
};

struct ChatOptions {
  tools::chat::Format format = tools::chat::Format::none;
  std::string system_prompt;
  int64_t max_reply_tokens = -1;  // -1: until the end of turn or the context
  bool verbose = false;
};

// Reads user turns from `in` (one line each; "/reset" clears the conversation, "/exit" or EOF
// ends) and writes replies to stdout. Returns the exit status.
int run_chat(ChatSession& session, const ChatOptions& options, std::FILE* in);

}  // namespace einfer::run_tool
