#include "tools/common/chat.h"

// GCC 12 reports a false -Wrestrict inside std::string for `"literal" + std::string` at -O3
// (GCC bug 105329); the concatenations here are ordinary.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <cstddef>
#include <cstring>

namespace einfer::tools::chat {

const char* format_name(Format f) {
  switch (f) {
    case Format::chatml:
      return "chatml";
    case Format::llama2:
      return "llama2";
    case Format::llama3:
      return "llama3";
    case Format::zephyr:
      return "zephyr";
    case Format::qwen3:
      return "qwen3";
    case Format::gemma:
      return "gemma";
    case Format::phi3:
      return "phi3";
    case Format::none:
      break;
  }
  return "none";
}

bool parse_format(const std::string& name, Format* out) {
  for (Format f : {Format::none, Format::chatml, Format::llama2, Format::llama3, Format::zephyr,
                   Format::qwen3, Format::gemma, Format::phi3}) {
    if (name == format_name(f)) {
      *out = f;
      return true;
    }
  }
  return false;
}

Format recognise(const std::string& t) {
  auto has = [&](const char* marker) { return t.find(marker) != std::string::npos; };
  if (has("<|start_header_id|>") && has("<|eot_id|>")) return Format::llama3;
  // Qwen3's ChatML renders the assistant's reasoning in <think> blocks.
  if (has("<|im_start|>") && has("<|im_end|>"))
    return has("<think>") ? Format::qwen3 : Format::chatml;
  if (has("<start_of_turn>") && has("<end_of_turn>")) return Format::gemma;
  if (has("[INST]") && has("[/INST]")) return Format::llama2;
  // Phi-3 ends each message with <|end|>; Zephyr with the EOS token.
  if (has("<|user|>") && has("<|assistant|>"))
    return has("<|end|>") ? Format::phi3 : Format::zephyr;
  return Format::none;
}

namespace {

// Python's str.strip(chars) (Jinja's trim: whitespace).
std::string strip(const std::string& s, const char* chars = " \t\n\r\f\v") {
  const size_t a = s.find_first_not_of(chars);
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(chars) - a + 1);
}
std::string lstrip(const std::string& s, const char* chars) {
  const size_t a = s.find_first_not_of(chars);
  return a == std::string::npos ? "" : s.substr(a);
}
std::string rstrip(const std::string& s, const char* chars) {
  const size_t b = s.find_last_not_of(chars);
  return b == std::string::npos ? "" : s.substr(0, b + 1);
}

// Qwen3's template: an assistant message's reasoning (between <think> and </think>) apart from
// its answer.
void split_reasoning(const std::string& message, std::string* content, std::string* reasoning) {
  *content = message;
  reasoning->clear();
  const size_t end = message.rfind("</think>");
  if (end == std::string::npos) return;
  *content = lstrip(message.substr(end + 8), "\n");
  // content.split('</think>')[0]: the text before the first </think>.
  std::string before = rstrip(message.substr(0, message.find("</think>")), "\n");
  const size_t open = before.rfind("<think>");
  if (open != std::string::npos) before = before.substr(open + 7);
  *reasoning = lstrip(before, "\n");
}

void render_qwen3(const std::vector<Message>& messages, bool add_generation_prompt,
                  std::vector<Segment>* out);

void text(std::vector<Segment>* out, const std::string& s) {
  if (s.empty()) return;
  if (!out->empty() && out->back().kind == Segment::Kind::text)
    out->back().text += s;
  else
    out->push_back({Segment::Kind::text, s});
}

void token(std::vector<Segment>* out, Segment::Kind kind) {
  out->push_back({kind, ""});
}

}  // namespace

