#include "tools/einfer-run/interactive.h"

#include <cstdio>
#include <cstring>

namespace einfer::run_tool {

namespace chat = tools::chat;

namespace {

bool read_line(std::FILE* in, std::string* line) {
  line->clear();
  int c;
  while ((c = std::fgetc(in)) != EOF && c != '\n') line->push_back(static_cast<char>(c));
  if (c == EOF && line->empty()) return false;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

}  // namespace

int run_chat(ChatSession& s, const ChatOptions& o, std::FILE* in) {
  std::fprintf(stderr,
               "einfer-run: interactive, chat template %s. One line per turn; /reset starts over, "
               "/exit or end of input (Ctrl-D) ends.\n",
               chat::format_name(o.format));
  std::vector<chat::Message> history;
  if (!o.system_prompt.empty()) history.push_back({"system", o.system_prompt});
  const std::vector<chat::Message> initial = history;
  std::vector<int32_t> recent;  // everything evaluated, for --repeat-penalty
  const std::string end_text = chat::end_of_turn(o.format);
  int turn = 0;
  std::string line;
  for (;;) {
    std::printf("> ");
    std::fflush(stdout);
    if (!read_line(in, &line)) {
      std::printf("\n");
      break;
    }
    if (line == "/exit" || line == "/quit") break;
    if (line == "/reset") {
      s.reset();
      history = initial;
      recent.clear();
      std::fprintf(stderr, "einfer-run: conversation cleared\n");
      continue;
    }
    if (line.empty()) continue;

    // The new turn as segments, then ids: BOS/EOS as tokens, text through the tokenizer. A plain
    // (template-less) conversation starts with BOS like a normal prompt.
    std::vector<chat::Segment> segments = chat::next_turn(o.format, history, line);
    if (o.format == chat::Format::none) {
      if (history.size() == initial.size())
        segments.insert(segments.begin(), {chat::Segment::Kind::bos, ""});
      if (!segments.empty() && segments.back().kind == chat::Segment::Kind::text)
        segments.back().text += "\n";
    }
    std::vector<int32_t> ids;
    bool ok = true;
    for (const chat::Segment& seg : segments) {
      if (seg.kind == chat::Segment::Kind::bos) {
        ids.push_back(s.bos);
      } else if (seg.kind == chat::Segment::Kind::eos) {
        ids.push_back(s.eos);
      } else {
        std::vector<int32_t> part;
        if (!s.encode(seg.text, &part)) {
          ok = false;
          break;
        }
        ids.insert(ids.end(), part.begin(), part.end());
      }
    }
    if (!ok) {
      std::fprintf(stderr, "einfer-run: this turn cannot be tokenized (too long?): skipped\n");
      continue;
    }
    const int64_t start = s.position();
    if (s.context > 0 && start + static_cast<int64_t>(ids.size()) + 1 > s.context) {
      std::fprintf(stderr,
                   "einfer-run: the context is full (%lld of %lld positions): /reset, or restart "
                   "with a larger -c or a --window\n",
                   static_cast<long long>(start), static_cast<long long>(s.context));
      continue;
    }
    std::string error;
    if (!s.eval(ids, &error)) {
      std::fprintf(stderr, "einfer-run: %s\n", error.c_str());
      return 1;
    }
    recent.insert(recent.end(), ids.begin(), ids.end());
    history.push_back({"user", line});

    // The reply, streamed.
    std::string reply;
    int32_t prev = ids.back();
    int64_t generated = 0;
    for (;;) {
      if (o.max_reply_tokens >= 0 && generated >= o.max_reply_tokens) break;
      if (s.context > 0 && s.position() >= s.context) {
        std::fprintf(stderr, "\neinfer-run: the context is full: reply cut\n");
        break;
      }
      const int32_t next = s.next_token(recent);
      if (next == s.eos || next == s.bos) break;
      const std::string piece = s.piece(prev, next);
      reply += piece;
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
      ++generated;
      if (!s.eval({next}, &error)) {
        std::fprintf(stderr, "einfer-run: %s\n", error.c_str());
        return 1;
      }
      recent.push_back(next);
      prev = next;
      if (!end_text.empty() && reply.size() >= end_text.size() &&
          reply.compare(reply.size() - end_text.size(), end_text.size(), end_text) == 0) {
        reply.resize(reply.size() - end_text.size());
        break;
      }
    }
    std::printf("\n");
    history.push_back({"assistant", reply});
    ++turn;
    if (o.verbose)
      std::fprintf(stderr, "einfer-run: turn %d: %zu tokens fed at position %lld, %lld generated\n",
                   turn, ids.size(), static_cast<long long>(start),
                   static_cast<long long>(generated));
  }
  return 0;
}

}  // namespace einfer::run_tool
