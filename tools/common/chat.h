// Chat templates for interactive generation (einfer-run -i), by recognition instead of Jinja.
//
// Models ship their prompt format as a Jinja template (tokenizer_config.json "chat_template",
// GGUF "tokenizer.chat_template"). Running Jinja on a device is out of the question, and a few
// families cover most small chat models, so the host packer recognises the family from the
// template's markers and records its name in the model's metadata (chat_template=<name>); the
// device formats each turn itself. tests/test_chat.cpp checks the formatting against Jinja2's
// rendering of the real templates (tests/gen/gen_chat_templates.py): ChatML (SmolLM, Qwen2), Llama
// 2 and 3, Zephyr, Qwen3 (ChatML with its <think> blocks), Gemma 2 and 3 (<start_of_turn>) and
// Phi-3 (<|user|> ... <|end|>).
#pragma once

#include <string>
#include <vector>

namespace einfer::tools::chat {

enum class Format { none, chatml, llama2, llama3, zephyr, qwen3, gemma, phi3 };

// "none", "chatml", "llama2", "llama3", "zephyr", "qwen3", "gemma", "phi3".
const char* format_name(Format f);
// Parses a name as format_name prints it; false when unknown.
bool parse_format(const std::string& name, Format* out);
// The family of a Jinja chat template, from the markers it emits; none when not recognised.
Format recognise(const std::string& jinja_template);

// A piece of prompt: text, or the tokenizer's BOS/EOS token (fed as ids, since a small
// tokenizer may not know "<s>" or "<|begin_of_text|>" as text).
struct Segment {
  enum class Kind { text, bos, eos } kind = Kind::text;
  std::string text;
};

struct Message {
  std::string role;  // system | user | assistant
  std::string content;
};

// The segments of a whole conversation as the template renders it (with the generation prompt
// when asked). Roles must be [system] user (assistant user)* [assistant].
std::vector<Segment> render(Format f, const std::vector<Message>& messages,
                            bool add_generation_prompt);
// Concatenates segments with the given BOS/EOS text (for comparing with a Jinja rendering).
std::string to_text(const std::vector<Segment>& segments, const std::string& bos,
                    const std::string& eos);

// What to feed for a new user message when the earlier turns are already evaluated (the KV cache
// kept): the closing of the previous assistant reply (whose content the model generated) and the
// new user turn with the generation prompt. `history` is the conversation so far: [system] then
// alternating user/assistant messages, ending with an assistant reply unless this is the first
// turn (then the whole rendering is returned).
std::vector<Segment> next_turn(Format f, const std::vector<Message>& history,
                               const std::string& user);

// Text that ends an assistant reply besides the EOS token ("<|im_end|>", "<|eot_id|>",
// "<end_of_turn>", "<|end|>"; empty for formats that end replies with EOS only).
const char* end_of_turn(Format f);

}  // namespace einfer::tools::chat