std::vector<Segment> render(Format f, const std::vector<Message>& messages,
                            bool add_generation_prompt) {
  std::vector<Segment> out;
  switch (f) {
    case Format::none:
      // Plain continuation: the texts one after another.
      for (const Message& m : messages) text(&out, m.content);
      break;
    case Format::chatml:
      for (const Message& m : messages)
        text(&out, "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n");
      if (add_generation_prompt) text(&out, "<|im_start|>assistant\n");
      break;
    case Format::llama2: {
      // The system message folds into the first user turn; each user turn opens with BOS, each
      // assistant reply closes with EOS.
      size_t first = 0;
      std::string system;
      bool has_system = false;
      if (!messages.empty() && messages[0].role == "system") {
        system = messages[0].content;
        has_system = true;
        first = 1;
      }
      for (size_t i = first; i < messages.size(); ++i) {
        std::string content = messages[i].content;
        if (i == first && has_system) content = "<<SYS>>\n" + system + "\n<</SYS>>\n\n" + content;
        if (messages[i].role == "user") {
          token(&out, Segment::Kind::bos);
          text(&out, "[INST] " + strip(content) + " [/INST]");
        } else if (messages[i].role == "assistant") {
          text(&out, " " + strip(content) + " ");
          token(&out, Segment::Kind::eos);
        }
      }
      break;
    }
    case Format::llama3:
      for (size_t i = 0; i < messages.size(); ++i) {
        if (i == 0) token(&out, Segment::Kind::bos);
        text(&out, "<|start_header_id|>" + messages[i].role + "<|end_header_id|>\n\n" +
                       strip(messages[i].content) + "<|eot_id|>");
      }
      if (add_generation_prompt) text(&out, "<|start_header_id|>assistant<|end_header_id|>\n\n");
      break;
    case Format::zephyr:
      for (const Message& m : messages) {
        text(&out, "<|" + m.role + "|>\n" + m.content);
        token(&out, Segment::Kind::eos);
        text(&out, "\n");
      }
      if (add_generation_prompt) text(&out, "<|assistant|>\n");
      break;
    case Format::qwen3:
      render_qwen3(messages, add_generation_prompt, &out);
      break;
    case Format::gemma: {
      // Gemma 3: BOS, a system message folded into the first user turn ("system\n\n" + its
      // text), the assistant called "model", contents trimmed. (Gemma 2's template refuses a
      // system message; folding it is what Gemma 3's does.)
      token(&out, Segment::Kind::bos);
      size_t first = 0;
      std::string prefix;
      if (!messages.empty() && messages[0].role == "system") {
        prefix = messages[0].content + "\n\n";
        first = 1;
      }
      for (size_t i = first; i < messages.size(); ++i) {
        const std::string role = messages[i].role == "assistant" ? "model" : messages[i].role;
        text(&out, "<start_of_turn>" + role + "\n" + (i == first ? prefix : std::string()) +
                       strip(messages[i].content) + "<end_of_turn>\n");
      }
      if (add_generation_prompt) text(&out, "<start_of_turn>model\n");
      break;
    }
    case Format::phi3:
      // Phi-3: every message "<|role|>\n" + text + "<|end|>\n"; a conversation not handed to the
      // model for a reply ends with EOS.
      for (const Message& m : messages)
        text(&out, "<|" + m.role + "|>\n" + m.content + "<|end|>\n");
      if (add_generation_prompt)
        text(&out, "<|assistant|>\n");
      else
        token(&out, Segment::Kind::eos);
      break;
  }
  return out;
}

namespace {

// Qwen3's template (no tools): ChatML; the assistant turns after the last user message carry
// their reasoning in a <think> block (the last one always, an empty block if it has none); earlier
// ones their answers alone.
void render_qwen3(const std::vector<Message>& messages, bool add_generation_prompt,
                  std::vector<Segment>* out) {
  if (!messages.empty() && messages[0].role == "system")
    text(out, "<|im_start|>system\n" + messages[0].content + "<|im_end|>\n");
  size_t last_query = messages.empty() ? 0 : messages.size() - 1;
  for (size_t i = messages.size(); i-- > 0;)
    if (messages[i].role == "user") {
      last_query = i;
      break;
    }
  for (size_t i = 0; i < messages.size(); ++i) {
    const Message& m = messages[i];
    if (m.role == "user" || (m.role == "system" && i > 0)) {
      text(out, "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n");
    } else if (m.role == "assistant") {
      std::string content, reasoning;
      split_reasoning(m.content, &content, &reasoning);
      if (i > last_query && (i + 1 == messages.size() || !reasoning.empty()))
        text(out, "<|im_start|>assistant\n<think>\n" + strip(reasoning, "\n") + "\n</think>\n\n" +
                      lstrip(content, "\n"));
      else
        text(out, "<|im_start|>assistant\n" + content);
      text(out, "<|im_end|>\n");
    }
  }
  if (add_generation_prompt) text(out, "<|im_start|>assistant\n");
}

}  // namespace

std::string to_text(const std::vector<Segment>& segments, const std::string& bos,
                    const std::string& eos) {
  std::string out;
  for (const Segment& s : segments) {
    if (s.kind == Segment::Kind::bos)
      out += bos;
    else if (s.kind == Segment::Kind::eos)
      out += eos;
    else
      out += s.text;
  }
  return out;
}

std::vector<Segment> next_turn(Format f, const std::vector<Message>& history,
                               const std::string& user) {
  std::vector<Message> messages = history;
  const bool first = messages.empty() || messages.back().role != "assistant";
  // The reply's content is already in the cache: render with a marker in its place and keep what
  // follows the marker.
  const std::string marker = "\x01einfer-reply\x01";
  if (!first) messages.back().content = marker;
  messages.push_back({"user", user});
  std::vector<Segment> all = render(f, messages, true);
  if (first) return all;
  for (size_t i = 0; i < all.size(); ++i) {
    const size_t at =
        all[i].kind == Segment::Kind::text ? all[i].text.find(marker) : std::string::npos;
    if (at == std::string::npos) continue;
    std::vector<Segment> tail;
    const std::string rest = all[i].text.substr(at + marker.size());
    if (!rest.empty()) tail.push_back({Segment::Kind::text, rest});
    tail.insert(tail.end(), all.begin() + static_cast<std::ptrdiff_t>(i) + 1, all.end());
    return tail;
  }
  return all;  // not reached: every format renders the reply's content
}

const char* end_of_turn(Format f) {
  switch (f) {
    case Format::chatml:
      return "<|im_end|>";
    case Format::llama3:
      return "<|eot_id|>";
    case Format::qwen3:
      return "<|im_end|>";
    case Format::gemma:
      return "<end_of_turn>";
    case Format::phi3:
      return "<|end|>";
    default:
      return "";
  }
}

}  // namespace einfer::tools::chat
